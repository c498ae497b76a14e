package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/sim/experiment"
	"github.com/enginelab/enginelab/tpcc"
)

// experiment list names every experiment with its question; bad names and
// flags are refused before any work.
func TestExperimentCommand(t *testing.T) {
	st, out, _ := enginelab("experiment", "list")
	require.Zero(t, st)
	for _, name := range []string{"count-rewrite", "delivery-limit", "stocklevel-bound", "io-bound", "tier-policy", "hot-index", "wide-key", "waffle"} {
		require.Contains(t, out, name)
	}
	require.Contains(t, out, "Delivery reading every undelivered order versus LIMIT 1")

	st, out, _ = enginelab("experiment", "io-bound", "--help")
	require.Zero(t, st)
	for _, f := range []string{"warehouses", "scale", "terminals", "duration", "warmup", "seed", "pool", "remote-size", "cores", "io-capacity", "store-device", "network", "json", "html"} {
		require.Regexp(t, `(?m)^  -`+f+`( |$)`, out, "--%s documented", f)
	}
	require.Contains(t, out, "expects:")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"experiment", "nope"}, `unknown experiment: "nope"`},
		{[]string{"experiment", "io-bound", "--pool", "lots"}, "-pool"},
		{[]string{"experiment", "io-bound", "--scale", "huge"}, "want one of full, small"},
		{[]string{"experiment", "io-bound", "--terminals", "-1"}, "--terminals must not be negative"},
		{[]string{"experiment", "io-bound", "--io-capacity", "-1"}, "--io-capacity must not be negative"},
		{[]string{"experiment", "io-bound", "--io-capacity", "50"}, "io capacity 50"},
		{[]string{"experiment", "io-bound", "--store-device", "floppy"}, `store device "floppy"`},
		{[]string{"experiment", "io-bound", "stray"}, `unexpected argument "stray"`},
		{[]string{"experiment"}, "usage: enginelab experiment list"},
	} {
		st, out, errs := enginelab(tc.args...)
		require.Equal(t, 2, st, "%v: %s", tc.args, errs)
		require.Contains(t, out+errs, tc.want, "%v", tc.args)
	}
}

// An experiment runs through the command at small scale, briefly: its
// result carries the scale, in its parameters and every side's config,
// and its expectation holds.
func TestExperimentCommandRuns(t *testing.T) {
	skipUnderRace(t)
	page := filepath.Join(t.TempDir(), "e.html")
	st, out, errs := enginelab("experiment", "stocklevel-bound", "--scale", "small", "--duration", "50ms", "--warmup", "10ms", "--json", "--html", page)
	require.Zero(t, st, errs)
	var res experiment.Report
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.True(t, res.Held, res.Verdict)
	require.Equal(t, tpcc.SmallScale, res.Params.Scale)
	require.Len(t, res.Sides, 2)
	for _, r := range res.Sides {
		require.Equal(t, "small", r.Config.Scale)
		require.Equal(t, 0.05, r.Config.DurationSeconds)
		require.EqualValues(t, 10_000, r.Load.Rows[tpcc.Item])
	}
	// --html: the question, the verdict, the sides side by side and why.
	doc := readPage(t, page)
	has(t, doc, "<title>enginelab experiment stocklevel-bound</title>")
	has(t, doc, "<p>Question: "+res.Question+"</p>")
	has(t, doc, "The expectation held: ")
	has(t, doc, `data-chart="compare-tpmc"`)
	has(t, doc, "why: each type")
	has(t, doc, "rows examined")
}
