package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Step is one step of a transaction type (tpcc.Step): an engine call, or
// a scan's open and its reads, with Analyze.pl's figures for its latency
// and its B+tree node visits.
type Step struct {
	Step  string `json:"step"`
	Count int64  `json:"count"`
	// PerTx is the step's calls per completed transaction of its type
	// (retried attempts included).
	PerTx      float64     `json:"per_tx"`
	LatencyUs  StepFigures `json:"latency_us"` // microseconds
	NodeVisits StepFigures `json:"node_visits"`
}

// StepFigures are one measure of a step's calls: the mean, minimum and
// maximum (exact), the 99th percentile and the mean without the lowest
// and highest 5% of the calls (from HDR histograms of two significant
// digits).
type StepFigures struct {
	Mean        float64 `json:"mean"`
	Min         float64 `json:"min"`
	Max         float64 `json:"max"`
	P99         float64 `json:"p99"`
	TrimmedMean float64 `json:"trimmed_mean_5"`
}

// Timeline is the measured interval cut into equal intervals: each
// one's tpmC and transactions per minute, all types (tpcc.Timeline's
// series).
type Timeline struct {
	IntervalSeconds float64         `json:"interval_s"`
	Points          []TimelinePoint `json:"points"`
}

// TimelinePoint is one interval of a Timeline.
type TimelinePoint struct {
	StartSeconds float64 `json:"start_s"`
	TpmC         float64 `json:"tpmc"`
	TxPerMinute  float64 `json:"tx_per_min"`
}

// WriteSteps prints each transaction type's steps (--steps): calls, calls
// per transaction, and the latency and node visits of a call.
func (r *Report) WriteSteps(w io.Writer) error {
	var b strings.Builder
	if r.Run == nil {
		return nil
	}
	fmt.Fprintf(&b, "\nSTEPS: each transaction's engine calls (latency in µs%s; trimmed: without the lowest and highest 5%%)\n", clockNote(r))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "type\tstep\tcalls\tper tx\tmean µs\tmin\tmax\tp99\ttrimmed\tnodes mean\tmin\tmax\tp99\ttrimmed\t")
	for _, t := range r.Run.Types {
		for _, s := range t.Steps {
			l, n := &s.LatencyUs, &s.NodeVisits
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.2f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.0f\t%.0f\t%.0f\t%.1f\t\n", t.Type, s.Step, s.Count, s.PerTx,
				l.Mean, l.Min, l.Max, l.P99, l.TrimmedMean, n.Mean, n.Min, n.Max, n.P99, n.TrimmedMean)
		}
	}
	_ = tw.Flush()
	_, err := io.WriteString(w, b.String())
	return err
}

// clockNote says whose time a report's latencies are.
func clockNote(r *Report) string {
	if r.Sim != nil {
		return ", modeled"
	}
	return ", wall clock"
}
