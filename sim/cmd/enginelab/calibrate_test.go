package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/sim/calibrate"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/tpcc"
)

// runCalibrate runs "enginelab calibrate" with args.
func runCalibrate(args ...string) (int, string, string) {
	var out, errs bytes.Buffer
	st := calibrateCmd(args, &out, &errs)
	return st, out.String(), errs.String()
}

// --help documents every flag.
func TestCalibrateHelp(t *testing.T) {
	st, out, _ := runCalibrate("--help")
	require.Zero(t, st)
	for _, f := range []string{"duration", "seed", "scale", "out", "name", "json", "quiet"} {
		require.Regexp(t, `(?m)^  -`+f+`( |$)`, out, "--%s documented", f)
	}
}

// Bad flags are refused with status 2 before any work, naming the flag.
func TestCalibrateBadFlags(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--duration", "0"}, "--duration 0s: want more than zero"},
		{[]string{"--duration", "-1s"}, "--duration -1s: want more than zero"},
		{[]string{"--duration", "soon"}, `invalid value "soon" for flag -duration`},
		{[]string{"--seed", "-1"}, `invalid value "-1" for flag -seed`},
		{[]string{"--scale", "huge"}, `invalid value "huge" for flag -scale: want one of full, small`},
		{[]string{"--name", ""}, `--name: sim: invalid configuration: profile name ""`},
		{[]string{"--name", "my cpu"}, `--name: sim: invalid configuration: profile name "my cpu"`},
		{[]string{"--out", dir}, "--out " + dir + ": is a directory"},
		{[]string{"--out", filepath.Join(dir, "no", "such.json")}, "--out " + filepath.Join(dir, "no", "such.json")},
		{[]string{"--out", filepath.Join(file, "x.json")}, "is not a directory"},
		{[]string{"--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		st, out, errs := runCalibrate(tc.args...)
		require.Equal(t, 2, st, "%v: %s", tc.args, errs)
		require.Contains(t, errs, tc.msg, tc.args)
		require.Empty(t, out, tc.args)
	}
}

// A short calibration samples every transaction type, fits a profile
// whose R² is a number in [0, 1] (its value depends on the machine), and
// writes a profile that simulated mode loads. Its two loads are at small
// scale, which the race detector can afford.
func TestCalibrateRuns(t *testing.T) {
	file := filepath.Join(t.TempDir(), "cpu.json")
	st, out, errs := runCalibrate("--duration", "200ms", "--json", "--quiet", "--out", file, "--name", "here", "--scale", "small")
	require.Zero(t, st, errs)
	require.Contains(t, errs, "enginelab tpcc --mode sim --profiles "+file+" --cpu here")
	var cal calibrate.Report
	require.NoError(t, json.Unmarshal([]byte(out), &cal))
	require.Len(t, cal.Runs, 18)
	require.Equal(t, tpcc.SmallScale, cal.Config.Scale)
	require.Len(t, cal.Fit.Types, int(tpcc.NumTxTypes))
	n := 0
	for i, ty := range cal.Fit.Types {
		require.Equal(t, tpcc.TxType(i).String(), ty.Type)
		require.Positive(t, ty.Count, ty.Type)
		n += ty.Count
	}
	require.Equal(t, cal.Fit.Samples, n)
	require.GreaterOrEqual(t, cal.Fit.R2, 0.0)
	require.LessOrEqual(t, cal.Fit.R2, 1.0)
	heap := false
	for _, e := range cal.Fit.Events {
		require.GreaterOrEqual(t, e.Cost, 0.0, e.Event)
		heap = heap || (e.Event == "heap_fetch" && e.Samples > 0)
	}
	require.True(t, heap, "the heap-rowptr runs count heap fetches")
	require.Contains(t, cal.Profile.Source, "calibrated on ")

	machine, err := hw.Spec{ProfilesFile: file, CPU: "here"}.Resolve()
	require.NoError(t, err)
	require.Equal(t, cal.Profile, machine.CPU)
}
