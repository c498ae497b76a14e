package sim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/sim/internal/simerr"
	"github.com/enginelab/enginelab/sim/report"
	"github.com/enginelab/enginelab/sim/sched"
	"github.com/enginelab/enginelab/tpcc"
)

// ErrBadConfig is wrapped by the errors of a TPCCConfig that cannot run.
// They come before anything is opened or loaded. It is one value with
// hw.ErrBadConfig and replay.ErrBadConfig, so that a job refused for its
// hardware profiles is refused for its configuration too.
var ErrBadConfig = simerr.ErrBadConfig

// ErrAlreadyLoaded means a load was asked of a database that holds the
// TPC-C tables already.
var ErrAlreadyLoaded = errors.New("sim: database already loaded")

// Phases of a TPC-C job: what TPCC does, in this order.
type Phases struct {
	Load  bool // create and load the tables
	Run   bool // run the terminals
	Check bool // the consistency conditions, after the run (or the load)
}

// TPCCConfig is one TPC-C job in real mode: the engine's settings and the
// workload's. The command's flags map onto it one to one.
type TPCCConfig struct {
	Phases Phases
	// Mode is ModeReal (default) or ModeSim: terminals as goroutines in
	// wall time, or as coroutines in virtual time on the
	// modeled machine Hardware names.
	Mode     Mode
	Hardware hw.Spec

	// The workload. Scale is the population's size (the zero value:
	// the specification's full scale). A job without a load takes the
	// stored database's; a Scale other than full that differs from it is
	// refused.
	Warehouses             int
	Scale                  tpcc.Scale
	Terminals              int
	Duration, Warmup       time.Duration
	Profile                tpcc.Profile
	StockLevelNoLowerBound bool
	KeyingAndThink         bool
	Seed                   uint64

	// The engine.
	Org engine.Org
	// ExtraIndexes are secondary indexes the load adds, and
	// WideCustomerKey the width of a varchar it adds to CUSTOMER's primary
	// key (tpcc.LoadConfig).
	ExtraIndexes    map[string][]engine.Index
	WideCustomerKey int
	CountRewrite    bool
	PageSize        int
	PoolSize        int64 // 0: PoolPerWarehouse × Warehouses
	PoolPolicy      cache.PolicyKind
	HeapUpdate      engine.HeapUpdate
	SyncCommit      bool
	// Dir keeps the database in a directory; "" keeps it in memory.
	Dir string
	// Remote is the page tier behind the pool (none by default),
	// RemoteMode where pages enter it (default exclusive), RemoteSize the
	// in-process backends' budget in bytes (0: DefaultRemoteSize;
	// memcached's is the servers' own -m).
	Remote     RemoteSpec
	RemoteMode cache.TierMode
	RemoteSize int64
	// ReadAhead turns on the pool's linear read-ahead.
	ReadAhead bool
	// LoadSpace records the space report right after the load, before
	// the run changes it, in the report's load section (report.Load.Space).
	LoadSpace bool
	// Trace, if not empty, is a file to record the page trace in: every
	// call the pool makes to its remote tier (or, with none, to a tier
	// that keeps nothing), for enginelab tier-replay.
	Trace string

	// MemoryLimit is the memory, in bytes, the job's memory check
	// (CheckMemory) compares its estimate with (--memory-limit); 0: what
	// the process may use, read from the system (the smaller of its
	// cgroup's limit and MemAvailable).
	MemoryLimit int64
	// IgnoreMemoryLimit skips the memory check (--ignore-memory-limit):
	// the job runs whatever its estimate.
	IgnoreMemoryLimit bool
	// InMemoryOnly says the job's caller keeps its databases in memory
	// and takes no --dir (the command's --compare sides, experiments):
	// the memory check's advice then does not offer one.
	InMemoryOnly bool
	// ScaledPool, if not 0, says PoolSize was set to ScaledPool bytes a
	// warehouse (an experiment's default pool, not the user's --pool): the
	// memory check names it as that default, and its advice on fewer
	// warehouses scales the pool with them.
	ScaledPool int64

	// Flags, if not nil, are the command line's settings, every flag
	// with its value, for the report.
	Flags map[string]string
}

// Mode is how a job runs (the README's "Two ways to run the same code").
type Mode string

// Run modes.
const (
	// ModeReal runs terminals as goroutines on this machine's cores, in
	// wall time.
	ModeReal Mode = "real"
	// ModeSim runs them one at a time in virtual time, pricing what the
	// engine did on modeled hardware (sched.Scheduler).
	ModeSim Mode = "sim"
)

// PoolPerWarehouse is the default pool per warehouse: a loaded warehouse
// takes about 110 MiB of pages in any organization, and a run grows ORDERS,
// ORDER_LINE and HISTORY, so the whole database stays in memory for a run
// of minutes (the in-memory default: the engine, not the store, is
// measured).
const PoolPerWarehouse = 256 << 20

// DefaultRemoteSize is the in-process tiers' default budget: Waffle
// Grid's 1 GB memcached.
const DefaultRemoteSize = 1 << 30

// EngineOptions returns the engine's options for c (without the tier,
// which TPCC opens). The engine's memory check is off: the job's own
// (CheckMemory, in Validate) counts what the engine's would and the data.
func (c *TPCCConfig) EngineOptions() *engine.Options {
	o := &engine.Options{Dir: c.Dir, PageSize: c.PageSize, PoolSize: c.PoolSize, Policy: c.PoolPolicy,
		HeapUpdate: c.HeapUpdate, CountRewrite: c.CountRewrite, Commit: engine.NoSyncCommit, TierMode: c.RemoteMode, ReadAhead: c.ReadAhead,
		SkipMemoryCheck: true}
	if o.PoolSize == 0 {
		o.PoolSize = int64(max(1, c.Warehouses)) * PoolPerWarehouse
	}
	if c.SyncCommit {
		o.Commit = engine.SyncCommit
	}
	return o
}

// Validate checks c before anything is opened, its memory estimate last
// (CheckMemory).
func (c *TPCCConfig) Validate() error {
	p := c.Phases
	switch {
	case !p.Load && !p.Run && !p.Check:
		return fmt.Errorf("%w: nothing to do (no phase)", ErrBadConfig)
	case !p.Load && c.Dir == "":
		return fmt.Errorf("%w: a run or a check without a load needs a database directory (--dir)", ErrBadConfig)
	case (p.Load || c.Warehouses != 0) && (c.Warehouses < 1 || c.Warehouses > tpcc.MaxWarehouses):
		return fmt.Errorf("%w: --warehouses %d: want 1 to %d", ErrBadConfig, c.Warehouses, tpcc.MaxWarehouses)
	case p.Run && (c.Terminals < 1 || c.Terminals > 255*max(1, c.Warehouses)):
		return fmt.Errorf("%w: --terminals %d: want 1 to %d (255 per warehouse)", ErrBadConfig, c.Terminals, 255*c.Warehouses)
	case p.Run && c.Duration <= 0:
		return fmt.Errorf("%w: --duration %v: want more than zero", ErrBadConfig, c.Duration)
	case c.Warmup < 0:
		return fmt.Errorf("%w: --warmup %v: want zero or more", ErrBadConfig, c.Warmup)
	case c.RemoteSize < 0:
		return fmt.Errorf("%w: --remote-size %d: want zero or more", ErrBadConfig, c.RemoteSize)
	case c.MemoryLimit < 0:
		return fmt.Errorf("%w: --memory-limit %d: want zero or more", ErrBadConfig, c.MemoryLimit)
	case c.Mode != "" && c.Mode != ModeReal && c.Mode != ModeSim:
		return fmt.Errorf("%w: --mode %s: want real or sim", ErrBadConfig, c.Mode)
	}
	if err := c.Scale.Validate(); err != nil {
		return fmt.Errorf("%w: --scale: %w", ErrBadConfig, err)
	}
	if c.Mode == ModeSim {
		switch c.Remote.Backend {
		case "", "none", "lru", "slru":
		default:
			return fmt.Errorf("%w: --remote %s cannot run in simulated mode: its evictions (ristretto's sampling) or its timing (a real server) are not deterministic; use lru or slru, the deterministic models",
				ErrBadConfig, c.Remote)
		}
		if _, err := c.Hardware.Resolve(); err != nil {
			return err
		}
	}
	if err := c.EngineOptions().Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrBadConfig, err)
	}
	if p.Load && c.Dir != "" {
		// A new database only: a directory that holds files is someone's.
		ents, err := os.ReadDir(c.Dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: --dir %s: %w", ErrBadConfig, c.Dir, err)
		}
		if len(ents) > 0 {
			return fmt.Errorf("%w: --dir %s is not empty: load into a new directory, or use run and check on a loaded one", ErrAlreadyLoaded, c.Dir)
		}
	}
	if !p.Load {
		if ents, err := os.ReadDir(c.Dir); err != nil || len(ents) == 0 {
			return fmt.Errorf("%w: --dir %s holds no database: load one first (enginelab tpcc load --dir %s)", tpcc.ErrNotLoaded, c.Dir, c.Dir)
		}
	}
	return c.CheckMemory()
}

// Hooks let a caller show progress. Every field may be nil.
type Hooks struct {
	// LoadProgress is tpcc.LoadConfig.Progress.
	LoadProgress func(done, total int64)
	// RunBegin is called as the terminals start, with the warm-up and
	// measured time ahead and a function that tells how much of it has
	// passed (virtual time in simulated mode; safe to call from another
	// goroutine); RunEnd when they have stopped.
	RunBegin func(warmup, duration time.Duration, elapsed func() time.Duration)
	RunEnd   func()
}

// TPCC runs the phases of cfg on one database and reports. On an error
// after the work began, the report holds what was done.
func TPCC(ctx context.Context, cfg TPCCConfig, hooks Hooks) (*report.Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !cfg.Phases.Load {
		// The database says how many warehouses: read it first, so that
		// the default pool and the terminal limit follow it.
		l, err := peekLoaded(cfg.EngineOptions())
		if err != nil {
			return nil, err
		}
		if cfg.Warehouses != 0 && cfg.Warehouses != l.Warehouses {
			return nil, fmt.Errorf("%w: --warehouses %d, but the database in %s holds %d", ErrBadConfig, cfg.Warehouses, cfg.Dir, l.Warehouses)
		}
		cfg.Warehouses = l.Warehouses
		if !cfg.Scale.IsFull() && cfg.Scale != l.Scale {
			return nil, fmt.Errorf("%w: --scale %v, but the database in %s was loaded at %v scale", ErrBadConfig, cfg.Scale, cfg.Dir, l.Scale)
		}
		cfg.Scale = l.Scale
		if err := cfg.Validate(); err != nil {
			return nil, err
		}
	}
	rep := newReport(&cfg)
	opts := cfg.EngineOptions()
	pageSize := cfg.PageSize
	if pageSize == 0 {
		pageSize = cache.DefaultPageSize
	}
	size := cfg.RemoteSize
	if size == 0 {
		size = DefaultRemoteSize
	}
	tier, err := openTier(cfg.Remote, size, pageSize)
	if err != nil {
		return nil, fmt.Errorf("%w: --remote %s: %w", ErrBadConfig, cfg.Remote, err)
	}
	realTier := tier != nil
	if cfg.Trace != "" {
		// The page trace records the calls the pool makes to its tier;
		// with no tier, to a tier that keeps nothing, so the stream is
		// the pool's own (misses and evictions), whatever a tier would
		// have answered.
		f, err := os.Create(cfg.Trace)
		if err != nil {
			if tier != nil {
				tier.Close()
			}
			return nil, fmt.Errorf("%w: --trace: %w", ErrBadConfig, err)
		}
		inner := tier
		if inner == nil {
			inner = cache.NewNullTier()
		}
		mode := cfg.RemoteMode
		if mode == "" {
			mode = cache.TierExclusive
		}
		tr := cache.NewTraceTier(inner, f, pageSize, mode)
		defer func() {
			if err := errors.Join(tr.Flush(), f.Close()); err != nil {
				rep.Errors = append(rep.Errors, fmt.Sprintf("page trace %s: %v", cfg.Trace, err))
			}
		}()
		tier = tr
	}
	if tier != nil {
		defer tier.Close()
		opts.Tier = tier
	}
	var sch *sched.Scheduler
	if cfg.Mode == ModeSim {
		machine, err := cfg.Hardware.Resolve()
		if err != nil {
			return nil, err
		}
		sch = sched.New(machine, pageSize, realTier) // a trace's null tier costs nothing
		sch.Install(opts)
		rep.Sim = &report.Sim{Hardware: machine}
	}
	db, err := engine.Open(opts)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if sch != nil {
		sch.Attach(db)
	}

	var loaded tpcc.Loaded
	if cfg.Phases.Load {
		lc := tpcc.LoadConfig{Warehouses: cfg.Warehouses, Scale: cfg.Scale, Seed: cfg.Seed, Org: cfg.Org, Progress: hooks.LoadProgress,
			ExtraIndexes: cfg.ExtraIndexes, WideCustomerKey: cfg.WideCustomerKey}
		if sch != nil {
			// One loader: the pages every row lands in, and so the whole
			// run, then depend on the seed alone.
			lc.Workers = 1
		}
		stats, err := tpcc.Load(ctx, db, lc)
		if err != nil {
			return rep, err
		}
		rep.Load = newLoadReport(&stats)
		if cfg.LoadSpace {
			space, err := db.SpaceReport()
			if err != nil {
				return rep, err
			}
			rep.Load.Space = newSpaceReport(space)
		}
		rep.Host.LoadSeconds, rep.Host.LoadRowsPerSecond = stats.Elapsed.Seconds(), stats.RowsPerSecond
		if sch != nil {
			rep.Load.ElapsedSeconds, rep.Load.RowsPerSecond = 0, 0 // wall-clock: in host only
		}
	}
	if loaded, err = tpcc.ReadLoaded(db); err != nil {
		return rep, err
	}
	if loaded.Org == engine.HeapRowPointer {
		rep.Notes = append(rep.Notes, report.RowPointerNote)
	}
	rep.Database = report.Database{Warehouses: loaded.Warehouses, Scale: loaded.Scale.String(), Org: loaded.Org.String(), LoadSeed: loaded.Seed,
		PageSize: db.Pool().PageSize(), PoolBytes: opts.PoolSize}
	if cfg.Phases.Run {
		rc := tpcc.RunConfig{Warehouses: loaded.Warehouses, Scale: loaded.Scale, Terminals: cfg.Terminals, Duration: cfg.Duration,
			Warmup: cfg.Warmup, Seed: cfg.Seed, LoadConstants: loaded.Constants, Profile: cfg.Profile,
			StockLevelNoLowerBound: cfg.StockLevelNoLowerBound, KeyingAndThink: cfg.KeyingAndThink}
		start := time.Now()
		var stats *tpcc.RunStats
		var elapsed time.Duration
		if sch == nil {
			if hooks.RunBegin != nil {
				hooks.RunBegin(cfg.Warmup, cfg.Duration, func() time.Duration { return time.Since(start) })
			}
			stats, err = tpcc.Run(ctx, db, rc)
			elapsed = time.Since(start)
		} else {
			rc.Env = sch
			from := sch.Elapsed()
			if hooks.RunBegin != nil {
				hooks.RunBegin(cfg.Warmup, cfg.Duration, func() time.Duration { return sch.Progress() - from })
			}
			var terms []*tpcc.Terminal
			if terms, err = tpcc.NewTerminals(db, rc); err == nil {
				errs := sch.RunTPCC(ctx, terms)
				stats, err = tpcc.Collect(ctx, terms, errs)
			}
			elapsed = sch.Elapsed() - from
		}
		if hooks.RunEnd != nil {
			hooks.RunEnd()
		}
		wall := time.Since(start)
		if stats != nil {
			rep.Run = newRunReport(&cfg, stats, elapsed)
			rep.Host.RunSeconds = wall.Seconds()
			if wall > 0 {
				rep.Host.TxPerSecond = float64(stats.Results.Total()) / wall.Seconds()
			}
			if sch != nil {
				fillSim(rep.Sim, sch, elapsed, rep.Run)
				rep.Host.VirtualPerWall = elapsed.Seconds() / wall.Seconds()
			}
		}
		if err != nil {
			return rep, err
		}
	}
	if realTier {
		rep.Tier = newTierReport(&cfg, size, tier, rep.Run)
	}
	if cfg.Phases.Check {
		chk, err := tpcc.Check(db, tpcc.CheckOptions{Fresh: !cfg.Phases.Run && cfg.Phases.Load, Scale: loaded.Scale})
		if err != nil {
			return rep, err
		}
		rep.Check = &chk
	}
	space, err := db.SpaceReport()
	if err != nil {
		return rep, err
	}
	rep.Space = newSpaceReport(space)
	bg := db.Pool().BackgroundMeter()
	rep.Background = &report.Background{ReadAheads: bg.ReadAheads, ReadAheadUnused: bg.ReadAheadUnused,
		StoreReads: bg.StoreReads, StoreWrites: bg.StoreWrites, TierPuts: bg.TierPuts}
	l := db.LogStats()
	rep.Log = &report.Log{Records: l.Records, Bytes: l.Bytes, Syncs: l.Syncs, SyncedCommits: l.SyncedCommits, Checkpoints: l.Checkpoints}
	return rep, nil
}

// peekLoaded opens the stored database of o and reads its load's settings.
func peekLoaded(o *engine.Options) (tpcc.Loaded, error) {
	o.PoolSize = 16 << 20
	db, err := engine.Open(o)
	if err != nil {
		return tpcc.Loaded{}, err
	}
	l, err := tpcc.ReadLoaded(db)
	return l, errors.Join(err, db.Close())
}
