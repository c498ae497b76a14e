package cache

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
)

// The boundary's own cases, which damaged files reach only by chance: a
// panic inside pebble, Fatalf inside a call and in one of pebble's own
// goroutines, and errors pebble's listener hears. (engine's
// TestCorruptFiles damages real files.)

func openBoundaryStore(t *testing.T, fs vfs.FS) *PebbleStore {
	t.Helper()
	st, err := OpenPebbleStore(PebbleOptions{Dir: "/db", FS: fs, PageSize: MinPageSize})
	require.NoError(t, err)
	return st
}

// requireFailed checks that err is the store's failure, naming the
// directory and saying what, and that every call now returns it.
func requireFailed(t *testing.T, st *PebbleStore, err error, says string) {
	t.Helper()
	require.ErrorIs(t, err, ErrCorrupt)
	var ce *CorruptError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "/db", ce.Dir)
	require.Contains(t, err.Error(), "/db")
	require.Contains(t, err.Error(), says)
	require.Same(t, ce, st.Err())
	buf := make([]byte, MinPageSize)
	for _, err := range []error{st.ReadPage(PageID{1, 1}, buf), st.WritePage(PageID{1, 1}, buf), st.Sync()} {
		require.ErrorIs(t, err, ErrCorrupt)
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
	require.ErrorIs(t, st.Close(), ErrCorrupt, "Close returns the failure, leaving pebble as it is")
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
	require.ErrorIs(t, st.Close(), ErrCorrupt)
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
	require.ErrorIs(t, st.Close(), ErrCorrupt)
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
	require.ErrorIs(t, st.Close(), ErrCorrupt, "Close returns the failure")

	st = openBoundaryStore(t, vfs.NewMem())
	st.listener().DataCorruption(pebble.DataCorruptionInfo{Path: "/db/000012.sst", Details: errors.New("block checksum mismatch")})
	requireFailed(t, st, st.Err(), "(file /db/000012.sst): block checksum mismatch")
	require.ErrorIs(t, st.Close(), ErrCorrupt)
}

// A directory locked by another store is not damaged; a directory with
// pebble's files but no MANIFEST marker is.
func TestStoreOpenRefusals(t *testing.T) {
	fs := vfs.NewMem()
	st := openBoundaryStore(t, fs)
	_, err := OpenPebbleStore(PebbleOptions{Dir: "/db", FS: fs})
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrCorrupt)
	require.Contains(t, err.Error(), "in use")
	require.NoError(t, st.Close())

	ls, err := fs.List("/db")
	require.NoError(t, err)
	marker := ""
	for _, n := range ls {
		if strings.HasPrefix(n, "marker.manifest.") {
			marker = n
		}
	}
	require.NotEmpty(t, marker)
	require.NoError(t, fs.Remove(fs.PathJoin("/db", marker)))
	_, err = OpenPebbleStore(PebbleOptions{Dir: "/db", FS: fs})
	require.ErrorIs(t, err, ErrCorrupt, "not a new, empty database")
	require.Contains(t, err.Error(), "/db")
}
