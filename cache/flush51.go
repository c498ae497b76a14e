package cache

import (
	"math"
	"sync"
	"time"

	"github.com/enginelab/enginelab/cache/page"
)

// MySQL 5.1's flushing (Options.Flushing Flushing51), as its built-in
// InnoDB did it: there is no page cleaner. Dirty pages are written by
//
//   - the master thread (srv_master_thread in srv0srv.c), once a second:
//     a flush-list batch of MasterFlushPages (100) when more than
//     MaxDirtyPagesPct (innodb_max_dirty_pages_pct, 90) of the pool is
//     dirty, after which it does not sleep before its next round; and
//     every tenth round a batch of 100 pages if more than 70% is dirty or
//     10 if not, then a checkpoint (log_checkpoint). MasterStep runs it;
//   - the foreground thread that needs a frame (buf_LRU_get_free_block):
//     it takes a free one, or evicts a clean page from near the LRU's
//     end (buf_LRU_search_and_free_block), or else writes dirty pages
//     from the LRU's end itself (buf_flush_free_margin) and looks again.
//     After each page it reads it also makes sure enough frames near the
//     LRU's end are replaceable (buf_read_page → buf_flush_free_margin),
//     writing from the LRU's end if not. These writes are on the
//     caller's meter (LRUFlushBatches, LRUFlushPages), and each page
//     written goes to the LRU's end as its write completes
//     (buf_flush_write_complete, buf_LRU_make_block_old), the next to be
//     evicted;
//   - a transaction past the log's sync point (log_free_check, FlushUpTo),
//     as with the page cleaner.
//
// In exclusive tier mode the eviction's SET is the foreground caller's
// too; the master thread's writes evict nothing, so they never SET.
//
//	         pool dirty > 90%?           every 10th round
//	master ──── flush list: 100 ───┐     flush list: 100 (>70%) or 10
//	thread      (no sleep after)   │     then a checkpoint
//	            else sleep 1 s ◄───┘
//
//	miss ──► free frame? ─no─► clean page near the LRU end? ─no─►
//	         │yes              │yes                            write from the
//	         ▼                 ▼ evict (SET if exclusive)      LRU end, again
//	     read the page ──► replaceable frames at the LRU end < margin?
//	                                  └─yes─► write from the LRU end
//
// Every batch (the master's, an LRU batch, a flush for log space) also
// writes each page's dirty neighbours in its flush area
// (buf_flush_try_neighbors, neighbors51Locked), and a batch's pages at
// consecutive page numbers go out as one request, as 5.1's simulated AIO
// merges them (Meter.StoreWritesMerged): on a disk, a neighbour costs its
// transfer, not a seek.
//
// Not modelled: the master thread's flush of 100 pages every 10 seconds
// when fewer than 200 I/Os were done in them (an idle disk's: under load
// it does not fire), its background loop when the server is idle (it
// flushes 100 pages a round until the dirty share is below the limit),
// and the insert buffer merges. Purge, the master thread's full purge
// every tenth round, is the simulator's to schedule (sim/sched runs it in
// the master's tenth round); MasterStep does not purge, and in real mode
// purge keeps its own goroutine.

// FlushingPolicy selects who writes dirty pages in the background
// (Options.Flushing).
type FlushingPolicy string

// The flushing policies.
const (
	// FlushingCleaner (the default) is the page cleaner (cleaner.go).
	FlushingCleaner FlushingPolicy = "cleaner"
	// Flushing51 is MySQL 5.1's built-in InnoDB's (above): the master
	// thread and the foreground threads; CleanStep does nothing.
	Flushing51 FlushingPolicy = "5.1"
)

// The master thread's constants (srv0srv.c of MySQL 5.1).
const (
	// MasterFlushPages is the master thread's flush-list batch: the 100
	// of buf_flush_batch(BUF_FLUSH_LIST, 100, ut_dulint_max) in
	// srv_master_thread. 5.1's built-in InnoDB had no innodb_io_capacity
	// (the InnoDB plugin turned the 100 into PCT_IO(100) of it).
	MasterFlushPages = 100
	// MasterCheckpointFlushPages is the tenth round's batch when the
	// pool is at most MasterCheckpointDirtyPct dirty: 10 pages.
	MasterCheckpointFlushPages = 10
	// MasterCheckpointDirtyPct is the dirty share past which the tenth
	// round writes MasterFlushPages instead ("> 70 %").
	MasterCheckpointDirtyPct = 70
	// MasterRounds is how many one-second rounds make the master
	// thread's ten-second work (for i = 0; i < 10; i++).
	MasterRounds = 10
	// MasterInterval is the master thread's sleep between rounds
	// (os_thread_sleep(1000000)).
	MasterInterval = time.Second
)

// MasterPass is what one MasterStep did.
type MasterPass struct {
	Rounds      int // one-second rounds run
	Pages       int // pages written, from the flush list
	Checkpoints int // tenth rounds passed: the caller makes a checkpoint after each
	// Next is how long until the next round is due: MasterInterval after
	// a round that slept, 0 after one (not a tenth) that flushed for the
	// dirty share (srv_master_thread's skip_sleep: the next round starts
	// as soon as the batch's writes are done, which the caller knows and
	// the pool does not: it calls again then).
	Next time.Duration
}

// master is the master thread's state.
type master struct {
	mu        sync.Mutex // serialises MasterStep
	untilNext time.Duration
	rounds    int
}

// MasterStep advances MySQL 5.1's master thread by elapsed, the time (real
// or virtual) since the last call, and runs the rounds due in it, charging
// their writes to m, or to the pool's background meter if m is nil. A
// round is due MasterInterval after the last one, or at once after one
// that flushed for innodb_max_dirty_pages_pct; a call runs at most one
// such round, and ends with it: the rest of elapsed is taken to be the
// time its batch took (see MasterPass.Next). The first round is due one
// interval after the pool is made. It is deterministic: no goroutine, no
// timer (the owner drives it, as the simulator does CleanStep; with
// Wiring.Cleaner CleanerGoroutine and Flushing51 the pool drives it
// itself in real time). Without a log it writes nothing (there is no
// flush list). A failed write stops the round; the page stays dirty.
func (p *Pool) MasterStep(m *Meter, elapsed time.Duration) (MasterPass, error) {
	var local Meter
	mm := m
	if mm == nil {
		mm = &local
		defer p.ChargeBackground(&local)
	}
	ms := &p.master
	ms.mu.Lock()
	defer ms.mu.Unlock()
	var pass MasterPass
	left := max(elapsed, 0)
	for {
		if ms.untilNext > left {
			ms.untilNext -= left
			break
		}
		left -= ms.untilNext
		ms.rounds++
		pass.Rounds++
		mm.MasterRounds++
		skip := false
		if p.dirtyPct() > MaxDirtyPagesPct {
			n, err := p.flushListBatch(mm, MasterFlushPages)
			pass.Pages += n
			if err != nil {
				ms.untilNext = MasterInterval
				pass.Next = ms.untilNext
				return pass, err
			}
			skip = true
		}
		if ms.rounds%MasterRounds == 0 {
			want := MasterCheckpointFlushPages
			if p.dirtyPct() > MasterCheckpointDirtyPct {
				want = MasterFlushPages
			}
			n, err := p.flushListBatch(mm, want)
			pass.Pages += n
			pass.Checkpoints++
			mm.MasterCheckpoints++
			if err != nil {
				ms.untilNext = MasterInterval
				pass.Next = ms.untilNext
				return pass, err
			}
		}
		// A tenth round is the end of srv_master_thread's for loop:
		// after the ten-second work it goes back to loop:, which clears
		// skip_sleep, so the next round sleeps even after a max-dirty
		// batch.
		if skip && ms.rounds%MasterRounds != 0 {
			ms.untilNext = 0
			break
		}
		ms.untilNext = MasterInterval
	}
	pass.Next = ms.untilNext
	return pass, nil
}

// dirtyPct is buf_get_modified_ratio_pct: the flush list's length in
// percent of the pool, 100·dirty / (1 + LRU + free), in integers.
func (p *Pool) dirtyPct() int {
	p.fl.Lock()
	n := p.fl.n
	p.fl.Unlock()
	return 100 * n / (1 + len(p.frames))
}

// flushListBatch writes up to n pages from the flush list's oldest end
// (buf_flush_batch(BUF_FLUSH_LIST, n)), counted in MasterFlushListPages.
func (p *Pool) flushListBatch(m *Meter, n int) (int, error) {
	if p.log == nil {
		return 0, nil
	}
	ts := p.flushListTargets(nil, math.MaxUint64, math.MaxUint64, n)
	ts = p.neighbors51(ts, n, false)
	b := p.newBatcher(m)
	defer b.finish()
	for _, t := range ts {
		if err := b.add(t.f, t.id, false, &m.MasterFlushListPages); err != nil {
			return b.n, err
		}
	}
	err := b.flush()
	return b.n, err
}

// flushArea is MySQL 5.1's BUF_FLUSH_AREA for a pool of frames frames:
// the read-ahead area, at most a sixteenth of the pool.
func flushArea(frames int) uint32 { return max(1, min(ReadAheadArea(frames), uint32(frames/16))) }

// neighbors51 is neighbors51Locked taking the pool's lock.
func (p *Pool) neighbors51(ts []cleanTarget, limit int, lru bool) []cleanTarget {
	if p.opts.Flushing != Flushing51 {
		return ts
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.neighbors51Locked(ts, limit, lru)
}

// neighbors51Locked is MySQL 5.1's buf_flush_try_neighbors applied to a
// batch's targets, under Flushing51 (else it returns ts): each target
// brings, in page order, the dirty pages of its flush area (flushArea
// pages from a multiple of it, in its space) that are ready for a flush:
// not being written and unpinned, and in an LRU batch (lru) on the LRU
// list's old sublist ("we avoid flushing 'non-old' blocks in an LRU
// flush, because the flushed blocks are soon freed"; a policy without
// one flushes no neighbours in LRU batches). While fewer than 80 pages
// are resident (BUF_LRU_OLD_MIN_LEN) only the targets are written. The
// neighbours count towards the batch's limit, as buf_flush_batch counts
// them in its n: it stops after the area that reaches it. Written as one
// batch, the area's consecutive pages are one request each run
// (mergeCount). REQUIRES: p.mu held.
func (p *Pool) neighbors51Locked(ts []cleanTarget, limit int, lru bool) []cleanTarget {
	if p.opts.Flushing != Flushing51 || len(ts) == 0 || p.table.len() < lruOldMinLen {
		return ts
	}
	area := flushArea(len(p.frames))
	out := make([]cleanTarget, 0, len(ts))
	seen := make(map[page.ID]bool, len(ts))
	for _, t := range ts {
		if len(out) >= limit {
			break
		}
		low := t.id.Page / area * area
		for pg := low; pg < low+area; pg++ {
			id := page.ID{Space: t.id.Space, Page: pg}
			if seen[id] {
				continue
			}
			if id == t.id {
				seen[id] = true
				out = append(out, t)
				continue
			}
			f := p.table.get(id)
			if f == nil || !f.resident || f.busy || f.pinCount() != 0 || !f.dirty.Load() || (lru && !f.old.Load()) {
				continue
			}
			seen[id] = true
			out = append(out, cleanTarget{f: f, id: id, newest: f.newest.Load(), neighbor: true})
		}
	}
	return out
}

// The free margin's constants for an area of area pages (buf0flu.h,
// buf0lru.h of MySQL 5.1): buf_flush_free_margin tries to keep
// freeBlockMargin replaceable frames in the free list and at the LRU's
// end, writing up to freeBlockMargin + extraMargin of them when short,
// and looks freeSearchLen frames from the end.
func freeBlockMargin(area uint32) int           { return 5 + int(area) }                 // BUF_FLUSH_FREE_BLOCK_MARGIN
func extraMargin(area uint32) int               { return freeBlockMargin(area)/4 + 100 } // BUF_FLUSH_EXTRA_MARGIN
func freeSearchLen(area uint32) int             { return 5 + 2*int(area) }               // BUF_LRU_FREE_SEARCH_LEN
func lruSearchLimit(frames, iterations int) int { return 100 + iterations*frames/10 }    // buf_LRU_search_and_free_block

// freeMargin is buf_flush_free_margin: if fewer than the margin of
// frames are free or clean and unpinned among the freeSearchLen nearest
// the LRU's end (buf_flush_LRU_recommendation), write dirty unpinned
// pages from the LRU's end, up to the margin and its extra less those,
// in one LRU batch (buf_flush_batch(BUF_FLUSH_LRU)), charged to m. It
// returns the pages written.
func (p *Pool) freeMargin(m *Meter) (int, error) {
	if m == nil {
		m = &Meter{}
	}
	area := ReadAheadArea(len(p.frames))
	margin, extra := freeBlockMargin(area), extraMargin(area)
	p.mu.Lock()
	n := len(p.mu.free)
	p.repl.tail(freeSearchLen(area), func(f *Page) bool {
		if n >= margin+extra {
			return false
		}
		if evictable(f) && !f.dirty.Load() {
			n++ // buf_flush_ready_for_replace
		}
		return true
	})
	if n >= margin {
		p.mu.Unlock()
		return 0, nil
	}
	want := margin + extra - n
	var ts []cleanTarget
	p.repl.tail(len(p.frames), func(f *Page) bool {
		if evictable(f) && f.dirty.Load() { // buf_flush_ready_for_flush, LRU
			ts = append(ts, cleanTarget{f: f, id: f.id, newest: f.newest.Load()})
		}
		return len(ts) < want
	})
	ts = p.neighbors51Locked(ts, want, true)
	p.mu.Unlock()
	if len(ts) == 0 {
		return 0, nil
	}
	m.LRUFlushBatches++
	b := p.newBatcher(m)
	b.unpinnedOnly = true // a page pinned since it was chosen is given up
	defer b.finish()
	defer p.lruWritten(ts)
	for _, t := range ts {
		if err := b.add(t.f, t.id, false, &m.LRUFlushPages); err != nil {
			return b.n, err
		}
	}
	err := b.flush()
	return b.n, err
}

// lruWritten is buf_flush_write_complete for an LRU batch's pages: each
// page written goes to the LRU's end (buf_LRU_make_block_old), in the
// order the batch wrote them, so that the next frames evicted are the
// batch's (5.1 frees them at once, buf_LRU_try_free_flushed_blocks). Its
// neighbours from the old sublist go there too, where they would have
// been evicted later. A page the batch did not write (busy, failed,
// dirtied again meanwhile) or that has left the pool stays where it is.
func (p *Pool) lruWritten(ts []cleanTarget) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range ts {
		if f := t.f; f.resident && f.id == t.id && !f.dirty.Load() && f.list != nil {
			p.repl.makeOld(f)
		}
	}
}

// grabFrame51Locked is buf_LRU_get_free_block: a free frame, or a clean
// unpinned page from near the LRU's end evicted (the search reaches
// 100 + n·frames/10 frames on its nth try), or else an LRU batch of the
// caller's own (freeMargin) and another try. After ten tries it returns
// nil, and grabFrameLocked's own loop takes over (it writes the LRU's
// last unpinned page itself, or waits for one being written): InnoDB
// goes on trying, sleeping half a second between tries.
// REQUIRES: p.mu held; held again on return.
func (p *Pool) grabFrame51Locked(m *Meter) (*Page, error) {
	for try := 1; try <= 10; try++ {
		if n := len(p.mu.free); n > 0 {
			f := p.mu.free[n-1]
			p.mu.free = p.mu.free[:n-1]
			return f, nil
		}
		var v *Page
		p.repl.tail(lruSearchLimit(len(p.frames), try)+1, func(f *Page) bool {
			if evictable(f) && !f.dirty.Load() {
				v = f
				return false
			}
			return true
		})
		if v != nil {
			if f := p.evictLocked(m, v); f != nil {
				return f, nil
			}
			continue // a hit pinned it meanwhile: look again
		}
		p.mu.Unlock()
		_, err := p.freeMargin(m)
		p.mu.Lock()
		if err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// runMaster is the real-mode master thread (CleanerGoroutine with
// Flushing51): MasterStep with the time elapsed since its last call,
// again after each round's Next, until stopped.
func (p *Pool) runMaster(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	last := time.Now()
	next := MasterInterval
	for {
		if next > 0 {
			t := time.NewTimer(next)
			select {
			case <-stop:
				t.Stop()
				return
			case <-t.C:
			}
		} else {
			select {
			case <-stop:
				return
			default:
			}
		}
		now := time.Now()
		pass, _ := p.MasterStep(nil, now.Sub(last))
		last = now
		next = pass.Next
	}
}
