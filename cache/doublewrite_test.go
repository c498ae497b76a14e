package cache_test

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/stretchr/testify/require"
)

// newDoublewrite creates the doublewrite file of st's database, closed
// when the test ends.
func newDoublewrite(t testing.TB, st *store.PebbleStore) *cache.Doublewrite {
	t.Helper()
	dw, err := cache.OpenDoublewrite(st.FS(), st.Dir(), st.PageSize(), true)
	require.NoError(t, err)
	require.NotNil(t, dw)
	t.Cleanup(func() { require.NoError(t, dw.Close()) })
	return dw
}

// dirtyPages writes pages 0..n-1 of space 1 to the store, then changes
// each in the pool (raw changes: no log), so that n pages are dirty.
func dirtyPages(t testing.TB, p *cache.Pool, st store.Store, n int) []page.ID {
	t.Helper()
	putPages(t, st, 1, 0, uint32(n-1))
	ids := make([]page.ID, n)
	for i := range n {
		ids[i] = pid(1, uint32(i))
		pg, err := p.Fetch(nil, ids[i])
		require.NoError(t, err)
		pg.Latch()
		setBody(pg, fmt.Sprintf("changed %d", i))
		pg.Unlatch()
		pg.Unpin(true)
	}
	return ids
}

// TestDoublewriteBatches: with TornPagesDoublewrite, a flush of N dirty
// pages writes them in ceil(N/DoublewriteSlots) batches, each one write
// and one sync of the doublewrite file and, after its in-place writes,
// one store sync; every page once to the doublewrite file and once in
// place. A single page (FlushPage, an eviction's write-back) is a batch
// of its own, charged to its caller.
func TestDoublewriteBatches(t *testing.T) {
	for _, n := range []int{1, cache.DoublewriteSlots, cache.DoublewriteSlots + 1, 300} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			st := newStore(t)
			dw := newDoublewrite(t, st)
			p := newPoolWith(t, st, 1024, cache.Options{TornPages: cache.TornPagesDoublewrite}, cache.Wiring{Doublewrite: dw})
			ids := dirtyPages(t, p, st, n)
			var m cache.Meter
			require.NoError(t, p.FlushAll(&m))
			batches := int64((n + cache.DoublewriteSlots - 1) / cache.DoublewriteSlots)
			ps := int64(st.PageSize())
			require.Equal(t, cache.Meter{PageFlushes: int64(n), StoreWrites: int64(n), StoreWriteBytes: int64(n) * ps,
				StoreSyncs: batches, DoublewriteWrites: batches, DoublewritePages: int64(n), DoublewriteBytes: int64(n) * ps,
				DoublewriteSyncs: batches}, m, m.String())
			for i, id := range ids {
				require.Equal(t, fmt.Sprintf("changed %d", i), storedBody(t, st, id, len(fmt.Sprintf("changed %d", i))))
			}
			// The file holds the last batch: the pages past the full
			// batches, in order.
			seq, last, err := dw.Batch()
			require.NoError(t, err)
			require.Equal(t, uint64(batches), seq)
			require.Equal(t, ids[(batches-1)*cache.DoublewriteSlots:], last)
		})
	}

	t.Run("single pages", func(t *testing.T) {
		st := newStore(t)
		dw := newDoublewrite(t, st)
		p := newPoolWith(t, st, 16, cache.Options{TornPages: cache.TornPagesDoublewrite, Policy: cache.PolicyLRU}, cache.Wiring{Doublewrite: dw})
		ids := dirtyPages(t, p, st, 16)
		var m cache.Meter
		require.NoError(t, p.FlushPage(&m, ids[3]))
		ps := int64(st.PageSize())
		one := cache.Meter{StoreWrites: 1, StoreWriteBytes: ps, StoreSyncs: 1, DoublewriteWrites: 1, DoublewritePages: 1,
			DoublewriteBytes: ps, DoublewriteSyncs: 1}
		want := one
		want.PageFlushes = 1
		require.Equal(t, want, m, m.String())
		// The pool is full of dirty pages: a fetch of another page evicts
		// the LRU one (page 0) and writes it back itself.
		putPage(t, st, pid(2, 0), page.KindHeap, 0, "new")
		m = cache.Meter{}
		touch(t, p, &m, pid(2, 0))
		require.Equal(t, int64(1), m.DirtyWriteBacks)
		got := m
		got.PageRequests, got.PoolMisses, got.StoreReads, got.StoreReadBytes, got.Evictions, got.DirtyWriteBacks = [page.NumKinds]int64{}, 0, 0, 0, 0, 0
		require.Equal(t, one, got, m.String())
		_, last, err := dw.Batch()
		require.NoError(t, err)
		require.Equal(t, []page.ID{ids[0]}, last)
	})

	t.Run("without", func(t *testing.T) {
		st := newStore(t)
		p := newPool(t, st, 64, cache.Options{})
		dirtyPages(t, p, st, 40)
		var m cache.Meter
		require.NoError(t, p.FlushAll(&m))
		require.Equal(t, cache.Meter{PageFlushes: 40, StoreWrites: 40, StoreWriteBytes: 40 * int64(st.PageSize())}, m, m.String())
	})
}

// TestDoublewriteCleaner: a page cleaner pass writes its LRU batch and
// its flush-list batch each through the doublewrite file.
func TestDoublewriteCleaner(t *testing.T) {
	rng := seed(t)
	st := newStore(t)
	dw := newDoublewrite(t, st)
	l, err := redo.Open(st, nil)
	require.NoError(t, err)
	t.Cleanup(l.Close)
	p := newPoolWith(t, st, 160, cache.Options{TornPages: cache.TornPagesDoublewrite, IOCapacity: 100, IOCapacityMax: 1000},
		cache.Wiring{Log: l, Doublewrite: dw, LogCapacity: 1 << 20})
	require.NoError(t, p.CreateSpace(nil, 1))
	for range 200 {
		allocRandom(t, p, rng, 1)
	}
	var m cache.Meter
	n, err := p.CleanStep(&m, 1000, true)
	require.NoError(t, err)
	require.Positive(t, m.CleanerLRUPages)
	require.Positive(t, m.CleanerFlushListPages)
	require.Equal(t, int64(n), m.CleanerLRUPages+m.CleanerFlushListPages)
	batches := (m.CleanerLRUPages+cache.DoublewriteSlots-1)/cache.DoublewriteSlots +
		(m.CleanerFlushListPages+cache.DoublewriteSlots-1)/cache.DoublewriteSlots
	require.Equal(t, batches, m.DoublewriteWrites, m.String())
	require.Equal(t, batches, m.DoublewriteSyncs)
	require.Equal(t, batches, m.StoreSyncs)
	require.Equal(t, int64(n), m.DoublewritePages)
	require.Equal(t, int64(n), m.StoreWrites)
}

// damagePage flips a byte of page id's body in the store, under the page
// API (the store's raw key access): its checksum fails.
func damagePage(t testing.TB, st *store.PebbleStore, id page.ID) {
	t.Helper()
	buf := make([]byte, st.PageSize())
	require.NoError(t, st.ReadPage(id, buf))
	buf[page.HeaderSize+100] ^= 0x40
	k := store.PageKey(id)
	require.NoError(t, st.Set("damage page", k[:], buf, true))
	require.ErrorIs(t, st.ReadPage(id, buf), page.ErrCorruptPage)
}

// damageFile flips a byte of the doublewrite file at off.
func damageFile(t testing.TB, fs vfs.FS, path string, off int64) {
	t.Helper()
	f, err := fs.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	b := make([]byte, 1)
	_, err = f.ReadAt(b, off)
	require.NoError(t, err)
	b[0] ^= 0x10
	_, err = f.WriteAt(b, off)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// TestDoublewriteRecover: a store page that fails its checksum while its
// copy in the last batch is sound is restored; a slot that does not hold
// the header's image while its page's store copy is whole is a torn
// write of an unfinished batch, ignored; a damaged header, a file of the
// wrong size, or a torn store page whose copy does not verify are errors
// naming the file.
func TestDoublewriteRecover(t *testing.T) {
	setup := func(t *testing.T) (*store.PebbleStore, *cache.Doublewrite, []page.ID) {
		st := newStore(t)
		dw := newDoublewrite(t, st)
		p := newPoolWith(t, st, 64, cache.Options{TornPages: cache.TornPagesDoublewrite}, cache.Wiring{Doublewrite: dw})
		ids := dirtyPages(t, p, st, 10)
		require.NoError(t, p.FlushAll(nil))
		return st, dw, ids
	}
	slotOff := func(st *store.PebbleStore, i int) int64 { return 4096 + int64(i*st.PageSize()) }

	t.Run("restore", func(t *testing.T) {
		st, dw, ids := setup(t)
		damagePage(t, st, ids[4])
		r, err := dw.Recover(st)
		require.NoError(t, err)
		require.Equal(t, cache.DoublewriteRecovery{Batch: 1, Pages: 10, Restored: 1}, r)
		require.Equal(t, "changed 4", storedBody(t, st, ids[4], 9))
		// Once restored, nothing is left to do.
		r, err = dw.Recover(st)
		require.NoError(t, err)
		require.Equal(t, cache.DoublewriteRecovery{Batch: 1, Pages: 10}, r)
	})
	t.Run("torn tail", func(t *testing.T) {
		st, dw, _ := setup(t)
		damageFile(t, st.FS(), dw.Path(), slotOff(st, 7)+500)
		damageFile(t, st.FS(), dw.Path(), slotOff(st, 9)+20)
		r, err := dw.Recover(st)
		require.NoError(t, err)
		require.Equal(t, cache.DoublewriteRecovery{Batch: 1, Pages: 10, Torn: 2}, r)
	})
	t.Run("torn page, damaged copy", func(t *testing.T) {
		st, dw, ids := setup(t)
		damagePage(t, st, ids[2])
		damageFile(t, st.FS(), dw.Path(), slotOff(st, 2)+300)
		_, err := dw.Recover(st)
		require.ErrorIs(t, err, cache.ErrCorruptDoublewrite)
		require.ErrorIs(t, err, page.ErrCorrupt)
		require.ErrorContains(t, err, dw.Path())
		require.ErrorContains(t, err, ids[2].String())
	})
	t.Run("damaged header", func(t *testing.T) {
		st, dw, _ := setup(t)
		damageFile(t, st.FS(), dw.Path(), 40)
		_, err := dw.Recover(st)
		require.ErrorIs(t, err, cache.ErrCorruptDoublewrite)
		require.ErrorContains(t, err, dw.Path())
		_, _, err = dw.Batch()
		require.ErrorIs(t, err, cache.ErrCorruptDoublewrite)
	})
	t.Run("wrong size", func(t *testing.T) {
		st, dw, _ := setup(t)
		f, err := st.FS().OpenReadWrite(dw.Path(), vfs.WriteCategoryUnspecified)
		require.NoError(t, err)
		_, err = f.WriteAt([]byte{1}, 4096+int64(cache.DoublewriteSlots*st.PageSize()))
		require.NoError(t, err)
		require.NoError(t, f.Close())
		_, err = dw.Recover(st)
		require.ErrorIs(t, err, cache.ErrCorruptDoublewrite)
		require.ErrorContains(t, err, dw.Path())
	})
	t.Run("other page size", func(t *testing.T) {
		st, dw, _ := setup(t)
		require.NoError(t, dw.Close())
		other, err := cache.OpenDoublewrite(st.FS(), st.Dir(), 2*st.PageSize(), false)
		require.NoError(t, err)
		defer other.Close()
		_, err = other.Recover(st)
		require.ErrorIs(t, err, cache.ErrCorruptDoublewrite)
	})
}

// TestDoublewriteOptions: the protection's name, and a pool that asks for
// it without a file is refused.
func TestDoublewriteOptions(t *testing.T) {
	var o cache.Options
	require.NoError(t, o.TornPages.Set("doublewrite"))
	require.Equal(t, cache.TornPagesDoublewrite, o.TornPages)
	require.Equal(t, "doublewrite", o.TornPages.String())
	err := o.TornPages.Set("double-write")
	require.ErrorIs(t, err, cache.ErrInvalidOptions)
	require.ErrorContains(t, err, `"double-write"`)

	st := newStore(t)
	_, err = cache.NewPool(st, &cache.Options{PoolSize: 64 * 4096, TornPages: cache.TornPagesDoublewrite}, nil)
	require.ErrorIs(t, err, cache.ErrInvalidOptions)
	// No file and none asked for: nothing to open.
	dw, err := cache.OpenDoublewrite(st.FS(), st.Dir(), st.PageSize(), false)
	require.NoError(t, err)
	require.Nil(t, dw)
}

// syncLogStore is a hookStore that also logs its syncs.
type syncLogStore struct {
	hookStore
	syncs *[]int // the writes done at each sync
	n     *int
}

func (s *syncLogStore) Sync() error {
	*s.syncs = append(*s.syncs, *s.n)
	return s.Store.Sync()
}

// TestDoublewriteOrder: a page reaches the store only once its image is
// in its batch's slot of the doublewrite file and synced (a crash image
// of the filesystem, which keeps only synced data, holds it), and the
// store is synced after each batch's in-place writes, before the next
// batch.
func TestDoublewriteOrder(t *testing.T) {
	fs := vfs.NewCrashableMem()
	inner, err := store.OpenPebble(store.PebbleOptions{FS: fs, Dir: "db", PageSize: testPageSize})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, inner.Close()) })
	dw := newDoublewrite(t, inner)
	var syncs []int
	writes := 0
	st := &syncLogStore{syncs: &syncs, n: &writes}
	st.Store = inner
	st.beforeWrite = func(id page.ID, buf []byte) error {
		slot := writes % cache.DoublewriteSlots
		writes++
		image := fs.CrashClone(vfs.CrashCloneCfg{})
		f, err := image.Open(dw.Path())
		require.NoError(t, err)
		defer f.Close()
		got := make([]byte, len(buf))
		_, err = f.ReadAt(got, 4096+int64(slot*len(buf)))
		require.NoError(t, err)
		require.Equal(t, buf, got, "page %s written in place before its doublewrite copy was synced", id)
		return nil
	}
	p := newPoolWith(t, st, 256, cache.Options{TornPages: cache.TornPagesDoublewrite}, cache.Wiring{Doublewrite: dw})
	dirtyPages(t, p, inner, cache.DoublewriteSlots+2)
	require.NoError(t, p.FlushAll(nil))
	require.Equal(t, cache.DoublewriteSlots+2, writes)
	require.Equal(t, []int{cache.DoublewriteSlots, cache.DoublewriteSlots + 2}, syncs)
}

// TestDoublewriteBatchError: a page that cannot be written (its frame's
// header names another page) in the middle of a doublewrite batch stops
// the flush with its error, but the pages the batch already held are
// written and released: none stays busy, and a second flush returns (the
// bad page's error again) instead of waiting for them.
func TestDoublewriteBatchError(t *testing.T) {
	st := newStore(t)
	dw := newDoublewrite(t, st)
	p := newPoolWith(t, st, 64, cache.Options{TornPages: cache.TornPagesDoublewrite}, cache.Wiring{Doublewrite: dw})
	const n, bad = 10, 5
	ids := dirtyPages(t, p, st, n)
	pg, err := p.Fetch(nil, ids[bad])
	require.NoError(t, err)
	pg.Latch()
	page.Init(pg.Data(), pid(1, 7), page.KindHeap)
	pg.Unlatch()
	pg.Unpin(true)

	var m cache.Meter
	err = p.FlushAll(&m)
	require.ErrorIs(t, err, page.ErrCorruptPage)
	require.Equal(t, int64(bad), m.PageFlushes, m.String())
	require.Equal(t, int64(1), m.DoublewriteWrites, m.String())
	for _, id := range ids[:bad] {
		want := fmt.Sprintf("changed %d", id.Page)
		require.Equal(t, want, storedBody(t, st, id, len(want)), "page %s, held by the batch, is written", id)
	}
	require.ErrorIs(t, p.FlushAll(nil), page.ErrCorruptPage, "the bad page is still dirty; the others are not busy")
	require.Equal(t, "page 1:7", storedBody(t, st, pid(1, 7), 8), "the bad frame was not written over page 1:7")
}
