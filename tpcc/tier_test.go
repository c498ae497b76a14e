package tpcc

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/tier/memcached"
	"github.com/enginelab/enginelab/cache/tier/memcached/memcachedtest"
	"github.com/enginelab/enginelab/engine"
)

// killEnv is a frozen clock that calls kill once, from whichever terminal
// reads the time for the at-th time: a point in the middle of a run that
// does not depend on the wall clock.
type killEnv struct {
	frozenEnv
	calls atomic.Int64
	at    int64
	once  sync.Once
	kill  func()
}

func (e *killEnv) Now() time.Time {
	if e.calls.Add(1) == e.at {
		e.once.Do(e.kill)
	}
	return e.frozenEnv.Now()
}

// A memcached tier behind a pool a fifth of the data's size: killed in the
// middle of a run, it costs misses, never a transaction. The run completes
// and the database stays consistent; the tier answered before the kill and
// its errors are counted after. At small scale (about 9.8 MiB, so a 2 MiB
// pool): the point is the tier's failure, not the population.
func TestRunSurvivesMemcachedDeath(t *testing.T) {
	addr, stop := memcachedtest.Start(t)
	tier, err := memcached.New([]string{addr}, &memcached.Options{PageSize: page.DefaultSize,
		Timeout: 200 * time.Millisecond})
	require.NoError(t, err)
	defer tier.Close()
	db, err := engine.Open(&engine.Options{Options: cache.Options{PoolSize: 2 << 20, Tier: tier}, Commit: engine.NoSyncCommit})
	require.NoError(t, err)
	defer db.Close()
	_, err = Load(context.Background(), db, LoadConfig{Warehouses: 1, Scale: SmallScale, Seed: testSeed})
	require.NoError(t, err)

	const terminals, perTerminal = 4, 60
	env := &killEnv{frozenEnv: frozenEnv{time.Unix(1_800_000_000, 0)}, at: terminals * perTerminal, kill: stop}
	stats, err := Run(context.Background(), db, RunConfig{Warehouses: 1, Scale: SmallScale, Terminals: terminals, Duration: time.Minute,
		Seed: 11, LoadConstants: NewLoadConstants(testSeed), Env: env, Transactions: perTerminal})
	require.NoError(t, err)
	require.EqualValues(t, terminals*perTerminal, stats.Results.Total(), "every transaction completed")
	require.Positive(t, env.calls.Load()-env.at, "the server died before the run ended")
	var m engine.Meter
	for k := range NumTxTypes {
		m.Add(&stats.Results.Types[k].Meter)
	}
	require.Positive(t, m.TierHits, "the tier served pages while it lived: %s", m.String())
	require.Positive(t, m.TierErrors, "and failed, counted, once killed: %s", m.String())
	require.Positive(t, tier.Stats().Errors)

	rep, err := Check(db, CheckConfig{Scale: SmallScale})
	require.NoError(t, err)
	require.True(t, rep.Passed(), "%s", rep)
}

// The memcached test, rerun with no memcached in PATH, skips with the
// reason (CI unset) and fails under CI=true.
func TestNoMemcachedBinary(t *testing.T) {
	memcachedtest.CheckSkipsWithout(t, "^TestRunSurvivesMemcachedDeath$")
}
