// Package cache is the buffer pool: a fixed set of page frames in front of
// the page store, with its eviction policies, reservations, linear
// read-ahead, the spaces pages are allocated in, the mini-transaction (Mtr)
// every page change happens in, the replay of a redo record into a frame
// (Pool.Redo), and the Meter that counts every page-level event.
//
// What a page is, and everything the pool stands on, lives in packages of
// its own, each with one job:
//
//	cache/page    the page header, kinds, ids, sizes, checksum, ErrCorrupt
//	cache/store   the Store interface and the pebble store
//	cache/redo    the redo log and the mini-transaction record's format
//	cache/tier    the remote page tier behind the pool, one package per
//	              backend (tier/lru, tier/slru, tier/ristretto,
//	              tier/memcached)
//
// Imports run one way: page <- store <- redo <- cache, and tier imports
// page only; cache imports tier's interface, never a backend, so a program
// links ristretto or a memcached client only if it picks that backend.
//
// # Basics
//
//	st, _ := store.OpenPebble(store.PebbleOptions{})   // in memory, 16 KiB pages
//	lg, _ := redo.Open(st, nil)                         // the log, in the database's redo/
//	pool, _ := cache.NewPool(st, &cache.Options{PoolSize: 64 << 20}, &cache.Wiring{Log: lg})
//	_ = pool.CreateSpace(m, 1)
//	mt := pool.BeginMtr(m)
//	pg, _ := pool.AllocPage(mt, nil, 1, page.KindHeap) // pinned, latched by mt
//	mt.Write(pg, page.HeaderSize, []byte("hello"))      // changed, and logged
//	mt.Release(pg, true)
//	lsn := mt.Commit()                                  // one redo record
//	_ = lg.SyncTo(&m.Counts, lsn+1)                     // durable
//
// The core types:
//   - Pool: a fixed set of frames over a store.Store. Fetch pins a page
//     (reading it on a miss, from the tier first if there is one), Unpin
//     releases it (saying whether it changed), FlushPage and FlushAll write
//     dirty pages out, CleanStep runs a page cleaner pass. Eviction is plain LRU or InnoDB's midpoint
//     insertion; it never picks a pinned page.
//   - Page: a frame and, while pinned, the page in it, with a shared and an
//     exclusive latch.
//   - Mtr: a mini-transaction, the unit of page change (mtr.go). Code that
//     changes a page says what it did through the mtr, as it does it
//     (Write, Write32, Memset, Memmove, Fresh, SetKind, or Log for a
//     layer's registered kind), and those operations are the mtr's redo
//     record. Nothing compares pages on the way: VerifyRedo, on in the
//     tests, replays each record on copies of its pages and panics at a
//     change nobody logged.
//   - Reservation: frames promised ahead of a structural change.
//   - Meter: plain counters carried by each caller; it embeds redo.Counts,
//     so m.LogBytes and the other log counters read as the rest.
//
// Spaces (space.go): page 0 of each space is its meta page (format version,
// extents, high-water mark, free list, the owner's root page). AllocPage
// and FreePage allocate and free pages, inside a mini-transaction; pages
// are numbered in extents of 64.
//
// # Why the mini-transaction is here
//
// An Mtr latches, pins, marks dirty and stamps LSNs on the pool's frames,
// and space allocation runs inside mtrs: it is the pool's protocol, not
// the log's. What moved to redo is what the log needs to know: the record
// format (an Mtr appends each operation to a redo.Builder as the code
// does it, and the record to the log at Commit), the kinds the layers
// register, and the pure "apply one page's operations to page bytes"
// (Pool.Redo fetches the frame and calls redo.PageRedo.Apply). So redo
// imports page and store only, and cache imports redo. The pool's own
// pages (space meta pages, free pages) are logged with redo's physical
// operations (init, write); the layers above log their pages' changes as
// their own kinds, replayed by their own code.
//
// # The write-ahead rule
//
// The pool gets its redo log once, at construction (Wiring.Log, a
// RedoLog, which *redo.Log implements; nil: no log, for structure tests).
// Before writing a page, the pool makes the log durable past the page's
// LSN (RedoLog.SyncTo(lsn+1), unless RedoLog.Durable is already past it;
// the sync is group-committed with the transactions') and writes nothing
// if that fails: the log may live in files of its own, which a crash can
// leave behind the store. It remembers the newest LSN it has seen for
// every page (KnownLSN), so that a copy of a page coming back from the tier
// can be judged stale.
//
// # Flushing: the flush list, the page cleaner, checkpoints
//
// Dirty pages reach the store the way InnoDB's do (buf0flu.cc):
//
//	mini-transaction commit (under the log's mutex: LSN order)
//	        |
//	        v
//	 flush list, by oldest modification         LRU list
//	 head: newest ... tail: oldest               ... tail: next victims
//	        |                                         |
//	        +----------> page cleaner <---------------+
//	                     (CleanStep: a pass a second,
//	                      IOCapacity-based, adaptive)
//	                          |
//	                          v
//	              log durable past the page's LSN, then the store
//
//	checkpoint LSN = oldest modification at the flush list's tail
//	                 (the log end if the list is empty)
//
// The flush list (flushlist.go) holds every page a logged
// mini-transaction changed and nobody has written since, sorted by the
// LSN of its first change since it was clean; a page enters inside the
// log's Append (the mtr's Stamper), so entries come in LSN order, and it
// leaves when a write of it completes with no change after the write's
// copy. CheckpointLSN is its tail: every change below it is in the store.
// The engine's fuzzy checkpoints record it (after syncing the store), so a
// checkpoint writes no page.
//
// The page cleaner (cleaner.go) writes the dirty pages at the LRU tail, so
// that a fetch finds a clean victim, and then pages from the flush list's
// oldest end at InnoDB's adaptive rate (FlushTarget: a percentage of
// IOCapacity that grows with the checkpoint age past the low-water mark,
// AdaptiveFlushingLWM of Wiring.LogCapacity, and with the dirty share of
// the pool; at most IOCapacityMax a second). In real mode it runs on a
// goroutine of the pool's (Wiring.Cleaner = CleanerGoroutine), a pass a
// second, stopped by Close; the simulator calls CleanStep itself at
// virtual-time intervals. FlushUpTo is the synchronous flush a
// transaction makes past the log's sync point (LogSyncPoint: the engine's
// log free check).
//
// Page writes go out in batches (batch.go), as InnoDB's: a cleaner pass's
// LRU batch and flush-list batch, a flush for log space, a checkpoint's
// FlushAll, a single page (FlushPage, a fetch writing back a dirty
// victim). With TornPagesDoublewrite every batch goes first to the
// database's doublewrite file (doublewrite.go: InnoDB's doublewrite
// buffer, MariaDB's 2×64 page slots) and is synced, then in place, and the
// store is synced before the file's slots are reused; Doublewrite.Recover
// restores, before redo, a store page that fails its checksum from its
// copy there. The store writes pages atomically, so this protects nothing
// here; it is metered (DoublewriteWrites, DoublewritePages,
// DoublewriteBytes, DoublewriteSyncs, StoreSyncs) so that it can be priced.
//
// # Options, wiring and the runtime
//
// NewPool takes two things apart: Options, the settings a user picks (the
// size, the policy, read-ahead, the tier), which the engine's options
// embed; and Wiring, what the pool's owner connects it to (the log, the
// tier keys' database id and epoch, and the Runtime). The Runtime is the
// pool's time (the midpoint policy's Clock) and its frames' virtual ready
// times (FrameTimer): nil means RealClock and no ready times, and a
// Runtime whose Loading returns nil (the engine's real one) keeps a hit
// free of any timing work. The simulator's scheduler is the other
// Runtime.
//
// # Memory
//
// The frames' pages are one arena allocated when the pool is created. On
// Linux, at 2 MiB or more, it is an anonymous mapping outside Go's heap
// (arena_linux.go), as InnoDB's buffer pool is an mmap of its own: the
// collector neither scans it nor lets its headroom (GOGC) double it, and
// it is unmapped once the pool is unreachable. Its pages take memory as
// they are first used, or all at once with Options.PoolPopulate, so that
// the process's memory follows the pool's size rather than the data read
// so far. Each frame's Page and table slots stay on the heap
// (FrameOverhead; PoolMemory counts both).
//
// # Lifetimes and concurrency
//
// A Pool and a Page's latches are safe for concurrent use. A *Page is
// valid from the Fetch (or AllocPage) that pinned it to the matching
// Unpin; read its bytes under RLatch, change them under Latch. The pool's
// own lock is never held during store I/O, a tier call or while waiting
// for a latch. Concurrent misses on one page read it once; a dirty page
// being written back stays readable from its frame. A Meter, an Mtr and a
// Reservation belong to one goroutine at a time.
//
// Who pays: a caller's fetch that must write a dirty page out first is
// charged for the write (Meter.DirtyWriteBacks: the foreground flush that
// the page cleaner is there to spare it; with the doublewrite buffer, its
// batch of one page too); flushes called with a nil meter,
// and the cleaner's passes (CleanerPasses, CleanerLRUPages,
// CleanerFlushListPages), go on the pool's background meter.
//
// # Damaged files
//
// Every error that damaged files cause matches page.ErrCorrupt: a page
// that fails its checksum (page.ErrCorruptPage, never returned as data), a
// redo record that does not decode (redo.ErrCorruptLog), and whatever the
// pebble store meets at its boundary with pebble (a *store.CorruptError;
// see store.PebbleStore).
//
// # Caveats
//
// Fetch does not wait for a frame: when every frame is pinned or reserved
// it fails with ErrPoolExhausted at once, so a pool must have room for
// every concurrent caller's pins (a B+tree operation pins about its height,
// a split reserves height+6). FlushAll skips a page that an eviction is
// writing at that moment; Close is meant for a pool nobody is using. The
// pool does not own its store, log or tier: their creator closes them,
// after the pool.
package cache
