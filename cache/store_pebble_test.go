package cache_test

import (
	"bytes"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/stretchr/testify/require"
)

// rawGet returns a copy of the value stored under page id's key.
func rawGet(t *testing.T, st *cache.PebbleStore, id page.ID) []byte {
	t.Helper()
	k := cache.PageKey(id)
	v, closer, err := st.DB().Get(k[:])
	require.NoError(t, err)
	out := bytes.Clone(v)
	require.NoError(t, closer.Close())
	return out
}

func rawSet(t *testing.T, st *cache.PebbleStore, id page.ID, v []byte) {
	t.Helper()
	k := cache.PageKey(id)
	require.NoError(t, st.DB().Set(k[:], v, pebble.Sync))
}

// writeThroughPool creates space 1, allocates its page 1, writes body into
// it and flushes everything, returning the page's id.
func writeThroughPool(t *testing.T, st cache.Store, body string) page.ID {
	t.Helper()
	p := newPool(t, st, 16, cache.Options{})
	require.NoError(t, p.CreateSpace(nil, 1))
	mt := p.BeginMtr(nil)
	pg, err := p.AllocPage(mt, nil, 1, page.KindHeap)
	require.NoError(t, err)
	setBody(pg, body)
	id := pg.ID()
	mt.Release(pg, true)
	mt.Commit()
	require.NoError(t, p.FlushAll(nil))
	return id
}

func TestStoreCorruptPageThroughPool(t *testing.T) {
	rng := seed(t)
	st := newStore(t)
	id := writeThroughPool(t, st, "precious data")
	require.Equal(t, pid(1, 1), id)
	good := rawGet(t, st, id)
	require.Len(t, good, testPageSize)

	offsets := []int{0, 4, 8, 12, 16, page.HeaderSize, len(good) - 1}
	for range 8 {
		offsets = append(offsets, rng.IntN(len(good)))
	}
	for _, off := range offsets {
		bad := bytes.Clone(good)
		bad[off] ^= byte(rng.IntN(255) + 1)
		rawSet(t, st, id, bad)

		// A fresh pool, so that the page is not resident.
		p := newPool(t, st, 16, cache.Options{})
		var m cache.Meter
		var pg *cache.Page
		var err error
		require.NotPanics(t, func() { pg, err = p.Fetch(&m, id) })
		require.ErrorIs(t, err, page.ErrCorruptPage, "offset %d", off)
		require.Contains(t, err.Error(), id.String())
		require.Nil(t, pg, "corrupt page returned as data")
		require.False(t, p.Resident(id))
		require.Equal(t, cache.Stats{Frames: 16}, p.Stats(), "a failed read must give its frame back")
		require.EqualValues(t, 1, m.StoreReads)
		require.Zero(t, m.StoreReadBytes)
		require.Zero(t, m.PoolMisses)
		require.Zero(t, m.PageRequestsTotal())

		// The store refuses it directly too.
		buf := make([]byte, testPageSize)
		require.ErrorIs(t, st.ReadPage(id, buf), page.ErrCorruptPage)
		require.Equal(t, make([]byte, testPageSize), buf, "corrupt bytes copied out")
	}

	// Wrong length and a misdirected write (page 2's image under page 1's key).
	rawSet(t, st, id, good[:len(good)-1])
	p := newPool(t, st, 16, cache.Options{})
	_, err := p.Fetch(nil, id)
	require.ErrorIs(t, err, page.ErrCorruptPage)
	require.Contains(t, err.Error(), id.String())

	other := make([]byte, testPageSize)
	page.Init(other, pid(1, 2), page.KindHeap)
	page.Seal(other)
	rawSet(t, st, id, other)
	_, err = p.Fetch(nil, id)
	require.ErrorIs(t, err, page.ErrCorruptPage)
	require.Contains(t, err.Error(), id.String())
	require.Contains(t, err.Error(), "1:2")

	// Restored, it reads fine in the same pool.
	rawSet(t, st, id, good)
	pg, err := p.Fetch(nil, id)
	require.NoError(t, err)
	require.Equal(t, "precious data", body(pg, 13))
	pg.Unpin(false)
}

func TestStorePageNotFound(t *testing.T) {
	st := newStore(t)
	buf := make([]byte, testPageSize)
	err := st.ReadPage(pid(4, 2), buf)
	require.ErrorIs(t, err, cache.ErrPageNotFound)
	require.Contains(t, err.Error(), "4:2")

	p := newPool(t, st, 16, cache.Options{})
	var m cache.Meter
	pg, err := p.Fetch(&m, pid(4, 2))
	require.ErrorIs(t, err, cache.ErrPageNotFound)
	require.Nil(t, pg)
	require.Equal(t, cache.Stats{Frames: 16}, p.Stats())
	require.EqualValues(t, 1, m.StoreReads)
	require.Zero(t, m.PoolMisses)
}

func TestStoreWriteReadAndKeys(t *testing.T) {
	st := newStore(t)
	require.Equal(t, testPageSize, st.PageSize())
	putPage(t, st, pid(1, 1), page.KindHeap, 5, "one")
	require.Equal(t, "one", storedBody(t, st, pid(1, 1), 3))
	putPage(t, st, pid(1, 1), page.KindHeap, 6, "two")
	require.Equal(t, "two", storedBody(t, st, pid(1, 1), 3))

	err := st.WritePage(pid(1, 2), make([]byte, testPageSize-1))
	require.Error(t, err)
	require.Contains(t, err.Error(), "1:2")

	// Pages of a space sort in page order and a space is one key range.
	ids := []page.ID{{Space: 0, Page: 0}, {Space: 0, Page: 1}, {Space: 0, Page: 255}, {Space: 0, Page: 256}, {Space: 0, Page: 1 << 24}, {Space: 1, Page: 0}, {Space: 1, Page: 1}, {Space: 256, Page: 0}, {Space: 0xffffffff, Page: 0xffffffff}}
	for i := 1; i < len(ids); i++ {
		a, b := cache.PageKey(ids[i-1]), cache.PageKey(ids[i])
		require.Negative(t, bytes.Compare(a[:], b[:]), "%s !< %s", ids[i-1], ids[i])
	}
	k := cache.PageKey(pid(1, 2))
	require.NotEqual(t, byte(cache.PrefixLog), k[0], "pages and log share a prefix")
}

func TestPebbleOptionsValidation(t *testing.T) {
	for _, ps := range []int{1, 2048, 4097, 6144, 128 << 10, -4096} {
		_, err := cache.OpenPebbleStore(cache.PebbleOptions{PageSize: ps})
		require.ErrorIs(t, err, cache.ErrInvalidConfig, "page size %d", ps)
		require.Contains(t, err.Error(), "page size")
	}
	_, err := cache.OpenPebbleStore(cache.PebbleOptions{PageSize: testPageSize, BlockCacheSize: -1})
	require.ErrorIs(t, err, cache.ErrInvalidConfig)
	require.Contains(t, err.Error(), "block cache")

	st, err := cache.OpenPebbleStore(cache.PebbleOptions{})
	require.NoError(t, err)
	require.Equal(t, page.DefaultSize, st.PageSize())
	require.NoError(t, st.Close())
}

func TestStoreReopenWithOtherPageSize(t *testing.T) {
	dir := t.TempDir()
	st, err := cache.OpenPebbleStore(cache.PebbleOptions{Dir: dir, PageSize: testPageSize})
	require.NoError(t, err)
	putPage(t, st, pid(1, 1), page.KindHeap, 0, "kept")
	require.NoError(t, st.Sync())
	require.NoError(t, st.Close())

	for _, ps := range []int{8192, page.MaxSize} {
		_, err = cache.OpenPebbleStore(cache.PebbleOptions{Dir: dir, PageSize: ps})
		require.ErrorIs(t, err, cache.ErrInvalidConfig, "page size %d", ps)
		require.Contains(t, err.Error(), "page size")
	}

	// The refused opens released the database; the right size opens it.
	st, err = cache.OpenPebbleStore(cache.PebbleOptions{Dir: dir, PageSize: testPageSize})
	require.NoError(t, err)
	require.Equal(t, "kept", storedBody(t, st, pid(1, 1), 4))
	require.NoError(t, st.Close())

	// No page size asked for: the database's own is adopted.
	st, err = cache.OpenPebbleStore(cache.PebbleOptions{Dir: dir})
	require.NoError(t, err)
	require.Equal(t, testPageSize, st.PageSize())
	require.Equal(t, "kept", storedBody(t, st, pid(1, 1), 4))
	require.NoError(t, st.Close())
}

// TestStoreSyncSurvivesCrash uses pebble's crashable in-memory filesystem:
// a crash keeps what Sync made durable and may lose the rest.
func TestStoreSyncSurvivesCrash(t *testing.T) {
	fs := vfs.NewCrashableMem()
	st, err := cache.OpenPebbleStore(cache.PebbleOptions{FS: fs, PageSize: testPageSize})
	require.NoError(t, err)
	putPage(t, st, pid(1, 1), page.KindHeap, 0, "synced")
	require.NoError(t, st.Sync())
	putPage(t, st, pid(1, 2), page.KindHeap, 0, "unsynced")

	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	require.NoError(t, st.Close())

	st2, err := cache.OpenPebbleStore(cache.PebbleOptions{FS: crashed, PageSize: testPageSize})
	require.NoError(t, err)
	defer func() { require.NoError(t, st2.Close()) }()
	require.Equal(t, "synced", storedBody(t, st2, pid(1, 1), 6))
	err = st2.ReadPage(pid(1, 2), make([]byte, testPageSize))
	require.ErrorIs(t, err, cache.ErrPageNotFound, "an unsynced write survived a crash that kept no unsynced data")
}

func TestStoreClosed(t *testing.T) {
	st, err := cache.OpenPebbleStore(cache.PebbleOptions{PageSize: testPageSize})
	require.NoError(t, err)
	putPage(t, st, pid(1, 1), page.KindHeap, 0, "x")
	require.NoError(t, st.Sync())
	require.NoError(t, st.Close())
	require.NoError(t, st.Close(), "second Close")

	buf := make([]byte, testPageSize)
	require.ErrorIs(t, st.ReadPage(pid(1, 1), buf), cache.ErrClosed)
	require.ErrorIs(t, st.WritePage(pid(1, 1), buf), cache.ErrClosed)
	require.ErrorIs(t, st.Sync(), cache.ErrClosed)
}

// A database keeps its id across opens, and each open has a new epoch.
func TestStoreIdentity(t *testing.T) {
	dir := t.TempDir()
	st, err := cache.OpenPebbleStore(cache.PebbleOptions{Dir: dir})
	require.NoError(t, err)
	id, epoch := st.Identity()
	require.EqualValues(t, 1, epoch)
	require.NoError(t, st.Close())
	st, err = cache.OpenPebbleStore(cache.PebbleOptions{Dir: dir})
	require.NoError(t, err)
	id2, epoch2 := st.Identity()
	require.Equal(t, id, id2)
	require.EqualValues(t, 2, epoch2)
	require.NoError(t, st.Close())

	other := newStore(t)
	id3, _ := other.Identity()
	require.NotEqual(t, id, id3, "another database, another id")
}
