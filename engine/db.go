package engine

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/enginelab/enginelab/heap/xact"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/enginelab/enginelab/btree"
	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/enginelab/enginelab/engine/lock"
	"github.com/enginelab/enginelab/heap"
)

// Database errors.
var (
	// ErrInvalidOptions is wrapped by every rejected option. It is
	// page.ErrInvalidOptions, the one value every layer's refused options
	// wrap (cache.ErrInvalidOptions, store.ErrInvalidOptions, ...).
	ErrInvalidOptions = page.ErrInvalidOptions
	// ErrUnknownTable means no table has that name.
	ErrUnknownTable = errors.New("engine: unknown table")
	// ErrTableExists means CreateTable was given a name in use.
	ErrTableExists = errors.New("engine: table exists")
	// ErrClosed is returned by a database used after Close.
	ErrClosed = errors.New("engine: database closed")
	// ErrUnknownIndex means a table has no index of that name.
	ErrUnknownIndex = errors.New("engine: unknown index")
	// ErrCorrupt means the database's files are damaged (it is
	// page.ErrCorrupt). Every error that damage causes matches it, from
	// Open (pebble's files: sstables, MANIFEST, WAL, OPTIONS) or later (a
	// page, a tree, a row, a redo record), and names the database's
	// directory when it is found by Open or by the store: check this one
	// error rather than the kinds below it (ErrCorruptRow, ErrCorruptKey,
	// btree.ErrCorruptTree, page.ErrCorruptPage, redo.ErrCorruptLog).
	ErrCorrupt = page.ErrCorrupt
)

// HeapUpdate says what an update does to a row of a heap table.
type HeapUpdate uint8

// Heap update modes.
const (
	// InPlace rewrites the row where it is when it still fits (openGauss
	// Ustore; PostgreSQL's HOT when no indexed column changes): indexes
	// whose columns did not change are not touched.
	InPlace HeapUpdate = iota
	// NewVersion writes every updated row at a new row pointer and gives
	// every index a new entry (PostgreSQL without HOT); the old entries
	// are removed at once, an idealized vacuum, and counted.
	NewVersion
)

// Options configure a database. Zero fields take the defaults named on
// them. Validate runs before anything is opened.
type Options struct {
	// Dir is the database directory; empty means in memory.
	Dir string
	// FS overrides the filesystem (tests use pebble's crashable memory
	// filesystem). Nil: the real one for a Dir, a new in-memory one
	// otherwise.
	FS vfs.FS
	// PageSize for a new database; default 16 KiB. An existing database
	// keeps its own.
	PageSize int
	// Options are the buffer pool's settings, promoted into these: PoolSize
	// (default 64 MiB), Policy (default midpoint, as InnoDB), OldPercent
	// and OldBlocksTime (the midpoint policy's), ReadAhead and
	// ReadAheadThreshold (linear read-ahead: off by default in the
	// library, on by default in the command, as InnoDB has it), and Tier
	// and TierMode (a remote page cache behind the pool, tier.Tier, and
	// where pages enter it, default exclusive; the database does not
	// close the tier). What the pool is connected to (the log, the
	// Runtime, the tier keys' database id and epoch) the database wires
	// itself (cache.Wiring).
	cache.Options
	// DefaultOrg is the organization of tables that do not name one;
	// default Clustered.
	DefaultOrg Org
	// HeapUpdate is the update mode of heap tables; default InPlace.
	HeapUpdate HeapUpdate
	// HeapVersions says whether new heap-organized tables keep
	// PostgreSQL's row versions (heapmvcc.go): tuples with xmin and xmax,
	// a commit log, snapshots deciding what a plain read sees, HOT
	// updates, vacuum. The default (HeapVersionsDefault) keeps them, as
	// PostgreSQL does; HeapVersionsOff makes single-version heap tables,
	// whose rows are updated as HeapUpdate says and whose every read
	// locks. A table keeps the choice it was created with (the catalog
	// records it), whatever a later open says.
	HeapVersions HeapVersioning
	// CountRewrite rewrites count(col) to count(*) when col is NOT NULL,
	// so that a count never fetches rows for a column it need not read.
	// DB.SetCountRewrite switches it on an open database, as an optimizer
	// switch would.
	CountRewrite bool
	// LockTimeout is how long a row lock request waits before
	// ErrLockTimeout; default 50s (innodb_lock_wait_timeout).
	LockTimeout time.Duration
	// Commit says whether Commit waits for its log record to be durable;
	// default SyncCommit.
	Commit CommitMode
	// Isolation is the level of transactions that name none (Begin, and
	// BeginTx with IsolationDefault); default RepeatableRead, InnoDB's
	// default (transaction_isolation = REPEATABLE-READ): plain reads of
	// clustered tables read a snapshot without row locks.
	Isolation Isolation
	// Purge says who runs purge (purge.go): PurgeDefault is
	// PurgeBackground (a goroutine) with the real runtime, else
	// PurgeAfterCommit.
	Purge PurgeMode
	// Vacuum says who runs autovacuum on versioned heap tables
	// (vacuum.go): VacuumDefault is VacuumBackground (a goroutine) with
	// the real runtime, else VacuumManual.
	Vacuum VacuumMode
	// EarlyLockRelease says whether a committing transaction releases its
	// locks and makes its commit visible before or after its commit record
	// is durable (see LockRelease); default: the organization of
	// DefaultOrg's engine, EarlyRelease for Clustered (InnoDB),
	// LateRelease for the heap organizations (PostgreSQL).
	EarlyLockRelease LockRelease
	// Runtime is the database's time and how it waits and yields: the
	// lock manager's and the pool's clock, lock waits, log waits and
	// syncs, call boundaries and the frames' ready times (see Runtime).
	// Nil: RealRuntime. The simulator installs its scheduler here.
	Runtime Runtime
	// CheckpointBytes is how much log a fuzzy checkpoint is taken after;
	// default 64 MiB, or three quarters of LogSize if that is less. A fuzzy
	// checkpoint writes no page: it records the oldest modification still
	// dirty, so recovery redoes the checkpoint age (the log end less that),
	// which the page cleaner and the log's sync point keep below LogSize.
	CheckpointBytes int64
	// LogSize is the redo log's capacity in bytes, the segment files it
	// keeps in the database directory's redo/ and recycles (InnoDB's
	// innodb_log_file_size): 0 means redo.DefaultCapacity (96 MiB); at
	// least redo.MinCapacity. Segments are an eighth of it each (see
	// redo.MinSegmentSize). A database opened with another size keeps
	// its segments and makes new ones of the new size. It is also the
	// checkpoint age the flushing pressure is measured against (the
	// adaptive flushing's low-water mark at 10%, the async point at 7/8,
	// the sync point at 15/16: see cache.FlushTarget and logFreeCheck).
	LogSize int64
	// BlockCacheSize is the page store's own block cache (pebble's,
	// store.PebbleOptions.BlockCacheSize): default 8 MiB
	// (store.DefaultBlockCacheSize), kept small so that the buffer pool is
	// the cache being measured; negative is refused.
	BlockCacheSize int64
	// MemTableSize is the page store's memtable size (pebble's,
	// store.PebbleOptions.MemTableSize): page writes gather there until
	// it is flushed to an sstable, and the store takes up to twice it
	// (the memtable being flushed and the one filling). Default 64 MiB
	// (store.DefaultMemTableSize) with a Dir or an FS, 16 MiB in memory
	// (store.DefaultMemMemTableSize); from 1 MiB to 4 GiB less a byte.
	MemTableSize int64
	// MemoryLimit is the memory, in bytes, that Open's memory check
	// compares the options with; 0: what this process may use, read from
	// the system (the smaller of its cgroup's limit, v2 memory.max or v1
	// memory.limit_in_bytes, and /proc/meminfo's MemAvailable; no check
	// where neither can be read).
	MemoryLimit int64
	// SkipMemoryCheck turns off Open's memory check. The check refuses,
	// with an error wrapping ErrInsufficientMemory and ErrInvalidOptions,
	// options whose buffer pool, in-process remote tier and store overhead
	// (MemoryEstimate) need more than MemoryLimit, before anything is
	// opened. It counts what the options say: an in-memory store's pages
	// depend on the data put in, which Open cannot know, and are not
	// counted. A pool is allocated at its full size but only the frames
	// used take memory, so a pool larger than the memory works until the
	// data fills it; set SkipMemoryCheck for that.
	SkipMemoryCheck bool
}

// StoreOptions returns the page store's options that the database's
// give, defaults applied (store.PebbleOptions.Defaults). In memory with no filesystem given, nothing can outlive the
// process: the store runs without pebble's WAL
// (store.PebbleOptions.Volatile).
func (o *Options) StoreOptions() store.PebbleOptions {
	return store.PebbleOptions{Dir: o.Dir, FS: o.FS, PageSize: o.PageSize,
		BlockCacheSize: o.BlockCacheSize, MemTableSize: o.MemTableSize,
		Volatile: o.Dir == "" && o.FS == nil}.Defaults()
}

// logOptions returns the redo log's options that the database's give.
func (o *Options) logOptions() *redo.LogOptions {
	return &redo.LogOptions{Capacity: o.LogSize}
}

// Validate reports the first invalid option.
func (o *Options) Validate() error {
	if o.PageSize != 0 && !page.ValidSize(o.PageSize) {
		return fmt.Errorf("engine: %w: page size %d: want a power of two from %d to %d",
			ErrInvalidOptions, o.PageSize, page.MinSize, page.MaxSize)
	}
	if o.PoolSize < 0 {
		return fmt.Errorf("engine: %w: pool size %d is negative", ErrInvalidOptions, o.PoolSize)
	}
	ps := o.PageSize
	if ps == 0 {
		ps = page.DefaultSize
	}
	if err := o.Options.Validate(ps); err != nil {
		// err matches ErrInvalidOptions already (one value for every
		// layer) and says "cache: invalid options: ...".
		return fmt.Errorf("engine: %w", err)
	}
	if o.DefaultOrg > HeapPrimaryKey {
		return fmt.Errorf("engine: %w: default organization %s", ErrInvalidOptions, o.DefaultOrg)
	}
	if o.HeapUpdate > NewVersion {
		return fmt.Errorf("engine: %w: heap update mode %d", ErrInvalidOptions, o.HeapUpdate)
	}
	if o.Isolation > Serializable {
		return fmt.Errorf("engine: %w: isolation level %d", ErrInvalidOptions, o.Isolation)
	}
	if o.Purge > PurgeManual {
		return fmt.Errorf("engine: %w: purge mode %d", ErrInvalidOptions, o.Purge)
	}
	if o.Vacuum > VacuumManual {
		return fmt.Errorf("engine: %w: vacuum mode %d", ErrInvalidOptions, o.Vacuum)
	}
	if o.Commit > NoSyncCommit {
		return fmt.Errorf("engine: %w: commit mode %d", ErrInvalidOptions, o.Commit)
	}
	if o.EarlyLockRelease > LateRelease {
		return fmt.Errorf("engine: %w: lock release %d", ErrInvalidOptions, o.EarlyLockRelease)
	}
	if o.HeapVersions > HeapVersionsOff {
		return fmt.Errorf("engine: %w: heap versioning %d", ErrInvalidOptions, o.HeapVersions)
	}
	if o.CheckpointBytes < 0 {
		return fmt.Errorf("engine: %w: checkpoint interval of %d log bytes is negative", ErrInvalidOptions, o.CheckpointBytes)
	}
	if err := o.logOptions().Validate(); err != nil {
		// err matches ErrInvalidOptions already.
		return fmt.Errorf("engine: log size: %w", err)
	}
	if o.LockTimeout < 0 {
		return fmt.Errorf("engine: %w: lock timeout %v is negative", ErrInvalidOptions, o.LockTimeout)
	}
	if o.MemoryLimit < 0 {
		return fmt.Errorf("engine: %w: memory limit %d is negative", ErrInvalidOptions, o.MemoryLimit)
	}
	if err := o.StoreOptions().Validate(); err != nil {
		// err matches ErrInvalidOptions already.
		return fmt.Errorf("engine: %w", err)
	}
	return nil
}

// DB is a database: a store, a buffer pool over it, and a catalog of
// tables. It is safe for concurrent use.
//
// Lock order. Row locks (the lock manager's, held from a row operation to
// the end of its transaction) come before every mutex: a transaction takes
// mutexes and latches while it holds row locks, and waits for a row lock
// holding none of them. The mutexes and latches are taken in this order,
// outermost first, never backwards:
//
//  1. ckptMu or mu, never both. A checkpoint holds ckptMu while it flushes
//     the pool, syncs the store and writes the log. CreateTable holds mu
//     while it writes the catalog and waits for the log sync that makes
//     the new table durable.
//  2. Page latches: a mini-transaction (cache.Mtr) holds the latches of
//     the pages it uses until it commits.
//  3. The pool's mutexes and the log's. With its pages latched, a
//     mini-transaction fetches pages (the pool's mutex; an eviction
//     writes a page out: that frame's I/O mutex, its latch shared, then
//     the log), stamps LSNs (the pool's LSN map) and appends its record
//     under the log's mu. Writing the log takes the log's writeMu, then
//     its mu.
//  4. Leaves, under which nothing else is taken: spaceMu (under mu when a
//     table opens; alone when an undo looks a space up), the undo
//     system's mu (undoSys: alone, briefly, to take or give back an undo
//     log), ixMu (under mu), and the lock manager's mutex, under which
//     it reads only its clock (the Runtime's Now) and which no engine mutex or latch is ever
//     held around.
//
// Waiting. A row lock wait (the Runtime's Park) begins with no page latch and no
// engine mutex held: a row operation takes its lock before it latches a
// page, a cursor keeps only a pin on its leaf between rows, and the lock
// manager releases its mutex before it parks. A commit waits for its log
// sync (alone or in a group) after its last mini-transaction committed,
// with no latch held. The pool never holds its own mutex while it waits
// for a latch or does I/O. Two waits hold an engine mutex, and nothing
// they wait for takes it: CreateTable's log sync holds mu, and a
// checkpoint's I/O holds ckptMu; a committing transaction only tries
// ckptMu (maybeCheckpoint), so it never waits for another's checkpoint.
type DB struct {
	opts    Options
	store   *store.PebbleStore
	pool    *cache.Pool
	catalog *btree.Tree
	locks   *lock.Manager
	log     *redo.Log
	txSeq   atomic.Uint64 // transaction ids (trxSys), persistent
	lockSeq atomic.Uint64 // lock ids (Begin), this process only
	trx     trxSys
	undo    undoSys
	calls   Runtime // Options.Runtime, nil for RealRuntime: BeforeCall is skipped

	countRewrite atomic.Bool // Options.CountRewrite, switchable at run time

	// clog is the commit log of versioned heap tables (nil until the
	// first one is created, under mu).
	clog atomic.Pointer[xact.Log]

	spaceMu sync.RWMutex         // guards spaces
	spaces  map[uint32]structure // what each space holds, for undo

	undoBufs sync.Pool // *undoBufs

	// ckptMu is held for a whole checkpoint, so that checkpoints run one
	// at a time, and by a transaction flushing for log space
	// (logFreeCheck); it guards no field (the ones below are atomic).
	// recovered is written by Open before the DB is shared and only read
	// after.
	ckptMu sync.Mutex
	// preflushMu is held by MySQL 5.1's asynchronous preflush
	// (asyncPreflush51), so that one asynchronous preflush runs at a
	// time; only tried, never waited for, and taken with no other lock
	// held.
	preflushMu  sync.Mutex
	checkpoints atomic.Int64
	ckptLSN     atomic.Uint64 // the last recorded checkpoint LSN (redo)
	ckptAt      atomic.Uint64 // the log end when the last checkpoint was taken
	// asyncPoint and syncPoint are the checkpoint ages past which a
	// transaction wakes the cleaner and flushes itself (logFreeCheck);
	// flushing51 says the pool runs MySQL 5.1's flushing, whose flushes
	// for log space are 5.1's (preflushTarget, asyncPreflush51).
	asyncPoint, syncPoint uint64
	flushing51            bool
	recovered             RecoveryStats

	commits atomic.Int64 // transactions committed since Open (Commits)
	// purgeStats totals purge's work since Open (Purge), and purgeErr is
	// the background purge's last error; both guarded by undo.mu.
	// purgeMeter is the meter of purges given none (PurgeMeter), guarded
	// by undo.purgeMu. purger is the background purge (PurgeBackground),
	// nil in the other modes.
	purgeStats PurgeStats
	purgeErr   error
	purgeMeter Meter
	purger     *purger
	// The background vacuum and the vacuum meter (vacuum.go).
	vacuumFields
	// visibleEnd is the log end up to which commits have been made
	// visible: the largest commit record end (its LSN + 1) of a
	// transaction whose locks went. Under EarlyRelease a read-only
	// transaction's SyncCommit waits until the log is durable up to it
	// (see LockRelease).
	visibleEnd atomic.Uint64

	// mu guards the table map, the next free space (and the catalog's
	// record of it: CreateTable holds mu while it writes the catalog) and
	// closed.
	mu struct {
		sync.Mutex
		tables    map[string]*TableHandle
		nextSpace uint32
		closed    bool
	}

	ixMu    sync.Mutex // guards ixNames
	ixNames []string   // "table.index" by index number (Meter.Index)

	// dw is the doublewrite file, when the pool writes through it
	// (cache.TornPagesDoublewrite); dwRecovery is what Open's recovery
	// found in it (if there was one).
	dw         *cache.Doublewrite
	dwRecovery cache.DoublewriteRecovery
}

// newIndexID numbers an index for per-index meter counters.
func (db *DB) newIndexID(name string) int {
	db.ixMu.Lock()
	defer db.ixMu.Unlock()
	db.ixNames = append(db.ixNames, name)
	return len(db.ixNames) - 1
}

// IndexName returns "table.index" for an index number of Meter.Index.
func (db *DB) IndexName(id int) string {
	db.ixMu.Lock()
	defer db.ixMu.Unlock()
	if id < 0 || id >= len(db.ixNames) {
		return fmt.Sprintf("index#%d", id)
	}
	return db.ixNames[id]
}

// The catalog lives in space 1, a B+tree. Keys:
//
//	"s"          the next free space id (4 bytes, little-endian)
//	"t" + name   a table: its declaration and its spaces, as JSON
//
// JSON is slow and roomy, and the catalog is read once per open: it buys a
// format that a person can read with a debugger and that tolerates new
// fields. catalogVersion changes when an old database could not be read.
const (
	catalogSpace   = 1
	firstUserSpace = 2
	catalogVersion = 1
)

var keyNextSpace = []byte("s")

func tableKey(name string) []byte { return append([]byte("t"), name...) }

// catalogEntry is a table as the catalog stores it.
type catalogEntry struct {
	Version int    `json:"version"`
	Table   Table  `json:"table"`
	Org     Org    `json:"org"`
	Primary uint32 `json:"primary"`        // space of the primary tree (clustered) or primary index (heap)
	Heap    uint32 `json:"heap,omitempty"` // space of the heap (heap organizations)
	// Indexes holds the space of each secondary index, in declaration
	// order.
	Indexes []uint32 `json:"indexes"`
	// Versioned says the heap holds versioned tuples (Options.HeapVersions
	// when the table was created). A catalog written before versioned
	// heaps existed has no such field: its heap tables are single-version.
	Versioned bool `json:"versioned,omitempty"`
}

// Open opens (creating if needed) the database o describes.
func Open(o *Options) (*DB, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if err := opts.checkMemory(); err != nil {
		return nil, err
	}
	if opts.DefaultOrg == OrgDefault {
		opts.DefaultOrg = Clustered
	}
	if opts.Isolation == IsolationDefault {
		opts.Isolation = RepeatableRead
	}
	if opts.EarlyLockRelease == LockReleaseDefault {
		opts.EarlyLockRelease = DefaultLockRelease(opts.DefaultOrg)
	}
	if opts.Runtime == nil {
		opts.Runtime = RealRuntime{}
	}
	// The real runtime is detected once, here: the pool then takes no
	// Runtime (the wall clock, no frame ready times) and a transaction's
	// calls skip BeforeCall, so real mode pays nothing for the seam.
	var rt Runtime
	if _, real := opts.Runtime.(RealRuntime); !real {
		rt = opts.Runtime
	}
	if opts.Purge == PurgeDefault {
		opts.Purge = PurgeBackground
		if rt != nil {
			opts.Purge = PurgeAfterCommit
		}
	}
	if opts.Vacuum == VacuumDefault {
		opts.Vacuum = VacuumBackground
		if rt != nil {
			opts.Vacuum = VacuumManual
		}
	}
	if opts.LockTimeout == 0 {
		opts.LockTimeout = 50 * time.Second
	}
	if opts.CheckpointBytes == 0 {
		opts.CheckpointBytes = 64 << 20
		if opts.LogSize != 0 {
			opts.CheckpointBytes = min(opts.CheckpointBytes, opts.LogSize/4*3)
		}
	}
	st, err := store.OpenPebble(opts.StoreOptions())
	if err != nil {
		return nil, err
	}
	dbID, epoch := st.Identity()
	lo := opts.logOptions()
	lo.Waiter, lo.Volatile = opts.Runtime, st.Volatile()
	lo.Prealloc = rt == nil // the simulator times the log's work on its callers' goroutines
	log, err := redo.Open(st, lo)
	if err != nil {
		_ = st.Close()
		return nil, damaged(st, fmt.Errorf("engine: open redo log: %w", err))
	}
	// The page cleaner runs on the pool's goroutine in real mode; another
	// Runtime (the simulator) drives it itself, through Pool.CleanStep,
	// so that nothing that decides a simulated result runs on its own.
	cleaner := cache.CleanerOff
	if rt == nil {
		cleaner = cache.CleanerGoroutine
	}
	// The doublewrite file (cache.TornPagesDoublewrite): created if the
	// options ask for it, and opened whenever it is there, so that
	// recovery reads it even if this open does not use it.
	dblwr := opts.TornPages == cache.TornPagesDoublewrite
	dw, err := cache.OpenDoublewrite(st.FS(), st.Dir(), st.PageSize(), dblwr)
	if err != nil {
		log.Close()
		_ = st.Close()
		return nil, damaged(st, fmt.Errorf("engine: %w", err))
	}
	wiredDW := dw
	if !dblwr {
		wiredDW = nil
	}
	// The flushing pressure is the checkpoint age against the log's own
	// capacity (LogSize, its default applied by the log).
	logCap := int64(log.Capacity())
	pool, err := cache.NewPool(st, &opts.Options, &cache.Wiring{Log: log, Runtime: rt, TierDB: dbID, TierEpoch: epoch,
		LogCapacity: logCap, Cleaner: cleaner, Doublewrite: wiredDW})
	if err != nil {
		if dw != nil {
			_ = dw.Close()
		}
		log.Close()
		_ = st.Close()
		return nil, fmt.Errorf("engine: %w: %w", ErrInvalidOptions, err)
	}
	db := &DB{opts: opts, store: st, pool: pool, log: log, calls: rt, dw: dw,
		locks:      lock.NewManager(opts.Runtime, opts.Runtime, opts.LockTimeout),
		spaces:     make(map[uint32]structure),
		asyncPoint: cache.LogAsyncPoint(logCap), syncPoint: cache.LogSyncPoint(logCap),
		flushing51: pool.Options().Flushing == cache.Flushing51}
	db.mu.tables = make(map[string]*TableHandle)
	db.countRewrite.Store(opts.CountRewrite)
	fail := func(err error) (*DB, error) {
		pool.StopCleaner()
		if dw != nil {
			_ = dw.Close()
		}
		log.Close()
		_ = st.Close()
		return nil, damaged(st, err)
	}
	// Recovery: restore torn pages from the doublewrite file, then redo
	// from the checkpoint (pages only: the catalog is a B+tree like any
	// other), then open the catalog, then roll back what never finished,
	// then checkpoint so the next open starts from here. Each phase is
	// timed on the wall clock (RecoveryStats; the doublewrite restore
	// counts as redo).
	t0 := time.Now()
	if dw != nil {
		if db.dwRecovery, err = dw.Recover(st); err != nil {
			return fail(fmt.Errorf("engine: recovery: %w", err))
		}
	}
	if err := db.recover(); err != nil {
		return fail(err)
	}
	t1 := time.Now()
	if err := db.openUndo(); err != nil {
		return fail(err)
	}
	t2 := time.Now()
	if err := db.openCatalog(); err != nil {
		return fail(err)
	}
	t3 := time.Now()
	if err := db.openXact(); err != nil {
		return fail(err)
	}
	if err := db.rollBackLosers(); err != nil {
		return fail(fmt.Errorf("engine: recovery: %w", err))
	}
	if err := db.abortCrashed(); err != nil {
		return fail(fmt.Errorf("engine: recovery: %w", err))
	}
	// Purge resumes: no read view survived the crash, so every
	// committed log on the history list goes.
	if _, err := db.PurgeStep(nil, 0); err != nil {
		return fail(fmt.Errorf("engine: recovery: %w", err))
	}
	t4 := time.Now()
	if err := db.Checkpoint(); err != nil {
		return fail(err)
	}
	if opts.Purge == PurgeBackground {
		db.startPurger()
	}
	if db.anyVersioned() {
		// A stored database opened with HeapVersionsOff still has its
		// versioned tables, and they still need vacuum. A database
		// without one starts its vacuum with its first versioned table
		// (CreateTable).
		db.startVacuumer()
	}
	if !dblwr && dw != nil {
		// Read for recovery only: this open writes pages in place, and
		// its checkpoint made the file's last batch durable in place, so
		// the file goes (a copy left there would be older than the
		// pages' later writes).
		db.dw = nil
		if err := dw.Remove(); err != nil {
			return fail(fmt.Errorf("engine: %w", err))
		}
	}
	db.recovered.Redo, db.recovered.Rollback, db.recovered.Checkpoint = t1.Sub(t0), t2.Sub(t1)+t4.Sub(t3), time.Since(t4)
	return db, nil
}

// damaged names the database's directory in an error of Open's that
// matches ErrCorrupt, unless the store's own error already does.
func damaged(st *store.PebbleStore, err error) error {
	var ce *store.CorruptError
	if !errors.Is(err, ErrCorrupt) || errors.As(err, &ce) {
		return err
	}
	return fmt.Errorf("engine: the database in %s is damaged: %w", st.Dir(), err)
}

func (db *DB) openCatalog() error {
	cat, err := btree.Open(nil, db.pool, catalogSpace)
	if errors.Is(err, cache.ErrSpaceNotFound) {
		if cat, err = btree.Create(nil, db.pool, catalogSpace); err != nil {
			return fmt.Errorf("engine: create catalog: %w", err)
		}
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], firstUserSpace)
		if err := cat.Insert(nil, keyNextSpace, b[:]); err != nil {
			return fmt.Errorf("engine: create catalog: %w", err)
		}
	} else if err != nil {
		return fmt.Errorf("engine: open catalog: %w", err)
	}
	db.catalog = cat
	v, found, err := cat.Get(nil, keyNextSpace, nil)
	if err != nil {
		return fmt.Errorf("engine: open catalog: %w", err)
	}
	if !found || len(v) != 4 {
		return fmt.Errorf("%w: catalog has no next-space record (found %v, %d bytes)", cache.ErrBadFormat, found, len(v))
	}
	db.mu.nextSpace = binary.LittleEndian.Uint32(v)
	it := cat.NewIter(nil, &btree.IterOptions{Lower: btree.Incl([]byte("t")), Upper: btree.Excl([]byte("u"))})
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		var e catalogEntry
		if err := json.Unmarshal(it.Value(), &e); err != nil {
			return fmt.Errorf("%w: catalog entry %q: %v", cache.ErrBadFormat, it.Key(), err)
		}
		if e.Version != catalogVersion {
			return fmt.Errorf("%w: catalog entry %q has version %d, want %d", cache.ErrBadFormat, it.Key(), e.Version, catalogVersion)
		}
		t, err := db.openTable(&e)
		if err != nil {
			return err
		}
		db.mu.tables[e.Table.Name] = t
	}
	return it.Err()
}

// allocSpaceLocked hands out the next space id and records the new
// high-water mark in the catalog. REQUIRES: db.mu held.
func (db *DB) allocSpaceLocked() (uint32, error) {
	id := db.mu.nextSpace
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], id+1)
	if err := db.catalog.Update(nil, keyNextSpace, b[:]); err != nil {
		return 0, fmt.Errorf("engine: allocate space: %w", err)
	}
	db.mu.nextSpace = id + 1
	return id, nil
}

// CreateTable creates a table. An invalid declaration is rejected before
// anything is created.
func (db *DB) CreateTable(def Table) (*TableHandle, error) {
	def = cloneTable(def)
	info, err := def.validate()
	if err != nil {
		return nil, err
	}
	if def.Org == OrgDefault {
		def.Org = db.opts.DefaultOrg
	}
	if def.Org > HeapPrimaryKey {
		return nil, fmt.Errorf("%w: table %s: organization %s", ErrSchema, def.Name, def.Org)
	}
	if def.Org == Clustered && def.FillFactor != 0 && def.FillFactor != DefaultFillFactor {
		return nil, fmt.Errorf("%w: table %s: fill factor %d (only heap tables take one)",
			ErrFillFactorClustered, def.Name, def.FillFactor)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.mu.closed {
		return nil, ErrClosed
	}
	if _, ok := db.mu.tables[def.Name]; ok {
		return nil, fmt.Errorf("%w: %s", ErrTableExists, def.Name)
	}
	e := catalogEntry{Version: catalogVersion, Table: def, Org: def.Org,
		Versioned: db.opts.HeapVersions.Keep() && def.Org != Clustered}
	if e.Versioned {
		if err := db.ensureXactLocked(); err != nil {
			return nil, err
		}
	}
	if e.Primary, err = db.allocSpaceLocked(); err != nil {
		return nil, err
	}
	if def.Org != Clustered {
		if e.Heap, err = db.allocSpaceLocked(); err != nil {
			return nil, err
		}
	}
	for range info.secondary {
		s, err := db.allocSpaceLocked()
		if err != nil {
			return nil, err
		}
		e.Indexes = append(e.Indexes, s)
	}
	if err := db.createStorage(&e); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(&e)
	if err != nil {
		return nil, fmt.Errorf("engine: encode catalog entry of %s: %w", def.Name, err)
	}
	if err := db.catalog.Insert(nil, tableKey(def.Name), raw); err != nil {
		return nil, fmt.Errorf("engine: record table %s: %w", def.Name, err)
	}
	// A table exists once its catalog record is durable.
	if err := db.log.SyncTo(nil, db.log.End()); err != nil {
		return nil, fmt.Errorf("engine: record table %s: %w", def.Name, err)
	}
	t, err := db.openTable(&e)
	if err != nil {
		return nil, err
	}
	db.mu.tables[def.Name] = t
	if e.Versioned {
		// Under db.mu, with the database open: Close marks it closed
		// under db.mu before it stops the vacuum.
		db.startVacuumer()
	}
	return t, nil
}

// createStorage makes the trees and heap of a new table.
func (db *DB) createStorage(e *catalogEntry) error {
	if _, err := btree.Create(nil, db.pool, e.Primary); err != nil {
		return fmt.Errorf("engine: table %s: create primary index: %w", e.Table.Name, err)
	}
	if e.Heap != 0 {
		if _, err := heap.Create(nil, db.pool, e.Heap); err != nil {
			return fmt.Errorf("engine: table %s: create heap: %w", e.Table.Name, err)
		}
	}
	for i, s := range e.Indexes {
		if _, err := btree.Create(nil, db.pool, s); err != nil {
			return fmt.Errorf("engine: table %s: create index %s: %w", e.Table.Name, e.Table.Indexes[i].Name, err)
		}
	}
	return nil
}

// Table returns the table called name.
func (db *DB) Table(name string) (*TableHandle, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.mu.closed {
		return nil, ErrClosed
	}
	t, ok := db.mu.tables[name]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownTable, name)
	}
	return t, nil
}

// anyVersioned reports whether some table keeps row versions.
// HasVersionedTables reports whether any table keeps PostgreSQL's row
// versions (see Options.HeapVersions): such a database has vacuum work.
func (db *DB) HasVersionedTables() bool { return db.anyVersioned() }

func (db *DB) anyVersioned() bool {
	db.mu.Lock()
	defer db.mu.Unlock()
	for _, t := range db.mu.tables {
		if t.versioned() {
			return true
		}
	}
	return false
}

// Tables returns the names of the tables, sorted.
func (db *DB) Tables() []string {
	db.mu.Lock()
	defer db.mu.Unlock()
	names := make([]string, 0, len(db.mu.tables))
	for n := range db.mu.tables {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Pool returns the database's buffer pool (for statistics and tests).
func (db *DB) Pool() *cache.Pool { return db.pool }

// FSStats are the writes through the database's filesystem, by class of
// file (store.FSStats).
type FSStats = store.FSStats

// FSStats returns what the database wrote through its filesystem since
// Open (Open's own recovery and checkpoint included), by class of file:
// the redo log's segments, pebble's WAL, its sstables (flushes and
// compactions), its metadata, and any other file. The redo class is at
// least LogStats' Bytes once the log is written out: the frames, plus the
// segments' headers, the zeros that end a segment, and the zeros a new
// segment file is filled with on a real filesystem.
func (db *DB) FSStats() FSStats { return db.store.FSStats() }

// Commits returns the number of transactions committed since Open,
// read-only ones included (rolled-back ones are not).
func (db *DB) Commits() int64 { return db.commits.Load() }

// Options returns the options the database runs with, defaults applied.
func (db *DB) Options() Options { return db.opts }

// Close stops the page cleaner, takes a sharp checkpoint (every dirty page
// written and synced, the log before it dropped) and closes the store. Transactions still open are
// not waited for: their changes are rolled back by the next Open, as
// after a crash.
func (db *DB) Close() error { return db.close(false) }

// CloseFast closes the database as InnoDB's innodb_fast_shutdown=2 does:
// purge, vacuum and the page cleaner stop, the redo log is written and
// synced to its end, so that every commit is durable, and no page is
// written. The next Open redoes the log from the last checkpoint, as
// after a crash (its Recovery says what it redid), so it opens more
// slowly than after Close. It is for a database whose store is thrown
// away next (package sim closes an in-memory job so: the sharp
// checkpoint would write every dirty page into memory the process then
// drops) or that must stop now. Transactions still open are rolled back
// by the next Open, as with Close.
func (db *DB) CloseFast() error { return db.close(true) }

func (db *DB) close(fast bool) error {
	db.mu.Lock()
	if db.mu.closed {
		db.mu.Unlock()
		return nil
	}
	db.mu.closed = true
	db.mu.Unlock()
	// Purge and the cleaner stop first, so that no pass runs after what
	// follows: the sharp checkpoint that writes what is left, or (fast)
	// the log's sync that leaves it to recovery.
	db.stopPurger()
	db.stopVacuumer()
	db.pool.StopCleaner()
	var err error
	if fast {
		// The log first: a page dropped with the pool may hold changes
		// only the log has.
		err = db.log.SyncTo(nil, db.log.End())
		db.pool.CloseWithoutFlush()
	} else if err = db.closeCheckpoint(); err == nil {
		err = db.pool.Close()
	}
	if db.dw != nil {
		if cerr := db.dw.Close(); err == nil {
			err = cerr
		}
	}
	db.log.Close()
	if cerr := db.store.Close(); err == nil {
		err = cerr
	}
	return err
}

// cloneTable deep-copies a declaration so that the caller's slices can
// change afterwards.
func cloneTable(t Table) Table {
	t.Columns = append([]Column(nil), t.Columns...)
	t.PrimaryKey = append([]string(nil), t.PrimaryKey...)
	ix := make([]Index, len(t.Indexes))
	for i, x := range t.Indexes {
		x.Columns = append([]string(nil), x.Columns...)
		ix[i] = x
	}
	t.Indexes = ix
	return t
}

// SetCountRewrite switches the count rewrite (Options.CountRewrite) for the
// counts that start from now on, like an optimizer switch set globally.
func (db *DB) SetCountRewrite(on bool) { db.countRewrite.Store(on) }

// CountRewrite says whether counts rewrite count(col) of a NOT NULL column
// as count(*).
func (db *DB) CountRewrite() bool { return db.countRewrite.Load() }
