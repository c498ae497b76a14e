package cache_test

import (
	"testing"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/stretchr/testify/require"
)

// alloc allocates a page of kind k in space in a mini-transaction of its
// own, writes its number into the body and commits, returning the page
// number.
func alloc(t *testing.T, p *cache.Pool, space uint32, k page.Kind) uint32 {
	t.Helper()
	mt := p.BeginMtr(nil)
	pg, err := p.AllocPage(mt, nil, space, k)
	require.NoError(t, err)
	require.True(t, mt.Holds(pg), "AllocPage must return the page latched by the mtr")
	require.Equal(t, k, page.KindOf(pg.Data()))
	require.Equal(t, pg.ID(), page.IDOf(pg.Data()))
	require.Equal(t, make([]byte, 64), pg.Data()[page.HeaderSize:page.HeaderSize+64], "allocated page not zeroed")
	writeBody(mt, pg, "page "+pg.ID().String())
	id := pg.ID()
	mt.Release(pg, true)
	mt.Commit()
	return id.Page
}

// free puts page no of space on the free list, in a mini-transaction of its
// own.
func free(t *testing.T, p *cache.Pool, space, no uint32) {
	t.Helper()
	pg, err := p.Fetch(nil, pid(space, no))
	require.NoError(t, err)
	mt := p.BeginMtr(nil)
	mt.Latch(pg)
	require.NoError(t, p.FreePage(mt, nil, pg))
	require.Equal(t, page.KindFree, page.KindOf(pg.Data()))
	mt.Release(pg, true)
	mt.Commit()
}

// setRoot stores root in space's meta page in a mini-transaction of its
// own.
func setRoot(p *cache.Pool, space, root uint32) error {
	mt := p.BeginMtr(nil)
	defer mt.Commit()
	return p.SetRoot(mt, space, root)
}

// allocErr tries an allocation that is expected to fail, in a
// mini-transaction of its own, and returns the error.
func allocErr(t *testing.T, p *cache.Pool, r *cache.Reservation, space uint32) error {
	t.Helper()
	mt := p.BeginMtr(nil)
	pg, err := p.AllocPage(mt, r, space, page.KindHeap)
	require.Nil(t, pg)
	require.Zero(t, mt.Commit(), "a failed allocation logs nothing")
	return err
}

func spaceInfo(t *testing.T, p *cache.Pool, space uint32) cache.SpaceInfo {
	t.Helper()
	info, err := p.Space(nil, space)
	require.NoError(t, err)
	return info
}

func TestSpaceCreateAndLookup(t *testing.T) {
	st := newStore(t)
	p := newPool(t, st, 16, cache.Options{})

	_, err := p.Space(nil, 1)
	require.ErrorIs(t, err, cache.ErrSpaceNotFound)
	require.Contains(t, err.Error(), "space 1")
	require.ErrorIs(t, allocErr(t, p, nil, 1), cache.ErrSpaceNotFound)
	require.ErrorIs(t, setRoot(p, 1, 5), cache.ErrSpaceNotFound)

	require.NoError(t, p.CreateSpace(nil, 1))
	err = p.CreateSpace(nil, 1)
	require.ErrorIs(t, err, cache.ErrSpaceExists)
	require.Contains(t, err.Error(), "space 1")
	require.Equal(t, cache.SpaceInfo{Extents: 1, HighWater: 1}, spaceInfo(t, p, 1))
	require.Equal(t, 0, p.Stats().Pinned, "space calls must unpin the meta page")

	// Spaces are independent, and exist through a flush and a new pool.
	require.NoError(t, p.CreateSpace(nil, 7))
	require.Equal(t, uint32(1), alloc(t, p, 7, page.KindHeap))
	require.Equal(t, cache.SpaceInfo{Extents: 1, HighWater: 1}, spaceInfo(t, p, 1))
	require.NoError(t, p.Close())
	p = newPool(t, st, 16, cache.Options{})
	require.ErrorIs(t, p.CreateSpace(nil, 1), cache.ErrSpaceExists)
	require.ErrorIs(t, p.CreateSpace(nil, 7), cache.ErrSpaceExists)
	require.Equal(t, cache.SpaceInfo{Extents: 1, HighWater: 2}, spaceInfo(t, p, 7))
	_, err = p.Space(nil, 2)
	require.ErrorIs(t, err, cache.ErrSpaceNotFound)
}

func TestSpaceBadFormat(t *testing.T) {
	st := newStore(t)
	// A page 0 that is not a meta page, and one with a wrong magic.
	putPage(t, st, pid(3, 0), page.KindHeap, 0, "")
	putPage(t, st, pid(4, 0), page.KindMeta, 0, "XXXX")
	p := newPool(t, st, 16, cache.Options{})
	for _, space := range []uint32{3, 4} {
		_, err := p.Space(nil, space)
		require.ErrorIs(t, err, cache.ErrBadFormat, "space %d", space)
		require.ErrorIs(t, allocErr(t, p, nil, space), cache.ErrBadFormat)
		require.ErrorIs(t, setRoot(p, space, 1), cache.ErrBadFormat)
		require.ErrorIs(t, p.CreateSpace(nil, space), cache.ErrSpaceExists)
	}
	require.Equal(t, cache.Stats{Frames: 16, Resident: 2}, p.Stats())
}

func TestSpaceAllocExtentsFreeListRoot(t *testing.T) {
	st := newStore(t)
	p := newPool(t, st, 16, cache.Options{})
	require.NoError(t, p.CreateSpace(nil, 1))

	// Pages 1, 2, 3, ... and one more extent every 64 pages, through a
	// pool far smaller than the space.
	for want := uint32(1); want <= 3*cache.ExtentPages+1; want++ {
		require.Equal(t, want, alloc(t, p, 1, page.KindBTreeLeaf))
		info := spaceInfo(t, p, 1)
		require.Equal(t, want+1, info.HighWater)
		require.Equal(t, want/cache.ExtentPages+1, info.Extents, "after page %d", want)
	}
	require.Equal(t, cache.SpaceInfo{Extents: 4, HighWater: 194}, spaceInfo(t, p, 1))
	require.Equal(t, 0, p.Stats().Pinned)

	// Freed pages are reused last freed first, before the space grows.
	for _, no := range []uint32{5, 130, 64} {
		free(t, p, 1, no)
	}
	require.Equal(t, cache.SpaceInfo{Extents: 4, HighWater: 194, FreePages: 3}, spaceInfo(t, p, 1))
	require.Equal(t, uint32(64), alloc(t, p, 1, page.KindHeap))
	require.Equal(t, cache.SpaceInfo{Extents: 4, HighWater: 194, FreePages: 2}, spaceInfo(t, p, 1))

	// The free list lives in the store: it survives a new pool.
	require.NoError(t, setRoot(p, 1, 42))
	require.NoError(t, p.Close())
	p = newPool(t, st, 16, cache.Options{})
	require.Equal(t, cache.SpaceInfo{Extents: 4, HighWater: 194, FreePages: 2, Root: 42}, spaceInfo(t, p, 1))
	require.Equal(t, uint32(130), alloc(t, p, 1, page.KindHeap))
	require.Equal(t, uint32(5), alloc(t, p, 1, page.KindHeap))
	require.Equal(t, uint32(194), alloc(t, p, 1, page.KindHeap))
	require.Equal(t, cache.SpaceInfo{Extents: 4, HighWater: 195, Root: 42}, spaceInfo(t, p, 1))

	// Every page still holds what was written into it.
	require.NoError(t, p.FlushAll(nil))
	for no := uint32(1); no <= 194; no++ {
		id := pid(1, no)
		want := "page " + id.String()
		require.Equal(t, want, storedBody(t, st, id, len(want)))
	}

	// Root round trip, including back to none.
	for _, root := range []uint32{7, 0xfffffffe, 0} {
		require.NoError(t, setRoot(p, 1, root))
		require.Equal(t, root, spaceInfo(t, p, 1).Root)
	}

	// The meta page cannot be freed.
	meta, err := p.Fetch(nil, pid(1, 0))
	require.NoError(t, err)
	mt := p.BeginMtr(nil)
	mt.Latch(meta)
	err = p.FreePage(mt, nil, meta)
	require.Error(t, err)
	require.Contains(t, err.Error(), "1:0")
	mt.Release(meta, false)
	require.Zero(t, mt.Commit())

	// Nor can a page the mtr has not latched: FreePage refuses it before
	// touching the page or the meta page.
	pg, err := p.Fetch(nil, pid(1, 7))
	require.NoError(t, err)
	mt = p.BeginMtr(nil)
	err = p.FreePage(mt, nil, pg)
	require.Error(t, err)
	require.Contains(t, err.Error(), "1:7")
	require.Zero(t, mt.Commit())
	pg.Unpin(false)
	require.Equal(t, cache.SpaceInfo{Extents: 4, HighWater: 195}, spaceInfo(t, p, 1))
	require.Equal(t, 0, p.Stats().Pinned)
}

// TestSpaceFreeListWithReservation allocates and frees through a
// reservation. The meta page changes in the allocation's mtr, so the mtr
// holds its latch and pin, and with them the reservation's frame, until
// Commit: one allocation needs two frames while its mtr is open and gives
// both back at Commit. A failed allocation leaves the meta page unchanged,
// and its frame comes back at once.
func TestSpaceFreeListWithReservation(t *testing.T) {
	st := newStore(t)
	p := newPool(t, st, 16, cache.Options{})
	require.NoError(t, p.CreateSpace(nil, 2))
	require.NoError(t, p.FlushAll(nil))
	p = newPool(t, st, 16, cache.Options{}) // cold: the meta page needs a frame too

	r, err := p.Reserve(2)
	require.NoError(t, err)
	mt := p.BeginMtr(nil)
	pg, err := p.AllocPage(mt, r, 2, page.KindHeap)
	require.NoError(t, err)
	require.Equal(t, 0, r.Left(), "the changed meta page is held by the mtr until Commit")
	s := p.Stats()
	require.Equal(t, 2, s.Pinned, "before Commit: the meta page and the new page are pinned")
	require.Zero(t, s.Reserved)
	require.Equal(t, pid(2, 1), pg.ID())
	mt.Release(pg, true)
	require.Equal(t, 0, r.Left(), "a changed page stays pinned after Release")
	require.Equal(t, 2, p.Stats().Pinned)
	require.Zero(t, mt.Commit(), "no log: nothing is logged")
	require.Equal(t, 2, r.Left(), "Commit gives both frames back to the reservation")
	require.Equal(t, cache.Stats{Frames: 16, Resident: 2, Reserved: 2, Dirty: 2}, p.Stats())
	r.Release()
	require.Equal(t, cache.Stats{Frames: 16, Resident: 2, Dirty: 2}, p.Stats())

	r, err = p.Reserve(1)
	require.NoError(t, err)
	pg, err = p.Fetch(nil, pid(2, 1))
	require.NoError(t, err)
	mt = p.BeginMtr(nil)
	mt.Latch(pg)
	require.NoError(t, p.FreePage(mt, r, pg))
	require.Equal(t, 0, r.Left(), "the meta page's frame is held until Commit")
	mt.Release(pg, true)
	require.Equal(t, 0, r.Left())
	mt.Commit()
	require.Equal(t, 1, r.Left(), "Commit gives the meta page's frame back")
	r.Release()
	require.Equal(t, cache.SpaceInfo{Extents: 1, HighWater: 2, FreePages: 1}, spaceInfo(t, p, 2))
	mt = p.BeginMtr(nil)
	pg, err = p.AllocPage(mt, nil, 2, page.KindFSM)
	require.NoError(t, err)
	require.Equal(t, pid(2, 1), pg.ID())
	require.Equal(t, page.KindFSM, page.KindOf(pg.Data()))
	mt.Release(pg, true)
	mt.Commit()
	require.Equal(t, cache.Stats{Frames: 16, Resident: 2, Dirty: 2}, p.Stats())

	// A reservation of one frame is not enough for a cold allocation
	// when nothing else is free.
	p = newPool(t, st, 16, cache.Options{})
	require.NoError(t, p.FlushAll(nil))
	var held []*cache.Page
	for range 15 {
		mt := p.BeginMtr(nil)
		pg, err := p.AllocPage(mt, nil, 2, page.KindHeap)
		require.NoError(t, err)
		id := pg.ID()
		mt.Release(pg, true)
		mt.Commit()
		pg, err = p.Fetch(nil, id) // keep it pinned
		require.NoError(t, err)
		held = append(held, pg)
	}
	// 15 pages pinned, the meta page resident: one frame left.
	require.Equal(t, cache.Stats{Frames: 16, Resident: 16, Pinned: 15, Dirty: 16}, p.Stats())
	r, err = p.Reserve(1)
	require.NoError(t, err)
	require.ErrorIs(t, allocErr(t, p, r, 2), cache.ErrPoolExhausted)
	require.Equal(t, 1, r.Left(), "a failed allocation must give the frame back")
	r.Release()
	for _, pg := range held {
		pg.Unpin(false)
	}
	require.Equal(t, cache.Stats{Frames: 16, Resident: 16, Dirty: 16}, p.Stats())
	// The pool before this one was never flushed: the store's space had
	// only its meta page, so the 15 allocations took pages 1 to 15.
	require.Equal(t, cache.SpaceInfo{Extents: 1, HighWater: 16}, spaceInfo(t, p, 2),
		"the failed allocation must not move the high water")
}

// TestSpaceDurable runs the space life cycle over a pebble database on
// disk, closing and reopening the store in between.
func TestSpaceDurable(t *testing.T) {
	dir := t.TempDir()
	open := func() (*store.PebbleStore, *cache.Pool) {
		st, err := store.OpenPebble(store.PebbleOptions{Dir: dir, PageSize: testPageSize})
		require.NoError(t, err)
		return st, newPool(t, st, 16, cache.Options{})
	}

	st, p := open()
	require.NoError(t, p.CreateSpace(nil, 9))
	for want := uint32(1); want <= 70; want++ {
		require.Equal(t, want, alloc(t, p, 9, page.KindHeap))
	}
	free(t, p, 9, 3)
	free(t, p, 9, 66)
	require.NoError(t, setRoot(p, 9, 66))
	require.NoError(t, p.Close())
	require.NoError(t, st.Close())

	st, p = open()
	require.ErrorIs(t, p.CreateSpace(nil, 9), cache.ErrSpaceExists)
	require.Equal(t, cache.SpaceInfo{Extents: 2, HighWater: 71, FreePages: 2, Root: 66}, spaceInfo(t, p, 9))
	require.Equal(t, uint32(66), alloc(t, p, 9, page.KindHeap))
	require.NoError(t, p.Close())
	require.NoError(t, st.Close())

	st, p = open()
	require.Equal(t, cache.SpaceInfo{Extents: 2, HighWater: 71, FreePages: 1, Root: 66}, spaceInfo(t, p, 9))
	require.Equal(t, uint32(3), alloc(t, p, 9, page.KindHeap))
	require.Equal(t, uint32(71), alloc(t, p, 9, page.KindHeap))
	for no := uint32(1); no <= 71; no++ {
		pg, err := p.Fetch(nil, pid(9, no))
		require.NoError(t, err)
		want := "page " + pid(9, no).String()
		require.Equal(t, want, body(pg, len(want)))
		require.Equal(t, page.KindHeap, page.KindOf(pg.Data()))
		pg.Unpin(false)
	}
	require.NoError(t, p.Close())
	require.NoError(t, st.Close())
}
