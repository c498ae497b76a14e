package tpcc

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/engine"
)

// frozenEnv never lets time pass: a run then ends by its transaction
// budget, the same for every terminal.
type frozenEnv struct{ t time.Time }

func (e frozenEnv) Now() time.Time      { return e.t }
func (e frozenEnv) Sleep(time.Duration) {}

// TestRunConsistent runs eight concurrent terminals on a loaded warehouse,
// in each organization and each profile, and requires the consistency
// conditions to hold after the run. It uses the shared W=1 loads at small
// scale (the population test of the small scale, in a file sorted before
// this one, has read the clustered one as loaded by then): what it tests
// is the terminals' concurrency, which the race detector should see, not
// the population's size. A run at another scale than the database's is
// refused before it starts.
func TestRunConsistent(t *testing.T) {
	for _, org := range []engine.Org{engine.Clustered, engine.HeapRowPointer, engine.HeapPrimaryKey} {
		t.Run(org.String(), func(t *testing.T) {
			db, _ := loadSmall(t, org)
			_, err := Run(context.Background(), db, RunConfig{Warehouses: 1, Duration: time.Minute,
				LoadConstants: NewLoadConstants(testSeed), Transactions: 1})
			require.ErrorIs(t, err, ErrInvalidConfig, "a full-scale run on a small database")
			require.ErrorContains(t, err, "a run at full scale on a database loaded at small scale")
			for _, p := range []Profile{Optimized, Sysbench, BenchmarkSQL} {
				stats, err := Run(context.Background(), db, RunConfig{Warehouses: 1, Scale: SmallScale, Terminals: 8, Duration: time.Minute,
					Seed: 7, LoadConstants: NewLoadConstants(testSeed), Profile: p,
					Env: frozenEnv{time.Unix(1_800_000_000, 0)}, Transactions: 60})
				require.NoError(t, err, "%s", p)
				res := stats.Results
				require.Equal(t, int64(8*60), res.Total(), "%s: every terminal ran its budget", p)
				for k := range NumTxTypes {
					require.Positive(t, res.Types[k].Count, "%s: %s ran", p, k)
				}
				t.Logf("%s: %s", p, summary(res))
			}
			rep, err := Check(db, CheckConfig{Scale: SmallScale})
			require.NoError(t, err)
			require.True(t, rep.Passed(), "%s", rep)
		})
	}
}

func summary(r *Results) string {
	s := ""
	for k := range NumTxTypes {
		x := &r.Types[k]
		s += fmt.Sprintf("%s %d (retries %d, rollbacks %d, skipped %d) ", TxType(k), x.Count, x.Retries, x.Rollbacks, x.Skipped)
	}
	return s
}

// The run refuses a bad configuration before it starts.
func TestRunBadConfig(t *testing.T) {
	db, err := engine.Open(&engine.Options{})
	require.NoError(t, err)
	defer db.Close()
	for _, c := range []RunConfig{
		{Warehouses: 0, Duration: time.Second},
		{Warehouses: 1, Terminals: 256, Duration: time.Second},
		{Warehouses: 1, Duration: 0},
		{Warehouses: 1, Duration: time.Second, Warmup: -1},
		{Warehouses: 1, Duration: time.Second, Scale: Scale{Items: -1}},
		{Warehouses: 1, Duration: time.Second, Scale: Scale{CustomersPerDistrict: 301}},
	} {
		_, err := Run(context.Background(), db, c)
		require.ErrorIs(t, err, ErrInvalidConfig, "%+v", c)
	}
	_, err = Run(context.Background(), db, RunConfig{Warehouses: 1, Duration: time.Second})
	require.ErrorIs(t, err, engine.ErrUnknownTable, "a database not loaded")
}

// BenchmarkRun measures whole in-process runs: one warehouse loaded in
// memory (outside the timer), then four terminals without keying or think
// times, each running b.N transactions. It reports tpmC and transactions
// per minute from the elapsed wall time.
//
//	go test -run '^$' -bench BenchmarkRun -benchtime 2000x -count 1 ./tpcc/
func BenchmarkRun(b *testing.B) {
	for _, org := range []engine.Org{engine.Clustered, engine.HeapRowPointer, engine.HeapPrimaryKey} {
		b.Run("org="+org.String(), func(b *testing.B) {
			db, err := engine.Open(&engine.Options{Options: cache.Options{PoolSize: 1 << 30}, Commit: engine.NoSyncCommit})
			require.NoError(b, err)
			defer db.Close()
			_, err = Load(context.Background(), db, LoadConfig{Warehouses: 1, Seed: testSeed, Org: org})
			require.NoError(b, err)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			stats, err := Run(context.Background(), db, RunConfig{Warehouses: 1, Terminals: 4, Duration: time.Hour,
				Seed: 7, LoadConstants: NewLoadConstants(testSeed), Transactions: b.N})
			elapsed := time.Since(start)
			b.StopTimer()
			require.NoError(b, err)
			res := stats.Results
			b.ReportMetric(float64(res.Types[NewOrderTx].Count)/elapsed.Minutes(), "tpmC")
			b.ReportMetric(float64(res.Total())/elapsed.Minutes(), "tx/min")
			b.ReportMetric(float64(res.Types[NewOrderTx].Meter.LogBytes)/float64(max(1, res.Types[NewOrderTx].Count)), "log-bytes/new-order")
		})
	}
}
