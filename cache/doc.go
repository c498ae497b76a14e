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
//     dirty pages out. Eviction is plain LRU or InnoDB's midpoint
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
// Before writing a page, the pool flushes the log past the page's LSN and
// writes nothing if that fails. It remembers the newest LSN it has seen for
// every page (KnownLSN), so that a copy of a page coming back from the tier
// can be judged stale.
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
// charged for the write (Meter.DirtyWriteBacks); flushes called with a nil
// meter go on the pool's background meter.
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
