package heap

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/store"
)

// TestMain turns on cache.VerifyRedo for every test of the package: each
// mini-transaction's record is replayed at its commit on copies of the
// pages taken when they were latched, and the commit panics unless the
// replay rebuilds every page byte for byte. So every heap test with a redo
// log checks the records of everything it does.
func TestMain(m *testing.M) {
	cache.VerifyRedoInTests()
	os.Exit(m.Run())
}

// noVerifyRedo turns cache.VerifyRedo off until tb ends, for benchmarks,
// which would otherwise measure the check.
func noVerifyRedo(tb testing.TB) {
	cache.VerifyRedo(false)
	tb.Cleanup(cache.VerifyRedoInTests)
}

// newStore returns an in-memory pebble store with pages of pageSize bytes,
// closed when the test ends.
func newStore(tb testing.TB, pageSize int) *store.PebbleStore {
	tb.Helper()
	st, err := store.OpenPebble(store.PebbleOptions{PageSize: pageSize})
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = st.Close() })
	return st
}

// newPool returns a pool of frames frames over st, with the deterministic
// LRU policy.
func newPool(tb testing.TB, st store.Store, frames int) *cache.Pool {
	tb.Helper()
	return newPoolWithLog(tb, st, frames, nil)
}

// newPoolWithLog is newPool with the redo log lg (nil: none).
func newPoolWithLog(tb testing.TB, st store.Store, frames int, lg cache.RedoLog) *cache.Pool {
	tb.Helper()
	p, err := cache.NewPool(st, &cache.Options{
		PoolSize: int64(frames) * int64(st.PageSize()),
		Policy:   cache.PolicyLRU,
	}, &cache.Wiring{Log: lg})
	require.NoError(tb, err)
	return p
}

// newHeapForTest creates a heap in space 1 of a fresh store and pool.
func newHeapForTest(tb testing.TB, pageSize, frames int) (*store.PebbleStore, *cache.Pool, *Heap) {
	tb.Helper()
	st := newStore(tb, pageSize)
	p := newPool(tb, st, frames)
	h, err := Create(nil, p, 1)
	require.NoError(tb, err)
	return st, p, h
}

// reopen closes pool (flushing it) and opens the heap again on a new pool
// of frames frames over the same store.
func reopen(tb testing.TB, st store.Store, pool *cache.Pool, space uint32, frames int) (*cache.Pool, *Heap) {
	tb.Helper()
	require.NoError(tb, pool.Close())
	p := newPool(tb, st, frames)
	h, err := Open(nil, p, space)
	require.NoError(tb, err)
	return p, h
}

var seedFlag = flag.Uint64("heap.seed", 0, "seed of the randomized tests (0: each test's fixed default)")

// testSeed returns the seed of a randomized test and logs it, so that a
// failure can be replayed with -heap.seed.
func testSeed(tb testing.TB) uint64 {
	tb.Helper()
	s := *seedFlag
	if s == 0 {
		s = 0x5eed
	}
	tb.Logf("seed %d (replay with -heap.seed=%d)", s, s)
	return s
}

// scanAll returns the rows of a full scan, in order.
func scanAll(tb testing.TB, h *Heap, m *Meter) ([]RowPtr, [][]byte) {
	tb.Helper()
	var ptrs []RowPtr
	var rows [][]byte
	s := h.NewScan(m)
	for s.Next() {
		ptrs = append(ptrs, s.Ptr())
		rows = append(rows, bytes.Clone(s.Row()))
	}
	require.NoError(tb, s.Close())
	return ptrs, rows
}

// requireRow checks a row's bytes; nil and empty are the same row.
func requireRow(tb testing.TB, want, got []byte, msgAndArgs ...any) {
	tb.Helper()
	if !bytes.Equal(want, got) {
		require.Equal(tb, want, got, msgAndArgs...)
	}
}
