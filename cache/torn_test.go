package cache_test

import (
	"testing"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/stretchr/testify/require"
)

// TestFullPageWrites: with TornPagesFullPageWrites, the first change to a
// page after the horizon (the last checkpoint's redo LSN) logs the whole
// page, counted on the meter; later changes, and a page formatted in the
// mtr, log none. Redo of a record with an image restores the image,
// whatever the page held (a torn page), and skips the page's other
// operations.
func TestFullPageWrites(t *testing.T) {
	rng := seed(t)
	st := newStore(t)
	l, err := redo.Open(st, nil)
	require.NoError(t, err)
	t.Cleanup(l.Close)
	p := newPoolWith(t, st, 32, cache.Options{TornPages: cache.TornPagesFullPageWrites}, cache.Wiring{Log: l})
	require.NoError(t, p.CreateSpace(nil, 1))

	var m cache.Meter
	id := allocRandom(t, p, rng, 1)
	require.Zero(t, m.FullPageImages, "a page formatted in its mtr needs no image")
	lsn1, _ := changeInMtr(t, p, &m, id, func(mt *cache.Mtr, pg *cache.Page) { mt.Write32(pg, 100, 7) })
	require.Zero(t, m.FullPageImages, "the page's LSN is above the horizon (0)")

	p.SetFullPageHorizon(l.End()) // a checkpoint begins
	lsn2, img := changeInMtr(t, p, &m, id, func(mt *cache.Mtr, pg *cache.Page) { mt.Write32(pg, 200, 9) })
	require.Equal(t, int64(1), m.FullPageImages, "first change after the horizon")
	require.Equal(t, int64(p.PageSize()-page.ChecksumSize), m.FullPageImageBytes)
	changeInMtr(t, p, &m, id, func(mt *cache.Mtr, pg *cache.Page) { mt.Write32(pg, 300, 11) })
	require.Equal(t, int64(1), m.FullPageImages, "the page now carries an LSN above the horizon")
	require.Greater(t, lsn2, lsn1)

	pages, _ := readRecord(t, l, lsn2)
	require.Len(t, pages, 1)
	require.Len(t, pages[0].Ops, 2)
	require.Equal(t, redo.KindWrite, pages[0].Ops[0].Kind)
	require.Equal(t, redo.KindPageImage, pages[0].Ops[1].Kind)
	torn := make([]byte, p.PageSize())
	fillRandom(rng, torn)
	require.NoError(t, pages[0].Apply(torn))
	page.SetLSN(torn, lsn2) // as Pool.Redo does
	requireRedone(t, img, torn, lsn2, "page restored from its image")

	var o cache.Options
	require.ErrorIs(t, o.TornPages.Set("sometimes"), cache.ErrInvalidOptions)
	require.NoError(t, o.TornPages.Set("full-page-writes"))
	require.Equal(t, cache.TornPagesFullPageWrites, o.TornPages)
	require.Equal(t, "full-page-writes", o.TornPages.String())
}
