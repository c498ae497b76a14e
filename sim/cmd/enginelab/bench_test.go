package main

import (
	"bytes"
	"encoding/json"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBench runs `enginelab bench` on the small population: every cell
// is a load and a run, and the JSON has them all.
func TestBench(t *testing.T) {
	args := []string{"bench", "--json", "--warehouses", "1", "--terminals", "1,2", "--duration", "300ms", "--quiet", "--", "--scale", "small", "--warmup", "0s"}
	var out, errb bytes.Buffer
	require.Equal(t, 0, run(args, &out, &errb), errb.String())
	var res benchResult
	require.NoError(t, json.Unmarshal(out.Bytes(), &res))
	require.Len(t, res.Cells, 2)
	for i, c := range res.Cells {
		require.Equal(t, 1, c.Warehouses)
		require.Equal(t, i+1, c.Terminals)
		require.Len(t, c.Runs, 1)
		require.Positive(t, c.BestTpmC)
		require.Equal(t, c.BestTpmC, c.MedianTpmC)
		require.Equal(t, c.Runs[0].TpmC, c.BestTpmC)
		require.Positive(t, c.LoadSeconds)
		require.Positive(t, c.LoadRowsPerSecond)
		if runtime.GOOS == "linux" {
			require.Positive(t, c.Runs[0].CoresBusy, "read with getrusage")
		}
	}
	require.Contains(t, res.Settings, "--scale")
	require.Contains(t, res.Settings, "--sync-commit=false", "the speed targets' configuration: commits do not wait for the sync")
	_, err := time.Parse(time.RFC3339, res.Started)
	require.NoError(t, err, "started: %q", res.Started)
}

// TestBenchTable: the best and the median of a cell's runs, the fastest
// load of a row, and the table's layout.
func TestBenchTable(t *testing.T) {
	cell := func(w, term int, tpm ...float64) benchCell {
		c := benchCell{Warehouses: w, Terminals: term}
		for i, v := range tpm {
			c.Runs = append(c.Runs, benchRun{TpmC: v, LoadSeconds: float64(3 + i + term), LoadRowsPerSecond: 1000 * float64(10-i-term)})
		}
		c.summarize()
		return c
	}
	c := cell(1, 1, 120000, 90000, 100000)
	require.Equal(t, 120000.0, c.BestTpmC)
	require.Equal(t, 100000.0, c.MedianTpmC)
	require.Equal(t, 4.0, c.LoadSeconds, "the fastest load")
	require.Equal(t, 9000.0, c.LoadRowsPerSecond, "the fastest load's rate")
	require.Equal(t, 95000.0, cell(1, 1, 90000, 100000).MedianTpmC, "an even count: the mean of the middle two")

	res := benchResult{Settings: []string{"--duration=10s"}, GoVersion: "go1", CPUs: 2, CPUModel: "Some CPU", Started: "2026-12-05T07:00:00Z",
		Cells: []benchCell{c, cell(1, 4, 1234567.4, 7, 8), cell(16, 1, 5, 6, 7), cell(16, 4, 9, 10, 11)}}
	var out bytes.Buffer
	require.NoError(t, res.writeTable(&out, []int{1, 16}, []int{1, 4}, 3))
	require.Equal(t, `enginelab bench: real mode, in memory, 2 CPUs (Some CPU), go1, started 2026-12-05T07:00:00Z; every run: --duration=10s
each cell a new load; tpmC, best of 3 (median)

  warehouses  load s  load rows/s                 T1             T4
           1     4.0        9,000  120,000 (100,000)  1,234,567 (8)
          16     4.0        9,000              7 (6)        11 (10)
`, out.String())
}

// TestBenchRefusesBeforeWork: bad lists, a setting bench owns, or a run
// flag enginelab tpcc refuses stop the command before anything loads.
func TestBenchRefusesBeforeWork(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--warehouses", "0"}, `--warehouses "0": want positive whole numbers`},
		{[]string{"--terminals", "4,x"}, `--terminals "4,x": want positive whole numbers`},
		{[]string{"--terminals", "4,4"}, `--terminals "4,4": 4 twice`},
		{[]string{"--runs", "0"}, "--runs 0: want at least 1"},
		{[]string{"--duration", "-1s"}, "--duration -1s: want a positive duration"},
		{[]string{"--", "--mode=sim"}, "--mode=sim after --: bench sets it (bench measures real mode)"},
		{[]string{"--", "--terminals", "4"}, "--terminals after --: bench sets it (use bench's own --terminals)"},
		{[]string{"--", "-dir=/tmp/x"}, "-dir=/tmp/x after --: bench sets it (bench measures an in-memory database"},
		{[]string{"--", "--org", "nosuch"}, ""},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		var out, errb bytes.Buffer
		require.Equal(t, 2, run(append([]string{"bench"}, c.args...), &out, &errb), "%v", c.args)
		require.Contains(t, errb.String(), c.want, "%v", c.args)
		require.NotContains(t, errb.String(), "bench: 1/", "%v: refused before the first load", c.args)
		require.Empty(t, out.String())
	}
}
