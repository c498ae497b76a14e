package tpcc

import (
	"fmt"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Timeline follows a run's measured transactions over time, on the run's
// clock (virtual time in simulated mode): a count per type and series
// interval (the report's tpmC over time), and per progress interval each
// type's count and latency percentiles, handed to OnInterval as each
// interval ends (the progress lines a kit such as go-tpc prints). An
// interval ends when a transaction completes after it, or at Finish; a
// completion belongs to the interval its end falls in.
//
// Terminals record concurrently in real mode, so it takes a lock; in
// simulated mode one terminal runs at a time and completions arrive in
// virtual-time order, so the intervals are the same on every run.
type Timeline struct {
	// OnInterval, if set, hears each progress interval as it ends, on the
	// goroutine of the terminal whose completion ended it (or Finish's).
	OnInterval func(Interval)

	mu          sync.Mutex
	step, print time.Duration
	from        time.Time
	duration    time.Duration
	started     bool
	series      [][NumTxTypes]int64
	cur         int // the progress interval being filled
	counts      [NumTxTypes]int64
	hist        [NumTxTypes]*hdrhistogram.Histogram
}

// Interval is one progress interval: [Start, End) from the start of the
// measured interval, and each type's completions in it.
type Interval struct {
	Index      int
	Start, End time.Duration
	Types      [NumTxTypes]IntervalType
}

// IntervalType is a type's completions in an interval: their count and
// latency percentiles.
type IntervalType struct {
	Count         int64
	P50, P90, P99 time.Duration
}

// PerMinute is n per minute of the interval.
func (iv *Interval) PerMinute(n int64) float64 {
	if d := iv.End - iv.Start; d > 0 {
		return float64(n) / d.Minutes()
	}
	return 0
}

// NewTimeline returns a timeline with series intervals of step and
// progress intervals of print; both must be positive.
func NewTimeline(step, print time.Duration) (*Timeline, error) {
	if step <= 0 || print <= 0 {
		return nil, fmt.Errorf("tpcc: %w: timeline intervals %v and %v: want more than zero", ErrInvalidConfig, step, print)
	}
	tl := &Timeline{step: step, print: print}
	for k := range tl.hist {
		tl.hist[k] = hdrhistogram.New(1, latencyMax, 3)
	}
	return tl, nil
}

// Start sets the start of the measured interval and its length (the
// terminals do it, through RunConfig.Timeline).
func (tl *Timeline) Start(from time.Time, duration time.Duration) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.from, tl.duration, tl.started = from, duration, true
	tl.series = make([][NumTxTypes]int64, max(1, int((duration+tl.step-1)/tl.step)))
}

// Record adds a measured transaction of kind that completed at end after
// taking latency.
func (tl *Timeline) Record(kind TxType, end time.Time, latency time.Duration) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if !tl.started {
		return
	}
	at := max(0, end.Sub(tl.from))
	// A transaction begun in the measured interval may end after it: it
	// counts in the last interval.
	i := min(int(at/tl.step), len(tl.series)-1)
	tl.series[i][kind]++
	last := max(0, int((tl.duration-1)/tl.print)) // late completions too: as in the series
	for p := min(int(at/tl.print), last); tl.cur < p; {
		tl.emit(false)
	}
	tl.counts[kind]++
	_ = tl.hist[kind].RecordValue(max(1, min(latency.Microseconds(), latencyMax)))
}

// Finish ends the last progress interval, if anything completed in it.
func (tl *Timeline) Finish() {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.emit(true)
}

// emit hands the current progress interval to OnInterval (the last one:
// cut at the measured interval's end) and starts the next.
func (tl *Timeline) emit(last bool) {
	iv := Interval{Index: tl.cur, Start: time.Duration(tl.cur) * tl.print, End: time.Duration(tl.cur+1) * tl.print}
	var any bool
	for k := range tl.counts {
		h := tl.hist[k]
		us := func(q float64) time.Duration { return time.Duration(h.ValueAtQuantile(q)) * time.Microsecond }
		iv.Types[k] = IntervalType{Count: tl.counts[k], P50: us(50), P90: us(90), P99: us(99)}
		any = any || tl.counts[k] > 0
		tl.counts[k] = 0
		h.Reset()
	}
	if last && tl.duration > iv.Start {
		iv.End = min(iv.End, tl.duration)
	}
	tl.cur++
	if tl.OnInterval != nil && (any || !last) {
		tl.OnInterval(iv)
	}
}

// Step is the series interval.
func (tl *Timeline) Step() time.Duration { return tl.step }

// Series returns the count of each type per series interval, from the
// start of the measured interval (a copy).
func (tl *Timeline) Series() [][NumTxTypes]int64 {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return append([][NumTxTypes]int64(nil), tl.series...)
}
