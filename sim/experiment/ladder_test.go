package experiment

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/tpcc"
)

var updateLadder = flag.Bool("update-ladder", false, "rewrite testdata/talk-ladder.golden")

// The ladder is deterministic: at a reduced scale (1,000 items and 30
// customers a district, a tenth of SmallScale: the ladder's 25 loads took
// five and a half minutes under the race detector at SmallScale) its
// report is byte for byte the golden one. The verdicts are its output, not this test's
// assertions.
func TestLadderGolden(t *testing.T) {
	skipUnderRace(t)
	res, err := Ladder(context.Background(), Params{Scale: tpcc.Scale{Items: 1000, CustomersPerDistrict: 30}, Terminals: 4, Duration: 250 * time.Millisecond,
		Warmup: 100 * time.Millisecond}, nil)
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, res.WriteTable(&b))
	path := filepath.Join("testdata", "talk-ladder.golden")
	if *updateLadder {
		require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(want), b.String())
	require.Len(t, res.Rows, 2)
	require.Len(t, res.Rows[0], len(ladderSteps))
}

func TestVerdict(t *testing.T) {
	require.Equal(t, "held", verdict(1.2, 1.25, true))
	require.Equal(t, "held", verdict(1.5, 1.25, true))
	require.Equal(t, "NO: gain 400% of the talk's", verdict(2, 1.25, true))
	require.Equal(t, "NO: the other direction", verdict(0.9, 1.25, true))
	require.Equal(t, "not claimed", verdict(0.3, 0.34, false))
	require.Equal(t, "no figure", verdict(1.1, 0, false))
}
