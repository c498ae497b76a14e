package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/tier"
	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim"
	"github.com/enginelab/enginelab/sim/client"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/sim/report"
	"github.com/enginelab/enginelab/sim/report/html"
	"github.com/enginelab/enginelab/tpcc"
)

// choice is a flag whose value is one of a fixed list; a bad value is
// rejected by the flag package with the list in the message.
type choice struct {
	value   string
	choices []string
}

func (c *choice) String() string { return c.value }

func (c *choice) Set(s string) error {
	if !slices.Contains(c.choices, s) {
		return fmt.Errorf("want one of %s", strings.Join(c.choices, ", "))
	}
	c.value = s
	return nil
}

// size is a byte-count flag with units: 64MiB, 1GiB, 512MB, 1048576.
type size struct{ n int64 }

func (s *size) String() string {
	if s.n == 0 {
		return "0"
	}
	return strings.ReplaceAll(humanize.IBytes(uint64(s.n)), " ", "")
}

func (s *size) Set(v string) error {
	n, err := humanize.ParseBytes(v)
	if err != nil || n > 1<<50 {
		return fmt.Errorf("want a size such as 64MiB, 1GiB or 1048576 (0 for the default)")
	}
	s.n = int64(n)
	return nil
}

// remote is --remote: a tier backend, parsed by sim.ParseRemote.
type remote struct{ spec sim.RemoteSpec }

func (r *remote) String() string { return r.spec.String() }

func (r *remote) Set(s string) error {
	spec, err := sim.ParseRemote(s)
	if err != nil {
		return fmt.Errorf("want one of %s", sim.RemoteBackends)
	}
	r.spec = spec
	return nil
}

// tpccFlags are the flags of one tpcc subcommand.
type tpccFlags struct {
	fs  *flag.FlagSet
	sub string

	warehouses, terminals, pageSize int
	duration, warmup                time.Duration
	seed                            uint64
	org, profile, policy, heapUpd   choice
	scale                           choice
	pool, remoteSize, memoryLimit   size
	logSize                         size
	memtableSize, blockCache        size
	poolPopulate                    bool
	ignoreMemoryLimit               bool
	remote                          remote
	remoteMode, readAhead, mode     choice
	tornPages, isolation, lockRel   choice
	// Waffle Grid and MySQL 5.1: memcached tier modes, slab model, read-ahead and flushing.
	waffle, raLinear, flushing, promotion        choice
	waffleQueue, raThreshold                     int
	slabPtr                                      int
	waffleKeep, randomRA, slabMRU                bool
	cores, ioCapacity, dirtyLWM                  int
	cpu, storeDev, logDev, network               string
	profiles, trace, cpuProfile                  string
	client                                       string
	countRewrite, stockNoLower                   bool
	keyingThink, syncCommit, check, heapVersions bool
	dir, out, null, compare                      string
	schema                                       choice
	asJSON, quiet                                bool
	// Output: --html FILE, --steps, --interval (and whether it was given).
	html     string
	steps    bool
	interval time.Duration
}

// The subcommands and what they do.
var subcommands = map[string]struct {
	phases sim.Phases
	about  string
}{
	"":       {sim.Phases{Load: true, Run: true, Check: true}, "loads TPC-C into a new database (in memory unless --dir), runs the terminals, checks the consistency conditions and reports"},
	"load":   {sim.Phases{Load: true, Check: true}, "loads a new database into --dir and checks it"},
	"run":    {sim.Phases{Run: true, Check: true}, "runs the terminals on the database in --dir and checks it after"},
	"check":  {sim.Phases{Check: true}, "checks the consistency conditions of the database in --dir (condition 11 is skipped: it holds only before any run)"},
	"export": {sim.Phases{}, "writes every table of the database in --dir as CSV, one file per table, into --out, for the engine's tables or a kit's (--schema), and prints the statements that load them into PostgreSQL and MySQL"},
}

func newTPCCFlags(sub string, stderr io.Writer) *tpccFlags {
	name := "enginelab tpcc"
	if sub != "" {
		name += " " + sub
	}
	f := &tpccFlags{fs: flag.NewFlagSet(name, flag.ContinueOnError), sub: sub}
	fs := f.fs
	fs.SetOutput(stderr)
	load, run := sub == "" || sub == "load", sub == "" || sub == "run"
	if load || run {
		def := 1
		help := "`W`, the number of warehouses"
		if !load {
			def = 0
			help = "`W` the database was loaded with (0: as loaded)"
		}
		fs.IntVar(&f.warehouses, "warehouses", def, help)
		fs.Uint64Var(&f.seed, "seed", 1, "seed of every random choice (the load's population and the terminals' inputs): the same seed, the same work")
	}
	if load {
		f.scale = choice{"full", tpcc.ScaleNames()}
		fs.Var(&f.scale, "scale", "the population: full (the specification's: 100,000 items, 3,000 customers and orders a district) or small (a tenth: 10,000 items, 300 customers and orders a district; the same transactions, for tests and quick trials); stored with the load, which run, check and export follow")
		f.org = choice{"clustered", []string{"clustered", "heap-rowptr", "heap-pk"}}
		fs.Var(&f.org, "org", "table organization: clustered (InnoDB: secondaries carry the primary key), heap-rowptr (PostgreSQL: secondaries carry row pointers), heap-pk (heap, secondaries carry the primary key)")
		fs.BoolVar(&f.heapVersions, "heap-versions", true, "heap-rowptr and heap-pk tables keep PostgreSQL's row versions (HOT updates, a commit log, vacuum), as PostgreSQL does: plain reads under read-committed and repeatable-read read their snapshot without locks, and under repeatable-read a write to a row changed since the snapshot is a serialization failure, retried and counted. false: single-version heap tables, updated as --heap-update says, whose plain reads take shared locks at every level. No effect with --org clustered, whose versions are undo records (=true with it is refused). Stored with the load, which run, check and export follow")
		fs.IntVar(&f.pageSize, "page-size", 16<<10, fmt.Sprintf("page size in bytes, a power of two from %d to %d", page.MinSize, page.MaxSize))
	}
	if load || run {
		f.mode = choice{"real", []string{"real", "sim"}}
		fs.Var(&f.mode, "mode", "real (terminals on this machine's cores, wall time) or sim (one at a time in virtual time, the engine's work priced on modeled hardware: the same seed gives the same report anywhere)")
	}
	if run {
		fs.IntVar(&f.cores, "cores", hw.DefaultCores, "sim: modeled CPU cores")
		fs.StringVar(&f.cpu, "cpu", hw.DefaultCPUName, "sim: CPU cost profile, by name")
		fs.StringVar(&f.storeDev, "store-device", hw.DefaultStore, "sim: the store's device: "+deviceNames())
		fs.StringVar(&f.logDev, "log-device", "", "sim: the redo log's device (default: the store's)")
		fs.StringVar(&f.network, "network", hw.DefaultNetwork, "sim: the network to the remote tier: "+networkNames())
		fs.StringVar(&f.trace, "trace", "", "record the page trace (every call the buffer pool makes to its remote tier, or to a tier that keeps nothing when there is none) in this `file`, for enginelab tier-replay")
		fs.StringVar(&f.profiles, "profiles", "", "sim: a JSON `file` of device, network and CPU profiles that add to or replace the shipped ones (README, \"Simulated mode\")")
		fs.IntVar(&f.terminals, "terminals", 4, "terminals, each bound to a home warehouse and district (at most 255 per warehouse)")
		fs.DurationVar(&f.duration, "duration", 30*time.Second, "measured interval")
		fs.DurationVar(&f.warmup, "warmup", 0, "workload run before the measured interval, not measured")
		f.profile = choice{"optimized", []string{"optimized", "sysbench", "benchmarksql"}}
		fs.Var(&f.profile, "profile", "client access profile: optimized (count(*), LIMIT 1), sysbench (count(c_id) then the rows; LIMIT 1), benchmarksql (the c_id list, then the row; Delivery reads every new order)")
		fs.StringVar(&f.client, "client", "", "sim: price the client and server layer as a driver sends the profile's kit's statements: `personality[,setting...]`, personality mysql-jdbc, mariadb-connector or pgjdbc, settings defaults, prepared, plan-cache, fetch-size=N, cursor-fetch, batch, rewrite-batched, bulk, prepare-threshold=N, c-client (default: off, the engine's time alone)")
		fs.BoolVar(&f.stockNoLower, "stocklevel-no-lower-bound", false, "Stock-Level scans its district's order lines without the lower bound on ol_o_id (the optimizer bug)")
		fs.BoolVar(&f.keyingThink, "keying-think", false, "wait the specification's keying and think times (gives the efficiency figure; off: throughput runs)")
		fs.DurationVar(&f.interval, "interval", 0, "print a progress line per transaction type every `interval` of the run's clock (virtual in sim mode), and a summary at the end (default 10s, and only when standard output is a terminal and --json is not given; given, always: on standard error with --json)")
		fs.BoolVar(&f.steps, "steps", false, "add each transaction type's steps (its engine calls: count, latency and node visits) to the table report (the JSON and HTML reports always have them)")
		fs.StringVar(&f.html, "html", "", "also write the report as one self-contained HTML `file` with charts (no script or font fetched; printable)")
		f.isolation = choice{"repeatable-read", []string{"read-committed", "repeatable-read", "serializable"}}
		fs.Var(&f.isolation, "isolation", "the terminals' isolation level: repeatable-read (InnoDB's default: plain reads of clustered tables read one snapshot without locks, FOR UPDATE reads and writes lock), serializable (strict two-phase locking, reads take shared locks) or read-committed (a snapshot per statement); heap tables keep PostgreSQL's row versions (--heap-versions), and their plain reads under read-committed and repeatable-read read their snapshot without locks too")
		f.lockRel = choice{"", []string{"true", "false"}}
		fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the run phase (warm-up and measured interval, not the load or the check) to this `file`, for go tool pprof")
		fs.Var(&f.lockRel, "early-lock-release", "true: a commit releases its locks and becomes visible before its log sync (InnoDB); false: after it (PostgreSQL); empty, the default: the organization's (true for clustered, false for the heap organizations). Both are crash-safe: a read-only commit waits for the log to be durable up to the commits made visible before it")
	}
	if sub != "export" {
		fs.BoolVar(&f.countRewrite, "count-rewrite", false, "the engine counts count(col) of a NOT NULL column as count(*)")
		fs.Var(&f.pool, "pool", "buffer pool size, such as 64MiB or 2GiB (0: 128MiB per warehouse and 128MiB for the run's growth)")
		fs.BoolVar(&f.poolPopulate, "pool-populate", true, "make the buffer pool's frames resident from when it is created (Percona Server's innodb_buffer_pool_populate; a goroutine backs them while the work starts), so that the process's memory follows --pool, not the data read or the run's length; false: as pages fill them")
		fs.Var(&f.memtableSize, "memtable-size", "the store's memtable size, such as 32MiB: page writes gather there before pebble flushes them, and it takes up to twice this (0: 64MiB with --dir, 16MiB in memory; 1MiB to 4GiB)")
		fs.Var(&f.blockCache, "block-cache", "the store's own block cache, such as 8MiB (0: 8MiB; the buffer pool is the cache being measured)")
		fs.Var(&f.logSize, "log-size", "the redo log's capacity, such as 48MiB: its segment files in the database directory's redo/, an eighth of it each, at most 64MiB (innodb_log_file_size; 0: 64MiB a warehouse and 64MiB, half the default pool: 128MiB at W1, 1088MiB at W16)")
		f.policy = choice{"midpoint", []string{"midpoint", "lru"}}
		fs.Var(&f.policy, "pool-policy", "buffer pool eviction: midpoint (InnoDB's old and young sublists) or lru")
		f.heapUpd = choice{"in-place", []string{"in-place", "new-version"}}
		fs.Var(&f.heapUpd, "heap-update", "heap row updates: in-place (where the row still fits) or new-version (a new row pointer and new index entries, PostgreSQL without HOT)")
		fs.Var(&f.remote, "remote", "remote page tier behind the buffer pool: "+sim.RemoteBackends+" (default none)")
		f.remoteMode = choice{"exclusive", []string{"exclusive", "inclusive"}}
		fs.Var(&f.remoteMode, "remote-mode", "where pages enter the tier: exclusive (evicted pages; a page read back leaves it) or inclusive (pages read from the store, and write-backs)")
		fs.Var(&f.remoteSize, "remote-size", "the in-process tier's budget, such as 1GiB (0: 1GiB; memcached's is the servers' own -m)")
		f.readAhead = choice{"on", []string{"on", "off"}}
		fs.Var(&f.readAhead, "read-ahead", "linear read-ahead, as InnoDB's (56 of an extent's 64 pages touched in order read the next extent): on or off")
		f.raLinear = choice{"pool", []string{"pool", "5.1", "plugin"}}
		fs.Var(&f.raLinear, "read-ahead-linear", "whose linear read-ahead --read-ahead turns on: pool (this pool's own), 5.1 (MySQL 5.1's built-in InnoDB: 24 of a 64-page area accessed, at its border page) or plugin (the InnoDB plugin's: --read-ahead-threshold of an area accessed in order)")
		fs.IntVar(&f.raThreshold, "read-ahead-threshold", 0, "innodb_read_ahead_threshold, 0 to 64 (0: 56)")
		fs.BoolVar(&f.randomRA, "random-read-ahead", false, "MySQL 5.1's random read-ahead: a miss in an area with 13 recently used pages reads the rest of it (the InnoDB plugin removed it)")
		f.flushing = choice{"cleaner", []string{"cleaner", "5.1"}}
		fs.Var(&f.flushing, "flushing", "who writes dirty pages in the background: cleaner (the page cleaner) or 5.1 (MySQL 5.1's built-in InnoDB: the master thread, 100 pages a second past 90% dirty and a checkpoint every ten seconds, and foreground threads writing from the LRU's end)")
		f.promotion = choice{"time", []string{"time", "5.1", "plugin"}}
		fs.Var(&f.promotion, "lru-promotion", "when the midpoint LRU makes a page young at a touch: time (an old page 1 s after its read: innodb_old_blocks_time, MySQL 5.6's default), 5.1 (any page once 1 + pool pages/1024 pages left the pool since it last moved: MySQL 5.1's built-in InnoDB) or plugin (any page once a quarter of the young sublist left: the InnoDB plugin's with innodb_old_blocks_time 0)")
		f.waffle = choice{"none", []string{"none", "lru", "non-lru"}}
		fs.Var(&f.waffle, "waffle", "Waffle Grid's tier mode: none (--remote-mode's), lru (exclusive: an evicted page SET on the evicting thread's path, DELETEd from the tier when read back) or non-lru (inclusive: SET after every store read and write, off the foreground path)")
		fs.IntVar(&f.waffleQueue, "waffle-set-queue", 0, "with --waffle lru, queue up to this many evicted pages for an asynchronous sender instead of SETting them on the eviction path (0: synchronous)")
		fs.BoolVar(&f.waffleKeep, "waffle-keep-on-read", false, "with --waffle lru, leave a page read back in the tier (Waffle Grid's 2008 releases) instead of deleting it")
		fs.IntVar(&f.slabPtr, "slab-pointer-size", 0, "the modeled memcached build's pointer size in bytes, 4 or 8 (0: 4 for memcached-1.2.5 and memcached-1.3.2, as Waffle Grid's 32-bit build; 8 for memcached-1.6.18)")
		fs.BoolVar(&f.slabMRU, "slab-mru-patch", false, "Waffle Grid's MRU patch to the modeled memcached: a GET hit moves the item to the eviction end of its LRU")
		f.tornPages = choice{"none", []string{"none", "full-page-writes", "doublewrite"}}
		fs.Var(&f.tornPages, "torn-pages", "torn-page protection the engine pays for (the store writes pages atomically, so it protects nothing here): none, full-page-writes (PostgreSQL's: the first change to a page after a checkpoint logs the whole page) or doublewrite (InnoDB's doublewrite buffer: each batch of page writes goes to a doublewrite file of 128 page slots, synced, before the pages are written in place)")
		fs.IntVar(&f.ioCapacity, "io-capacity", 200, "the page cleaner's base rate, in page writes a second (innodb_io_capacity; at least 100): the adaptive flushing's percentages are of it, and it caps at the larger of 2000 and twice it")
		fs.IntVar(&f.dirtyLWM, "max-dirty-pages-pct-lwm", 0, "the dirty share of the pool, in percent, from which the page cleaner flushes gradually (innodb_max_dirty_pages_pct_lwm; 0, MariaDB's and MySQL 5.7's default: a full --io-capacity only past 90% dirty; MySQL 8.0's is 10)")
		fs.BoolVar(&f.syncCommit, "sync-commit", true, "a commit waits for the redo log's sync (innodb_flush_log_at_trx_commit=1); false: it does not")
		fs.BoolVar(&f.check, "check", true, "check the consistency conditions at the end")
		fs.BoolVar(&f.asJSON, "json", false, "print the report as one JSON document")
		fs.BoolVar(&f.quiet, "quiet", false, "no progress bars")
		fs.Var(&f.memoryLimit, "memory-limit", "the memory the job may use, such as 8GiB: a job whose estimate (the store in memory, the pool, the remote tier) is larger is refused before it loads (0: this process's cgroup limit, else the machine's available memory)")
		fs.BoolVar(&f.ignoreMemoryLimit, "ignore-memory-limit", false, "run even if the memory estimate is larger than --memory-limit")
	}
	dirHelp := "database directory (required)"
	if sub == "" {
		dirHelp = "keep the database in this new directory (default: in memory)"
		fs.StringVar(&f.compare, "compare", "", "run the same workload under several settings and print them side by side: `SETTING[=V1,V2,...]`, such as org, profile, count-rewrite, pool-policy, heap-update, sync-commit (all their values), or terminals=1,4,8, pool=64MiB,1GiB")
	}
	fs.StringVar(&f.dir, "dir", "", dirHelp)
	if sub == "export" {
		fs.StringVar(&f.out, "out", "", "directory to write the CSV files into (required)")
		schemas := make([]string, len(tpcc.ExportSchemas))
		for i, s := range tpcc.ExportSchemas {
			schemas[i] = string(s)
		}
		f.schema = choice{string(tpcc.SchemaSpec), schemas}
		fs.Var(&f.schema, "schema", "whose tables the files are for: spec (the engine's: the specification's names, h_id, a header), go-tpc (its tables, files and formats) or benchmarksql (BenchmarkSQL 5.0's bmsql_ tables, files and column order)")
		fs.StringVar(&f.null, "null", "", `how NULL is written: "" for PostgreSQL's COPY ... CSV, \N for MySQL's LOAD DATA, NULL for either (default: "" for --schema spec, NULL, as their own CSV writers, for go-tpc and benchmarksql)`)
	}
	// The flag package prints a bad flag's error; the whole usage is for
	// --help only (printHelp).
	fs.Usage = func() {}
	return f
}

// printHelp prints the subcommand's usage and every flag.
func (f *tpccFlags) printHelp(w io.Writer) {
	fmt.Fprintf(w, "usage: %s [flags]\n\n%s %s.\n\nflags:\n", f.fs.Name(), f.fs.Name(), subcommands[f.sub].about)
	f.fs.SetOutput(w)
	f.fs.PrintDefaults()
}

// config turns the flags into a job.
func (f *tpccFlags) config() (sim.TPCCConfig, error) {
	c := sim.TPCCConfig{Phases: subcommands[f.sub].phases, Warehouses: f.warehouses, Terminals: f.terminals,
		Duration: f.duration, Warmup: f.warmup, StockLevelNoLowerBound: f.stockNoLower, KeyingAndThink: f.keyingThink,
		Seed: f.seed, CountRewrite: f.countRewrite, PageSize: f.pageSize, PoolSize: f.pool.n, LogSize: f.logSize.n,
		PoolPopulate: f.poolPopulate, MemTableSize: f.memtableSize.n, BlockCacheSize: f.blockCache.n,
		PoolPolicy: cache.PolicyKind(f.policy.value), SyncCommit: f.syncCommit, HeapVersions: f.versioning(), Dir: f.dir,
		Remote: f.remote.spec, RemoteMode: tier.Mode(f.remoteMode.value), RemoteSize: f.remoteSize.n,
		MemoryLimit: f.memoryLimit.n, IgnoreMemoryLimit: f.ignoreMemoryLimit, InMemoryOnly: f.compare != "",
		ReadAhead:       f.readAhead.value == "on",
		ReadAheadLinear: cache.LinearReadAhead(f.raLinear.value), ReadAheadThreshold: f.raThreshold, RandomReadAhead: f.randomRA,
		Flushing: cache.FlushingPolicy(f.flushing.value), Promotion: cache.Promotion(f.promotion.value), WaffleSetQueue: f.waffleQueue, WaffleKeepOnRead: f.waffleKeep,
		SlabPointerSize: f.slabPtr, SlabMRUPatch: f.slabMRU,
		IOCapacity: f.ioCapacity, MaxDirtyPagesPctLWM: f.dirtyLWM,
		Mode:     sim.Mode(f.mode.value),
		Trace:    f.trace,
		Interval: f.interval,
		Hardware: hw.Spec{Cores: f.cores, CPU: f.cpu, Store: f.storeDev, Log: f.logDev, Network: f.network,
			ProfilesFile: f.profiles},
		Flags: map[string]string{}}
	c.Phases.Check = c.Phases.Check && f.check
	if f.waffle.value != "none" && f.waffle.value != "" {
		c.Waffle = cache.WaffleMode(f.waffle.value)
		if f.fs.Lookup("remote-mode") != nil && !flagSet(f.fs, "remote-mode") {
			c.RemoteMode = "" // the Waffle mode's
		}
	}
	if err := c.TornPages.Set(f.tornPages.value); err != nil {
		return c, err
	}
	if f.heapUpd.value == "new-version" {
		c.HeapUpdate = engine.NewVersion
	}
	if f.org.value != "" {
		org, err := engine.ParseOrg(f.org.value)
		if err != nil {
			return c, err
		}
		c.Org = org
	}
	if f.scale.value != "" {
		sc, err := tpcc.ParseScale(f.scale.value)
		if err != nil {
			return c, fmt.Errorf("sim: %w: --scale: %w", sim.ErrInvalidConfig, err)
		}
		c.Scale = sc
	}
	if f.profile.value != "" {
		p, err := tpcc.ParseProfile(f.profile.value)
		if err != nil {
			return c, err
		}
		c.Profile = p
	}
	if f.client != "" {
		cc, err := client.ParseSpec(f.client)
		if err != nil {
			return c, fmt.Errorf("sim: %w: %w", sim.ErrInvalidConfig, err)
		}
		c.Client = cc
	}
	if f.isolation.value != "" {
		iso, err := engine.ParseIsolation(f.isolation.value)
		if err != nil {
			return c, fmt.Errorf("sim: %w: --isolation: %w", sim.ErrInvalidConfig, err)
		}
		c.Isolation = iso
	}
	switch f.lockRel.value {
	case "true":
		c.EarlyLockRelease = engine.EarlyRelease
	case "false":
		c.EarlyLockRelease = engine.LateRelease
	}
	f.fs.VisitAll(func(fl *flag.Flag) {
		if f.mode.value == "real" && strings.HasPrefix(fl.Usage, "sim:") && fl.Value.String() == fl.DefValue {
			return // a simulator setting left at its default: nothing in a real run
		}
		c.Flags[fl.Name] = fl.Value.String()
	})
	if f.fs.Lookup("cores") != nil && f.cores < 1 {
		return c, fmt.Errorf("sim: %w: --cores %d: want 1 to 1024", sim.ErrInvalidConfig, f.cores)
	}
	if f.sub != "" && f.dir == "" {
		return c, fmt.Errorf("sim: %w: --dir is required", sim.ErrInvalidConfig)
	}
	return c, c.Validate()
}

// comparable lists the settings --compare takes without values, with
// all their values.
var comparable = map[string][]string{
	"org":                       {"clustered", "heap-rowptr", "heap-pk"},
	"profile":                   {"optimized", "sysbench", "benchmarksql"},
	"count-rewrite":             {"false", "true"},
	"pool-policy":               {"midpoint", "lru"},
	"heap-update":               {"in-place", "new-version"},
	"sync-commit":               {"true", "false"},
	"isolation":                 {"serializable", "repeatable-read", "read-committed"},
	"early-lock-release":        {"true", "false"},
	"stocklevel-no-lower-bound": {"false", "true"},
	"remote-mode":               {"exclusive", "inclusive"},
	"read-ahead":                {"on", "off"},
	"torn-pages":                {"none", "full-page-writes", "doublewrite"},
	"remote":                    {"none", "ristretto", "lru", "slru"},
	"scale":                     tpcc.ScaleNames(),
}

// parseCompare splits SETTING[=V1,V2,...] and checks the setting is a flag
// that makes sense to vary.
func parseCompare(fs *flag.FlagSet, spec string) (string, []string, error) {
	name, vals, hasVals := strings.Cut(spec, "=")
	name = strings.TrimLeft(name, "-")
	var ok []string
	fs.VisitAll(func(fl *flag.Flag) {
		switch fl.Name {
		case "compare", "dir", "json", "quiet", "check", "memory-limit", "ignore-memory-limit", "cpuprofile", "html", "steps", "interval":
		default:
			ok = append(ok, fl.Name)
		}
	})
	if !slices.Contains(ok, name) {
		return "", nil, fmt.Errorf("sim: %w: --compare %s: not a setting; want one of %s", sim.ErrInvalidConfig, spec, strings.Join(ok, ", "))
	}
	if !hasVals {
		all, ok := comparable[name]
		if !ok {
			return "", nil, fmt.Errorf("sim: %w: --compare %s: give the values to compare, as %s=V1,V2", sim.ErrInvalidConfig, spec, name)
		}
		return name, all, nil
	}
	values := strings.Split(vals, ",")
	if len(values) < 2 {
		return "", nil, fmt.Errorf("sim: %w: --compare %s: want at least two values", sim.ErrInvalidConfig, spec)
	}
	return name, values, nil
}

func tpccCmd(args []string, stdout, stderr io.Writer) int {
	sub := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub = args[0]
		args = args[1:]
		if _, ok := subcommands[sub]; !ok || sub == "" {
			fmt.Fprintf(stderr, "enginelab tpcc: unknown subcommand %q: want load, run, check or export (or none: load and run in memory)\n", sub)
			return 2
		}
	}
	f := newTPCCFlags(sub, stderr)
	if err := f.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			f.printHelp(stdout)
			return 0
		}
		fmt.Fprintf(stderr, "run '%s --help' for the flags and their values\n", f.fs.Name())
		return 2
	}
	if f.fs.NArg() > 0 {
		fmt.Fprintf(stderr, "enginelab tpcc: unexpected argument %q (flags come as --name=value)\n", f.fs.Arg(0))
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if sub == "export" {
		return export(f, stdout, stderr)
	}
	if f.compare != "" {
		return compare(ctx, f, args, stdout, stderr)
	}
	cfg, err := f.config()
	if err != nil {
		fmt.Fprintf(stderr, "enginelab tpcc: %v\n", err)
		return 2
	}
	lines := f.progress(stdout, stderr, "")
	hooks := f.hooks(stderr, "", lines)
	if f.cpuProfile != "" {
		stop, err := profileRun(&hooks, f.cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "enginelab tpcc: --cpuprofile: %v\n", err)
			return 2
		}
		defer func() {
			if err := stop(); err != nil {
				fmt.Fprintf(stderr, "enginelab tpcc: --cpuprofile: %v\n", err)
			}
		}()
	}
	rep, err := sim.TPCC(ctx, cfg, hooks)
	lines.summary(rep)
	status := printReport(rep, err, f.asJSON, stdout, stderr, func(w io.Writer) error {
		if err := rep.WriteTable(w); err != nil || !f.steps {
			return err
		}
		return rep.WriteSteps(w)
	}, rep)
	if rep != nil && f.html != "" {
		title := "enginelab tpcc"
		if f.sub != "" {
			title += " " + f.sub
		}
		status = max(status, writeHTML(stderr, f.html, &html.Page{Title: title, Report: rep}))
	}
	return status
}

// printReport prints a result (table or JSON) and returns the exit status: 1
// if the job failed or a check did not pass.
func printReport(rep *report.Report, err error, asJSON bool, stdout, stderr io.Writer, table func(io.Writer) error, doc any) int {
	status := 0
	if err != nil {
		fmt.Fprintf(stderr, "enginelab tpcc: %v\n", err)
		status = 1
		if rep == nil {
			// A damaged database is a failure, whatever else the error
			// says: it was not refused for its flags.
			if !errors.Is(err, engine.ErrCorrupt) && (errors.Is(err, sim.ErrInvalidConfig) || errors.Is(err, sim.ErrAlreadyLoaded) || errors.Is(err, tpcc.ErrNotLoaded)) {
				return 2 // refused before any work
			}
			return status
		}
		rep.Errors = append(rep.Errors, err.Error())
	}
	var werr error
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		werr = enc.Encode(doc)
	} else {
		werr = table(stdout)
	}
	if werr != nil {
		fmt.Fprintf(stderr, "enginelab tpcc: %v\n", werr)
		return 1
	}
	if rep != nil && !rep.Passed() {
		status = 1
	}
	return status
}

func compare(ctx context.Context, f *tpccFlags, args []string, stdout, stderr io.Writer) int {
	name, values, err := parseCompare(f.fs, f.compare)
	if err == nil && f.dir != "" {
		err = fmt.Errorf("sim: %w: --compare loads a database per side in memory; it takes no --dir", sim.ErrInvalidConfig)
	}
	if err == nil && f.trace != "" {
		err = fmt.Errorf("sim: %w: --compare runs several sides; record a --trace from one run", sim.ErrInvalidConfig)
	}
	if err == nil && f.cpuProfile != "" {
		err = fmt.Errorf("sim: %w: --compare runs several sides; take a --cpuprofile of one run", sim.ErrInvalidConfig)
	}
	if err != nil {
		fmt.Fprintf(stderr, "enginelab tpcc: %v\n", err)
		return 2
	}
	// Each side is the command line with the setting appended: the flag
	// package checks each value as it would on its own.
	var cfgs []sim.TPCCConfig
	for _, v := range values {
		side := newTPCCFlags("", stderr)
		if err := side.fs.Parse(append(slices.Clone(args), "--"+name+"="+v)); err != nil {
			return 2
		}
		cfg, err := side.config()
		if err != nil {
			fmt.Fprintf(stderr, "enginelab tpcc: --compare %s=%s: %v\n", name, v, err)
			return 2
		}
		delete(cfg.Flags, "compare")
		cfgs = append(cfgs, cfg)
	}
	cmp := &report.Comparison{Setting: name, Values: values}
	status := 0
	for i, cfg := range cfgs {
		label := name + "=" + values[i] + ": "
		lines := f.progress(stdout, stderr, label)
		rep, err := sim.TPCC(ctx, cfg, f.hooks(stderr, label, lines))
		lines.summary(rep)
		if err != nil {
			fmt.Fprintf(stderr, "enginelab tpcc: %s=%s: %v\n", name, values[i], err)
			status = 1
			if rep == nil {
				return status
			}
			rep.Errors = append(rep.Errors, err.Error())
		}
		cmp.Sides = append(cmp.Sides, rep)
		if ctx.Err() != nil {
			break
		}
	}
	if st := printReport(nil, nil, f.asJSON, stdout, stderr, func(w io.Writer) error {
		if err := cmp.WriteTable(w); err != nil || !f.steps {
			return err
		}
		for i, s := range cmp.Sides {
			fmt.Fprintf(w, "\n%s=%s:", name, values[i])
			if err := s.WriteSteps(w); err != nil {
				return err
			}
		}
		return nil
	}, cmp); st != 0 {
		return st
	}
	if f.html != "" {
		if st := writeHTML(stderr, f.html, &html.Page{Title: "enginelab tpcc --compare " + name, Comparison: cmp}); st != 0 {
			return st
		}
	}
	if !cmp.Passed() {
		status = 1
	}
	return status
}

func export(f *tpccFlags, stdout, stderr io.Writer) int {
	if f.dir == "" || f.out == "" {
		fmt.Fprintf(stderr, "enginelab tpcc export: --dir and --out are required\n")
		return 2
	}
	if ents, err := os.ReadDir(f.dir); err != nil || len(ents) == 0 {
		fmt.Fprintf(stderr, "enginelab tpcc export: --dir %s holds no database\n", f.dir)
		return 2
	}
	out, err := filepath.Abs(f.out)
	if err != nil {
		fmt.Fprintf(stderr, "enginelab tpcc export: --out %s: %v\n", f.out, err)
		return 2
	}
	opts := tpcc.ExportConfig{Schema: tpcc.ExportSchema(f.schema.value), NullString: f.null,
		Progress: func(table string, rows int64) { fmt.Fprintf(stderr, "%s: %d rows\n", table, rows) }}
	nullSet := false
	f.fs.Visit(func(fl *flag.Flag) { nullSet = nullSet || fl.Name == "null" })
	if !nullSet && opts.Schema != tpcc.SchemaSpec {
		opts.NullString = "NULL" // as go-tpc's and BenchmarkSQL's own CSV writers
	}
	// The statements first: they check the options as Export does,
	// before the database is opened.
	pg, my, err := tpcc.ExportLoadCommands(out, opts)
	if err != nil {
		fmt.Fprintf(stderr, "enginelab tpcc export: %v\n", err)
		return 2
	}
	db, err := engine.Open(&engine.Options{Dir: f.dir})
	if err != nil {
		fmt.Fprintf(stderr, "enginelab tpcc export: %v\n", err)
		return 1
	}
	defer db.Close()
	if rec := db.Recovery(); rec.Recovered() {
		// The database was not shut down cleanly: say what opening it did.
		fmt.Fprintf(stdout, "recovery: %s\n\n", rec)
	}
	stats, err := tpcc.Export(db, out, opts)
	if err != nil {
		fmt.Fprintf(stderr, "enginelab tpcc export: %v\n", err)
		if errors.Is(err, tpcc.ErrInvalidConfig) || errors.Is(err, tpcc.ErrNotLoaded) {
			return 2 // refused before any file was written
		}
		return 1
	}
	fmt.Fprintf(stdout, "wrote %d rows, %s, into %s in %.1f s\n\n%s\n%s", stats.TotalRows, report.FormatBytes(stats.Bytes), out,
		stats.Elapsed.Seconds(), pg, my)
	return 0
}

// profileRun makes h profile the CPU into a new file at path from the
// run's beginning to its end (inside the hooks h already has). stop
// closes the file; it reports an error of the profile's.
func profileRun(h *sim.Hooks, path string) (stop func() error, err error) {
	file, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	var perr error
	begin, end := h.RunBegin, h.RunEnd
	h.RunBegin = func(warmup, duration time.Duration, elapsed func() time.Duration) {
		perr = pprof.StartCPUProfile(file)
		if begin != nil {
			begin(warmup, duration, elapsed)
		}
	}
	h.RunEnd = func() {
		if end != nil {
			end()
		}
		if perr == nil {
			pprof.StopCPUProfile()
		}
	}
	return func() error { return errors.Join(perr, file.Close()) }, nil
}

// hooks draws progress bars on stderr when it is a terminal, and hands
// the run's intervals to lines (if on: then the run has no bar, which
// would share the terminal with the lines).
func (f *tpccFlags) hooks(stderr io.Writer, label string, lines *progressLines) sim.Hooks {
	var h sim.Hooks
	if lines != nil {
		h.Interval = lines.interval
	}
	file, ok := stderr.(*os.File)
	if f.quiet || !ok || !term.IsTerminal(int(file.Fd())) {
		return h
	}
	var load *progressbar.ProgressBar
	h.LoadProgress = func(done, total int64) {
		if load == nil {
			load = progressbar.NewOptions64(total, progressbar.OptionSetWriter(stderr),
				progressbar.OptionSetDescription(label+"load"), progressbar.OptionShowCount(),
				progressbar.OptionShowIts(), progressbar.OptionSetItsString("rows"),
				progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish(),
				progressbar.OptionSetPredictTime(true))
		}
		_ = load.Set64(done)
		if done == total {
			_ = load.Finish()
		}
	}
	stopRun := make(chan struct{})
	done := make(chan struct{})
	h.RunBegin = func(warmup, duration time.Duration, elapsed func() time.Duration) {
		total := warmup + duration
		bar := progressbar.NewOptions64(int64(total/time.Second), progressbar.OptionSetWriter(stderr),
			progressbar.OptionSetDescription(label+"run"), progressbar.OptionShowCount(),
			progressbar.OptionSetItsString("s"), progressbar.OptionClearOnFinish(),
			progressbar.OptionThrottle(100*time.Millisecond))
		go func() {
			defer close(done)
			t := time.NewTicker(200 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stopRun:
					_ = bar.Finish()
					return
				case <-t.C:
					el := elapsed()
					if el < warmup {
						bar.Describe(label + "warm-up")
					} else {
						bar.Describe(label + "run")
					}
					_ = bar.Set64(int64(min(el, total) / time.Second))
				}
			}
		}()
	}
	h.RunEnd = func() {
		close(stopRun)
		<-done
	}
	if lines != nil {
		h.RunBegin, h.RunEnd = nil, nil
	}
	return h
}

func deviceNames() string  { return strings.Join(sortedKeys(hw.Devices), ", ") }
func networkNames() string { return strings.Join(sortedKeys(hw.Networks), ", ") }

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// versioning is --heap-versions as the job takes it: the default unless
// the command line set it, so that a stored database's choice is adopted
// unless the flag asks for the other one.
func (f *tpccFlags) versioning() engine.HeapVersioning {
	switch {
	case !flagSet(f.fs, "heap-versions"):
		return engine.HeapVersionsDefault
	case f.heapVersions:
		return engine.HeapVersionsOn
	}
	return engine.HeapVersionsOff
}

// flagSet says whether the command line set the flag name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	return set
}
