package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/enginelab/enginelab/sim/report"
	"github.com/enginelab/enginelab/tpcc"
)

// progressLines prints a run's progress as go-tpc does: every interval a
// line per transaction type that completed any ([Current] ... Takes(s),
// Count, TPM and the interval's percentiles), and after the run a
// [Summary] line per type and the tpmC. Its methods do nothing on a nil
// receiver (lines off).
type progressLines struct {
	w     io.Writer
	label string // a --compare side's, before each line
}

// progress returns the progress lines of a run, or nil when they are
// off. They are on when --interval is given (on standard error with
// --json, so that the document stays whole), else when standard output is
// a terminal and --json is not given.
func (f *tpccFlags) progress(stdout, stderr io.Writer, label string) *progressLines {
	given := false
	f.fs.Visit(func(fl *flag.Flag) { given = given || fl.Name == "interval" })
	switch {
	case given && f.asJSON:
		return &progressLines{w: stderr, label: label}
	case given:
		return &progressLines{w: stdout, label: label}
	case f.asJSON || !isTerminal(stdout):
		return nil
	}
	return &progressLines{w: stdout, label: label}
}

// isTerminal says w is a terminal.
func isTerminal(w io.Writer) bool {
	file, ok := w.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}

// ms prints a latency in milliseconds.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// interval prints one interval's lines (sim.Hooks.Interval).
func (p *progressLines) interval(iv tpcc.Interval) {
	if p == nil {
		return
	}
	secs := (iv.End - iv.Start).Seconds()
	for k, t := range iv.Types {
		if t.Count == 0 {
			continue
		}
		fmt.Fprintf(p.w, "%s[Current] %s - Takes(s): %.1f, Count: %d, TPM: %.1f, 50th(ms): %.2f, 90th(ms): %.2f, 99th(ms): %.2f\n",
			p.label, tpcc.TxType(k), secs, t.Count, iv.PerMinute(t.Count), ms(t.P50), ms(t.P90), ms(t.P99))
	}
}

// summary prints the whole run's lines from its report.
func (p *progressLines) summary(rep *report.Report) {
	if p == nil || rep == nil || rep.Run == nil {
		return
	}
	run := rep.Run
	for _, t := range run.Types {
		if t.Count == 0 {
			continue
		}
		l := &t.LatencyMs
		fmt.Fprintf(p.w, "%s[Summary] %s - Takes(s): %.1f, Count: %d, TPM: %.1f, 50th(ms): %.2f, 90th(ms): %.2f, 95th(ms): %.2f, 99th(ms): %.2f, Max(ms): %.2f\n",
			p.label, t.Type, run.MeasuredSeconds, t.Count, float64(t.Count)/run.MeasuredSeconds*60, l.P50, l.P90, l.P95, l.P99, l.Max)
	}
	fmt.Fprintf(p.w, "%stpmC: %.1f\n", p.label, run.TpmC)
}
