package store

import (
	"bytes"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
)

// TestMemFSSpareChunks: a removed file's chunks are kept (up to
// minSpareChunks, or a quarter of what the other files hold when that is
// more) and a new file's writes reuse them, and a write past the end of a
// file on a reused chunk reads back zeros in the gap, not the old file's
// bytes. After FreeSpare nothing is kept.
func TestMemFSSpareChunks(t *testing.T) {
	fs := NewMemFS()
	require.NoError(t, fs.MkdirAll("d", 0o755))
	f, err := fs.Create("d/old", vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	_, err = f.Write(bytes.Repeat([]byte{0xab}, 2*MemChunkSize))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, fs.Remove("d/old"))
	require.Len(t, fs.spare, 2, "both chunks kept")

	g, err := fs.Create("d/new", vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	_, err = g.WriteAt([]byte("tail"), MemChunkSize+100)
	require.NoError(t, err)
	require.Empty(t, fs.spare, "both chunks reused")
	got := make([]byte, MemChunkSize+104)
	n, err := g.ReadAt(got, 0)
	require.NoError(t, err)
	require.Equal(t, len(got), n)
	want := make([]byte, MemChunkSize+100)
	require.Equal(t, want, got[:MemChunkSize+100], "the gap reads as zeros")
	require.Equal(t, "tail", string(got[MemChunkSize+100:]))
	require.NoError(t, g.Close())

	for i := range minSpareChunks + 3 {
		h, err := fs.Create("d/big", vfs.WriteCategoryUnspecified)
		require.NoError(t, err)
		_, err = h.WriteAt([]byte{1}, int64(minSpareChunks+2)*MemChunkSize)
		require.NoError(t, err, "round %d", i)
		require.NoError(t, h.Close())
		require.NoError(t, fs.Remove("d/big"))
		require.Len(t, fs.spare, minSpareChunks, "the rest unmapped")
	}

	// With 97 MiB and a page in other files (d/new's 1 MiB and 104
	// bytes, and d/live), a quarter of it: 24 chunks.
	live, err := fs.Create("d/live", vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	_, err = live.WriteAt([]byte{1}, 96*MemChunkSize-1)
	require.NoError(t, err)
	require.NoError(t, live.Close())
	require.Empty(t, fs.spare, "the live file took the spares")
	h, err := fs.Create("d/big", vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	_, err = h.WriteAt([]byte{1}, 40*MemChunkSize-1)
	require.NoError(t, err)
	require.NoError(t, h.Close())
	require.NoError(t, fs.Remove("d/big"))
	require.Equal(t, int64(97*MemChunkSize+osPage), fs.Bytes())
	require.Len(t, fs.spare, 24, "a quarter of what the files hold")
	fs.FreeSpare()
	require.Empty(t, fs.spare)
	require.NoError(t, fs.RemoveAll("d"))
	require.Empty(t, fs.spare, "nothing kept after FreeSpare")
}
