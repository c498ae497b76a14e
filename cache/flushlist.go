package cache

import (
	"sync"

	"github.com/enginelab/enginelab/cache/page"
)

// The flush list (InnoDB's buf_pool->flush_list) holds every page that a
// logged mini-transaction changed and that has not been written since,
// ordered by the LSN of its first change since it was last clean, its
// oldest modification:
//
//	head (newest)                                      tail (oldest)
//	+--------+     +--------+     +--------+     +--------+
//	| oldest |<--->| oldest |<--->| oldest |<--->| oldest |
//	|  950   |     |  700   |     |  410   |     |  120   |  --> checkpoint LSN
//	+--------+     +--------+     +--------+     +--------+      = min(log end, 120)
//	 flPrev: toward the head, flNext: toward the tail
//
// Invariants:
//   - sorted: oldest never increases from head to tail;
//   - complete: a page whose bytes hold a logged change that the store
//     does not have is on the list, with an oldest no greater than that
//     change's LSN; so every change below the tail's oldest (or below the
//     log end, if the list is empty) is in the store, or in a write that
//     has completed: the checkpoint LSN (CheckpointLSN);
//   - a page being written stays on the list until its write has
//     completed (written), so a checkpoint never counts a write in flight.
//
// Order comes from where pages go on: a mini-transaction's commit inserts
// its changed pages inside the log's Append, under the log's mutex
// (mtrStamper.Stamp calls dirtied), so pages enter in LSN order and a
// page only ever enters at the head. That is InnoDB's flush_order_mutex
// (log_sys->flush_order_mutex, MariaDB's log_sys.flush_order_mutex),
// taken before the log mutex is released so that flush-list insertion
// follows LSN order; here the log mutex itself plays its part, since an
// insertion is a few pointer writes.
type flushList struct {
	sync.Mutex
	head, tail *Page
	n          int
}

// dirtied records that f (exclusively latched by a mini-transaction) got
// the change logged at lsn. A clean page enters at the head with oldest
// lsn; a page already on the list keeps its place and oldest. Called under
// the log's mutex, so lsn is the largest LSN any page has.
//
// Only a page's first change since it was last clean takes the list's
// mutex, as InnoDB's buf_flush_note_modification takes the flush list
// mutex only when oldest_modification is 0: a page already on the list
// has its newest LSN stored and nothing else. The race that leaves is
// with written, which may be taking f off the list after a write of an
// image older than this change: this stores newest and then reads oldest,
// written stores oldest (0) and then reads newest, and Go's atomics are
// sequentially consistent, so at least one of the two sees the other's
// store: either written sees the new newest and keeps f on the list, or
// this sees oldest 0 and inserts f under the mutex.
func (p *Pool) dirtied(f *Page, lsn uint64) {
	f.newest.Store(lsn)
	if f.oldest.Load() != 0 {
		return
	}
	l := &p.fl
	l.Lock()
	if f.oldest.Load() == 0 {
		f.oldest.Store(lsn)
		l.insertLocked(f)
	}
	// Again under the mutex: written, finding no newer change, clears
	// newest after clearing oldest, and may have done so after the store
	// above (this then saw oldest 0 and came here); lsn is still the
	// newest change, since the log's mutex is held.
	f.newest.Store(lsn)
	l.Unlock()
}

// insertLocked puts f, whose oldest is set, in its sorted place: at the
// head in the common case (a mini-transaction's, the newest LSN).
func (l *flushList) insertLocked(f *Page) {
	c := l.head
	for c != nil && c.oldest.Load() > f.oldest.Load() {
		c = c.flNext
	}
	// f goes just before c (toward the head), or at the tail.
	var prev *Page
	if c != nil {
		prev = c.flPrev
		c.flPrev = f
	} else {
		prev = l.tail
		l.tail = f
	}
	f.flPrev, f.flNext = prev, c
	if prev != nil {
		prev.flNext = f
	} else {
		l.head = f
	}
	l.n++
}

// removeLocked takes f off the list and clears its oldest and newest.
func (l *flushList) removeLocked(f *Page) {
	l.unlinkLocked(f)
	f.newest.Store(0)
}

// unlinkLocked takes f off the list and clears its oldest (0: not on the
// list), leaving its newest as it is.
func (l *flushList) unlinkLocked(f *Page) {
	if f.flPrev != nil {
		f.flPrev.flNext = f.flNext
	} else {
		l.head = f.flNext
	}
	if f.flNext != nil {
		f.flNext.flPrev = f.flPrev
	} else {
		l.tail = f.flPrev
	}
	f.flPrev, f.flNext = nil, nil
	f.oldest.Store(0)
	l.n--
}

// written records that an image of f carrying lsn (its newest change at
// the copy) has reached the store. If no change came after the copy, f
// leaves the list. Otherwise the changes the image holds no longer count:
// the first change after the copy has an LSN above lsn, so oldest becomes
// lsn+1, and f moves toward the head to keep the list sorted.
func (l *flushList) written(f *Page, lsn uint64) {
	l.Lock()
	defer l.Unlock()
	switch {
	case f.oldest.Load() == 0:
		// Not on the list: no log, or a page recovery redid before
		// ListRecovered.
	case f.newest.Load() <= lsn:
		// Off the list, oldest stored before newest is read again: a
		// change that came meanwhile either saw oldest 0 and waits for
		// the mutex to insert f, or stored its newest before that read
		// and f goes back on here (dirtied).
		l.unlinkLocked(f)
		if n := f.newest.Load(); n > lsn {
			f.oldest.Store(lsn + 1)
			l.insertLocked(f)
		} else {
			f.newest.Store(0)
		}
	case f.oldest.Load() <= lsn:
		l.unlinkLocked(f)
		f.oldest.Store(lsn + 1)
		l.insertLocked(f)
	}
}

// drop takes f off the list if it is there (its page leaves the frame).
func (l *flushList) drop(f *Page) {
	l.Lock()
	if f.oldest.Load() != 0 {
		l.removeLocked(f)
	}
	l.Unlock()
}

// CheckpointLSN returns the LSN a fuzzy checkpoint may name as its redo
// start: the oldest modification at the flush list's tail, or the log end
// if nothing is dirty. Every logged change below it is in the store (its
// write has completed, though the store may not have synced it yet: the
// checkpoint syncs the store before it records the LSN). The log end is
// read first: a record appended after that read is above it, and one
// appended before it whose page is still dirty is on the list. Without a
// log it returns 0.
func (p *Pool) CheckpointLSN() uint64 {
	if p.log == nil {
		return 0
	}
	lsn := p.log.End()
	p.fl.Lock()
	if t := p.fl.tail; t != nil && t.oldest.Load() < lsn {
		lsn = t.oldest.Load()
	}
	p.fl.Unlock()
	return lsn
}

// FlushListLen returns the number of pages on the flush list.
func (p *Pool) FlushListLen() int {
	p.fl.Lock()
	defer p.fl.Unlock()
	return p.fl.n
}

// FlushListOldest returns the oldest modifications on the flush list, from
// the head (newest) to the tail, for tests and debugging.
func (p *Pool) FlushListOldest() []uint64 {
	p.fl.Lock()
	defer p.fl.Unlock()
	out := make([]uint64, 0, p.fl.n)
	for f := p.fl.head; f != nil; f = f.flNext {
		out = append(out, f.oldest.Load())
	}
	return out
}

// ListRecovered puts every dirty page that is not on the flush list on it
// with oldest from: recovery redoes records into pages without
// mini-transactions (Pool.Redo), and every record it redid is at or after
// from, its redo start. The engine calls it after redo and before any
// mini-transaction runs, so that the next fuzzy checkpoint cannot pass a
// recovered page that is not yet written.
func (p *Pool) ListRecovered(from uint64) {
	var dirty []*Page
	p.mu.Lock()
	for i := range p.frames {
		if f := &p.frames[i]; f.resident && f.dirty.Load() {
			dirty = append(dirty, f)
		}
	}
	p.mu.Unlock()
	for _, f := range dirty {
		f.latch.RLock()
		lsn := page.LSN(f.buf)
		f.latch.RUnlock()
		p.fl.Lock()
		if f.oldest.Load() == 0 {
			f.oldest.Store(from)
			f.newest.Store(lsn)
			p.fl.insertLocked(f)
		}
		p.fl.Unlock()
	}
}
