package heap

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache/page"
)

// requests builds the expected meter of an operation: page requests by
// kind, hits and misses; the remaining counters are filled in by the test.
func requests(heap, fsm, meta, hits, misses int64) Meter {
	var m Meter
	m.PageRequests[page.KindHeap] = heap
	m.PageRequests[page.KindFSM] = fsm
	m.PageRequests[page.KindMeta] = meta
	m.PoolHits, m.PoolMisses = hits, misses
	return m
}

// pageState returns the free-space category and avail of heap page no,
// read without charging any meter.
func pageState(t *testing.T, h *Heap, no uint32) (cat uint8, avail int) {
	t.Helper()
	pg, err := h.pool.Fetch(nil, h.id(no))
	require.NoError(t, err)
	pg.RLatch()
	defer func() { pg.RUnlatch(); pg.Unpin(false) }()
	b := hpage(pg.Data())
	return h.category(b.free(), b.ndead()), b.avail()
}

// TestCosts asserts the exact page requests of each operation on 4 KiB
// pages (FSM step 16 bytes), with a pool that holds everything unless the
// test closes it. The counts are the ones documented in doc.go.
func TestCosts(t *testing.T) {
	st, pool, h := newHeapForTest(t, 4<<10, 64)
	row := bytes.Repeat([]byte{'r'}, 100)

	// The first insert of a fresh heap: the FSM's in-memory bound says no
	// page has room, so there is no search; allocation pins the FSM page
	// (hit), updates the meta page (hit) and creates page 2 (a create, which
	// reads nothing).
	m := &Meter{}
	p, err := h.Insert(m, row)
	require.NoError(t, err)
	require.Equal(t, RowPtr{Page: 2, Slot: 0}, p)
	want := requests(1, 1, 1, 2, 0)
	want.PageCreates = 1 // the new page: a frame, no read
	require.Equal(t, want, *m, m.String())

	// An insert into the target page costs the heap page only, even when
	// it changes the page's free-space category: as in PostgreSQL, the
	// FSM byte is left high until an insert finds the page full.
	cat, avail := pageState(t, h, 2)
	require.NotEqual(t, cat, uint8((avail-len(row)-slotSize)/h.step))
	m = &Meter{}
	_, err = h.Insert(m, row)
	require.NoError(t, err)
	require.Equal(t, requests(1, 0, 0, 1, 0), *m, m.String())
	after, _ := pageState(t, h, 2)
	require.Less(t, after, cat)

	// Fill page 2 until the target page is too full for the next row.
	for {
		_, avail = pageState(t, h, 2)
		if avail < len(row) {
			break
		}
		_, err = h.Insert(nil, row)
		require.NoError(t, err)
	}
	// An insert when the target page is full: the target page (heap), its
	// FSM page to record what it really has, an FSM search (the same FSM
	// page, which has no room: its in-memory bound drops), then allocation
	// as above: FSM page, meta page, new page 3 (a create).
	m = &Meter{}
	p3, err := h.Insert(m, row)
	require.NoError(t, err)
	require.Equal(t, RowPtr{Page: 3, Slot: 0}, p3)
	want = requests(2, 3, 1, 5, 0)
	want.PageCreates = 1
	require.Equal(t, want, *m, m.String())

	// Fetch on a warm pool: exactly one page request, a hit, no store read.
	want = requests(1, 0, 0, 1, 0)
	want.HeapFetches = 1
	m = &Meter{}
	buf, err := h.Fetch(m, p, nil)
	require.NoError(t, err)
	require.Equal(t, row, buf)
	require.Equal(t, want, *m, m.String())
	// ... and it allocates nothing when the buffer is reused.
	allocs := testing.AllocsPerRun(100, func() {
		buf, err = h.Fetch(m, p, buf)
	})
	require.NoError(t, err)
	require.Zero(t, allocs)

	// A deleted or out-of-range slot costs the page; a page beyond the
	// high water mark costs nothing.
	m = &Meter{}
	_, err = h.Fetch(m, RowPtr{Page: 3, Slot: 9}, buf)
	require.ErrorIs(t, err, ErrRowNotFound)
	require.Equal(t, want, *m, m.String())
	m = &Meter{}
	_, err = h.Fetch(m, RowPtr{Page: 99, Slot: 0}, buf)
	require.ErrorIs(t, err, ErrRowNotFound)
	require.Equal(t, Meter{}, *m, m.String())

	// Update in place to the same length: the heap page only.
	m = &Meter{}
	np, err := h.Update(m, p, bytes.Repeat([]byte{'u'}, len(row)))
	require.NoError(t, err)
	require.Equal(t, p, np)
	require.Equal(t, requests(1, 0, 0, 1, 0), *m, m.String())

	// A moving update: the old page (full, so the row cannot grow there),
	// its FSM byte (it gains 100 bytes' worth of room), and the target
	// page 3 (an insert there leaves its FSM byte alone).
	m = &Meter{}
	big := bytes.Repeat([]byte{'B'}, 900)
	np, err = h.Update(m, p, big)
	require.NoError(t, err)
	require.Equal(t, RowPtr{Page: 3, Slot: 1}, np)
	want = requests(2, 1, 0, 3, 0)
	want.HeapMoves = 1
	require.Equal(t, want, *m, m.String())

	// Delete of a 100-byte row: the heap page and (the category rises by
	// 6) the FSM page.
	m = &Meter{}
	require.NoError(t, h.Delete(m, p3))
	require.Equal(t, requests(1, 1, 0, 2, 0), *m, m.String())

	// A scan requests each heap page once and skips the FSM page.
	ptrs, _ := scanAll(t, h, nil)
	m = &Meter{}
	s := h.NewScan(m)
	rows := 0
	for s.Next() {
		rows++
	}
	require.NoError(t, s.Close())
	want = requests(2, 0, 0, 2, 0)
	want.HeapRowsScanned = int64(len(ptrs))
	require.Equal(t, want, *m, m.String())
	require.Equal(t, len(ptrs), rows)
	require.NoError(t, h.Check(nil))

	// Cold pool: a new pool over the same store after Close. Open reads
	// the meta page and the one FSM page; then a Fetch is one page
	// request, one miss and exactly one store read.
	require.NoError(t, pool.Close())
	pool = newPool(t, st, 64)
	m = &Meter{}
	h, err = Open(m, pool, 1)
	require.NoError(t, err)
	want = requests(0, 1, 1, 0, 2)
	want.StoreReads, want.StoreReadBytes = 2, 2*4096
	require.Equal(t, want, *m, m.String())
	m = &Meter{}
	buf, err = h.Fetch(m, np, buf)
	require.NoError(t, err)
	require.Equal(t, big, buf)
	want = requests(1, 0, 0, 0, 1)
	want.StoreReads, want.StoreReadBytes, want.HeapFetches = 1, 4096, 1
	require.Equal(t, want, *m, m.String())
	// The second fetch of the same page is warm again.
	m = &Meter{}
	_, err = h.Fetch(m, np, buf)
	require.NoError(t, err)
	want = requests(1, 0, 0, 1, 0)
	want.HeapFetches = 1
	require.Equal(t, want, *m, m.String())
}

// TestInsertReusesFreedSpace checks that the FSM sends inserts back to a
// page that deletes emptied, instead of growing the heap.
func TestInsertReusesFreedSpace(t *testing.T) {
	_, _, h := newHeapForTest(t, 4<<10, 32)
	row := bytes.Repeat([]byte{'x'}, 200)
	var ptrs []RowPtr
	for range 100 {
		p, err := h.Insert(nil, row)
		require.NoError(t, err)
		ptrs = append(ptrs, p)
	}
	hw := h.HighWater()
	// Empty page 2 (the first heap page).
	for _, p := range ptrs {
		if p.Page == 2 {
			require.NoError(t, h.Delete(nil, p))
		}
	}
	// The target is the last page, which has room for a few rows; after
	// that the FSM finds page 2 and the heap does not grow.
	for range 19 {
		_, err := h.Insert(nil, row)
		require.NoError(t, err)
	}
	require.Equal(t, hw, h.HighWater())
	require.Equal(t, uint32(2), h.target.Load())
	require.NoError(t, h.Check(nil))
}
