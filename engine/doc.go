// Package engine is enginelab's storage engine: tables with typed columns
// on B+trees and heaps, in one of three organizations, with every operation
// metered so that a user can count what it cost.
//
// # Basics
//
//	db, _ := engine.Open(&engine.Options{})            // in memory; Dir for durable
//	t, _ := db.CreateTable(engine.Table{
//		Name:       "customer",
//		Columns:    []engine.Column{{Name: "w", Type: engine.TypeInt}, ...},
//		PrimaryKey: []string{"w", "d", "id"},
//		Indexes:    []engine.Index{{Name: "by_name", Columns: []string{"w", "d", "last", "first"}}},
//		Org:        engine.HeapRowPointer,             // or Clustered (the default), HeapPrimaryKey
//	})
//	var m engine.Meter
//	tx := db.Begin(&m)
//	_ = tx.Insert(t, engine.Row{engine.Int(1), ...})
//	row, found, _ := tx.Get(t, []engine.Value{engine.Int(1), ...}, nil)
//	_ = tx.Update(t, pk, []engine.Set{{Column: "balance", Value: engine.Dec(1250)}})
//	n, path, _ := tx.Count(t, engine.CountOptions{ScanOptions: ..., Column: "id"})
//	_ = tx.Commit()
//
// The core types: DB (a database: store, buffer pool, catalog), Table (a
// declaration), TableHandle (an open table), Tx (a transaction, which
// carries a Meter), Cursor (an index scan) and Meter.
//
// # Values
//
// Columns are 64-bit integers, fixed-point decimals (an integer count of
// 10^-Scale units: TPC-C money is Scale 2), strings with a declared maximum
// length in bytes (char and varchar; no padding), and timestamps
// (microseconds, UTC). A column may allow NULL; primary-key columns may
// not. A Value holds any of them; the column gives its type, so an integer,
// a decimal and a timestamp are all an int64 in the column's unit and the
// engine cannot tell Dec(1234) given to an int column from Int(1234): it
// checks strings against integers, lengths and NULLs. Values that do
// not fit their column are errors matching ErrBadValue that name the
// table, the column and the value; declarations that do not make sense
// are errors matching ErrSchema. Either way nothing changes.
//
// # Organizations
//
// Each table has one of three organizations (Options.DefaultOrg for those
// that name none):
//
//   - Clustered (InnoDB): rows live in the primary-key B+tree. A secondary
//     entry is (secondary columns, primary key); a lookup through it goes
//     secondary → primary tree.
//   - HeapRowPointer (PostgreSQL, openGauss): rows live in a heap. The
//     primary-key index and every secondary map their key to a row
//     pointer. Options.HeapUpdate chooses between updating rows in place
//     when they fit (indexes whose columns did not change are not touched:
//     Ustore, or HOT) and writing every update as a new row version with a
//     new entry in every index (PostgreSQL without HOT; the old entries are
//     removed at once, an idealized vacuum). A row that moves updates every
//     index either way.
//   - HeapPrimaryKey: rows in a heap; the primary-key index maps to the row
//     pointer and secondaries carry the primary key (secondary → primary
//     index → heap). A row that moves touches only the primary index.
//
// # Access paths and counting
//
// A scan names an index, a prefix bound at each end (inclusive, exclusive
// or none), a direction, a limit and the columns it wants. It is index-only
// exactly when the index entries hold every wanted column: the primary-key
// columns are in every secondary entry of Clustered and HeapPrimaryKey
// tables, and in none of HeapRowPointer's. Otherwise each match costs a row
// fetch, counted in Meter.RowFetches with its path. Cursor.Path says which
// path a scan took. An index-only scan of a HeapRowPointer table is
// PostgreSQL's best case, every page all-visible: there is no visibility
// map here to consult.
//
// Count counts an index range: count(*) never fetches a row; count(col)
// must read col, from the entry if it holds col, else by fetching the row.
// Options.CountRewrite counts count(col) of a NOT NULL column as count(*),
// the fix behind this project: see the package example.
//
// # Metering
//
// Every operation charges its transaction's Meter, which composes each
// layer's own counters: cache.Meter's page-level ones (page requests by
// kind, hits, misses, store I/O, log records), btree.TreeCounts (node
// visits by depth, splits, merges) and heap.HeapCounts (heap fetches, rows
// scanned, moves), plus the engine's: row fetches by path, rows examined,
// returned and decoded, and index entries written and deleted, also split
// by index (Meter.Index, named by DB.IndexName). A cost model prices these
// counts and nothing else.
//
// # Transactions
//
// Writes lock rows, keyed by table and primary key, through one lock
// manager (package engine/lock): Insert, Update and Delete take an
// exclusive lock, held until Commit or Rollback. Reads depend on the
// transaction's Isolation (trxsys.go): under Serializable
// Get and a Cursor's rows take a shared lock, held to the end (strict
// two-phase locking, InnoDB's SERIALIZABLE without gap locks); under
// ReadCommitted and RepeatableRead (the default, as InnoDB's) a plain
// read of a clustered table takes
// no lock and reads the version its read view sees, built from undo
// (clust.go, InnoDB's consistent read), while GetForUpdate and
// ScanOptions.ForUpdate lock and read the latest version. A clustered
// table's Delete delete-marks the row (delmark.go); purge (purge.go)
// removes marked records, marked secondary entries and committed undo logs
// once no read view needs them (Options.Purge: a goroutine by default in
// real mode). Heap tables keep PostgreSQL's row versions by default
// (heapmvcc.go, Options.HeapVersions): below Serializable a plain read
// takes no lock and reads the versions its snapshot sees, and vacuum
// (vacuum.go) removes dead ones; a single-version heap table's reads lock
// at every level. A Count locks each row it counts wherever a plain read
// would lock it, except a count that reads a row-pointer index alone,
// whose entries hold no key to lock: it locks nothing (reading a
// versioned heap's latest committed versions, or a single-version heap's
// entries as they are).
// A request that would close a cycle in the wait-for graph fails at once
// with ErrDeadlock (the requester is the victim); one that waits longer
// than Options.LockTimeout, on the Runtime's clock, fails with
// ErrLockTimeout. Either way the transaction is rolled back and holds no
// lock when the error returns. How a request waits is the Runtime's
// business (Park): real mode blocks the goroutine, the simulator parks the
// simulated transaction. No page latch is held while a request waits:
// locks are taken before a row operation touches a page.
//
// # Logging: mini-transactions and steps
//
// Every change to a page is part of a mini-transaction (cache.Mtr): the
// pages it changes stay exclusively latched until it commits, and its
// commit appends one redo record holding what it did, operation by
// operation (a B+tree leaf insert with its key and value, a heap row's
// changed bytes, an undo record appended to an undo page), and stamps
// those pages with the record's LSN. A B+tree split (the node that keeps
// half, its new sibling, the parent's separator, the space's meta page) is
// one record, so recovery replays it whole or not at all. The buffer pool
// never writes a page before the log is durable up to its LSN (the
// write-ahead rule: the pool syncs the log, group-committed with the
// commits, when it is not).
//
// A row operation is a few structure operations (a heap insert, a primary
// index insert, one per secondary index). Each is one mini-transaction,
// which also appends the step that undoes it to the transaction's undo log,
// on undo pages in the system space (space 0; undolog.go draws the
// rollback segment, the undo pages and the records), as InnoDB writes its
// undo records in the same mini-transaction as the change. A step holds
// what undoing needs and no more: the key an insert added; the key and
// value a heap table's delete removed (a clustered delete is a
// delete-mark: the record's previous system fields); for an update, an
// edit that turns the new value back into the old one (the changed bytes
// only, when that is shorter), as InnoDB's update undo holds the changed
// fields' old values. So undo is
// logged with its change, and the redo log never has to keep a
// transaction's records: undo pages are pages like any other.
//
// # Commit, rollback, recovery
//
// Commit empties the transaction's undo log in one mini-transaction (the
// log's state becomes "cached", its extra pages go back to the free list,
// and the log waits for the next transaction, as InnoDB caches one-page
// undo logs), or, if the log holds records that build older versions of
// clustered records, links it into the history list for purge in that
// mini-transaction instead; with Options.Commit = SyncCommit it returns
// once that record is durable. Its locks go, and its commit becomes
// visible, before that sync (EarlyRelease, InnoDB's, the default for
// Clustered) or after it (LateRelease, PostgreSQL's): LockRelease states
// the rule that keeps both crash-safe. Commits that arrive while another commit's sync is running
// wait for it (through the Runtime's Wait) and the first of them then
// syncs once for all: group commit, counted by the Meter's LogSyncs and
// LogSyncWaits. NoSyncCommit returns at once; such a commit is durable
// after the next sync (a commit's, a page write's, the page cleaner's) or
// checkpoint, and a crash loses a suffix of commits, never a hole.
//
// Rollback undoes the steps, newest row operation first. Within a row
// operation it deletes the index entries the operation inserted, then undoes
// its heap step, then puts back the index entries it deleted or changed.
// Each undo is itself a mini-transaction that also marks the step's undo
// record undone, so a crash during a rollback resumes it instead of
// repeating it. Undoing a heap delete or a moving update puts the row
// wherever it fits; the undo record keeps where it went, and the undo
// rewrites the pointers in the index entries it puts back, so the slot a
// row left never needs to stay reserved. An update in place is undone in
// place: a heap row updated in place to a shorter image keeps its length
// (the image is padded), so the old image always fits back.
//
// Open recovers in this order: with a doublewrite file in the directory
// (written by Options.TornPages = cache.TornPagesDoublewrite, InnoDB's
// doublewrite buffer), a page of its last batch whose store copy fails
// its checksum is restored from its copy (DB.DoublewriteRecovery); then
// redo from the checkpoint; then the rollback of unfinished transactions;
// then a sharp checkpoint. A database opened without the buffer removes
// the file after that checkpoint.
//
// # Flushing and checkpoints
//
// Dirty pages are written in the background, and checkpoints are fuzzy,
// as in InnoDB (buf0flu.cc, log0chkp.cc):
//
//	dirty page ──> flush list, by oldest modification ──> page cleaner ──> store
//	               (head: newest            tail: oldest)   (a pass a second)
//	                                              │
//	checkpoint LSN = oldest modification at the tail (the log end if none)
//
//	log:  ...|<───────── checkpoint age ─────────>|
//	         checkpoint LSN                        log end
//	age vs LogSize:      10% low-water mark: adaptive flushing starts
//	                     7/8 async point: the cleaner is woken
//	                     15/16 sync point: the writer flushes itself
//
// A mini-transaction's commit puts the pages it changed on the pool's
// flush list, in LSN order (cache.Pool; see the cache package's
// "Flushing"). The page cleaner writes pages from the LRU tail (so that a
// fetch finds a clean victim) and from the flush list's oldest end, at a
// rate that grows with the checkpoint age past 10% of
// Options.LogSize (innodb_adaptive_flushing_lwm) and with the pool's
// dirty share, from Options.IOCapacity pages a second up to
// IOCapacityMax (innodb_io_capacity, innodb_io_capacity_max). It runs on
// the pool's goroutine with RealRuntime; the simulator runs its passes in
// virtual time.
//
// A fuzzy checkpoint writes no page and stops no transaction: it takes the
// oldest modification still on the flush list (a page being written
// counts until its write is done), syncs the store, and records that LSN
// as where recovery starts; the log before it is released only then. The
// commit that takes the log past Options.CheckpointBytes since the last
// checkpoint takes one (never on a timer). Checkpoint is sharp (every
// dirty page written, then the checkpoint): Open and Close take one.
// CloseFast takes none (InnoDB's innodb_fast_shutdown=2): it syncs the
// log to its end and writes no page, and the next Open redoes the log
// from the last checkpoint, as after a crash.
//
// Every writing row operation (Insert, Update, Delete) begins with the log
// free check (InnoDB's log_free_check), holding no latch: past the async
// point (7/8 of LogSize) it wakes the cleaner and takes a fuzzy
// checkpoint if none is under way; past the sync point (15/16) the
// transaction flushes the oldest pages itself, on its own meter
// (PageFlushes, StoreWrites), until the age is back at the async point,
// and takes a checkpoint: Meter.LogFreeCheckWaits counts these waits, the
// only ones for log space. The check is at row operations rather than at
// each mini-transaction's start because a mini-transaction may begin with
// latches held, and a thread that flushes must hold none. Below the async
// point and the next checkpoint's distance, the check, and the one at
// commit that decides whether to take a checkpoint, read one flag that
// the log sets when its end crosses the lower of the two or its buffer's
// write-out size (redo.Log.SetMark, Crossed), and read the log's end, which
// every append writes, only then: InnoDB 5.7's log_free_check reads
// log_sys->check_flush_or_checkpoint the same way.
//
// Open recovers: it redoes every record from the checkpoint on (a page
// whose LSN is not older than a record's is skipped), reads the rollback
// segment, opens the catalog, and rolls back, from their undo pages, the
// transactions whose undo log is still active (the records marked undone
// skipped), newest first. Then it checkpoints. Transaction ids never
// repeat across restarts: the rollback segment keeps a high-water mark
// raised 256 ids at a time, as InnoDB's TRX_SYS max trx id.
//
// Of the two standard designs for uncommitted changes, this is logged undo
// (ARIES, InnoDB), not "never write a page holding an uncommitted change"
// (no-steal): the buffer pool evicts whatever its policy picks, as InnoDB's
// does, so an IO-bound run measures the pool, not a rule that pins dirty
// pages until commit; and a long transaction cannot fill the pool.
//
// The costs are metered: lock requests, waits, wait time, deadlocks and
// timeouts; log records and bytes; syncs, sync waits and commits; waits
// for log space (LogFreeCheckWaits, with the pages the waiter flushed);
// on the pool's background meter, pages written by sharp checkpoints
// (CheckpointPages) and the page cleaner's passes and pages
// (CleanerPasses, CleanerLRUPages, CleanerFlushListPages). DB.LogStats and DB.Recovery give database-wide totals.
//
// # Memory
//
// Open checks, before it opens anything, that the buffer pool (at its
// capacity, with its frames' overhead), a remote tier that keeps its pages
// in this process, and the store's memtables and cache fit in the memory
// the process may use: Options.MemoryLimit, else the smaller of its
// cgroup's limit (v2 memory.max, v1 memory.limit_in_bytes) and
// MemAvailable. If not, it returns an error wrapping ErrInsufficientMemory
// and ErrInvalidOptions that says what to make smaller. An in-memory
// store's pages are not counted: their number depends on the data, which
// Open cannot know (package sim's jobs count them). Options.SkipMemoryCheck
// turns the check off.
//
// What a database takes is bounded by its options, not by how long it
// runs:
//
//   - the buffer pool's frames are one mapping outside Go's heap
//     (cache.PoolMemory: the pages, and each frame's overhead on the
//     heap), resident as pages fill them, or from the open on with
//     Options.PoolPopulate (Percona Server's innodb_buffer_pool_populate;
//     a goroutine of the pool's backs the frames while the work starts);
//   - the redo log's buffer (1 MiB, written out past it) and its segments
//     (LogSize);
//   - the store's budget, StoreBudget: pebble's memtables (two of
//     MemTableSize, 64 MiB on disk and 16 MiB in memory by default) and
//     its block cache (BlockCacheSize, 8 MiB);
//   - in memory, the store's files (StoreMemoryBytes: pebble's sstables
//     and the log's segments), outside Go's heap too (store.MemFS), freed
//     as pebble deletes what compactions made obsolete.
//
// Go's heap then holds the rest (the catalog, locks, transactions'
// buffers): the collector's headroom (GOGC) doubles only that, not the
// pool or the store.
//
// # Files
//
//   - db.go: Options, Open and Close, the catalog, CreateTable; DB's lock
//     order.
//   - schema.go, types.go: declarations (Table, Column, Index, Org) and
//     values; keyenc.go and rowenc.go: the order-preserving key encoding
//     and the row image.
//   - table.go, index.go: an open table and its indexes.
//   - tx.go: Tx, its row operations, Commit (and CommitMode) and
//     Rollback; scan.go: Cursor, Scan and Count, the access paths.
//   - undo.go: the undo steps and their records' bytes (drawn there),
//     update edits, and the logged tree and heap writes; undolog.go: the
//     rollback segment, the undo pages and the history list (drawn
//     there); rollback.go: taking steps back, at Rollback and at
//     recovery.
//   - trxsys.go: isolation levels, transaction ids and read views;
//     clust.go: a clustered record's system fields (drawn there) and the
//     versions built from undo; delmark.go: delete-marks; purge.go:
//     purge, its view, modes and background goroutine.
//   - checkpoint.go: sharp and fuzzy checkpoints, the log free check and
//     LogStats (the checkpoint record is drawn there); recovery.go: redo
//     at Open and the rollback of unfinished transactions.
//   - meter.go: Meter; check.go: Check, a table's consistency check;
//     report.go: the space report; memory.go: Open's memory check.
//
// The row lock manager is package engine/lock; the redo log, the buffer
// pool and the store are package cache's.
//
// # Caveats
//
// A Cursor locks each row it returns (shared) before reading it; if it had
// to wait, or the entry's leaf changed since it read the entry, it reads
// the row again by its key and skips it if a writer deleted it (the re-read row may no longer match the scan's range: there
// are no gap locks, so phantoms are possible). Two reads lock nothing: a
// Count, and an index-only scan of a HeapRowPointer secondary index, whose
// entries hold a row pointer but not the primary key (as PostgreSQL's
// reads take no row locks). Primary-key
// columns cannot be updated (delete and insert instead). Unique secondary
// indexes are checked before a write without a lock on the index key, so
// two concurrent inserts can both pass the check.
package engine
