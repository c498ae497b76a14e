package sim

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/tier"
	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim/client"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/tpcc"
)

// ErrInvalidConfig is wrapped by the errors of a TPCCConfig that cannot
// run. They come before anything is opened or loaded. It is
// tpcc.ErrInvalidConfig, one value with hw.ErrInvalidConfig,
// replay.ErrInvalidConfig, calibrate.ErrInvalidConfig and
// experiment.ErrInvalidConfig, so that a job refused for its hardware
// profiles, or for its scale, is refused for its configuration too.
var ErrInvalidConfig = tpcc.ErrInvalidConfig

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
	// DeliveryLimit1 makes the BenchmarkSQL profile's Delivery take the
	// oldest new order with LIMIT 1 (tpcc.RunConfig.DeliveryLimit1).
	DeliveryLimit1 bool
	KeyingAndThink bool
	Seed           uint64

	// The engine.
	Org engine.Org
	// Client, if not nil, turns on the client and server cost layer in
	// simulated mode (--client; package sim/client): each statement the
	// profile's kit sends is priced as the named driver sends it, beside
	// the engine's work, which it does not change. nil (the default): the
	// engine's time alone.
	Client *client.Config
	// ExtraIndexes are secondary indexes the load adds, and
	// WideCustomerKey the width of a varchar it adds to CUSTOMER's primary
	// key (tpcc.LoadConfig).
	ExtraIndexes    map[string][]engine.Index
	WideCustomerKey int
	CountRewrite    bool
	PageSize        int
	PoolSize        int64 // 0: DefaultPoolSize(Warehouses)
	LogSize         int64 // the redo log's capacity (--log-size, engine.Options.LogSize); 0: DefaultLogSize(Warehouses)
	PoolPolicy      cache.PolicyKind
	// PoolPopulate makes the pool's frames resident from when it is
	// created, in the background (--pool-populate,
	// cache.Options.PoolPopulate): the process's memory follows the
	// pool's size, not the run's length.
	PoolPopulate bool
	// MemTableSize and BlockCacheSize are the page store's memtable size
	// (--memtable-size, engine.Options.MemTableSize; 0: 64 MiB with Dir,
	// 16 MiB in memory) and block cache (--block-cache,
	// engine.Options.BlockCacheSize; 0: 8 MiB).
	MemTableSize, BlockCacheSize int64
	HeapUpdate                   engine.HeapUpdate
	SyncCommit                   bool
	// Isolation is the level of the terminals' transactions
	// (--isolation, tpcc.RunConfig.Isolation); IsolationDefault is
	// RepeatableRead, the engine's default.
	Isolation engine.Isolation
	// EarlyLockRelease says whether a commit releases its locks before
	// its log sync or after it (--early-lock-release,
	// engine.Options.EarlyLockRelease); LockReleaseDefault: the
	// organization's, InnoDB's early release for clustered, PostgreSQL's
	// late release for the heap organizations (LockRelease).
	EarlyLockRelease engine.LockRelease
	// HeapVersions says whether the heap-organized tables keep
	// PostgreSQL's row versions (--heap-versions,
	// engine.Options.HeapVersions). The default keeps them, as
	// PostgreSQL does: plain reads under read committed and repeatable
	// read read a snapshot without locks, updates write new versions
	// (HOT when they can), vacuum removes the dead ones.
	// engine.HeapVersionsOff makes single-version heap tables, whose
	// plain reads lock. HeapVersionsOn with the clustered organization is
	// refused (its versions are InnoDB's undo records already;
	// Validate). A job on a stored database without a load takes the
	// stored tables' choice (adoptStored); asking for the other one is
	// refused.
	HeapVersions engine.HeapVersioning
	// Dir keeps the database in a directory; "" keeps it in memory.
	Dir string
	// Remote is the page tier behind the pool (none by default),
	// RemoteMode where pages enter it (default exclusive), RemoteSize the
	// in-process backends' budget in bytes (0: DefaultRemoteSize;
	// memcached's is the servers' own -m).
	Remote     RemoteSpec
	RemoteMode tier.Mode
	RemoteSize int64
	// ReadAhead turns on the pool's linear read-ahead.
	ReadAhead bool
	// ReadAheadLinear is whose linear read-ahead ReadAhead turns on
	// (--read-ahead-linear, cache.Options.ReadAheadLinear): the pool's
	// own (default), MySQL 5.1's built-in InnoDB's ("5.1") or the InnoDB
	// plugin's ("plugin", with ReadAheadThreshold).
	ReadAheadLinear cache.LinearReadAhead
	// ReadAheadThreshold is innodb_read_ahead_threshold
	// (--read-ahead-threshold; 0: 56).
	ReadAheadThreshold int
	// RandomReadAhead turns on MySQL 5.1's random read-ahead
	// (--random-read-ahead, cache.Options.RandomReadAhead).
	RandomReadAhead bool
	// Flushing is who writes dirty pages in the background (--flushing,
	// cache.Options.Flushing): the page cleaner (default) or MySQL 5.1's
	// master thread ("5.1"), which the scheduler drives in simulated
	// mode (cache.Pool.MasterStep).
	Flushing cache.FlushingPolicy
	// Promotion is when the midpoint LRU makes a page young at a touch
	// (--lru-promotion, cache.Options.Promotion): "time" (default,
	// innodb_old_blocks_time), "5.1" (MySQL 5.1's freed-page clock) or
	// "plugin" (the InnoDB plugin's with innodb_old_blocks_time 0).
	Promotion cache.Promotion
	// Waffle is one of Waffle Grid's tier modes (--waffle,
	// cache.Options.Waffle): "lru" (exclusive: SET on the eviction path,
	// DELETE on read-back) or "non-lru" (inclusive: SETs off the
	// foreground path); it sets the tier mode. WaffleSetQueue
	// (--waffle-set-queue) makes lru's SETs asynchronous through a queue
	// of that many pages, sent by a sender the scheduler drives
	// (cache.Pool.SendStep); WaffleKeepOnRead (--waffle-keep-on-read)
	// leaves a page read back in the tier (Waffle Grid's 2008 releases).
	Waffle           cache.WaffleMode
	WaffleSetQueue   int
	WaffleKeepOnRead bool
	// SlabPointerSize is the pointer size, in bytes, of the modeled
	// memcached build (--slab-pointer-size: 4 or 8; 0: 4 for 1.2.5 and
	// 1.3.2, a 32-bit build as Waffle Grid's, 8 for 1.6.18), and
	// SlabMRUPatch Waffle Grid's MRU patch to it (--slab-mru-patch), for
	// the slab model backends (--remote memcached-1.2.5 and the like).
	SlabPointerSize int
	SlabMRUPatch    bool
	// TornPages is the torn-page protection the engine pays for
	// (cache.TornPages; default none): full-page writes (PostgreSQL's)
	// or the doublewrite buffer (InnoDB's), whose batches and syncs the
	// simulator prices on the store device.
	TornPages cache.TornPages
	// IOCapacity is the page cleaner's base rate in page writes a second
	// (cache.Options.IOCapacity, innodb_io_capacity; 0: 200).
	IOCapacity int
	// MaxDirtyPagesPctLWM is the dirty share of the pool, in percent, from
	// which the page cleaner flushes gradually for the pool's sake
	// (cache.Options.MaxDirtyPagesPctLWM, innodb_max_dirty_pages_pct_lwm;
	// 0, the default: only past 90% dirty).
	MaxDirtyPagesPctLWM int
	// Interval is the progress interval (Hooks.Interval hears each; 0:
	// DefaultInterval), on the run's clock. The report's timeline uses it,
	// or a shorter one when the run is short (TimelineStep).
	Interval time.Duration
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
	// and takes no --dir (the command's --compare sides): the memory
	// check's advice then does not offer one.
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

// The default pool (DefaultPoolSize) holds the loaded data and a run's
// growth. A loaded warehouse takes about 110 MiB of pages in any
// organization, so each warehouse gets PoolPerWarehouse. What a run adds
// (ORDERS, ORDER_LINE, HISTORY) follows the transactions the cores run,
// not the warehouses, so the room for it is PoolGrowth once: at about
// 1.1 KiB a transaction, the new pages of some 120,000 transactions,
// after which the oldest order lines, which no transaction reads again,
// leave the pool (a page written back to the store on its way out). W=1
// gets 256 MiB, W=16 2.1 GiB for its 1.7 GiB of loaded pages.
//
// Until 2026-12-06 the default was 256 MiB a warehouse, room for growth
// that grew with the warehouses: W=16 had a 4 GiB pool for 1.7 GiB of
// data, and making its frames resident (PoolPopulate) while the load ran
// was work for frames that 10 s and 30 s runs never filled: a load and a
// 10 ms run took a median of 16.8 s as a whole process against 14.1 s
// with 2,176 MiB (five alternating pairs; system time 5.6 s against
// 1.4 s). Four more pairs, each a load and a 10 s run, gave loads of 9.6
// to 14.0 s against 13.7 to 17.2 s and tpmC means of 323,471 and 327,977,
// inside the machine's spread (the README's "Measured"). PoolPerWarehouse
// was 256 MiB then; it is the loaded data's share now.
const (
	PoolPerWarehouse = 128 << 20
	PoolGrowth       = 128 << 20
)

// DefaultPoolSize is the pool of a job of w warehouses without --pool:
// PoolPerWarehouse a warehouse (at least one) and PoolGrowth.
func DefaultPoolSize(w int) int64 { return int64(max(1, w))*PoolPerWarehouse + PoolGrowth }

// The default redo log (DefaultLogSize) grows with the data, as the pool
// does: half the default pool, 64 MiB a warehouse and 64 MiB once (128
// MiB at W=1, 320 MiB at W=4, 1,088 MiB at W=16), whatever --pool says:
// the cleaner's pressure follows the data the terminals change, and a
// sweep of --pool should not change the log as well. MySQL's sample
// configurations size the log files together at "25%-100% of your buffer
// pool size to avoid unneeded buffer pool flush activity on log file
// overwrite", and its manual says to make them "even as big as the
// buffer pool". The page cleaner writes a page once the log has moved
// far enough past its oldest change (adaptive flushing from a tenth of
// the capacity, the async point at 7/8); with one 96 MiB log at every
// scale (the engine's default, MariaDB's innodb_log_file_size), the more
// warehouses, the fewer changes a page gathers before it is written, and
// the in-memory store's pebble spends the second core on the writes.
//
// Measured on 2026-12-06 (tpcc --terminals 4 --duration 20s
// --sync-commit=false --check=false, alternating runs), W=16 with 96 MiB
// wrote 207,298 to 235,273 pages in a run and ran 257,451 to 309,915
// tpmC (six runs); with 1 GiB, 93,413 to 96,737 pages and 330,588 to
// 394,533 tpmC (five runs), loads of 11.8 to 14.1 s against 12.0 to
// 16.3 s, and a peak RSS of 5.7 GiB against 5.0. W=4 with 320 MiB wrote
// 68,172 and 78,645 pages and ran 351,234 and 376,008 tpmC, against
// 128,628 and 159,778 pages and 267,276 and 331,080 tpmC. At W=1, 128
// MiB against 96 wrote 57,766 to 64,508 pages against 68,878 to 78,131,
// tpmC inside the spread. Larger logs did no better at W=16: 1.5 GiB
// (96 MiB a warehouse) ran 326,196 to 351,687 tpmC with slower loads
// (13.5 to 16.9 s: the log's memory is touched for the first time as
// the load writes it), 2 GiB 335,934 and 352,362, and both took 0.1 to
// 0.5 GiB more memory. (These runs ended with a sharp checkpoint; an
// in-memory job now closes fast, engine.DB.CloseFast, which takes less
// time and memory.) The process's time outside the load and the run
// (its start, and its close, whose sharp checkpoint writes what the
// cleaner left dirty) was 1.4 to 1.9 s with 96 MiB, 3.7 to 4.2 s with
// 1 GiB, 5.7 to 5.9 s with 1.5 GiB and 6.7 to 7.8 s with 2 GiB. In memory
// the log is memory: the estimate counts it whole.
//
// DefaultLogSize is the redo log's capacity for a job of w warehouses
// without --log-size: half of DefaultPoolSize(w).
func DefaultLogSize(w int) int64 { return DefaultPoolSize(w) / 2 }

// DefaultRemoteSize is the in-process tiers' default budget: Waffle
// Grid's 1 GB memcached.
const DefaultRemoteSize = 1 << 30

// EngineOptions returns the engine's options for c (without the tier,
// which TPCC opens). The engine's memory check is off: the job's own
// (CheckMemory, in Validate) counts what the engine's would and the data.
func (c *TPCCConfig) EngineOptions() *engine.Options {
	o := &engine.Options{Dir: c.Dir, PageSize: c.PageSize, Options: cache.Options{PoolSize: c.PoolSize, Policy: c.PoolPolicy, TierMode: c.RemoteMode, ReadAhead: c.ReadAhead,
		TornPages: c.TornPages, IOCapacity: c.IOCapacity, MaxDirtyPagesPctLWM: c.MaxDirtyPagesPctLWM, PoolPopulate: c.PoolPopulate,
		ReadAheadLinear: c.ReadAheadLinear, ReadAheadThreshold: c.ReadAheadThreshold, RandomReadAhead: c.RandomReadAhead,
		Flushing: c.Flushing, Promotion: c.Promotion, Waffle: c.Waffle, WaffleSetQueue: c.WaffleSetQueue, WaffleKeepOnRead: c.WaffleKeepOnRead},
		HeapUpdate: c.HeapUpdate, CountRewrite: c.CountRewrite, Commit: engine.NoSyncCommit, EarlyLockRelease: c.LockRelease(), HeapVersions: c.heapVersioning(),
		LogSize: c.LogSize, MemTableSize: c.MemTableSize, BlockCacheSize: c.BlockCacheSize, SkipMemoryCheck: true}
	if o.PoolSize == 0 {
		o.PoolSize = DefaultPoolSize(c.Warehouses)
	}
	if o.LogSize == 0 {
		o.LogSize = DefaultLogSize(c.Warehouses)
	}
	if c.SyncCommit {
		o.Commit = engine.SyncCommit
	}
	return o
}

// Versioned reports whether the job's heap tables keep row versions: a
// heap organization and HeapVersions not off. A clustered job has no heap
// tables.
func (c *TPCCConfig) Versioned() bool {
	return c.HeapVersions.Keep() && c.Org != engine.Clustered && c.Org != engine.OrgDefault
}

// heapVersioning is the engine's HeapVersions for the job: off when no
// table of the job can be a versioned heap (the clustered organization),
// so that no vacuum actor is scheduled for it.
func (c *TPCCConfig) heapVersioning() engine.HeapVersioning {
	if c.Org == engine.Clustered || c.Org == engine.OrgDefault {
		return engine.HeapVersionsOff
	}
	return c.HeapVersions
}

// LockRelease is the job's lock release, its default resolved: the
// organization's (engine.DefaultLockRelease).
func (c *TPCCConfig) LockRelease() engine.LockRelease {
	if c.EarlyLockRelease != engine.LockReleaseDefault {
		return c.EarlyLockRelease
	}
	return engine.DefaultLockRelease(c.Org)
}

// IsolationLevel is the terminals' level, its default resolved
// (RepeatableRead, the engine's and InnoDB's default).
func (c *TPCCConfig) IsolationLevel() engine.Isolation {
	if c.Isolation == engine.IsolationDefault {
		return engine.RepeatableRead
	}
	return c.Isolation
}

// Validate checks c before anything is opened, its memory estimate last
// (CheckMemory).
func (c *TPCCConfig) Validate() error {
	p := c.Phases
	if err := c.validateClient(); err != nil {
		return err
	}
	switch {
	case c.HeapVersions > engine.HeapVersionsOff:
		return fmt.Errorf("sim: %w: heap versioning %d", ErrInvalidConfig, c.HeapVersions)
	case c.HeapVersions == engine.HeapVersionsOn && (c.Org == engine.Clustered || c.Org == engine.OrgDefault && p.Load):
		// Without a load the default organization is the stored one,
		// which adoptStored checks.
		return fmt.Errorf("sim: %w: --heap-versions needs a heap organization (heap-rowptr or heap-pk): clustered tables keep their versions in undo already", ErrInvalidConfig)
	case !p.Load && !p.Run && !p.Check:
		return fmt.Errorf("sim: %w: nothing to do (no phase)", ErrInvalidConfig)
	case !p.Load && c.Dir == "":
		return fmt.Errorf("sim: %w: a run or a check without a load needs a database directory (--dir)", ErrInvalidConfig)
	case (p.Load || c.Warehouses != 0) && (c.Warehouses < 1 || c.Warehouses > tpcc.MaxWarehouses):
		return fmt.Errorf("sim: %w: --warehouses %d: want 1 to %d", ErrInvalidConfig, c.Warehouses, tpcc.MaxWarehouses)
	case p.Run && (c.Terminals < 1 || c.Terminals > 255*max(1, c.Warehouses)):
		return fmt.Errorf("sim: %w: --terminals %d: want 1 to %d (255 per warehouse)", ErrInvalidConfig, c.Terminals, 255*c.Warehouses)
	case p.Run && c.Duration <= 0:
		return fmt.Errorf("sim: %w: --duration %v: want more than zero", ErrInvalidConfig, c.Duration)
	case c.Warmup < 0:
		return fmt.Errorf("sim: %w: --warmup %v: want zero or more", ErrInvalidConfig, c.Warmup)
	case c.RemoteSize < 0:
		return fmt.Errorf("sim: %w: --remote-size %d: want zero or more", ErrInvalidConfig, c.RemoteSize)
	case c.SlabPointerSize != 0 && c.SlabPointerSize != 4 && c.SlabPointerSize != 8:
		return fmt.Errorf("sim: %w: --slab-pointer-size %d: want 4 (a 32-bit build) or 8", ErrInvalidConfig, c.SlabPointerSize)
	case (c.SlabPointerSize != 0 || c.SlabMRUPatch) && !isSlab(c.Remote.Backend):
		return fmt.Errorf("sim: %w: --slab-pointer-size and --slab-mru-patch need a memcached model (--remote memcached-1.2.5, memcached-1.3.2 or memcached-1.6.18), not %s", ErrInvalidConfig, c.Remote)
	case c.MemoryLimit < 0:
		return fmt.Errorf("sim: %w: --memory-limit %d: want zero or more", ErrInvalidConfig, c.MemoryLimit)
	case c.Interval < 0:
		return fmt.Errorf("sim: %w: --interval %v: want more than zero", ErrInvalidConfig, c.Interval)
	case c.Mode != "" && c.Mode != ModeReal && c.Mode != ModeSim:
		return fmt.Errorf("sim: %w: --mode %s: want real or sim", ErrInvalidConfig, c.Mode)
	case c.Isolation > engine.Serializable:
		return fmt.Errorf("sim: %w: --isolation %v: want read-committed, repeatable-read or serializable", ErrInvalidConfig, c.Isolation)
	}
	// The store's sizes, checked alone first so that the error names
	// the flag.
	if err := (&engine.Options{MemTableSize: c.MemTableSize}).Validate(); err != nil {
		return fmt.Errorf("sim: %w: --memtable-size: %w", ErrInvalidConfig, err)
	}
	if err := (&engine.Options{BlockCacheSize: c.BlockCacheSize}).Validate(); err != nil {
		return fmt.Errorf("sim: %w: --block-cache: %w", ErrInvalidConfig, err)
	}
	if err := c.Scale.Validate(); err != nil {
		return fmt.Errorf("sim: %w: --scale: %w", ErrInvalidConfig, err)
	}
	if c.Mode == ModeSim {
		switch c.Remote.Backend {
		case "", "none", "lru", "slru", slabBackend125, slabBackend132, slabBackend1618:
		default:
			return fmt.Errorf("sim: %w: --remote %s cannot run in simulated mode: its evictions (ristretto's sampling) or its timing (a real server) are not deterministic; use lru or slru, the deterministic models, or a memcached model (memcached-1.2.5, memcached-1.3.2, memcached-1.6.18)",
				ErrInvalidConfig, c.Remote)
		}
		if _, err := c.Hardware.Resolve(); err != nil {
			return err
		}
	}
	if isSlab(c.Remote.Backend) {
		if err := c.SlabParams(c.remoteSize(), nil).Validate(); err != nil {
			return fmt.Errorf("sim: %w: --remote %s: %w", ErrInvalidConfig, c.Remote, err)
		}
	}
	if err := c.EngineOptions().Validate(); err != nil {
		return fmt.Errorf("sim: %w: %w", ErrInvalidConfig, err)
	}
	if p.Load && c.Dir != "" {
		// A new database only: a directory that holds files is someone's.
		ents, err := os.ReadDir(c.Dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("sim: %w: --dir %s: %w", ErrInvalidConfig, c.Dir, err)
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

// validateClient checks the cost layer's settings: simulated mode only, a
// known personality, prices in range.
func (c *TPCCConfig) validateClient() error {
	if c.Client == nil {
		return nil
	}
	if c.Mode != ModeSim {
		return fmt.Errorf("sim: %w: --client prices statements on modeled hardware: it needs --mode sim", ErrInvalidConfig)
	}
	if _, err := client.Lookup(c.Client.Personality); err != nil {
		return fmt.Errorf("sim: %w: --client: %w", ErrInvalidConfig, err)
	}
	if c.Client.Params != nil {
		if err := c.Client.Params.Validate(); err != nil {
			return fmt.Errorf("sim: %w: --client: %w", ErrInvalidConfig, err)
		}
	}
	if s := c.Client.Settings; s.FetchSize < 0 || s.PrepareThreshold < 0 {
		return fmt.Errorf("sim: %w: --client: fetch size and prepare threshold must not be negative", ErrInvalidConfig)
	}
	return nil
}
