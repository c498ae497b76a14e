package store_test

import (
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/stretchr/testify/require"
)

// writeFile creates name on fsys, writes chunks (one Write each), syncs
// n times and closes it.
func writeFile(t *testing.T, fsys vfs.FS, name string, syncs int, chunks ...[]byte) {
	t.Helper()
	f, err := fsys.Create(name, vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	for _, c := range chunks {
		_, err := f.Write(c)
		require.NoError(t, err)
	}
	for range syncs {
		require.NoError(t, f.Sync())
	}
	require.NoError(t, f.Close())
}

// TestFSMeterClasses writes files of every class through the store's
// filesystem and requires each to be counted, exactly, in its class and
// nowhere else.
func TestFSMeterClasses(t *testing.T) {
	st, err := store.OpenPebble(store.PebbleOptions{FS: vfs.NewMem(), Dir: "db", PageSize: testPageSize})
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Close()) }()
	fsys := st.FS()
	_, isMem := vfs.Root(fsys).(*vfs.MemFS)
	require.True(t, isMem, "vfs.Root must see through the meter")
	require.NoError(t, fsys.MkdirAll("db/redo", 0o755))

	cases := []struct {
		name  string
		class store.FSClass
	}{
		{"db/redo/0000000000000020", store.FSRedo},
		{"db/redo/0000000000100000.tmp", store.FSRedo},
		{"db/redo/checkpoint", store.FSOther},
		{"db/redo/checkpoint.tmp", store.FSOther},
		{"db/999999.log", store.FSWAL},
		{"db/999999.sst", store.FSTables},
		{"db/999998.blob", store.FSTables},
		{"db/MANIFEST-999999", store.FSPebbleMeta},
		{"db/OPTIONS-999999", store.FSPebbleMeta},
		{"db/temporary.999999.dbtmp", store.FSPebbleMeta},
		{"db/ENGINELAB-MANIFEST.x", store.FSOther},
		{"db/doublewrite", store.FSOther},
	}
	for _, c := range cases {
		before := st.FSStats()
		// 7 + 3 bytes in two writes, two syncs.
		writeFile(t, fsys, c.name, 2, []byte("abcdefg"), []byte("hij"))
		d := st.FSStats().Sub(before)
		want := store.FSStats{}
		*want.Class(c.class) = store.FSCounts{Bytes: 10, Writes: 2, Syncs: 2, Created: 1}
		require.Equal(t, want, d, "%s", c.name)
		require.Equal(t, store.FSCounts{Bytes: 10, Writes: 2, Syncs: 2, Created: 1}, d.Total(), c.name)
	}

	// Renames count in the class of the new name, removals in the class
	// of the name removed: a redo segment recycled, a temporary control
	// file put in place, pebble's obsolete WAL removed.
	before := st.FSStats()
	require.NoError(t, fsys.Rename("db/redo/0000000000000020", "db/redo/0000000000200000"))
	require.NoError(t, fsys.Rename("db/redo/checkpoint.tmp", "db/redo/checkpoint"))
	require.NoError(t, fsys.Remove("db/999999.log"))
	require.Equal(t, store.FSStats{Redo: store.FSCounts{Renamed: 1}, Other: store.FSCounts{Renamed: 1},
		WAL: store.FSCounts{Removed: 1}}, st.FSStats().Sub(before))
	require.NoError(t, fsys.Rename("db/redo/0000000000200000", "db/redo/0000000000000020"))

	// WriteAt, SyncData and a directory's sync.
	before = st.FSStats()
	f, err := fsys.OpenReadWrite("db/redo/0000000000000020", vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	_, err = f.WriteAt(make([]byte, 100), 4096)
	require.NoError(t, err)
	require.NoError(t, f.SyncData())
	require.NoError(t, f.Close())
	d, err := fsys.OpenDir("db/redo")
	require.NoError(t, err)
	require.NoError(t, d.Sync())
	require.NoError(t, d.Close())
	d, err = fsys.OpenDir("db")
	require.NoError(t, err)
	require.NoError(t, d.Sync())
	require.NoError(t, d.Close())
	got := st.FSStats().Sub(before)
	require.Equal(t, store.FSStats{Redo: store.FSCounts{Bytes: 100, Writes: 1, Syncs: 2}, PebbleMeta: store.FSCounts{Syncs: 1}}, got)
}

// TestFSMeterPebble requires pebble's own writes to be counted: a synced
// page write goes to its WAL, a flush to a new sstable, and the redo log's
// promise aside, nothing of the store's is in the redo class.
func TestFSMeterPebble(t *testing.T) {
	st, err := store.OpenPebble(store.PebbleOptions{FS: vfs.NewMem(), Dir: "db", PageSize: testPageSize})
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Close()) }()
	open := st.FSStats()
	require.Positive(t, open.PebbleMeta.Created, "pebble's MANIFEST and OPTIONS are written when it opens")
	require.Positive(t, open.WAL.Created, "pebble's first WAL is created when it opens")
	require.Zero(t, open.Redo.Bytes, "the store writes no redo")

	before := st.FSStats()
	buf := make([]byte, testPageSize)
	const pages = 16
	for i := range uint32(pages) {
		id := pid(1, i)
		page.Init(buf, id, page.KindHeap)
		page.Seal(buf)
		require.NoError(t, st.WritePage(id, buf))
	}
	require.NoError(t, st.Sync())
	d := st.FSStats().Sub(before)
	require.GreaterOrEqual(t, d.WAL.Bytes, int64(pages*testPageSize), "every page image goes through the WAL")
	require.Positive(t, d.WAL.Syncs)
	require.Zero(t, d.Tables.Bytes, "no flush yet")

	before = st.FSStats()
	require.NoError(t, st.DB().Flush())
	d = st.FSStats().Sub(before)
	require.GreaterOrEqual(t, d.Tables.Bytes, int64(pages*testPageSize), "the flush writes the pages into an sstable")
	require.Positive(t, d.Tables.Created)
	require.Positive(t, d.PebbleMeta.Bytes, "the flush records the new sstable in the MANIFEST")
}

// TestFSMeterConcurrent writes from several goroutines at once (run it
// under -race): the counts are exact.
func TestFSMeterConcurrent(t *testing.T) {
	st := newStore(t)
	fsys := st.FS()
	require.NoError(t, fsys.MkdirAll(fsys.PathJoin(st.Dir(), "redo"), 0o755))
	before := st.FSStats()
	const writers, writes = 4, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := fsys.Create(fsys.PathJoin(st.Dir(), "redo", "000000000000000"+string(rune('0'+w))), vfs.WriteCategoryUnspecified)
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			for range writes {
				if _, err := f.Write(make([]byte, 3)); err != nil {
					t.Error(err)
					return
				}
			}
			_ = st.FSStats() // readers run beside the writers
		}()
	}
	wg.Wait()
	d := st.FSStats().Sub(before)
	require.Equal(t, store.FSCounts{Bytes: writers * writes * 3, Writes: writers * writes, Created: writers}, d.Redo)
}
