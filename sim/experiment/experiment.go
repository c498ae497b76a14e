package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/cache/tier"
	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/sim/replay"
	"github.com/enginelab/enginelab/sim/report"
	"github.com/enginelab/enginelab/sim/sched"
	"github.com/enginelab/enginelab/tpcc"
)

// ErrInvalidConfig is wrapped by the error of a side whose configuration
// cannot run; Run returns it before any side runs. It is
// tpcc.ErrInvalidConfig, the same value as sim.ErrInvalidConfig.
var ErrInvalidConfig = tpcc.ErrInvalidConfig

// ErrUnknown means no experiment has that name.
var ErrUnknown = errors.New("sim: unknown experiment")

// Experiment is one question as a runnable comparison.
type Experiment struct {
	Name     string
	Question string // as the README's design asks it
	Expect   string // the direction it expects
	Context  string // a published figure for the same question, if any
	// Defaults are the experiment's own settings, over which the user's
	// flags go.
	Defaults Params
	// SmallDefaults, where an experiment has them, replace Defaults at
	// tpcc.SmallScale: a question whose pool or tier must be a fraction
	// of the data sizes them for a tenth of the data.
	SmallDefaults *Params
	// sides lists the sides for the settings.
	sides func(p *Params) []Side
	// held checks the expected direction on the sides' reports.
	held func(r []*report.Report) (bool, string)
	// headline names the figure the experiment is about and its ratio.
	headline func(r []*report.Report) Headline
	// replay, if set, records the page trace of the first side and
	// replays it into every tier policy; held and headline then judge
	// the replay instead of the sides.
	replay     *replay.Config
	replayHeld func(r *replay.Report) (bool, string, Headline)
	// pairs lists the (base, side) pairs the explanation compares;
	// nil: every side against the first.
	pairs [][2]int
	// finish, if set, completes the report after held and headline: an
	// experiment's own table (waffle's), and its verdict.
	finish func(res *Report)
}

// Params scale an experiment; zero fields take its defaults.
type Params struct {
	Warehouses int `json:"warehouses"`
	// Scale is the population's size; the zero value is full scale.
	// Every side loads at it.
	Scale            tpcc.Scale    `json:"scale"`
	Terminals        int           `json:"terminals"`
	Duration, Warmup time.Duration `json:"-"`
	Seed             uint64        `json:"seed"`
	PoolSize         int64         `json:"pool_bytes"`   // 0: the experiment's
	RemoteSize       int64         `json:"remote_bytes"` // 0: the experiment's
	// IOCapacity is every side's page cleaner base rate in page writes
	// a second (sim.TPCCConfig.IOCapacity, innodb_io_capacity; 0: the
	// experiment's, else 200).
	IOCapacity int     `json:"io_capacity,omitempty"`
	Hardware   hw.Spec `json:"-"`
	// TornPages is the torn-page protection every side pays for (the
	// command's --torn-pages; default none): the sides' reports show it.
	TornPages cache.TornPages `json:"-"`
	// Org is the organization of every side that does not set its own
	// (OrgDefault: clustered); Isolation and EarlyLockRelease are every
	// side's (sim.TPCCConfig's; their defaults: RepeatableRead, the
	// organization's lock release). The sides' reports show them.
	Org              engine.Org         `json:"-"`
	Isolation        engine.Isolation   `json:"-"`
	EarlyLockRelease engine.LockRelease `json:"-"`
	// MemoryLimit and IgnoreMemoryLimit go to every side's job
	// (sim.TPCCConfig): each side is checked before the first one loads.
	MemoryLimit       int64 `json:"-"`
	IgnoreMemoryLimit bool  `json:"-"`
	// Dir, if not empty, keeps each side's database on disk, in a
	// directory of its own under Dir (SideDir: NAME-side-NN), which the
	// side loads into, and which is removed once its report is taken, so
	// that the disk holds one side's database at a time. A side's
	// directory that exists and holds files is refused before the first
	// side loads. Simulated time and every count are the same as in
	// memory (the modeled devices price the I/O, not this machine's
	// disk); what changes is the memory check, which then counts no
	// store pages. Empty: every side in memory.
	Dir string `json:"-"`
	// poolPerWarehouse is the experiment's pool per warehouse when
	// PoolSize took its default (params), for the memory check's advice.
	poolPerWarehouse int64
}

// Side is one side of an experiment: a label and the job.
type Side struct {
	Label  string
	Config sim.TPCCConfig
}

// Headline is the one figure an experiment reports first.
type Headline struct {
	Figure string  `json:"figure"`
	Base   float64 `json:"base"`
	Side   float64 `json:"side"`
	Ratio  float64 `json:"ratio"`
}

// Report is what an experiment found.
type Report struct {
	Name         string           `json:"name"`
	Question     string           `json:"question"`
	Expect       string           `json:"expect"`
	Held         bool             `json:"held"`
	Verdict      string           `json:"verdict"`
	Headline     Headline         `json:"headline"`
	Context      string           `json:"context,omitempty"`
	Params       Params           `json:"params"`
	Labels       []string         `json:"labels"`
	Sides        []*report.Report `json:"sides"`
	Explanations []Explanation    `json:"explanations"`
	// Replay is the tier policies' hit ratios on the first side's page
	// trace (the tier-policy experiment).
	Replay *replay.Report `json:"replay,omitempty"`
	// Waffle is the waffle experiment's table.
	Waffle *WaffleTable `json:"waffle,omitempty"`
}

// Explanation is one transaction type's difference between a side and
// the first: its modeled mean, how each share of it moved, and the
// counters that changed most with the time each accounts for at its
// unqueued price.
type Explanation struct {
	Base     string         `json:"base"`
	Side     string         `json:"side"`
	Type     string         `json:"type"`
	BaseMs   float64        `json:"base_ms"`
	SideMs   float64        `json:"side_ms"`
	Shares   []ShareDelta   `json:"shares"`
	Counters []CounterDelta `json:"counters"`
}

// ShareDelta is the change of one share of the mean response time.
type ShareDelta struct {
	Share   string  `json:"share"`
	DeltaMs float64 `json:"delta_ms"`
}

// CounterDelta is the change of one counter per transaction, and the time
// it accounts for: the change times the counter's unit price on the
// side's hardware, before any queueing.
type CounterDelta struct {
	Counter    string  `json:"counter"`
	Base       float64 `json:"base_per_tx"`
	Side       float64 `json:"side_per_tx"`
	AccountsMs float64 `json:"accounts_ms"`
}

// Run runs e's sides in simulated mode, one after another, each on its
// own database (in memory, or on disk under p.Dir) loaded with the same
// seed (so every side starts from the same pages). progress, if not nil,
// hears what runs.
func Run(ctx context.Context, e *Experiment, p Params, progress func(string)) (*Report, error) {
	p = e.params(p)
	sides, err := e.validSides(&p)
	if err != nil {
		return nil, err
	}
	res := &Report{Name: e.Name, Question: e.Question, Expect: e.Expect, Context: e.Context, Params: p}
	var trace string
	if e.replay != nil {
		f, err := os.CreateTemp("", "enginelab-"+e.Name+"-*.trace")
		if err != nil {
			return nil, err
		}
		trace = f.Name()
		_ = f.Close()
		defer os.Remove(trace)
		sides[0].Config.Trace = trace
	}
	for i, side := range sides {
		if progress != nil {
			progress(fmt.Sprintf("%s: side %d of %d, %s: load and run", e.Name, i+1, len(sides), side.Label))
		}
		rep, err := runSide(ctx, side.Config)
		if err != nil {
			return nil, fmt.Errorf("experiment %s, side %q: %w", e.Name, side.Label, err)
		}
		res.Labels = append(res.Labels, side.Label)
		res.Sides = append(res.Sides, rep)
	}
	if e.replay != nil {
		f, err := os.Open(trace)
		if err != nil {
			return nil, err
		}
		t, err := tier.ReadTrace(f)
		_ = f.Close()
		if err != nil {
			return nil, fmt.Errorf("experiment %s: %w", e.Name, err)
		}
		if progress != nil {
			progress(fmt.Sprintf("%s: replaying %d events into %v", e.Name, len(t.Events), e.replay.Policies))
		}
		if res.Replay, err = replay.Run(t, *e.replay); err != nil {
			return nil, fmt.Errorf("experiment %s: %w", e.Name, err)
		}
		res.Held, res.Verdict, res.Headline = e.replayHeld(res.Replay)
		return res, nil
	}
	res.Held, res.Verdict = e.held(res.Sides)
	res.Headline = e.headline(res.Sides)
	if e.finish != nil {
		e.finish(res)
	}
	pairs := e.pairs
	if pairs == nil {
		for i := 1; i < len(res.Sides); i++ {
			pairs = append(pairs, [2]int{0, i})
		}
	}
	for _, pr := range pairs {
		x := explain(res.Labels[pr[1]], res.Sides[pr[0]], res.Sides[pr[1]])
		for i := range x {
			x[i].Base = res.Labels[pr[0]]
		}
		res.Explanations = append(res.Explanations, x...)
	}
	return res, nil
}

// validSides are e's sides for p (its defaults filled in), each to load
// and run, validated.
func (e *Experiment) validSides(p *Params) ([]Side, error) {
	sides := e.sides(p)
	for i := range sides {
		sides[i].Config.Phases = sim.Phases{Load: true, Run: true}
		sides[i].Config.Dir = p.SideDir(e.Name, i+1)
		if err := sides[i].Config.Validate(); err != nil {
			if errors.Is(err, sim.ErrAlreadyLoaded) {
				// Left by a run that was killed: a side's directory is
				// removed when the side ends, even when it fails.
				err = fmt.Errorf("%w (an experiment's side loads into a directory of its own: remove it)", err)
			}
			return nil, fmt.Errorf("experiment %s, side %q: %w", e.Name, sides[i].Label, err)
		}
	}
	return sides, nil
}

// SideDir is the directory of an experiment's n-th side (from 1) when p
// keeps the sides on disk (Dir), "" when they are in memory.
func (p *Params) SideDir(name string, n int) string {
	if p.Dir == "" {
		return ""
	}
	return filepath.Join(p.Dir, fmt.Sprintf("%s-side-%02d", name, n))
}

// runSide loads and runs a validated side. A side on disk has its
// directory removed once it is done, whether it passed or failed: the
// directory was empty or absent when the side was validated, so all it
// holds is this side's database.
func runSide(ctx context.Context, c sim.TPCCConfig) (rep *report.Report, err error) {
	if c.Dir != "" {
		defer func() {
			if rerr := os.RemoveAll(c.Dir); rerr != nil && err == nil {
				err = fmt.Errorf("removing the side's database: %w", rerr)
			}
		}()
	}
	return sim.TPCC(ctx, c, sim.Hooks{})
}

// Sides returns the jobs of e's sides for p, its zero fields filled from
// e's defaults as Run fills them: what Run would run, before it sets their
// phases (load and run) and validates them.
func (e *Experiment) Sides(p Params) []Side {
	p = e.params(p)
	return e.sides(&p)
}

// params fills p's zero fields from the experiment's defaults and the
// general ones.
func (e *Experiment) params(p Params) Params {
	d := e.Defaults
	if e.SmallDefaults != nil && p.Scale == tpcc.SmallScale {
		d = *e.SmallDefaults
	}
	if p.Warehouses == 0 {
		p.Warehouses = max(1, d.Warehouses)
	}
	if p.Terminals == 0 {
		p.Terminals = d.Terminals
		if p.Terminals == 0 {
			p.Terminals = 4
		}
	}
	if p.Duration == 0 {
		p.Duration = d.Duration
		if p.Duration == 0 {
			p.Duration = 5 * time.Second
		}
	}
	if p.Warmup == 0 {
		p.Warmup = d.Warmup
		if p.Warmup == 0 {
			p.Warmup = time.Second
		}
	}
	if p.Seed == 0 {
		p.Seed = 1
	}
	if p.PoolSize == 0 {
		p.PoolSize = d.PoolSize * int64(p.Warehouses)
		p.poolPerWarehouse = d.PoolSize
	}
	if p.RemoteSize == 0 {
		p.RemoteSize = d.RemoteSize * int64(p.Warehouses)
	}
	if p.IOCapacity == 0 {
		p.IOCapacity = d.IOCapacity
	}
	spec := d.Hardware
	u := p.Hardware
	if u.Cores != 0 {
		spec.Cores = u.Cores
	}
	for _, f := range []struct{ user, def *string }{{&u.CPU, &spec.CPU}, {&u.Store, &spec.Store}, {&u.Log, &spec.Log},
		{&u.Network, &spec.Network}, {&u.ProfilesFile, &spec.ProfilesFile}} {
		if *f.user != "" {
			*f.def = *f.user
		}
	}
	p.Hardware = spec
	return p
}

// base is the job every side starts from: simulated, no sync at commit
// (the engine's own costs, not the log device's, are the question unless
// an experiment says otherwise), read-ahead on, and the engine's 96 MiB
// redo log (redo.DefaultCapacity) unless an experiment sizes its own, as
// it sizes its pool: the tpcc command's log grows with the warehouses
// (sim.DefaultLogSize), and the experiments' results were measured
// with this one.
func (p *Params) base() sim.TPCCConfig {
	return sim.TPCCConfig{Mode: sim.ModeSim, Hardware: p.Hardware, Warehouses: p.Warehouses, Scale: p.Scale, Terminals: p.Terminals,
		Duration: p.Duration, Warmup: p.Warmup, Seed: p.Seed, PoolSize: p.PoolSize, RemoteSize: p.RemoteSize,
		LogSize: redo.DefaultCapacity, ReadAhead: true, TornPages: p.TornPages, MemoryLimit: p.MemoryLimit, IgnoreMemoryLimit: p.IgnoreMemoryLimit,
		ScaledPool: p.poolPerWarehouse, IOCapacity: p.IOCapacity, Org: p.Org, Isolation: p.Isolation, EarlyLockRelease: p.EarlyLockRelease}
}

// The counters an explanation looks at, with their per-transaction value
// and unit price on machine m (nanoseconds, unqueued).
type counter struct {
	name  string
	value func(m *engine.Meter) int64
	price func(m *hw.Machine, pageSize int64) float64
}

func cpuCost(i hw.Event) func(m *hw.Machine, _ int64) float64 {
	return func(m *hw.Machine, _ int64) float64 { return m.CPU.Costs()[i] }
}

var counters = func() []counter {
	v := func(i hw.Event) func(m *engine.Meter) int64 {
		return func(m *engine.Meter) int64 { x := hw.VectorOf(m); return x[i] }
	}
	cs := []counter{
		{"page requests", v(hw.EventPageRequest), cpuCost(hw.EventPageRequest)},
		{"pool misses", v(hw.EventPoolMiss), cpuCost(hw.EventPoolMiss)},
		{"node visits", v(hw.EventNodeVisit), cpuCost(hw.EventNodeVisit)},
		{"splits", v(hw.EventSplit), cpuCost(hw.EventSplit)},
		{"heap fetches", v(hw.EventHeapFetch), cpuCost(hw.EventHeapFetch)},
		{"heap rows scanned", v(hw.EventHeapRowScanned), cpuCost(hw.EventHeapRowScanned)},
		{"heap moves", v(hw.EventHeapMove), cpuCost(hw.EventHeapMove)},
		{"rows examined", v(hw.EventRowExamined), cpuCost(hw.EventRowExamined)},
		{"rows decoded", v(hw.EventRowDecoded), cpuCost(hw.EventRowDecoded)},
		{"rows returned", v(hw.EventRowReturned), cpuCost(hw.EventRowReturned)},
		{"index entries written", v(hw.EventIndexEntryWritten), cpuCost(hw.EventIndexEntryWritten)},
		{"index entries deleted", v(hw.EventIndexEntryDeleted), cpuCost(hw.EventIndexEntryDeleted)},
		// A versioned heap's updates, HOT or not: what they cost is
		// priced through the pages, index entries and log they cause,
		// so the counts themselves are free.
		{"HOT updates", func(m *engine.Meter) int64 { return m.HeapHOTUpdates }, func(*hw.Machine, int64) float64 { return 0 }},
		{"non-HOT updates", func(m *engine.Meter) int64 { return m.HeapNonHOTUpdates }, func(*hw.Machine, int64) float64 { return 0 }},
		{"log records", v(hw.EventLogRecord), cpuCost(hw.EventLogRecord)},
		{"log bytes", v(hw.EventLogByte), cpuCost(hw.EventLogByte)},
		{"lock requests", v(hw.EventLockRequest), cpuCost(hw.EventLockRequest)},
		{"row fetches", func(m *engine.Meter) int64 { return m.RowFetches }, func(*hw.Machine, int64) float64 { return 0 }},
		{"store reads", func(m *engine.Meter) int64 { return m.StoreReads }, func(m *hw.Machine, ps int64) float64 {
			return float64(m.Store.ReadLatency) + float64(hw.TransferNanos(ps, m.Store.ReadBandwidth)) + m.CPU.StoreRequest
		}},
		{"store writes", func(m *engine.Meter) int64 { return m.StoreWrites }, func(m *hw.Machine, ps int64) float64 {
			return float64(m.Store.WriteLatency) + float64(hw.TransferNanos(ps, m.Store.WriteBandwidth)) + m.CPU.StoreRequest
		}},
		{"tier hits", func(m *engine.Meter) int64 { return m.TierHits }, func(m *hw.Machine, ps int64) float64 {
			return float64(m.Network.RoundTrip) + float64(hw.TransferNanos(ps, m.Network.Bandwidth)) + m.CPU.TierRequest
		}},
		{"tier misses", func(m *engine.Meter) int64 { return m.TierGets - m.TierHits }, func(m *hw.Machine, _ int64) float64 {
			return float64(m.Network.RoundTrip) + m.CPU.TierRequest
		}},
		{"tier puts", func(m *engine.Meter) int64 { return m.TierPuts }, func(m *hw.Machine, ps int64) float64 {
			return float64(m.Network.RoundTrip) + float64(hw.TransferNanos(ps, m.Network.Bandwidth)) + m.CPU.TierRequest
		}},
		{"store syncs", func(m *engine.Meter) int64 { return m.StoreSyncs }, func(m *hw.Machine, _ int64) float64 {
			return float64(m.Store.SyncLatency)
		}},
		// A doublewrite batch: one sequential write (a request's latency
		// and CPU, and its bytes' transfer) and a sync, on the store
		// device.
		{"doublewrite writes", func(m *engine.Meter) int64 { return m.DoublewriteWrites }, func(m *hw.Machine, _ int64) float64 {
			return float64(m.Store.WriteLatency) + m.CPU.StoreRequest
		}},
		{"doublewrite bytes", func(m *engine.Meter) int64 { return m.DoublewriteBytes }, func(m *hw.Machine, _ int64) float64 {
			return float64(time.Second) / float64(m.Store.WriteBandwidth)
		}},
		{"doublewrite syncs", func(m *engine.Meter) int64 { return m.DoublewriteSyncs }, func(m *hw.Machine, _ int64) float64 {
			return float64(m.Store.SyncLatency)
		}},
		{"log syncs", func(m *engine.Meter) int64 { return m.LogSyncs }, func(m *hw.Machine, _ int64) float64 {
			return float64(m.Log.SyncLatency)
		}},
	}
	return cs
}()

// explain compares each transaction type of side with base's.
func explain(label string, base, side *report.Report) []Explanation {
	if base.Run == nil || side.Run == nil || side.Sim == nil {
		return nil
	}
	machine := &side.Sim.Hardware
	ps := int64(side.Database.PageSize)
	var out []Explanation
	for k := range side.Run.Types {
		if k >= len(base.Run.Types) {
			break
		}
		a, b := &base.Run.Types[k], &side.Run.Types[k]
		if a.Count == 0 || b.Count == 0 || a.Time == nil || b.Time == nil {
			continue
		}
		x := Explanation{Side: label, Type: b.Type, BaseMs: a.Time.MeanMs, SideMs: b.Time.MeanMs}
		as, bs := shares(a.Time), shares(b.Time)
		for i, name := range sched.TimeKindNames {
			d := b.Time.MeanMs*bs[i]/100 - a.Time.MeanMs*as[i]/100
			if math.Abs(d) >= 0.0005 {
				x.Shares = append(x.Shares, ShareDelta{Share: name, DeltaMs: round(d, 3)})
			}
		}
		slices.SortStableFunc(x.Shares, func(p, q ShareDelta) int { return cmpAbs(q.DeltaMs, p.DeltaMs) })
		for _, c := range counters {
			va := float64(c.value(&a.Sum)) / float64(a.Count)
			vb := float64(c.value(&b.Sum)) / float64(b.Count)
			d := vb - va
			if math.Abs(d) < 0.005 || math.Abs(d) < 0.02*math.Max(math.Abs(va), math.Abs(vb)) {
				continue
			}
			x.Counters = append(x.Counters, CounterDelta{Counter: c.name, Base: round(va, 2), Side: round(vb, 2),
				AccountsMs: round(d*c.price(machine, ps)/1e6, 4)})
		}
		slices.SortStableFunc(x.Counters, func(p, q CounterDelta) int {
			if c := cmpAbs(q.AccountsMs, p.AccountsMs); c != 0 {
				return c
			}
			return cmpAbs(q.Side-q.Base, p.Side-p.Base)
		})
		if len(x.Counters) > 5 {
			x.Counters = x.Counters[:5]
		}
		out = append(out, x)
	}
	return out
}

// shares lists t's shares in the order of sched.TimeKindNames.
func shares(t *report.TimeShares) [sched.NumTimeKinds]float64 {
	return [sched.NumTimeKinds]float64{t.CPU, t.BufferPool, t.RemoteTier, t.Store, t.Log, t.LockWait, t.Queueing}
}

func cmpAbs(a, b float64) int {
	switch a, b := math.Abs(a), math.Abs(b); {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// describeTx names the organization, isolation level and lock release
// the sides run with where a side does not choose its own.
func (p *Params) describeTx() string {
	org := "clustered unless the side says"
	if p.Org != engine.OrgDefault {
		org = p.Org.String() + " unless the side says"
	}
	iso := "repeatable-read"
	if p.Isolation != engine.IsolationDefault {
		iso = p.Isolation.String()
	}
	rel := "each organization's (early in clustered, as InnoDB; after the commit is durable in the heaps, as PostgreSQL)"
	switch p.EarlyLockRelease {
	case engine.EarlyRelease:
		rel = "early (before the commit is durable)"
	case engine.LateRelease:
		rel = "late (after the commit is durable)"
	}
	return fmt.Sprintf("organization %s, isolation %s, lock release %s", org, iso, rel)
}

// WriteTable prints the result: the question and expectation, the sides
// side by side, the explanations, the verdict and the context.
func (r *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "experiment %s: %s\n", r.Name, r.Question)
	fmt.Fprintf(&b, "expects: %s\n", r.Expect)
	p := &r.Params
	fmt.Fprintf(&b, "simulated: %d warehouse(s)%s, %d terminals, %v measured after %v, seed %d\n",
		p.Warehouses, report.ScaleNote(p.Scale.String()), p.Terminals, p.Duration, p.Warmup, p.Seed)
	fmt.Fprintf(&b, "every side: %s\n\n", p.describeTx())
	cmp := report.Comparison{Setting: "side", Values: r.Labels, Sides: r.Sides, Title: "side by side (ratios against the first side)"}
	if err := cmp.WriteTable(&b); err != nil {
		return err
	}
	if r.Replay != nil {
		b.WriteString("\n")
		if err := r.Replay.WriteTable(&b); err != nil {
			return err
		}
	}
	if r.Waffle != nil {
		b.WriteString("\npublished against simulated\n")
		if err := r.Waffle.WriteWaffle(&b); err != nil {
			return err
		}
	}
	if len(r.Explanations) > 0 {
		fmt.Fprintf(&b, "\nwhy (modeled mean per transaction; counters per transaction, with the time each accounts for at its unqueued price)\n")
		for _, x := range r.Explanations {
			if len(x.Shares) == 0 && len(x.Counters) == 0 {
				continue
			}
			fmt.Fprintf(&b, "%s against %s, %s: %.3f → %.3f ms (%+.3f)\n", x.Side, x.Base, x.Type, x.BaseMs, x.SideMs, x.SideMs-x.BaseMs)
			if len(x.Shares) > 0 {
				var parts []string
				for _, s := range x.Shares {
					parts = append(parts, fmt.Sprintf("%s %+.3f ms", s.Share, s.DeltaMs))
				}
				fmt.Fprintf(&b, "    time: %s\n", strings.Join(parts, ", "))
			}
			tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
			for _, c := range x.Counters {
				fmt.Fprintf(tw, "    %s\t%.2f → %.2f\t%+.4f ms\n", c.Counter, c.Base, c.Side, c.AccountsMs)
			}
			_ = tw.Flush()
		}
	}
	h := r.Headline
	fmt.Fprintf(&b, "\nheadline: %s %.4g → %.4g (ratio %.3f)\n", h.Figure, h.Base, h.Side, h.Ratio)
	held := "held"
	if !r.Held {
		held = "did NOT hold"
	}
	fmt.Fprintf(&b, "expectation %s: %s\n", held, r.Verdict)
	if r.Context != "" {
		fmt.Fprintf(&b, "context (published, not this engine; the models are not tuned to it): %s\n", r.Context)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// typeOf returns r's report of transaction type k.
func typeOf(r *report.Report, k tpcc.TxType) *report.Type {
	if r.Run == nil || int(k) >= len(r.Run.Types) {
		return &report.Type{}
	}
	return &r.Run.Types[k]
}

// perTx is a counter's average per transaction of type k in r.
func perTx(r *report.Report, k tpcc.TxType, f func(m *engine.Meter) int64) float64 {
	t := typeOf(r, k)
	if t.Count == 0 {
		return 0
	}
	return float64(f(&t.Sum)) / float64(t.Count)
}

func meanMs(r *report.Report, k tpcc.TxType) float64 {
	if t := typeOf(r, k); t.Time != nil {
		return t.Time.MeanMs
	}
	return 0
}

// engineMs is the engine's own share of type k's mean: CPU and buffer
// pool, without waits and queueing.
func engineMs(r *report.Report, k tpcc.TxType) float64 {
	if t := typeOf(r, k); t.Time != nil {
		return t.Time.MeanMs * (t.Time.CPU + t.Time.BufferPool) / 100
	}
	return 0
}

// engineMsPerAttempt is engineMs spread over every attempt of type k,
// the retried ones included: a completed transaction's engine time
// carries its retried attempts' (Type.PerTx), and how many attempts
// fail depends on how the terminals happen to interleave.
func engineMsPerAttempt(r *report.Report, k tpcc.TxType) float64 {
	t := typeOf(r, k)
	if t.Count+t.Retries == 0 {
		return 0
	}
	return engineMs(r, k) * float64(t.Count) / float64(t.Count+t.Retries)
}

func tpmC(r *report.Report) float64 {
	if r.Run == nil {
		return 0
	}
	return r.Run.TpmC
}

func headline(figure string, base, side float64) Headline {
	h := Headline{Figure: figure, Base: round(base, 4), Side: round(side, 4)}
	if base != 0 {
		h.Ratio = round(side/base, 4)
	}
	return h
}
