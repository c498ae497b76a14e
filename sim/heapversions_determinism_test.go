package sim

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim/report"
	"github.com/enginelab/enginelab/tpcc"
)

// Simulated mode stays deterministic with the heap organizations' row
// versions (HeapVersions): the vacuum actor, prunes on access and
// serialization retries all run in the scheduler's order, so two loads and
// runs in memory with one seed and configuration give the same report
// outside its host section, and another seed gives another. In both heap
// organizations, at small scale, under repeatable read (the level whose
// snapshots make the most retries).
func TestSimTPCCHeapVersionsDeterministic(t *testing.T) {
	skipUnderRace(t)
	ctx := context.Background()
	for _, org := range []engine.Org{engine.HeapRowPointer, engine.HeapPrimaryKey} {
		t.Run(org.String(), func(t *testing.T) {
			base := TPCCConfig{Mode: ModeSim, Org: org, HeapVersions: engine.HeapVersionsOn, Isolation: engine.RepeatableRead,
				Warehouses: 1, Scale: tpcc.SmallScale, Terminals: 4, Duration: 500 * time.Millisecond,
				Warmup: 100 * time.Millisecond, Seed: 1, PoolSize: 16 << 20, InMemoryOnly: true,
				Phases: Phases{Load: true, Run: true}}
			var runs [3]*report.Report
			for i := range runs {
				c := base
				if i == 2 {
					c.Seed = 2
				}
				rep, err := TPCC(ctx, c, Hooks{})
				require.NoError(t, err)
				require.Empty(t, rep.Run.Errors)
				require.True(t, rep.Passed(), "%v", rep.Errors)
				runs[i] = rep
			}
			a, b, other := withoutHost(t, runs[0]), withoutHost(t, runs[1]), withoutHost(t, runs[2])
			require.Equal(t, a, b, "two simulated runs with one seed and configuration")
			require.NotEqual(t, a["run"], other["run"], "a run with another seed")

			// The runs did keep versions: HOT and non-HOT updates, and
			// the vacuum actor's section.
			r := runs[0]
			require.True(t, r.Config.HeapVersions)
			no := r.Run.Types[tpcc.NewOrderTx]
			require.Positive(t, no.PerTx.HOTUpdates+no.PerTx.NonHOTUpdates)
			require.NotNil(t, r.Vacuum)
		})
	}
}
