package cache_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/store"
)

// readAheadData writes pages 0..n-1 of space 1 (the meta page and n-1
// allocated pages, so ascending page numbers) and returns the store.
func readAheadData(t *testing.T, n int) *store.PebbleStore {
	t.Helper()
	st, l, ids := tierData(t, n-1)
	_ = l
	for i, id := range ids {
		require.EqualValues(t, i+1, id.Page, "pages are allocated in ascending order")
	}
	return st
}

func scanPages(t *testing.T, p *cache.Pool, m *cache.Meter, from, to uint32) {
	t.Helper()
	for no := from; no < to; no++ {
		pg, err := p.Fetch(m, page.ID{Space: 1, Page: no})
		require.NoError(t, err)
		pg.Unpin(false)
	}
}

// A sequential scan of 256 pages (four extents) through a 96-page pool:
// the caller reads the first extent from the store; touching the last page
// of each extent, in order, reads the next one ahead (in the background),
// so the caller's later fetches all hit. The fourth extent has no next.
func TestReadAheadSequentialScan(t *testing.T) {
	st := readAheadData(t, 256)
	p := newPool(t, st, 96, cache.Options{Policy: cache.PolicyLRU, ReadAhead: true})
	var m cache.Meter
	scanPages(t, p, &m, 0, 256)
	require.EqualValues(t, 64, m.StoreReads, m.String())
	require.EqualValues(t, 64, m.PoolMisses)
	require.EqualValues(t, 192, m.PoolHits)
	bg := p.BackgroundMeter()
	require.EqualValues(t, 192, bg.ReadAheads, bg.String())
	require.EqualValues(t, 192, bg.ReadAheadMisses)
	require.EqualValues(t, 3, bg.ReadAheadTriggers)
	// Nothing past the space's end (four extents, as its meta page, page
	// 0, says): the fourth extent has no next one whole within the space.
	require.EqualValues(t, 192, bg.StoreReads)
	require.Zero(t, bg.ReadAheadUnused)

	// A pool that has not seen the space's meta page does not know its
	// size: read-ahead then stops at the first read that fails, one store
	// read past the end (page 256, not found).
	p1 := newPool(t, st, 96, cache.Options{Policy: cache.PolicyLRU, ReadAhead: true})
	m = cache.Meter{}
	scanPages(t, p1, &m, 1, 256)
	bg = p1.BackgroundMeter()
	require.EqualValues(t, 4, bg.ReadAheadTriggers, bg.String())
	require.EqualValues(t, 192, bg.ReadAheads)
	require.EqualValues(t, 193, bg.StoreReads)

	// Switched off: the caller reads every page.
	p2 := newPool(t, st, 96, cache.Options{Policy: cache.PolicyLRU})
	m = cache.Meter{}
	scanPages(t, p2, &m, 0, 256)
	require.EqualValues(t, 256, m.StoreReads)
	require.Zero(t, p2.BackgroundMeter().ReadAheads)
}

// Random point reads never touch 56 pages of an extent in ascending order:
// no read-ahead.
func TestReadAheadNotOnRandomReads(t *testing.T) {
	st := readAheadData(t, 256)
	p := newPool(t, st, 96, cache.Options{Policy: cache.PolicyLRU, ReadAhead: true})
	rng := seed(t)
	for range 2000 {
		pg, err := p.Fetch(nil, page.ID{Space: 1, Page: uint32(rng.IntN(256))})
		require.NoError(t, err)
		pg.Unpin(false)
	}
	require.Zero(t, p.BackgroundMeter().ReadAheads)
}

// Pages read ahead and evicted before anyone used them are counted: a scan
// of the first extent reads the second ahead, then reads of other pages
// push all of it out.
func TestReadAheadUnused(t *testing.T) {
	st := readAheadData(t, 256)
	p := newPool(t, st, 96, cache.Options{Policy: cache.PolicyLRU, ReadAhead: true})
	scanPages(t, p, nil, 0, 64)
	require.EqualValues(t, 64, p.BackgroundMeter().ReadAheads)
	// 96 other pages (extents 2 and 3, past the threshold's order: read
	// from the top down, so they trigger nothing) evict everything.
	for no := uint32(255); no >= 160; no-- {
		pg, err := p.Fetch(nil, page.ID{Space: 1, Page: no})
		require.NoError(t, err)
		pg.Unpin(false)
	}
	bg := p.BackgroundMeter()
	require.EqualValues(t, 64, bg.ReadAheads, bg.String())
	require.EqualValues(t, 64, bg.ReadAheadUnused)
}

// The threshold is InnoDB's range.
func TestReadAheadThresholdConfig(t *testing.T) {
	st := newStore(t)
	_, err := cache.NewPool(st, &cache.Options{ReadAheadThreshold: 65}, nil)
	require.ErrorIs(t, err, cache.ErrInvalidOptions)
	_, err = cache.NewPool(st, &cache.Options{ReadAheadThreshold: -1}, nil)
	require.ErrorIs(t, err, cache.ErrInvalidOptions)
}

// Read-ahead's reads are background work, but finding frames for them is
// the triggering caller's, as InnoDB's buf_page_init_for_read takes them
// on that thread. A scan of pages 0 to 95 through a 96-frame pool reads
// 64 to 127 ahead at page 63 (evicting 0 to 31); pages 32 to 126 are then
// changed (dirty, 95 of them), which leaves page 127 untouched. A scan
// of 127 to 255 hits page 127, whose first touch reads 128 to 191 ahead,
// and page 191 reads 192 to 255: 128 pages in, all by read-ahead, and
// every page of the pool evicted for them. Each of the 95 dirty victims
// is written on the caller's meter; the background did the reads only.
func TestReadAheadFramesChargedToCaller(t *testing.T) {
	st, l, _ := tierData(t, 255)
	p := newPoolWith(t, st, 96, cache.Options{Policy: cache.PolicyLRU, ReadAhead: true}, cache.Wiring{Log: l})
	rng := seed(t)
	scanPages(t, p, nil, 0, 96)
	for no := uint32(32); no < 127; no++ {
		changeInMtr(t, p, nil, page.ID{Space: 1, Page: no}, func(mt *cache.Mtr, pg *cache.Page) { scatter(rng, mt, pg, 1) })
	}
	require.Equal(t, 95, p.Stats().Dirty)
	bg0 := p.BackgroundMeter()
	var m cache.Meter
	scanPages(t, p, &m, 127, 256)
	bg := p.BackgroundMeter()
	bg.Sub(&bg0)
	require.EqualValues(t, 128, bg.ReadAheads, bg.String())
	require.EqualValues(t, 128, bg.StoreReads, "and none past the end of the space")
	require.Zero(t, bg.StoreWrites+bg.Evictions+bg.DirtyWriteBacks, "no frame-finding work in the background")
	require.Zero(t, m.StoreReads, m.String())
	require.EqualValues(t, 129, m.PoolHits)
	require.EqualValues(t, 95, m.StoreWrites, "every dirty victim, written by the caller")
	require.EqualValues(t, 95, m.DirtyWriteBacks)
	require.EqualValues(t, 128, m.Evictions, "a frame for each page read ahead")
	require.Zero(t, p.Stats().Dirty)
}
