package store_test

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/stretchr/testify/require"
)

// A MemFS file reads back what was written, across chunk boundaries and
// past gaps, and Bytes counts each file's size rounded up to 4 KiB.
func TestMemFSReadWrite(t *testing.T) {
	fs := store.NewMemFS()
	require.NoError(t, fs.MkdirAll("db/redo", 0o755))
	f, err := fs.Create("db/a", vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 2*store.MemChunkSize+100)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	// Written in odd pieces, so that some straddle a chunk's end.
	for off := 0; off < len(data); {
		n := min(len(data)-off, 1+rng.IntN(300<<10))
		k, err := f.Write(data[off : off+n])
		require.NoError(t, err)
		require.Equal(t, n, k)
		off += n
	}
	require.Equal(t, int64(2*store.MemChunkSize+4096), fs.Bytes())
	got := make([]byte, len(data))
	k, err := f.ReadAt(got, 0)
	require.NoError(t, err)
	require.Equal(t, len(data), k)
	require.True(t, bytes.Equal(data, got))
	k, err = f.ReadAt(got[:200], int64(len(data)-100))
	require.Equal(t, io.EOF, err)
	require.Equal(t, 100, k)
	require.True(t, bytes.Equal(data[len(data)-100:], got[:100]))

	// A write past the end leaves zeros in the gap.
	_, err = f.WriteAt([]byte("x"), int64(len(data))+10)
	require.NoError(t, err)
	k, err = f.ReadAt(got[:11], int64(len(data)))
	require.NoError(t, err)
	require.Equal(t, append(make([]byte, 10), 'x'), got[:k])
	fi, err := f.Stat()
	require.NoError(t, err)
	require.Equal(t, int64(len(data)+11), fi.Size())
	require.NoError(t, f.Close())
	_, err = f.Write([]byte("y"))
	require.Error(t, err, "a closed file")

	// Read from the start through a new handle.
	r, err := fs.Open("db/a")
	require.NoError(t, err)
	all, err := io.ReadAll(r)
	require.NoError(t, err)
	require.True(t, bytes.Equal(data, all[:len(data)]))
	_, err = r.Write([]byte("z"))
	require.Error(t, err, "opened for reading")
	require.NoError(t, r.Close())
}

// A file's memory goes when its last name and its last handle do: a
// removed file stays readable while open (an sstable pebble reads while
// it deletes it), a link keeps it, and Bytes comes back to 0.
func TestMemFSRemoveFreesMemory(t *testing.T) {
	fs := store.NewMemFS()
	require.NoError(t, fs.MkdirAll("d", 0o755))
	f, err := fs.Create("d/x", vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	_, err = f.Write(bytes.Repeat([]byte("a"), 5000))
	require.NoError(t, err)
	require.Equal(t, int64(8192), fs.Bytes())
	require.NoError(t, fs.Link("d/x", "d/y"))
	require.NoError(t, fs.Remove("d/x"))
	require.NoError(t, fs.Remove("d/y"))
	_, err = fs.Stat("d/x")
	require.ErrorIs(t, err, os.ErrNotExist)
	require.Equal(t, int64(8192), fs.Bytes(), "still open")
	buf := make([]byte, 3)
	_, err = f.ReadAt(buf, 4000)
	require.NoError(t, err)
	require.Equal(t, "aaa", string(buf))
	require.NoError(t, f.Close())
	require.Zero(t, fs.Bytes())

	// Create over an existing name, and Rename over one, drop the old file.
	for _, n := range []string{"d/p", "d/q"} {
		f, err := fs.Create(n, vfs.WriteCategoryUnspecified)
		require.NoError(t, err)
		_, err = f.Write([]byte(n))
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	require.Equal(t, int64(2*4096), fs.Bytes())
	require.NoError(t, fs.Rename("d/p", "d/q"))
	require.Equal(t, int64(4096), fs.Bytes())
	ls, err := fs.List("d")
	require.NoError(t, err)
	require.Equal(t, []string{"q"}, ls)
	f, err = fs.Create("d/q", vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	require.Zero(t, fs.Bytes())
	require.NoError(t, f.Close())

	// A directory goes only when empty; RemoveAll takes everything.
	require.Error(t, fs.Remove("d"))
	require.NoError(t, fs.RemoveAll("d"))
	_, err = fs.List("d")
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = fs.Create("d/z", vfs.WriteCategoryUnspecified)
	require.ErrorIs(t, err, os.ErrNotExist, "no such directory")
}

// Lock excludes a second holder until the first closes.
func TestMemFSLock(t *testing.T) {
	fs := store.NewMemFS()
	require.NoError(t, fs.MkdirAll("d", 0o755))
	l, err := fs.Lock("d/LOCK")
	require.NoError(t, err)
	_, err = fs.Lock("d/LOCK")
	require.Error(t, err)
	require.NoError(t, l.Close())
	l, err = fs.Lock("d/LOCK")
	require.NoError(t, err)
	require.NoError(t, l.Close())
}

// An in-memory store keeps its files in a MemFS, and what a page write
// costs there is the page (in pebble's memtable, then an sstable), not
// an append-grown copy: the store's bytes after writing and flushing
// pages are within a small factor of the pages, and they come back down
// when compactions drop old versions and files.
func TestInMemoryStoreBytes(t *testing.T) {
	st, err := store.OpenPebble(store.PebbleOptions{PageSize: testPageSize, Volatile: true})
	require.NoError(t, err)
	_, ok := vfs.Root(st.FS()).(*store.MemFS)
	require.True(t, ok, "an in-memory store's filesystem (under the write meter)")
	const pages = 2048 // 8 MiB
	for round := range 4 {
		for i := range pages {
			putPage(t, st, pid(1, uint32(i)), page.KindHeap, uint64(round+1), "p")
		}
		require.NoError(t, st.DB().Flush())
	}
	require.NoError(t, st.DB().Compact(t.Context(), []byte{'p'}, []byte{'q'}, false))
	// Close waits for pebble to delete the files the compaction made
	// obsolete (it deletes them in the background); the files stay.
	require.NoError(t, st.Close())
	got := st.MemoryBytes() // what the files held at Close
	require.Greater(t, got, int64(pages*testPageSize), "every page is in an sstable")
	require.Less(t, got, int64(pages*testPageSize)*9/8, "four rounds compacted to one, no old file kept, no file's slack")
	require.Zero(t, vfs.Root(st.FS()).(*store.MemFS).Bytes(), "Close frees the files: nothing can open them again")

	disk, err := store.OpenPebble(store.PebbleOptions{Dir: t.TempDir(), PageSize: testPageSize})
	require.NoError(t, err)
	require.Zero(t, disk.MemoryBytes(), "a store on disk holds nothing in memory")
	require.NoError(t, disk.Close())
}
