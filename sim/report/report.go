package report

import (
	"runtime"

	"github.com/enginelab/enginelab/cache/store"
	"github.com/enginelab/enginelab/cache/tier"
	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim/client"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/tpcc"
)

// Report is what a TPC-C job did and measured. Its JSON form is documented
// in the README ("The report"); WriteTable prints the same figures.
type Report struct {
	// Config holds every setting of the job by its flag name, and Flags
	// the command line's own form of them when the job came from the
	// command.
	Config  Config            `json:"config"`
	Flags   map[string]string `json:"flags,omitempty"`
	Version string            `json:"version"` // the module's version (VCS revision when built from a clone)
	Host    Host              `json:"host"`

	Database   Database          `json:"database"`
	Load       *Load             `json:"load,omitempty"`
	Run        *Run              `json:"run,omitempty"`
	Check      *tpcc.CheckReport `json:"check,omitempty"`
	Space      []Space           `json:"space,omitempty"`
	Log        *Log              `json:"log,omitempty"`
	Tier       *Tier             `json:"tier,omitempty"`
	Background *Background       `json:"background,omitempty"`
	// FS is what the database wrote through its filesystem during the
	// load and the run (real mode; simulated mode puts it in Host: pebble
	// writes on its own goroutines, on the host's timing).
	FS *FS `json:"fs,omitempty"`
	// Recovery is what opening a stored database recovered, when it
	// recovered anything (a crash); nil after a clean shutdown.
	Recovery *Recovery `json:"recovery,omitempty"`
	// Purge is the purge of the versions' undo logs over the run.
	Purge *Purge `json:"purge,omitempty"`
	// Vacuum is autovacuum's work on versioned heap tables over the run
	// (nil when no table keeps heap versions).
	Vacuum *Vacuum `json:"vacuum,omitempty"`
	// Sim is simulated mode's own section: the modeled hardware and how
	// busy it was.
	Sim    *Sim     `json:"sim,omitempty"`
	Errors []string `json:"errors,omitempty"`
	// Notes say what a reader must know to compare the figures with other
	// engines' (the isolation the locks give, for one).
	Notes []string `json:"notes"`
}

// IsolationNote is in every report of a run at Serializable (the
// README's "Isolation"); IsolationNoteFor gives the note of each level.
const IsolationNote = "isolation: serializable: strict two-phase locking on rows, plain reads take shared locks (InnoDB's SERIALIZABLE), so lock waits are higher than under repeatable-read, where plain reads are consistent reads"

// IsolationNoteFor is the isolation note of a report on clustered tables
// at level (as engine.Isolation prints it): IsolationNote for
// serializable.
func IsolationNoteFor(level string) string {
	switch level {
	case "read-committed", "repeatable-read":
		return "isolation: " + level + ": plain reads are consistent reads (InnoDB's versions built from undo, no row locks; " +
			map[string]string{"read-committed": "a read view per statement", "repeatable-read": "one read view per transaction"}[level] +
			"), writes and FOR UPDATE reads lock and read the latest version; no gap locks"
	}
	return IsolationNote
}

// HeapVersionsNoteFor is the isolation note of a report on heap tables
// that keep PostgreSQL's row versions (the default; --heap-versions).
func HeapVersionsNoteFor(level string) string {
	switch level {
	case "read-committed", "repeatable-read":
		return "isolation: " + level + ": plain reads are consistent reads without row locks (PostgreSQL's row versions in the heap, read through a snapshot; " +
			map[string]string{"read-committed": "a snapshot per statement", "repeatable-read": "one snapshot per transaction"}[level] +
			"), writes and FOR UPDATE reads lock and read the latest version" +
			map[string]string{"read-committed": "", "repeatable-read": "; a write to a row changed since the snapshot is a serialization failure, retried and counted"}[level] +
			"; no gap locks"
	}
	return IsolationNote
}

// SingleVersionHeapNoteFor is the isolation note of a report on
// single-version heap tables (--heap-versions=false): there is no older
// version to read, so every plain read locks, whatever the level.
func SingleVersionHeapNoteFor(level string) string {
	switch level {
	case "read-committed", "repeatable-read":
		return "isolation: " + level + ": the heap tables are single-version (--heap-versions=false): plain reads take shared row locks, as under serializable, and writes update rows as --heap-update says; no gap locks"
	}
	return IsolationNote
}

// RowPointerNote goes with reports on the row-pointer heap.
const RowPointerNote = "heap-rowptr: an index-only scan is PostgreSQL's best case (every page all-visible, no visibility-map misses)"

// Config is a job's settings (sim.TPCCConfig) in report form.
type Config struct {
	Mode                   string  `json:"mode"` // "real" or "sim"
	Phases                 string  `json:"phases"`
	Warehouses             int     `json:"warehouses"`
	Scale                  string  `json:"scale"` // "full", "small" (tpcc.Scale's String)
	Terminals              int     `json:"terminals"`
	DurationSeconds        float64 `json:"duration_s"`
	WarmupSeconds          float64 `json:"warmup_s"`
	Profile                string  `json:"profile"`
	StockLevelNoLowerBound bool    `json:"stocklevel_no_lower_bound"`
	// DeliveryLimit1 and Client (the --client value's personality and
	// settings) are set only when on.
	DeliveryLimit1  bool   `json:"delivery_limit_1,omitempty"`
	Client          string `json:"client,omitempty"`
	KeyingAndThink  bool   `json:"keying_and_think"`
	Seed            uint64 `json:"seed"`
	Org             string `json:"org"`
	CountRewrite    bool   `json:"count_rewrite"`
	PageSize        int    `json:"page_size"`
	PoolBytes       int64  `json:"pool_bytes"`
	PoolPolicy      string `json:"pool_policy"`
	PoolPopulate    bool   `json:"pool_populate"`
	MemTableBytes   int64  `json:"memtable_bytes"`    // the store's memtable size, default applied
	BlockCacheBytes int64  `json:"block_cache_bytes"` // the store's block cache, default applied
	ReadAhead       bool   `json:"read_ahead"`
	TornPages       string `json:"torn_pages,omitempty"`
	// The page cleaner's settings and the redo log's capacity, defaults
	// applied (0 where the run has no log: a report from before them).
	IOCapacity          int    `json:"io_capacity,omitempty"`
	MaxDirtyPagesPctLWM int    `json:"max_dirty_pages_pct_lwm"`
	LogBytes            int64  `json:"log_size_bytes,omitempty"`
	Remote              string `json:"remote"`
	RemoteMode          string `json:"remote_mode"`
	HeapUpdate          string `json:"heap_update"`
	SyncCommit          bool   `json:"sync_commit"`
	// Isolation is the terminals' level (read-committed,
	// repeatable-read, serializable) and EarlyLockRelease whether a
	// commit releases its locks before its log sync (InnoDB) or after it
	// (PostgreSQL), defaults resolved.
	Isolation        string `json:"isolation"`
	EarlyLockRelease bool   `json:"early_lock_release"`
	// HeapVersions says the heap tables kept row versions (omitted off).
	HeapVersions bool   `json:"heap_versions,omitempty"`
	Dir          string `json:"dir"` // "" in memory
}

// Host says where the job ran and how long it took there: every
// wall-clock figure of a simulated job is here, so that everything outside
// this section is identical for identical inputs.
type Host struct {
	GoVersion string `json:"go_version"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPUs      int    `json:"cpus"`
	// LoadSeconds and LoadRowsPerSecond time the load on this machine.
	LoadSeconds       float64 `json:"load_s,omitempty"`
	LoadRowsPerSecond float64 `json:"load_rows_per_s,omitempty"`
	// RunSeconds is the run's wall time here (warm-up included), and
	// TxPerSecond the transactions it completed per wall second.
	RunSeconds  float64 `json:"run_s,omitempty"`
	TxPerSecond float64 `json:"tx_per_s,omitempty"`
	// VirtualPerWall is simulated seconds per wall second (simulated
	// mode).
	VirtualPerWall float64 `json:"virtual_per_wall,omitempty"`
	// RecoverySeconds is the wall time of a recovery (simulated mode;
	// real mode has it in the recovery section).
	RecoverySeconds float64 `json:"recovery_s,omitempty"`
	// FS is the report's fs section in simulated mode.
	FS *FS `json:"fs,omitempty"`
	// StoreBytes is what an in-memory store's files held at the end of
	// the job (pebble's sstables, MANIFEST and WAL, the redo log's
	// segments): 0 on disk. MaxRSSBytes is the process's peak resident
	// memory so far (getrusage's ru_maxrss; 0 where it cannot be read):
	// the part of it that is not the store follows the pool, the log and
	// the store's memtables and block cache. Both depend on timing, so
	// they are here.
	StoreBytes  int64 `json:"store_bytes,omitempty"`
	MaxRSSBytes int64 `json:"max_rss_bytes,omitempty"`
	// GOMAXPROCS is how many processors Go ran the job on at once (the
	// CPUs above unless the GOMAXPROCS variable set fewer).
	GOMAXPROCS int `json:"gomaxprocs,omitempty"`
	// RunCPUSeconds is the process's CPU time (user and system, from
	// getrusage) over the run's wall time, RunSeconds: the terminals and
	// everything working beside them (the page cleaner, purge, vacuum,
	// pebble's flushes and compactions, the garbage collector). 0 where
	// it cannot be read. RunCoresBusy is RunCPUSeconds / RunSeconds, the
	// processors busy on average: a run that leaves some of its
	// GOMAXPROCS idle while its terminals outnumber them was waiting
	// (for row locks, latches, or a processor to be woken), not short of
	// CPU.
	RunCPUSeconds float64 `json:"run_cpu_s,omitempty"`
	RunCoresBusy  float64 `json:"run_cores_busy,omitempty"`
}

// Database describes the database the job ran on (as loaded, which
// for a run on a stored database may differ from the flags).
type Database struct {
	Warehouses int    `json:"warehouses"`
	Scale      string `json:"scale"` // as stored with the load: "full", "small"
	Org        string `json:"org"`
	LoadSeed   uint64 `json:"load_seed"`
	PageSize   int    `json:"page_size"`
	PoolBytes  int64  `json:"pool_bytes"`
}

// Load is the load's figures.
type Load struct {
	Rows           map[string]int64 `json:"rows"` // by table
	TotalRows      int64            `json:"total_rows"`
	ElapsedSeconds float64          `json:"elapsed_s,omitempty"` // real mode (simulated: host.load_s)
	RowsPerSecond  float64          `json:"rows_per_s,omitempty"`
	LogBytes       int64            `json:"log_bytes"`
	// Space is the database's space as the load left it, before any run
	// (sim.TPCCConfig.LoadSpace); the report's own space section is the
	// job's end.
	Space []Space `json:"space,omitempty"`
}

// Run is the run's figures.
type Run struct {
	Terminals       int     `json:"terminals"`
	MeasuredSeconds float64 `json:"measured_s"` // the measured interval
	WarmupSeconds   float64 `json:"warmup_s"`
	ElapsedSeconds  float64 `json:"elapsed_s"` // time of warm-up and measurement: wall time, or virtual in simulated mode
	// TpmC is New-Order transactions per minute of the measured interval
	// (rolled-back ones count); TxPerMinute counts every type.
	TpmC        float64 `json:"tpmc"`
	TxPerMinute float64 `json:"tx_per_min"`
	// Efficiency is TpmC / (12.86 × W) in percent [5.4.3], only with
	// keying and think times (without them the figure means nothing).
	Efficiency *float64 `json:"efficiency_pct,omitempty"`
	Types      []Type   `json:"types"`
	// AllPerTx averages the meters over every completed transaction,
	// whatever its type (the "all" row of the cost table).
	AllPerTx *MeterAverages `json:"all_per_tx,omitempty"`
	Errors   []string       `json:"errors,omitempty"`
	// Timeline is tpmC over the measured interval, interval by interval.
	Timeline *Timeline `json:"timeline,omitempty"`

	// Total is every type's meters summed (not in the JSON form).
	Total engine.Meter `json:"-"`
}

// Type is one transaction type's figures.
type Type struct {
	Type    string  `json:"type"`
	Count   int64   `json:"count"`
	MixPct  float64 `json:"mix_pct"` // share of all completed transactions
	Retries int64   `json:"retries"`
	// SerializationFailures counts the retries that were serialization
	// failures.
	SerializationFailures int64 `json:"serialization_failures"`
	Rollbacks             int64 `json:"rollbacks"`
	Skipped               int64 `json:"skipped,omitempty"` // Delivery: districts without a new order
	// Latency in milliseconds, from an HDR histogram of microseconds
	// (three significant digits).
	LatencyMs Percentiles `json:"latency_ms"`
	// LatencyDist is the same histogram as a histogram and a percentile
	// curve, for charts.
	LatencyDist *LatencyDist `json:"latency_dist,omitempty"`
	// PerTx averages the meters over the completed transactions (retried
	// attempts included in their cost).
	PerTx MeterAverages `json:"per_tx"`
	// Time splits the mean response time by where it went (simulated
	// mode only).
	Time *TimeShares `json:"time,omitempty"`
	// Steps splits the type into its engine calls (the steps it ran).
	Steps []Step `json:"steps,omitempty"`

	// Sum is the type's meters summed, for explanations (not in the JSON
	// form: PerTx has its averages).
	Sum engine.Meter `json:"-"`
}

// TimeShares is a transaction type's mean response time and its shares,
// in percent, as "OLTP Through the Looking Glass" splits it: engine CPU,
// the buffer pool (its CPU, and waits for pages other terminals or
// read-ahead were still reading), the remote tier (round trips and
// transfers), the store device, the log (syncs, and waits for a group
// sync), lock waits, and queueing for a busy core or device.
type TimeShares struct {
	MeanMs     float64 `json:"mean_ms"`
	CPU        float64 `json:"cpu_pct"`
	BufferPool float64 `json:"buffer_pool_pct"`
	RemoteTier float64 `json:"remote_tier_pct"`
	Store      float64 `json:"store_pct"`
	Log        float64 `json:"log_pct"`
	LockWait   float64 `json:"lock_wait_pct"`
	Queueing   float64 `json:"queueing_pct"`
}

// StoreUse is the store device's busy time by who held it, each in
// percent of the run's virtual time (they add up to Sim.StoreBusyPct).
type StoreUse struct {
	// Reads are the terminals' page reads; Writes their own writes and
	// syncs (dirty victims, 5.1's LRU flushes, flushes for log space, a
	// checkpoint's sync, sorts' temporary files).
	Reads  float64 `json:"reads_pct"`
	Writes float64 `json:"writes_pct"`
	// ReadAhead is read-ahead's reads; Background the asynchronous
	// writers' (the page cleaner or the master thread, sharp checkpoints,
	// doublewrite batches, store syncs); Purge and Vacuum the
	// maintenance actors' requests.
	ReadAhead  float64 `json:"read_ahead_pct"`
	Background float64 `json:"background_pct"`
	Purge      float64 `json:"purge_pct"`
	Vacuum     float64 `json:"vacuum_pct"`
}

// Sim is a simulated job's hardware and how busy its shared
// resources were over the run (warm-up included).
type Sim struct {
	Hardware hw.Machine `json:"hardware"`
	// VirtualSeconds is the run's virtual time, warm-up included.
	VirtualSeconds float64 `json:"virtual_s"`
	// Busy percentages: the cores' (summed over the cores), and each
	// device's and the network's.
	CoresBusyPct   float64 `json:"cores_busy_pct"`
	StoreBusyPct   float64 `json:"store_busy_pct"`
	LogBusyPct     float64 `json:"log_busy_pct"`
	NetworkBusyPct float64 `json:"network_busy_pct"`
	// StoreUse divides StoreBusyPct by who held the store device.
	StoreUse *StoreUse `json:"store_use,omitempty"`
	// Stalls counts waits the scheduler had to break (zero in a sound
	// run; see sched.Scheduler).
	Stalls int64 `json:"stalls,omitempty"`
	// BackgroundWritesPending is how many background requests of the
	// store device (page writes; doublewrite batches' writes and syncs,
	// store syncs) it had not yet served at the end.
	BackgroundWritesPending int64 `json:"background_writes_pending,omitempty"`
	// PostedLRUBatches counts the terminals' LRU batches whose writes
	// were posted to the asynchronous writers (MySQL 5.1's flushing
	// without a doublewrite buffer), and PostWaits the writes whose
	// posting waited for a slot of the simulated AIO's write array.
	PostedLRUBatches int64 `json:"posted_lru_batches,omitempty"`
	PostWaits        int64 `json:"post_waits,omitempty"`
	// CleanerSkips counts page cleaner passes that fell due while the
	// store device still had background writes queued and were skipped
	// (the cleaner waits for its batch to end, as InnoDB's does).
	CleanerSkips int64 `json:"cleaner_skips,omitempty"`
	// CheckpointWaits counts checkpoints that began while the last one's
	// writes were still queued, so that a transaction waited for them.
	CheckpointWaits int64 `json:"checkpoint_waits,omitempty"`
	// Client is the client and server cost layer's section; nil when it
	// is off (TPCCConfig.Client).
	Client *Client `json:"client,omitempty"`
}

// Percentiles of a latency distribution.
type Percentiles struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// LatencyDist is a latency distribution for charts: the histogram's
// counts in bins of a tenth of a decade (bin i holds the latencies in
// (LeMs[i-1], LeMs[i]]), and the latency at the percentiles of
// DistPercentiles.
type LatencyDist struct {
	Buckets     []LatencyBucket     `json:"buckets"`
	Percentiles []LatencyPercentile `json:"percentiles"`
}

// LatencyBucket is one bin of a LatencyDist: the latencies up to LeMs
// milliseconds (above the bin before).
type LatencyBucket struct {
	LeMs  float64 `json:"le_ms"`
	Count int64   `json:"count"`
}

// LatencyPercentile is the latency at a percentile.
type LatencyPercentile struct {
	Pct float64 `json:"pct"`
	Ms  float64 `json:"ms"`
}

// DistPercentiles are the percentiles of a LatencyDist's curve.
var DistPercentiles = []float64{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 97, 98, 99, 99.5, 99.9, 99.95, 99.99, 100}

// MeterAverages are per-transaction averages of the engine's meters.
type MeterAverages struct {
	NodeVisits   float64 `json:"node_visits"`   // B+tree nodes visited, every level and index
	RowFetches   float64 `json:"row_fetches"`   // rows read through a pointer from an index entry
	HeapFetches  float64 `json:"heap_fetches"`  // rows fetched from a heap by row pointer
	RowsExamined float64 `json:"rows_examined"` // index entries or rows looked at
	RowsReturned float64 `json:"rows_returned"` // rows handed to the transaction
	EntriesWrite float64 `json:"index_entries_written"`
	PoolHits     float64 `json:"pool_hits"`
	PoolMisses   float64 `json:"pool_misses"`
	LogBytes     float64 `json:"log_bytes"`
	LockRequests float64 `json:"lock_requests"`
	LockWaits    float64 `json:"lock_waits"`
	PageRequests float64 `json:"page_requests"`
	StoreReads   float64 `json:"store_reads"`
	StoreWrites  float64 `json:"store_writes"`
	// StoreSyncs are the store syncs the transaction made (a fuzzy
	// checkpoint it took, a doublewrite batch of a page it wrote back).
	StoreSyncs float64 `json:"store_syncs"`
	// DoublewriteWrites and DoublewriteBytes are the doublewrite batches
	// of its page writes (--torn-pages doublewrite) and their bytes.
	DoublewriteWrites float64 `json:"doublewrite_writes"`
	DoublewriteBytes  float64 `json:"doublewrite_bytes"`
	TierGets          float64 `json:"tier_gets"`
	TierHits          float64 `json:"tier_hits"`
	HeapRowsScans     float64 `json:"heap_rows_scanned"`
	// Multi-versioning: read views opened, rows read without a lock
	// through one, older versions built from undo records for them
	// (InnoDB's), undo records written (every write's, for rollback and
	// versions), heap-only and other versioned heap updates and heap
	// versions tested (PostgreSQL's), and read-only commits that waited
	// for the commits they may have read to be durable (early lock
	// release with sync commit).
	ReadViews        float64 `json:"read_views"`
	ConsistentReads  float64 `json:"consistent_reads"`
	UndoVersionsRead float64 `json:"undo_versions_read"`
	UndoRecords      float64 `json:"undo_records"`
	HOTUpdates       float64 `json:"hot_updates"`
	NonHOTUpdates    float64 `json:"non_hot_updates"`
	HeapVersionsRead float64 `json:"heap_versions_read"`
	DurableReadWaits float64 `json:"durable_read_waits"`
	// IndexOnlyHeapFetches counts the entries an index-only scan of a
	// versioned heap confirmed in the heap (PostgreSQL's "Heap Fetches":
	// the visibility map did not say the page all-visible), PagesPruned
	// the heap pages pruned on access (heap_page_prune_opt).
	IndexOnlyHeapFetches float64 `json:"index_only_heap_fetches,omitempty"`
	PagesPruned          float64 `json:"pages_pruned,omitempty"`
	// EntriesKilled counts the index entries a scan marked killed after
	// its heap visit found their versions dead to every snapshot
	// (PostgreSQL's kill_prior_tuple): later scans skip them without a
	// heap fetch until vacuum removes them.
	EntriesKilled float64 `json:"index_entries_killed,omitempty"`
	// Sorting (ORDER BY): sorts run, and sorts avoided because an index
	// gave the order (TPC-C's by-name reads through idx_customer_name).
	Sorts        float64 `json:"sorts"`
	SortsAvoided float64 `json:"sorts_avoided"`
}

// Purge is the purge of committed undo logs (the clustered organization's
// versions: InnoDB's history list) over the run.
type Purge struct {
	// Purged counts the undo logs purged during the run (after a commit,
	// or by the purge actor in simulated mode).
	Purged int64 `json:"undo_logs_purged"`
	// HistoryLength is the purge lag at the end of the run: committed
	// undo logs not purged yet (InnoDB's history list length).
	HistoryLength int64 `json:"history_length"`
	// Simulated mode's purge actor: its steps, the logs they purged, and
	// the longest history it met at a step.
	ActorSteps       int64 `json:"actor_steps,omitempty"`
	ActorPurged      int64 `json:"actor_purged,omitempty"`
	MaxHistoryLength int64 `json:"max_history_length,omitempty"`
	// ActorStoreReads and ActorStoreWrites are the store reads and page
	// writes its steps made (undo and index pages missing from the pool;
	// dirty victims written to free a frame): background requests on the
	// store device.
	ActorStoreReads  int64 `json:"actor_store_reads,omitempty"`
	ActorStoreWrites int64 `json:"actor_store_writes,omitempty"`
	// ActorWaits counts its steps that fell due while the last one's
	// store requests were still queued (it is one thread: it waited).
	ActorWaits int64 `json:"actor_waits,omitempty"`
}

// Vacuum is autovacuum's work over the run on the heap tables that keep
// PostgreSQL's row versions (the background goroutine in real mode, the
// scheduler's vacuum actor in simulated mode): engine.Meter's Vacuum
// counters, the run's difference.
type Vacuum struct {
	// Runs counts table passes; Pages the heap pages they scanned,
	// PagesPruned those a prune changed.
	Runs        int64 `json:"runs"`
	Pages       int64 `json:"pages"`
	PagesPruned int64 `json:"pages_pruned"`
	// TuplesRemoved counts the versions whose storage the passes freed,
	// IndexEntriesRemoved the index entries they removed, DeadTuples the
	// dead versions the passes found still on their pages afterwards
	// (summed over the passes).
	TuplesRemoved       int64 `json:"tuples_removed"`
	IndexEntriesRemoved int64 `json:"index_entries_removed"`
	DeadTuples          int64 `json:"dead_tuples_left"`
	// ActorSteps counts the simulated vacuum actor's steps (0 in real
	// mode).
	ActorSteps int64 `json:"actor_steps,omitempty"`
}

// NewVacuum is the Vacuum section of m's Vacuum counters.
func NewVacuum(m *engine.Meter, actorSteps int64) *Vacuum {
	return &Vacuum{Runs: m.VacuumRuns, Pages: m.VacuumPages, PagesPruned: m.VacuumPagesPruned,
		TuplesRemoved: m.VacuumTuplesRemoved, IndexEntriesRemoved: m.VacuumIndexEntriesRemoved,
		DeadTuples: m.VacuumDeadTuples, ActorSteps: actorSteps}
}

// Tier is the remote tier's activity during the run: what the
// transactions asked of it (from their meters) and the backend's own
// counters.
type Tier struct {
	Backend   string `json:"backend"`
	Mode      string `json:"mode"`
	SizeBytes int64  `json:"size_bytes"` // the in-process budget (memcached: the servers' own)
	// HitRate is Hits / Gets of the run's transactions: the share of pool
	// misses the tier answered with a usable page.
	HitRate      float64    `json:"hit_rate"`
	Gets         int64      `json:"gets"`
	Hits         int64      `json:"hits"`
	Misses       int64      `json:"misses"`
	Stale        int64      `json:"stale"`
	Corrupt      int64      `json:"corrupt"`
	Errors       int64      `json:"errors"`
	Puts         int64      `json:"puts"`
	Drops        int64      `json:"drops"`
	Deletes      int64      `json:"deletes"`
	BytesIn      int64      `json:"bytes_in"`
	BytesOut     int64      `json:"bytes_out"`
	BackendStats tier.Stats `json:"backend_stats"`
	// Memcached is a memcached model's own stats (--remote
	// memcached-1.2.5 and the like), in the names of memcached's "stats":
	// its counters over the run (warm-up included), its levels (items,
	// bytes) at the end.
	Memcached *MemcachedStats `json:"memcached,omitempty"`
}

// MemcachedStats are a memcached model's counters, named as memcached's
// "stats" names them.
type MemcachedStats struct {
	Release       string  `json:"release"`
	PointerSize   int     `json:"pointer_size"` // bits
	Threads       int     `json:"threads"`
	LimitMaxbytes int64   `json:"limit_maxbytes"`
	CurrItems     int64   `json:"curr_items"`
	TotalItems    int64   `json:"total_items"`
	Bytes         int64   `json:"bytes"`
	Evictions     int64   `json:"evictions"`
	CmdGet        int64   `json:"cmd_get"`
	CmdSet        int64   `json:"cmd_set"`
	GetHits       int64   `json:"get_hits"`
	GetMisses     int64   `json:"get_misses"`
	DeleteHits    int64   `json:"delete_hits"`
	HitRate       float64 `json:"hit_rate"` // get_hits / cmd_get
}

// Background is the work no transaction waited for, since the
// database was opened (the pool's background meter).
type Background struct {
	ReadAheads      int64 `json:"read_aheads"`       // pages read ahead
	ReadAheadUnused int64 `json:"read_ahead_unused"` // of those, evicted before any use
	StoreReads      int64 `json:"store_reads"`
	StoreWrites     int64 `json:"store_writes"`
	StoreSyncs      int64 `json:"store_syncs"` // checkpoints', and one a doublewrite batch
	TierPuts        int64 `json:"tier_puts"`
	// The doublewrite buffer (--torn-pages doublewrite): its batches, the
	// pages and bytes they wrote, and its syncs (one a batch).
	DoublewriteWrites int64 `json:"doublewrite_writes"`
	DoublewritePages  int64 `json:"doublewrite_pages"`
	DoublewriteBytes  int64 `json:"doublewrite_bytes"`
	DoublewriteSyncs  int64 `json:"doublewrite_syncs"`
	// Read-ahead's decisions (linear, and MySQL 5.1's random: its pages
	// and those never used), and the run's (warm-up included) by table
	// and index.
	ReadAheadTriggers       int64            `json:"read_ahead_triggers,omitempty"`
	RandomReadAheadTriggers int64            `json:"random_read_ahead_triggers,omitempty"`
	RandomReadAheads        int64            `json:"random_read_aheads,omitempty"`
	RandomReadAheadUnused   int64            `json:"random_read_ahead_unused,omitempty"`
	ReadAheadBySpace        []ReadAheadSpace `json:"read_ahead_by_space,omitempty"`
	// MySQL 5.1's master thread (--flushing 5.1): its rounds, the pages
	// of its flush-list batches and its checkpoints.
	MasterRounds         int64 `json:"master_rounds,omitempty"`
	MasterFlushListPages int64 `json:"master_flush_list_pages,omitempty"`
	MasterCheckpoints    int64 `json:"master_checkpoints,omitempty"`
}

// ReadAheadSpace is one table's or index's read-ahead decisions.
type ReadAheadSpace struct {
	Table  string `json:"table"`
	Index  string `json:"index"`
	Linear int64  `json:"linear"`
	Random int64  `json:"random"`
}

// Log is the redo log's activity since the database was opened.
type Log struct {
	Records       int64 `json:"records"`
	Bytes         int64 `json:"bytes"`
	Syncs         int64 `json:"syncs"`
	SyncedCommits int64 `json:"synced_commits"` // commits that waited for durability
	Checkpoints   int64 `json:"checkpoints"`
}

// FS is what the database wrote through its filesystem (engine.FSStats),
// by span.
type FS struct {
	Load *FSSpan `json:"load,omitempty"` // the load, its tables' creation included
	Run  *FSSpan `json:"run,omitempty"`  // the run: warm-up and measured interval
}

// FSSpan is what the database wrote through its filesystem over a span of
// the job, by class of file, beside what the redo log counted and the
// transactions committed over the same span. The span is the whole
// load or run: the writes no transaction waits for (page flushes,
// checkpoints, pebble's flushes and compactions) belong to no transaction
// or type, so the per-transaction figures are the span's totals over its
// commits, whatever their type, warm-up included. Pages still dirty at the
// end of the span are written later, and are not in it.
type FSSpan struct {
	// Commits counts the transactions committed in the span (read-only
	// ones included, rolled-back ones not).
	Commits  int64 `json:"commits"`
	LogBytes int64 `json:"log_bytes"` // the redo log's own counter over the span
	// Classes holds each class's counts: redo (the log's segments), wal
	// (pebble's), sst (pebble's tables, flushes and compactions),
	// pebble_meta (its MANIFEST, OPTIONS and other files), other (the
	// log's checkpoint control file, the store's MANIFEST witness, any
	// other file).
	Classes engine.FSStats `json:"classes"`
	Total   store.FSCounts `json:"total"`
	// LogBytesPerTx and BytesPerTx are per committed transaction (run
	// only).
	LogBytesPerTx float64       `json:"log_bytes_per_tx,omitempty"`
	BytesPerTx    *FSBytesPerTx `json:"fs_bytes_per_tx,omitempty"`
}

// FSBytesPerTx is the bytes written per committed transaction, by class of
// file.
type FSBytesPerTx struct {
	Redo       float64 `json:"redo"`
	WAL        float64 `json:"wal"`
	Tables     float64 `json:"sst"`
	PebbleMeta float64 `json:"pebble_meta"`
	Other      float64 `json:"other"`
	Total      float64 `json:"total"`
}

// NewFSSpan is the span whose writes are fs, with commits transactions
// committed and logBytes logged; perTx adds the per-transaction figures.
func NewFSSpan(fs engine.FSStats, commits, logBytes int64, perTx bool) *FSSpan {
	s := &FSSpan{Commits: commits, LogBytes: logBytes, Classes: fs, Total: fs.Total()}
	if perTx && commits > 0 {
		n := float64(commits)
		s.LogBytesPerTx = float64(logBytes) / n
		s.BytesPerTx = &FSBytesPerTx{Redo: float64(fs.Redo.Bytes) / n, WAL: float64(fs.WAL.Bytes) / n,
			Tables: float64(fs.Tables.Bytes) / n, PebbleMeta: float64(fs.PebbleMeta.Bytes) / n,
			Other: float64(fs.Other.Bytes) / n, Total: float64(s.Total.Bytes) / n}
	}
	return s
}

// Recovery is what opening a stored database recovered
// (engine.RecoveryStats): the redo from the last checkpoint to the log's
// end, the rollback of the transactions left unfinished, and the sharp
// checkpoint after them, each phase's wall time (real mode; simulated
// mode has their sum in host.recovery_s).
type Recovery struct {
	Records       int64  `json:"records"`        // log records redone
	Bytes         int64  `json:"bytes"`          // log scanned: end_lsn − checkpoint_lsn
	CheckpointLSN uint64 `json:"checkpoint_lsn"` // where redo began
	EndLSN        uint64 `json:"end_lsn"`        // where the log ended
	Pages         int64  `json:"pages"`          // page changes in the records: applied + skipped
	PagesApplied  int64  `json:"pages_applied"`  // redone
	PagesSkipped  int64  `json:"pages_skipped"`  // already on their page (its LSN at or past the record's)
	PagesRead     int64  `json:"pages_read"`     // pages read from the store to redo them
	RolledBack    int64  `json:"rolled_back"`    // unfinished transactions rolled back
	// Wall time of the phases.
	RedoSeconds       float64 `json:"redo_s,omitempty"`
	RollbackSeconds   float64 `json:"rollback_s,omitempty"`
	CheckpointSeconds float64 `json:"checkpoint_s,omitempty"`
}

// NewRecovery is the recovery section of s, nil when s recovered nothing.
func NewRecovery(s engine.RecoveryStats) *Recovery {
	if !s.Recovered() {
		return nil
	}
	return &Recovery{Records: s.Records, Bytes: s.Bytes, CheckpointLSN: s.CheckpointLSN, EndLSN: s.EndLSN,
		Pages: s.Pages, PagesApplied: s.PagesApplied, PagesSkipped: s.PagesSkipped, PagesRead: s.PagesRead,
		RolledBack: s.RolledBack, RedoSeconds: s.Redo.Seconds(), RollbackSeconds: s.Rollback.Seconds(),
		CheckpointSeconds: s.Checkpoint.Seconds()}
}

// Space is one index or heap's space.
type Space struct {
	Table   string  `json:"table"`
	Index   string  `json:"index"` // PRIMARY, a secondary's name, or heap
	Pages   int     `json:"pages"`
	Height  int     `json:"height"` // 0 for a heap
	Entries int64   `json:"entries"`
	Fill    float64 `json:"fill"`
}

// LocalHost is this process's host: its Go version, operating system,
// architecture and CPUs (the run's figures are the caller's to add).
func LocalHost() Host {
	return Host{GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0)}
}

// SpecTpmCPerWarehouse is the most tpmC a warehouse can give with the
// specification's keying and think times [5.4.3]: the base of efficiency.
const SpecTpmCPerWarehouse = 12.86

// ScaleNote is " at small scale" (or another scale's name) for a
// header line; nothing at full scale, the default, or for a report
// without a scale.
func ScaleNote(scale string) string {
	if scale == "" || scale == tpcc.FullScale.String() {
		return ""
	}
	return " at " + scale + " scale"
}

// Passed says the job ran without errors and its consistency check (if
// any) passed.
func (r *Report) Passed() bool {
	if len(r.Errors) > 0 || (r.Run != nil && len(r.Run.Errors) > 0) {
		return false
	}
	return r.Check == nil || r.Check.Passed()
}

// TotalPages sums the pages of every index and heap.
func (r *Report) TotalPages() int {
	n := 0
	for _, s := range r.Space {
		n += s.Pages
	}
	return n
}

// Client is the client and server cost layer's section (simulated mode
// with a personality; package sim/client): who sent the statements, with
// what settings and prices, what crossed the wire, and its part of the
// measured response times.
type Client struct {
	Personality string          `json:"personality"`
	Driver      string          `json:"driver"`
	Kit         string          `json:"kit"`
	Settings    client.Settings `json:"settings"`
	Params      client.Params   `json:"params"`
	// Counts are every statement's of the run, warm-up included; ByKind
	// split by statement kind (select, update, commit, rollback).
	Counts client.Counts            `json:"counts"`
	ByKind map[string]client.Counts `json:"by_kind"`
	// Per transaction type, the measured response time's mean and the
	// client layer's part of it, in milliseconds: the server's CPU, its
	// queue for a core, the client's time and the wire's; OutsidePct is
	// their sum's share of the response time.
	Types []ClientType `json:"types"`
	// OutsidePct is the share of all measured response time spent outside
	// the engine.
	OutsidePct float64 `json:"outside_engine_pct"`
}

// ClientType is one transaction type's client layer time.
type ClientType struct {
	Type       string  `json:"type"`
	MeanMs     float64 `json:"mean_ms"`
	ServerMs   float64 `json:"server_ms"`
	QueueMs    float64 `json:"queue_ms"`
	ClientMs   float64 `json:"client_ms"`
	WireMs     float64 `json:"wire_ms"`
	OutsidePct float64 `json:"outside_engine_pct"`
}
