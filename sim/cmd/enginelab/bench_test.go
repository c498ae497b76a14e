package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBench runs `enginelab bench` on the small population: every cell
// is a load and a run, the JSON has them all, and the table has a row
// per warehouse count and a column per terminal count.
func TestBench(t *testing.T) {
	args := []string{"bench", "--warehouses", "1", "--terminals", "1,2", "--duration", "300ms", "--runs", "2", "--quiet", "--", "--scale", "small"}
	var out, errb bytes.Buffer
	require.Equal(t, 0, run(append(args, "--warmup", "0s"), &out, &errb), errb.String())
	require.Contains(t, out.String(), "each cell a new load; tpmC, best of 2 (median)")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Regexp(t, `^\s*warehouses\s+load s\s+load rows/s\s+T1\s+T2$`, lines[len(lines)-2])
	require.Regexp(t, `^\s*1\s+[0-9.]+\s+[0-9,]+\s+[0-9,]+ \([0-9,]+\)\s+[0-9,]+ \([0-9,]+\)$`, lines[len(lines)-1])

	out.Reset()
	args[8] = "1" // one run
	require.Equal(t, "--runs", args[7])
	jsonArgs := append([]string{"bench", "--json"}, args[1:]...)
	require.Equal(t, 0, run(append(jsonArgs, "--warmup", "0s"), &out, &errb), errb.String())
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
	}
	require.Contains(t, res.Settings, "--scale")
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
		{[]string{"--", "--mode=sim"}, "--mode=sim after --: bench sets it"},
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
