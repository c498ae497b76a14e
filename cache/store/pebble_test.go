package store_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/stretchr/testify/require"
)

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
		a, b := store.PageKey(ids[i-1]), store.PageKey(ids[i])
		require.Negative(t, bytes.Compare(a[:], b[:]), "%s !< %s", ids[i-1], ids[i])
	}
	k := store.PageKey(pid(1, 2))
	require.NotEqual(t, byte(store.PrefixLog), k[0], "pages and log share a prefix")
}

func TestPebbleOptionsValidation(t *testing.T) {
	for _, ps := range []int{1, 2048, 4097, 6144, 128 << 10, -4096} {
		_, err := store.OpenPebble(store.PebbleOptions{PageSize: ps})
		require.ErrorIs(t, err, store.ErrInvalidOptions, "page size %d", ps)
		require.Contains(t, err.Error(), "page size")
	}
	_, err := store.OpenPebble(store.PebbleOptions{PageSize: testPageSize, BlockCacheSize: -1})
	require.ErrorIs(t, err, store.ErrInvalidOptions)
	require.Contains(t, err.Error(), "block cache")

	st, err := store.OpenPebble(store.PebbleOptions{})
	require.NoError(t, err)
	require.Equal(t, page.DefaultSize, st.PageSize())
	require.NoError(t, st.Close())
}

func TestStoreReopenWithOtherPageSize(t *testing.T) {
	dir := t.TempDir()
	st, err := store.OpenPebble(store.PebbleOptions{Dir: dir, PageSize: testPageSize})
	require.NoError(t, err)
	putPage(t, st, pid(1, 1), page.KindHeap, 0, "kept")
	require.NoError(t, st.Sync())
	require.NoError(t, st.Close())

	for _, ps := range []int{8192, page.MaxSize} {
		_, err = store.OpenPebble(store.PebbleOptions{Dir: dir, PageSize: ps})
		require.ErrorIs(t, err, store.ErrInvalidOptions, "page size %d", ps)
		require.Contains(t, err.Error(), "page size")
	}

	// The refused opens released the database; the right size opens it.
	st, err = store.OpenPebble(store.PebbleOptions{Dir: dir, PageSize: testPageSize})
	require.NoError(t, err)
	require.Equal(t, "kept", storedBody(t, st, pid(1, 1), 4))
	require.NoError(t, st.Close())

	// No page size asked for: the database's own is adopted.
	st, err = store.OpenPebble(store.PebbleOptions{Dir: dir})
	require.NoError(t, err)
	require.Equal(t, testPageSize, st.PageSize())
	require.Equal(t, "kept", storedBody(t, st, pid(1, 1), 4))
	require.NoError(t, st.Close())
}

// TestStoreSyncSurvivesCrash uses pebble's crashable in-memory filesystem:
// a crash keeps what Sync made durable and may lose the rest.
func TestStoreSyncSurvivesCrash(t *testing.T) {
	fs := vfs.NewCrashableMem()
	st, err := store.OpenPebble(store.PebbleOptions{FS: fs, PageSize: testPageSize})
	require.NoError(t, err)
	putPage(t, st, pid(1, 1), page.KindHeap, 0, "synced")
	require.NoError(t, st.Sync())
	putPage(t, st, pid(1, 2), page.KindHeap, 0, "unsynced")

	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	require.NoError(t, st.Close())

	st2, err := store.OpenPebble(store.PebbleOptions{FS: crashed, PageSize: testPageSize})
	require.NoError(t, err)
	defer func() { require.NoError(t, st2.Close()) }()
	require.Equal(t, "synced", storedBody(t, st2, pid(1, 1), 6))
	err = st2.ReadPage(pid(1, 2), make([]byte, testPageSize))
	require.ErrorIs(t, err, store.ErrPageNotFound, "an unsynced write survived a crash that kept no unsynced data")
}

// A Flush makes the writes before it durable in pebble's sstables: a
// crash that keeps no unsynced data keeps them even with every WAL gone,
// and loses a write after it.
func TestStoreFlushSurvivesCrashWithoutWAL(t *testing.T) {
	fs := vfs.NewCrashableMem()
	st, err := store.OpenPebble(store.PebbleOptions{FS: fs, PageSize: testPageSize})
	require.NoError(t, err)
	putPage(t, st, pid(1, 1), page.KindHeap, 0, "flushed")
	putPage(t, st, pid(1, 2), page.KindHeap, 0, "flushed")
	require.NoError(t, st.Flush())
	putPage(t, st, pid(1, 3), page.KindHeap, 0, "unsynced")

	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	require.NoError(t, st.Close())
	require.ErrorIs(t, st.Flush(), store.ErrClosed)
	dir := st.Dir()
	names, err := crashed.List(dir)
	require.NoError(t, err)
	wals := 0
	for _, n := range names {
		if strings.HasSuffix(n, ".log") {
			require.NoError(t, crashed.Remove(crashed.PathJoin(dir, n)))
			wals++
		}
	}
	require.Positive(t, wals, "the crash image has a WAL to remove")

	st2, err := store.OpenPebble(store.PebbleOptions{FS: crashed, PageSize: testPageSize})
	require.NoError(t, err)
	defer func() { require.NoError(t, st2.Close()) }()
	require.Equal(t, "flushed", storedBody(t, st2, pid(1, 1), 7))
	require.Equal(t, "flushed", storedBody(t, st2, pid(1, 2), 7))
	err = st2.ReadPage(pid(1, 3), make([]byte, testPageSize))
	require.ErrorIs(t, err, store.ErrPageNotFound, "an unsynced write survived a crash that kept no unsynced data")
}

func TestStoreClosed(t *testing.T) {
	st, err := store.OpenPebble(store.PebbleOptions{PageSize: testPageSize})
	require.NoError(t, err)
	putPage(t, st, pid(1, 1), page.KindHeap, 0, "x")
	require.NoError(t, st.Sync())
	require.NoError(t, st.Close())
	require.NoError(t, st.Close(), "second Close")

	buf := make([]byte, testPageSize)
	require.ErrorIs(t, st.ReadPage(pid(1, 1), buf), store.ErrClosed)
	require.ErrorIs(t, st.WritePage(pid(1, 1), buf), store.ErrClosed)
	require.ErrorIs(t, st.Sync(), store.ErrClosed)
}

// A database keeps its id across opens, and each open has a new epoch.
func TestStoreIdentity(t *testing.T) {
	dir := t.TempDir()
	st, err := store.OpenPebble(store.PebbleOptions{Dir: dir})
	require.NoError(t, err)
	id, epoch := st.Identity()
	require.EqualValues(t, 1, epoch)
	require.NoError(t, st.Close())
	st, err = store.OpenPebble(store.PebbleOptions{Dir: dir})
	require.NoError(t, err)
	id2, epoch2 := st.Identity()
	require.Equal(t, id, id2)
	require.EqualValues(t, 2, epoch2)
	require.NoError(t, st.Close())

	other := newStore(t)
	id3, _ := other.Identity()
	require.NotEqual(t, id, id3, "another database, another id")
}
