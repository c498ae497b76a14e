package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/sim/experiment"
	"github.com/enginelab/enginelab/sim/report/html"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files under testdata/ with what the command prints now")

// A sweep is deterministic: the same seed and settings print the same
// table, byte for byte, on any machine (testdata/sweep.golden; after a
// change to the engine or its prices, go test ./sim/cmd/enginelab/ -run
// TestSweepGolden -rewrite writes it anew). Its JSON has the same
// figures, and its HTML page a line chart per side, their ratios and the
// headline.
func TestSweepGolden(t *testing.T) {
	skipUnderRace(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "sweep.html")
	st, doc, errs := enginelab("experiment", "sweep", "--base", "stocklevel-bound", "--vary", "terminals=1,2", "--scale", "small",
		"--duration", "50ms", "--warmup", "10ms", "--json", "--html", page)
	require.Zero(t, st, errs)
	var s experiment.SweepReport
	require.NoError(t, json.Unmarshal([]byte(doc), &s))
	require.Equal(t, []string{"1", "2"}, s.Values)
	require.Len(t, s.Points, 2)
	for _, p := range s.Points {
		require.Len(t, p.TpmC, 2)
		require.True(t, p.Held, p.Verdict)
	}
	// The table the command prints without --json.
	var table bytes.Buffer
	require.NoError(t, s.WriteTable(&table))
	out := table.String()
	golden := filepath.Join("testdata", "sweep.golden")
	if *rewrite {
		require.NoError(t, os.WriteFile(golden, []byte(out), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), out)

	b, err := os.ReadFile(page)
	require.NoError(t, err)
	for _, c := range []string{`data-chart="extra-0"`, `data-chart="extra-1"`, `data-chart="extra-2"`} {
		require.Contains(t, string(b), c)
	}
	require.Contains(t, string(b), "<td>"+fmt.Sprintf("%.0f", s.Points[1].TpmC[0])+"</td>")
}

// Bad sweeps are refused before any load, with status 2.
func TestSweepBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--vary", "terminals=1,2"}, "--base is required"},
		{[]string{"--base", "nope", "--vary", "terminals=1,2"}, `unknown experiment: "nope"`},
		{[]string{"--base", "stocklevel-bound"}, "--vary is required"},
		{[]string{"--base", "stocklevel-bound", "--vary", "json=true,false"}, "not a setting a sweep varies"},
		{[]string{"--base", "stocklevel-bound", "--vary", "terminals=4"}, "want at least two values"},
		{[]string{"--base", "stocklevel-bound", "--vary", "terminals=4,4"}, "4 given twice"},
		{[]string{"--base", "stocklevel-bound", "--vary", "terminals=1,-2"}, "--vary terminals=-2: --terminals must not be negative"},
		{[]string{"--base", "stocklevel-bound", "--vary", "pool=1MiB,lots"}, "-pool"},
		{[]string{"--base", "stocklevel-bound", "--vary", "store-device=nvme-ssd,floppy"}, `store device "floppy"`},
		{[]string{"--base", "stocklevel-bound", "--vary", "terminals=1,2", "stray"}, `unexpected argument "stray"`},
	} {
		st, out, errs := enginelab(append([]string{"experiment", "sweep"}, tc.args...)...)
		require.Equal(t, 2, st, "%v: %s", tc.args, errs)
		require.Contains(t, out+errs, tc.want, "%v", tc.args)
	}
	st, out, _ := enginelab("experiment", "sweep", "--help")
	require.Zero(t, st)
	for _, f := range []string{"base", "vary", "html", "json", "scale", "duration"} {
		require.Regexp(t, `(?m)^  -`+f+`( |$)`, out, "--%s documented", f)
	}
}

func TestWithoutFlags(t *testing.T) {
	require.Equal(t, []string{"--scale", "small", "--json"},
		withoutFlags([]string{"--base", "x", "--scale", "small", "--vary=terminals=1,2", "--json"}, "base", "vary"))
	require.Equal(t, []string{"-duration=1s"}, withoutFlags([]string{"-base=x", "-duration=1s", "-vary", "a=1,2"}, "base", "vary"))
}

// The X axis of a sweep's charts: numbers, durations, sizes, or the
// values in order.
func TestSweepX(t *testing.T) {
	xs, unit := sweepX([]string{"1", "2", "8"})
	require.Equal(t, []float64{1, 2, 8}, xs)
	require.Empty(t, unit)
	xs, unit = sweepX([]string{"500ms", "2s"})
	require.Equal(t, []float64{0.5, 2}, xs)
	require.Equal(t, " (s)", unit)
	xs, unit = sweepX([]string{"16MiB", "1GiB"})
	require.Equal(t, []float64{16, 1024}, xs)
	require.Equal(t, " (MiB)", unit)
	xs, unit = sweepX([]string{"nvme-ssd", "disk-2009"})
	require.Equal(t, []float64{1, 2}, xs)
	require.Contains(t, unit, "nvme-ssd, disk-2009")
	var b bytes.Buffer
	s := &experiment.SweepReport{Base: "b", Setting: "pool", Values: []string{"16MiB", "1GiB"}, Labels: []string{"a", "b"},
		Points: []experiment.SweepPoint{{Value: "16MiB", TpmC: []float64{100, 50}, Held: true}, {Value: "1GiB", TpmC: []float64{200, 200}}}}
	require.NoError(t, html.Render(&b, sweepPage(s)))
	require.Contains(t, b.String(), "<td>50</td><td>0.50</td>")
	require.Contains(t, b.String(), "NO: ")
}
