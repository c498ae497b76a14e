package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/sim/report"
	"github.com/enginelab/enginelab/tpcc"
)

// The progress lines, driven by a timeline fed with made-up completions
// (no clock, no sleep): a line per type that completed anything in each
// interval, go-tpc's fields, and the summary from the report.
func TestProgressLines(t *testing.T) {
	var b bytes.Buffer
	p := &progressLines{w: &b, label: "org=clustered: "}
	tl, err := tpcc.NewTimeline(time.Second, 10*time.Second)
	require.NoError(t, err)
	tl.OnInterval = p.interval
	t0 := time.Unix(1_800_000_000, 0)
	tl.Start(t0, 20*time.Second)
	for i := range 30 {
		tl.Record(tpcc.NewOrderTx, t0.Add(time.Duration(i)*time.Second/3), time.Duration(i+1)*time.Millisecond)
	}
	tl.Record(tpcc.PaymentTx, t0.Add(12*time.Second), 2*time.Millisecond)
	tl.Finish()
	require.Equal(t, `org=clustered: [Current] new-order - Takes(s): 10.0, Count: 30, TPM: 180.0, 50th(ms): 15.01, 90th(ms): 27.01, 99th(ms): 30.02
org=clustered: [Current] payment - Takes(s): 10.0, Count: 1, TPM: 6.0, 50th(ms): 2.00, 90th(ms): 2.00, 99th(ms): 2.00
`, b.String())

	b.Reset()
	p.summary(&report.Report{Run: &report.Run{MeasuredSeconds: 20, TpmC: 90, Types: []report.Type{
		{Type: "new-order", Count: 30, LatencyMs: report.Percentiles{P50: 15, P90: 27, P95: 28.5, P99: 30, Max: 30}},
		{Type: "payment"}}}})
	require.Equal(t, `org=clustered: [Summary] new-order - Takes(s): 20.0, Count: 30, TPM: 90.0, 50th(ms): 15.00, 90th(ms): 27.00, 95th(ms): 28.50, 99th(ms): 30.00, Max(ms): 30.00
org=clustered: tpmC: 90.0
`, b.String())

	var off *progressLines // lines off: nothing, no panic
	off.interval(tpcc.Interval{})
	off.summary(&report.Report{})
}

// The command prints progress lines only on a terminal, unless
// --interval is given; with --json they go to standard error, so that the
// document stays whole. In simulated mode the intervals are virtual
// seconds.
func TestProgressQuietUnlessTerminal(t *testing.T) {
	skipUnderRace(t)
	base := []string{"tpcc", "--mode", "sim", "--scale", "small", "--duration", "1s", "--terminals", "2"}
	st, out, errs := enginelab(base...)
	require.Zero(t, st, errs)
	require.NotContains(t, out, "[Current]", "standard output is not a terminal")
	require.NotContains(t, out+errs, "[Summary]")

	st, out, errs = enginelab(append(base, "--interval", "250ms", "--steps")...)
	require.Zero(t, st, errs)
	require.Equal(t, 4, strings.Count(out, "[Current] new-order - Takes(s): 0.2,"), "four 250 ms intervals of virtual time:\n%s", out)
	require.Contains(t, out, "[Summary] new-order - Takes(s): 1.0, Count: ")
	require.Less(t, strings.Index(out, "tpmC: "), strings.Index(out, "enginelab tpcc (load+run+check)"), "the lines come before the report")
	require.Contains(t, out, "STEPS: each transaction's engine calls (latency in µs, modeled")
	require.Regexp(t, `new-order\s+read item\s+\d+\s+(9|10)\.\d\d`, out, "--steps: about ten items a New-Order")

	st, out, errs = enginelab(append(base, "--interval", "500ms", "--json")...)
	require.Zero(t, st, errs)
	var r report.Report
	require.NoError(t, json.Unmarshal([]byte(out), &r), "the JSON document is whole")
	require.Equal(t, 2, strings.Count(errs, "[Current] new-order"))
	require.Contains(t, errs, "[Summary] new-order")
	require.NotEmpty(t, r.Run.Types[0].Steps, "the JSON always has the steps")
	require.NotNil(t, r.Run.Timeline)
}
