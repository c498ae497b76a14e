package sim

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/sim/client"
	"github.com/enginelab/enginelab/tpcc"
)

// The cost layer in a job: off by default (no client section), on with
// --client in simulated mode only, its section deterministic for a seed,
// and prepared statements with a plan cache parse and plan less.
func TestClientLayer(t *testing.T) {
	ctx := context.Background()
	base := TPCCConfig{Phases: Phases{Load: true, Run: true}, Mode: ModeSim, Warehouses: 1, Scale: tpcc.SmallScale, Terminals: 4,
		Duration: 300 * time.Millisecond, Seed: 1, Profile: tpcc.BenchmarkSQL, InMemoryOnly: true}

	off, err := TPCC(ctx, base, Hooks{})
	require.NoError(t, err)
	require.Nil(t, off.Sim.Client)

	real := base
	real.Mode, real.Client = ModeReal, &client.Config{Personality: "mysql-jdbc"}
	require.ErrorIs(t, real.Validate(), ErrInvalidConfig)
	bad := base
	bad.Client = &client.Config{Personality: "odbc"}
	require.ErrorIs(t, bad.Validate(), ErrInvalidConfig)

	on := base
	on.Client = &client.Config{Personality: "mysql-jdbc"}
	var js [2][]byte
	var reps [2]*client.Counts
	for i := range 2 {
		rep, err := TPCC(ctx, on, Hooks{})
		require.NoError(t, err)
		c := rep.Sim.Client
		require.NotNil(t, c)
		require.Equal(t, c.Counts.Statements, c.Counts.RoundTrips)
		require.Positive(t, c.OutsidePct)
		require.Less(t, rep.Run.TpmC, off.Run.TpmC)
		js[i], err = json.Marshal(c)
		require.NoError(t, err)
		reps[i] = &c.Counts
	}
	require.Equal(t, string(js[0]), string(js[1]), "deterministic")

	prep := on
	prep.Client = &client.Config{Personality: "mysql-jdbc", Settings: client.Settings{ServerPrepare: true, PlanCache: true}}
	rep, err := TPCC(ctx, prep, Hooks{})
	require.NoError(t, err)
	c := rep.Sim.Client.Counts
	require.Less(t, c.Parses*10, c.Statements, "parsed once a statement and connection, and the commits")
	require.Greater(t, c.PlanCacheHits, c.Plans)
}
