package heap

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
)

// model is the reference a heap is checked against: the live rows by
// pointer, and the pointers in a slice so that picking a random row does
// not depend on map iteration order.
type model struct {
	rows map[RowPtr][]byte
	ptrs []RowPtr
	idx  map[RowPtr]int
}

func newModel() *model {
	return &model{rows: map[RowPtr][]byte{}, idx: map[RowPtr]int{}}
}

func (md *model) add(p RowPtr, row []byte) {
	md.rows[p] = row
	md.idx[p] = len(md.ptrs)
	md.ptrs = append(md.ptrs, p)
}

func (md *model) remove(p RowPtr) {
	i := md.idx[p]
	last := md.ptrs[len(md.ptrs)-1]
	md.ptrs[i] = last
	md.idx[last] = i
	md.ptrs = md.ptrs[:len(md.ptrs)-1]
	delete(md.idx, p)
	delete(md.rows, p)
}

func (md *model) random(rng *rand.Rand) RowPtr { return md.ptrs[rng.IntN(len(md.ptrs))] }

// check compares every live row and a full scan with the model, and checks
// the heap's own invariants.
func (md *model) check(tb testing.TB, h *Heap) {
	tb.Helper()
	var buf []byte
	var err error
	for _, p := range md.ptrs {
		buf, err = h.Fetch(nil, p, buf)
		require.NoError(tb, err, "fetch %s", p)
		requireRow(tb, md.rows[p], buf, "row %s", p)
	}
	md.checkScan(tb, h)
	require.NoError(tb, h.Check(nil))
}

// checkScan compares a full scan (rows and physical order) with the model.
func (md *model) checkScan(tb testing.TB, h *Heap) {
	tb.Helper()
	want := append([]RowPtr(nil), md.ptrs...)
	slices.SortFunc(want, RowPtr.Compare)
	var m Meter
	ptrs, rows := scanAll(tb, h, &m)
	require.Equal(tb, want, ptrs, "scan order")
	for i, p := range ptrs {
		requireRow(tb, md.rows[p], rows[i], "scanned row %s", p)
	}
	require.Equal(tb, int64(len(want)), m.HeapRowsScanned)
	require.Zero(tb, m.PageRequests[page.KindFSM], "a scan skips FSM pages without reading them")
}

// randomRow returns a row whose length is mostly small, sometimes up to the
// limit and now and then too large.
func randomRow(rng *rand.Rand, maxRow int) []byte {
	var n int
	switch r := rng.IntN(100); {
	case r < 5:
		n = rng.IntN(8)
	case r < 65:
		n = 20 + rng.IntN(180)
	case r < 90:
		n = 200 + rng.IntN(400)
	case r < 98:
		n = 600 + rng.IntN(maxRow-600+1)
	default:
		n = maxRow + 1 + rng.IntN(100)
	}
	row := make([]byte, n)
	for i := range row {
		row[i] = byte(rng.Uint32())
	}
	return row
}

// TestModel runs thousands of seeded random operations against a map
// model, on a pool of 20 4 KiB frames, so that pages are evicted and read
// back through the store all the time, and reopens the heap on a new pool
// now and then.
func TestModel(t *testing.T) {
	h := runModel(t, 4<<10, 20, 6000, 1)
	require.Len(t, *h.chain.Load(), 1)
}

// TestModelFSMChain runs the model test with FSM pages that cover 5 pages
// each, so that the FSM is a long chain interleaved with the heap pages:
// extension, searches across FSM pages, scans skipping them and Open
// walking the chain are all exercised.
func TestModelFSMChain(t *testing.T) {
	testFSMPerPage = 5
	defer func() { testFSMPerPage = 0 }()
	h := runModel(t, 4<<10, 20, 2000, 3)
	require.Greater(t, len(*h.chain.Load()), 5)
}

// runModel runs ops seeded random operations against a model and returns
// the heap, reopened a last time and checked.
func runModel(t *testing.T, pageSize, frames, ops int, stream uint64) *Heap {
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, stream))
	st, pool, h := newHeapForTest(t, pageSize, frames)
	md := newModel()
	var m Meter
	var moves, fetches int64
	var buf []byte
	var err error
	for i := range ops {
		switch r := rng.IntN(100); {
		case r < 35 || len(md.ptrs) == 0: // insert
			row := randomRow(rng, h.MaxRowSize())
			p, err := h.Insert(&m, row)
			if len(row) > h.MaxRowSize() {
				require.ErrorIs(t, err, ErrRowTooLarge, "op %d", i)
				continue
			}
			require.NoError(t, err, "op %d", i)
			_, dup := md.rows[p]
			require.False(t, dup, "op %d: insert returned the live pointer %s", i, p)
			md.add(p, row)
		case r < 50: // fetch a live row
			p := md.random(rng)
			buf, err = h.Fetch(&m, p, buf)
			fetches++
			require.NoError(t, err, "op %d", i)
			requireRow(t, md.rows[p], buf, "op %d: row %s", i, p)
		case r < 55: // fetch any pointer
			p := RowPtr{Page: rng.Uint32N(h.HighWater() + 3), Slot: uint16(rng.IntN(64))}
			before := m.HeapFetches
			buf, err = h.Fetch(&m, p, buf)
			fetches += m.HeapFetches - before
			if want, ok := md.rows[p]; ok {
				require.NoError(t, err, "op %d", i)
				requireRow(t, want, buf, "op %d: row %s", i, p)
			} else {
				require.ErrorIs(t, err, ErrRowNotFound, "op %d: %s", i, p)
				require.Empty(t, buf)
			}
		case r < 80: // update, growing or shrinking
			p := md.random(rng)
			row := randomRow(rng, h.MaxRowSize())
			np, err := h.Update(&m, p, row)
			if len(row) > h.MaxRowSize() {
				require.ErrorIs(t, err, ErrRowTooLarge, "op %d", i)
				require.Equal(t, p, np)
				continue
			}
			require.NoError(t, err, "op %d", i)
			if np != p {
				moves++
				require.Greater(t, np.Page, p.Page, "op %d: a row moves to a higher page", i)
				_, dup := md.rows[np]
				require.False(t, dup, "op %d: moved onto the live pointer %s", i, np)
				_, err := h.Fetch(nil, p, nil)
				require.ErrorIs(t, err, ErrRowNotFound, "op %d: old pointer %s after the move", i, p)
				md.remove(p)
				md.add(np, row)
			} else {
				md.rows[p] = row
			}
		case r < 95: // delete
			p := md.random(rng)
			require.NoError(t, h.Delete(&m, p), "op %d", i)
			md.remove(p)
			require.ErrorIs(t, h.Delete(&m, p), ErrRowNotFound, "op %d: second delete", i)
		case r < 99:
			// A full check (every row, a scan, Check) now and then;
			// most of the time just a scan against the model.
			if rng.IntN(4) == 0 {
				md.check(t, h)
			} else {
				md.checkScan(t, h)
			}
		default:
			pool, h = reopen(t, st, pool, 1, frames)
			md.check(t, h)
		}
	}
	md.check(t, h)
	require.Equal(t, moves, m.HeapMoves)
	require.Equal(t, fetches, m.HeapFetches)
	t.Logf("%d live rows on %d pages; %s", len(md.ptrs), h.HighWater(), m.String())
	// The test is only worth something if it evicted, re-read and moved.
	require.Positive(t, m.Evictions)
	require.Positive(t, m.StoreReads)
	require.Positive(t, moves)

	_, h = reopen(t, st, pool, 1, frames)
	md.check(t, h)
	return h
}

// TestModelLargePages runs a shorter model test on 64 KiB pages, where an
// empty page's cell start does not fit in 16 bits.
func TestModelLargePages(t *testing.T) {
	const pageSize = 64 << 10
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 2))
	st, pool, h := newHeapForTest(t, pageSize, 16)
	md := newModel()
	for i := range 1000 {
		row := make([]byte, rng.IntN(h.MaxRowSize()/2))
		for j := range row {
			row[j] = byte(rng.Uint32())
		}
		switch r := rng.IntN(10); {
		case r < 5 || len(md.ptrs) == 0:
			p, err := h.Insert(nil, row)
			require.NoError(t, err, "op %d", i)
			md.add(p, row)
		case r < 8:
			p := md.random(rng)
			np, err := h.Update(nil, p, row)
			require.NoError(t, err, "op %d", i)
			md.remove(p)
			md.add(np, row)
		default:
			p := md.random(rng)
			require.NoError(t, h.Delete(nil, p), "op %d", i)
			md.remove(p)
		}
	}
	md.check(t, h)
	_, h = reopen(t, st, pool, 1, 16)
	md.check(t, h)
}

func TestErrors(t *testing.T) {
	st, pool, h := newHeapForTest(t, 4<<10, 16)
	p, err := h.Insert(nil, []byte("row"))
	require.NoError(t, err)

	// Too large: the message names both sizes.
	_, err = h.Insert(nil, make([]byte, 1014))
	require.ErrorIs(t, err, ErrRowTooLarge)
	require.EqualError(t, err, "heap: row too large: 1014 bytes, at most 1013 (a quarter of the body of a 4096-byte page)")
	_, err = h.Insert(nil, make([]byte, 1013))
	require.NoError(t, err)
	np, err := h.Update(nil, p, make([]byte, 5000))
	require.ErrorIs(t, err, ErrRowTooLarge)
	require.Equal(t, p, np)

	// Bad pointers: none panics, all are ErrRowNotFound naming the pointer.
	require.NoError(t, h.Delete(nil, RowPtr{Page: p.Page, Slot: 1}))
	for _, c := range []struct {
		ptr RowPtr
		msg string
	}{
		{RowPtr{Page: 0, Slot: 0}, "heap: row not found: (0,0) in space 1: page 0 is the space's meta page"},
		{RowPtr{Page: 1, Slot: 0}, "heap: row not found: (1,0) in space 1: page 1 has kind fsm, not heap"},
		{RowPtr{Page: p.Page, Slot: 1}, "heap: row not found: (2,1) in space 1: page 2 has 1 slots"},
		{RowPtr{Page: p.Page, Slot: 65535}, "heap: row not found: (2,65535) in space 1: page 2 has 1 slots"},
		{RowPtr{Page: 3, Slot: 0}, "heap: row not found: (3,0) in space 1: page 3 is beyond the heap's end (high water 3)"},
		{RowPtr{Page: 1 << 31, Slot: 7}, "heap: row not found: (2147483648,7) in space 1: page 2147483648 is beyond the heap's end (high water 3)"},
	} {
		buf, err := h.Fetch(nil, c.ptr, []byte("junk"))
		require.ErrorIs(t, err, ErrRowNotFound, "%s", c.ptr)
		require.EqualError(t, err, c.msg)
		require.Empty(t, buf)
		_, err = h.Update(nil, c.ptr, []byte("x"))
		require.ErrorIs(t, err, ErrRowNotFound, "%s", c.ptr)
		require.ErrorIs(t, h.Delete(nil, c.ptr), ErrRowNotFound, "%s", c.ptr)
	}
	// A deleted slot (not the last one, so it is not trimmed).
	q, err := h.Insert(nil, []byte("second"))
	require.NoError(t, err)
	require.Equal(t, RowPtr{Page: 2, Slot: 1}, q)
	require.NoError(t, h.Delete(nil, p))
	_, err = h.Fetch(nil, p, nil)
	require.EqualError(t, err, "heap: row not found: (2,0) in space 1: slot 0 is deleted")
	_, err = h.Update(nil, p, nil)
	require.ErrorIs(t, err, ErrRowNotFound)
	require.ErrorIs(t, h.Delete(nil, p), ErrRowNotFound)
	require.NoError(t, h.Check(nil))

	// Create and Open refuse spaces that are not (empty or) heaps.
	_, err = Create(nil, pool, 1)
	require.ErrorIs(t, err, ErrNotHeap)
	_, err = Open(nil, pool, 2)
	require.ErrorIs(t, err, cache.ErrSpaceNotFound)
	require.NoError(t, pool.CreateSpace(nil, 2))
	_, err = Open(nil, pool, 2)
	require.ErrorIs(t, err, ErrNotHeap)
	h2, err := Create(nil, pool, 2) // an empty space is fine
	require.NoError(t, err)
	require.NoError(t, h2.Check(nil))
	// A space whose root is not an FSM page.
	require.NoError(t, pool.CreateSpace(nil, 3))
	mt := pool.BeginMtr(nil)
	pg, err := pool.AllocPage(mt, nil, 3, page.KindBTreeLeaf)
	require.NoError(t, err)
	mt.Release(pg, true)
	require.NoError(t, pool.SetRoot(mt, 3, pg.ID().Page))
	mt.Commit()
	_, err = Open(nil, pool, 3)
	require.ErrorIs(t, err, ErrNotHeap)
	require.ErrorContains(t, err, "kind btree-leaf, want fsm")

	// A closed pool's error comes through, wrapped.
	require.NoError(t, pool.Close())
	_, err = h.Fetch(nil, q, nil)
	require.ErrorIs(t, err, cache.ErrClosed)
	_, err = h.Insert(nil, []byte("x"))
	require.ErrorIs(t, err, cache.ErrClosed)
	_ = st
}

// TestCorruptPage checks that a damaged heap page is reported as
// page.ErrCorruptPage, by fetch and scan alike, without a panic.
func TestCorruptPage(t *testing.T) {
	_, pool, h := newHeapForTest(t, 4<<10, 16)
	p, err := h.Insert(nil, []byte("hello"))
	require.NoError(t, err)
	pg, err := pool.Fetch(nil, page.ID{Space: 1, Page: p.Page})
	require.NoError(t, err)
	pg.Latch()
	hpage(pg.Data()).setSlot(0, 4094, 5) // runs past the page end
	pg.Unlatch()
	pg.Unpin(true)
	_, err = h.Fetch(nil, p, nil)
	require.ErrorIs(t, err, page.ErrCorruptPage)
	_, err = h.Update(nil, p, []byte("x"))
	require.ErrorIs(t, err, page.ErrCorruptPage)
	s := h.NewScan(nil)
	require.False(t, s.Next())
	require.ErrorIs(t, s.Err(), page.ErrCorruptPage)
	require.Error(t, h.Check(nil))

	pg, err = pool.Fetch(nil, page.ID{Space: 1, Page: p.Page})
	require.NoError(t, err)
	pg.Latch()
	hpage(pg.Data()).setNSlots(2000) // slot array past the cells
	pg.Unlatch()
	pg.Unpin(true)
	_, err = h.Fetch(nil, p, nil)
	require.ErrorIs(t, err, page.ErrCorruptPage)
	require.True(t, errors.Is(h.Delete(nil, p), page.ErrCorruptPage))
	_, err = h.Insert(nil, []byte("x"))
	require.ErrorIs(t, err, page.ErrCorruptPage)
}

func TestScanEmptyAndClose(t *testing.T) {
	_, _, h := newHeapForTest(t, 4<<10, 16)
	s := h.NewScan(nil)
	require.False(t, s.Next())
	require.NoError(t, s.Err())
	require.Equal(t, RowPtr{}, s.Ptr())
	require.Nil(t, s.Row())
	for i := range 100 {
		_, err := h.Insert(nil, bytes.Repeat([]byte{byte(i)}, 100))
		require.NoError(t, err)
	}
	s = h.NewScan(nil)
	require.True(t, s.Next())
	require.NoError(t, s.Close())
	require.False(t, s.Next())
}
