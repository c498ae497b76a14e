package cache_test

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/enginelab/enginelab/cache/tier"
)

// tierDouble is a Tier for the pool's tests: an unbounded map that can be
// told to fail or to corrupt what it returns.
type tierDouble struct {
	mu                sync.Mutex
	pages             map[tier.Key][]byte
	failGet, failPut  bool
	corrupt           bool
	gets, puts, deles int
}

func newTierDouble() *tierDouble { return &tierDouble{pages: map[tier.Key][]byte{}} }

var errTierDown = errors.New("tier down")

func (d *tierDouble) Get(k tier.Key, _ uint64, dst []byte) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.gets++
	if d.failGet {
		return false, errTierDown
	}
	b, ok := d.pages[k]
	if ok {
		copy(dst, b)
		if d.corrupt {
			dst[len(dst)-1] ^= 0xff
		}
	}
	return ok, nil
}

func (d *tierDouble) Put(k tier.Key, _ uint64, page []byte) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.puts++
	if d.failPut {
		return false, errTierDown
	}
	d.pages[k] = append([]byte(nil), page...)
	return true, nil
}

func (d *tierDouble) Delete(k tier.Key) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.deles++
	delete(d.pages, k)
	return nil
}

func (d *tierDouble) set(k tier.Key, page []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pages[k] = append([]byte(nil), page...)
}

func (d *tierDouble) len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.pages)
}

func (d *tierDouble) Stats() tier.Stats { return tier.Stats{Items: int64(d.len())} }
func (d *tierDouble) Name() string      { return "double" }
func (d *tierDouble) Close() error      { return nil }

// tierData writes n pages of random content (each through a logged mtr)
// into space 1 of a new store and returns the store, its log and the ids.
// The pool that wrote them is gone: a pool opened on the store afterwards
// starts cold, and knows a page's LSN once it has read it.
func tierData(t *testing.T, n int) (*store.PebbleStore, *redo.Log, []page.ID) {
	t.Helper()
	rng := seed(t)
	st := newStore(t)
	l, err := redo.Open(st, nil)
	require.NoError(t, err)
	t.Cleanup(l.Close)
	p := newPoolWith(t, st, n+16, cache.Options{}, cache.Wiring{Log: l})
	require.NoError(t, p.CreateSpace(nil, 1))
	ids := make([]page.ID, n)
	for i := range ids {
		ids[i] = allocRandom(t, p, rng, 1)
	}
	require.NoError(t, p.FlushAll(nil))
	return st, l, ids
}

// tierPool opens a cold pool of frames frames with LRU eviction over st,
// with tier tr in mode, epoch epoch.
func tierPool(t *testing.T, st *store.PebbleStore, l *redo.Log, frames int, tr tier.Tier, mode tier.Mode, epoch uint64) *cache.Pool {
	t.Helper()
	p := newPoolWith(t, st, frames, cache.Options{Policy: cache.PolicyLRU, Tier: tr, TierMode: mode}, cache.Wiring{Log: l, TierDB: 7, TierEpoch: epoch})
	return p
}

// readAll fetches and unpins every page of ids in order, charged to m.
func readAll(t *testing.T, p *cache.Pool, m *cache.Meter, ids []page.ID) {
	t.Helper()
	for _, id := range ids {
		pg, err := p.Fetch(m, id)
		require.NoError(t, err)
		pg.Unpin(false)
	}
}

// Exclusive mode, a 16-page pool, 64 pages of data, a tier larger than
// the data: the first pass reads every page from the store and pushes the
// 48 it evicts; the second pass reads every page from the tier (48 pushed
// in the first pass, the other 16 pushed as the second pass evicts them)
// and none from the store, deleting each from the tier as it comes back.
func TestTierExclusivePushOnEvictFetchOnMiss(t *testing.T) {
	st, l, ids := tierData(t, 64)
	td := newTierDouble()
	p := tierPool(t, st, l, 16, td, tier.Exclusive, 1)

	var m1 cache.Meter
	readAll(t, p, &m1, ids)
	require.EqualValues(t, 64, m1.StoreReads, m1.String())
	require.EqualValues(t, 64, m1.TierGets)
	require.EqualValues(t, 64, m1.TierMisses)
	require.EqualValues(t, 48, m1.Evictions)
	require.EqualValues(t, 48, m1.TierPuts)
	require.EqualValues(t, 48*testPageSize, m1.TierBytesOut)
	require.Equal(t, 48, td.len())

	var m2 cache.Meter
	readAll(t, p, &m2, ids)
	require.Zero(t, m2.StoreReads, "the second pass reads nothing from the store: %s", m2.String())
	require.EqualValues(t, 64, m2.TierHits)
	require.EqualValues(t, 64, m2.TierDeletes, "a page read back leaves the tier")
	require.EqualValues(t, 64, m2.TierPuts, "each eviction pushes")
	require.EqualValues(t, 64*testPageSize, m2.TierBytesIn)
	require.Zero(t, m2.TierStale+m2.TierCorrupt+m2.TierErrors)
	require.Equal(t, 48, td.len(), "pages 1..48 are in the tier, 49..64 in the pool")
}

// Inclusive mode: every store read is pushed at once, a page read back
// stays in the tier, an eviction pushes nothing, and a write-back
// overwrites the tier's copy.
func TestTierInclusive(t *testing.T) {
	st, l, ids := tierData(t, 64)
	td := newTierDouble()
	p := tierPool(t, st, l, 16, td, tier.Inclusive, 1)

	var m1 cache.Meter
	readAll(t, p, &m1, ids)
	require.EqualValues(t, 64, m1.StoreReads)
	require.EqualValues(t, 64, m1.TierPuts, "each page read from the store is pushed")
	require.Equal(t, 64, td.len())

	var m2 cache.Meter
	readAll(t, p, &m2, ids)
	require.Zero(t, m2.StoreReads, m2.String())
	require.EqualValues(t, 64, m2.TierHits)
	require.Zero(t, m2.TierDeletes)
	require.Zero(t, m2.TierPuts, "evictions push nothing")
	require.Equal(t, 64, td.len())

	// A change written back replaces the tier's copy.
	rng := seed(t)
	id := ids[len(ids)-1] // resident
	lsn, img := changeInMtr(t, p, nil, id, func(mt *cache.Mtr, pg *cache.Page) { scatter(rng, mt, pg, 3) })
	var m3 cache.Meter
	require.NoError(t, p.FlushPage(&m3, id))
	require.EqualValues(t, 1, m3.TierPuts)
	got := make([]byte, testPageSize)
	found, err := td.Get(tier.Key{DB: 7, Epoch: 1, ID: id}, lsn, got)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, lsn, page.LSN(got))
	require.Equal(t, img[page.HeaderSize:], got[page.HeaderSize:])
}

// An old image of a page put into the tier behind the pool's back is not
// used: the pool reads the store and counts a stale page.
func TestTierStalePage(t *testing.T) {
	st, l, ids := tierData(t, 32)
	td := newTierDouble()
	p := tierPool(t, st, l, 16, td, tier.Exclusive, 1)
	rng := seed(t)
	id := ids[0]
	old := make([]byte, testPageSize)
	require.NoError(t, st.ReadPage(id, old))
	lsn, img := changeInMtr(t, p, nil, id, func(mt *cache.Mtr, pg *cache.Page) { scatter(rng, mt, pg, 5) })
	require.Greater(t, lsn, page.LSN(old))
	readAll(t, p, nil, ids[1:17]) // evicts id (written back first, pushed)
	require.False(t, p.Resident(id))
	key := tier.Key{DB: 7, Epoch: 1, ID: id}
	td.set(key, old) // the old image, behind the pool's back

	var m cache.Meter
	pg, err := p.Fetch(&m, id)
	require.NoError(t, err)
	pg.RLatch()
	require.Equal(t, img[page.HeaderSize:], pg.Data()[page.HeaderSize:], "the newest image, from the store")
	pg.RUnlatch()
	pg.Unpin(false)
	require.EqualValues(t, 1, m.TierStale, m.String())
	require.EqualValues(t, 1, m.StoreReads)
	require.Zero(t, m.TierHits)
}

// A tier that returns damaged bytes or fails is a miss, counted; the pool
// reads the store and no caller sees an error.
func TestTierCorruptAndFailing(t *testing.T) {
	st, l, ids := tierData(t, 32)
	td := newTierDouble()
	p := tierPool(t, st, l, 16, td, tier.Exclusive, 1)
	readAll(t, p, nil, ids) // pages 0..15 are now in the tier
	require.Equal(t, 16, td.len())

	td.corrupt = true
	var m cache.Meter
	readAll(t, p, &m, ids[:4])
	require.EqualValues(t, 4, m.TierCorrupt, m.String())
	require.EqualValues(t, 4, m.StoreReads)
	td.corrupt = false

	td.failGet, td.failPut = true, true
	m = cache.Meter{}
	readAll(t, p, &m, ids[4:8])
	require.EqualValues(t, 8, m.TierErrors, "four gets and four pushes failed: %s", m.String())
	require.Zero(t, m.TierHits+m.TierMisses)
	require.EqualValues(t, 4, m.StoreReads)
	require.EqualValues(t, 4, m.TierPuts, "the evictions still tried")
}

// A page one open (epoch) pushed is invisible to the next open, and to
// another database on the same tier.
func TestTierKeyEpoch(t *testing.T) {
	st, l, ids := tierData(t, 32)
	td := newTierDouble()
	p := tierPool(t, st, l, 16, td, tier.Exclusive, 1)
	readAll(t, p, nil, ids)
	require.Equal(t, 16, td.len())

	p2 := tierPool(t, st, l, 16, td, tier.Exclusive, 2)
	var m cache.Meter
	readAll(t, p2, &m, ids[:16])
	require.Zero(t, m.TierHits, m.String())
	require.EqualValues(t, 16, m.TierMisses)
	require.EqualValues(t, 16, m.StoreReads)
}

// A trace recorded from a pool over a NullTier is the pool's demand: in
// exclusive mode a get for every miss and a put for every eviction, and
// no deletes, since nothing is ever found.
func TestTraceTierPool(t *testing.T) {
	st := newStore(t)
	putPages(t, st, 1, 0, 17)
	var buf bytes.Buffer
	tt := tier.NewTraceTier(nil, &buf, testPageSize, tier.Exclusive)
	p := newPool(t, st, 16, cache.Options{Tier: tt, TierMode: tier.Exclusive, Policy: cache.PolicyLRU})
	order := []uint32{}
	for n := range uint32(18) {
		order = append(order, n)
	}
	for _, n := range append(order, 0) {
		pg, err := p.Fetch(nil, pid(1, n))
		require.NoError(t, err)
		pg.Unpin(false)
	}
	require.NoError(t, tt.Flush())
	tr, err := tier.ReadTrace(&buf)
	require.NoError(t, err)
	var got []string
	for _, e := range tr.Events {
		got = append(got, fmt.Sprintf("%c %s", e.Op, e.ID))
		require.Equal(t, int32(testPageSize), e.Bytes)
	}
	// Sixteen frames, LRU: pages 0 to 15 fill them; 16 evicts 0, 17
	// evicts 1, and 0 again evicts 2. The pool frees a frame (and pushes
	// its page) before it asks the tier for the page it wants.
	var want []string
	for n := range 16 {
		want = append(want, fmt.Sprintf("g 1:%d", n))
	}
	want = append(want, "p 1:0", "g 1:16", "p 1:1", "g 1:17", "p 1:2", "g 1:0")
	require.Equal(t, want, got)
	require.Equal(t, "null", tt.Name())
	require.Equal(t, tier.Stats{Gets: 19, Puts: 3}, tt.Stats(), "the null tier's counters")
}
