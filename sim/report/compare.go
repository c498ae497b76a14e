package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/dustin/go-humanize"
)

// FormatBytes prints a byte count in binary units (64 MiB).
func FormatBytes(n int64) string { return humanize.IBytes(uint64(max(0, n))) }

// Comparison is the same workload, same seed, run under several engine or
// workload settings, one after another: Sides[i] ran with Setting =
// Values[i]. Ratios are against the first side.
type Comparison struct {
	Setting string    `json:"setting"`
	Values  []string  `json:"values"`
	Sides   []*Report `json:"sides"`
	// Title, if set, replaces the table's first line (experiments).
	Title string `json:"-"`
}

// comparedRow is one line of the side-by-side table: a figure of each side.
type comparedRow struct {
	name string
	get  func(*Report) (float64, bool)
	prec int
}

func runFigure(f func(*Run) float64) func(*Report) (float64, bool) {
	return func(r *Report) (float64, bool) {
		if r.Run == nil {
			return 0, false
		}
		return f(r.Run), true
	}
}

func typeFigure(k int, f func(*Type) float64) func(*Report) (float64, bool) {
	return func(r *Report) (float64, bool) {
		if r.Run == nil || k >= len(r.Run.Types) || r.Run.Types[k].Count == 0 {
			return 0, false
		}
		return f(&r.Run.Types[k]), true
	}
}

func simFigure(f func(*Sim) float64) func(*Report) (float64, bool) {
	return func(r *Report) (float64, bool) {
		if r.Sim == nil || r.Run == nil {
			return 0, false
		}
		return f(r.Sim), true
	}
}

func (c *Comparison) rows() []comparedRow {
	rows := []comparedRow{
		{"tpmC", runFigure(func(r *Run) float64 { return r.TpmC }), 0},
		{"transactions/min", runFigure(func(r *Run) float64 { return r.TxPerMinute }), 0},
		{"load rows/s", func(r *Report) (float64, bool) {
			if r.Load == nil || r.Host.LoadRowsPerSecond == 0 {
				return 0, false
			}
			return r.Host.LoadRowsPerSecond, true // wall clock, both modes
		}, 0},
		{"pages", func(r *Report) (float64, bool) { return float64(r.TotalPages()), len(r.Space) > 0 }, 0},
	}
	if len(c.Sides) == 0 || c.Sides[0].Run == nil {
		return rows
	}
	for k, t := range c.Sides[0].Run.Types {
		name := t.Type
		rows = append(rows,
			comparedRow{name + " p90 ms", typeFigure(k, func(t *Type) float64 { return t.LatencyMs.P90 }), 3},
			comparedRow{name + " node visits/tx", typeFigure(k, func(t *Type) float64 { return t.PerTx.NodeVisits }), 1},
			comparedRow{name + " row fetches/tx", typeFigure(k, func(t *Type) float64 { return t.PerTx.RowFetches }), 1},
			comparedRow{name + " rows examined/tx", typeFigure(k, func(t *Type) float64 { return t.PerTx.RowsExamined }), 1},
			comparedRow{name + " log bytes/tx", typeFigure(k, func(t *Type) float64 { return t.PerTx.LogBytes }), 0},
		)
		if t.Time != nil {
			// Simulated: the modeled mean and its largest shares.
			rows = append(rows,
				comparedRow{name + " mean ms (modeled)", typeFigure(k, func(t *Type) float64 { return t.Time.MeanMs }), 3},
				comparedRow{name + " store+queueing %", typeFigure(k, func(t *Type) float64 { return t.Time.Store + t.Time.Queueing }), 1},
				comparedRow{name + " lock wait %", typeFigure(k, func(t *Type) float64 { return t.Time.LockWait }), 1},
			)
		}
	}
	// A versioned heap's updates, for the types that made any on some
	// side: HOT and non-HOT, and the index entries written with them.
	for k, t := range c.Sides[0].Run.Types {
		if !c.anyUpdates(k) {
			continue
		}
		name := t.Type
		rows = append(rows,
			comparedRow{name + " HOT updates/tx", typeFigure(k, func(t *Type) float64 { return t.PerTx.HOTUpdates }), 2},
			comparedRow{name + " non-HOT updates/tx", typeFigure(k, func(t *Type) float64 { return t.PerTx.NonHOTUpdates }), 2},
			comparedRow{name + " index entries written/tx", typeFigure(k, func(t *Type) float64 { return t.PerTx.EntriesWrite }), 2},
		)
	}
	for _, s := range c.Sides {
		if s.Background != nil && s.Background.DoublewritePages > 0 {
			rows = append(rows, comparedRow{"doublewrite pages (background)", func(r *Report) (float64, bool) {
				if r.Background == nil {
					return 0, false
				}
				return float64(r.Background.DoublewritePages), true
			}, 0})
			break
		}
	}
	if c.Sides[0].Sim != nil {
		rows = append(rows,
			comparedRow{"store busy %", simFigure(func(s *Sim) float64 { return s.StoreBusyPct }), 1},
			comparedRow{"network busy %", simFigure(func(s *Sim) float64 { return s.NetworkBusyPct }), 1},
		)
	}
	return rows
}

// anyUpdates says some side's transactions of type k made versioned heap
// updates, HOT or not.
func (c *Comparison) anyUpdates(k int) bool {
	for _, s := range c.Sides {
		if s.Run != nil && k < len(s.Run.Types) {
			if p := s.Run.Types[k].PerTx; p.HOTUpdates+p.NonHOTUpdates > 0 {
				return true
			}
		}
	}
	return false
}

// Passed says every side passed.
func (c *Comparison) Passed() bool {
	for _, s := range c.Sides {
		if !s.Passed() {
			return false
		}
	}
	return true
}

// scaleNote is the sides' scale for the header, unless it is the setting
// compared.
func (c *Comparison) scaleNote() string {
	if c.Setting == "scale" {
		return ""
	}
	return ScaleNote(c.Sides[0].Config.Scale)
}

// WriteTable prints the sides in columns, each figure with its ratio to
// the first side's, then each side's consistency verdict.
func (c *Comparison) WriteTable(w io.Writer) error {
	var b strings.Builder
	if len(c.Sides) == 0 {
		return nil
	}
	first := c.Sides[0]
	if c.Title != "" {
		fmt.Fprintf(&b, "%s\n", c.Title)
	} else {
		fmt.Fprintf(&b, "enginelab tpcc --compare %s: %d warehouse%s%s, %d terminals, %.0f s, profile %s, org %s, seed %d; the same workload on each side\n",
			c.Setting, first.Config.Warehouses, plural(first.Config.Warehouses), c.scaleNote(), first.Config.Terminals,
			first.Config.DurationSeconds, first.Config.Profile, first.Config.Org, first.Config.Seed)
	}
	fmt.Fprintf(&b, "ratios are against %s=%s\n\n", c.Setting, c.Values[0])
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	head, rows := c.Table()
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, cells := range rows {
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	_ = tw.Flush()
	b.WriteString("\n")
	for i, s := range c.Sides {
		fmt.Fprintf(&b, "%s=%s: %s\n", c.Setting, c.Values[i], s.Verdict())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Table is the side-by-side table WriteTable prints: its head (the
// setting, each side's value and, after every side but the first, its
// ratio to the first) and a row of cells per figure ("-" where a side has
// no such figure).
func (c *Comparison) Table() (head []string, rows [][]string) {
	if len(c.Sides) == 0 {
		return nil, nil
	}
	first := c.Sides[0]
	head = []string{c.Setting}
	for i, v := range c.Values {
		head = append(head, v)
		if i > 0 {
			head = append(head, "ratio")
		}
	}
	for _, row := range c.rows() {
		base, baseOK := row.get(first)
		cells := []string{row.name}
		for i, s := range c.Sides {
			v, ok := row.get(s)
			switch {
			case !ok:
				cells = append(cells, "-")
			default:
				cells = append(cells, fmt.Sprintf("%.*f", row.prec, v))
			}
			if i == 0 {
				continue
			}
			if ok && baseOK && base != 0 {
				cells = append(cells, fmt.Sprintf("%.2f", v/base))
			} else {
				cells = append(cells, "-")
			}
		}
		rows = append(rows, cells)
	}
	return head, rows
}

// Verdict is the report's consistency verdict, with the run's first
// error if it had any: "consistent", "INCONSISTENT: conditions [...]
// fail" or "no check".
func (r *Report) Verdict() string {
	verdict := "no check"
	if r.Check != nil {
		if r.Check.Passed() {
			verdict = "consistent"
		} else {
			verdict = fmt.Sprintf("INCONSISTENT: conditions %v fail", r.Check.Failed())
		}
	}
	if r.Run != nil && len(r.Run.Errors) > 0 {
		verdict += fmt.Sprintf(", %d errors: %s", len(r.Run.Errors), r.Run.Errors[0])
	}
	return verdict
}
