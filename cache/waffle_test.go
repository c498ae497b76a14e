package cache_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/enginelab/enginelab/cache/tier"
)

// wafflePool opens a cold 16-frame LRU pool over st with the tier double
// and the Waffle options of o.
func wafflePool(t *testing.T, st *store.PebbleStore, l *redo.Log, td *tierDouble, o cache.Options) *cache.Pool {
	t.Helper()
	o.Policy, o.Tier = cache.PolicyLRU, td
	return newPoolWith(t, st, 16, o, cache.Wiring{Log: l, TierDB: 7, TierEpoch: 1})
}

// fetch fetches and unpins one page, charged to a meter of its own, and
// returns the meter: one page event.
func fetch(t *testing.T, p *cache.Pool, id page.ID) cache.Meter {
	t.Helper()
	var m cache.Meter
	pg, err := p.Fetch(&m, id)
	require.NoError(t, err)
	pg.Unpin(false)
	return m
}

// requests is what the tier double saw since the last call: GETs, SETs
// and DELETEs.
type requests struct{ gets, sets, deletes int }

func (d *tierDouble) since(last *requests) requests {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := requests{d.gets, d.puts, d.deles}
	r := requests{now.gets - last.gets, now.sets - last.sets, now.deletes - last.deletes}
	*last = now
	return r
}

// Waffle Grid's LRU mode, page event by page event, with a 16-frame pool:
// a miss the tier cannot serve is one GET; an eviction is one SET, on the
// evicting caller's meter (synchronous); a page read back is one GET and
// one DELETE.
func TestWaffleLRURequestsPerPageEvent(t *testing.T) {
	st, l, ids := tierData(t, 32)
	td := newTierDouble()
	p := wafflePool(t, st, l, td, cache.Options{Waffle: cache.WaffleLRU})
	require.Equal(t, tier.Exclusive, p.Options().TierMode)
	var last requests

	// Cold misses: a GET each, nothing in the tier.
	for _, id := range ids[:16] {
		m := fetch(t, p, id)
		require.EqualValues(t, 1, m.TierGets)
		require.EqualValues(t, 1, m.TierMisses)
		require.EqualValues(t, 1, m.StoreReads)
		require.Zero(t, m.TierPuts+m.TierDeletes)
	}
	require.Equal(t, requests{gets: 16}, td.since(&last))

	// A miss that evicts: the victim's SET on this caller's path, then
	// the GET for the page wanted.
	m := fetch(t, p, ids[16])
	require.EqualValues(t, 1, m.Evictions)
	require.EqualValues(t, 1, m.TierPuts, m.String())
	require.EqualValues(t, testPageSize, m.TierBytesOut)
	require.EqualValues(t, 1, m.TierGets)
	require.Equal(t, requests{gets: 1, sets: 1}, td.since(&last))

	// Page 0 read back: a SET for the victim, a GET that hits and a
	// DELETE that expires the page in the tier; no store read.
	m = fetch(t, p, ids[0])
	require.EqualValues(t, 1, m.TierHits, m.String())
	require.EqualValues(t, 1, m.TierDeletes)
	require.EqualValues(t, 1, m.TierPuts)
	require.Zero(t, m.StoreReads)
	require.Equal(t, requests{gets: 1, sets: 1, deletes: 1}, td.since(&last))
	require.Equal(t, 1, td.len(), "page 1, just evicted; page 0 left the tier")

	// A hit in the pool asks nothing.
	m = fetch(t, p, ids[0])
	require.EqualValues(t, 1, m.PoolHits)
	require.Equal(t, requests{}, td.since(&last))
	require.Zero(t, p.BackgroundMeter().TierPuts, "nothing in the background")
}

// WaffleKeepOnRead: a page read back stays in the tier (no DELETE), so a
// hit is one request.
func TestWaffleLRUKeepOnRead(t *testing.T) {
	st, l, ids := tierData(t, 32)
	td := newTierDouble()
	p := wafflePool(t, st, l, td, cache.Options{Waffle: cache.WaffleLRU, WaffleKeepOnRead: true})
	readAll(t, p, nil, ids[:17]) // page 0 evicted and SET
	var last requests
	td.since(&last)
	m := fetch(t, p, ids[0])
	require.EqualValues(t, 1, m.TierHits, m.String())
	require.Zero(t, m.TierDeletes)
	require.Equal(t, requests{gets: 1, sets: 1}, td.since(&last))
	require.Equal(t, 2, td.len(), "page 0 stays, page 1 joins it")
}

// The asynchronous SET queue: evictions queue their SETs (none reaches the
// tier), a full queue makes the evicting caller send the oldest itself, a
// page wanted back while queued comes from the queue without a request,
// and SendStep sends the rest, on the background meter.
func TestWaffleLRUSetQueueWait(t *testing.T) {
	st, l, ids := tierData(t, 32)
	td := newTierDouble()
	p := wafflePool(t, st, l, td, cache.Options{Waffle: cache.WaffleLRU, WaffleSetQueue: 2})
	require.Equal(t, cache.QueueFullWait, p.Options().WaffleQueueFull)
	readAll(t, p, nil, ids[:16])
	var last requests
	td.since(&last)

	for i, id := range ids[16:18] { // evict pages 0 and 1
		m := fetch(t, p, id)
		require.EqualValues(t, 1, m.TierSetsQueued, m.String())
		require.Zero(t, m.TierPuts)
		require.Equal(t, i+1, p.QueuedSets())
	}
	require.Equal(t, requests{gets: 2}, td.since(&last), "no SET has gone out")

	// The third eviction (page 2) finds the queue full: it sends page 0's
	// SET itself, then queues its own.
	m := fetch(t, p, ids[18])
	require.EqualValues(t, 1, m.TierSetWaits, m.String())
	require.EqualValues(t, 1, m.TierPuts)
	require.EqualValues(t, 1, m.TierSetsQueued)
	require.Equal(t, requests{gets: 1, sets: 1}, td.since(&last))
	require.Equal(t, 2, p.QueuedSets())

	// Page 2 is still queued. The frame is freed first: page 3's
	// eviction finds the queue full again and sends page 1; then page 2
	// comes back from the queue, with no GET and no store read.
	m = fetch(t, p, ids[2])
	require.EqualValues(t, 1, m.TierQueueHits, m.String())
	require.Zero(t, m.TierGets+m.StoreReads)
	require.EqualValues(t, 1, m.TierSetWaits)
	require.EqualValues(t, 1, m.TierSetsQueued)
	require.Equal(t, requests{sets: 1}, td.since(&last))
	require.Equal(t, 1, p.QueuedSets())

	// The sender sends page 3's.
	bg := p.BackgroundMeter()
	require.Equal(t, 1, p.SendStep(nil, 10))
	d := p.BackgroundMeter()
	d.Sub(&bg)
	require.EqualValues(t, 1, d.TierPuts, d.String())
	require.Equal(t, requests{sets: 1}, td.since(&last))
	require.Zero(t, p.QueuedSets())
	require.Equal(t, 3, td.len(), "pages 0, 1 and 3")
}

// QueueFullDrop: an eviction that finds the queue full sends nothing.
func TestWaffleLRUSetQueueDrop(t *testing.T) {
	st, l, ids := tierData(t, 32)
	td := newTierDouble()
	p := wafflePool(t, st, l, td, cache.Options{Waffle: cache.WaffleLRU, WaffleSetQueue: 1, WaffleQueueFull: cache.QueueFullDrop})
	readAll(t, p, nil, ids[:17]) // page 0 queued
	m := fetch(t, p, ids[17])    // page 1 dropped
	require.EqualValues(t, 1, m.TierQueueDrops, m.String())
	require.Zero(t, m.TierPuts+m.TierSetsQueued)
	require.Equal(t, 1, p.SendStep(&m, 10))
	require.EqualValues(t, 1, m.TierPuts)
	require.Equal(t, 1, td.len(), "page 0 only")
}

// Waffle Grid's non-LRU mode: a store read and a store write each SET the
// page, on the background meter, never the caller's; a hit leaves the page
// in the tier; an eviction sends nothing.
func TestWaffleNonLRURequestsPerPageEvent(t *testing.T) {
	st, l, ids := tierData(t, 32)
	td := newTierDouble()
	p := wafflePool(t, st, l, td, cache.Options{Waffle: cache.WaffleNonLRU})
	require.Equal(t, tier.Inclusive, p.Options().TierMode)
	var last requests

	bg0 := p.BackgroundMeter()
	m := fetch(t, p, ids[0])
	require.EqualValues(t, 1, m.TierGets)
	require.EqualValues(t, 1, m.StoreReads)
	require.Zero(t, m.TierPuts, "the SET is not the caller's")
	bg := p.BackgroundMeter()
	bg.Sub(&bg0)
	require.EqualValues(t, 1, bg.TierPuts, bg.String())
	require.Equal(t, requests{gets: 1, sets: 1}, td.since(&last))

	readAll(t, p, nil, ids[1:17]) // page 0 evicted: no SET
	require.Equal(t, requests{gets: 16, sets: 16}, td.since(&last))
	m = fetch(t, p, ids[0]) // back from the tier, left there
	require.EqualValues(t, 1, m.TierHits)
	require.Zero(t, m.TierDeletes+m.TierPuts)
	require.Equal(t, requests{gets: 1}, td.since(&last))

	// A write to the store SETs the new image, in the background.
	rng := seed(t)
	changeInMtr(t, p, nil, ids[0], func(mt *cache.Mtr, pg *cache.Page) { scatter(rng, mt, pg, 3) })
	bg0 = p.BackgroundMeter()
	m = cache.Meter{}
	require.NoError(t, p.FlushPage(&m, ids[0]))
	require.EqualValues(t, 1, m.StoreWrites)
	require.Zero(t, m.TierPuts)
	bg = p.BackgroundMeter()
	bg.Sub(&bg0)
	require.EqualValues(t, 1, bg.TierPuts, bg.String())
	require.Equal(t, requests{sets: 1}, td.since(&last))
}

// Waffle options that contradict each other are refused before any
// work, with the sentinel.
func TestWaffleOptionsRefused(t *testing.T) {
	st := newStore(t)
	for name, o := range map[string]cache.Options{
		"unknown mode":         {Waffle: "mru"},
		"LRU and inclusive":    {Waffle: cache.WaffleLRU, TierMode: tier.Inclusive},
		"non-LRU and excl":     {Waffle: cache.WaffleNonLRU, TierMode: tier.Exclusive},
		"negative queue":       {Waffle: cache.WaffleLRU, WaffleSetQueue: -1},
		"queue without waffle": {WaffleSetQueue: 4},
		"queue in non-LRU":     {Waffle: cache.WaffleNonLRU, WaffleSetQueue: 4},
		"keep in non-LRU":      {Waffle: cache.WaffleNonLRU, WaffleKeepOnRead: true},
		"keep without waffle":  {WaffleKeepOnRead: true},
		"full without queue":   {Waffle: cache.WaffleLRU, WaffleQueueFull: cache.QueueFullDrop},
		"unknown full policy":  {Waffle: cache.WaffleLRU, WaffleSetQueue: 1, WaffleQueueFull: "block"},
	} {
		_, err := cache.NewPool(st, &o, nil)
		require.ErrorIs(t, err, cache.ErrInvalidOptions, name)
	}
}

// With the pool's own sender goroutine (real mode), every queued SET is
// either sent or still queued when the goroutine stops: none is lost or
// sent twice.
func TestWaffleLRUSenderGoroutine(t *testing.T) {
	st, l, ids := tierData(t, 32)
	td := newTierDouble()
	o := cache.Options{Policy: cache.PolicyLRU, Tier: td, Waffle: cache.WaffleLRU, WaffleSetQueue: 4}
	p := newPoolWith(t, st, 16, o, cache.Wiring{Log: l, TierDB: 7, TierEpoch: 1, Cleaner: cache.CleanerGoroutine})
	var m cache.Meter
	readAll(t, p, &m, ids)
	p.StopCleaner()
	var last requests
	r := td.since(&last)
	require.EqualValues(t, 16, m.TierSetsQueued, "every eviction queues (a waiting one after sending the oldest): %s", m.String())
	require.EqualValues(t, m.TierSetsQueued, int64(r.sets)+int64(p.QueuedSets()), "every queued SET sent once or still queued")
	require.NoError(t, p.Close())
	require.Zero(t, p.QueuedSets(), "Close discards the queue")
}
