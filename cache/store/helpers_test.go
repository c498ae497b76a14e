package store_test

import (
	"testing"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/stretchr/testify/require"
)

// testPageSize is the page size of every test store: the smallest allowed,
// so that the stores of the tests stay small.
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

// putPage writes a sealed page straight into the store: kind k, LSN lsn,
// body copied right after the header.
func putPage(t testing.TB, st store.Store, id page.ID, k page.Kind, lsn uint64, body string) {
	t.Helper()
	buf := make([]byte, st.PageSize())
	page.Init(buf, id, k)
	page.SetLSN(buf, lsn)
	copy(buf[page.HeaderSize:], body)
	page.Seal(buf)
	require.NoError(t, st.WritePage(id, buf))
}

// storedBody reads page id straight from the store and returns the first n
// body bytes.
func storedBody(t testing.TB, st store.Store, id page.ID, n int) string {
	t.Helper()
	buf := make([]byte, st.PageSize())
	require.NoError(t, st.ReadPage(id, buf))
	return string(buf[page.HeaderSize : page.HeaderSize+n])
}

// pid is a short page.ID constructor.
func pid(space, no uint32) page.ID { return page.ID{Space: space, Page: no} }
