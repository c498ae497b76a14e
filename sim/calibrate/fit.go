package calibrate

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/tpcc"
)

// Sample is one measured transaction: its type, its priced event vector
// (hw.VectorOf of its meter; every attempt's events, retries included) and
// its response time on the wall clock.
type Sample struct {
	Type   tpcc.TxType `json:"type"`
	Events hw.Vector   `json:"events"`
	Nanos  int64       `json:"ns"`
}

// Fit says how well a fitted profile explains the measured times.
type Fit struct {
	Samples int `json:"samples"`
	// R2 is 1 − Σ(measured − predicted)² / Σ(measured − mean)² over every
	// sample. It can fall below 0 only for samples without a constant
	// column; TPC-C's have one (every transaction ends in a commit or a
	// rollback), so there it is in [0, 1].
	R2 float64 `json:"r2"`
	// RMSResidualNanos is the root mean square of measured − predicted.
	RMSResidualNanos float64 `json:"rms_residual_ns"`
	// Events lists every cost of the profile, in its order.
	Events []EventFit `json:"events"`
	// NotObserved names the costs no sample exercised: they are 0 in the
	// profile, which says nothing about their true cost.
	NotObserved []string `json:"not_observed"`
	// Collinear lists groups of events whose counts are proportional in
	// every sample: the samples fix only a weighted sum of their costs,
	// which the fit gives to one of them or splits among them (see
	// FitCPU).
	Collinear [][]string `json:"collinear,omitempty"`
	// Types is the fit per transaction type that had samples.
	Types []TypeFit `json:"types"`
}

// EventFit is one fitted cost.
type EventFit struct {
	Event string  `json:"event"` // the hw.CPUProfile's JSON name
	Cost  float64 `json:"cost_ns"`
	// Samples is how many samples counted the event at least once.
	Samples int `json:"samples"`
	// SharePct is the event's part of all predicted time.
	SharePct float64 `json:"share_pct"`
}

// TypeFit compares measured and predicted times of one transaction type.
type TypeFit struct {
	Type           string  `json:"type"`
	Count          int     `json:"count"`
	MeanNanos      float64 `json:"mean_ns"`
	PredictedNanos float64 `json:"predicted_ns"`
	// ResidualPct is (predicted − measured) / measured of the means, in
	// percent: how far simulated mode's mean for the type would be off.
	ResidualPct float64 `json:"residual_pct"`
	// RMSResidualNanos is the root mean square of one transaction's
	// measured − predicted: the scatter the event counts do not explain.
	RMSResidualNanos float64 `json:"rms_residual_ns"`
}

// Numerical choices of FitCPU.
const (
	// fitRcond is the SVD cutoff: on columns scaled to unit norm, a
	// singular value below fitRcond × the largest is taken as zero. Exact
	// collinearity leaves singular values near 1e-16; a combination of
	// events whose effect is 1e-8 of the dominant one is not determined by
	// measured times with percent-level noise either.
	fitRcond = 1e-8
	// minSamplesPerEvent is how many samples FitCPU wants per observed
	// event (and at least this many in all).
	minSamplesPerEvent = 10
	// fitBlockRows is how many samples are folded into the triangular
	// factor at once.
	fitBlockRows = 4096
)

// FitCPU fits the CPU cost of each event to the samples: non-negative
// least squares of Nanos ≈ Σ cost_i × Events_i over the CPU events
// (hw.EventPageRequest..hw.EventRollback; the device events are priced by their
// devices and left out). StoreRequest and TierRequest stay 0: the vector
// holds no store or tier reads.
//
// Method. Each observed column, and the times, are scaled to unit norm;
// the samples are folded, a block at a time, into the triangular factor R
// of a QR factorization of [A b], so that memory does not grow with the
// number of samples and ‖Ax − b‖² = ‖Cx − d‖² + r² with C, d from R.
// The non-negative problem on (C, d) is solved with Lawson and Hanson's
// active-set method (Solving Least Squares Problems, 1974, ch. 23), each
// unconstrained subproblem by a truncated SVD: singular values below
// fitRcond × the largest are dropped and the minimum-norm solution taken.
// So collinear events cannot blow up: an event whose column adds nothing
// once a partner is in does not enter the active set (with exact
// collinearity, the partner that entered first takes the group's whole
// cost), and if several are in, the minimum-norm solution splits their
// joint effect among them (in scaled units, evenly). Either way their
// costs are finite and non-negative, the predicted times are the same,
// and Fit.Collinear names the group.
//
// Events no sample counts get cost 0 and are listed in NotObserved. Too
// few samples (fewer than minSamplesPerEvent per observed event), negative
// times or counts, or an unknown type give an error wrapping
// ErrInvalidConfig.
func FitCPU(samples []Sample) (hw.CPUProfile, *Fit, error) {
	// Which events the samples exercise, and the column norms.
	var seen [hw.NumCPUEvents]int
	var norm [hw.NumCPUEvents]float64
	var bnorm float64
	for i := range samples {
		s := &samples[i]
		if s.Nanos < 0 || s.Type < 0 || s.Type >= tpcc.NumTxTypes {
			return hw.CPUProfile{}, nil, fmt.Errorf("sim: %w: calibration sample %d: type %v, %d ns: want a transaction type and a time of 0 or more",
				ErrInvalidConfig, i, s.Type, s.Nanos)
		}
		for j := range hw.NumCPUEvents {
			v := s.Events[j]
			if v < 0 {
				return hw.CPUProfile{}, nil, fmt.Errorf("sim: %w: calibration sample %d: %s count %d is negative", ErrInvalidConfig, i, hw.CostNames[j], v)
			}
			if v != 0 {
				seen[j]++
				norm[j] += float64(v) * float64(v)
			}
		}
		bnorm += float64(s.Nanos) * float64(s.Nanos)
	}
	var cols []int // the observed events, in order
	for j := range hw.NumCPUEvents {
		if seen[j] > 0 {
			cols = append(cols, j)
			norm[j] = math.Sqrt(norm[j])
		}
	}
	p := len(cols)
	if p == 0 {
		return hw.CPUProfile{}, nil, fmt.Errorf("sim: %w: %d calibration samples count no CPU event", ErrInvalidConfig, len(samples))
	}
	if need := minSamplesPerEvent * p; len(samples) < need {
		return hw.CPUProfile{}, nil, fmt.Errorf("sim: %w: %d calibration samples for %d observed events: want at least %d (%d an event)",
			ErrInvalidConfig, len(samples), p, need, minSamplesPerEvent)
	}
	bnorm = math.Sqrt(bnorm)
	if bnorm == 0 {
		bnorm = 1 // every time 0: the fit is all zeros
	}

	c, d, err := reduce(samples, cols, norm[:], bnorm)
	if err != nil {
		return hw.CPUProfile{}, nil, err
	}
	x, err := nnls(c, d)
	if err != nil {
		return hw.CPUProfile{}, nil, err
	}
	var cost [hw.NumCosts]float64
	for k, j := range cols {
		cost[j] = x[k] * bnorm / norm[j]
		if !(cost[j] >= 0 && cost[j] <= hw.MaxCPUCost) { // NaN fails too
			return hw.CPUProfile{}, nil, fmt.Errorf("%w: %s cost %g ns is outside 0 to %g", ErrFailed, hw.CostNames[j], cost[j], float64(hw.MaxCPUCost))
		}
	}
	groups, err := collinear(c, cols)
	if err != nil {
		return hw.CPUProfile{}, nil, err
	}
	prof := hw.ProfileOf(cost[:])
	rep := fitReport(samples, &cost, seen[:], groups)
	return prof, rep, nil
}

// reduce folds the scaled samples into the triangular factor of [A b]
// (A's columns cols scaled by 1/norm, b scaled by 1/bnorm) and returns C
// (p×p) and d (p) such that ‖Ax − b‖ differs from ‖Cx − d‖ by a constant.
func reduce(samples []Sample, cols []int, norm []float64, bnorm float64) (*mat.Dense, []float64, error) {
	p := len(cols)
	n := p + 1
	// The first n rows carry the factor so far; the rest take samples.
	// Unused rows stay zero, which changes nothing.
	buf := mat.NewDense(n+fitBlockRows, n, nil)
	row := n
	var qr mat.QR
	var r mat.Dense
	fold := func() {
		qr.Factorize(buf)
		r.Reset()
		qr.RTo(&r)
		buf.Zero()
		buf.Slice(0, n, 0, n).(*mat.Dense).Copy(r.Slice(0, n, 0, n))
		row = n
	}
	for i := range samples {
		s := &samples[i]
		for k, j := range cols {
			buf.Set(row, k, float64(s.Events[j])/norm[j])
		}
		buf.Set(row, p, float64(s.Nanos)/bnorm)
		row++
		if row == n+fitBlockRows {
			fold()
		}
	}
	if row > n {
		fold()
	}
	c := mat.DenseCopyOf(buf.Slice(0, p, 0, p))
	d := make([]float64, p)
	for k := range p {
		d[k] = buf.At(k, p)
	}
	for _, v := range slices.Concat(d, c.RawMatrix().Data) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, nil, fmt.Errorf("%w: the factorization of the samples is not finite", ErrFailed)
		}
	}
	return c, d, nil
}

// nnls solves min ‖Cx − d‖ subject to x ≥ 0 by Lawson and Hanson's
// active-set method. Variables enter the passive (free) set one at a time,
// the one whose gradient most wants to grow; when the unconstrained
// solution on the passive set has a non-positive component, the step
// toward it stops at the first component to reach 0, which leaves the
// set. It ends when no variable outside wants to grow: the solution then
// satisfies the Karush–Kuhn–Tucker conditions. The method terminates in
// exact arithmetic; a cap on iterations guards against rounding cycles
// and returns the last (feasible) iterate.
func nnls(c *mat.Dense, d []float64) ([]float64, error) {
	rows, n := c.Dims()
	dv := mat.NewVecDense(rows, d)
	x := make([]float64, n)
	passive := make([]bool, n)
	tol := 10 * 0x1p-52 * mat.Norm(c, 1) * float64(max(rows, n))
	var res, w mat.VecDense
	gradient := func() { // w = Cᵀ(d − Cx)
		res.MulVec(c, mat.NewVecDense(n, x))
		res.SubVec(dv, &res)
		w.MulVec(c.T(), &res)
	}
	for outer := 0; outer < 3*n+3; outer++ {
		gradient()
		t, best := -1, tol
		for j := range n {
			if !passive[j] && w.AtVec(j) > best {
				t, best = j, w.AtVec(j)
			}
		}
		if t < 0 {
			break
		}
		passive[t] = true
		for inner := 0; inner < 3*n+3; inner++ {
			z, err := lsPassive(c, d, passive)
			if err != nil {
				return nil, err
			}
			alpha, allPositive := 1.0, true
			for j := range n {
				if passive[j] && z[j] <= 0 {
					allPositive = false
					a := 0.0 // x[j] = z[j] = 0: no step at all
					if den := x[j] - z[j]; den > 0 {
						a = x[j] / den
					}
					alpha = min(alpha, a)
				}
			}
			if allPositive {
				copy(x, z)
				break
			}
			xmax := 0.0
			for j := range n {
				x[j] += alpha * (z[j] - x[j])
				xmax = max(xmax, x[j])
			}
			for j := range n {
				if passive[j] && x[j] <= 1e-14*(1+xmax) {
					passive[j], x[j] = false, 0
				}
			}
		}
	}
	return x, nil
}

// lsPassive returns the minimum-norm least squares solution of Cz ≈ d on
// the passive columns (a truncated SVD, fitRcond), 0 elsewhere.
func lsPassive(c *mat.Dense, d []float64, passive []bool) ([]float64, error) {
	rows, n := c.Dims()
	var idx []int
	for j := range n {
		if passive[j] {
			idx = append(idx, j)
		}
	}
	z := make([]float64, n)
	if len(idx) == 0 {
		return z, nil
	}
	sub := mat.NewDense(rows, len(idx), nil)
	for k, j := range idx {
		for i := range rows {
			sub.Set(i, k, c.At(i, j))
		}
	}
	var svd mat.SVD
	if !svd.Factorize(sub, mat.SVDThin) {
		return nil, fmt.Errorf("%w: singular value decomposition did not converge", ErrFailed)
	}
	rank := svd.Rank(fitRcond)
	if rank == 0 {
		return z, nil
	}
	var sol mat.VecDense
	svd.SolveVecTo(&sol, mat.NewVecDense(rows, d), rank)
	for k, j := range idx {
		z[j] = sol.AtVec(k)
	}
	return z, nil
}

// collinear finds groups of events that move together: the events with a
// weight of more than 0.1 in a right singular vector of C (whose columns
// have unit norm) for a singular value below fitRcond × the largest.
// Groups that share an event are merged.
func collinear(c *mat.Dense, cols []int) ([][]string, error) {
	var svd mat.SVD
	if !svd.Factorize(c, mat.SVDThin) {
		return nil, fmt.Errorf("%w: singular value decomposition did not converge", ErrFailed)
	}
	s := svd.Values(nil)
	var v mat.Dense
	svd.VTo(&v)
	p := len(cols)
	group := make([]int, p) // union-find parents
	for k := range group {
		group[k] = k
	}
	find := func(k int) int {
		for group[k] != k {
			k = group[k]
		}
		return k
	}
	inGroup := make([]bool, p)
	for q := range s {
		if s[q] > fitRcond*s[0] {
			continue
		}
		first := -1
		for k := range p {
			if math.Abs(v.At(k, q)) > 0.1 {
				inGroup[k] = true
				if first < 0 {
					first = k
				} else {
					group[find(k)] = find(first)
				}
			}
		}
	}
	var out [][]string
	idx := map[int]int{}
	for k := range p {
		if !inGroup[k] {
			continue
		}
		root := find(k)
		g, ok := idx[root]
		if !ok {
			g = len(out)
			idx[root] = g
			out = append(out, nil)
		}
		out[g] = append(out[g], hw.CostNames[cols[k]])
	}
	return out, nil
}

// fitReport measures how well cost explains the samples.
func fitReport(samples []Sample, cost *[hw.NumCosts]float64, seen []int, groups [][]string) *Fit {
	rep := &Fit{Samples: len(samples), Collinear: groups}
	type acc struct {
		n                 int
		meas, pred, sqres float64
	}
	var types [tpcc.NumTxTypes]acc
	var share [hw.NumCPUEvents]float64
	var sum, sqres, predTotal float64
	for i := range samples {
		sum += float64(samples[i].Nanos)
	}
	mean := sum / float64(len(samples))
	var sqtot float64
	for i := range samples {
		s := &samples[i]
		pred := 0.0
		for j := range hw.NumCPUEvents {
			e := cost[j] * float64(s.Events[j])
			pred += e
			share[j] += e
		}
		predTotal += pred
		meas := float64(s.Nanos)
		r := meas - pred
		sqres += r * r
		sqtot += (meas - mean) * (meas - mean)
		t := &types[s.Type]
		t.n++
		t.meas += meas
		t.pred += pred
		t.sqres += r * r
	}
	switch {
	case sqtot > 0:
		rep.R2 = 1 - sqres/sqtot
	case sqres == 0:
		rep.R2 = 1 // every time the same, and predicted exactly
	}
	rep.RMSResidualNanos = math.Sqrt(sqres / float64(len(samples)))
	for j, name := range hw.CostNames {
		e := EventFit{Event: name, Cost: cost[j]}
		if j < hw.NumCPUEvents {
			e.Samples = seen[j]
			if predTotal > 0 {
				e.SharePct = 100 * share[j] / predTotal
			}
		}
		if e.Samples == 0 {
			rep.NotObserved = append(rep.NotObserved, name)
		}
		rep.Events = append(rep.Events, e)
	}
	for k, t := range types {
		if t.n == 0 {
			continue
		}
		tf := TypeFit{Type: tpcc.TxType(k).String(), Count: t.n, MeanNanos: t.meas / float64(t.n), PredictedNanos: t.pred / float64(t.n),
			RMSResidualNanos: math.Sqrt(t.sqres / float64(t.n))}
		if tf.MeanNanos > 0 {
			tf.ResidualPct = 100 * (tf.PredictedNanos - tf.MeanNanos) / tf.MeanNanos
		}
		rep.Types = append(rep.Types, tf)
	}
	return rep
}

// Outlier trimming (fitTrimmed). A transaction's measured time is its
// CPU plus whatever else happened while it ran: a garbage collection
// pause, the terminal's goroutine or thread descheduled for another
// process. Those add milliseconds to a transaction of tens of
// microseconds, only ever add, and land on whatever events the unlucky
// transaction counted, so least squares, which squares them, hands them to
// rare events (a page created, a merge) at absurd costs. fitTrimmed fits,
// drops the transactions slower than predicted by more than
// outlierDeviations robust standard deviations of the relative residuals
// ((measured − predicted) / predicted; 1.4826 × their median absolute
// deviation), and fits again, until none is dropped or after
// outlierRounds fits. Relative, because the scatter grows with a
// transaction's size: an absolute limit set by the many short
// transactions would drop the long ones. Faster-than-predicted
// transactions are kept: nothing makes a transaction faster than its
// work.
//
// A transaction type none of whose samples would be left is kept whole:
// pauses strike transactions at random, so when every sample of a type is
// far slower than predicted, the fit is what is wrong for that type (too
// few of its samples to shape it), and dropping them would leave the type
// out of the fit and its events priced by the other types alone.
//
// The costs then price a typical transaction, as hw.DefaultCPU's were set to
// match medians, and leave out the amortized cost of collection pauses.
const (
	outlierDeviations = 6
	outlierRounds     = 4
)

// fitTrimmed is FitCPU without the outliers; it returns how many it left
// out.
func fitTrimmed(samples []Sample) (hw.CPUProfile, *Fit, int, error) {
	kept := samples
	for round := 1; ; round++ {
		prof, fit, err := FitCPU(kept)
		if err != nil || round == outlierRounds {
			return prof, fit, len(samples) - len(kept), err
		}
		cost := prof.Costs()
		res := make([]float64, len(kept))
		for i := range kept {
			pred := 0.0
			for j := range hw.NumCPUEvents {
				pred += cost[j] * float64(kept[i].Events[j])
			}
			res[i] = (float64(kept[i].Nanos) - pred) / max(pred, 1)
		}
		sorted := slices.Clone(res)
		slices.Sort(sorted)
		med := sorted[len(sorted)/2]
		for i := range sorted {
			sorted[i] = math.Abs(sorted[i] - med)
		}
		slices.Sort(sorted)
		limit := med + outlierDeviations*1.4826*sorted[len(sorted)/2]
		var left [tpcc.NumTxTypes]int
		for i := range kept {
			if res[i] <= limit {
				left[kept[i].Type]++
			}
		}
		var next []Sample
		for i := range kept {
			if res[i] <= limit || left[kept[i].Type] == 0 {
				next = append(next, kept[i])
			}
		}
		if len(next) == len(kept) {
			return prof, fit, len(samples) - len(kept), nil
		}
		kept = next
	}
}
