package cache

import (
	"sync"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/tier"
)

// Linear read-ahead, as InnoDB's (buf_read_ahead_linear), made
// deterministic: it runs inside the call that triggers it, never on a
// goroutine or timer of its own, and is charged to the background meter
// (no caller waits for it in InnoDB; the simulator prices it as background
// device work).
//
//	extent k:   [64k ............................. 64k+63]   <- a caller first
//	             first touched in ascending order ≥ 56 times      touches 64k+63
//	extent k+1: [64(k+1) ........................ 64(k+1)+63] <- read in, those
//	                                                              not resident
//
// Only the ascending direction is implemented (InnoDB also reads the
// previous extent after a descending pass; B+tree and heap pages here are
// allocated in ascending order, so scans read forward).

// firstAccessLocked stamps f's first access since it was read in, and
// reports whether this was it.
// REQUIRES: p.mu held.
func (p *Pool) firstAccessLocked(f *Page) bool {
	f.readAhead = raNone
	if f.firstAccess.Load() != 0 {
		return false
	}
	p.mu.accesses++
	f.firstAccess.Store(p.mu.accesses)
	return true
}

// maybeReadAhead runs after a caller first touched last, the last page of
// its extent: if enough of the extent's pages were first touched in ascending
// order, the next extent's missing pages are read in.
func (p *Pool) maybeReadAhead(m *Meter, last page.ID) {
	first := last.Page - (ExtentPages - 1)
	inOrder, prev := 0, uint64(0)
	p.mu.Lock()
	for no := first; no <= last.Page; no++ {
		f := p.table.get(page.ID{Space: last.Space, Page: no})
		if f == nil || f.firstAccess.Load() == 0 || f.firstAccess.Load() < prev {
			continue
		}
		inOrder++
		prev = f.firstAccess.Load()
	}
	p.mu.Unlock()
	if inOrder < p.opts.ReadAheadThreshold || !p.wholeWithin(last.Space, uint64(last.Page)+1+ExtentPages) {
		return
	}
	var bg Meter
	for no := last.Page + 1; no <= last.Page+ExtentPages; no++ {
		id := page.ID{Space: last.Space, Page: no}
		if p.Resident(id) {
			continue
		}
		f, _, err := p.load(&bg, nil, id, false, 0, raLinear, nil)
		if err != nil {
			// A page above the last extent's high water (readArea), a
			// full pool, a failing store: read-ahead is a hint, never a
			// caller's error.
			break
		}
		f.Unpin(false)
		bg.ReadAheads++
	}
	// The pages count as read ahead, not as pool misses of a caller.
	bg.ReadAheadMisses, bg.PoolMisses = bg.PoolMisses, 0
	bg.ReadAheadTriggers++
	p.raBySpace.count(last.Space, false)
	p.chargeReadAhead(m, &bg)
}

// chargeReadAhead charges a read-ahead's work, done in bg: its reads (and
// tier reads) to the background, and what it took to find frames for
// them to m, the caller's meter, if not nil: evictions, dirty victims and
// LRU batches written, their syncs and doublewrite batches, the log syncs
// the writes waited for, exclusive mode's SETs of the victims (its
// DELETEs of pages read back, and inclusive mode's SETs of the pages it
// read, are the reads'). InnoDB's read-ahead is issued by the thread
// whose access triggered it: its reads are asynchronous, but
// buf_page_init_for_read takes each frame with buf_LRU_get_free_block on
// that thread, which writes dirty pages itself when it must.
func (p *Pool) chargeReadAhead(m, bg *Meter) {
	if m != nil {
		w := *bg
		var r Meter
		r.StoreReads, r.StoreReadBytes = bg.StoreReads, bg.StoreReadBytes
		r.ReadAheads, r.ReadAheadMisses, r.ReadAheadUnused, r.ReadAheadTriggers = bg.ReadAheads, bg.ReadAheadMisses, bg.ReadAheadUnused, bg.ReadAheadTriggers
		r.RandomReadAheadTriggers, r.RandomReadAheads, r.RandomReadAheadUnused = bg.RandomReadAheadTriggers, bg.RandomReadAheads, bg.RandomReadAheadUnused
		r.TierGets, r.TierHits, r.TierMisses = bg.TierGets, bg.TierHits, bg.TierMisses
		r.TierStale, r.TierCorrupt, r.TierErrors = bg.TierStale, bg.TierCorrupt, bg.TierErrors
		r.TierDeletes = bg.TierDeletes // exclusive mode expiring the pages it read back
		if p.opts.TierMode == tier.Inclusive {
			r.TierPuts = bg.TierPuts // inclusive mode's copies of the pages it read
		}
		w.Sub(&r)
		m.Add(&w)
		*bg = r
	}
	p.ChargeBackground(bg)
}

// raKind says which read-ahead brought a page in (Page.readAhead).
type raKind uint8

const (
	raNone   raKind = iota // a caller's read, or used since
	raLinear               // linear read-ahead, any of its kinds
	raRandom               // random read-ahead
)

// LinearReadAhead names a linear read-ahead (Options.ReadAheadLinear).
type LinearReadAhead string

// The linear read-aheads.
const (
	// LinearPool is the pool's own (maybeReadAhead, above): an extent
	// of ExtentPages, ascending only, ReadAheadThreshold of its pages
	// first touched in ascending order.
	LinearPool LinearReadAhead = "pool"
	// Linear51 is MySQL 5.1's built-in InnoDB's buf_read_ahead_linear
	// (buf0rea.c): considered at the first access of a border page of
	// an area of BUF_READ_AHEAD_AREA pages (ReadAheadArea), it reads the
	// next area (the last page of the area touched) or the previous one
	// (the first page touched) when no more than area − 3·area/8 of the
	// area's pages are missing or not yet accessed: at least 24 of 64
	// accessed (BUF_READ_AHEAD_LINEAR_THRESHOLD). The code means to
	// count accesses out of order as failures too, but its pred_block is
	// never set, so the order check never runs: 5.1 reads ahead after
	// any 24 accesses of an area, in any order, once its border page is
	// touched. ReadAheadThreshold is not used.
	Linear51 LinearReadAhead = "5.1"
	// LinearPlugin is the InnoDB plugin's (1.0, MySQL 5.1's plugin and
	// 5.5's built-in): the same area and border pages; a page not
	// accessed, or first accessed out of the direction's order against
	// the last accessed page before it, is a failure, and more than
	// 64 − innodb_read_ahead_threshold (ReadAheadThreshold, 56: 8)
	// failures stop it.
	LinearPlugin LinearReadAhead = "plugin"
)

// ReadAheadArea is BUF_READ_AHEAD_AREA for a pool of frames frames, the
// pages Linear51, LinearPlugin and random read-ahead look at and read:
// ut_min(64, ut_2_power_up(curr_size / 32)), so 64 from 2,048 frames up
// and fewer in smaller pools (1 below 64 frames).
func ReadAheadArea(frames int) uint32 {
	a := 1
	for a < frames/32 {
		a *= 2
	}
	return uint32(min(64, a))
}

// Thresholds of MySQL 5.1's read-ahead for an area of area pages
// (buf0rea.c).
func linearThreshold51(area uint32) uint32 { return 3 * area / 8 } // BUF_READ_AHEAD_LINEAR_THRESHOLD
func randomThreshold(area uint32) uint32   { return 5 + area/8 }   // BUF_READ_AHEAD_RANDOM_THRESHOLD

// linearReadAhead is Linear51's and LinearPlugin's buf_read_ahead_linear,
// after a caller's first access of id. InnoDB then reads the border page's
// FIL_PAGE_PREV and FIL_PAGE_NEXT and goes on only if the neighbour on
// the scan's side is the adjacent page number; the pool cannot read a
// layer's links, so it takes page n's neighbours to be n−1 and n+1, as
// a B+tree loaded in key order (DBT2's load) lays its leaves out. InnoDB
// gives up when the area, or the area it would read, is not whole within
// the space (fil_space_get_size: wholeWithin); here a space's size is
// whole extents and an area divides an extent, so an area that holds a
// page of the space is whole, and only the next area is checked.
func (p *Pool) linearReadAhead(m *Meter, id page.ID) {
	area := ReadAheadArea(len(p.frames))
	low := id.Page / area * area
	high := low + area
	if id.Page != low && id.Page != high-1 {
		return // not a border page
	}
	desc := id.Page == low // InnoDB tests low first: an area of 1 reads back
	var maxFail uint32
	plugin := p.opts.ReadAheadLinear == LinearPlugin
	if plugin {
		maxFail = min(uint32(ExtentPages-p.opts.ReadAheadThreshold), area)
	} else {
		maxFail = area - linearThreshold51(area)
	}
	fail := uint32(0)
	p.mu.Lock()
	var pred *Page
	for no := low; no < high; no++ {
		f := p.table.get(page.ID{Space: id.Space, Page: no})
		switch {
		case f == nil || f.firstAccess.Load() == 0:
			fail++
		case plugin && pred != nil:
			// ut_ulint_cmp of the first access times: out of the
			// direction's order is a failure.
			if (f.firstAccess.Load() > pred.firstAccess.Load()) == desc {
				fail++
			}
		}
		if fail > maxFail {
			p.mu.Unlock()
			return
		}
		if plugin && f != nil && f.firstAccess.Load() != 0 {
			pred = f
		}
	}
	p.mu.Unlock()
	from := high // the next area
	if desc {
		if low == 0 {
			return // page 0 has no predecessor (FIL_NULL)
		}
		from = low - area
	}
	if !p.wholeWithin(id.Space, uint64(from)+uint64(area)) {
		return // the next area is past the space's end
	}
	var bg Meter
	bg.ReadAheadTriggers++
	p.raBySpace.count(id.Space, false)
	p.readArea(&bg, id.Space, from, from+area, page.ID{}, raLinear)
	bg.ReadAheads, bg.ReadAheadMisses = bg.PoolMisses, bg.PoolMisses
	bg.PoolMisses = 0
	if p.opts.Flushing == Flushing51 {
		// buf_read_ahead_linear ends with buf_flush_free_margin. A
		// failed write leaves its page dirty for a later flush.
		_, _ = p.freeMargin(&bg)
	}
	p.chargeReadAhead(m, &bg)
}

// wholeWithin reports whether the pages below end are within space's
// size: its extents × ExtentPages (noteSpaceSize), InnoDB's
// fil_space_get_size, the data file's size. Read-ahead reads no area
// that is not whole within it, as InnoDB's does not. A space whose meta
// page the pool has not seen counts as large enough: a read past its end
// fails and ends the read-ahead (readArea).
func (p *Pool) wholeWithin(space uint32, end uint64) bool {
	size, ok := p.spaceSize(space)
	return !ok || end <= size
}

// readArea reads, in the background, the pages from..to-1 of space that
// are not resident, except skip, charging bg (PoolMisses counts them);
// a failed read ends it (a full pool, a failing store, or a page of the
// space's last extent above its high water, which was never written:
// InnoDB reads such pages of its data file as zeros, the pool stops at
// the first; read-ahead is a hint, never a caller's error).
func (p *Pool) readArea(bg *Meter, space, from, to uint32, skip page.ID, kind raKind) {
	for no := from; no < to; no++ {
		id := page.ID{Space: space, Page: no}
		if id == skip || p.Resident(id) {
			continue
		}
		f, _, err := p.load(bg, nil, id, false, 0, kind, nil)
		if err != nil {
			break
		}
		f.Unpin(false)
	}
}

// randomReadAheadDueLocked is buf_read_ahead_random's test at a caller's
// miss of id, before the page is read: whether at least 5 + area/8 pages
// of id's area are resident, accessed since they were read in, and
// recent: their LRU_position above buf_LRU_get_recent_limit
// (replacer.recentLimit).
// REQUIRES: p.mu held.
func (p *Pool) randomReadAheadDueLocked(id page.ID) bool {
	area := ReadAheadArea(len(p.frames))
	low := id.Page / area * area
	limit := p.repl.recentLimit()
	recent := uint32(0)
	for no := low; no < low+area; no++ {
		f := p.table.get(page.ID{Space: id.Space, Page: no})
		if f != nil && f.firstAccess.Load() != 0 && f.lruPos > limit {
			recent++
		}
	}
	return recent >= randomThreshold(area)
}

// randomReadAhead reads the rest of id's area in the background (InnoDB
// also issues id's own read there, asynchronously, and then waits for it;
// here the caller has read it).
func (p *Pool) randomReadAhead(m *Meter, id page.ID) {
	area := ReadAheadArea(len(p.frames))
	low := id.Page / area * area
	var bg Meter
	bg.RandomReadAheadTriggers++
	p.raBySpace.count(id.Space, true)
	// buf_read_ahead_random stops at fil_space_get_size; here the area
	// holds id and a space is whole extents, which an area divides, so
	// the area is whole within the space.
	p.readArea(&bg, id.Space, low, low+area, id, raRandom)
	bg.RandomReadAheads, bg.PoolMisses = bg.PoolMisses, 0
	p.chargeReadAhead(m, &bg)
}

// raTriggers counts read-ahead decisions per space, so that a report can
// say which tables' accesses trigger each kind (Meter.ReadAheadTriggers
// and RandomReadAheadTriggers are their sums).
type raTriggers struct {
	mu sync.Mutex
	by map[uint32]SpaceReadAhead
}

// SpaceReadAhead is one space's read-ahead decisions: linear
// (Meter.ReadAheadTriggers) and random (Meter.RandomReadAheadTriggers).
type SpaceReadAhead struct {
	Linear, Random int64
}

func (r *raTriggers) count(space uint32, random bool) {
	r.mu.Lock()
	if r.by == nil {
		r.by = make(map[uint32]SpaceReadAhead)
	}
	c := r.by[space]
	if random {
		c.Random++
	} else {
		c.Linear++
	}
	r.by[space] = c
	r.mu.Unlock()
}

// ReadAheadTriggersBySpace returns the read-ahead decisions made so far,
// by space (only spaces with one).
func (p *Pool) ReadAheadTriggersBySpace() map[uint32]SpaceReadAhead {
	r := &p.raBySpace
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[uint32]SpaceReadAhead, len(r.by))
	for k, v := range r.by {
		out[k] = v
	}
	return out
}
