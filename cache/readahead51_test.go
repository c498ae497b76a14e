package cache_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/store"
)

// poolFrames64 is the smallest pool whose read-ahead area is 64 pages
// (BUF_READ_AHEAD_AREA: 2,048 / 32).
const poolFrames64 = 2048

// touchPages fetches and unpins pages of space 1 in the order given, charged
// to m.
func touchPages(t *testing.T, p *cache.Pool, m *cache.Meter, nos ...uint32) {
	t.Helper()
	for _, no := range nos {
		pg, err := p.Fetch(m, page.ID{Space: 1, Page: no})
		require.NoError(t, err)
		pg.Unpin(false)
	}
}

func span(from, to uint32) []uint32 { // from..to-1, or down from from-1 when to < from
	var out []uint32
	if from <= to {
		for n := from; n < to; n++ {
			out = append(out, n)
		}
		return out
	}
	for n := from; n > to; n-- {
		out = append(out, n-1)
	}
	return out
}

func TestReadAheadArea(t *testing.T) {
	for frames, want := range map[int]uint32{16: 1, 63: 1, 64: 2, 96: 4, 256: 8, 1024: 32, 2047: 64, 2048: 64, 49152: 64} {
		require.Equal(t, want, cache.ReadAheadArea(frames), "%d frames", frames)
	}
}

func pool51(t *testing.T, st *store.PebbleStore, frames int, o cache.Options) *cache.Pool {
	t.Helper()
	o.Policy = cache.PolicyLRU
	return newPool(t, st, frames, o)
}

// MySQL 5.1's linear read-ahead on a sequential scan of 256 pages:
// touching the last page of each 64-page area reads the next area, in the
// background; the first pages of an area (descending border) trigger
// nothing. As InnoDB's (fil_space_get_size), it reads no area that is not
// whole within the space: in a space of four extents (its meta page, page
// 0, read first) the fourth area's end reads nothing.
func TestLinear51SequentialScan(t *testing.T) {
	for _, c := range []struct {
		spacePages      int
		triggers, reads int64
	}{
		{512, 4, 256}, // at pages 63, 127, 191 and 255
		{256, 3, 192}, // at pages 63, 127 and 191: nothing past the end
	} {
		st := readAheadData(t, c.spacePages)
		p := pool51(t, st, poolFrames64, cache.Options{ReadAhead: true, ReadAheadLinear: cache.Linear51})
		var m cache.Meter
		touchPages(t, p, &m, span(0, 256)...)
		require.EqualValues(t, 64, m.StoreReads, m.String())
		require.EqualValues(t, 192, m.PoolHits)
		bg := p.BackgroundMeter()
		require.Equal(t, c.triggers, bg.ReadAheadTriggers, "%d pages: %s", c.spacePages, bg.String())
		require.Equal(t, c.reads, bg.ReadAheads)
		require.Equal(t, c.reads, bg.StoreReads, "no read past the end")
		require.Zero(t, bg.RandomReadAheadTriggers)
	}
}

// 5.1 counts accessed pages, 24 of the 64 (3/8), in any order: its order
// check never runs. 23 accesses before the border page are 24 with it;
// 22 are not enough.
func TestLinear51ThreeEighthsInAnyOrder(t *testing.T) {
	st := readAheadData(t, 512)
	for _, c := range []struct {
		from     uint32
		triggers int64
	}{{104, 1}, {105, 0}} {
		p := pool51(t, st, poolFrames64, cache.Options{ReadAhead: true, ReadAheadLinear: cache.Linear51})
		touchPages(t, p, nil, span(127, c.from)...) // 126 down to c.from: descending
		touchPages(t, p, nil, 127)                  // the area's last page
		bg := p.BackgroundMeter()
		require.Equal(t, c.triggers, bg.ReadAheadTriggers, "%d accessed", 128-c.from)
		require.Equal(t, 64*c.triggers, bg.ReadAheads)
		for no := uint32(128); no < 192; no++ {
			require.Equal(t, c.triggers == 1, p.Resident(page.ID{Space: 1, Page: no}))
		}
	}
}

// The plugin's linear read-ahead: innodb_read_ahead_threshold (56) pages
// accessed in the direction's order; 55 are not enough, nor a shuffled
// area; a descending pass reads the area before.
func TestLinearPluginThreshold(t *testing.T) {
	st := readAheadData(t, 512)
	o := cache.Options{ReadAhead: true, ReadAheadLinear: cache.LinearPlugin}
	for _, c := range []struct {
		name     string
		order    []uint32
		triggers int64
		reads    uint32 // first page of the area read
	}{
		{"56 ascending", span(72, 128), 1, 128},
		{"55 ascending", span(73, 128), 0, 0},
		{"all 64 descending", span(128, 64), 1, 0},
		{"shuffled", append(shuffled(t, span(64, 127)), 127), 0, 0},
	} {
		p := pool51(t, st, poolFrames64, o)
		touchPages(t, p, nil, c.order...)
		bg := p.BackgroundMeter()
		require.Equal(t, c.triggers, bg.ReadAheadTriggers, c.name)
		require.Equal(t, 64*c.triggers, bg.ReadAheads, c.name)
		if c.triggers == 1 {
			require.True(t, p.Resident(page.ID{Space: 1, Page: c.reads}), c.name)
			require.True(t, p.Resident(page.ID{Space: 1, Page: c.reads + 63}), c.name)
		}
	}
	_, err := cache.NewPool(st, &cache.Options{ReadAheadLinear: "5.5"}, nil)
	require.ErrorIs(t, err, cache.ErrInvalidOptions)
}

func shuffled(t *testing.T, xs []uint32) []uint32 {
	rng := seed(t)
	rng.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
	return xs
}

// Random point reads of a space eight areas long touch about a dozen
// pages an area: neither linear read-ahead triggers.
func TestLinearNotOnRandomReads(t *testing.T) {
	st := readAheadData(t, 512)
	for _, kind := range []cache.LinearReadAhead{cache.Linear51, cache.LinearPlugin} {
		p := pool51(t, st, poolFrames64, cache.Options{ReadAhead: true, ReadAheadLinear: kind})
		rng := seed(t)
		for range 100 {
			touchPages(t, p, nil, uint32(rng.IntN(512)))
		}
		require.Zero(t, p.BackgroundMeter().ReadAheadTriggers, kind)
		require.Zero(t, p.BackgroundMeter().ReadAheads, kind)
	}
}

// Random read-ahead on a hot, non-sequential area: 13 pages of it
// (5 + 64/8) touched, in no order, make the next miss there read the
// other 50; 12 do not.
func TestRandomReadAheadHotArea(t *testing.T) {
	st := readAheadData(t, 512)
	hot := []uint32{37, 5, 60, 12, 44, 1, 29, 53, 20, 8, 33, 49, 16} // offsets in area 1
	for _, n := range []int{13, 12} {
		p := pool51(t, st, poolFrames64, cache.Options{RandomReadAhead: true})
		var m cache.Meter
		for _, off := range hot[:n] {
			touchPages(t, p, &m, 64+off)
		}
		require.Zero(t, p.BackgroundMeter().RandomReadAheadTriggers)
		touchPages(t, p, &m, 64+3) // a miss in the area
		require.EqualValues(t, n+1, m.StoreReads)
		bg := p.BackgroundMeter()
		if n == 13 {
			require.EqualValues(t, 1, bg.RandomReadAheadTriggers, bg.String())
			require.EqualValues(t, 50, bg.RandomReadAheads)
			require.EqualValues(t, 50, bg.StoreReads)
			for no := uint32(64); no < 128; no++ {
				require.True(t, p.Resident(page.ID{Space: 1, Page: no}))
			}
		} else {
			require.Zero(t, bg.RandomReadAheadTriggers, bg.String())
			require.Zero(t, bg.RandomReadAheads)
		}
		require.Zero(t, bg.ReadAheadTriggers, "linear read-ahead is off")
	}
}

// Recent means near the head of the LRU: within an eighth of its length
// of the head's stamp (buf_LRU_get_recent_limit). Thirteen pages of an
// area touched long ago do not count; touched again, they do.
func TestRandomReadAheadRecency(t *testing.T) {
	st := readAheadData(t, 1024)
	p := pool51(t, st, poolFrames64, cache.Options{RandomReadAhead: true})
	hot := []uint32{64, 66, 68, 70, 72, 74, 76, 78, 80, 82, 84, 86, 88}
	touchPages(t, p, nil, hot...)
	for area := uint32(0); area < 16; area++ { // 12 pages of every other area: 180, none triggers
		if area != 1 {
			touchPages(t, p, nil, span(64*area, 64*area+12)...)
		}
	}
	// 193 pages: the recent ones are those within 24 stamps of the head.
	touchPages(t, p, nil, 65)
	require.Zero(t, p.BackgroundMeter().RandomReadAheadTriggers, "the 13 are not recent")
	touchPages(t, p, nil, hot...) // hits: to the head again
	touchPages(t, p, nil, 67)
	bg := p.BackgroundMeter()
	require.EqualValues(t, 1, bg.RandomReadAheadTriggers, bg.String())
	require.EqualValues(t, 64-15, bg.RandomReadAheads)
}

// Pages read ahead at random and evicted unused are counted. A 256-frame
// pool's area is 8 pages and its threshold 6: six pages of area 1 and a
// miss on a seventh read the eighth (page 15); then a sequential read of
// 300 other pages triggers once in each of its 37 whole areas (each page
// read so is used next) and pushes page 15 out, never used.
func TestRandomReadAheadUnused(t *testing.T) {
	st := readAheadData(t, 512)
	p := pool51(t, st, 256, cache.Options{RandomReadAhead: true})
	touchPages(t, p, nil, 8, 10, 12, 14, 9, 11, 13)
	require.EqualValues(t, 1, p.BackgroundMeter().RandomReadAheads)
	require.True(t, p.Resident(page.ID{Space: 1, Page: 15}))
	touchPages(t, p, nil, span(100, 400)...)
	bg := p.BackgroundMeter()
	require.EqualValues(t, 38, bg.RandomReadAheadTriggers, bg.String())
	require.EqualValues(t, 38, bg.RandomReadAheads)
	require.EqualValues(t, 1, bg.RandomReadAheadUnused)
	require.Zero(t, bg.ReadAheadUnused)
}
