package html

import (
	"bytes"
	"encoding/json"
	"fmt"
	stdhtml "html"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/sim/report"
)

// The fixtures are reports the command wrote with --json (simulated, small
// scale): one job, and --compare count-rewrite on heap-rowptr with
// profile sysbench.
func loadReport(t *testing.T) *report.Report {
	t.Helper()
	b, err := os.ReadFile("testdata/report.json")
	require.NoError(t, err)
	var r report.Report
	require.NoError(t, json.Unmarshal(b, &r))
	require.NotNil(t, r.Run)
	return &r
}

func loadComparison(t *testing.T) *report.Comparison {
	t.Helper()
	b, err := os.ReadFile("testdata/compare.json")
	require.NoError(t, err)
	var c report.Comparison
	require.NoError(t, json.Unmarshal(b, &c))
	require.Len(t, c.Sides, 2)
	return &c
}

func render(t *testing.T, p *Page) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, Render(&b, p))
	return b.String()
}

// contains requires doc, its character references resolved, to hold s
// (without printing the whole page when it does not).
func contains(t *testing.T, doc, s string, msg ...any) {
	t.Helper()
	if !strings.Contains(stdhtml.UnescapeString(doc), s) {
		require.Fail(t, "the page lacks "+s, msg...)
	}
}

// charts returns the names of the page's charts whose figure holds an
// SVG with a size.
func charts(t *testing.T, doc string) []string {
	t.Helper()
	re := regexp.MustCompile(`(?s)<figure class="chart" data-chart="([^"]+)">\s*<svg width="([0-9.]+)pt" height="([0-9.]+)pt"`)
	var out []string
	for _, m := range re.FindAllStringSubmatch(doc, -1) {
		require.NotEqual(t, "0", m[2], m[1])
		require.NotEqual(t, "0", m[3], m[1])
		out = append(out, m[1])
	}
	require.Equal(t, strings.Count(doc, `<figure class="chart"`), len(out), "every figure holds an SVG")
	return out
}

// figure returns the text of the cell holding figure on side (and type).
func figure(t *testing.T, doc, fig string, side int, typ string) string {
	t.Helper()
	attrs := fmt.Sprintf(`data-figure="%s" data-side="%d"`, regexp.QuoteMeta(fig), side)
	if typ != "" {
		attrs += fmt.Sprintf(` data-type="%s"`, regexp.QuoteMeta(typ))
	}
	m := regexp.MustCompile(`<td `+attrs+`>([^<]*)</td>`).FindAllStringSubmatch(doc, -1)
	require.Len(t, m, 1, "%s side %d %s", fig, side, typ)
	return stdhtml.UnescapeString(m[0][1])
}

// selfContained requires that nothing in doc makes a browser fetch: no
// script, stylesheet link, image, frame, font or import, and no URL but
// the SVG namespaces (names, never fetched) and the page's own anchors.
func selfContained(t *testing.T, doc string) {
	t.Helper()
	lower := strings.ToLower(doc)
	stripped := strings.NewReplacer(`xmlns="http://www.w3.org/2000/svg"`, "", `xmlns:xlink="http://www.w3.org/1999/xlink"`, "").Replace(lower)
	for _, bad := range []string{"<script", "<link", "<img", "<iframe", "<object", "<embed", "@import", "@font-face", "url(", " src=",
		"xlink:href", "http://", "https://", "//fonts"} {
		require.False(t, strings.Contains(stripped, bad), "the page holds %q", bad)
	}
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(doc, -1) {
		require.True(t, strings.HasPrefix(m[1], "#"), "only anchors in the page: %s", m[1])
	}
}

// One report: every section, a histogram and a percentile curve per
// type, the figures equal to the report's, nothing fetched.
func TestRenderReport(t *testing.T) {
	r := loadReport(t)
	doc := render(t, &Page{Title: "enginelab tpcc", Report: r})
	require.True(t, strings.HasPrefix(doc, "<!DOCTYPE html>"))
	contains(t, doc, "<style>")
	selfContained(t, doc)
	got := charts(t, doc)
	want := []string{"timeline"}
	for _, ty := range r.Run.Types {
		want = append(want, "histogram-"+ty.Type, "percentiles-"+ty.Type)
	}
	want = append(want, "cost-pages", "cost-rows", "cost-redo", "cost-locks", "time-shares")
	require.Equal(t, want, got, "the charts, in order; no comparison charts for one report")
	for _, id := range []string{"summary", "timeline", "cost", "time", "steps", "config", "host", "notes"} {
		contains(t, doc, `<section id="`+id+`">`)
	}
	require.False(t, strings.Contains(doc, `<section id="compare">`))

	// The figures are the report's, as the text report prints them.
	require.Equal(t, fmt.Sprintf("%.0f", r.Run.TpmC), figure(t, doc, "tpmc", 0, ""))
	require.Equal(t, r.Verdict(), figure(t, doc, "verdict", 0, ""))
	require.Equal(t, "consistent", r.Verdict())
	for _, ty := range r.Run.Types {
		require.Equal(t, fmt.Sprint(ty.Count), figure(t, doc, "count", 0, ty.Type))
		require.Equal(t, fmt.Sprintf("%.3f", ty.LatencyMs.P90), figure(t, doc, "p90", 0, ty.Type))
		require.Equal(t, fmt.Sprintf("%.3f", ty.LatencyMs.P99), figure(t, doc, "p99", 0, ty.Type))
		require.Equal(t, fmt.Sprintf("%.3f", ty.Time.MeanMs), figure(t, doc, "mean_ms", 0, ty.Type))
		require.Equal(t, fmt.Sprintf("%.1f", ty.PerTx.NodeVisits), figure(t, doc, "node_visits", 0, ty.Type))
		require.NotEmpty(t, ty.Steps, ty.Type)
		for _, st := range ty.Steps {
			require.Equal(t, fmt.Sprint(st.Count), figure(t, doc, "step."+st.Step+".count", 0, ty.Type))
			require.Equal(t, fmt.Sprintf("%.1f", st.LatencyUs.TrimmedMean), figure(t, doc, "step."+st.Step+".latency_trimmed", 0, ty.Type))
			require.Equal(t, fmt.Sprintf("%.0f", st.NodeVisits.Max), figure(t, doc, "step."+st.Step+".nodes_max", 0, ty.Type))
		}
	}
	require.Equal(t, fmt.Sprintf("%.1f", r.Sim.LogBusyPct), figure(t, doc, "log_busy_pct", 0, ""))
	require.Equal(t, fmt.Sprint(r.Config.Terminals), figure(t, doc, "config.terminals", 0, ""))
	require.Equal(t, fmt.Sprint(r.Host.CPUs), figure(t, doc, "host.cpus", 0, ""))
	require.Equal(t, fmt.Sprintf("%.2f", r.Host.RunCoresBusy), figure(t, doc, "host.run_cores_busy", 0, ""))
	for _, n := range r.Notes {
		contains(t, doc, "<p>"+n+"</p>")
	}

	// Rendering is deterministic.
	require.True(t, doc == render(t, &Page{Title: "enginelab tpcc", Report: r}), "rendering twice gives one page")
}

// A comparison: the sides' bars next to each other, the table of figures
// with ratios (the text report's cells), a line per side in the charts.
func TestRenderComparison(t *testing.T) {
	c := loadComparison(t)
	doc := render(t, &Page{Title: "enginelab tpcc --compare " + c.Setting, Comparison: c})
	selfContained(t, doc)
	got := charts(t, doc)
	require.Subset(t, got, []string{"compare-tpmc", "compare-p90", "compare-mean", "timeline", "histogram-payment", "percentiles-payment", "time-shares"})
	head, rows := c.Table()
	for _, h := range head {
		contains(t, doc, "<th>"+h+"</th>")
	}
	for _, r := range rows {
		var cells []string
		for _, x := range r {
			cells = append(cells, "<td>"+x+"</td>")
		}
		contains(t, doc, strings.Join(cells, ""), "the comparison table's row %s", r[0])
	}
	for i, s := range c.Sides {
		require.Equal(t, fmt.Sprintf("%.0f", s.Run.TpmC), figure(t, doc, "tpmc", i, ""))
		for _, ty := range s.Run.Types {
			require.Equal(t, fmt.Sprint(ty.Count), figure(t, doc, "count", i, ty.Type))
			require.Equal(t, fmt.Sprintf("%.1f", ty.PerTx.RowFetches), figure(t, doc, "row_fetches", i, ty.Type))
		}
	}
	// A line per side: each side's name is in the legend of the timeline.
	tl := regexp.MustCompile(`(?s)data-chart="timeline">(.*?)</figure>`).FindStringSubmatch(doc)
	require.NotNil(t, tl)
	for _, v := range c.Values {
		contains(t, tl[1], ">"+v+"</text>")
	}
	// The ratio of the tpmC row.
	require.Equal(t, "tpmC", rows[0][0])
	require.Equal(t, fmt.Sprintf("%.2f", c.Sides[1].Run.TpmC/c.Sides[0].Run.TpmC), rows[0][3])
}

// A page of charts and tables alone (tier-replay's); an empty chart is
// left out; a page with nothing is refused.
func TestRenderExtras(t *testing.T) {
	require.ErrorIs(t, Render(&bytes.Buffer{}, &Page{}), ErrNothing)
	doc := render(t, &Page{Title: "x", Intro: []string{"a <b> & c"},
		Charts: []LineChart{
			{Title: "hit ratio", LogX: true, Series: []Series{{Name: "lru", X: []float64{1, 2, 4}, Y: []float64{10, 20, 40}},
				{Name: "belady", X: []float64{1, 2, 4}, Y: []float64{30, 50, 70}}}},
			{Title: "empty", LogX: true, Series: []Series{{Name: "none", X: []float64{0, -1}, Y: []float64{1, 2}}}},
		},
		Tables: []Table{{Title: "t", Head: []string{"policy", "hits"}, Rows: [][]string{{"lru", "12"}}}}})
	selfContained(t, doc)
	require.Equal(t, []string{"extra-0"}, charts(t, doc))
	require.Contains(t, doc, "<p>a &lt;b&gt; &amp; c</p>", "text is escaped")
	contains(t, doc, "<td>lru</td><td>12</td>")
	contains(t, doc, `<section id="results">`)
	require.False(t, strings.Contains(doc, `<section id="host">`))
}

// A log axis over a single value (one latency bin, one size) draws
// around it instead of failing.
func TestLogAxisOneValue(t *testing.T) {
	for _, lc := range []LineChart{
		{Title: "x", LogX: true, Series: []Series{{Name: "a", X: []float64{0.02}, Y: []float64{3}}}},
		{Title: "y", LogY: true, Series: []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{0.03, 0.03}}}},
	} {
		s, err := lc.Render()
		require.NoError(t, err, lc.Title)
		require.True(t, strings.HasPrefix(string(s), "<svg"))
	}
}

func TestNinesTicks(t *testing.T) {
	ts := ninesTicks{maxX: 5}.Ticks(0, 5)
	var labels []string
	for _, x := range ts {
		labels = append(labels, x.Label)
	}
	require.Equal(t, []string{"0", "90", "99", "99.9", "99.99", "max"}, labels)
	require.Equal(t, 5.0, ninesX(100, 5))
	require.InDelta(t, 2, ninesX(99, 5), 1e-9)
	require.Equal(t, 0.0, ninesX(0, 5))
}
