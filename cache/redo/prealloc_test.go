package redo_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/stretchr/testify/require"
)

// On disk, the log makes the next segment's file in the background once
// three quarters of the current one are written, and the segment takes it
// when the log gets there: the same files, counted as created once each.
// A file made ahead that no segment took is removed by Close.
func TestLogPreallocatesNextSegment(t *testing.T) {
	dir := t.TempDir()
	st, err := store.OpenPebble(store.PebbleOptions{Dir: dir, PageSize: testPageSize})
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Close()) }()
	lo := &redo.LogOptions{Capacity: redo.MinCapacity, Prealloc: true}
	l, err := redo.Open(st, lo)
	require.NoError(t, err)
	seg := l.SegmentSize()
	files := func() []string {
		names, err := st.FS().List(st.FS().PathJoin(st.Dir(), "redo"))
		require.NoError(t, err)
		slices.Sort(names)
		return names
	}
	name := func(start uint64) string { return fmt.Sprintf("%016x", start) }
	// fill appends notes of 100 bytes until the log's end is past lsn,
	// and writes them out.
	n := 0
	fill := func(lsn uint64) {
		for l.End() < lsn {
			appendNote(l, nil, fmt.Sprintf("%0100d", n))
			n++
		}
		require.NoError(t, l.Flush(l.End()))
		l.WaitPrealloc()
	}

	fill(seg / 2)
	require.Equal(t, []string{name(0), "checkpoint"}, files(), "half a segment: nothing made ahead")
	fill(seg/4*3 + 200)
	require.Equal(t, []string{name(0), name(seg) + ".tmp", "checkpoint"}, files(), "three quarters: the next segment's file is being made")
	require.EqualValues(t, 1, l.Stats().Created)

	fill(seg + seg/2)
	require.Equal(t, []string{name(0), name(seg), "checkpoint"}, files(), "the next segment took it")
	require.EqualValues(t, 2, l.Stats().Created)
	require.Len(t, scanLog(t, l, 0), n, "every record reads back")

	fill(2*seg - 200)
	require.Contains(t, files(), name(2*seg)+".tmp")
	l.Close()
	require.Equal(t, []string{name(0), name(seg), "checkpoint"}, files(), "Close removed the file no segment took")
	require.EqualValues(t, 2, l.Stats().Created)

	l, err = redo.Open(st, lo)
	require.NoError(t, err)
	defer l.Close()
	require.Len(t, scanLog(t, l, 0), n, "the log reopens with every record")
}

// Without LogOptions.Prealloc (the simulator's log), the writer that
// reaches a segment's end makes the next file itself.
func TestLogPreallocOff(t *testing.T) {
	st, err := store.OpenPebble(store.PebbleOptions{Dir: t.TempDir(), PageSize: testPageSize})
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Close()) }()
	l, err := redo.Open(st, &redo.LogOptions{Capacity: redo.MinCapacity})
	require.NoError(t, err)
	defer l.Close()
	seg := l.SegmentSize()
	for i := 0; l.End() < seg-200; i++ {
		appendNote(l, nil, fmt.Sprintf("%0100d", i))
	}
	require.NoError(t, l.Flush(l.End()))
	l.WaitPrealloc()
	names, err := st.FS().List(st.FS().PathJoin(st.Dir(), "redo"))
	require.NoError(t, err)
	slices.Sort(names)
	require.Equal(t, []string{fmt.Sprintf("%016x", 0), "checkpoint"}, names)
}

// scribbleFS is a filesystem whose files' Write scribbles on the bytes it
// was given once they are written, as vfs.File allows.
type scribbleFS struct{ vfs.FS }

type scribbleFile struct{ vfs.File }

func (fs scribbleFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	if err != nil {
		return nil, err
	}
	return scribbleFile{f}, nil
}

func (f scribbleFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	for i := range p {
		p[i] = 0xab
	}
	return n, err
}

// A new segment file is zeros to its end past what the log wrote, even
// on a filesystem that scribbles on what it is given to write: the fill
// zeroes its buffer again before each piece.
func TestLogSegmentFillIsZeros(t *testing.T) {
	dir := t.TempDir()
	st, err := store.OpenPebble(store.PebbleOptions{FS: scribbleFS{vfs.Default}, Dir: dir, PageSize: testPageSize})
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Close()) }()
	l, err := redo.Open(st, &redo.LogOptions{Capacity: 24 << 20}) // segments of 3 MiB: three pieces
	require.NoError(t, err)
	defer l.Close()
	require.EqualValues(t, 3<<20, l.SegmentSize())
	appendNote(l, nil, "one")
	require.NoError(t, l.Flush(l.End()))
	b, err := os.ReadFile(filepath.Join(dir, "redo", fmt.Sprintf("%016x", 0)))
	require.NoError(t, err)
	require.Len(t, b, 3<<20)
	end := int(l.End())
	require.Equal(t, make([]byte, len(b)-end), b[end:], "zeros past the log's end")
}
