package redo_test

import (
	"bytes"
	"flag"
	"hash/fnv"
	"math/rand/v2"
	"testing"

	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/stretchr/testify/require"
)

// testPageSize is the page size of every test store: the smallest allowed.
const testPageSize = 4096

// newStore opens an in-memory pebble store with 4 KiB pages, closed when
// the test ends.
func newStore(t testing.TB) *store.PebbleStore {
	t.Helper()
	st, err := store.OpenPebble(store.PebbleOptions{PageSize: testPageSize})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	return st
}

// logEnv is a store and a redo log in its pebble database.
type logEnv struct {
	st *store.PebbleStore
	l  *redo.Log
}

// newLogEnv opens an in-memory store and a log in it (options lo, nil for
// the defaults). The log is closed before the store when the test ends.
func newLogEnv(t testing.TB, lo *redo.LogOptions) *logEnv {
	t.Helper()
	st := newStore(t)
	l, err := redo.Open(st, lo)
	require.NoError(t, err)
	t.Cleanup(l.Close)
	return &logEnv{st: st, l: l}
}

// appendNote appends the record of a mini-transaction that changes no page
// and carries note, as the buffer pool's Mtr does (MaybeWrite as it
// begins, Append as it commits), counting on c, and returns its LSN.
func appendNote(l *redo.Log, c *redo.Counts, note string) uint64 {
	_ = l.MaybeWrite()
	return l.Append(c, redo.NoteRecord([]byte(note)), nil)
}

// record is one stored log record.
type record struct {
	lsn  uint64
	body []byte
}

// scanLog returns every stored record at or after from.
func scanLog(t testing.TB, l *redo.Log, from uint64) []record {
	t.Helper()
	var out []record
	require.NoError(t, l.Scan(from, func(lsn uint64, body []byte) error {
		out = append(out, record{lsn, bytes.Clone(body)})
		return nil
	}))
	return out
}

// storedEnd opens the log stored in db afresh and returns its end: the
// LSN past every record in pebble.
func storedEnd(t testing.TB, db *store.PebbleStore) uint64 {
	t.Helper()
	l, err := redo.Open(db, nil)
	require.NoError(t, err)
	defer l.Close()
	return l.End()
}

// seedFlag fixes the random choices of every test. The default keeps runs
// identical; pass -seed=N to explore others. Each test logs its own seed and
// the -seed value that reproduces it.
var seedFlag = flag.Uint64("seed", 1, "base seed of the redo tests' random choices")

// seed returns this test's random source, derived from -seed and the test's
// name, and logs the seed so that a failure can be reproduced.
func seed(t testing.TB) *rand.Rand {
	t.Helper()
	h := fnv.New64a()
	h.Write([]byte(t.Name()))
	s := *seedFlag ^ h.Sum64()
	t.Logf("seed %d (-seed=%d)", s, *seedFlag)
	return rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))
}
