package cache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"sync"

	"github.com/enginelab/enginelab/cache/page"
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
// LSN: the write-ahead rule then only needs the pool's FlushLog hook.
//
// What goes in the record is found by comparing each page with its snapshot
// (a copy taken at Latch): changed byte ranges, the way a physical diff
// does. That costs a page copy and a compare per latched page, but it needs
// no redo code per operation and cannot miss a change; the record sizes it
// produces are metered (LogBytes). A page created in the mtr (Fresh) is
// logged against a zero page: redo starts it from zeros.
//
// Latching a page the mtr already holds (because it changed it earlier) does
// not latch again: the mtr owns the exclusive latch. RLatch and RUnlatch do
// the same for shared latches, so a code path may re-read a page it changed.
//
// Without a log (Pool.AttachLog never called: structure tests), an mtr takes
// no snapshots and writes no records; it still holds changed pages until
// Commit.
//
// An Mtr is used by one goroutine and must be committed; after Commit it
// returns to a free list and must not be used again.
type Mtr struct {
	pool  *Pool
	m     *Meter
	pages []mtrPage
	note  []byte
	rec   []byte
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
			// Log.Checkpoint).
			e.pg.dirty.Store(true)
		}
	}
	if p.log != nil && (nchanged > 0 || len(mt.note) > 0) {
		mt.rec = mt.encode(mt.rec[:0], nchanged)
		lsn = p.log.append(mt.m, mt.rec, func(lsn uint64) {
			for i := range mt.pages {
				if e := &mt.pages[i]; e.changed {
					page.SetLSN(e.pg.buf, lsn)
				}
			}
		})
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

// Record body layout (all integers unsigned varints):
//
//	npages
//	  per page: space, page, flags (bit 0: fresh), nranges,
//	            per range: gap from the previous range's end, length, bytes
//	notelen, note bytes
//
// The page header's checksum and LSN are never in a range: redo sets the
// LSN from the record, and a write-out seals the checksum.
const (
	mtrFresh = 1

	diffBlock = 1024
	diffChunk = 64
	diffGap   = 16 // ranges closer than this are merged
)

var zeroPage [page.MaxSize]byte

func (mt *Mtr) encode(dst []byte, nchanged int) []byte {
	dst = binary.AppendUvarint(dst, uint64(nchanged))
	ps := mt.pool.pageSize
	for i := range mt.pages {
		e := &mt.pages[i]
		if !e.changed {
			continue
		}
		dst = binary.AppendUvarint(dst, uint64(e.pg.id.Space))
		dst = binary.AppendUvarint(dst, uint64(e.pg.id.Page))
		var flags byte
		before := zeroPage[:ps]
		if e.fresh {
			flags |= mtrFresh
		} else {
			before = *e.before
		}
		dst = append(dst, flags)
		dst = appendDiff(dst, before, e.pg.buf)
	}
	dst = binary.AppendUvarint(dst, uint64(len(mt.note)))
	return append(dst, mt.note...)
}

// appendDiff appends the ranges where after differs from before. It
// compares 64-byte chunks (memequal), and in a chunk that differs finds the
// first and last differing byte with word compares; the range covers both
// and whatever lies between (at most one chunk's bytes), and ranges closer
// than diffGap merge. The checksum and LSN fields never differ inside an
// mtr (the checksum is written on a write-out's copy, the LSN after the
// diff), except on a fresh page, where redo overwrites the LSN anyway.
func appendDiff(dst, before, after []byte) []byte {
	type rng struct{ off, end int }
	var stack [64]rng
	ranges := stack[:0]
	n := len(after)
	for c := 0; c < n; c += diffChunk {
		if c%diffBlock == 0 {
			// Most of a page is unchanged: skip whole blocks with one
			// compare before looking at chunks.
			if be := min(c+diffBlock, n); bytes.Equal(before[c:be], after[c:be]) {
				c = be - diffChunk
				continue
			}
		}
		ce := min(c+diffChunk, n)
		if bytes.Equal(before[c:ce], after[c:ce]) {
			continue
		}
		first, last := -1, -1
		for w := c; w+8 <= ce; w += 8 {
			if x := le64(before, w) ^ le64(after, w); x != 0 {
				first = w + bits.TrailingZeros64(x)/8
				break
			}
		}
		for w := ce - 8; w >= c; w -= 8 {
			if x := le64(before, w) ^ le64(after, w); x != 0 {
				last = w + 7 - bits.LeadingZeros64(x)/8
				break
			}
		}
		if first < 0 {
			continue // page sizes are multiples of 8: cannot happen
		}
		if k := len(ranges); k > 0 && first-ranges[k-1].end < diffGap {
			ranges[k-1].end = last + 1
		} else {
			ranges = append(ranges, rng{first, last + 1})
		}
	}
	dst = binary.AppendUvarint(dst, uint64(len(ranges)))
	prev := 0
	for _, r := range ranges {
		dst = binary.AppendUvarint(dst, uint64(r.off-prev))
		dst = binary.AppendUvarint(dst, uint64(r.end-r.off))
		dst = append(dst, after[r.off:r.end]...)
		prev = r.end
	}
	return dst
}

func le64(b []byte, off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }

// ErrCorruptLog means a redo record does not decode, or the stored log has
// a gap or a bad frame. It matches page.ErrCorrupt.
var ErrCorruptLog = page.NewCorruptKind("cache: corrupt redo log")

// PageRedo is one page's part of a decoded mtr record.
type PageRedo struct {
	ID     page.ID
	Fresh  bool
	ranges []byte // encoded ranges
}

// DecodeMtr splits an mtr record body into its page changes and its note.
// The slices alias body.
func DecodeMtr(body []byte, pages []PageRedo) ([]PageRedo, []byte, error) {
	r := reader{b: body}
	n := r.uvarint()
	pages = pages[:0]
	for i := uint64(0); i < n && r.err == nil; i++ {
		var pr PageRedo
		pr.ID.Space = uint32(r.uvarint())
		pr.ID.Page = uint32(r.uvarint())
		pr.Fresh = r.byte()&mtrFresh != 0
		start := r.off
		nr := r.uvarint()
		for j := uint64(0); j < nr && r.err == nil; j++ {
			r.uvarint()
			l := r.uvarint()
			r.skip(l)
		}
		pr.ranges = body[start:r.off]
		pages = append(pages, pr)
	}
	nl := r.uvarint()
	note := r.take(nl)
	if r.err != nil {
		return nil, nil, r.err
	}
	if r.off != len(body) {
		return nil, nil, fmt.Errorf("%w: %d bytes after the note", ErrCorruptLog, len(body)-r.off)
	}
	return pages, note, nil
}

// apply writes the ranges into buf.
func (pr *PageRedo) apply(buf []byte) error {
	r := reader{b: pr.ranges}
	nr := r.uvarint()
	pos := 0
	for j := uint64(0); j < nr && r.err == nil; j++ {
		pos += int(r.uvarint())
		l := int(r.uvarint())
		src := r.take(uint64(l))
		if r.err != nil {
			break
		}
		if pos < 0 || pos+l > len(buf) {
			return fmt.Errorf("%w: range %d+%d outside page %s", ErrCorruptLog, pos, l, pr.ID)
		}
		copy(buf[pos:], src)
		pos += l
	}
	return r.err
}

type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = fmt.Errorf("%w: record ends early at byte %d", ErrCorruptLog, r.off)
	}
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.fail()
		return 0
	}
	r.off += n
	return v
}

func (r *reader) byte() byte {
	if r.err != nil || r.off >= len(r.b) {
		r.fail()
		return 0
	}
	c := r.b[r.off]
	r.off++
	return c
}

func (r *reader) take(n uint64) []byte {
	if r.err != nil || n > uint64(len(r.b)-r.off) {
		r.fail()
		return nil
	}
	s := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return s
}

func (r *reader) skip(n uint64) { r.take(n) }

// Redo applies one page's change from the record at lsn, unless the page
// already carries lsn or a newer one. It reports whether it changed the
// page. A fresh page that the store never saw is created.
func (p *Pool) Redo(m *Meter, lsn uint64, pr *PageRedo) (bool, error) {
	pg, err := p.Fetch(m, pr.ID)
	if errors.Is(err, store.ErrPageNotFound) {
		if !pr.Fresh {
			return false, fmt.Errorf("%w: record at LSN %d changes page %s, which the store does not have", ErrCorruptLog, lsn, pr.ID)
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
	if err := pr.apply(pg.buf); err != nil {
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
