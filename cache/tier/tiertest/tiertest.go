package tiertest

import (
	"encoding/binary"
	"fmt"
	"sync"
	"testing"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/tier"
	"github.com/stretchr/testify/require"
)

// Page is the page Basics, Concurrent and the backends' own tests store
// for k at version v: every 8-byte word says (k, v), so that a page
// returned for another key or torn between two versions shows.
func Page(size int, k tier.Key, v uint64) []byte {
	p := make([]byte, size)
	tag := k.DB*31 ^ k.Epoch*37 ^ uint64(k.ID.Space)<<40 ^ uint64(k.ID.Page)<<8 ^ v<<56
	for i := 0; i+8 <= size; i += 8 {
		binary.LittleEndian.PutUint64(p[i:], tag^uint64(i))
	}
	return p
}

// Key is a short tier.Key constructor.
func Key(db, epoch uint64, space, no uint32) tier.Key {
	return tier.Key{DB: db, Epoch: epoch, ID: page.ID{Space: space, Page: no}}
}

// Wait applies a tier's pending puts if it applies them asynchronously
// (ristretto.Tier.Wait), so that a test may read back what it put.
func Wait(t tier.Tier) {
	if w, ok := t.(interface{ Wait() }); ok {
		w.Wait()
	}
}

// Basics runs a tier with room for every page it is given through puts,
// gets, overwrites, deletes and Close, reading back after Wait, and checks
// its answers and counters exactly (Model must treat ristretto and
// memcached as inexact: see their Model tests).
func Basics(t *testing.T, tr tier.Tier, pageSize int) {
	t.Helper()
	dst := make([]byte, pageSize)
	var want tier.Stats // counters expected so far
	get := func(k tier.Key) (bool, []byte) {
		t.Helper()
		clear(dst)
		found, err := tr.Get(k, 0, dst)
		require.NoError(t, err, "get %v", k)
		want.Gets++
		if found {
			want.Hits++
		}
		return found, dst
	}
	put := func(k tier.Key, v uint64) {
		t.Helper()
		buf := Page(pageSize, k, v)
		stored, err := tr.Put(k, v, buf)
		require.NoError(t, err, "put %v", k)
		require.True(t, stored, "put %v", k)
		clear(buf) // the tier must have taken a copy
		want.Puts++
	}

	k := Key(7, 1, 1, 10)
	found, _ := get(k)
	require.False(t, found, "empty tier")

	put(k, 1)
	Wait(tr)
	found, got := get(k)
	require.True(t, found)
	require.Equal(t, Page(pageSize, k, 1), got)

	put(k, 2) // overwrite
	Wait(tr)
	found, got = get(k)
	require.True(t, found)
	require.Equal(t, Page(pageSize, k, 2), got, "overwritten page")

	// Keys differing in any one field are other pages.
	for _, other := range []tier.Key{Key(8, 1, 1, 10), Key(7, 2, 1, 10), Key(7, 1, 2, 10), Key(7, 1, 1, 11)} {
		found, _ := get(other)
		require.False(t, found, "%v must not see %v's page", other, k)
	}
	other := Key(7, 1, 1, 11)
	put(other, 1)
	Wait(tr)
	found, got = get(other)
	require.True(t, found)
	require.Equal(t, Page(pageSize, other, 1), got)
	found, got = get(k)
	require.True(t, found)
	require.Equal(t, Page(pageSize, k, 2), got, "a neighbour's put changed the page")

	require.NoError(t, tr.Delete(k))
	require.NoError(t, tr.Delete(Key(9, 9, 9, 9)), "deleting a missing key")
	want.Deletes += 2
	Wait(tr)
	found, _ = get(k)
	require.False(t, found, "deleted page")
	found, _ = get(other)
	require.True(t, found, "deleting one page removed another")

	s := tr.Stats()
	require.Equal(t, want.Puts, s.Puts, "Puts")
	require.Equal(t, want.Gets, s.Gets, "Gets")
	require.Equal(t, want.Hits, s.Hits, "Hits")
	require.Equal(t, want.Deletes, s.Deletes, "Deletes")
	require.Zero(t, s.Errors, "Errors")
	require.Zero(t, s.Drops, "Drops")

	require.NoError(t, tr.Close())
	require.NoError(t, tr.Close(), "second Close")
	_, err := tr.Get(k, 0, dst)
	require.ErrorIs(t, err, tier.ErrClosed)
	_, err = tr.Put(k, 0, dst)
	require.ErrorIs(t, err, tier.ErrClosed)
	require.ErrorIs(t, tr.Delete(k), tier.ErrClosed)
	s = tr.Stats()
	require.Equal(t, want.Puts, s.Puts, "Puts after Close")
	require.Equal(t, want.Hits, s.Hits, "Hits after Close")
	require.Equal(t, int64(3), s.Errors, "the calls after Close are errors")
}

// Concurrent has goroutines put, get and delete pages of a few
// keys at once, and checks that a page found is always one that was put
// for that key, whole. It is mostly for the race detector.
func Concurrent(t *testing.T, tr tier.Tier, pageSize int) {
	t.Helper()
	const workers, ops, keys = 4, 300, 16
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			dst := make([]byte, pageSize)
			for i := range ops {
				k := Key(3, 4, 1, uint32((w*7+i)%keys))
				v := uint64(i % 8)
				switch i % 5 {
				case 0, 1:
					if _, err := tr.Put(k, v, Page(pageSize, k, v)); err != nil {
						errs <- err
						return
					}
				case 4:
					if err := tr.Delete(k); err != nil {
						errs <- err
						return
					}
				default:
					found, err := tr.Get(k, v, dst)
					if err != nil {
						errs <- err
						return
					}
					if found && !IsPageOf(dst, k) {
						errs <- fmt.Errorf("get %v returned a page that was never put for it", k)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// IsPageOf reports whether page is Page(len(page), k, v) for some
// version v < 8.
func IsPageOf(page []byte, k tier.Key) bool {
	for v := range uint64(8) {
		if string(page) == string(Page(len(page), k, v)) {
			return true
		}
	}
	return false
}

// Edges checks an in-process tier that charges tier.ItemOverhead per page
// (lru.Tier, slru.Tier): the budget's edge (a page that costs exactly the
// budget is kept, one byte more is dropped), a dst of the wrong length,
// and a closed tier.
func Edges(t *testing.T, newTier Factory) {
	const budget = 1000
	tr := newTier(t, budget)
	a, b, c := NumKey(1), NumKey(2), NumKey(3)
	whole := budget - tier.ItemOverhead

	stored, err := tr.Put(a, 1, ModelPage(a, 1, whole))
	require.NoError(t, err)
	require.True(t, stored, "a page that costs exactly the budget")
	stored, err = tr.Put(b, 2, ModelPage(b, 2, whole+1))
	require.NoError(t, err)
	require.False(t, stored, "a page that costs a byte more than the budget")
	s := tr.Stats()
	require.Equal(t, tier.Stats{Items: 1, Bytes: budget, Capacity: budget, Puts: 2, Drops: 1}, s)

	// A dst of another length is an error, not a truncated page.
	found, err := tr.Get(a, 1, make([]byte, whole-1))
	require.Error(t, err)
	require.False(t, found)
	found, err = tr.Get(a, 1, make([]byte, whole+1))
	require.Error(t, err)
	require.False(t, found)
	require.Equal(t, int64(2), tr.Stats().Errors)

	// The next page evicts the whole-budget one.
	stored, err = tr.Put(c, 3, ModelPage(c, 3, 100))
	require.NoError(t, err)
	require.True(t, stored)
	s = tr.Stats()
	require.Equal(t, int64(1), s.Evictions)
	require.Equal(t, int64(1), s.Items)
	require.Equal(t, int64(100+tier.ItemOverhead), s.Bytes)

	require.NoError(t, tr.Close())
	require.NoError(t, tr.Close(), "closing twice")
	_, err = tr.Get(c, 3, make([]byte, 100))
	require.ErrorIs(t, err, tier.ErrClosed)
	_, err = tr.Put(c, 4, ModelPage(c, 4, 100))
	require.ErrorIs(t, err, tier.ErrClosed)
	require.ErrorIs(t, tr.Delete(c), tier.ErrClosed)
	s = tr.Stats()
	require.Zero(t, s.Items)
	require.Zero(t, s.Bytes)
	require.Equal(t, int64(5), s.Errors)
}

// NumKey is the key of page n of space 1 (database 1, epoch 1): the keys
// of tests that spell out a policy's order.
func NumKey(n uint32) tier.Key {
	return tier.Key{DB: 1, Epoch: 1, ID: page.ID{Space: 1, Page: n}}
}

// PageNumbers lists the page numbers of ks.
func PageNumbers(ks []tier.Key) []uint32 {
	out := []uint32{}
	for _, k := range ks {
		out = append(out, k.ID.Page)
	}
	return out
}

// PutN puts page n, size bytes long, and requires it stored.
func PutN(t *testing.T, tr tier.Tier, n uint32, size int) {
	t.Helper()
	k := NumKey(n)
	stored, err := tr.Put(k, uint64(n), ModelPage(k, uint64(n), size))
	require.NoError(t, err)
	require.True(t, stored, "put %d", n)
}

// GetN gets page n, size bytes long, and reports whether it was found,
// checking the image.
func GetN(t *testing.T, tr tier.Tier, n uint32, size int) bool {
	t.Helper()
	k := NumKey(n)
	dst := make([]byte, size)
	found, err := tr.Get(k, uint64(n), dst)
	require.NoError(t, err)
	if found {
		_, err := CheckModelPage(k, dst)
		require.NoError(t, err)
	}
	return found
}
