package experiment

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/sim"
	"github.com/enginelab/enginelab/tpcc"
)

var rewrite = flag.Bool("rewrite", false, "write the golden files from what the experiments do now")

// waffleGoldenParams is the waffle experiment at a reduced scale: one
// warehouse of 200 items and 10 customers a district, a pool of 64
// frames (every size scaled with it: memcached's 768 MB is 1 MiB, two
// slab pages of 60 pages), 16 terminals for 2 virtual seconds after half
// a second: fourteen loads and runs in seconds. (At 32 frames, under repeatable read, the undo pages that purge
// cannot free while 16 read views are open crowd the pool and a run
// commits a handful of New-Orders: too few for the rows to differ.) The
// sizes scale but time does not: 5.1's purge, the master thread's every
// ten seconds, never runs in these 2.5 virtual seconds, so every
// undo log of the run stays on the history list and its pages compete
// for a pool of 64 frames (the 5 GB rows' 426). The table tests the experiment's machinery, not the
// published ratios, which need the full scale.
var waffleGoldenParams = Params{Warehouses: 1, Scale: tpcc.Scale{Items: 200, CustomersPerDistrict: 10}, Terminals: 16,
	Duration: 2 * time.Second, Warmup: 500 * time.Millisecond, PoolSize: 1 << 20}

// The waffle experiment's table is deterministic for one seed: at the
// reduced scale it is testdata/waffle.golden, byte for byte (go test
// ./sim/experiment -run TestWaffleGolden -rewrite writes it; read the
// diff). The rows map onto the distinct configurations (identical rows
// share a run), and every row's ratio is against its group's reference.
func TestWaffleGolden(t *testing.T) {
	skipUnderRace(t)
	checkWaffleGolden(t, waffleGoldenParams)
}

// With --dir every side loads into a directory of its own on disk: the
// table is the same golden file (the modeled devices price the I/O, not
// this machine's disk), and each side's directory is gone once the side
// is done.
func TestWaffleGoldenOnDisk(t *testing.T) {
	skipUnderRace(t)
	p := waffleGoldenParams
	p.Dir = filepath.Join(t.TempDir(), "sides")
	e, err := Lookup("waffle")
	require.NoError(t, err)
	n := len(e.Sides(p))
	checkWaffleGolden(t, p)
	for i := 1; i <= n; i++ {
		d := p.SideDir("waffle", i)
		require.Equal(t, filepath.Join(p.Dir, fmt.Sprintf("waffle-side-%02d", i)), d)
		_, err := os.Stat(d)
		require.ErrorIs(t, err, os.ErrNotExist, "side %d's database is removed", i)
	}
	ents, err := os.ReadDir(p.Dir)
	require.NoError(t, err, "the sides were loaded under --dir")
	require.Empty(t, ents)

	// A side's directory left by a killed run is refused before any side
	// loads, and left as it was.
	left := p.SideDir("waffle", 2)
	require.NoError(t, os.MkdirAll(left, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(left, "MANIFEST"), []byte("x"), 0o644))
	_, err = Run(context.Background(), e, p, nil)
	require.ErrorIs(t, err, sim.ErrAlreadyLoaded)
	require.ErrorContains(t, err, left)
	_, err = os.Stat(p.SideDir("waffle", 1))
	require.ErrorIs(t, err, os.ErrNotExist, "no side ran")
	_, err = os.Stat(filepath.Join(left, "MANIFEST"))
	require.NoError(t, err)
}

func checkWaffleGolden(t *testing.T, p Params) {
	t.Helper()
	e, err := Lookup("waffle")
	require.NoError(t, err)
	sides := e.Sides(p)
	require.Len(t, sides, 14, "17 rows, 3 of them the same configuration as another")
	res, err := Run(context.Background(), e, p, nil)
	require.NoError(t, err)
	require.NotNil(t, res.Waffle)
	require.Len(t, res.Waffle.Rows, len(waffleRows))
	for _, r := range res.Sides {
		require.True(t, r.Passed(), "%v %v", r.Errors, r.Run.Errors)
	}
	for _, r := range res.Waffle.Rows {
		require.Positive(t, r.SimTpmC, r.Label)
	}
	// Identical configurations ran once: the no-tier rows of 5.1.30 and
	// of Cream, the MRU-patch rows of 5.1.30 and of the releases post.
	rows := res.Waffle.Rows
	require.Equal(t, rows[0].Side, rows[8].Side)
	require.Equal(t, rows[2].Side, rows[11].Side)
	require.Equal(t, rows[4].Side, rows[9].Side)
	var b strings.Builder
	require.NoError(t, res.Waffle.WriteWaffle(&b))
	golden := filepath.Join("testdata", "waffle.golden")
	if *rewrite && p.Dir == "" {
		require.NoError(t, os.WriteFile(golden, []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), b.String())
}

// The verdict's rules: the published direction and the ratio within 25%;
// a pair published as equal within 10%.
func TestWaffleVerdict(t *testing.T) {
	for _, tc := range []struct {
		pub, sim float64
		equal    bool
		held     bool
	}{
		{2, 2.4, false, true}, {2, 2.6, false, false}, {2, 1.6, false, true}, {2, 1.4, false, false},
		{2, 0.9, false, false}, {0.65, 0.8, false, true}, {0.65, 1.05, false, false},
		{1, 1.09, true, true}, {1, 0.89, true, false}, {1.07, 0.95, false, false},
	} {
		held, v := waffleVerdict(tc.pub, tc.sim, tc.equal)
		require.Equal(t, tc.held, held, "%+v: %s", tc, v)
	}
}

// Every side's LRU promotes as its release did: MySQL 5.1's freed-page
// clock, or the plugin's (innodb_old_blocks_time 0) on the plugin's rows.
func TestWafflePromotion(t *testing.T) {
	e, err := Lookup("waffle")
	require.NoError(t, err)
	plugin := 0
	for _, s := range e.Sides(waffleGoldenParams) {
		want := cache.Promote51
		if s.Config.ReadAheadLinear == cache.LinearPlugin {
			want = cache.PromotePlugin
			plugin++
		}
		require.Equal(t, want, s.Config.Promotion, s.Label)
	}
	require.Equal(t, 5, plugin, "the plugin with read-ahead off, and the four double-write rows")
}
