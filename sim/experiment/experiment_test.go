package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/sim"
	"github.com/enginelab/enginelab/tpcc"
)

// Every experiment runs, briefly, and its stated direction holds: at
// tpcc.SmallScale and at full scale. The explanation names
// the counters the question is about, and every side's report carries the
// scale.
func TestExperimentsDirectionsHold(t *testing.T) {
	skipUnderRace(t)
	for _, sc := range []tpcc.Scale{tpcc.SmallScale, tpcc.FullScale} {
		t.Run(sc.String(), func(t *testing.T) {
			short := Params{Scale: sc, Duration: 500 * time.Millisecond, Warmup: 100 * time.Millisecond}
			ioShort := Params{Scale: sc, Duration: 20 * time.Second, Warmup: 5 * time.Second}
			if sc == tpcc.SmallScale {
				// A small database's transactions run as fast as a full
				// one's: a tenth of the virtual time still runs hundreds
				// of transactions a side.
				short.Duration, short.Warmup = 50*time.Millisecond, 10*time.Millisecond
			}
			for _, tc := range []struct {
				name    string
				params  Params
				counter string // a counter the explanation must name
			}{
				{"count-rewrite", short, "heap fetches"},
				{"delivery-limit", short, "rows returned"},
				{"stocklevel-bound", short, "rows examined"},
				{"hot-index", short, "index entries written"},
				{"wide-key", short, "node visits"},
				{"io-bound", ioShort, "store reads"},
				{"tier-policy", ioShort, ""},
			} {
				t.Run(tc.name, func(t *testing.T) {
					e, err := Lookup(tc.name)
					require.NoError(t, err)
					res, err := Run(context.Background(), e, tc.params, nil)
					require.NoError(t, err)
					require.True(t, res.Held, "%s: %s", tc.name, res.Verdict)
					require.NotEmpty(t, res.Verdict)
					require.NotZero(t, res.Headline.Ratio, "a headline ratio")
					require.Equal(t, sc, res.Params.Scale)
					for _, r := range res.Sides {
						require.True(t, r.Passed(), "%v %v", r.Errors, r.Run.Errors)
						require.Equal(t, "sim", r.Config.Mode)
						require.Equal(t, sc.String(), r.Config.Scale)
						require.Equal(t, sc.String(), r.Database.Scale)
					}
					var table strings.Builder
					require.NoError(t, res.WriteTable(&table))
					require.Contains(t, table.String(), "expectation held")
					require.Contains(t, table.String(), e.Question)
					if sc == tpcc.SmallScale {
						require.Contains(t, table.String(), "simulated: 1 warehouse(s) at small scale, ")
					} else {
						require.Contains(t, table.String(), "simulated: 1 warehouse(s), ", "full scale goes unsaid")
					}
					if tc.name == "io-bound" {
						// The verdict says how much read-ahead the
						// exclusive side did: what the side without it
						// can differ by.
						b := res.Sides[1].Background
						require.Positive(t, b.ReadAheadTriggers, "read-ahead fires on the exclusive side")
						require.Contains(t, res.Verdict, fmt.Sprintf("read-ahead decisions during the run %d; over the whole job, the load included, %d decisions, %d pages, %d never used",
							runReadAheads(b), b.ReadAheadTriggers, b.ReadAheads, b.ReadAheadUnused))
						require.Zero(t, res.Sides[3].Background.ReadAheads, "none without it")
					}
					if tc.name == "hot-index" {
						// The heap sides with versions: HOT and non-HOT
						// updates side by side, and both heap pairs
						// explained.
						require.Len(t, res.Sides, 6)
						for _, row := range []string{"new-order HOT updates/tx", "new-order non-HOT updates/tx", "new-order index entries written/tx"} {
							require.Contains(t, table.String(), row)
						}
						for _, s := range res.Sides[2:] {
							require.True(t, s.Config.HeapVersions)
						}
						bases := map[string]bool{}
						for _, x := range res.Explanations {
							bases[x.Base] = true
						}
						require.Len(t, bases, 3, "a pair per organization")
					}
					if tc.counter != "" {
						require.Contains(t, table.String(), tc.counter)
						found := false
						for _, x := range res.Explanations {
							for _, c := range x.Counters {
								found = found || c.Counter == tc.counter
							}
						}
						require.True(t, found, "the explanation names %s", tc.counter)
					} else {
						require.NotNil(t, res.Replay)
					}
					b, err := json.Marshal(res)
					require.NoError(t, err)
					require.Contains(t, string(b), `"held":true`)
					require.Contains(t, string(b), `"scale":"`+sc.String()+`"`)
				})
			}
		})
	}
}

// At small scale the experiments that size their pool against the data
// take their small defaults, and count-rewrite runs one terminal; the
// user's settings still go over them.
func TestExperimentSmallDefaults(t *testing.T) {
	small := func(name string, p Params) Params {
		e, err := Lookup(name)
		require.NoError(t, err)
		p.Scale = tpcc.SmallScale
		return e.params(p)
	}
	io := small("io-bound", Params{})
	require.Equal(t, int64(3<<20), io.PoolSize)
	require.Equal(t, int64(4<<20), io.RemoteSize)
	require.Equal(t, 16, io.Terminals)
	require.Equal(t, "disk-2009", io.Hardware.Store)
	require.Equal(t, int64(2*3<<20), small("tier-policy", Params{Warehouses: 2}).PoolSize, "per warehouse")
	require.Equal(t, 1, small("count-rewrite", Params{}).Terminals)
	require.Equal(t, 4, small("count-rewrite", Params{Terminals: 4}).Terminals, "the user's setting")
	require.Equal(t, 4, small("delivery-limit", Params{}).Terminals, "no small defaults: the general ones")

	e, err := Lookup("io-bound")
	require.NoError(t, err)
	full := e.params(Params{})
	require.Equal(t, int64(28<<20), full.PoolSize)
	require.Equal(t, tpcc.FullScale, full.Scale)
	require.Equal(t, int64(4*256<<20), small("delivery-limit", Params{Warehouses: 4}).PoolSize,
		"experiments keep 256 MiB a warehouse, not tpcc's default (sim.DefaultPoolSize)")
	e, err = Lookup("delivery-limit")
	require.NoError(t, err)
	dl := small("delivery-limit", Params{Warehouses: 4})
	for _, s := range e.sides(&dl) {
		require.Equal(t, int64(96<<20), s.Config.EngineOptions().LogSize,
			"%s: experiments keep the engine's 96 MiB log, not tpcc's default (sim.DefaultLogSize)", s.Label)
	}

	e, err = Lookup("wide-key")
	require.NoError(t, err)
	p := small("wide-key", Params{})
	for _, s := range e.sides(&p) {
		require.Equal(t, 8<<10, s.Config.PageSize, "%s: at small scale", s.Label)
		require.True(t, s.Config.LoadSpace)
		require.Equal(t, tpcc.SmallScale, s.Config.Scale)
	}
	p = e.params(Params{})
	for _, s := range e.sides(&p) {
		require.Zero(t, s.Config.PageSize, "%s: at full scale, the default", s.Label)
	}
}

// An unknown experiment is named with the known ones.
func TestLookupExperiment(t *testing.T) {
	_, err := Lookup("nope")
	require.ErrorIs(t, err, ErrUnknown)
	require.ErrorContains(t, err, "count-rewrite")
	for _, e := range All() {
		require.NotEmpty(t, e.Question, e.Name)
		require.NotEmpty(t, e.Expect, e.Name)
		got, err := Lookup(e.Name)
		require.NoError(t, err)
		require.Same(t, e, got)
	}
}

// An experiment checks every side before the first one loads.
func TestMemoryCheckExperiment(t *testing.T) {
	e, err := Lookup("delivery-limit")
	require.NoError(t, err)
	_, err = Run(context.Background(), e, Params{Warehouses: 100_000, MemoryLimit: 8 << 30},
		func(s string) { t.Fatalf("a side ran: %s", s) })
	require.ErrorIs(t, err, sim.ErrInsufficientMemory)
	require.ErrorIs(t, err, sim.ErrInvalidConfig)
	require.ErrorContains(t, err, "--warehouses 100000 in memory")
}
