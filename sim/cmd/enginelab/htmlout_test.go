package main

import (
	"encoding/json"
	"fmt"
	stdhtml "html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/sim/report"
)

// readPage reads an HTML page the command wrote, and requires it whole.
func readPage(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	doc := string(b)
	require.True(t, strings.HasPrefix(doc, "<!DOCTYPE html>"))
	require.True(t, strings.HasSuffix(doc, "</html>\n"))
	require.False(t, strings.Contains(strings.ToLower(doc), "<script"))
	return stdhtml.UnescapeString(doc)
}

// has requires the page to hold s, without printing the page if not.
func has(t *testing.T, doc, s string) {
	t.Helper()
	if !strings.Contains(doc, s) {
		require.Fail(t, "the page lacks "+s)
	}
}

// --html writes the page beside the report (JSON here, so that the two
// can be compared): a histogram and a percentile curve per type, and the
// figures of the JSON. A file that cannot be written is status 1, naming
// it, after the report.
func TestTPCCHTML(t *testing.T) {
	skipUnderRace(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "r.html")
	st, out, errs := enginelab("tpcc", "--mode", "sim", "--scale", "small", "--duration", "500ms", "--terminals", "2", "--json", "--html", page)
	require.Zero(t, st, errs)
	var r report.Report
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	doc := readPage(t, page)
	has(t, doc, "<title>enginelab tpcc</title>")
	for _, ty := range r.Run.Types {
		has(t, doc, `data-chart="histogram-`+ty.Type+`"`)
		has(t, doc, `data-chart="percentiles-`+ty.Type+`"`)
		has(t, doc, fmt.Sprintf(`data-figure="count" data-side="0" data-type="%s">%d</td>`, ty.Type, ty.Count))
	}
	has(t, doc, fmt.Sprintf(`data-figure="tpmc" data-side="0">%.0f</td>`, r.Run.TpmC))

	bad := filepath.Join(dir, "no-such-dir", "r.html")
	st, out, errs = enginelab("tpcc", "--mode", "sim", "--scale", "small", "--duration", "100ms", "--terminals", "1", "--html", bad)
	require.Equal(t, 1, st)
	require.Contains(t, errs, "--html: open "+bad)
	require.Contains(t, out, "tpmC", "the report is printed all the same")
}

// --compare --html: the sides side by side, with the comparison table.
func TestTPCCCompareHTML(t *testing.T) {
	skipUnderRace(t)
	page := filepath.Join(t.TempDir(), "c.html")
	st, out, errs := enginelab("tpcc", "--mode", "sim", "--scale", "small", "--duration", "200ms", "--terminals", "1", "--org", "heap-rowptr",
		"--profile", "sysbench", "--compare", "count-rewrite", "--html", page)
	require.Zero(t, st, errs)
	require.Contains(t, out, "ratios are against count-rewrite=false")
	doc := readPage(t, page)
	has(t, doc, "<title>enginelab tpcc --compare count-rewrite</title>")
	for _, c := range []string{"compare-tpmc", "compare-p90", "timeline", "time-shares"} {
		has(t, doc, `data-chart="`+c+`"`)
	}
	has(t, doc, "<th>count-rewrite</th><th>false</th><th>true</th><th>ratio</th>")
}

// tier-replay --html: the hit ratios as a line per policy, and the table.
func TestTierReplayHTML(t *testing.T) {
	path := writeTrace(t)
	page := filepath.Join(t.TempDir(), "t.html")
	st, _, errs := tierReplay("--ristretto-runs", "1", "--policies", "lru,belady", "--html", page, path)
	require.Zero(t, st, errs)
	doc := readPage(t, page)
	has(t, doc, `data-chart="extra-0"`)
	has(t, doc, ">belady</text>") // a line per policy, named in the legend
	has(t, doc, "<td>lru</td>")
	has(t, doc, "hit ratios: 24 gets, 24 puts, 8 pages of 4096 bytes, inclusive mode")
}
