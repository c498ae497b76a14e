package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/enginelab/enginelab/sim/experiment"
	"github.com/enginelab/enginelab/sim/replay"
	"github.com/enginelab/enginelab/sim/report"
	"github.com/enginelab/enginelab/sim/report/html"
)

// writeHTML writes p to the file path (--html) and returns the exit
// status: 1 if it could not (the error names the file).
func writeHTML(stderr io.Writer, path string, p *html.Page) int {
	f, err := os.Create(path)
	if err == nil {
		err = errors.Join(html.Render(f, p), f.Close())
		if err != nil {
			err = fmt.Errorf("%s: %w", path, err)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "enginelab: --html: %v\n", err)
		return 1
	}
	return 0
}

// experimentPage is an experiment's result as a page: its question,
// expectation, verdict and headline above the sides, the explanations
// and the replay (if any) after.
func experimentPage(r *experiment.Report) *html.Page {
	p := &html.Page{Title: "enginelab experiment " + r.Name,
		Comparison: &report.Comparison{Setting: "side", Values: r.Labels, Sides: r.Sides}}
	pr := &r.Params
	held := "held"
	if !r.Held {
		held = "did NOT hold"
	}
	h := r.Headline
	p.Intro = []string{"Question: " + r.Question, "Expects: " + r.Expect,
		fmt.Sprintf("Simulated: %d warehouse(s)%s, %d terminals, %v measured after %v, seed %d.", pr.Warehouses,
			report.ScaleNote(pr.Scale.String()), pr.Terminals, pr.Duration, pr.Warmup, pr.Seed),
		fmt.Sprintf("Headline: %s %.4g → %.4g (ratio %.3f).", h.Figure, h.Base, h.Side, h.Ratio),
		fmt.Sprintf("The expectation %s: %s", held, r.Verdict)}
	if r.Context != "" {
		p.Intro = append(p.Intro, "Context (published, not this engine; the models are not tuned to it): "+r.Context)
	}
	if len(r.Explanations) > 0 {
		t := html.Table{Title: "why: each type's modeled mean, the shares that moved, and the counters that changed most (per transaction, with the time each accounts for at its unqueued price)",
			Head: []string{"side", "against", "type", "base ms", "side ms", "time shares that moved", "counters"}}
		for _, x := range r.Explanations {
			if len(x.Shares) == 0 && len(x.Counters) == 0 {
				continue
			}
			var shares, counters []string
			for _, s := range x.Shares {
				shares = append(shares, fmt.Sprintf("%s %+.3f ms", s.Share, s.DeltaMs))
			}
			for _, c := range x.Counters {
				counters = append(counters, fmt.Sprintf("%s %.2f → %.2f (%+.4f ms)", c.Counter, c.Base, c.Side, c.AccountsMs))
			}
			t.Rows = append(t.Rows, []string{x.Side, x.Base, x.Type, fmt.Sprintf("%.3f", x.BaseMs), fmt.Sprintf("%.3f", x.SideMs),
				strings.Join(shares, "; "), strings.Join(counters, "; ")})
		}
		p.Tables = append(p.Tables, t)
	}
	if r.Replay != nil {
		c, t := replayParts(r.Replay)
		p.Charts, p.Tables = append(p.Charts, c), append(p.Tables, t)
	}
	return p
}

// replayParts are a replay's hit ratios as a chart (a line per policy
// over the tier's size) and a table.
func replayParts(r *replay.Report) (html.LineChart, html.Table) {
	c := html.LineChart{Title: "tier hit ratio by size", XLabel: "tier size (MiB, log scale)", YLabel: "hit ratio (%)", LogX: true}
	t := html.Table{Title: fmt.Sprintf("hit ratios: %d gets, %d puts, %d pages of %d bytes, %s mode", r.Gets, r.Puts, r.Pages, r.PageSize, r.Mode),
		Head: []string{"policy", "size", "hits", "hit ratio %", "min %", "max %", "runs"}}
	for _, pol := range r.Config.Policies {
		s := html.Series{Name: pol}
		for _, res := range r.Results {
			if res.Policy != pol {
				continue
			}
			s.X = append(s.X, float64(res.SizeBytes)/(1<<20))
			s.Y = append(s.Y, 100*res.HitRatio)
			t.Rows = append(t.Rows, []string{pol, report.FormatBytes(res.SizeBytes), fmt.Sprint(res.Hits),
				fmt.Sprintf("%.2f", 100*res.HitRatio), fmt.Sprintf("%.2f", 100*res.HitRatioMin), fmt.Sprintf("%.2f", 100*res.HitRatioMax),
				fmt.Sprint(res.Runs)})
		}
		c.Series = append(c.Series, s)
	}
	return c, t
}

// sortKeysPage is the sort-keys experiment as a page: per query, the
// modeled time over N, a line per collation and key format, and every
// case in a table.
func sortKeysPage(r *experiment.SortKeysReport) *html.Page {
	held := "held"
	if !r.Held {
		held = "did NOT hold"
	}
	p := &html.Page{Title: "enginelab experiment " + r.Name,
		Intro: []string{"Question: " + r.Question, "Expects: " + r.Expect,
			fmt.Sprintf("%d rows; %s.", r.Rows, r.Machine), fmt.Sprintf("The expectation %s: %s", held, r.Verdict)}}
	var queries []string
	lines := map[string]map[string]*html.Series{}
	var order []string
	t := html.Table{Title: "every case", Head: []string{"query", "N", "collation", "format", "mode", "packed", "priority queue",
		"sort length", "runs", "merge passes", "key bytes", "compares", "compare bytes", "temp bytes", "modeled ms", "real median ms"}}
	for _, c := range r.Cases {
		if lines[c.Query] == nil {
			lines[c.Query] = map[string]*html.Series{}
			queries = append(queries, c.Query)
		}
		name := c.Collation + " " + c.Format
		s := lines[c.Query][name]
		if s == nil {
			s = &html.Series{Name: name}
			lines[c.Query][name] = s
			order = append(order, c.Query+"\x00"+name)
		}
		s.X = append(s.X, float64(c.N))
		s.Y = append(s.Y, c.ModeledMs)
		median := "-"
		if c.RealMedianMs > 0 {
			median = fmt.Sprintf("%.2f", c.RealMedianMs)
		}
		t.Rows = append(t.Rows, []string{c.Query, fmt.Sprint(c.N), c.Collation, c.Format, c.Mode, fmt.Sprint(c.PackedKeys),
			fmt.Sprint(c.PriorityQueue), fmt.Sprint(c.SortLength), fmt.Sprint(c.Runs), fmt.Sprint(c.MergePasses), fmt.Sprint(c.KeyBytes),
			fmt.Sprint(c.Compares), fmt.Sprint(c.CompareBytes), fmt.Sprint(c.TempBytes), fmt.Sprintf("%.3f", c.ModeledMs), median})
	}
	for _, q := range queries {
		c := html.LineChart{Title: q + ": modeled time by N", XLabel: "N of VARCHAR(N) (log scale)", YLabel: "ms", LogX: true}
		for _, key := range order {
			if qq, name, _ := strings.Cut(key, "\x00"); qq == q {
				c.Series = append(c.Series, *lines[q][name])
			}
		}
		p.Charts = append(p.Charts, c)
	}
	p.Tables = []html.Table{t}
	return p
}
