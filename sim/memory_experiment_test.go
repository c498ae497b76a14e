package sim_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/sim"
	"github.com/enginelab/enginelab/sim/experiment"
)

// The experiments' sides at their defaults: each estimate is at least the
// peak RSS measured for the whole experiment (its sides run one after
// another), as in the table in memory.go.
func TestMemoryEstimateCoversExperiments(t *testing.T) {
	for name, peakMiB := range map[string]int64{"delivery-limit": 819, "io-bound": 646} {
		e, err := experiment.Lookup(name)
		require.NoError(t, err)
		for _, side := range e.Sides(experiment.Params{}) {
			side.Config.Phases = sim.Phases{Load: true, Run: true}
			require.GreaterOrEqual(t, side.Config.MemoryEstimateOn(2).Total, peakMiB<<20, "%s: %s", name, side.Label)
		}
	}
}
