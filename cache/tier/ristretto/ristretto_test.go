package ristretto_test

import (
	"testing"

	"github.com/enginelab/enginelab/cache/tier"
	"github.com/enginelab/enginelab/cache/tier/ristretto"
	"github.com/enginelab/enginelab/cache/tier/tiertest"
	"github.com/stretchr/testify/require"
)

// testPageSize is the page size of the tests: the smallest allowed.
const testPageSize = 4096

// The benchmarks' working set: 1,000 pages of 16 KiB.
const (
	benchPages    = 1000
	benchPageSize = 16 << 10
)

// newRistretto makes a tier of capacity bytes, closed when the test ends.
func newRistretto(t *testing.T, capacity int64) *ristretto.Tier {
	t.Helper()
	tr, err := ristretto.New(capacity)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, tr.Close()) })
	return tr
}

func TestRistrettoTierBasics(t *testing.T) {
	tr := newRistretto(t, 1<<20)
	require.Equal(t, "ristretto", tr.Name())
	require.Equal(t, int64(1<<20), tr.Stats().Capacity)
	tiertest.Basics(t, tr, testPageSize)
}

// TestRistrettoTierModel runs the model inexact: ristretto applies a put
// later (a Get right after it may miss) and its admission policy may
// refuse a page after Put reported it stored. "waited" waits after every
// Put and Delete, so that the model's reads find pages and check them.
func TestRistrettoTierModel(t *testing.T) {
	newTier := func(waited bool) tiertest.Factory {
		return func(t testing.TB, capacity int64) tier.Tier {
			tr, err := ristretto.New(capacity)
			require.NoError(t, err)
			if waited {
				return waitedTier{tr}
			}
			return tr
		}
	}
	t.Run("async", func(t *testing.T) { tiertest.Model(t, newTier(false), false) })
	t.Run("waited", func(t *testing.T) { tiertest.Model(t, newTier(true), false) })
}

// waitedTier is a Tier whose Put and Delete return once applied.
type waitedTier struct{ *ristretto.Tier }

func (w waitedTier) Put(k tier.Key, lsn uint64, page []byte) (bool, error) {
	defer w.Wait()
	return w.Tier.Put(k, lsn, page)
}

func (w waitedTier) Delete(k tier.Key) error {
	defer w.Wait()
	return w.Tier.Delete(k)
}

func TestRistrettoTierConcurrent(t *testing.T) {
	tr := newRistretto(t, 1<<20)
	tiertest.Concurrent(t, tr, testPageSize)
	tr.Wait()
	s := tr.Stats()
	require.Zero(t, s.Errors)
	require.LessOrEqual(t, s.Items, int64(16))
	require.Equal(t, s.Items*testPageSize, s.Bytes)
}

func TestRistrettoTierConfig(t *testing.T) {
	for _, c := range []int64{0, -1} {
		_, err := ristretto.New(c)
		require.ErrorIs(t, err, tier.ErrInvalidOptions, "capacity %d", c)
	}
}

// TestRistrettoTierItemsBytes checks Items and Bytes: page bytes only
// (IgnoreInternalCost), following puts, overwrites and deletes.
func TestRistrettoTierItemsBytes(t *testing.T) {
	tr := newRistretto(t, 1<<20)
	for n := range uint32(10) {
		k := tiertest.Key(1, 1, 1, n)
		_, err := tr.Put(k, 1, tiertest.Page(testPageSize, k, 1))
		require.NoError(t, err)
	}
	tr.Wait()
	s := tr.Stats()
	require.Equal(t, int64(10), s.Items)
	require.Equal(t, int64(10*testPageSize), s.Bytes)

	k := tiertest.Key(1, 1, 1, 3)
	_, err := tr.Put(k, 2, tiertest.Page(testPageSize, k, 2)) // an overwrite: no new item
	require.NoError(t, err)
	require.NoError(t, tr.Delete(tiertest.Key(1, 1, 1, 4)))
	tr.Wait()
	s = tr.Stats()
	require.Equal(t, int64(9), s.Items)
	require.Equal(t, int64(9*testPageSize), s.Bytes)
	require.Zero(t, s.Evictions, "a Delete is not an eviction")
	require.Zero(t, s.Drops)
}

// TestRistrettoTierDrops fills a tier far beyond its capacity: pages are
// evicted or refused, and counted, and the tier stays within its budget.
func TestRistrettoTierDrops(t *testing.T) {
	const pages, fit = 1000, 32
	tr := newRistretto(t, fit*testPageSize)
	dst := make([]byte, testPageSize)
	for n := range uint32(pages) {
		k := tiertest.Key(1, 1, 1, n)
		_, err := tr.Put(k, 1, tiertest.Page(testPageSize, k, 1))
		require.NoError(t, err)
		if n%4 == 0 {
			// Some reads, so that TinyLFU has frequencies to compare.
			_, err = tr.Get(tiertest.Key(1, 1, 1, n/2), 1, dst)
			require.NoError(t, err)
		}
	}
	tr.Wait()
	s := tr.Stats()
	t.Logf("stats after %d puts into room for %d: %+v", pages, fit, s)
	require.Equal(t, int64(pages), s.Puts)
	require.Positive(t, s.Drops+s.Evictions, "nothing dropped or evicted")
	require.LessOrEqual(t, s.Items, int64(fit))
	require.LessOrEqual(t, s.Bytes, s.Capacity)
	require.Equal(t, s.Items*testPageSize, s.Bytes)
	// Every page put is held, evicted or dropped.
	require.Equal(t, int64(pages), s.Items+s.Evictions+s.Drops)

	held := 0
	for n := range uint32(pages) {
		k := tiertest.Key(1, 1, 1, n)
		found, err := tr.Get(k, 1, dst)
		require.NoError(t, err)
		if found {
			held++
			require.Equal(t, tiertest.Page(testPageSize, k, 1), dst)
		}
	}
	require.Equal(t, s.Items, int64(held), "pages found against Items")
}

// TestRistrettoTierRepeatedPut: a key put twice without Wait in between
// holds the second page once the buffer is drained. Ristretto alone would
// mostly keep the first: the second Put, queued as a new key behind the
// first, is refused as a key it already has (Tier.onReject).
func TestRistrettoTierRepeatedPut(t *testing.T) {
	const pages = 50
	tr := newRistretto(t, 1<<20)
	dst := make([]byte, testPageSize)
	for n := range uint32(pages) {
		k := tiertest.Key(1, 1, 1, n)
		for v := uint64(1); v <= 3; v++ {
			stored, err := tr.Put(k, v, tiertest.Page(testPageSize, k, v))
			require.NoError(t, err)
			require.True(t, stored)
		}
	}
	tr.Wait()
	for n := range uint32(pages) {
		k := tiertest.Key(1, 1, 1, n)
		found, err := tr.Get(k, 3, dst)
		require.NoError(t, err)
		require.True(t, found, "page %d", n)
		if string(dst) != string(tiertest.Page(testPageSize, k, 3)) {
			require.True(t, tiertest.IsPageOf(dst, k), "page %d: a page never put for it", n)
			t.Fatalf("page %d: an older page after the buffer was drained", n)
		}
	}
	s := tr.Stats()
	require.Zero(t, s.Drops)
	require.Equal(t, int64(pages), s.Items)
	require.Equal(t, int64(pages*testPageSize), s.Bytes)
}

// TestRistrettoTierTooLarge: a page larger than the whole budget is
// dropped at once, not sent to the policy, and the page it would have
// replaced goes too.
func TestRistrettoTierTooLarge(t *testing.T) {
	tr := newRistretto(t, testPageSize)
	k := tiertest.Key(1, 1, 1, 1)
	stored, err := tr.Put(k, 1, tiertest.Page(testPageSize/2, k, 1))
	require.NoError(t, err)
	require.True(t, stored)
	tr.Wait()
	require.Equal(t, int64(1), tr.Stats().Items)

	stored, err = tr.Put(k, 2, tiertest.Page(2*testPageSize, k, 2))
	require.NoError(t, err)
	require.False(t, stored)
	tr.Wait()
	found, err := tr.Get(k, 1, make([]byte, testPageSize/2))
	require.NoError(t, err)
	require.False(t, found, "the page a dropped put replaced")
	s := tr.Stats()
	require.Equal(t, int64(1), s.Drops)
	require.Zero(t, s.Items)
	require.Zero(t, s.Bytes)
}

// BenchmarkTierGetRistretto: goal, a page within 3 µs.
func BenchmarkTierGetRistretto(b *testing.B) {
	tr, err := ristretto.New(2 * benchPages * benchPageSize)
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	tiertest.BenchGetWarm(b, tr)
}

// BenchmarkTierPutRistretto is the price of Tier.Put returning
// before ristretto applies the page (wait=false, what Put does) against
// waiting for it after every Put (wait=true: Put followed by Wait), over
// pages that are mostly present already (overwrites, as in inclusive
// mode) and new ones.
func BenchmarkTierPutRistretto(b *testing.B) {
	for _, wait := range []bool{false, true} {
		name := "wait=false"
		if wait {
			name = "wait=true"
		}
		b.Run(name, func(b *testing.B) {
			tr, err := ristretto.New(2 * benchPages * benchPageSize)
			if err != nil {
				b.Fatal(err)
			}
			defer tr.Close()
			page := make([]byte, benchPageSize)
			b.SetBytes(benchPageSize)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := tr.Put(tiertest.Key(1, 1, 1, uint32(i%benchPages)), 1, page); err != nil {
					b.Fatal(err)
				}
				if wait {
					tr.Wait()
				}
			}
			tr.Wait()
		})
	}
}
