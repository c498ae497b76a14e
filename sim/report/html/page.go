package html

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"

	"github.com/enginelab/enginelab/sim/report"
)

// ErrNothing means a Page has nothing to show: no report, no comparison,
// no chart and no table.
var ErrNothing = errors.New("html: nothing to render (no report, no comparison, no chart, no table)")

// Page is what one document shows: a report or a comparison of several,
// and the caller's further charts and tables.
type Page struct {
	Title string
	// Intro are paragraphs under the title (an experiment's question,
	// expectation and verdict).
	Intro []string
	// Report is a single job's report; Comparison, several side by side
	// (it wins when both are set).
	Report     *report.Report
	Comparison *report.Comparison
	// Charts and Tables come after the reports' sections.
	Charts []LineChart
	Tables []Table
}

// Table is a plain table: a title, a head and rows of cells.
type Table struct {
	Title string
	Head  []string
	Rows  [][]string
}

// side is one report and its name on the page.
type side struct {
	Name string
	Rep  *report.Report
}

// sides are the page's reports: the comparison's, or the one report.
func (p *Page) sides() (setting string, out []side) {
	if c := p.Comparison; c != nil && len(c.Sides) > 0 {
		for i, r := range c.Sides {
			name := fmt.Sprintf("side %d", i+1)
			if i < len(c.Values) {
				name = c.Values[i]
			}
			out = append(out, side{name, r})
		}
		return c.Setting, out
	}
	if p.Report != nil {
		return "", []side{{"", p.Report}}
	}
	return "", nil
}

// cell is a table cell: its text and, for a report's figure, the
// figure's name, side and transaction type.
type cell struct {
	Text, Figure, Type string
	Side               int
}

// row is a table row.
type row []cell

// table is a table as the template draws it.
type table struct {
	Title string
	Head  []string
	Rows  []row
}

// section is a heading with its tables, charts and paragraphs.
type section struct {
	ID, Title string
	Paras     []string
	Tables    []table
	Charts    []chart
}

// view is what the template draws.
type view struct {
	Title    string
	Intro    []string
	Sections []section
	cmp      *report.Comparison
}

// Render writes p as one HTML document.
func Render(w io.Writer, p *Page) error {
	setting, sides := p.sides()
	if len(sides) == 0 && len(p.Charts) == 0 && len(p.Tables) == 0 {
		return ErrNothing
	}
	v := view{Title: p.Title, Intro: p.Intro, cmp: p.Comparison}
	if v.Title == "" {
		v.Title = "enginelab report"
	}
	if err := v.reports(setting, sides); err != nil {
		return err
	}
	if len(p.Charts) > 0 || len(p.Tables) > 0 {
		s := section{ID: "more", Title: "More"}
		if len(sides) == 0 {
			s.ID, s.Title = "results", "Results"
		}
		for i := range p.Charts {
			if err := add(&s.Charts, fmt.Sprintf("extra-%d", i), p.Charts[i].Title, &p.Charts[i]); err != nil {
				return err
			}
		}
		for _, t := range p.Tables {
			s.Tables = append(s.Tables, plainTable(t))
		}
		v.Sections = append(v.Sections, s)
	}
	if len(sides) > 0 {
		v.Sections = append(v.Sections, hostSection(sides), notesSection(sides))
	}
	return page.Execute(w, v)
}

// reports adds the sections of the reports, if any; a comparison's table
// goes with its charts.
func (v *view) reports(setting string, sides []side) error {
	if len(sides) == 0 {
		return nil
	}
	build := []func(string, []side) (section, error){summarySection, compareSection, timelineSection}
	for _, f := range build {
		s, err := f(setting, sides)
		if err != nil {
			return err
		}
		if s.ID == "compare" && v.cmp != nil && len(sides) > 1 {
			s.Tables = append(s.Tables, comparisonTable(v.cmp))
		}
		if len(s.Tables) > 0 || len(s.Charts) > 0 || len(s.Paras) > 0 {
			v.Sections = append(v.Sections, s)
		}
	}
	types, err := typeSections(sides)
	if err != nil {
		return err
	}
	v.Sections = append(v.Sections, types...)
	for _, f := range []func(string, []side) (section, error){costSection, timeSection, stepsSection, configSection} {
		s, err := f(setting, sides)
		if err != nil {
			return err
		}
		if len(s.Tables) > 0 || len(s.Charts) > 0 {
			v.Sections = append(v.Sections, s)
		}
	}
	return nil
}

func plainTable(t Table) table {
	out := table{Title: t.Title, Head: t.Head}
	for _, r := range t.Rows {
		var cells row
		for _, c := range r {
			cells = append(cells, cell{Text: c})
		}
		out.Rows = append(out.Rows, cells)
	}
	return out
}

func comparisonTable(c *report.Comparison) table {
	head, rows := c.Table()
	t := table{Title: "each figure with its ratio to the first side", Head: head}
	for _, r := range rows {
		var cells row
		for _, x := range r {
			cells = append(cells, cell{Text: x})
		}
		t.Rows = append(t.Rows, cells)
	}
	return t
}

// num prints a figure with prec decimals.
func num(v float64, prec int) string { return fmt.Sprintf("%.*f", prec, v) }

// configSection lists every setting of the config, a column per side, as
// the JSON report names them.
func configSection(setting string, sides []side) (section, error) {
	s := section{ID: "config", Title: "Configuration"}
	cols := make([]map[string]any, len(sides))
	keys := map[string]bool{}
	for i, sd := range sides {
		b, err := json.Marshal(sd.Rep.Config)
		if err != nil {
			return s, err
		}
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber() // sizes as written, not 8.388608e+06
		if err := d.Decode(&cols[i]); err != nil {
			return s, err
		}
		for k := range cols[i] {
			keys[k] = true
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range keys {
			if !yield(k) {
				return
			}
		}
	})
	t := table{Head: append([]string{"setting"}, sideNames(sides)...)}
	for _, k := range names {
		r := row{{Text: k}}
		for i := range sides {
			v, ok := cols[i][k]
			text := "-"
			if ok {
				text = fmt.Sprint(v)
			}
			r = append(r, cell{Text: text, Figure: "config." + k, Side: i})
		}
		t.Rows = append(t.Rows, r)
	}
	s.Tables = append(s.Tables, t)
	if sides[0].Rep.Sim != nil {
		m := &sides[0].Rep.Sim.Hardware
		s.Paras = append(s.Paras, fmt.Sprintf("Simulated hardware: %d cores (CPU profile %s), store %s, log %s, network %s.",
			m.Cores, m.CPUName, m.StoreName, m.LogName, m.NetworkName))
	}
	if setting != "" {
		s.Paras = append(s.Paras, "The sides differ in "+setting+"; everything else is the same, seed included.")
	}
	return s, nil
}

func sideNames(sides []side) []string {
	var out []string
	for _, sd := range sides {
		name := sd.Name
		if name == "" {
			name = "value"
		}
		out = append(out, name)
	}
	return out
}

// summarySection gives each side's headline figures and verdict.
func summarySection(_ string, sides []side) (section, error) {
	s := section{ID: "summary", Title: "Summary"}
	t := table{Head: []string{"side", "tpmC", "transactions/min", "measured s", "consistency"}}
	for i, sd := range sides {
		r := sd.Rep
		tpm, txm, secs := "-", "-", "-"
		if r.Run != nil {
			tpm, txm, secs = num(r.Run.TpmC, 0), num(r.Run.TxPerMinute, 0), num(r.Run.MeasuredSeconds, 1)
		}
		name := sd.Name
		if name == "" {
			name = r.Config.Mode + " mode"
		}
		t.Rows = append(t.Rows, row{{Text: name}, {Text: tpm, Figure: "tpmc", Side: i}, {Text: txm, Figure: "tx_per_min", Side: i},
			{Text: secs, Figure: "measured_s", Side: i}, {Text: r.Verdict(), Figure: "verdict", Side: i}})
	}
	s.Tables = append(s.Tables, t)
	for _, sd := range sides {
		for _, e := range sd.Rep.Errors {
			s.Paras = append(s.Paras, prefix(sd.Name)+"error: "+e)
		}
	}
	return s, nil
}

func prefix(name string) string {
	if name == "" {
		return ""
	}
	return name + ": "
}

// typeNames are the transaction types of the first side that ran.
func typeNames(sides []side) []string {
	for _, sd := range sides {
		if sd.Rep.Run != nil {
			var out []string
			for _, t := range sd.Rep.Run.Types {
				out = append(out, t.Type)
			}
			return out
		}
	}
	return nil
}

// typeOf is side r's type named name, nil if it has none.
func typeOf(r *report.Report, name string) *report.Type {
	if r.Run == nil {
		return nil
	}
	for i := range r.Run.Types {
		if r.Run.Types[i].Type == name {
			return &r.Run.Types[i]
		}
	}
	return nil
}

// compareSection draws the sides' bars next to each other: tpmC, and
// each type's p90 (and modeled mean).
func compareSection(_ string, sides []side) (section, error) {
	s := section{ID: "compare", Title: "Side by side"}
	if len(sides) < 2 {
		return s, nil
	}
	tpm := BarChart{Title: "tpmC by side", YLabel: "tpmC"}
	g := BarGroup{Name: "tpmC"}
	for _, sd := range sides {
		tpm.Categories = append(tpm.Categories, sd.Name)
		v := 0.0
		if sd.Rep.Run != nil {
			v = sd.Rep.Run.TpmC
		}
		g.Values = append(g.Values, v)
	}
	tpm.Groups = []BarGroup{g}
	if err := add(&s.Charts, "compare-tpmc", "tpmC of each side", &tpm); err != nil {
		return s, err
	}
	types := typeNames(sides)
	for _, fig := range []struct {
		name, title string
		get         func(t *report.Type) float64
	}{
		{"compare-p90", "p90 latency by type (ms)", func(t *report.Type) float64 { return t.LatencyMs.P90 }},
		{"compare-mean", "modeled mean response time by type (ms)", func(t *report.Type) float64 {
			if t.Time == nil {
				return 0
			}
			return t.Time.MeanMs
		}},
	} {
		bc := BarChart{Title: fig.title, YLabel: "ms", Categories: types}
		for _, sd := range sides {
			g := BarGroup{Name: sd.Name}
			for _, name := range types {
				v := 0.0
				if t := typeOf(sd.Rep, name); t != nil && t.Count > 0 {
					v = fig.get(t)
				}
				g.Values = append(g.Values, v)
			}
			bc.Groups = append(bc.Groups, g)
		}
		if err := add(&s.Charts, fig.name, fig.title+", a bar per side", &bc); err != nil {
			return s, err
		}
	}
	return s, nil
}

// timelineSection draws tpmC per interval, a line per side.
func timelineSection(_ string, sides []side) (section, error) {
	s := section{ID: "timeline", Title: "tpmC over time"}
	lc := LineChart{Title: "tpmC per interval", XLabel: "seconds into the measured interval", YLabel: "tpmC"}
	step := 0.0
	for _, sd := range sides {
		if sd.Rep.Run == nil || sd.Rep.Run.Timeline == nil {
			continue
		}
		tl := sd.Rep.Run.Timeline
		step = tl.IntervalSeconds
		ser := Series{Name: sd.Name}
		for _, p := range tl.Points {
			ser.X = append(ser.X, p.StartSeconds+tl.IntervalSeconds)
			ser.Y = append(ser.Y, p.TpmC)
		}
		lc.Series = append(lc.Series, ser)
	}
	clock := "wall"
	if sides[0].Rep.Sim != nil {
		clock = "virtual"
	}
	if err := add(&s.Charts, "timeline", fmt.Sprintf("New-Order transactions per minute in each interval of %s s (%s time), at the interval's end", num(step, 2), clock), &lc); err != nil {
		return s, err
	}
	return s, nil
}

// typeSections give each type its latency table, histogram and
// percentile curve.
func typeSections(sides []side) ([]section, error) {
	var out []section
	for _, name := range typeNames(sides) {
		s := section{ID: "type-" + name, Title: name}
		t := table{Head: []string{"side", "count", "mix %", "retries", "rollbacks", "p50 ms", "p90 ms", "p95 ms", "p99 ms", "max ms", "modeled mean ms"}}
		hist := LineChart{Title: name + ": latency histogram", XLabel: "latency (ms, log scale; each bin a tenth of a decade)", YLabel: "transactions", LogX: true}
		curve := LineChart{Title: name + ": latency by percentile", XLabel: "percentile", YLabel: "latency (ms, log scale)", LogY: true}
		const maxX = 5 // 99.999
		curve.xTicks = ninesTicks{maxX: maxX}
		for i, sd := range sides {
			ty := typeOf(sd.Rep, name)
			if ty == nil {
				continue
			}
			l := &ty.LatencyMs
			mean := "-"
			if ty.Time != nil {
				mean = num(ty.Time.MeanMs, 3)
			}
			f := func(fig string, text string) cell { return cell{Text: text, Figure: fig, Type: name, Side: i} }
			t.Rows = append(t.Rows, row{{Text: sd.Name}, f("count", fmt.Sprint(ty.Count)), f("mix_pct", num(ty.MixPct, 1)),
				f("retries", fmt.Sprint(ty.Retries)), f("rollbacks", fmt.Sprint(ty.Rollbacks)),
				f("p50", num(l.P50, 3)), f("p90", num(l.P90, 3)), f("p95", num(l.P95, 3)), f("p99", num(l.P99, 3)),
				f("max", num(l.Max, 3)), f("mean_ms", mean)})
			if d := ty.LatencyDist; d != nil {
				h := Series{Name: sd.Name}
				for _, b := range d.Buckets {
					h.X = append(h.X, b.LeMs)
					h.Y = append(h.Y, float64(b.Count))
				}
				hist.Series = append(hist.Series, h)
				c := Series{Name: sd.Name}
				for _, p := range d.Percentiles {
					c.X = append(c.X, ninesX(p.Pct, maxX))
					c.Y = append(c.Y, p.Ms)
				}
				curve.Series = append(curve.Series, c)
			}
		}
		s.Tables = append(s.Tables, t)
		if err := add(&s.Charts, "histogram-"+name, name+": how many transactions took how long, a line per side", &hist); err != nil {
			return nil, err
		}
		if err := add(&s.Charts, "percentiles-"+name, name+": the latency at each percentile, a line per side", &curve); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// categories are the bars of a per-type chart: a type, or a type and a
// side when there are several.
func categories(types []string, sides []side) (names []string, at func(k, i int) int) {
	if len(sides) == 1 {
		return types, func(k, _ int) int { return k }
	}
	for _, t := range types {
		for _, sd := range sides {
			names = append(names, t+" · "+sd.Name)
		}
	}
	return names, func(k, i int) int { return k*len(sides) + i }
}

// stacked is a stacked bar chart of parts of each type's per-transaction
// figures, for every side.
func stacked(title, ylabel string, sides []side, parts []string, get func(t *report.Type) []float64) BarChart {
	types := typeNames(sides)
	cats, at := categories(types, sides)
	bc := BarChart{Title: title, YLabel: ylabel, Categories: cats, Stacked: true}
	for _, p := range parts {
		bc.Groups = append(bc.Groups, BarGroup{Name: p, Values: make([]float64, len(cats))})
	}
	for k, name := range types {
		for i, sd := range sides {
			ty := typeOf(sd.Rep, name)
			if ty == nil || ty.Count == 0 {
				continue
			}
			for j, v := range get(ty) {
				bc.Groups[j].Values[at(k, i)] = v
			}
		}
	}
	return bc
}

// costSection draws the engine's cost per transaction, by type (and side).
func costSection(_ string, sides []side) (section, error) {
	s := section{ID: "cost", Title: "Engine cost"}
	charts := []struct {
		name  string
		chart BarChart
	}{
		{"cost-pages", stacked("page requests by where they were served", "pages per transaction", sides,
			[]string{"pool hits", "pool misses served by the tier", "pool misses served by the store"}, func(t *report.Type) []float64 {
				p := &t.PerTx
				return []float64{p.PoolHits, p.TierHits, max(0, p.PoolMisses-p.TierHits)}
			})},
		{"cost-rows", stacked("row and index work", "per transaction", sides,
			[]string{"node visits", "row fetches", "heap fetches", "rows examined", "index entries written"}, func(t *report.Type) []float64 {
				p := &t.PerTx
				return []float64{p.NodeVisits, p.RowFetches, p.HeapFetches, p.RowsExamined, p.EntriesWrite}
			})},
		{"cost-redo", stacked("redo", "bytes per transaction", sides, []string{"redo bytes"}, func(t *report.Type) []float64 {
			return []float64{t.PerTx.LogBytes}
		})},
		{"cost-locks", stacked("locks", "per transaction", sides, []string{"lock requests that waited", "lock requests granted at once"}, func(t *report.Type) []float64 {
			return []float64{t.PerTx.LockWaits, max(0, t.PerTx.LockRequests-t.PerTx.LockWaits)}
		})},
	}
	for _, c := range charts {
		if err := add(&s.Charts, c.name, c.chart.Title+", averages of the meters per completed transaction", &c.chart); err != nil {
			return s, err
		}
	}
	t := table{Head: []string{"type", "side", "node visits", "row fetches", "heap fetches", "rows examined", "pool hits", "pool misses", "tier hits", "store reads", "log bytes", "lock waits"}}
	for _, name := range typeNames(sides) {
		for i, sd := range sides {
			ty := typeOf(sd.Rep, name)
			if ty == nil || ty.Count == 0 {
				continue
			}
			p := &ty.PerTx
			f := func(fig string, v float64, prec int) cell {
				return cell{Text: num(v, prec), Figure: fig, Type: name, Side: i}
			}
			t.Rows = append(t.Rows, row{{Text: name}, {Text: sd.Name}, f("node_visits", p.NodeVisits, 1), f("row_fetches", p.RowFetches, 1),
				f("heap_fetches", p.HeapFetches, 1), f("rows_examined", p.RowsExamined, 1), f("pool_hits", p.PoolHits, 1),
				f("pool_misses", p.PoolMisses, 2), f("tier_hits", p.TierHits, 2), f("store_reads", p.StoreReads, 2),
				f("log_bytes", p.LogBytes, 0), f("lock_waits", p.LockWaits, 3)})
		}
	}
	s.Tables = append(s.Tables, t)
	return s, nil
}

// timeSection draws, in simulated mode, where each type's modeled mean
// went.
func timeSection(_ string, sides []side) (section, error) {
	s := section{ID: "time", Title: "Modeled time"}
	if sides[0].Rep.Sim == nil {
		return s, nil
	}
	parts := []string{"cpu", "buffer pool", "remote tier", "store", "log", "lock wait", "queueing"}
	bc := stacked("modeled mean response time by where it went", "ms", sides, parts, func(t *report.Type) []float64 {
		x := t.Time
		if x == nil {
			return make([]float64, len(parts))
		}
		m := x.MeanMs / 100
		return []float64{m * x.CPU, m * x.BufferPool, m * x.RemoteTier, m * x.Store, m * x.Log, m * x.LockWait, m * x.Queueing}
	})
	if err := add(&s.Charts, "time-shares", "the modeled mean of each type split as \"OLTP Through the Looking Glass\" splits it", &bc); err != nil {
		return s, err
	}
	t := table{Head: []string{"side", "cores busy %", "store busy %", "log busy %", "network busy %", "virtual s"}}
	for i, sd := range sides {
		if x := sd.Rep.Sim; x != nil {
			f := func(fig string, v float64) cell { return cell{Text: num(v, 1), Figure: fig, Side: i} }
			t.Rows = append(t.Rows, row{{Text: sd.Name}, f("cores_busy_pct", x.CoresBusyPct), f("store_busy_pct", x.StoreBusyPct),
				f("log_busy_pct", x.LogBusyPct), f("network_busy_pct", x.NetworkBusyPct), f("virtual_s", x.VirtualSeconds)})
		}
	}
	s.Tables = append(s.Tables, t)
	return s, nil
}

// stepsSection lists each type's steps, per side.
func stepsSection(_ string, sides []side) (section, error) {
	s := section{ID: "steps", Title: "Steps"}
	clock := "wall clock"
	if sides[0].Rep.Sim != nil {
		clock = "modeled"
	}
	s.Paras = append(s.Paras, "Latency in microseconds ("+clock+"); trimmed: the mean without the lowest and highest 5% of the calls (Analyze.pl's).")
	for _, name := range typeNames(sides) {
		for i, sd := range sides {
			ty := typeOf(sd.Rep, name)
			if ty == nil || len(ty.Steps) == 0 {
				continue
			}
			t := table{Title: strings.TrimSpace(name + " " + sd.Name),
				Head: []string{"step", "calls", "per tx", "mean µs", "min", "max", "p99", "trimmed", "nodes mean", "min", "max", "p99", "trimmed"}}
			for _, st := range ty.Steps {
				l, n := &st.LatencyUs, &st.NodeVisits
				f := func(fig, text string) cell {
					return cell{Text: text, Figure: "step." + st.Step + "." + fig, Type: name, Side: i}
				}
				t.Rows = append(t.Rows, row{{Text: st.Step}, f("count", fmt.Sprint(st.Count)), f("per_tx", num(st.PerTx, 2)),
					f("latency_mean", num(l.Mean, 1)), f("latency_min", num(l.Min, 1)), f("latency_max", num(l.Max, 1)),
					f("latency_p99", num(l.P99, 1)), f("latency_trimmed", num(l.TrimmedMean, 1)),
					f("nodes_mean", num(n.Mean, 1)), f("nodes_min", num(n.Min, 0)), f("nodes_max", num(n.Max, 0)),
					f("nodes_p99", num(n.P99, 0)), f("nodes_trimmed", num(n.TrimmedMean, 1))})
			}
			s.Tables = append(s.Tables, t)
		}
	}
	if len(s.Tables) == 0 {
		s.Paras = nil
	}
	return s, nil
}

// hostSection says where each side ran and its wall-clock figures.
func hostSection(sides []side) section {
	s := section{ID: "host", Title: "Host"}
	t := table{Head: []string{"side", "version", "Go", "OS/arch", "CPUs", "load s", "load rows/s", "run s", "tx/s", "cores busy", "virtual s per wall s", "peak RSS"}}
	for i, sd := range sides {
		h := &sd.Rep.Host
		f := func(fig, text string) cell { return cell{Text: text, Figure: "host." + fig, Side: i} }
		t.Rows = append(t.Rows, row{{Text: sd.Name}, {Text: sd.Rep.Version}, {Text: h.GoVersion}, {Text: h.OS + "/" + h.Arch},
			f("cpus", fmt.Sprint(h.CPUs)), f("load_s", num(h.LoadSeconds, 2)), f("load_rows_per_s", num(h.LoadRowsPerSecond, 0)),
			f("run_s", num(h.RunSeconds, 2)), f("tx_per_s", num(h.TxPerSecond, 0)),
			f("run_cores_busy", num(h.RunCoresBusy, 2)), f("virtual_per_wall", num(h.VirtualPerWall, 2)),
			{Text: report.FormatBytes(h.MaxRSSBytes)}})
	}
	s.Tables = append(s.Tables, t)
	return s
}

// notesSection repeats each report's notes once.
func notesSection(sides []side) section {
	s := section{ID: "notes", Title: "Notes"}
	for _, sd := range sides {
		for _, n := range sd.Rep.Notes {
			if !slices.Contains(s.Paras, n) {
				s.Paras = append(s.Paras, n)
			}
		}
	}
	return s
}

// style is the page's whole stylesheet: system fonts only, and print
// rules that keep a chart or a table row on one page.
const style = `
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 60em; padding: 0 1em; color: #111; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; border-bottom: 1px solid #ccc; margin-top: 2em; } h3 { font-size: 1em; }
table { border-collapse: collapse; margin: .5em 0 1em; font-size: .85em; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #ddd; padding: .15em .5em; text-align: right; } th { background: #f3f3f3; }
td:first-child, th:first-child { text-align: left; }
figure { margin: 1em 0; } figure svg { max-width: 100%; height: auto; display: block; }
figcaption { font-size: .85em; color: #444; }
nav a { margin-right: .8em; }
@media print { body { max-width: none; margin: 0; } nav { display: none; } figure, tr { break-inside: avoid; } h2 { break-after: avoid; } }
`

var page = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>` + style + `</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{range .Intro}}<p>{{.}}</p>
{{end}}<nav>{{range .Sections}}<a href="#{{.ID}}">{{.Title}}</a> {{end}}</nav>
{{range .Sections}}<section id="{{.ID}}">
<h2>{{.Title}}</h2>
{{range .Paras}}<p>{{.}}</p>
{{end}}{{range .Tables}}{{if .Title}}<h3>{{.Title}}</h3>
{{end}}<table>
<tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}{{if .Figure}}<td data-figure="{{.Figure}}" data-side="{{.Side}}"{{if .Type}} data-type="{{.Type}}"{{end}}>{{.Text}}</td>{{else}}<td>{{.Text}}</td>{{end}}{{end}}</tr>
{{end}}</table>
{{end}}{{range .Charts}}<figure class="chart" data-chart="{{.Name}}">
{{.SVG}}
<figcaption>{{.Caption}}</figcaption>
</figure>
{{end}}</section>
{{end}}</body>
</html>
`))
