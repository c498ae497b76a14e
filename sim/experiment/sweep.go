package experiment

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// SweepReport is one experiment run at each value of one setting (a
// sweep): per value, each side's tpmC and the experiment's headline and
// verdict. Like every simulated run, the same seed and settings give the
// same sweep.
type SweepReport struct {
	Base     string       `json:"base"`    // the experiment
	Setting  string       `json:"setting"` // the flag varied, without dashes
	Values   []string     `json:"values"`
	Question string       `json:"question"`
	Labels   []string     `json:"labels"` // the sides
	Points   []SweepPoint `json:"points"`
	Seed     uint64       `json:"seed"`
}

// SweepPoint is the experiment at one value of the setting.
type SweepPoint struct {
	Value    string    `json:"value"`
	TpmC     []float64 `json:"tpmc"` // per side
	Headline Headline  `json:"headline"`
	Held     bool      `json:"held"`
	Verdict  string    `json:"verdict"`
}

// Sweep runs e once per value: params[i] is the experiment's parameters
// with the setting at values[i] (the caller parses the setting, as the
// command line does). It stops at the first experiment that cannot run.
// progress, if not nil, hears what runs.
func Sweep(ctx context.Context, e *Experiment, setting string, values []string, params []Params, progress func(string)) (*SweepReport, error) {
	if len(values) != len(params) || len(values) < 2 {
		return nil, fmt.Errorf("sweep of %s: %w: want at least two values, each with its parameters", e.Name, ErrInvalidConfig)
	}
	// Every value's sides are checked before the first loads.
	for i, p := range params {
		p = e.params(p)
		if _, err := e.validSides(&p); err != nil {
			return nil, fmt.Errorf("sweep of %s, %s=%s: %w", e.Name, setting, values[i], err)
		}
	}
	s := &SweepReport{Base: e.Name, Setting: setting, Values: values, Question: e.Question}
	for i, p := range params {
		if progress != nil {
			progress(fmt.Sprintf("sweep: %s=%s (%d of %d)", setting, values[i], i+1, len(values)))
		}
		r, err := Run(ctx, e, p, progress)
		if err != nil {
			return nil, fmt.Errorf("sweep of %s, %s=%s: %w", e.Name, setting, values[i], err)
		}
		s.Add(values[i], r)
	}
	return s, nil
}

// Add appends the experiment's result r at value.
func (s *SweepReport) Add(value string, r *Report) {
	if s.Labels == nil {
		s.Labels = r.Labels
		s.Seed = r.Params.Seed
	}
	pt := SweepPoint{Value: value, Headline: r.Headline, Held: r.Held, Verdict: r.Verdict}
	for _, side := range r.Sides {
		pt.TpmC = append(pt.TpmC, round(tpmC(side), 1))
	}
	s.Points = append(s.Points, pt)
}

// Ratio is side k's tpmC at point i over the first side's (0 when the
// first side did nothing).
func (s *SweepReport) Ratio(i, k int) float64 {
	p := &s.Points[i]
	if k >= len(p.TpmC) || p.TpmC[0] == 0 {
		return 0
	}
	return p.TpmC[k] / p.TpmC[0]
}

// Cells is the sweep's table as text cells: its head, and a row per value
// with each side's tpmC, its ratio to the first side's, the headline and
// whether the expectation held (with the verdict when it did not, if
// verdicts).
func (s *SweepReport) Cells(verdicts bool) (head []string, rows [][]string) {
	head = []string{s.Setting}
	for k, l := range s.Labels {
		head = append(head, l+" tpmC")
		if k > 0 {
			head = append(head, "ratio")
		}
	}
	head = append(head, "headline base", "side", "ratio", "held")
	for i, p := range s.Points {
		cells := []string{p.Value}
		for k, v := range p.TpmC {
			cells = append(cells, fmt.Sprintf("%.0f", v))
			if k > 0 {
				cells = append(cells, fmt.Sprintf("%.2f", s.Ratio(i, k)))
			}
		}
		held := "yes"
		if !p.Held {
			held = "NO"
			if verdicts {
				held += ": " + p.Verdict
			}
		}
		h := p.Headline
		rows = append(rows, append(cells, fmt.Sprintf("%.4g", h.Base), fmt.Sprintf("%.4g", h.Side), fmt.Sprintf("%.3f", h.Ratio), held))
	}
	return head, rows
}

// WriteTable prints the sweep: a line per value with each side's tpmC, its
// ratio to the first side's, the headline and whether the expectation
// held.
func (s *SweepReport) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "sweep of experiment %s over --%s (simulated, seed %d; ratios against %s)\n", s.Base, s.Setting, s.Seed, first(s.Labels))
	fmt.Fprintf(&b, "question: %s\n", s.Question)
	if len(s.Points) > 0 {
		fmt.Fprintf(&b, "headline: %s\n\n", s.Points[0].Headline.Figure)
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	head, rows := s.Cells(false)
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, cells := range rows {
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	_ = tw.Flush()
	for _, p := range s.Points {
		if !p.Held {
			fmt.Fprintf(&b, "%s=%s: the expectation did NOT hold: %s\n", s.Setting, p.Value, p.Verdict)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func first(labels []string) string {
	if len(labels) == 0 {
		return "the first side"
	}
	return labels[0]
}

// Held says the expectation held at every value.
func (s *SweepReport) Held() bool {
	for _, p := range s.Points {
		if !p.Held {
			return false
		}
	}
	return true
}
