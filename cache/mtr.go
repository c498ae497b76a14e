package cache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/cache/store"
)

// A mini-transaction (Mtr) is the unit of page change: every change to a
// page's bytes happens inside one, and it reaches the redo log as one record
// holding every operation it did (a B+tree split, its new sibling, the
// parent's new separator and the space's meta page are one record, so
// recovery replays the split whole or not at all).
//
// The protocol, as InnoDB's mtr:
//
//	mt := pool.BeginMtr(m)
//	pg, _ := pool.Fetch(m, id)
//	mt.Latch(pg)            // exclusive latch
//	... change pg.Data(), and log each change: mt.Write(pg, off, b),
//	    or mt.Log(pg, kind, payload) for a layer's own operation ...
//	mt.Release(pg, true)    // the caller is done with pg; a changed page
//	                        // stays latched until Commit
//	lsn := mt.Commit()      // one log record; every page gets its LSN;
//	                        // latches and pins are released
//
// A page released unchanged (dirty false) is unlatched and unpinned at once,
// so latch coupling works inside an mtr as it does outside. A changed page
// keeps its exclusive latch until Commit, so nobody sees (and no write-out
// copies) a change before its log record exists and the page carries its
// LSN.
//
// What goes in the record is what the code that changed the page says it
// did, operation by operation (redo.Builder): the pool's own page writes
// (Write, Memset, Memmove, Fresh), and the layers' own operations (a
// B+tree leaf insert, a heap row delete), each registered with
// redo.Register and replayed by the same code that did it. Nothing copies or
// compares a page on this path. The cost is that a change nobody logs is
// lost at a crash: VerifyRedo (a testing aid, on in this module's tests)
// checks at every Commit that the record, replayed on copies of the pages
// taken at Latch, rebuilds them byte for byte.
//
// Latching a page the mtr already holds (because it changed it earlier) does
// not latch again: the mtr owns the exclusive latch. RLatch and RUnlatch do
// the same for shared latches, so a code path may re-read a page it changed.
//
// Without a log (Wiring.Log nil: structure tests), an mtr writes no record
// (it builds one only for VerifyRedo to check); it still holds changed
// pages until Commit.
//
// An Mtr is used by one goroutine and must be committed; after Commit it
// returns to a free list and must not be used again.
type Mtr struct {
	pool    *Pool
	m       *Meter
	pages   []mtrPage
	rec     redo.Builder
	payload []byte // Payload's scratch
	notes   int
	verify  bool
}

type mtrPage struct {
	pg      *Page
	before  *[]byte // VerifyRedo's snapshot (nil: fresh, or not verifying)
	changed bool    // a Release said dirty, or an operation was logged
	fresh   bool    // formatted from nothing in this mtr (Fresh)
	holds   int     // Latches not yet Released
	unpins  int     // pins handed to the mtr by Releases
}

var mtrFree = sync.Pool{New: func() any { return &Mtr{} }}

var verifyRedo atomic.Bool

// VerifyRedo turns on (or off) a check of every mini-transaction's record,
// for tests. InnoDB's debug builds note each page an mtr logs a change to
// in the mtr's memo (MTR_MEMO_MODIFY) and assert that the mtr holds its
// latch; this checks the record itself. Each latched page is copied at
// Latch, and Commit replays the record's operations on the copies and
// panics unless they rebuild every changed page byte for byte (apart from
// the checksum and the LSN); a page released unchanged (Release with dirty
// false, the last RUnlatch) must be byte for byte its copy. So a code
// path that changes a page without logging what it did, or logs something
// else, is caught the first time a test runs it, at the mtr that did it.
// Pools without a log are checked too: their mtrs build the record for
// the check and write it nowhere. It costs a page copy per latch and a
// replay per commit; it is off unless a test turns it on (this module's
// cache tests do, in TestMain). An mtr reads the setting at BeginMtr.
func VerifyRedo(on bool) {
	verifyRedo.Store(on)
	verifyEvery.Store(1)
}

var (
	verifyEvery atomic.Int64 // check one mtr in this many (VerifyRedoInTests)
	verifySeq   atomic.Int64
)

// VerifyRedoInTests turns VerifyRedo on for a package's tests: every
// mini-transaction is checked, except in a race build, where one in four
// is (the race detector makes the check's page copies and replays a third
// of a B+tree test's time; the tests without -race check every one). Which
// ones are checked does not change what the code does.
func VerifyRedoInTests() {
	verifyRedo.Store(true)
	if raceEnabled {
		verifyEvery.Store(4)
	} else {
		verifyEvery.Store(1)
	}
}

// BeginMtr starts a mini-transaction charging m.
func (p *Pool) BeginMtr(m *Meter) *Mtr {
	if p.log != nil {
		// Keeps the log buffer bounded. An mtr begun while the caller holds
		// latches (a nested one) may pay this write under them: a
		// latency, not a deadlock, since the log takes no latch. A failed
		// write keeps the records buffered; the next Flush or SyncTo
		// reports the error.
		_ = p.log.MaybeWrite()
	}
	mt := mtrFree.Get().(*Mtr)
	mt.pool = p
	mt.m = m
	mt.verify = verifyRedo.Load() && (verifyEvery.Load() <= 1 || verifySeq.Add(1)%verifyEvery.Load() == 0)
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
	e := mtrPage{pg: pg, holds: 1}
	if !fresh && mt.verify {
		bp := mt.pool.scratch.Get().(*[]byte)
		copy(*bp, pg.buf)
		e.before = bp
	}
	mt.pages = append(mt.pages, e)
}

func (mt *Mtr) entry(pg *Page, what string) *mtrPage {
	i := mt.find(pg)
	if i < 0 {
		panic(fmt.Sprintf("cache: %s on page %s not latched by the mtr", what, pg.id))
	}
	return &mt.pages[i]
}

// Fresh says pg (latched by this mtr) was formatted from nothing in this
// mtr (page.Init, with the kind its header now has): it logs a
// redo.KindInit operation, so that redo rebuilds the page from zeros
// whatever it held. AllocPage and FreePage call it.
func (mt *Mtr) Fresh(pg *Page) {
	mt.entry(pg, "Fresh").fresh = true
	mt.Log(pg, redo.KindInit, []byte{byte(page.KindOf(pg.buf))})
}

// Log records that the caller did one operation of kind k to pg (latched
// by this mtr), described by payload (copied; see Payload for a scratch
// buffer). The page counts as changed. The caller has already changed the
// page, and redo of the operation (the kind's redo.ApplyFunc) must change
// it the same way.
func (mt *Mtr) Log(pg *Page, k redo.Kind, payload []byte) {
	e := mt.entry(pg, "Log")
	e.changed = true
	if mt.Logging() {
		mt.rec.Op(pg.id, k, payload)
	}
	if cap(payload) > cap(mt.payload) && cap(payload) <= 1<<16 {
		mt.payload = payload[:0] // a Payload that grew: keep it
	}
}

// Payload returns an empty scratch buffer for building the payload of the
// next Log call (valid until that call).
func (mt *Mtr) Payload() []byte { return mt.payload[:0] }

// Logging reports whether the mtr builds a record (the pool has a log, or
// VerifyRedo checks the mtr): callers may skip building payloads when it
// does not.
func (mt *Mtr) Logging() bool { return mt.pool.log != nil || mt.verify }

// Write copies b into pg at off and logs it (redo.KindWrite).
func (mt *Mtr) Write(pg *Page, off int, b []byte) {
	copy(pg.buf[off:off+len(b)], b)
	if !mt.Logging() {
		mt.entry(pg, "Write").changed = true
		return
	}
	p := binary.AppendUvarint(mt.Payload(), uint64(off))
	mt.Log(pg, redo.KindWrite, append(p, b...))
}

// Write32 writes v little-endian into pg at off and logs it.
func (mt *Mtr) Write32(pg *Page, off int, v uint32) {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	mt.Write(pg, off, b[:])
}

// Memset fills n bytes of pg at off with c and logs it
// (redo.KindMemset).
func (mt *Mtr) Memset(pg *Page, off, n int, c byte) {
	s := pg.buf[off : off+n]
	for i := range s {
		s[i] = c
	}
	p := binary.AppendUvarint(mt.Payload(), uint64(off))
	p = binary.AppendUvarint(p, uint64(n))
	mt.Log(pg, redo.KindMemset, append(p, c))
}

// Memmove moves n bytes of pg from src to dst (they may overlap) and logs
// it (redo.KindMemmove).
func (mt *Mtr) Memmove(pg *Page, dst, src, n int) {
	copy(pg.buf[dst:dst+n], pg.buf[src:src+n])
	p := binary.AppendUvarint(mt.Payload(), uint64(dst))
	p = binary.AppendUvarint(p, uint64(src))
	mt.Log(pg, redo.KindMemmove, binary.AppendUvarint(p, uint64(n)))
}

// SetKind changes the kind of pg (latched by this mtr), a page that stays
// in use (a B+tree root that becomes an inner node), and logs it.
func (mt *Mtr) SetKind(pg *Page, k page.Kind) {
	pg.SetKind(k)
	mt.Write(pg, page.KindOffset, []byte{byte(k)})
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
// every pin handed to the mtr. Under VerifyRedo the page must be as it was
// at Latch: a change released as clean would be neither logged nor
// written out.
func (mt *Mtr) drop(i int) {
	e := mt.pages[i]
	if e.before != nil {
		if !samePage(*e.before, e.pg.buf) {
			panic(fmt.Sprintf("cache: VerifyRedo: page %s (%s) was changed but released as unchanged (at byte %d)",
				e.pg.id, page.KindOf(e.pg.buf), firstDiff(*e.before, e.pg.buf)))
		}
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
func (mt *Mtr) Note(b []byte) {
	if mt.pool.log != nil {
		mt.rec.Note(b)
	}
	mt.notes++
}

// Commit writes the mtr's record (if it changed anything or carries a
// note), stamps each changed page with the record's LSN, and releases every
// latch and pin. It returns the LSN (0 when nothing was logged).
func (mt *Mtr) Commit() uint64 {
	p := mt.pool
	var lsn uint64
	for i := range mt.pages {
		e := &mt.pages[i]
		if e.holds > 0 {
			panic(fmt.Sprintf("cache: mtr committed while page %s is still in use", e.pg.id))
		}
		if e.changed {
			// Dirty before the LSN exists: a checkpoint that reads the log
			// end after this record must find the page dirty (see
			// engine.DB.Checkpoint).
			e.pg.dirty.Store(true)
		}
	}
	if p.log != nil && mt.rec.Len() > 0 && p.opts.TornPages == TornPagesFullPageWrites {
		mt.fullPageImages()
	}
	if mt.verify {
		mt.check()
	}
	if p.log != nil && mt.rec.Len() > 0 {
		var c *redo.Counts
		if mt.m != nil {
			c = &mt.m.Counts
		}
		lsn = p.log.Append(c, mt.rec.Bytes(), (*mtrStamper)(mt))
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
	mt.rec.Reset()
	mt.notes = 0
	mt.m = nil
	mt.pool = nil
	mtrFree.Put(mt)
	return lsn
}

// fullPageImages adds a full-page image of every page the mtr changed
// whose LSN (before this record) is below the last checkpoint's redo
// LSN, as PostgreSQL's XLogInsert backs up a block the first time it
// changes after a checkpoint: redo after a crash then restores the image
// rather than trusting a page that may be torn. A page formatted in the
// mtr needs none (PostgreSQL's REGBUF_WILL_INIT).
func (mt *Mtr) fullPageImages() {
	h := mt.pool.fpiHorizon.Load()
	for i := range mt.pages {
		e := &mt.pages[i]
		if !e.changed || e.fresh || page.LSN(e.pg.buf) >= h {
			continue
		}
		img := e.pg.buf[page.ChecksumSize:]
		mt.rec.Op(e.pg.id, redo.KindPageImage, img)
		if mt.m != nil {
			mt.m.FullPageImages++
			mt.m.FullPageImageBytes += int64(len(img))
		}
	}
}

// check is VerifyRedo's: it replays the record on the snapshots taken at
// Latch (a zero page for a page adopted fresh) and panics unless every
// changed page comes out as it is now. It runs whether or not anything
// was logged: a page released dirty with no operation must be unchanged.
func (mt *Mtr) check() {
	pages, _, err := redo.Decode(mt.rec.Bytes(), nil)
	if err != nil {
		panic(fmt.Sprintf("cache: VerifyRedo: the mtr's own record does not decode: %v", err))
	}
	for i := range mt.pages {
		e := &mt.pages[i]
		var pr *redo.PageRedo
		for j := range pages {
			if pages[j].ID == e.pg.id {
				pr = &pages[j]
			}
		}
		if pr == nil {
			if e.before == nil {
				panic(fmt.Sprintf("cache: VerifyRedo: page %s (%s) was created in the mtr but no operation was logged for it", e.pg.id, page.KindOf(e.pg.buf)))
			}
			if !samePage(*e.before, e.pg.buf) {
				panic(fmt.Sprintf("cache: VerifyRedo: page %s (%s) was changed but no operation was logged for it (at byte %d)",
					e.pg.id, page.KindOf(e.pg.buf), firstDiff(*e.before, e.pg.buf)))
			}
			continue
		}
		got := make([]byte, len(e.pg.buf))
		if e.before != nil {
			copy(got, *e.before)
		} else if !pr.Fresh {
			panic(fmt.Sprintf("cache: VerifyRedo: page %s was adopted fresh but its first operation is %s", e.pg.id, pr.Ops[0].Kind))
		}
		if err := pr.Apply(got); err != nil {
			panic(fmt.Sprintf("cache: VerifyRedo: redo of page %s fails: %v", e.pg.id, err))
		}
		if !samePage(got, e.pg.buf) {
			off := firstDiff(got, e.pg.buf)
			var kinds []string
			for _, op := range pr.Ops {
				kinds = append(kinds, op.Kind.String())
			}
			panic(fmt.Sprintf("cache: VerifyRedo: redo of page %s (%s) by %v differs from the page at byte %d: redo %d, page %d",
				e.pg.id, page.KindOf(e.pg.buf), kinds, off, got[off], e.pg.buf[off]))
		}
	}
}

func inLSNOrSum(off int) bool {
	return off < page.ChecksumSize || (off >= page.LSNOffset && off < page.LSNOffset+8)
}

// firstDiff returns the first offset, outside the checksum and the LSN,
// where two page images differ (len(a) if none).
func firstDiff(a, b []byte) int {
	off := 0
	for off < len(a) && (a[off] == b[off] || inLSNOrSum(off)) {
		off++
	}
	return off
}

// samePage compares two page images apart from the checksum and the LSN.
func samePage(a, b []byte) bool {
	return bytes.Equal(a[page.ChecksumSize:page.LSNOffset], b[page.ChecksumSize:page.LSNOffset]) &&
		bytes.Equal(a[page.LSNOffset+8:], b[page.LSNOffset+8:])
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
	pg.kind.Store(uint32(k))
	p.mu.Unlock()
	pg.dirty.Store(true)
	pg.Unlatch()
	pg.Unpin(true)
	p.noteLSN(pr.ID, lsn)
	return true, nil
}
