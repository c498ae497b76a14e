// Package heap stores a table's rows on slotted pages of the buffer pool,
// in no particular order, the way PostgreSQL and openGauss do: a row is
// named by a row pointer (page, slot), secondary indexes store those
// pointers, and a sequential scan reads the pages in order.
//
// # Basics
//
// A Heap lives in a space of its own in a cache.Pool. Create makes one
// (creating the space), Open finds it again after a restart:
//
//	h, err := heap.Create(m, pool, space)
//	ptr, err := h.Insert(m, row)           // ptr is a RowPtr{Page, Slot}
//	buf, err = h.Fetch(m, ptr, buf)        // copies the row into buf[:0]
//	ptr, err = h.Update(m, ptr, newRow)    // ptr changes if the row moved
//	err = h.Delete(m, ptr)
//	s := h.NewScan(m)                      // all rows, in physical order
//
// Every change the heap makes to a page (heap pages, FSM pages, the space's
// meta page) is part of a mini-transaction (cache.Mtr), so it reaches the
// redo log; see "Mini-transactions and redo" below. Insert, Update and
// Delete each run one mtr of their own; InsertIn, UpdateIn and DeleteIn
// run inside the caller's:
//
//	mt := pool.BeginMtr(m.Pages())
//	ptr, err := h.InsertIn(m, mt, row) // pages charge mt.Meter()
//	mt.Note(undoRecord(ptr))           // the caller's payload, same record
//	mt.Commit()
//
// The core types are Heap, RowPtr (with a 6-byte big-endian encoding,
// Encode / Append / DecodeRowPtr, that sorts like the pointers) and Scan.
//
// Every call takes an Account, where it charges its work (nil counts
// nothing): the pool counts page requests in Account.Pages() (a
// *cache.Meter), and this package counts its own events in Account.Heap()
// (a *HeapCounts): HeapFetches (one per Fetch that read a page),
// HeapRowsScanned (one per row a scan returns) and HeapMoves (one per
// Update that moved a row). The In methods charge the pages to their
// mtr's meter and only the heap's counts to the Account. Meter, which
// embeds cache.Meter and HeapCounts, is the ready-made Account for a
// caller of the heap alone (var m heap.Meter; h.Fetch(&m, ptr, buf);
// m.HeapFetches, m.PoolHits).
//
// Account is an interface, not a struct of two pointers, so that the
// caller's own meter is the argument: a transaction's meter, which embeds
// cache.Meter, HeapCounts and other layers' counts, implements it with
// nil-safe methods and is passed as &meter, with no allocation (a pointer
// fits in an interface) and no handle to build at every call; nil still
// means "count nothing". An operation asks for the two halves once, when
// it starts (a scan once, in NewScan), so the interface costs two
// indirect calls per operation, never one per page or row.
//
// Rows are byte strings of 0 to MaxRowSize(pageSize) bytes, a quarter of
// the page body: (pageSize-44)/4, that is 1013 bytes on 4 KiB pages, 4085
// on 16 KiB pages, 16373 on 64 KiB pages. Longer rows are ErrRowTooLarge;
// the heap has no overflow (TOAST) pages.
//
// # Page format
//
// A heap page (kind page.KindHeap) is a slotted page: after the cache's
// 32-byte header, a 12-byte heap header (slot count, deleted-slot count,
// the start of the cell area, fragmented bytes), an array of 4-byte slots
// (offset, length) growing forward, and the row bytes growing backward
// from the end of the page. A slot never moves, so a RowPtr stays valid
// while its row lives; the row's bytes may move within the page when the
// page is compacted. A deleted slot (offset 0) is reused by the next insert
// into its page. page.go draws the layout and works an example.
//
// Update keeps a row in place when it fits in its page, the old row's
// bytes counting as free; otherwise it moves the row to a page numbered
// higher than the old one and returns the new pointer. What a move costs
// the caller's indexes is the caller's business: PostgreSQL's HOT
// optimisation, for one, does not exist here.
//
// # Free-space map
//
// Inserts do not scan the heap for room. The free-space map (FSM) keeps one
// byte per page, the page's free-space category: the room for a new row
// divided by pageSize/256, as in PostgreSQL. It lives in FSM pages (kind
// page.KindFSM) in the heap's space, chained; the first one is the space's
// root (cache.SpaceInfo.Root), and one FSM page covers pageSize-48 pages.
// fsm.go draws the layout.
//
// An insert tries, in order: the target page (an in-memory hint, the page
// the last search or allocation chose), the lowest-numbered page whose FSM
// category promises room, and a new page; "room" is the row plus the fill
// factor's reserve (SetFillFactor, fillfactor.go: PostgreSQL's fillfactor,
// which inserts and moving updates leave free for the versions of the rows
// already on a page). As in PostgreSQL, an insert does
// not touch the FSM: a page being filled keeps a byte that is too high,
// and the insert that finds it full records its real category
// (RecordAndGetPageWithFreeSpace) before searching. Updates and deletes,
// which free room at once here (there is no VACUUM), update the byte when
// the category changes. So a byte is never below its page's category: no
// room is lost, and a stale byte costs one extra page look. The map is read
// with a per-FSM-page bound in memory, so searching a heap whose pages are
// all full costs no page request.
//
// Costs, in pool page requests (TestCosts asserts each of them):
//   - Fetch: 1 heap page; 0 for a pointer to page 0 or beyond the high
//     water mark.
//   - Insert into the target page: 1 heap page.
//   - Insert when the target page is full and no page has room: the target
//     page, its FSM page (recording its real category), the FSM page
//     searched, then the new page's FSM page, the space's meta page and
//     the new page: 2 heap, 3 FSM, 1 meta (FSM requests to one page count
//     once each). The very first insert skips the first three: 1 heap,
//     1 FSM, 1 meta.
//   - Update in place and Delete: 1 heap page, plus 1 FSM page if the
//     category changes. A moving update is 2 heap pages and 1 FSM page
//     (the old page's) when the row lands on the target page.
//   - Scan: 1 per heap page; FSM pages are skipped without a request.
//   - Open: the meta page and every FSM page.
//
// # Mini-transactions and redo
//
// Every heap change is a mini-transaction: Create (the first FSM page and
// the meta page's root), an insert (the row's page; for a new page also
// the meta page and the page's FSM byte), an update (the row's page and
// its FSM byte; a move also the new page, its FSM byte and, for a new
// page, the meta page) and a delete (the row's page and its FSM byte) are
// each one redo record, which recovery replays whole or not at all. So a
// moving update never leaves the row on both pages or on neither, and a
// page's FSM byte changes in the same record as the page.
//
// Two changes are mtrs of their own, committed before the operation's mtr:
// the correction of a stale FSM byte that an insert finds on its way (a
// hint, set exactly to the page's category under the page's latch), and
// the extension of the FSM chain (a new FSM page, the link to it and the
// meta page). Either may survive a crash without the operation that made
// it, which leaves a valid heap. The FSM stays a hint as before: its bytes
// are logged like any page change (fsm-set), and Open recomputes the
// in-memory bounds and the high water mark from the pages.
//
// The mtr API asks that a changed page stay exclusively latched (and
// pinned) until the mtr commits, that is until the end of the operation,
// or for InsertIn, UpdateIn and DeleteIn until the caller commits: the
// caller must commit soon, and must call them with an mtr that holds no
// page of the heap's space (one heap operation per mtr).
//
// # Redo records
//
// The heap logs what it did to a page, not which bytes changed: a record
// is the row and a slot number, a few bytes plus the row, replayed by the
// same code that did it. An insert logs heap-insert (the slot and the
// row) and redo calls hpage.insert, which must put the row in that slot;
// an update in place logs heap-update (the slot and the new row), or, for
// a row of the same length, heap-patch (only the changed bytes); a delete
// logs heap-delete (the slot); a compaction logs heap-compact, with no
// payload at all; FSM pages log fsm-init, fsm-set (an index and a
// category) and fsm-link. redo.go draws each payload. These are MySQL
// 5.7's page records (MLOG_REC_INSERT, MLOG_REC_UPDATE_IN_PLACE,
// MLOG_REC_DELETE, MLOG_PAGE_REORGANIZE), which InnoDB also redoes by
// calling the functions that did the change (page_cur_parse_insert_rec
// inserts the record again through the page cursor).
//
// Sizes, with an 8-byte frame per record and 4 bytes of kind and page per
// operation (TestRedoRecordSizes pins them on 4 KiB pages): an insert
// into the target page is the row plus 13 bytes; a same-length update of
// one byte, 15 bytes; a delete, 13 bytes plus 6 for the FSM byte when the
// page's category changes. Naming the operation is what keeps a record
// small: a compaction that moves every cell of the page is logged as its
// kind and its page, where a record of changed byte ranges (a physical diff, or
// MariaDB 10.5's WRITE and MEMMOVE records) would carry most of the page.
// And nothing is copied or compared to find out what changed: the code
// that changes a page says so.
//
// The price is that redo must be deterministic and must see the page
// exactly as the operation did. The first holds because redo runs the
// same hpage code on the same bytes (compaction included: it copies
// through a scratch buffer and leaves below the new cell start what was
// there before, so even a page's garbage is rebuilt byte for byte). The
// second is the page LSN rule: recovery applies a record to a page only
// when the page's LSN is older, and records in LSN order, so each
// operation finds the page as the one before it left it. A damaged
// record or page cannot be trusted that way, so every applier checks its
// payload against the page first (page kind, slot in range and live, row
// size, the cell accounting the hpage code relies on) and returns an
// error, never panics. Tests turn on cache.VerifyRedo, which replays
// every mini-transaction's record at its commit on copies of the pages
// and fails on any difference.
//
// # Concurrency
//
// A Heap is safe for concurrent use by several goroutines. Each page's
// bytes are read under its shared latch and changed under its exclusive
// latch, pinned throughout; a changed page keeps its latch until the
// operation's mtr commits. Latches are taken in one order: heap pages in
// ascending page order, then the allocation mutex, then the meta page,
// then FSM pages in chain order, then visibility map pages in chain order
// (vm.go). A call holds at most two heap page
// latches (a moving update: the old page, then a higher one), the meta
// page's latch (when it allocates) and two FSM page latches (a moving
// update to a new page: the old page's FSM page, then the new page's).
// Because changed pages are held to the end, an operation takes every
// heap page latch before any FSM or meta latch it keeps: the FSM byte
// corrections an insert makes while it looks for a page, and FSM
// extensions, are committed at once in mtrs of their own, and a moving
// update sets the old page's FSM byte before the new page's. A new page is
// latched after the meta page, but nobody can be waiting for it while
// holding a meta or FSM latch. FSM searches take shared latches on FSM
// pages one at a time, holding at most the heap page of a moving update.
// No latch is held between calls, or between two calls to Scan.Next. The
// target hint (one per heap, shared by all goroutines) and the FSM chain
// are atomics.
//
// A call pins at most five pages at once (a moving update that allocates a
// page: old page, its FSM page, the new page's FSM page, the meta page, the
// new page, all held until the commit; or, while it extends the FSM, old
// page, its FSM page, the last FSM page, the meta page and the new FSM
// page). The pool does not wait for frames: a pool with fewer free frames
// than that per concurrent caller fails calls with cache.ErrPoolExhausted.
// An operation that fails changes no row and leaves nothing changed in its
// mtr, because every page it may need is pinned before any page changes;
// an FSM correction or extension it committed on the way stays.
//
// The heap does not lock rows. Two goroutines that update or delete the
// same row at the same time get one of the outcomes in some order, but a
// pointer that one of them has just made stale may then name another row;
// the engine's row locks prevent that. A Scan and a Meter are used by one
// goroutine at a time.
//
// # Versions (PostgreSQL's MVCC heap)
//
// A heap can hold row versions instead of plain rows (versions.go,
// tuple.go, visibility.go, prune.go): each version's cell starts with
// PostgreSQL's tuple header (xmin, xmax, ctid, infomask2, infomask; the
// layout is drawn in tuple.go), and slots take PostgreSQL's line-pointer
// states (LP_NORMAL, LP_REDIRECT, LP_DEAD, LP_UNUSED; page.go). The API:
//
//	ptr, err := h.InsertVersion(m, xid, row)
//	err = h.DeleteVersion(m, ptr, xid)          // or LockVersion
//	nptr, hot, err := h.UpdateVersion(m, ptr, xid, row, hotOK)
//	row, at, ok, err := h.FetchVersion(m, root, snap, clog, buf)
//	res, err := h.PruneOpt(m, page, horizon, clog) // on access
//	n, err := h.VacuumDeadSlots(m, page, slots)    // after index cleanup
//	res, err := h.MarkVisible(m, page, horizon, clog, freeze) // vacuum
//	ok, err := h.AllVisible(m, page)               // index-only scan
//
// UpdateVersion makes a heap-only tuple (HOT) when hotOK (no indexed
// column changed) and the page has room; FetchVersion walks a HOT chain
// from the root slot an index names, testing each version against a
// Snapshot (SnapshotData: xmin, xmax, xip) and a CommitStatus (the commit
// log) as HeapTupleSatisfiesMVCC does, and sets the hint bits it learns
// in a logged mini-transaction. Prune is heap_page_prune under the
// exclusive latch, which serves as the cleanup lock because no reader
// keeps pointers into a page past its latch; it sets the hint bits it
// learns on every version it examines, in its own mini-transaction, as
// HeapTupleSatisfiesVacuum's SetHintBits does, so that the next prune of
// the page asks the commit log only about versions written since (a
// prune that finds nothing to remove still logs the hints it learned, as
// PostgreSQL's dirties the buffer). The visibility map (vm.go) keeps two
// bits per page (all-visible, all-frozen), set by MarkVisible and cleared
// with PD_ALL_VISIBLE in the mini-transaction of any change to the page.
// New redo kinds: heap-xmax, heap-hint, heap-prune, heap-flags, vm-init,
// vm-set, vm-clear, vm-link (redo.go, vm.go). A heap holds either plain
// rows or versions, never both.
//
// # Caveats
//
//   - A scan is not a snapshot: each page is copied as it is when the scan
//     reaches it. A row that moves during a scan moves to a higher page, so
//     the scan sees it once, or twice if it had already read the old page;
//     it never misses a row that existed throughout the scan.
//   - A deleted row's slot is reused, so a pointer kept after a Delete may
//     name a newer row. Indexes must drop pointers when rows are deleted.
//   - Pages are never given back to the space: a heap's high water mark
//     only grows, and a page emptied by deletes is reused by inserts.
//   - Moved rows always go to higher pages, so a table whose rows keep
//     growing creeps towards its end; lower pages are refilled by inserts.
//   - Without a redo log given to the pool (cache.Wiring.Log),
//     mtrs log nothing, and a crash loses unflushed pages; the FSM may
//     then be stale. A too-optimistic byte is corrected when an insert
//     finds the page too full, a too-pessimistic one wastes room until
//     the page's category next changes. With a log, redo restores every
//     committed change, FSM bytes included.
//   - A Heap assumes it is the only allocator in its space, and the only
//     Heap value for it: open a space once per pool and share the *Heap.
//   - Calls return errors, never panic, on bad input: a pointer to page 0,
//     beyond the high water mark, to a non-heap page, to a slot out of
//     range or deleted is ErrRowNotFound; a damaged page is an error
//     matching page.ErrCorruptPage; cache errors such as
//     cache.ErrPoolExhausted are wrapped.
package heap
