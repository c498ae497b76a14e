package experiment

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim"
	"github.com/enginelab/enginelab/sim/client"
	"github.com/enginelab/enginelab/sim/report"
	"github.com/enginelab/enginelab/tpcc"
)

// The talk ladder: the steps the talk behind this project took, one after
// another, for two client personalities over the same engine and data
// (the heap organization with row pointers, as the talk's one storage
// engine; the clustered organization as a side check of the prepared
// statements step), with the client and server cost layer on
// (package sim/client).

// LadderName is the ladder's name on the command line.
const LadderName = "talk-ladder"

// LadderQuestion is what the ladder answers.
const LadderQuestion = "the talk's steps in order (own kit, BenchmarkSQL, Stock-Level's bound, prepared statements, plan cache, count rewrite, Delivery LIMIT 1, fetch size, batching) for mysql-jdbc and pgjdbc with the client and server cost layer: tpmC per step against the talk's figures"

// LadderPersonalities are the ladder's two sides: MySQL's JDBC driver and
// PostgreSQL's (the talk's GaussDB speaks PostgreSQL's protocol).
var LadderPersonalities = []string{"mysql-jdbc", "pgjdbc"}

// LadderFetchSize is the fetch size of the ladder's fetch-size step.
const LadderFetchSize = 10

// ladderStep is one step: what it changes in the job, and the talk's
// figure for it.
type ladderStep struct {
	name string
	// apply changes the job and the client settings for this step, on
	// top of the steps before.
	apply func(c *sim.TPCCConfig, s *client.Settings, person string)
	// talk is the talk's ratio for the step on each side (0: none), and
	// claimed says the model claims to reproduce it (a verdict is given).
	talk    [2]float64
	claimed bool
	note    string
}

var ladderSteps = []ladderStep{
	{name: "own kit", apply: func(c *sim.TPCCConfig, s *client.Settings, _ string) {
		c.Profile = tpcc.Sysbench
		*s = client.Settings{CClient: true}
	}, note: "sysbench-tpcc's statements, as text, from a C client; the talk: 415K tpmC on MySQL with its own kit"},
	{name: "BenchmarkSQL profile", apply: func(c *sim.TPCCConfig, s *client.Settings, _ string) {
		c.Profile, c.StockLevelNoLowerBound = tpcc.BenchmarkSQL, true
		*s = client.Settings{} // JDBC, nothing prepared (pgjdbc's prepareThreshold=0)
	}, talk: [2]float64{140.0 / 415, 0}, note: "with Stock-Level's missing lower bound; the talk: 140K against 415K (not claimed: the kit switch)"},
	{name: "StockLevel lower bound fixed", apply: func(c *sim.TPCCConfig, _ *client.Settings, _ string) {
		c.StockLevelNoLowerBound = false
	}, talk: [2]float64{750.0 / 140, 0}, note: "the talk: 750K on MySQL with the statistics fixes too (not claimed)"},
	{name: "prepared statements", apply: func(_ *sim.TPCCConfig, s *client.Settings, person string) {
		s.ServerPrepare = true
		if person == "pgjdbc" {
			s.PrepareThreshold = 5
		}
	}, talk: [2]float64{1.25, 2}, claimed: true, note: "the talk: +25% on MySQL, more than 2x on GaussDB"},
	{name: "plan cache", apply: func(_ *sim.TPCCConfig, s *client.Settings, _ string) { s.PlanCache = true },
		talk: [2]float64{1.05, 1.05}, claimed: true, note: "the talk: +5%"},
	{name: "count rewrite", apply: nil, talk: [2]float64{1.10, 1.10}, claimed: true,
		note: "BenchmarkSQL sends no count(c_id): measured on the sysbench profile, without and with the rewrite, at this step's client settings; the main line carries on unchanged; the talk: +10%"},
	{name: "Delivery LIMIT 1", apply: func(c *sim.TPCCConfig, _ *client.Settings, _ string) { c.DeliveryLimit1 = true },
		note: "no figure in the talk"},
	{name: "fetch size", apply: func(_ *sim.TPCCConfig, s *client.Settings, person string) {
		s.FetchSize = LadderFetchSize
		if person == "mysql-jdbc" {
			s.CursorFetch = true // Connector/J ignores a fetch size without it
		}
	}, note: fmt.Sprintf("fetch size %d (Connector/J: useCursorFetch=true); no figure in the talk", LadderFetchSize)},
	{name: "batched statements", apply: func(_ *sim.TPCCConfig, s *client.Settings, person string) {
		s.Batch = true
		if person == "mysql-jdbc" {
			s.RewriteBatched = true
		}
	}, talk: [2]float64{1.7 / 1.4, 1.7 / 1.4}, claimed: true, note: "executeBatch (Connector/J: rewriteBatchedStatements=true); the talk: 1.7M against 1.4M"},
}

// ladderStepNamed returns the step called name (nil: none).
func ladderStepNamed(name string) *ladderStep {
	for i := range ladderSteps {
		if ladderSteps[i].name == name {
			return &ladderSteps[i]
		}
	}
	return nil
}

// LadderRow is one step on one side.
type LadderRow struct {
	Step       string  `json:"step"`
	TpmC       float64 `json:"tpmc"`
	Ratio      float64 `json:"ratio"` // to the step before (the count rewrite: its pair's)
	Talk       float64 `json:"talk,omitempty"`
	Verdict    string  `json:"verdict"`
	OutsidePct float64 `json:"outside_engine_pct"`
	RoundTrips float64 `json:"round_trips_per_tx"`
	Parses     float64 `json:"parses_per_tx"`
	Note       string  `json:"note"`
}

// LadderReport is the ladder's result.
type LadderReport struct {
	Params Params        `json:"params"`
	Sides  []string      `json:"sides"`
	Rows   [][]LadderRow `json:"rows"` // per side, per step
	// Grid is LIMIT 1 × fetch size at the plan-cache step's settings,
	// per side: [limit][fetch] tpmC.
	Grid [][2][2]float64 `json:"limit_fetch_grid"`
	// Clustered is the prepared statements step on the clustered
	// organization, per side: tpmC before and after.
	Clustered [][2]float64 `json:"clustered_prepared"`
}

// Ladder runs the talk's ladder with p (zero fields: 4 terminals, 5 s
// after 1 s of warm-up, seed 1, full scale).
func Ladder(ctx context.Context, p Params, progress func(string)) (*LadderReport, error) {
	e := &Experiment{Name: "talk-ladder", Defaults: Params{PoolSize: defaultPoolPerWarehouse}, SmallDefaults: &Params{PoolSize: 64 << 20}}
	p = e.params(p)
	if p.Org == engine.OrgDefault {
		p.Org = engine.HeapRowPointer
	}
	res := &LadderReport{Params: p, Sides: LadderPersonalities}
	runs := 0
	runOne := func(c sim.TPCCConfig, label string) (*report.Report, error) {
		runs++
		c.Phases = sim.Phases{Load: true, Run: true}
		c.Dir = p.SideDir(e.Name, runs)
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("talk-ladder, %s: %w", label, err)
		}
		if progress != nil {
			progress("talk-ladder: " + label)
		}
		rep, err := runSide(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("talk-ladder, %s: %w", label, err)
		}
		return rep, nil
	}
	for si, person := range LadderPersonalities {
		c := p.base()
		var s client.Settings
		var rows []LadderRow
		var prev float64
		var grid [2][2]float64
		for k, st := range ladderSteps {
			label := person + ": " + st.name
			row := LadderRow{Step: st.name, Talk: st.talk[si], Note: st.note}
			var rep *report.Report
			var err error
			if st.apply == nil {
				// The count rewrite: a pair on the sysbench profile.
				pair := c
				pair.Profile = tpcc.Sysbench
				pair.Client = &client.Config{Personality: person, Settings: s}
				before, err := runOne(pair, label+" (sysbench, count(c_id))")
				if err != nil {
					return nil, err
				}
				pair.CountRewrite = true
				if rep, err = runOne(pair, label+" (sysbench, count(*))"); err != nil {
					return nil, err
				}
				fill(&row, rep)
				if b := tpmC(before); b > 0 {
					row.Ratio = tpmC(rep) / b
				}
				row.Verdict = verdict(row.Ratio, row.Talk, st.claimed)
				rows = append(rows, row)
				// The 2×2's corner without LIMIT 1 and with a fetch size.
				corner := c
				cs := s
				if f := ladderStepNamed("fetch size"); f != nil {
					f.apply(&corner, &cs, person)
				}
				corner.Client = &client.Config{Personality: person, Settings: cs}
				cr, err := runOne(corner, person+": fetch size without LIMIT 1")
				if err != nil {
					return nil, err
				}
				grid[0][1] = round(tpmC(cr), 1)
				grid[0][0] = round(prev, 1)
				continue
			}
			st.apply(&c, &s, person)
			c.Client = &client.Config{Personality: person, Settings: s}
			if rep, err = runOne(c, label); err != nil {
				return nil, err
			}
			fill(&row, rep)
			if k > 0 && prev > 0 {
				row.Ratio = row.TpmC / prev
			}
			switch st.name {
			case "Delivery LIMIT 1":
				grid[1][0] = row.TpmC
			case "fetch size":
				grid[1][1] = row.TpmC
			case "prepared statements":
				// The side check on the clustered organization.
				before := c
				bs := s
				bs.ServerPrepare, bs.PrepareThreshold = false, 0
				before.Client = &client.Config{Personality: person, Settings: bs}
				before.Org, c.Org = engine.Clustered, engine.Clustered
				b, err := runOne(before, person+": clustered, before prepared statements")
				if err != nil {
					return nil, err
				}
				a, err := runOne(c, person+": clustered, prepared statements")
				if err != nil {
					return nil, err
				}
				c.Org = p.Org
				res.Clustered = append(res.Clustered, [2]float64{round(tpmC(b), 1), round(tpmC(a), 1)})
			}
			row.Verdict = verdict(row.Ratio, row.Talk, st.claimed)
			rows = append(rows, row)
			prev = row.TpmC
		}
		res.Rows = append(res.Rows, rows)
		res.Grid = append(res.Grid, grid)
	}
	return res, nil
}

// fill takes a step's figures from its report.
func fill(row *LadderRow, rep *report.Report) {
	row.TpmC = round(tpmC(rep), 1)
	if c := rep.Sim.Client; c != nil {
		row.OutsidePct = round(c.OutsidePct, 1)
		// Warm-up included in the counts: per transaction of the run.
		row.RoundTrips = round(float64(c.Counts.RoundTrips)/float64(allTx(rep)), 2)
		row.Parses = round(float64(c.Counts.Parses)/float64(allTx(rep)), 2)
	}
}

// allTx is the run's transactions, warm-up included: the commits and
// rollbacks its clients sent.
func allTx(rep *report.Report) int64 {
	c := rep.Sim.Client.ByKind
	return max(1, c["commit"].Statements+c["rollback"].Statements)
}

// verdict judges a step's ratio against the talk's: the same direction
// and a gain (ratio − 1) within a factor of 2 of the talk's.
func verdict(ratio, talk float64, claimed bool) string {
	switch {
	case talk == 0:
		return "no figure"
	case !claimed:
		return "not claimed"
	case ratio == 0:
		return "no run"
	}
	g, tg := ratio-1, talk-1
	if math.Signbit(g) != math.Signbit(tg) {
		return "NO: the other direction"
	}
	if q := g / tg; q < 0.5 || q > 2 {
		return fmt.Sprintf("NO: gain %.0f%% of the talk's", 100*q)
	}
	return "held"
}

// WriteTable prints the ladder: per side, each step's tpmC, its ratio to
// the step before, the talk's figure and the verdict, the share of the
// modeled response time outside the engine, round trips and parses a
// transaction; then the LIMIT 1 × fetch size grid and the clustered check.
func (r *LadderReport) WriteTable(w io.Writer) error {
	var b strings.Builder
	p := r.Params
	fmt.Fprintf(&b, "talk ladder (simulated, seed %d, %d warehouse(s), %s scale, %d terminals, %v after %v of warm-up; %s)\n",
		p.Seed, p.Warehouses, p.Scale, p.Terminals, p.Duration, p.Warmup, p.Org)
	fmt.Fprintf(&b, "verdict: the same direction and a gain within 2x of the talk's, for the steps the talk isolates\n")
	for si, side := range r.Sides {
		fmt.Fprintf(&b, "\n%s\n", side)
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "step\ttpmC\tratio\ttalk\tverdict\toutside engine %\tround trips/tx\tparses/tx\t")
		for _, row := range r.Rows[si] {
			talk := "-"
			if row.Talk > 0 {
				talk = fmt.Sprintf("%.2f", row.Talk)
			}
			ratio := "-"
			if row.Ratio > 0 {
				ratio = fmt.Sprintf("%.3f", row.Ratio)
			}
			fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%s\t%.1f\t%.2f\t%.2f\t\n", row.Step, row.TpmC, ratio, talk, row.Verdict, row.OutsidePct, row.RoundTrips, row.Parses)
		}
		_ = tw.Flush()
		g := r.Grid[si]
		fmt.Fprintf(&b, "LIMIT 1 x fetch size %d (tpmC): without LIMIT 1: %.0f, %.0f with the fetch size; with LIMIT 1: %.0f, %.0f\n",
			LadderFetchSize, g[0][0], g[0][1], g[1][0], g[1][1])
		if si < len(r.Clustered) {
			c := r.Clustered[si]
			ratio := 0.0
			if c[0] > 0 {
				ratio = c[1] / c[0]
			}
			fmt.Fprintf(&b, "clustered, prepared statements: %.0f -> %.0f tpmC (%.3f)\n", c[0], c[1], ratio)
		}
	}
	b.WriteString("\nnotes:\n")
	for _, st := range ladderSteps {
		fmt.Fprintf(&b, "  %s: %s\n", st.name, st.note)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
