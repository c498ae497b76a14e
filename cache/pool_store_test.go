package cache_test

import (
	"bytes"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/stretchr/testify/require"
)

// rawGet returns a copy of the value stored under page id's key.
func rawGet(t *testing.T, st *store.PebbleStore, id page.ID) []byte {
	t.Helper()
	k := store.PageKey(id)
	v, closer, err := st.DB().Get(k[:])
	require.NoError(t, err)
	out := bytes.Clone(v)
	require.NoError(t, closer.Close())
	return out
}

func rawSet(t *testing.T, st *store.PebbleStore, id page.ID, v []byte) {
	t.Helper()
	k := store.PageKey(id)
	require.NoError(t, st.DB().Set(k[:], v, pebble.Sync))
}

// writeThroughPool creates space 1, allocates its page 1, writes body into
// it and flushes everything, returning the page's id.
func writeThroughPool(t *testing.T, st store.Store, body string) page.ID {
	t.Helper()
	p := newPool(t, st, 16, cache.Options{})
	require.NoError(t, p.CreateSpace(nil, 1))
	mt := p.BeginMtr(nil)
	pg, err := p.AllocPage(mt, nil, 1, page.KindHeap)
	require.NoError(t, err)
	writeBody(mt, pg, body)
	id := pg.ID()
	mt.Release(pg, true)
	mt.Commit()
	require.NoError(t, p.FlushAll(nil))
	return id
}

func TestStoreCorruptPageThroughPool(t *testing.T) {
	rng := seed(t)
	st := newStore(t)
	id := writeThroughPool(t, st, "precious data")
	require.Equal(t, pid(1, 1), id)
	good := rawGet(t, st, id)
	require.Len(t, good, testPageSize)

	offsets := []int{0, 4, 8, 12, 16, page.HeaderSize, len(good) - 1}
	for range 8 {
		offsets = append(offsets, rng.IntN(len(good)))
	}
	for _, off := range offsets {
		bad := bytes.Clone(good)
		bad[off] ^= byte(rng.IntN(255) + 1)
		rawSet(t, st, id, bad)

		// A fresh pool, so that the page is not resident.
		p := newPool(t, st, 16, cache.Options{})
		var m cache.Meter
		var pg *cache.Page
		var err error
		require.NotPanics(t, func() { pg, err = p.Fetch(&m, id) })
		require.ErrorIs(t, err, page.ErrCorruptPage, "offset %d", off)
		require.Contains(t, err.Error(), id.String())
		require.Nil(t, pg, "corrupt page returned as data")
		require.False(t, p.Resident(id))
		require.Equal(t, cache.Stats{Frames: 16}, p.Stats(), "a failed read must give its frame back")
		require.EqualValues(t, 1, m.StoreReads)
		require.Zero(t, m.StoreReadBytes)
		require.Zero(t, m.PoolMisses)
		require.Zero(t, m.PageRequestsTotal())

		// The store refuses it directly too.
		buf := make([]byte, testPageSize)
		require.ErrorIs(t, st.ReadPage(id, buf), page.ErrCorruptPage)
		require.Equal(t, make([]byte, testPageSize), buf, "corrupt bytes copied out")
	}

	// Wrong length and a misdirected write (page 2's image under page 1's key).
	rawSet(t, st, id, good[:len(good)-1])
	p := newPool(t, st, 16, cache.Options{})
	_, err := p.Fetch(nil, id)
	require.ErrorIs(t, err, page.ErrCorruptPage)
	require.Contains(t, err.Error(), id.String())

	other := make([]byte, testPageSize)
	page.Init(other, pid(1, 2), page.KindHeap)
	page.Seal(other)
	rawSet(t, st, id, other)
	_, err = p.Fetch(nil, id)
	require.ErrorIs(t, err, page.ErrCorruptPage)
	require.Contains(t, err.Error(), id.String())
	require.Contains(t, err.Error(), "1:2")

	// Restored, it reads fine in the same pool.
	rawSet(t, st, id, good)
	pg, err := p.Fetch(nil, id)
	require.NoError(t, err)
	require.Equal(t, "precious data", body(pg, 13))
	pg.Unpin(false)
}

func TestStorePageNotFound(t *testing.T) {
	st := newStore(t)
	buf := make([]byte, testPageSize)
	err := st.ReadPage(pid(4, 2), buf)
	require.ErrorIs(t, err, store.ErrPageNotFound)
	require.Contains(t, err.Error(), "4:2")

	p := newPool(t, st, 16, cache.Options{})
	var m cache.Meter
	pg, err := p.Fetch(&m, pid(4, 2))
	require.ErrorIs(t, err, store.ErrPageNotFound)
	require.Nil(t, pg)
	require.Equal(t, cache.Stats{Frames: 16}, p.Stats())
	require.EqualValues(t, 1, m.StoreReads)
	require.Zero(t, m.PoolMisses)
}
