package cache

import (
	"errors"
	"fmt"
	"sync"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/cache/store"
)

// A mini-transaction (Mtr) is the unit of page change: every change to a
// page's bytes happens inside one, and it reaches the redo log as one record
// holding every page it changed (a B+tree split, its new sibling, the
// parent's new separator and the space's meta page are one record, so
// recovery replays the split whole or not at all).
//
// The protocol, as InnoDB's mtr:
//
//	mt := pool.BeginMtr(m)
//	pg, _ := pool.Fetch(m, id)
//	mt.Latch(pg)            // exclusive latch; the mtr snapshots the page
//	... change pg.Data() ...
//	mt.Release(pg, true)    // the caller is done with pg; a changed page
//	                        // stays latched until Commit
//	lsn := mt.Commit()      // one log record; every page gets its LSN;
//	                        // latches and pins are released
//
// A page released unchanged (dirty false) is unlatched and unpinned at once,
// so latch coupling works inside an mtr as it does outside. A changed page
// keeps its exclusive latch until Commit, so nobody sees (and no write-out
// copies) a change before its log record exists and the page carries its
// LSN: the write-ahead rule then only needs the pool to flush the log
// (RedoLog.Flush) before it writes a page.
//
// What goes in the record (redo.Encode) is found by comparing each page
// with its snapshot (a copy taken at Latch): changed byte ranges, the way a
// physical diff does. That costs a page copy and a compare per latched page, but it needs
// no redo code per operation and cannot miss a change; the record sizes it
// produces are metered (LogBytes). A page created in the mtr (Fresh) is
// logged against a zero page: redo starts it from zeros.
//
// Latching a page the mtr already holds (because it changed it earlier) does
// not latch again: the mtr owns the exclusive latch. RLatch and RUnlatch do
// the same for shared latches, so a code path may re-read a page it changed.
//
// Without a log (Wiring.Log nil: structure tests), an mtr takes no
// snapshots and writes no records; it still holds changed pages until
// Commit.
//
// An Mtr is used by one goroutine and must be committed; after Commit it
// returns to a free list and must not be used again.
type Mtr struct {
	pool    *Pool
	m       *Meter
	pages   []mtrPage
	note    []byte
	changes []redo.Change // Commit's argument to redo.Encode, reused
	rec     []byte
}

type mtrPage struct {
	pg      *Page
	before  *[]byte // snapshot (nil: fresh, or no log)
	fresh   bool    // logged against a zero page
	changed bool    // a Release said dirty
	holds   int     // Latches not yet Released
	unpins  int     // pins handed to the mtr by Releases
}

var mtrFree = sync.Pool{New: func() any { return &Mtr{} }}

// BeginMtr starts a mini-transaction charging m.
func (p *Pool) BeginMtr(m *Meter) *Mtr {
	if p.log != nil {
		// Keeps the log buffer bounded. An mtr begun while the caller holds
		// latches (a nested one) may pay this pebble write under them: a
		// latency, not a deadlock, since the log takes no latch. A failed
		// write keeps the records buffered; the next Flush or SyncTo
		// reports the error.
		_ = p.log.MaybeWrite()
	}
	mt := mtrFree.Get().(*Mtr)
	mt.pool = p
	mt.m = m
	return mt
}

// Meter returns the meter the mtr charges.
func (mt *Mtr) Meter() *Meter { return mt.m }

// Pool returns the pool the mtr works on.
func (mt *Mtr) Pool() *Pool { return mt.pool }

func (mt *Mtr) find(pg *Page) int {
	for i := range mt.pages {
		if mt.pages[i].pg == pg {
			return i
		}
	}
	return -1
}

// Holds reports whether the mtr holds pg's exclusive latch.
func (mt *Mtr) Holds(pg *Page) bool { return mt.find(pg) >= 0 }

// Latch takes pg's exclusive latch for this mtr (pg pinned by the caller).
// If the mtr already holds it, the latch is not taken again; Latches nest,
// and each needs its Release.
func (mt *Mtr) Latch(pg *Page) {
	if i := mt.find(pg); i >= 0 {
		mt.pages[i].holds++
		return
	}
	pg.Latch()
	mt.adopt(pg, false)
}

// adopt registers pg, already exclusively latched by the caller.
func (mt *Mtr) adopt(pg *Page, fresh bool) {
	e := mtrPage{pg: pg, holds: 1, fresh: fresh}
	if !fresh && mt.pool.log != nil {
		bp := mt.pool.scratch.Get().(*[]byte)
		copy(*bp, pg.buf)
		e.before = bp
	}
	mt.pages = append(mt.pages, e)
}

// Fresh says pg (latched by this mtr) was formatted from nothing in this
// mtr: its record is a diff against a zero page, and redo starts it from
// zeros. AllocPage calls it.
func (mt *Mtr) Fresh(pg *Page) {
	i := mt.find(pg)
	if i < 0 {
		panic(fmt.Sprintf("cache: Fresh on page %s not latched by the mtr", pg.id))
	}
	e := &mt.pages[i]
	if e.before != nil {
		mt.pool.scratch.Put(e.before)
		e.before = nil
	}
	e.fresh = true
	e.changed = true
}

// Release gives pg back (and the pin the caller took for it): dirty says
// the caller changed it. A page the mtr never saw changed is unlatched and
// unpinned when its last Latch is released; a changed one keeps its latch
// and pins until Commit.
func (mt *Mtr) Release(pg *Page, dirty bool) {
	i := mt.find(pg)
	if i < 0 || mt.pages[i].holds == 0 {
		panic(fmt.Sprintf("cache: Release of page %s not latched by the mtr", pg.id))
	}
	e := &mt.pages[i]
	e.holds--
	e.unpins++
	if dirty {
		e.changed = true
	}
	if e.changed || e.holds > 0 {
		return
	}
	mt.drop(i)
}

// drop lets go of entry i, unchanged and no longer held: its latch and
// every pin handed to the mtr.
func (mt *Mtr) drop(i int) {
	e := mt.pages[i]
	if e.before != nil {
		mt.pool.scratch.Put(e.before)
	}
	mt.pages[i] = mt.pages[len(mt.pages)-1]
	mt.pages = mt.pages[:len(mt.pages)-1]
	e.pg.Unlatch()
	for range e.unpins {
		e.pg.Unpin(false)
	}
}

// RLatch takes pg's shared latch unless the mtr holds its exclusive one;
// then it counts as a nested Latch, so the page cannot leave the mtr
// before the matching RUnlatch.
func (mt *Mtr) RLatch(pg *Page) {
	if i := mt.find(pg); i >= 0 {
		mt.pages[i].holds++
		return
	}
	pg.RLatch()
}

// RUnlatch undoes RLatch. The caller's pin stays the caller's to drop.
func (mt *Mtr) RUnlatch(pg *Page) {
	i := mt.find(pg)
	if i < 0 {
		pg.RUnlatch()
		return
	}
	e := &mt.pages[i]
	e.holds--
	if e.changed || e.holds > 0 {
		return
	}
	mt.drop(i)
}

// Note appends b to the payload the mtr's record carries for the layer
// above (the engine's transaction records). The payload is atomic with the
// page changes: recovery sees both or neither.
func (mt *Mtr) Note(b []byte) { mt.note = append(mt.note, b...) }

// Commit writes the mtr's record (if it changed anything or carries a
// note), stamps each changed page with the record's LSN, and releases every
// latch and pin. It returns the LSN (0 when nothing was logged).
func (mt *Mtr) Commit() uint64 {
	p := mt.pool
	var lsn uint64
	nchanged := 0
	for i := range mt.pages {
		e := &mt.pages[i]
		if e.holds > 0 {
			panic(fmt.Sprintf("cache: mtr committed while page %s is still in use", e.pg.id))
		}
		if e.changed {
			nchanged++
			// Dirty before the LSN exists: a checkpoint that reads the log
			// end after this record must find the page dirty (see
			// engine.DB.Checkpoint).
			e.pg.dirty.Store(true)
		}
	}
	if p.log != nil && (nchanged > 0 || len(mt.note) > 0) {
		mt.rec = mt.encode(mt.rec[:0])
		var c *redo.Counts
		if mt.m != nil {
			c = &mt.m.Counts
		}
		lsn = p.log.Append(c, mt.rec, (*mtrStamper)(mt))
	}
	for i := range mt.pages {
		e := &mt.pages[i]
		if e.changed && lsn != 0 {
			p.noteLSN(e.pg.id, lsn)
		}
		if e.before != nil {
			p.scratch.Put(e.before)
		}
		e.pg.Unlatch()
		for j := 0; j < e.unpins; j++ {
			e.pg.Unpin(e.changed)
		}
		*e = mtrPage{}
	}
	mt.pages = mt.pages[:0]
	mt.note = mt.note[:0]
	mt.m = nil
	mt.pool = nil
	if cap(mt.rec) > 1<<20 {
		mt.rec = nil
	}
	mtrFree.Put(mt)
	return lsn
}

// mtrStamper stamps the LSN of the mtr's record on every page it changed,
// under the log's mutex (redo.Stamper), so that page LSNs and record order
// agree. A named pointer type rather than a closure: passed through the
// RedoLog interface, a closure would be allocated on every commit.
type mtrStamper Mtr

func (s *mtrStamper) Stamp(lsn uint64) {
	for i := range s.pages {
		if e := &s.pages[i]; e.changed {
			page.SetLSN(e.pg.buf, lsn)
			s.pool.dirtied(e.pg, lsn) // the flush list, in LSN order (flushlist.go)
		}
	}
}

// encode appends the mtr's record to dst: every changed page against its
// snapshot (or zeros, when fresh), and the note.
func (mt *Mtr) encode(dst []byte) []byte {
	mt.changes = mt.changes[:0]
	for i := range mt.pages {
		e := &mt.pages[i]
		if !e.changed {
			continue
		}
		c := redo.Change{ID: e.pg.id, After: e.pg.buf}
		if !e.fresh {
			c.Before = *e.before
		}
		mt.changes = append(mt.changes, c)
	}
	dst = redo.Encode(dst, mt.changes, mt.note)
	clear(mt.changes) // the frames' bytes are not the free list's
	return dst
}

// Redo applies one page's change from the record at lsn (redo.Decode,
// redo.PageRedo.Apply) to the page in the pool, unless the page already
// carries lsn or a newer one. It reports whether it changed the
// page. A fresh page that the store never saw is created.
func (p *Pool) Redo(m *Meter, lsn uint64, pr *redo.PageRedo) (bool, error) {
	pg, err := p.Fetch(m, pr.ID)
	if errors.Is(err, store.ErrPageNotFound) {
		if !pr.Fresh {
			return false, fmt.Errorf("%w: record at LSN %d changes page %s, which the store does not have", redo.ErrCorruptLog, lsn, pr.ID)
		}
		pg, err = p.create(m, nil, pr.ID, page.KindFree)
		if err != nil {
			return false, err
		}
		pg.Unlatch()
	}
	if err != nil {
		return false, err
	}
	pg.Latch()
	if page.LSN(pg.buf) >= lsn {
		pg.Unlatch()
		pg.Unpin(false)
		return false, nil
	}
	if pr.Fresh {
		clear(pg.buf)
	}
	if err := pr.Apply(pg.buf); err != nil {
		// The frame now holds a half-applied page; recovery stops here
		// and the pool is abandoned with the database that failed to
		// open.
		pg.Unlatch()
		pg.Unpin(false)
		return false, err
	}
	page.SetLSN(pg.buf, lsn)
	k := page.KindOf(pg.buf)
	p.mu.Lock()
	pg.kind = k
	p.mu.Unlock()
	pg.dirty.Store(true)
	pg.Unlatch()
	pg.Unpin(true)
	p.noteLSN(pr.ID, lsn)
	return true, nil
}
