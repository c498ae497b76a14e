package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/enginelab/enginelab/cache/page"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/record"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
)

// The boundary's own cases, which damaged files reach only by chance: a
// panic inside pebble, Fatalf inside a call and in one of pebble's own
// goroutines, and errors pebble's listener hears. (engine's
// TestCorruptFiles damages real files.)

func openBoundaryStore(t *testing.T, fs vfs.FS) *PebbleStore {
	t.Helper()
	st, err := OpenPebble(PebbleOptions{Dir: "/db", FS: fs, PageSize: page.MinSize})
	require.NoError(t, err)
	return st
}

// requireFailed checks that err is the store's failure, naming the
// directory and saying what, and that every call now returns it.
func requireFailed(t *testing.T, st *PebbleStore, err error, says string) {
	t.Helper()
	require.ErrorIs(t, err, page.ErrCorrupt)
	var ce *CorruptError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "/db", ce.Dir)
	require.Contains(t, err.Error(), "/db")
	require.Contains(t, err.Error(), says)
	require.Same(t, ce, st.Err())
	buf := make([]byte, page.MinSize)
	for _, err := range []error{st.ReadPage(page.ID{Space: 1, Page: 1}, buf), st.WritePage(page.ID{Space: 1, Page: 1}, buf), st.Sync()} {
		require.ErrorIs(t, err, page.ErrCorrupt)
		require.ErrorAs(t, err, &ce)
		require.Same(t, st.Err(), ce, "refused with the first failure")
	}
}

func TestStoreBoundaryRecoversPanic(t *testing.T) {
	st := openBoundaryStore(t, vfs.NewMem())
	var err error
	require.NotPanics(t, func() { err = st.call("test", func() error { panic("index out of range") }) })
	requireFailed(t, st, err, "pebble panicked: index out of range")
	require.True(t, st.abandoned.Load(), "pebble's state is unknown after a panic")
	require.ErrorIs(t, st.Close(), page.ErrCorrupt, "Close returns the failure, leaving pebble as it is")
}

func TestStoreBoundaryFatalfInCall(t *testing.T) {
	st := openBoundaryStore(t, vfs.NewMem())
	var err error
	require.NotPanics(t, func() {
		err = st.call("test", func() error {
			pebbleLogger{st}.Fatalf("MANIFEST sync failed: %v", errors.New("input/output error"))
			return nil
		})
	})
	requireFailed(t, st, err, "pebble: fatal: MANIFEST sync failed: input/output error")
	require.ErrorIs(t, st.Close(), page.ErrCorrupt)
}

// Fatalf in a goroutine that did not come through the boundary (one of
// pebble's own) ends that goroutine alone and fails the store.
func TestStoreBoundaryFatalfInBackground(t *testing.T) {
	st := openBoundaryStore(t, vfs.NewMem())
	var wg sync.WaitGroup
	returned := false
	wg.Add(1)
	go func() {
		defer wg.Done()
		pebbleLogger{st}.Fatalf("during consistency check: %s", "object size mismatch")
		returned = true
	}()
	wg.Wait()
	require.False(t, returned, "Fatalf ends the goroutine")
	requireFailed(t, st, st.Err(), "pebble background work: pebble: fatal: during consistency check: object size mismatch")
	require.ErrorIs(t, st.Close(), page.ErrCorrupt)
}

// What pebble's listener hears: damage fails the store (the next call
// returns it), other background errors (pebble retries them) do not.
func TestStoreBoundaryListener(t *testing.T) {
	st := openBoundaryStore(t, vfs.NewMem())
	l := st.listener()
	l.BackgroundError(errors.New("compaction: no space left on device"))
	require.NoError(t, st.Err())
	require.NoError(t, st.Sync())
	l.BackgroundError(fmt.Errorf("compaction: %w", pebble.ErrCorruption))
	requireFailed(t, st, st.Err(), "pebble background work")
	require.ErrorIs(t, st.Err(), pebble.ErrCorruption, "pebble's error is kept")
	require.ErrorIs(t, st.Close(), page.ErrCorrupt, "Close returns the failure")

	st = openBoundaryStore(t, vfs.NewMem())
	st.listener().DataCorruption(pebble.DataCorruptionInfo{Path: "/db/000012.sst", Details: errors.New("block checksum mismatch")})
	requireFailed(t, st, st.Err(), "(file /db/000012.sst): block checksum mismatch")
	require.ErrorIs(t, st.Close(), page.ErrCorrupt)
}

// A directory locked by another store is not damaged; a directory with
// pebble's files but no MANIFEST marker is.
func TestStoreOpenRefusals(t *testing.T) {
	fs := vfs.NewMem()
	st := openBoundaryStore(t, fs)
	_, err := OpenPebble(PebbleOptions{Dir: "/db", FS: fs})
	require.Error(t, err)
	require.NotErrorIs(t, err, page.ErrCorrupt)
	require.Contains(t, err.Error(), "in use")
	require.NoError(t, st.Close())

	ls, err := fs.List("/db")
	require.NoError(t, err)
	marker := ""
	for _, n := range ls {
		if currentManifest([]string{n}) != "" {
			marker = n
		}
	}
	require.NotEmpty(t, marker)
	require.NoError(t, fs.Remove(fs.PathJoin("/db", marker)))
	_, err = OpenPebble(PebbleOptions{Dir: "/db", FS: fs})
	require.ErrorIs(t, err, page.ErrCorrupt, "not a new, empty database")
	require.Contains(t, err.Error(), "/db")
}

func TestCurrentManifest(t *testing.T) {
	require.Equal(t, "", currentManifest([]string{"000004.log", "OPTIONS-000003"}))
	require.Equal(t, "MANIFEST-000009", currentManifest([]string{
		"marker.manifest.000002.MANIFEST-000007", "marker.format-version.000004.020",
		"marker.manifest.000003.MANIFEST-000009", "MANIFEST-000009",
	}))
}

// The MANIFEST witness: a MANIFEST cut short, even at a record boundary
// (which pebble would read as an older, here empty, database), or with a
// flipped byte is damage; a missing or stale witness checks nothing; a
// damaged witness is damage.
func TestManifestWitness(t *testing.T) {
	build := func() (vfs.FS, string) {
		fs := vfs.NewMem()
		st := openBoundaryStore(t, fs)
		buf := make([]byte, page.MinSize)
		page.Init(buf, page.ID{Space: 1, Page: 1}, page.KindHeap)
		page.Seal(buf)
		require.NoError(t, st.WritePage(page.ID{Space: 1, Page: 1}, buf))
		require.NoError(t, st.Sync())
		require.NoError(t, st.Close())
		ls, err := fs.List("/db")
		require.NoError(t, err)
		return fs, currentManifest(ls)
	}
	readFile := func(fs vfs.FS, name string) []byte {
		f, err := fs.Open(fs.PathJoin("/db", name))
		require.NoError(t, err)
		defer f.Close()
		b, err := io.ReadAll(f)
		require.NoError(t, err)
		return b
	}
	writeFile := func(fs vfs.FS, name string, b []byte) {
		f, err := fs.Create(fs.PathJoin("/db", name), vfs.WriteCategoryUnspecified)
		require.NoError(t, err)
		_, err = f.Write(slices.Clone(b))
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	reopen := func(fs vfs.FS) error {
		st, err := OpenPebble(PebbleOptions{Dir: "/db", FS: fs})
		if err == nil {
			err = st.Close()
		}
		return err
	}

	fs, manifest := build()
	require.NotEmpty(t, manifest)
	require.NoError(t, reopen(fs), "undamaged")

	fs, manifest = build()
	b := readFile(fs, manifest)
	rr := record.NewReader(bytes.NewReader(b), 0)
	r, err := rr.Next()
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, r)
	require.NoError(t, err)
	first := rr.Offset()
	require.Less(t, first, int64(len(b)), "the MANIFEST has more than its first record")
	writeFile(fs, manifest, b[:first])
	err = reopen(fs)
	require.ErrorIs(t, err, page.ErrCorrupt, "cut at a record boundary")
	require.Contains(t, err.Error(), manifest)

	fs, manifest = build()
	b = readFile(fs, manifest)
	b[len(b)-3] ^= 0x10
	writeFile(fs, manifest, b)
	require.ErrorIs(t, reopen(fs), page.ErrCorrupt, "a flipped byte")

	fs, _ = build()
	w := readFile(fs, witnessFile)
	w[0] ^= 0x01
	writeFile(fs, witnessFile, w)
	err = reopen(fs)
	require.ErrorIs(t, err, page.ErrCorrupt, "a damaged witness")
	require.Contains(t, err.Error(), witnessFile)

	fs, manifest = build()
	require.NoError(t, fs.Remove(fs.PathJoin("/db", witnessFile)))
	require.NoError(t, reopen(fs), "no witness: nothing to check")
	fs, manifest = build()
	line := witnessLine("MANIFEST-999999", 1)
	writeFile(fs, witnessFile, []byte(fmt.Sprintf("%s %08x\n", line, page.CRC32C([]byte(line)))))
	b = readFile(fs, manifest)
	writeFile(fs, manifest, b[:len(b)-1])
	require.NoError(t, reopen(fs), "a stale witness judges nothing, and pebble takes a torn tail for a crash's")
}

// Damage inside the synced part of the WAL is an error, not the end of the
// log: pebble's WAL records how far it was synced (FormatWALSyncChunks).
func TestWALDamageInsideSyncedPart(t *testing.T) {
	mem := vfs.NewCrashableMem()
	// Reopened: the WAL a new database starts with was created before
	// pebble moved it to its format, and is written the old way.
	require.NoError(t, openBoundaryStore(t, mem).Close())
	st := openBoundaryStore(t, mem)
	buf := make([]byte, page.MinSize)
	// Fewer pages than pebble's first memtable holds: one WAL, the last,
	// whose bad record pebble would otherwise take for a torn tail.
	for i := range uint32(24) {
		page.Init(buf, page.ID{Space: 1, Page: i}, page.KindHeap)
		page.Seal(buf)
		require.NoError(t, st.WritePage(page.ID{Space: 1, Page: i}, buf))
		require.NoError(t, st.Sync())
	}
	img := mem.CrashClone(vfs.CrashCloneCfg{})
	ls, err := img.List("/db")
	require.NoError(t, err)
	var wals []string
	for _, n := range ls {
		if strings.HasSuffix(n, ".log") {
			wals = append(wals, n)
		}
	}
	// Pebble deletes the WALs it no longer needs on a background
	// goroutine, so older ones may still be listed: the live WAL is the
	// highest-numbered (file numbers are zero-padded, so the names sort).
	require.NotEmpty(t, wals, "%v", ls)
	slices.Sort(wals)
	wal := wals[len(wals)-1]
	f, err := img.OpenReadWrite(img.PathJoin("/db", wal), vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	fi, err := f.Stat()
	require.NoError(t, err)
	b := make([]byte, 1)
	off := fi.Size() / 2
	_, err = f.ReadAt(b, off)
	require.NoError(t, err)
	b[0] ^= 0x20
	_, err = f.WriteAt(b, off)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = OpenPebble(PebbleOptions{Dir: "/db", FS: img})
	require.ErrorIs(t, err, page.ErrCorrupt)
	require.Contains(t, err.Error(), "replaying WAL")
}
