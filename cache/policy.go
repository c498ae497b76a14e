package cache

import (
	"sync/atomic"
	"time"
)

// replacer decides which unpinned frame to evict. It is called with the
// pool's lock held and never blocks.
type replacer interface {
	// insert adds a frame that was just filled with a page.
	insert(f *Page, now time.Time)
	// access records a hit on a resident frame. It reads the clock only if
	// its decision depends on the time (a hot path: most hits do not),
	// and not even then when aged is true: the caller has already seen
	// the page's age reach the policy's threshold (quiet's aged), which,
	// the clock being monotonic and a pinned page's load time fixed,
	// stays true.
	access(f *Page, clock Clock, aged bool)
	// quiet reports that access(f, clock, false) would change nothing.
	// Unlike the other methods it is called without the pool's lock, on
	// a pinned frame, so it reads only what is safe to read so (atomics,
	// and what does not change while the frame holds its page); a stale
	// answer costs an access under the lock, or a hit that does not move
	// a page another hit just moved. aged says it read the clock and
	// found the page's age at or past the threshold, for access.
	quiet(f *Page, clock Clock) (q, aged bool)
	// remove drops a frame (its page was evicted or dropped).
	remove(f *Page)
	// victim returns the least valuable frame for which ok is true, or nil.
	victim(ok func(*Page) bool) *Page
	// tail calls fn on up to n frames in eviction order, least valuable
	// first, until fn returns false (the page cleaner's LRU scan).
	tail(n int, fn func(*Page) bool)
	// makeOld moves a resident frame to the end of eviction order, the
	// next to go, without removing it from the pool (InnoDB 5.1's
	// buf_LRU_make_block_old: an LRU batch's page once written).
	makeOld(f *Page)
	// recentLimit is InnoDB 5.1's buf_LRU_get_recent_limit: a page is
	// recent (random read-ahead counts it) if its lruPos is above it.
	// Each policy stamps a page's lruPos with a clock that ticks each
	// time a page goes to the head of its list, as InnoDB's LRU_position
	// (buf_pool_clock_tic); the limit is the head's stamp less an eighth
	// of the list's length (BUF_LRU_INITIAL_RATIO), in unsigned
	// arithmetic as InnoDB's, or 0 (every page recent) while the list is
	// shorter than BUF_LRU_OLD_MIN_LEN (80).
	recentLimit() uint64
}

// The LRU list's constants of InnoDB 5.1 (buf0lru.h, buf0lru.c).
const (
	lruOldMinLen    = 80 // BUF_LRU_OLD_MIN_LEN
	lruInitialRatio = 8  // BUF_LRU_INITIAL_RATIO
)

// recentLimitOf computes recentLimit for a list of n pages whose head
// carries the stamp head.
func recentLimitOf(n int, head *Page) uint64 {
	if n < lruOldMinLen || head == nil {
		return 0
	}
	return head.lruPos - uint64(n/lruInitialRatio)
}

// frameList is an intrusive doubly linked list of frames, head first. A
// frame is on at most one list; f.list says which.
type frameList struct {
	head, tail *Page
	n          int
	// size mirrors n for readers without the pool's lock
	// (midpoint.quiet).
	size atomic.Int64
}

func (l *frameList) pushFront(f *Page) {
	f.list, f.prev, f.next = l, nil, l.head
	if l.head != nil {
		l.head.prev = f
	} else {
		l.tail = f
	}
	l.head = f
	l.n++
	l.size.Store(int64(l.n))
}

func (l *frameList) pushBack(f *Page) {
	f.list, f.prev, f.next = l, l.tail, nil
	if l.tail != nil {
		l.tail.next = f
	} else {
		l.head = f
	}
	l.tail = f
	l.n++
	l.size.Store(int64(l.n))
}

func (l *frameList) remove(f *Page) {
	if f.prev != nil {
		f.prev.next = f.next
	} else {
		l.head = f.next
	}
	if f.next != nil {
		f.next.prev = f.prev
	} else {
		l.tail = f.prev
	}
	f.list, f.prev, f.next = nil, nil, nil
	l.n--
	l.size.Store(int64(l.n))
}

// victimFromTail walks l from its least recently used end.
func (l *frameList) victimFromTail(ok func(*Page) bool) *Page {
	for f := l.tail; f != nil; f = f.prev {
		if ok(f) {
			return f
		}
	}
	return nil
}

// walkTail calls fn on up to n frames of l from its tail; it returns how
// many frames are left of n, or -1 if fn asked to stop.
func (l *frameList) walkTail(n int, fn func(*Page) bool) int {
	for f := l.tail; f != nil && n > 0; f = f.prev {
		if !fn(f) {
			return -1
		}
		n--
	}
	return n
}

// lru is plain least-recently-used: every hit moves a page to the head, the
// victim is the unpinned page nearest the tail.
type lru struct {
	l     frameList
	clock uint64 // lruPos stamps
}

func (r *lru) insert(f *Page, _ time.Time) {
	r.clock++
	f.lruPos = r.clock
	r.l.pushFront(f)
}
func (r *lru) access(f *Page, _ Clock, _ bool) {
	if r.l.head != f {
		r.l.remove(f)
		r.clock++
		f.lruPos = r.clock
		r.l.pushFront(f)
	}
}

// quiet: plain LRU moves every page it finds away from the head, and
// which page is at the head changes under the lock, so a hit takes it.
func (r *lru) quiet(*Page, Clock) (bool, bool)  { return false, false }
func (r *lru) recentLimit() uint64              { return recentLimitOf(r.l.n, r.l.head) }
func (r *lru) remove(f *Page)                   { r.l.remove(f) }
func (r *lru) victim(ok func(*Page) bool) *Page { return r.l.victimFromTail(ok) }
func (r *lru) tail(n int, fn func(*Page) bool)  { r.l.walkTail(n, fn) }

// makeOld takes the stamp of the page it goes behind, as
// buf_LRU_add_block_to_end_low gives a block its last block's
// LRU_position.
func (r *lru) makeOld(f *Page) {
	if r.l.tail == f {
		return
	}
	r.l.remove(f)
	f.lruPos = r.l.tail.lruPos
	r.l.pushBack(f)
}

// midpoint is InnoDB's midpoint-insertion LRU. The list is split into a
// young sublist (head) and an old sublist (tail) holding oldPct percent of
// the resident pages. A page read in enters at the head of the old sublist,
// so a scan that touches each page once flushes only the old sublist. A page
// in the old sublist is made young (moved to the head of the young sublist)
// only when it is touched again at least oldTime after it was read in,
// which keeps a scan's repeated touches of one page from promoting it.
// Victims come from the tail of the old sublist, then of the young one.
//
// Like InnoDB (buf_page_peek_if_too_old), a touch of a young page moves it
// to the head only if it may be drifting toward the old sublist: if more
// pages than a quarter of the young sublist left the pool since it last
// moved. A pool that holds its whole working set then never reorders on a
// hit, which keeps hits from dirtying three frames' cache lines each.
//
// That is the default rule (PromoteOldBlocksTime), InnoDB's since the
// plugin with innodb_old_blocks_time above 0 (MySQL 5.6's default, 1 s).
// Older releases read no clock: they count the pages that left the pool
// (buf_pool->freed_page_clock, here removed) since a page entered the list
// or was last made young (block->freed_page_clock, here youngAt, set at
// insert under these rules), and make any page, old or young, young at a
// touch once that count is large enough (Promotion):
//   - Promote51, MySQL 5.1's built-in InnoDB (buf_block_make_young):
//     at least 1 + frames/1024 (freed51);
//   - PromotePlugin, the InnoDB plugin's with innodb_old_blocks_time 0
//     (its default until MySQL 5.6.6; buf_page_peek_if_too_old): more
//     than a quarter of the young sublist (youngRecent).
type midpoint struct {
	young, old frameList
	oldPct     int
	oldTime    time.Duration
	rule       Promotion
	freed51    uint64 // Promote51's count: 1 + frames/1024
	// removed counts the pages removed from the list so far; written
	// under the pool's lock, read by quiet without it.
	removed atomic.Uint64
	clock   uint64 // lruPos stamps
}

// insert puts a page read in at the head of the old sublist. Its lruPos
// is, as InnoDB's buf_LRU_add_block_low gives a block inserted at
// LRU_old, its neighbour's (the old sublist's head, or the young
// sublist's tail), or a new tick while the list is shorter than
// BUF_LRU_OLD_MIN_LEN (InnoDB puts a block at the head then).
func (r *midpoint) insert(f *Page, now time.Time) {
	f.loadedAt = now
	if r.rule != PromoteOldBlocksTime {
		f.youngAt.Store(r.removed.Load()) // buf_LRU_add_block_low: block->freed_page_clock
	}
	switch {
	case r.young.n+r.old.n < lruOldMinLen:
		r.clock++
		f.lruPos = r.clock
	case r.old.head != nil:
		f.lruPos = r.old.head.lruPos
	case r.young.tail != nil:
		f.lruPos = r.young.tail.lruPos
	default:
		r.clock++
		f.lruPos = r.clock
	}
	r.old.pushFront(f)
	f.old.Store(true)
	r.balance()
}

func (r *midpoint) recentLimit() uint64 {
	head := r.young.head
	if head == nil {
		head = r.old.head
	}
	return recentLimitOf(r.young.n+r.old.n, head)
}

func (r *midpoint) access(f *Page, clock Clock, aged bool) {
	switch f.list {
	case &r.old:
		if r.rule != PromoteOldBlocksTime {
			if r.recentMove(f) {
				return
			}
		} else if !aged && since(clock, f.loadedAt) < r.oldTime {
			return
		}
		r.old.remove(f)
		f.old.Store(false)
		r.clock++
		f.lruPos = r.clock
		r.young.pushFront(f)
		f.youngAt.Store(r.removed.Load())
		r.balance()
	case &r.young:
		if r.recentMove(f) {
			return
		}
		r.young.remove(f)
		r.clock++
		f.lruPos = r.clock
		r.young.pushFront(f)
		f.youngAt.Store(r.removed.Load())
	}
}

// youngRecent is buf_page_peek_if_young: fewer pages than a quarter of
// the young sublist left the pool since f was last made young.
func (r *midpoint) youngRecent(f *Page) bool {
	return r.removed.Load()-f.youngAt.Load() <= uint64(r.young.size.Load()/4)
}

// recentMove reports whether a touch leaves f where it is by the freed-
// page count: under Promote51 fewer than freed51 pages left the pool
// since f entered the list or was last made young
// (!buf_block_peek_if_too_old), otherwise youngRecent. Under
// PromoteOldBlocksTime only young pages are judged this way.
func (r *midpoint) recentMove(f *Page) bool {
	if r.rule == Promote51 {
		return r.removed.Load()-f.youngAt.Load() < r.freed51
	}
	return r.youngRecent(f)
}

// quiet is access's decision without its moves: a page on the old
// sublist read in less than oldTime ago, or a young page that is recent
// (under a freed-page rule, any page that is recent).
func (r *midpoint) quiet(f *Page, clock Clock) (q, aged bool) {
	if r.rule != PromoteOldBlocksTime {
		return r.recentMove(f), false
	}
	if f.old.Load() {
		q = since(clock, f.loadedAt) < r.oldTime
		return q, !q
	}
	return r.recentMove(f), false
}

// since is clock.Now().Sub(t). On the real clock it reads the monotonic
// clock alone (time.Since), which is what Sub would use of a time.Now
// anyway, t having come from one: it is the same duration at about half
// the cost of reading the wall clock too, and a hit on an old page reads
// it.
func since(clock Clock, t time.Time) time.Duration {
	if _, ok := clock.(RealClock); ok {
		return time.Since(t)
	}
	return clock.Now().Sub(t)
}

// remove does not rebalance: an eviction is followed by an insert at the
// midpoint, and rebalancing in between would push the new page into the
// young sublist.
func (r *midpoint) remove(f *Page) {
	f.list.remove(f)
	f.old.Store(false)
	r.removed.Add(1)
}

// balance moves the midpoint so that the old sublist holds oldPct percent
// of the resident pages (rounded down).
func (r *midpoint) balance() {
	target := (r.young.n + r.old.n) * r.oldPct / 100
	for r.old.n < target && r.young.n > 0 {
		f := r.young.tail
		r.young.remove(f)
		r.old.pushFront(f)
		f.old.Store(true)
	}
	for r.old.n > target && r.old.n > 0 {
		f := r.old.head
		r.old.remove(f)
		r.young.pushBack(f)
		f.old.Store(false)
	}
}

func (r *midpoint) tail(n int, fn func(*Page) bool) {
	if n = r.old.walkTail(n, fn); n > 0 {
		r.young.walkTail(n, fn)
	}
}

// makeOld puts f at the old sublist's end (buf_LRU_add_block_to_end_low:
// the block is old, with its last block's LRU_position) and moves the
// midpoint back to its share.
func (r *midpoint) makeOld(f *Page) {
	if r.old.tail == f {
		return
	}
	f.list.remove(f)
	switch {
	case r.old.tail != nil:
		f.lruPos = r.old.tail.lruPos
	case r.young.tail != nil:
		f.lruPos = r.young.tail.lruPos
	}
	r.old.pushBack(f)
	f.old.Store(true)
	r.balance()
}

func (r *midpoint) victim(ok func(*Page) bool) *Page {
	if f := r.old.victimFromTail(ok); f != nil {
		return f
	}
	return r.young.victimFromTail(ok)
}
