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
// The core types are Heap, RowPtr (with a 6-byte big-endian encoding,
// Encode / Append / DecodeRowPtr, that sorts like the pointers) and Scan.
// Every call takes the caller's *cache.Meter (nil counts nothing): page
// requests are counted by the pool, and this package adds
// m.HeapFetches (one per Fetch that read a page), m.HeapRowsScanned (one
// per row a scan returns) and m.HeapMoves (one per Update that moved a
// row).
//
// Rows are byte strings of 0 to MaxRowSize(pageSize) bytes, a quarter of
// the page body: (pageSize-44)/4, that is 1013 bytes on 4 KiB pages, 4085
// on 16 KiB pages, 16373 on 64 KiB pages. Longer rows are ErrRowTooLarge;
// the heap has no overflow (TOAST) pages.
//
// # Page format
//
// A heap page (kind cache.KindHeap) is a slotted page: after the cache's
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
// cache.KindFSM) in the heap's space, chained; the first one is the space's
// root (cache.SpaceInfo.Root), and one FSM page covers pageSize-48 pages.
// fsm.go draws the layout.
//
// An insert tries, in order: the target page (an in-memory hint, the page
// the last search or allocation chose), the lowest-numbered page whose FSM
// category promises room, and a new page. As in PostgreSQL, an insert does
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
// # Concurrency
//
// A Heap is safe for concurrent use by several goroutines. Each page's
// bytes are read under its shared latch and changed under its exclusive
// latch, pinned throughout. A call holds at most two heap page latches
// (a moving update: the old page, then a higher one; latches on heap pages
// are always taken in ascending page order) and one FSM page latch, taken
// after the heap page latches. No latch is held between calls, or between
// two calls to Scan.Next. The target hint (one per heap, shared by all
// goroutines) and the FSM chain are atomics; page allocation is serialised
// by a mutex, taken after heap page latches and before the latches of the
// meta page and FSM pages.
//
// A call pins at most five pages at once (a moving update that allocates a
// page: old page, its FSM page, the new page's FSM page, the meta page, the
// new page). The pool does not wait for frames: a pool with fewer free
// frames than that per concurrent caller fails calls with
// cache.ErrPoolExhausted. An operation that fails changes nothing, because
// every page it may need is pinned before any page changes.
//
// The heap does not lock rows. Two goroutines that update or delete the
// same row at the same time get one of the outcomes in some order, but a
// pointer that one of them has just made stale may then name another row;
// the engine's row locks prevent that. A Scan and a Meter are used by one
// goroutine at a time.
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
//   - Nothing is logged yet. After a crash (pages lost unflushed) the FSM
//     may be stale: a too-optimistic byte is corrected when an insert finds
//     the page too full, a too-pessimistic one wastes room until the page's
//     category next changes.
//   - A Heap assumes it is the only allocator in its space, and the only
//     Heap value for it: open a space once per pool and share the *Heap.
//   - Calls return errors, never panic, on bad input: a pointer to page 0,
//     beyond the high water mark, to a non-heap page, to a slot out of
//     range or deleted is ErrRowNotFound; a damaged page is an error
//     matching cache.ErrCorruptPage; cache errors such as
//     cache.ErrPoolExhausted are wrapped.
package heap
