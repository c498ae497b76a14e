package calibrate

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enginelab/enginelab/sim"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/tpcc"
)

// synthetic returns n transactions whose times are truth's price of their
// events plus Gaussian noise of noise × that price. The counts are drawn
// per type so that the mix varies as TPC-C's does (node visits follow
// page requests, log bytes follow log records), without being proportional.
func synthetic(r *rand.Rand, n int, truth *hw.CPUProfile, noise float64) []Sample {
	cost := truth.Costs()
	out := make([]Sample, n)
	for i := range out {
		s := &out[i]
		s.Type = tpcc.TxType(r.IntN(int(tpcc.NumTxTypes)))
		scale := int64(1 + 4*int(s.Type)) // the types differ in size
		e := &s.Events
		e[hw.EventPageRequest] = scale*10 + r.Int64N(scale*40)
		e[hw.EventNodeVisit] = e[hw.EventPageRequest] + r.Int64N(e[hw.EventPageRequest]/2+1)
		e[hw.EventPoolMiss] = r.Int64N(3)
		e[hw.EventPageCreate] = r.Int64N(2)
		e[hw.EventSplit] = r.Int64N(2)
		e[hw.EventMerge] = r.Int64N(2)
		e[hw.EventHeapFetch] = r.Int64N(scale * 5)
		e[hw.EventHeapRowScanned] = r.Int64N(scale * 5)
		e[hw.EventHeapMove] = r.Int64N(2)
		e[hw.EventRowExamined] = r.Int64N(scale * 20)
		e[hw.EventRowDecoded] = r.Int64N(e[hw.EventRowExamined] + 1)
		e[hw.EventRowReturned] = r.Int64N(e[hw.EventRowDecoded] + 1)
		e[hw.EventIndexEntryWritten] = r.Int64N(scale * 3)
		e[hw.EventIndexEntryDeleted] = r.Int64N(scale)
		e[hw.EventLogRecord] = r.Int64N(scale * 4)
		e[hw.EventLogByte] = e[hw.EventLogRecord]*60 + r.Int64N(2000)
		e[hw.EventLockRequest] = r.Int64N(scale * 4)
		if r.IntN(20) == 0 {
			e[hw.EventRollback] = 1
		} else {
			e[hw.EventCommit] = 1
		}
		e[hw.EventStoreWrite] = r.Int64N(5) // a device event: must not be fitted
		var ns float64
		for j := range hw.NumCPUEvents {
			ns += cost[j] * float64(e[j])
		}
		s.Nanos = int64(math.Round(ns * (1 + noise*r.NormFloat64())))
	}
	return out
}

// truth is the profile the synthetic tests recover: the shipped one,
// without I/O paths (FitCPU cannot see them).
func truth() hw.CPUProfile {
	p := hw.DefaultCPU
	p.StoreRequest, p.TierRequest, p.Source = 0, 0, ""
	return p
}

// FitCPU recovers known costs from transactions priced by them, with 1%
// noise: every cost within four standard errors of the truth (this
// design's are 0.1% to 11% of the cost: largest for page_create and
// log_byte, whose price is small beside the noise), the well-determined
// ones (standard error under 1%) within 3%, and R² above 0.99.
func TestFitCPURecovers(t *testing.T) {
	seed := uint64(42)
	t.Logf("seed %d", seed)
	want := truth()
	const noise = 0.01
	samples := synthetic(rand.New(rand.NewPCG(seed, 1)), 20000, &want, noise)
	got, rep, err := FitCPU(samples)
	require.NoError(t, err)
	se := standardErrors(samples, &want, noise)
	wc, gc := want.Costs(), got.Costs()
	for j := range hw.NumCPUEvents {
		require.Less(t, se[j], 0.12*wc[j], "%s: the design determines it", hw.CostNames[j])
		require.InDelta(t, wc[j], gc[j], 4*se[j], "%s: want %g ± %.3g, got %g", hw.CostNames[j], wc[j], se[j], gc[j])
		if se[j] < 0.01*wc[j] {
			require.InEpsilon(t, wc[j], gc[j], 0.03, hw.CostNames[j])
		}
	}
	require.Zero(t, got.StoreRequest)
	require.Zero(t, got.TierRequest)
	require.Greater(t, rep.R2, 0.99)
	require.LessOrEqual(t, rep.R2, 1.0)
	require.Equal(t, []string{"store_request", "tier_request"}, rep.NotObserved)
	require.Empty(t, rep.Collinear)
	require.Len(t, rep.Types, int(tpcc.NumTxTypes))
	n := 0
	for _, ty := range rep.Types {
		n += ty.Count
		require.Less(t, math.Abs(ty.ResidualPct), 1.0, ty.Type)
	}
	require.Equal(t, len(samples), n)
	require.Equal(t, len(samples), rep.Samples)
	share := 0.0
	for j, e := range rep.Events {
		require.Equal(t, hw.CostNames[j], e.Event)
		share += e.SharePct
	}
	require.InDelta(t, 100, share, 1e-6)

	// Without noise the fit is exact.
	samples = synthetic(rand.New(rand.NewPCG(seed, 2)), 2000, &want, 0)
	got, rep, err = FitCPU(samples)
	require.NoError(t, err)
	for j, c := range got.Costs() {
		require.InDelta(t, wc[j], c, 1e-3+1e-3*wc[j], hw.CostNames[j])
	}
	require.InDelta(t, 1, rep.R2, 1e-9)
}

// An event no transaction counts gets cost 0 and is reported as not
// observed; an event that costs nothing, under noise that would make an
// unconstrained fit give it a negative cost, gets 0 or a small positive
// cost, never a negative one.
func TestFitCPUZeroAndFreeEvents(t *testing.T) {
	want := truth()
	want.HeapMove = 0 // free, but counted
	samples := synthetic(rand.New(rand.NewPCG(7, 1)), 5000, &want, 0.05)
	for i := range samples {
		s := &samples[i]
		s.Nanos -= int64(want.Merge * float64(s.Events[hw.EventMerge]))
		s.Events[hw.EventMerge] = 0 // never counted
	}
	got, rep, err := FitCPU(samples)
	require.NoError(t, err)
	require.Zero(t, got.Merge)
	require.Equal(t, []string{"merge", "store_request", "tier_request"}, rep.NotObserved)
	require.Zero(t, rep.Events[hw.EventMerge].Samples)
	for j, c := range got.Costs() {
		require.False(t, math.IsNaN(c), hw.CostNames[j])
		require.GreaterOrEqual(t, c, 0.0, hw.CostNames[j])
	}
	require.Less(t, got.HeapMove, 300.0) // 2% of a commit: noise
	require.InEpsilon(t, want.Commit, got.Commit, 0.05)
}

// Two events counted in a fixed ratio in every transaction (node visits
// always twice the page requests) are reported as collinear; their costs
// stay finite and non-negative, and together they price what the truth
// does: PageRequest + 2 × NodeVisit within 1%. The well-determined other
// costs are recovered within 3%, as without the collinearity.
func TestFitCPUCollinear(t *testing.T) {
	want := truth()
	cost := want.Costs()
	samples := synthetic(rand.New(rand.NewPCG(9, 1)), 10000, &want, 0.01)
	for i := range samples {
		e := &samples[i].Events
		old := e[hw.EventNodeVisit]
		e[hw.EventNodeVisit] = 2 * e[hw.EventPageRequest]
		samples[i].Nanos += int64(math.Round(cost[hw.EventNodeVisit] * float64(e[hw.EventNodeVisit]-old)))
	}
	got, rep, err := FitCPU(samples)
	require.NoError(t, err)
	require.Equal(t, [][]string{{"page_request", "node_visit"}}, rep.Collinear)
	for j, c := range got.Costs() {
		require.False(t, math.IsNaN(c) || math.IsInf(c, 0), hw.CostNames[j])
		require.GreaterOrEqual(t, c, 0.0, hw.CostNames[j])
	}
	require.InEpsilon(t, want.PageRequest+2*want.NodeVisit, got.PageRequest+2*got.NodeVisit, 0.01)
	t.Logf("page_request %.1f, node_visit %.1f", got.PageRequest, got.NodeVisit)
	for _, j := range []hw.Event{hw.EventRowExamined, hw.EventIndexEntryWritten, hw.EventLogRecord, hw.EventLockRequest, hw.EventCommit} {
		require.InEpsilon(t, cost[j], got.Costs()[j], 0.03, hw.CostNames[j])
	}
	require.Greater(t, rep.R2, 0.99)
}

// Too few samples, negative times or counts, and unknown types are
// refused.
func TestFitCPURefuses(t *testing.T) {
	want := truth()
	samples := synthetic(rand.New(rand.NewPCG(3, 1)), 500, &want, 0)
	for _, tc := range []struct {
		name    string
		samples []Sample
		msg     string
	}{
		{"none", nil, "count no CPU event"},
		{"few", samples[:50], "50 calibration samples for 19 observed events: want at least 190"},
		{"negative time", append([]Sample{{Type: tpcc.PaymentTx, Nanos: -1}}, samples...), "time of 0 or more"},
		{"negative count", append([]Sample{{Events: hw.Vector{hw.EventLogByte: -3}}}, samples...), "log_byte count -3 is negative"},
		{"bad type", append([]Sample{{Type: tpcc.NumTxTypes}}, samples...), "want a transaction type"},
	} {
		_, rep, err := FitCPU(tc.samples)
		require.ErrorIs(t, err, sim.ErrInvalidConfig, tc.name)
		require.ErrorContains(t, err, tc.msg, tc.name)
		require.Nil(t, rep)
	}
}

// nnls agrees with brute force on small random problems: the best of the
// unconstrained least squares solutions on every subset of columns that
// are non-negative (the optimum is one of them).
func TestNNLSMatchesEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 1))
	const rows, n = 8, 4
	negatives := 0
	for trial := range 200 {
		c := mat.NewDense(rows, n, nil)
		d := make([]float64, rows)
		for i := range rows {
			for j := range n {
				c.Set(i, j, r.NormFloat64())
			}
			d[i] = r.NormFloat64()
		}
		resid := func(x []float64) float64 {
			var cx mat.VecDense
			cx.MulVec(c, mat.NewVecDense(n, x))
			cx.SubVec(&cx, mat.NewVecDense(rows, d))
			return mat.Norm(&cx, 2)
		}
		best, bestRes := []float64(nil), math.Inf(1)
		for set := range 1 << n {
			passive := make([]bool, n)
			for j := range n {
				passive[j] = set&(1<<j) != 0
			}
			z, err := lsPassive(c, d, passive)
			require.NoError(t, err)
			if slices.Min(z) < 0 {
				continue
			}
			if res := resid(z); res < bestRes {
				best, bestRes = z, res
			}
		}
		all, err := lsPassive(c, d, []bool{true, true, true, true})
		require.NoError(t, err)
		if slices.Min(all) < 0 {
			negatives++
		}
		x, err := nnls(c, d)
		require.NoError(t, err)
		require.GreaterOrEqual(t, slices.Min(x), 0.0, "trial %d", trial)
		require.InDelta(t, bestRes, resid(x), 1e-9, "trial %d", trial)
		for j := range n {
			require.InDelta(t, best[j], x[j], 1e-7, "trial %d, x[%d]", trial, j)
		}
	}
	require.Greater(t, negatives, 100) // the constraint mattered in most trials
}

// standardErrors are the standard errors of an ordinary least squares fit
// of the CPU events to samples whose times carry independent noise of
// noise × truth's price: the square roots of the diagonal of
// (XᵀX)⁻¹ XᵀΣX (XᵀX)⁻¹, Σ the noise variances.
func standardErrors(samples []Sample, truth *hw.CPUProfile, noise float64) []float64 {
	cost := truth.Costs()
	xtx := mat.NewSymDense(hw.NumCPUEvents, nil)
	xsx := mat.NewSymDense(hw.NumCPUEvents, nil)
	x := mat.NewVecDense(hw.NumCPUEvents, nil)
	for i := range samples {
		price := 0.0
		for j := range hw.NumCPUEvents {
			x.SetVec(j, float64(samples[i].Events[j]))
			price += cost[j] * float64(samples[i].Events[j])
		}
		xtx.SymRankOne(xtx, 1, x)
		xsx.SymRankOne(xsx, noise*noise*price*price, x)
	}
	var inv, cov mat.Dense
	if err := inv.Inverse(xtx); err != nil {
		panic(err)
	}
	cov.Product(&inv, xsx, &inv)
	se := make([]float64, hw.NumCPUEvents)
	for j := range se {
		se[j] = math.Sqrt(cov.At(j, j))
	}
	return se
}

// A pause that hits 2% of the transactions (1 to 5 ms, as a collection or
// a descheduled thread) pulls a plain least squares fit off; fitTrimmed
// leaves those transactions out and recovers every cost within four
// standard errors, as without them.
func TestFitTrimmedOutliers(t *testing.T) {
	want := truth()
	const noise = 0.01
	r := rand.New(rand.NewPCG(13, 1))
	samples := synthetic(r, 20000, &want, noise)
	clean := slices.Clone(samples)
	hit := 0
	for i := range samples {
		if r.IntN(50) == 0 {
			samples[i].Nanos += 1e6 + r.Int64N(4e6)
			hit++
		}
	}
	se := standardErrors(clean, &want, noise)
	wc := want.Costs()
	plain, _, err := FitCPU(samples)
	require.NoError(t, err)
	off := 0
	for j, c := range plain.Costs()[:hw.NumCPUEvents] {
		if math.Abs(c-wc[j]) > 4*se[j] {
			off++
		}
	}
	require.Greater(t, off, hw.NumCPUEvents/2, "the pauses pull most costs off")

	got, rep, dropped, err := fitTrimmed(samples)
	require.NoError(t, err)
	require.GreaterOrEqual(t, dropped, hit)
	require.Less(t, dropped, hit+len(samples)/100, "few clean transactions dropped")
	require.Equal(t, len(samples)-dropped, rep.Samples)
	for j, c := range got.Costs()[:hw.NumCPUEvents] {
		require.InDelta(t, wc[j], c, 4*se[j], hw.CostNames[j])
	}
	require.Greater(t, rep.R2, 0.99)
}

// When every sample of one transaction type is far slower than the fit
// predicts (here the only two Order-Status transactions of a short run,
// both hit by a 3 ms pause), fitTrimmed keeps them: without them the type
// would vanish from the fit. The other types' pauses are still dropped.
func TestFitTrimmedKeepsEveryType(t *testing.T) {
	want := truth()
	r := rand.New(rand.NewPCG(17, 1))
	var samples []Sample
	os := 0
	for _, s := range synthetic(r, 4000, &want, 0.01) {
		if s.Type == tpcc.OrderStatusTx {
			if os == 2 {
				continue
			}
			os++
			s.Nanos += 3e6
		}
		samples = append(samples, s)
	}
	hit := 0
	for i := range samples {
		if samples[i].Type != tpcc.OrderStatusTx && r.IntN(50) == 0 {
			samples[i].Nanos += 1e6 + r.Int64N(4e6)
			hit++
		}
	}
	_, rep, dropped, err := fitTrimmed(samples)
	require.NoError(t, err)
	require.Len(t, rep.Types, int(tpcc.NumTxTypes))
	require.Equal(t, tpcc.OrderStatusTx.String(), rep.Types[tpcc.OrderStatusTx].Type)
	require.Equal(t, 2, rep.Types[tpcc.OrderStatusTx].Count)
	require.GreaterOrEqual(t, dropped, hit, "the other types' pauses are dropped")
}
