package tpcc

import (
	"context"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/engine"
)

// tickEnv moves its clock one tick at every reading: a step, timed by two
// readings (its mark and the next), then lasts exactly one tick.
type tickEnv struct {
	t    *time.Time
	tick time.Duration
}

func (e tickEnv) Now() time.Time {
	*e.t = e.t.Add(e.tick)
	return *e.t
}
func (e tickEnv) Sleep(d time.Duration) { *e.t = e.t.Add(d) }

// TestRunSteps runs one terminal (no lock waits, no retries) and checks
// that the steps split each type exactly: every step is one tick long on
// a clock that moves only when read, the steps' node visits add up to the
// type's, and the counts follow the transactions (one warehouse read a
// New-Order, one item read a line, a commit for every New-Order but the
// rolled-back ones).
func TestRunSteps(t *testing.T) {
	db, _ := loadSmall(t, engine.Clustered)
	now := time.Unix(1_800_000_000, 0)
	for _, p := range []Profile{Optimized, Sysbench, BenchmarkSQL} {
		stats, err := Run(context.Background(), db, RunConfig{Warehouses: 1, Scale: SmallScale, Terminals: 1, Duration: time.Hour,
			Seed: 11, LoadConstants: NewLoadConstants(testSeed), Profile: p, Env: tickEnv{&now, time.Microsecond},
			Transactions: 230})
		require.NoError(t, err)
		res := stats.Results
		var steps [NumTxTypes]int64
		var nodes [NumTxTypes]int64
		for s := range NumSteps {
			st := &res.Steps[s]
			if st.Count == 0 {
				continue
			}
			require.Equal(t, int64(time.Microsecond), st.LatencyMin, "%s %s", p, s)
			require.Equal(t, int64(time.Microsecond), st.LatencyMax, "%s %s", p, s)
			require.Equal(t, st.Count*int64(time.Microsecond), st.LatencySum, "%s %s", p, s)
			require.Equal(t, st.Count, st.Latency.TotalCount())
			require.Equal(t, st.Count, st.Nodes.TotalCount())
			require.LessOrEqual(t, st.NodesMin, st.NodesMax)
			steps[s.Tx()] += st.Count
			nodes[s.Tx()] += st.NodesSum
		}
		for k := range NumTxTypes {
			ts := &res.Types[k]
			require.Positive(t, ts.Count, "%s %s", p, TxType(k))
			require.Zero(t, ts.Retries)
			require.Equal(t, ts.Meter.NodeVisitsTotal(), nodes[k], "%s %s: the steps' node visits are the type's", p, TxType(k))
			require.Greater(t, steps[k], ts.Count, "%s %s: more steps than transactions", p, TxType(k))
		}
		no := &res.Types[NewOrderTx]
		require.Equal(t, no.Count, res.Steps[NOWarehouse].Count)
		require.Equal(t, no.Rollbacks, res.Steps[NORollback].Count)
		require.Equal(t, no.Count-no.Rollbacks, res.Steps[NOCommit].Count)
		require.Equal(t, res.Steps[NOItem].Count-no.Rollbacks, res.Steps[NOStock].Count, "every line but the unused item's reads its stock")
		require.Equal(t, res.Steps[NOStock].Count, res.Steps[NOInsertOrderLine].Count)
		require.Equal(t, res.Types[PaymentTx].Count, res.Steps[PCommit].Count)
		require.Equal(t, res.Types[PaymentTx].Count, res.Steps[PWarehouse].Count)
		require.Equal(t, res.Types[PaymentTx].Count, res.Steps[PCustomer].Count, "every Payment reads its customer")
		require.Positive(t, res.Steps[PByNameScan].Count)
		require.Less(t, res.Steps[PByNameScan].Count, res.Types[PaymentTx].Count, "60%% of Payments are by name")
		if p == BenchmarkSQL {
			require.Zero(t, res.Steps[PByNameCount].Count, "BenchmarkSQL does not count")
		} else {
			require.Equal(t, res.Steps[PByNameScan].Count, res.Steps[PByNameCount].Count, "a count before each by-name scan")
		}
		require.Equal(t, 10*res.Types[DeliveryTx].Count-res.Types[DeliveryTx].Skipped, res.Steps[DDeleteNewOrder].Count)
		require.Equal(t, 10*res.Types[DeliveryTx].Count, res.Steps[DNewOrder].Count)
		require.Equal(t, res.Types[StockLevelTx].Count, res.Steps[SLDistrict].Count)
	}
}

// A transaction's steps belong to its type, and each type has a commit.
func TestStepNames(t *testing.T) {
	seen := map[TxType]map[string]bool{}
	for s := range NumSteps {
		require.NotEmpty(t, s.String())
		if seen[s.Tx()] == nil {
			seen[s.Tx()] = map[string]bool{}
		}
		require.False(t, seen[s.Tx()][s.String()], "%s named twice in %s", s, s.Tx())
		seen[s.Tx()][s.String()] = true
	}
	for k := range NumTxTypes {
		require.Equal(t, TxType(k), commitStep[k].Tx())
		require.Equal(t, "commit", commitStep[k].String())
	}
	require.Equal(t, "unknown step", NumSteps.String())
}

// The trimmed mean leaves out the lowest and highest 5%: an outlier does
// not move it.
func TestTrimmedMean(t *testing.T) {
	h := hdrhistogram.New(1, stepNodesMax, 2)
	require.Zero(t, TrimmedMean(h, 0.05))
	for v := int64(1); v <= 100; v++ {
		require.NoError(t, h.RecordValue(v))
	}
	require.InDelta(t, 50.5, TrimmedMean(h, 0.05), 1e-9) // 6..95
	require.InDelta(t, 50.5, TrimmedMean(h, 0), 1e-9)
	h.Reset()
	for v := int64(1); v <= 99; v++ {
		require.NoError(t, h.RecordValue(v))
	}
	require.NoError(t, h.RecordValue(1_000_000))
	require.InDelta(t, 50.5, TrimmedMean(h, 0.05), 1e-9, "the outlier is trimmed") // 6..95
	require.Greater(t, h.Mean(), 10_000.0)
}

// Merging step statistics keeps exact minima, maxima and sums.
func TestStepStatsMerge(t *testing.T) {
	a, b := newStepStats(), newStepStats()
	require.Nil(t, a.Latency, "no histogram before the first call")
	a.record(5*time.Microsecond, 3)
	a.record(7*time.Microsecond, 9)
	b.record(2*time.Microsecond, 4)
	empty := newStepStats()
	a.Merge(&empty)
	empty.Merge(&a)
	require.Equal(t, a.Count, empty.Count)
	require.Equal(t, a.LatencyMin, empty.LatencyMin)
	a.Merge(&b)
	require.Equal(t, int64(3), a.Count)
	require.Equal(t, int64(2000), a.LatencyMin)
	require.Equal(t, int64(7000), a.LatencyMax)
	require.Equal(t, int64(14000), a.LatencySum)
	require.Equal(t, int64(3), a.NodesMin)
	require.Equal(t, int64(9), a.NodesMax)
	require.Equal(t, int64(16), a.NodesSum)
	require.Equal(t, int64(3), a.Nodes.TotalCount())

	// Above the histograms' range: the exact maximum and sum keep it.
	a.record(50*time.Second, 2_000_000)
	require.Equal(t, int64(50*time.Second), a.LatencyMax)
	require.Equal(t, int64(2_000_000), a.NodesMax)
	require.Equal(t, int64(2_000_016), a.NodesSum)
	a.flush()
	require.InDelta(t, float64(stepLatencyMax), float64(a.Latency.Max()), float64(stepLatencyMax)/50)
	require.Zero(t, TrimmedMean(nil, 0.05))
}

// A step's calls reach its histograms a batch at a time; the exact
// figures at once; Merge and a terminal's end flush the rest.
func TestStepStatsBatch(t *testing.T) {
	a := newStepStats()
	for i := range stepBatch + 3 {
		a.record(time.Duration(1000+i), int64(i))
	}
	require.EqualValues(t, stepBatch+3, a.Count)
	require.EqualValues(t, 1000+stepBatch+2, a.LatencyMax)
	require.EqualValues(t, stepBatch, a.Latency.TotalCount(), "one batch flushed")
	require.EqualValues(t, stepBatch, a.Nodes.TotalCount())
	var sum Results
	sum.Steps[NOStock].Merge(&a)
	require.EqualValues(t, stepBatch+3, sum.Steps[NOStock].Latency.TotalCount())
	require.EqualValues(t, stepBatch+3, a.Latency.TotalCount(), "Merge flushed its source")
	require.EqualValues(t, stepBatch+2, a.Nodes.Max())

	// A terminal's Run leaves nothing pending in its results.
	db, err := engine.Open(&engine.Options{Options: cache.Options{PoolSize: 64 << 20}, Commit: engine.NoSyncCommit})
	require.NoError(t, err)
	defer db.Close()
	_, err = Load(context.Background(), db, LoadConfig{Warehouses: 1, Seed: testSeed, Scale: SmallScale})
	require.NoError(t, err)
	terms, err := NewTerminals(db, RunConfig{Warehouses: 1, Terminals: 1, Duration: time.Hour, Seed: 7,
		LoadConstants: NewLoadConstants(testSeed), Transactions: 50, Scale: SmallScale})
	require.NoError(t, err)
	require.NoError(t, terms[0].Run(context.Background()))
	steps := 0
	for k := range terms[0].Results().Steps {
		if st := &terms[0].Results().Steps[k]; st.Count > 0 {
			require.Equal(t, st.Count, st.Latency.TotalCount(), "step %s", Step(k))
			require.Equal(t, st.Count, st.Nodes.TotalCount(), "step %s", Step(k))
			steps++
		}
	}
	require.Greater(t, steps, 10)
}

// Marking a step and recording it allocate nothing once the step's
// histograms exist (its first call): the per-step statistics cost no
// allocation per engine call.
func TestStepMarkAllocs(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	env := tickEnv{&now, time.Microsecond}
	var m engine.Meter
	var stats [NumSteps]StepStats
	c := stepClock{env: env, m: &m, stats: &stats, on: true}
	x := &Executor{steps: &c}
	x.step(NOWarehouse)
	x.step(NODistrict)
	c.close(env.Now()) // the two steps' first calls: their histograms
	allocs := testing.AllocsPerRun(1000, func() {
		x.step(NOWarehouse)
		x.step(NODistrict)
		c.close(env.Now())
	})
	require.Zero(t, allocs)
	require.Equal(t, int64(1+1+1000), stats[NOWarehouse].Count) // the first, AllocsPerRun's warm-up and its runs
	c.on = false
	x.step(NOItem) // not measured: nothing recorded
	require.Zero(t, stats[NOItem].Count)
	require.Nil(t, stats[NOItem].Latency)
}
