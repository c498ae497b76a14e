// Package cache owns pages: their header and checksum, the durable page
// store, the buffer pool in front of it, the spaces pages are allocated in,
// and the Meter that counts every page-level event.
//
// # Basics
//
// A database has one page size (16 KiB by default, any power of two from
// 4 KiB to 64 KiB). Every page starts with a 32-byte header (page.go draws
// it): a CRC-32C checksum, the page kind, the page's own id and its LSN.
// What follows the header belongs to the layer that owns the page (btree,
// heap).
//
//	store, _ := cache.OpenPebbleStore(cache.PebbleOptions{})   // in memory
//	pool, _ := cache.NewPool(store, &cache.Options{Capacity: 64 << 20})
//	_ = pool.CreateSpace(m, 1)
//	pg, _ := pool.AllocPage(m, nil, 1, cache.KindHeap)       // pinned, latched
//	copy(pg.Data()[cache.HeaderSize:], "hello")
//	pg.Unlatch()
//	pg.Unpin(true)                                           // dirty
//
// The core types:
//   - store.Store, with store.PebbleStore: whole page images keyed by (space, page),
//     verified on read (page.ErrCorruptPage names the page), durable after Sync.
//   - Pool: a fixed set of frames. Fetch pins a page (reading it on a miss),
//     Unpin releases it (saying whether it changed), FlushPage and FlushAll
//     write dirty pages out. Eviction is plain LRU or InnoDB's midpoint
//     insertion; it never picks a pinned page.
//   - Page: a frame and, while pinned, the page in it, with a shared and an
//     exclusive latch.
//   - Reservation: frames promised ahead of a structural change.
//   - Meter: plain counters carried by each caller.
//
// Spaces (space.go): page 0 of each space is its meta page (format version,
// extents, high-water mark, free list, the owner's root page). AllocPage
// and FreePage allocate and free pages; pages are numbered in extents of 64.
//
// # Lifetimes and concurrency
//
// A Pool, a store.Store and a Page's latches are safe for concurrent use. A
// *Page is valid from the Fetch (or AllocPage) that pinned it to the
// matching Unpin; read its bytes under RLatch, change them under Latch.
// The pool's own lock is never held during store I/O or while waiting for
// a latch. Concurrent misses on one page read it once; a dirty page being
// written back stays readable from its frame. A Meter and a Reservation
// belong to one goroutine at a time.
//
// Who pays: a caller's fetch that must write a dirty page out first is
// charged for the write (Meter.DirtyWriteBacks); flushes called with a nil
// meter go on the pool's background meter.
//
// # The write-ahead rule
//
// Before writing a page, the pool flushes its redo log (Options.Log, a
// *redo.Log, given at construction) past the page's LSN and writes nothing
// if that fails. It remembers the newest LSN it has seen for every page
// (KnownLSN), so that a copy of a page coming back from elsewhere can be
// judged stale. Without a log (structure tests) LSNs stay zero.
//
// # Damaged files
//
// Every error that damaged files cause matches page.ErrCorrupt. The pebble
// store has one boundary with pebble (store.PebbleStore): there pebble's
// corruption errors, missing files, panics and fatal errors become a
// *CorruptError naming the directory, never a panic of the caller's, and
// after one the store refuses every call. Damage pebble meets in its own
// goroutines (compactions, flushes) is recorded and returned by the next
// call. Opening checks what pebble would let through: a lost MANIFEST
// marker, and a MANIFEST cut short or altered (against a witness the
// store keeps beside it).
//
// # Caveats
//
// Fetch does not wait for a frame: when every frame is pinned or reserved
// it fails with ErrPoolExhausted at once, so a pool must have room for
// every concurrent caller's pins (a B+tree operation pins about its height,
// a split reserves height+6). FlushAll skips a page that an eviction is
// writing at that moment; Close is meant for a pool nobody is using.
package cache
