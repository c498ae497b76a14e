package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/sim/report"
	"github.com/enginelab/enginelab/tpcc"
)

// Calibration: fitting a CPU profile (hw.CPUProfile) to this machine.
//
// Real mode runs transactions for real; each transaction's meter counts
// the events simulated mode prices (hw.VectorOf), and its response time is
// measured. If the machine spends a fixed time per event, a transaction's
// time is Σ cost_i × events_i, and the costs are the solution of a least
// squares problem over many transactions: one row per transaction, one
// column per event. The fit is only as good as the mix of events varies
// across transactions, so Calibrate runs the workload under settings that
// move the mix (client profiles, the count rewrite, Stock-Level's missing
// bound, a heap organization).
//
// What it cannot see: the I/O paths' CPU (StoreRequest, TierRequest), since
// the runs are in memory and the priced vector holds no store reads; the
// cost of events that move together in every transaction, of which it can
// only give the sum (reported as collinear); and anything the meters do
// not count, which lands on the events that correlate with it (a
// transaction's fixed overhead lands on Commit and Rollback, one of which
// every transaction has).

// ErrCalibration means a fit could not be computed from its samples (a
// factorization failed, or a cost came out beyond what a profile
// accepts).
var ErrCalibration = errors.New("sim: calibration failed")

// CalibrationSample is one measured transaction: its type, its priced
// event vector (hw.VectorOf of its meter; every attempt's events, retries
// included) and its response time on the wall clock.
type CalibrationSample struct {
	Type   tpcc.TxType `json:"type"`
	Events hw.Vector   `json:"events"`
	Nanos  int64       `json:"ns"`
}

// FitReport says how well a fitted profile explains the measured times.
type FitReport struct {
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
// and FitReport.Collinear names the group.
//
// Events no sample counts get cost 0 and are listed in NotObserved. Too
// few samples (fewer than minSamplesPerEvent per observed event), negative
// times or counts, or an unknown type give an error wrapping
// ErrBadConfig.
func FitCPU(samples []CalibrationSample) (hw.CPUProfile, *FitReport, error) {
	// Which events the samples exercise, and the column norms.
	var seen [hw.NumCPUEvents]int
	var norm [hw.NumCPUEvents]float64
	var bnorm float64
	for i := range samples {
		s := &samples[i]
		if s.Nanos < 0 || s.Type < 0 || s.Type >= tpcc.NumTxTypes {
			return hw.CPUProfile{}, nil, fmt.Errorf("%w: calibration sample %d: type %v, %d ns: want a transaction type and a time of 0 or more",
				ErrBadConfig, i, s.Type, s.Nanos)
		}
		for j := range hw.NumCPUEvents {
			v := s.Events[j]
			if v < 0 {
				return hw.CPUProfile{}, nil, fmt.Errorf("%w: calibration sample %d: %s count %d is negative", ErrBadConfig, i, hw.CostNames[j], v)
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
		return hw.CPUProfile{}, nil, fmt.Errorf("%w: %d calibration samples count no CPU event", ErrBadConfig, len(samples))
	}
	if need := minSamplesPerEvent * p; len(samples) < need {
		return hw.CPUProfile{}, nil, fmt.Errorf("%w: %d calibration samples for %d observed events: want at least %d (%d an event)",
			ErrBadConfig, len(samples), p, need, minSamplesPerEvent)
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
			return hw.CPUProfile{}, nil, fmt.Errorf("%w: %s cost %g ns is outside 0 to %g", ErrCalibration, hw.CostNames[j], cost[j], float64(hw.MaxCPUCost))
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
func reduce(samples []CalibrationSample, cols []int, norm []float64, bnorm float64) (*mat.Dense, []float64, error) {
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
			return nil, nil, fmt.Errorf("%w: the factorization of the samples is not finite", ErrCalibration)
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
		return nil, fmt.Errorf("%w: singular value decomposition did not converge", ErrCalibration)
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
		return nil, fmt.Errorf("%w: singular value decomposition did not converge", ErrCalibration)
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
func fitReport(samples []CalibrationSample, cost *[hw.NumCosts]float64, seen []int, groups [][]string) *FitReport {
	rep := &FitReport{Samples: len(samples), Collinear: groups}
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

// CalibrateConfig says how Calibrate measures.
type CalibrateConfig struct {
	// Warehouses is W of the in-memory database; default 1. A warehouse
	// loads in a few seconds, and one terminal needs no more.
	Warehouses int `json:"warehouses"`
	// Scale is the population's size (the zero value: full scale). A
	// smaller one loads faster and measures the same events, on shallower
	// trees.
	Scale tpcc.Scale `json:"scale"`
	// Duration is each run's length; default DefaultCalibrateDuration.
	// Calibrate makes len(calibrationRuns) runs (18), the heap
	// organization's at half this, so the default measures for about 75 s
	// after two loads.
	Duration time.Duration `json:"duration_ns"`
	// Seed seeds the loads and the runs (run i takes Seed + i).
	Seed uint64 `json:"seed"`
	// Progress, if not nil, hears what Calibrate is doing, a line at a
	// time, from the calling goroutine.
	Progress func(string) `json:"-"`
}

// DefaultCalibrateDuration is a calibration run's default length: at
// about 4,000 transactions a second, 20,000 samples a run.
const DefaultCalibrateDuration = 5 * time.Second

// calibrationWarmup is how many transactions each run drops before it
// keeps samples (fewer if the run has fewer than five times that): the
// first transactions after a setting changes pay for cold caches and the
// garbage of the last run.
const calibrationWarmup = 300

// EnsureDefaults fills the zero fields of c.
func (c *CalibrateConfig) EnsureDefaults() {
	if c.Warehouses == 0 {
		c.Warehouses = 1
	}
	if c.Duration == 0 {
		c.Duration = DefaultCalibrateDuration
	}
}

// Validate checks c (after EnsureDefaults) before any work.
func (c *CalibrateConfig) Validate() error {
	switch {
	case c.Warehouses < 1 || c.Warehouses > tpcc.MaxWarehouses:
		return fmt.Errorf("%w: calibration: %d warehouses: want 1 to %d", ErrBadConfig, c.Warehouses, tpcc.MaxWarehouses)
	case c.Duration <= 0:
		return fmt.Errorf("%w: calibration: --duration %v: want more than zero", ErrBadConfig, c.Duration)
	}
	if err := c.Scale.Validate(); err != nil {
		return fmt.Errorf("%w: calibration: --scale: %w", ErrBadConfig, err)
	}
	return nil
}

// calibrationRun is one setting Calibrate measures under.
type calibrationRun struct {
	org                   engine.Org
	profile               tpcc.Profile
	countRewrite, noLower bool
	half                  bool // runs for half the duration
}

// calibrationRuns are the settings, grouped by organization (one load
// each). The clustered runs vary everything that changes the event mix;
// the heap runs exist to observe heap fetches and scans, and vary the two
// settings that move those.
var calibrationRuns = func() []calibrationRun {
	var runs []calibrationRun
	for _, p := range []tpcc.Profile{tpcc.Optimized, tpcc.Sysbench, tpcc.BenchmarkSQL} {
		for _, cr := range []bool{false, true} {
			for _, nl := range []bool{false, true} {
				runs = append(runs, calibrationRun{org: engine.Clustered, profile: p, countRewrite: cr, noLower: nl})
			}
		}
	}
	for _, p := range []tpcc.Profile{tpcc.Optimized, tpcc.Sysbench, tpcc.BenchmarkSQL} {
		for _, cr := range []bool{false, true} {
			runs = append(runs, calibrationRun{org: engine.HeapRowPointer, profile: p, countRewrite: cr, half: true})
		}
	}
	return runs
}()

func (r calibrationRun) String() string {
	return fmt.Sprintf("%s, profile %s, count rewrite %v, stock-level no lower bound %v", r.org, r.profile, r.countRewrite, r.noLower)
}

// CalibrationRun is what one run contributed.
type CalibrationRun struct {
	Org                    string  `json:"org"`
	Profile                string  `json:"profile"`
	CountRewrite           bool    `json:"count_rewrite"`
	StockLevelNoLowerBound bool    `json:"stocklevel_no_lower_bound"`
	Seconds                float64 `json:"seconds"`
	Transactions           int     `json:"transactions"` // measured, warm-up included
	Samples                int     `json:"samples"`      // kept after the warm-up
}

// Calibration is a fitted CPU profile and how well it fits.
type Calibration struct {
	Profile hw.CPUProfile    `json:"profile"`
	Fit     *FitReport       `json:"fit"`
	Config  CalibrateConfig  `json:"config"`
	Host    report.Host      `json:"host"`
	Date    string           `json:"date"`
	Runs    []CalibrationRun `json:"runs"`
	// Outliers is how many transactions the fit left out as far slower
	// than their events explain (fitTrimmed); Fit covers the others.
	Outliers int `json:"outliers"`
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
// The costs then price a typical transaction, as hw.DefaultCPU's were set to
// match medians, and leave out the amortized cost of collection pauses.
const (
	outlierDeviations = 6
	outlierRounds     = 4
)

// fitTrimmed is FitCPU without the outliers; it returns how many it left
// out.
func fitTrimmed(samples []CalibrationSample) (hw.CPUProfile, *FitReport, int, error) {
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
		var next []CalibrationSample
		for i := range kept {
			if res[i] <= limit {
				next = append(next, kept[i])
			}
		}
		if len(next) == len(kept) {
			return prof, fit, len(samples) - len(kept), nil
		}
		kept = next
	}
}

// sampler is a terminal's Env in a calibration run: the wall clock, and
// a TxObserver that keeps each measured transaction's events and time.
// One terminal runs, so it needs no lock.
type sampler struct {
	tpcc.RealEnv
	begin   time.Time
	seen    int
	samples []CalibrationSample
}

var (
	_ tpcc.Env        = (*sampler)(nil)
	_ tpcc.TxObserver = (*sampler)(nil)
)

// TxBegin implements tpcc.TxObserver.
func (s *sampler) TxBegin(tpcc.TxType) { s.begin = time.Now() }

// TxEnd implements tpcc.TxObserver.
func (s *sampler) TxEnd(kind tpcc.TxType, measured bool, m *engine.Meter) {
	ns := time.Since(s.begin).Nanoseconds()
	if !measured {
		return
	}
	s.seen++
	s.samples = append(s.samples, CalibrationSample{Type: kind, Events: hw.VectorOf(m), Nanos: ns})
}

// Calibrate measures real-mode runs on this machine and fits a CPU profile
// to them (FitCPU). Each organization's database is loaded once, in
// memory, with a pool that holds all of it and no sync at commit; then
// one terminal (no contention for cores or locks, so a transaction's time
// is its own CPU) runs under each setting of calibrationRuns. The first
// transactions of each run are dropped (calibrationWarmup), and the fit
// leaves out the transactions far slower than their events explain
// (fitTrimmed).
//
// It takes the machine's cores for the whole time: run it on a quiet
// machine. Progress lines go to cfg.Progress.
func Calibrate(ctx context.Context, cfg CalibrateConfig) (*Calibration, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	progress := cfg.Progress
	if progress == nil {
		progress = func(string) {}
	}
	cal := &Calibration{Config: cfg, Date: time.Now().Format("2006-01-02"),
		Host: report.Host{GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU()}}
	var samples []CalibrationSample
	var db *engine.DB
	var loaded tpcc.Loaded
	closeDB := func() error {
		if db == nil {
			return nil
		}
		err := db.Close()
		db = nil
		return err
	}
	defer closeDB()
	for i, r := range calibrationRuns {
		if db == nil || loaded.Org != r.org {
			if err := closeDB(); err != nil {
				return nil, err
			}
			progress(fmt.Sprintf("loading %d warehouse(s), %s", cfg.Warehouses, r.org))
			var err error
			if db, loaded, err = calibrationLoad(ctx, &cfg, r.org); err != nil {
				return nil, err
			}
		}
		d := cfg.Duration
		if r.half {
			d /= 2
		}
		progress(fmt.Sprintf("run %d/%d (%v): %s", i+1, len(calibrationRuns), d, r))
		db.SetCountRewrite(r.countRewrite)
		runtime.GC() // the last run's garbage is not this one's to pay
		s := &sampler{}
		rc := tpcc.RunConfig{Warehouses: loaded.Warehouses, Scale: loaded.Scale, Terminals: 1, Duration: d, Seed: cfg.Seed + uint64(i),
			LoadConstants: loaded.Constants, Profile: r.profile, StockLevelNoLowerBound: r.noLower, Env: s}
		start := time.Now()
		if _, err := tpcc.Run(ctx, db, rc); err != nil {
			return nil, fmt.Errorf("calibration run %d (%s): %w", i+1, r, err)
		}
		drop := min(calibrationWarmup, len(s.samples)/5)
		kept := s.samples[drop:]
		samples = append(samples, kept...)
		cal.Runs = append(cal.Runs, CalibrationRun{Org: r.org.String(), Profile: r.profile.String(), CountRewrite: r.countRewrite,
			StockLevelNoLowerBound: r.noLower, Seconds: time.Since(start).Seconds(), Transactions: s.seen, Samples: len(kept)})
	}
	if err := closeDB(); err != nil {
		return nil, err
	}
	progress(fmt.Sprintf("fitting %d transactions", len(samples)))
	prof, fit, outliers, err := fitTrimmed(samples)
	if err != nil {
		return nil, err
	}
	cal.Outliers = outliers
	// In memory nothing reads a device, and some events may not occur:
	// the profile keeps the shipped costs for what was not observed, so
	// that it still prices a run on a disk.
	prof = withDefaults(prof, fit.NotObserved)
	prof.Source = fmt.Sprintf("calibrated on %s/%s, %d CPUs, %s, R² %.3f (enginelab calibrate, %d transactions)",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cal.Date, fit.R2, fit.Samples)
	cal.Profile, cal.Fit = prof, fit
	return cal, nil
}

// calibrationLoad opens an in-memory database as a real-mode TPC-C job
// would (TPCCConfig.EngineOptions: a pool for all of it, no sync at
// commit) and loads it.
func calibrationLoad(ctx context.Context, cfg *CalibrateConfig, org engine.Org) (*engine.DB, tpcc.Loaded, error) {
	job := TPCCConfig{Warehouses: cfg.Warehouses, Org: org}
	opts := job.EngineOptions()
	opts.SkipMemoryCheck = false // no job's check ran: the engine's own (the pool at its capacity)
	db, err := engine.Open(opts)
	if err != nil {
		return nil, tpcc.Loaded{}, err
	}
	if _, err := tpcc.Load(ctx, db, tpcc.LoadConfig{Warehouses: cfg.Warehouses, Scale: cfg.Scale, Seed: cfg.Seed, Org: org}); err != nil {
		return nil, tpcc.Loaded{}, errors.Join(err, db.Close())
	}
	loaded, err := tpcc.ReadLoaded(db)
	if err != nil {
		return nil, tpcc.Loaded{}, errors.Join(err, db.Close())
	}
	return db, loaded, nil
}

// WriteTable prints the fitted costs (beside the shipped default's) and
// the fit per transaction type.
func (c *Calibration) WriteTable(w io.Writer) error {
	var b strings.Builder
	f := c.Fit
	fmt.Fprintf(&b, "enginelab calibrate: %s/%s, %d CPUs, %s, %s; %d warehouse(s)%s, %v a run, seed %d\n",
		c.Host.OS, c.Host.Arch, c.Host.CPUs, c.Host.GoVersion, c.Date, c.Config.Warehouses, report.ScaleNote(c.Config.Scale.String()),
		c.Config.Duration, c.Config.Seed)
	total := 0
	for _, r := range c.Runs {
		total += r.Transactions
	}
	fmt.Fprintf(&b, "%d runs of one terminal, %d transactions, %d kept after each run's warm-up\n", len(c.Runs), total, f.Samples+c.Outliers)
	fmt.Fprintf(&b, "fit: R² %.4f, rms residual %.1f µs a transaction, over the %d transactions left after %d outliers (far slower than their events explain: pauses, preemption)\n",
		f.R2, f.RMSResidualNanos/1e3, f.Samples, c.Outliers)

	fmt.Fprintf(&b, "\nCPU cost per event (ns; non-negative least squares over every transaction)\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "event\tfitted\tdefault\tsamples\tshare %\t")
	def := hw.DefaultCPU.Costs()
	for j, e := range f.Events {
		fitted := fmt.Sprintf("%.1f", e.Cost)
		if e.Samples == 0 {
			fitted = "-"
		} else if e.Cost < 10 {
			fitted = fmt.Sprintf("%.3f", e.Cost)
		}
		fmt.Fprintf(tw, "%s\t%s\t%g\t%d\t%.1f\t\n", e.Event, fitted, def[j], e.Samples, e.SharePct)
	}
	_ = tw.Flush()
	if len(f.NotObserved) > 0 {
		fmt.Fprintf(&b, "not observed (the profile keeps the default's cost): %s\n", strings.Join(f.NotObserved, ", "))
	}
	for _, g := range f.Collinear {
		fmt.Fprintf(&b, "collinear (only their joint cost is fitted): %s\n", strings.Join(g, ", "))
	}

	fmt.Fprintf(&b, "\nmeasured and predicted response times per transaction type\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "type\tcount\tmeasured µs\tpredicted µs\tresidual %\trms µs\t")
	for _, t := range f.Types {
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%+.1f\t%.1f\t\n", t.Type, t.Count, t.MeanNanos/1e3, t.PredictedNanos/1e3,
			t.ResidualPct, t.RMSResidualNanos/1e3)
	}
	_ = tw.Flush()
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteProfile writes the profile as a profiles file holding one CPU
// profile, name: {"cpus": {name: profile}}, which hw.Spec{
// ProfilesFile: file, CPU: name}.Resolve loads.
func (c *Calibration) WriteProfile(w io.Writer, name string) error {
	if err := hw.CheckProfileName(name); err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(hw.ProfilesFile{CPUs: map[string]hw.CPUProfile{name: c.Profile}})
}

// withDefaults returns p with hw.DefaultCPU's cost for every event named
// in names (hw.CostNames).
func withDefaults(p hw.CPUProfile, names []string) hw.CPUProfile {
	c, d := p.Costs(), hw.DefaultCPU.Costs()
	for i, n := range hw.CostNames {
		if slices.Contains(names, n) {
			c[i] = d[i]
		}
	}
	q := hw.ProfileOf(c)
	q.Source = p.Source
	return q
}
