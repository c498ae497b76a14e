package calibrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/sim/report"
	"github.com/enginelab/enginelab/tpcc"
)

// ErrInvalidConfig is wrapped by the errors of a Config or of samples that
// cannot be fitted; they come before any work. It is
// tpcc.ErrInvalidConfig, the same value as sim.ErrInvalidConfig.
var ErrInvalidConfig = tpcc.ErrInvalidConfig

// ErrFailed means a fit could not be computed from its samples (a
// factorization failed, or a cost came out beyond what a profile
// accepts).
var ErrFailed = errors.New("sim: calibration failed")

// Config says how Run measures.
type Config struct {
	// Warehouses is W of the in-memory database; default 1. A warehouse
	// loads in a few seconds, and one terminal needs no more.
	Warehouses int `json:"warehouses"`
	// Scale is the population's size (the zero value: full scale). A
	// smaller one loads faster and measures the same events, on shallower
	// trees.
	Scale tpcc.Scale `json:"scale"`
	// Duration is each run's length; default DefaultDuration. Run makes
	// len(settings) runs (18), the heap organization's at half this, so
	// the default measures for about 75 s after two loads.
	Duration time.Duration `json:"duration_ns"`
	// Seed seeds the loads and the runs (run i takes Seed + i).
	Seed uint64 `json:"seed"`
	// Progress, if not nil, hears what Run is doing, a line at a time,
	// from the calling goroutine.
	Progress func(string) `json:"-"`
}

// DefaultDuration is a calibration run's default length: at about 4,000
// transactions a second, 20,000 samples a run.
const DefaultDuration = 5 * time.Second

// warmupTransactions is how many transactions each run drops before it
// keeps samples (fewer if the run has fewer than five times that): the
// first transactions after a setting changes pay for cold caches and the
// garbage of the last run.
const warmupTransactions = 300

// EnsureDefaults fills the zero fields of c.
func (c *Config) EnsureDefaults() {
	if c.Warehouses == 0 {
		c.Warehouses = 1
	}
	if c.Duration == 0 {
		c.Duration = DefaultDuration
	}
}

// Validate checks c (after EnsureDefaults) before any work.
func (c *Config) Validate() error {
	switch {
	case c.Warehouses < 1 || c.Warehouses > tpcc.MaxWarehouses:
		return fmt.Errorf("sim: %w: calibration: %d warehouses: want 1 to %d", ErrInvalidConfig, c.Warehouses, tpcc.MaxWarehouses)
	case c.Duration <= 0:
		return fmt.Errorf("sim: %w: calibration: --duration %v: want more than zero", ErrInvalidConfig, c.Duration)
	}
	if err := c.Scale.Validate(); err != nil {
		return fmt.Errorf("sim: %w: calibration: --scale: %w", ErrInvalidConfig, err)
	}
	return nil
}

// setting is one setting Run measures under.
type setting struct {
	org                   engine.Org
	profile               tpcc.Profile
	countRewrite, noLower bool
	half                  bool // runs for half the duration
}

// settings are the settings Run measures under, grouped by organization
// (one load each). The clustered runs vary everything that changes the event mix;
// the heap runs exist to observe heap fetches and scans, and vary the two
// settings that move those.
var settings = func() []setting {
	var runs []setting
	for _, p := range []tpcc.Profile{tpcc.Optimized, tpcc.Sysbench, tpcc.BenchmarkSQL} {
		for _, cr := range []bool{false, true} {
			for _, nl := range []bool{false, true} {
				runs = append(runs, setting{org: engine.Clustered, profile: p, countRewrite: cr, noLower: nl})
			}
		}
	}
	for _, p := range []tpcc.Profile{tpcc.Optimized, tpcc.Sysbench, tpcc.BenchmarkSQL} {
		for _, cr := range []bool{false, true} {
			runs = append(runs, setting{org: engine.HeapRowPointer, profile: p, countRewrite: cr, half: true})
		}
	}
	return runs
}()

func (r setting) String() string {
	return fmt.Sprintf("%s, profile %s, count rewrite %v, stock-level no lower bound %v", r.org, r.profile, r.countRewrite, r.noLower)
}

// RunSummary is what one run contributed.
type RunSummary struct {
	Org                    string  `json:"org"`
	Profile                string  `json:"profile"`
	CountRewrite           bool    `json:"count_rewrite"`
	StockLevelNoLowerBound bool    `json:"stocklevel_no_lower_bound"`
	Seconds                float64 `json:"seconds"`
	Transactions           int     `json:"transactions"` // measured, warm-up included
	Samples                int     `json:"samples"`      // kept after the warm-up
}

// Report is what a calibration measured: a fitted CPU profile and how
// well it fits.
type Report struct {
	Profile hw.CPUProfile `json:"profile"`
	Fit     *Fit          `json:"fit"`
	Config  Config        `json:"config"`
	Host    report.Host   `json:"host"`
	Date    string        `json:"date"`
	Runs    []RunSummary  `json:"runs"`
	// Outliers is how many transactions the fit left out as far slower
	// than their events explain (fitTrimmed); Fit covers the others.
	Outliers int `json:"outliers"`
}

// sampler is a terminal's Env in a calibration run: the wall clock, and
// a TxObserver that keeps each measured transaction's events and time.
// One terminal runs, so it needs no lock.
type sampler struct {
	tpcc.RealEnv
	begin   time.Time
	seen    int
	samples []Sample
}

var (
	_ tpcc.Env        = (*sampler)(nil)
	_ tpcc.TxObserver = (*sampler)(nil)
)

// TxBegin implements tpcc.TxObserver.
func (s *sampler) TxBegin(tpcc.TxType) { s.begin = time.Now() }

// TxEnd implements tpcc.TxObserver.
func (s *sampler) TxEnd(kind tpcc.TxType, measured bool, m *engine.Meter) {
	ns := time.Since(s.begin).Nanoseconds()
	if !measured {
		return
	}
	s.seen++
	s.samples = append(s.samples, Sample{Type: kind, Events: hw.VectorOf(m), Nanos: ns})
}

// Run measures real-mode runs on this machine and fits a CPU profile to
// them (FitCPU). Each organization's database is loaded once, in memory,
// with a pool that holds all of it and no sync at commit; then one
// terminal (no contention for cores or locks, so a transaction's time is
// its own CPU) runs under each of settings. The first
// transactions of each run are dropped (warmupTransactions), and the fit
// leaves out the transactions far slower than their events explain
// (fitTrimmed).
//
// It takes the machine's cores for the whole time: run it on a quiet
// machine. Progress lines go to cfg.Progress.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	progress := cfg.Progress
	if progress == nil {
		progress = func(string) {}
	}
	cal := &Report{Config: cfg, Date: time.Now().Format("2006-01-02"), Host: report.LocalHost()}
	var samples []Sample
	var db *engine.DB
	var loaded tpcc.Loaded
	closeDB := func() error {
		if db == nil {
			return nil
		}
		err := db.Close()
		db = nil
		return err
	}
	defer closeDB()
	for i, r := range settings {
		if db == nil || loaded.Org != r.org {
			if err := closeDB(); err != nil {
				return nil, err
			}
			progress(fmt.Sprintf("loading %d warehouse(s), %s", cfg.Warehouses, r.org))
			var err error
			if db, loaded, err = load(ctx, &cfg, r.org); err != nil {
				return nil, err
			}
		}
		d := cfg.Duration
		if r.half {
			d /= 2
		}
		progress(fmt.Sprintf("run %d/%d (%v): %s", i+1, len(settings), d, r))
		db.SetCountRewrite(r.countRewrite)
		runtime.GC() // the last run's garbage is not this one's to pay
		s := &sampler{}
		rc := tpcc.RunConfig{Warehouses: loaded.Warehouses, Scale: loaded.Scale, Terminals: 1, Duration: d, Seed: cfg.Seed + uint64(i),
			LoadConstants: loaded.Constants, Profile: r.profile, StockLevelNoLowerBound: r.noLower, Env: s}
		start := time.Now()
		if _, err := tpcc.Run(ctx, db, rc); err != nil {
			return nil, fmt.Errorf("calibration run %d (%s): %w", i+1, r, err)
		}
		drop := min(warmupTransactions, len(s.samples)/5)
		kept := s.samples[drop:]
		samples = append(samples, kept...)
		cal.Runs = append(cal.Runs, RunSummary{Org: r.org.String(), Profile: r.profile.String(), CountRewrite: r.countRewrite,
			StockLevelNoLowerBound: r.noLower, Seconds: time.Since(start).Seconds(), Transactions: s.seen, Samples: len(kept)})
	}
	if err := closeDB(); err != nil {
		return nil, err
	}
	progress(fmt.Sprintf("fitting %d transactions", len(samples)))
	prof, fit, outliers, err := fitTrimmed(samples)
	if err != nil {
		return nil, err
	}
	cal.Outliers = outliers
	// In memory nothing reads a device, and some events may not occur:
	// the profile keeps the shipped costs for what was not observed, so
	// that it still prices a run on a disk.
	prof = withDefaults(prof, fit.NotObserved)
	prof.Source = fmt.Sprintf("calibrated on %s/%s, %d CPUs, %s, R² %.3f (enginelab calibrate, %d transactions)",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cal.Date, fit.R2, fit.Samples)
	cal.Profile, cal.Fit = prof, fit
	return cal, nil
}

// load opens an in-memory database as a real-mode TPC-C job would
// (sim.TPCCConfig.EngineOptions: a pool for all of it, no sync at commit)
// and loads it.
func load(ctx context.Context, cfg *Config, org engine.Org) (*engine.DB, tpcc.Loaded, error) {
	job := sim.TPCCConfig{Warehouses: cfg.Warehouses, Org: org}
	opts := job.EngineOptions()
	opts.SkipMemoryCheck = false // no job's check ran: the engine's own (the pool at its capacity)
	db, err := engine.Open(opts)
	if err != nil {
		return nil, tpcc.Loaded{}, err
	}
	if _, err := tpcc.Load(ctx, db, tpcc.LoadConfig{Warehouses: cfg.Warehouses, Scale: cfg.Scale, Seed: cfg.Seed, Org: org}); err != nil {
		return nil, tpcc.Loaded{}, errors.Join(err, db.Close())
	}
	loaded, err := tpcc.ReadLoaded(db)
	if err != nil {
		return nil, tpcc.Loaded{}, errors.Join(err, db.Close())
	}
	return db, loaded, nil
}

// WriteTable prints the fitted costs (beside the shipped default's) and
// the fit per transaction type.
func (c *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	f := c.Fit
	fmt.Fprintf(&b, "enginelab calibrate: %s/%s, %d CPUs, %s, %s; %d warehouse(s)%s, %v a run, seed %d\n",
		c.Host.OS, c.Host.Arch, c.Host.CPUs, c.Host.GoVersion, c.Date, c.Config.Warehouses, report.ScaleNote(c.Config.Scale.String()),
		c.Config.Duration, c.Config.Seed)
	total := 0
	for _, r := range c.Runs {
		total += r.Transactions
	}
	fmt.Fprintf(&b, "%d runs of one terminal, %d transactions, %d kept after each run's warm-up\n", len(c.Runs), total, f.Samples+c.Outliers)
	fmt.Fprintf(&b, "fit: R² %.4f, rms residual %.1f µs a transaction, over the %d transactions left after %d outliers (far slower than their events explain: pauses, preemption)\n",
		f.R2, f.RMSResidualNanos/1e3, f.Samples, c.Outliers)

	fmt.Fprintf(&b, "\nCPU cost per event (ns; non-negative least squares over every transaction)\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "event\tfitted\tdefault\tsamples\tshare %\t")
	def := hw.DefaultCPU.Costs()
	for j, e := range f.Events {
		fitted := fmt.Sprintf("%.1f", e.Cost)
		if e.Samples == 0 {
			fitted = "-"
		} else if e.Cost < 10 {
			fitted = fmt.Sprintf("%.3f", e.Cost)
		}
		fmt.Fprintf(tw, "%s\t%s\t%g\t%d\t%.1f\t\n", e.Event, fitted, def[j], e.Samples, e.SharePct)
	}
	_ = tw.Flush()
	if len(f.NotObserved) > 0 {
		fmt.Fprintf(&b, "not observed (the profile keeps the default's cost): %s\n", strings.Join(f.NotObserved, ", "))
	}
	for _, g := range f.Collinear {
		fmt.Fprintf(&b, "collinear (only their joint cost is fitted): %s\n", strings.Join(g, ", "))
	}

	fmt.Fprintf(&b, "\nmeasured and predicted response times per transaction type\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "type\tcount\tmeasured µs\tpredicted µs\tresidual %\trms µs\t")
	for _, t := range f.Types {
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%+.1f\t%.1f\t\n", t.Type, t.Count, t.MeanNanos/1e3, t.PredictedNanos/1e3,
			t.ResidualPct, t.RMSResidualNanos/1e3)
	}
	_ = tw.Flush()
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteProfile writes the profile as a profiles file holding one CPU
// profile, name: {"cpus": {name: profile}}, which hw.Spec{
// ProfilesFile: file, CPU: name}.Resolve loads.
func (c *Report) WriteProfile(w io.Writer, name string) error {
	if err := hw.CheckProfileName(name); err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(hw.ProfilesFile{CPUs: map[string]hw.CPUProfile{name: c.Profile}})
}

// withDefaults returns p with hw.DefaultCPU's cost for every event named
// in names (hw.CostNames).
func withDefaults(p hw.CPUProfile, names []string) hw.CPUProfile {
	c, d := p.Costs(), hw.DefaultCPU.Costs()
	for i, n := range hw.CostNames {
		if slices.Contains(names, n) {
			c[i] = d[i]
		}
	}
	q := hw.ProfileOf(c)
	q.Source = p.Source
	return q
}
