package cache

import (
	"math"
	"slices"
	"sync"
	"time"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
)

// The page cleaner writes dirty pages in the background, so that
// transactions rarely write one themselves. One pass (CleanStep) does what
// one iteration of InnoDB's page cleaner does (buf0flu.cc,
// buf_flush_page_cleaner_coordinator):
//
//  1. the LRU tail (buf_flush_LRU_list): the dirty, unpinned pages among
//     the frames nearest eviction (LRUScanDepth, less the free frames;
//     see lruScanLocked) are written, so that a
//     fetch that needs a frame finds a clean victim and evicts it without
//     a write of its own (Meter.DirtyWriteBacks). InnoDB also moves the
//     clean ones to its free list; here a clean victim costs an eviction
//     no more than a free frame does, so they stay where they are;
//  2. the flush list (buf_flush_do_batch on the flush list), from its
//     oldest end, as many pages as the adaptive flushing asks for
//     (FlushTarget): that moves the checkpoint LSN on.
//
// A pass writes only pages whose newest change is already durable in the
// log, so that it never waits for a log sync holding a frame: if it means
// to write others, it first makes the log durable to its end, one group
// sync, as InnoDB's page cleaner waits in log_write_up_to before a write.
// The real-mode goroutine always may; the simulator's actor may unless a
// terminal's sync is under way (a page skipped then is taken on a later
// pass). Its writes are charged to the pool's background meter
// (CleanerPasses, CleanerLRUPages, CleanerFlushListPages and the store
// writes), or to the meter CleanStep is given.
//
// Who runs the passes is the pool owner's choice (Wiring.Cleaner): a
// goroutine of the pool's, every CleanerInterval (real mode), or the owner
// itself (the simulator calls CleanStep at virtual-time intervals, so that
// nothing that decides a simulated result runs on a goroutine or a timer
// of its own).

// Flushing pressure, as fractions of the redo log's capacity
// (Wiring.LogCapacity), from InnoDB's log0log.cc (log_calc_max_ages) and
// buf0flu.cc. InnoDB takes its fractions of a margin a little below the
// capacity (less a reserve per thread and 10% "extra safety"); here they
// are of the capacity itself.
const (
	// AdaptiveFlushingLWM is the checkpoint age, in percent of the log
	// capacity, below which the redo log asks for no flushing
	// (innodb_adaptive_flushing_lwm, default 10).
	AdaptiveFlushingLWM = 10
	// MaxDirtyPagesPct is the dirty share of the pool, in percent, past
	// which the cleaner flushes a full IOCapacity for the pool's sake
	// when Options.MaxDirtyPagesPctLWM is 0
	// (innodb_max_dirty_pages_pct, default 90).
	MaxDirtyPagesPct = 90
)

// LogAsyncPoint is the checkpoint age past which flushing becomes urgent:
// 7/8 of the capacity (log_sys->max_modified_age_async, margin −
// margin/LOG_POOL_PREFLUSH_RATIO_ASYNC with the ratio 8). Past it the
// adaptive flushing asks for more than IOCapacityMax, and a transaction
// wakes the cleaner.
func LogAsyncPoint(capacity int64) uint64 { return uint64(capacity - capacity/8) }

// LogSyncPoint is the checkpoint age past which a transaction flushes
// itself before it goes on: 15/16 of the capacity
// (log_sys->max_modified_age_sync, LOG_POOL_PREFLUSH_RATIO_SYNC 16).
func LogSyncPoint(capacity int64) uint64 { return uint64(capacity - capacity/16) }

// LogCapacity returns Wiring.LogCapacity, default applied.
func (p *Pool) LogCapacity() int64 { return p.logCap }

// FlushTarget is how many pages the cleaner should write from the flush
// list in one second, InnoDB's adaptive flushing
// (page_cleaner_flush_pages_recommendation): the larger of two
// percentages of IOCapacity, capped at IOCapacityMax:
//
//   - for the redo log (af_get_pct_for_lsn): none below the low-water
//     mark (AdaptiveFlushingLWM of the capacity); above it, with
//     f = 100·age/LogAsyncPoint, (IOCapacityMax/IOCapacity)·f·√f/7.5, so
//     the rate grows as the age to the power 1.5 and reaches the cap well
//     before the async point;
//   - for the pool (af_get_pct_for_dirty): with
//     Options.MaxDirtyPagesPctLWM 0 (the default), 100% once the dirty
//     share d reaches MaxDirtyPagesPct and nothing below it; with a
//     low-water mark, d·100/(MaxDirtyPagesPct+1) once d reaches it.
//     Gradual flushing writes hot pages again and again as they are
//     dirtied anew: on a device slower than IOCapacity it takes the
//     reads' time (the io-bound experiment's 2009 disk does 79 I/Os a
//     second, below InnoDB's smallest io capacity).
//
// age is the log end less the oldest modification on the flush list.
// InnoDB also averages in the recent page and LSN rates
// (innodb_flushing_avg_loops); this does not.
func (p *Pool) FlushTarget() int {
	if p.log == nil {
		return 0
	}
	end := p.log.End()
	p.fl.Lock()
	var age uint64
	if t := p.fl.tail; t != nil && t.oldest < end {
		age = end - t.oldest
	}
	dirty := p.fl.n
	p.fl.Unlock()
	return flushTarget(&p.opts, p.logCap, age, dirty, len(p.frames))
}

func flushTarget(o *Options, capacity int64, age uint64, dirty, frames int) int {
	pct := 0.0
	if frames > 0 {
		d := float64(dirty) * 100 / float64(frames)
		switch lwm := o.MaxDirtyPagesPctLWM; {
		case lwm == 0 && d >= MaxDirtyPagesPct:
			pct = 100
		case lwm > 0 && d >= float64(lwm):
			pct = d * 100 / (MaxDirtyPagesPct + 1)
		}
	}
	if lwm := uint64(capacity) * AdaptiveFlushingLWM / 100; age >= lwm && capacity > 0 {
		f := float64(age) * 100 / float64(LogAsyncPoint(capacity))
		pct = max(pct, float64(o.IOCapacityMax)/float64(o.IOCapacity)*f*math.Sqrt(f)/7.5)
	}
	n := float64(o.IOCapacity) * pct / 100
	if n >= float64(o.IOCapacityMax) {
		return o.IOCapacityMax
	}
	return int(n)
}

// cleanTarget is a frame a pass means to write, with the page it held
// when chosen (the frame may hold another by the time of the write).
type cleanTarget struct {
	f      *Page
	id     page.ID
	newest uint64
	// neighbor: a page of a target's flush area (neighbors51Locked),
	// written only if it is ready when its turn comes.
	neighbor bool
}

// CleanStep runs one pass of the page cleaner (see above) and returns the
// pages it wrote, at most budget (the real-mode goroutine gives
// IOCapacityMax). If sync, a pass that means to write a page whose newest
// change is not yet durable first makes the log durable to its end
// (SyncLog; counted on the meter), as InnoDB's page cleaner waits in
// log_write_up_to; otherwise it skips such pages. Writes go on m, or on
// the pool's background meter if m is nil. A failed write stops the pass;
// the page stays dirty. Without a log, or with Flushing51 (MySQL 5.1 has
// no page cleaner: see MasterStep), it does nothing.
func (p *Pool) CleanStep(m *Meter, budget int, sync bool) (int, error) {
	if p.log == nil || p.opts.Flushing == Flushing51 {
		return 0, nil
	}
	var local Meter
	mm := m
	if mm == nil {
		mm = &local
		defer p.ChargeBackground(&local)
	}
	mm.CleanerPasses++
	want := min(p.FlushTarget(), budget)
	durable := p.log.Durable()
	if sync {
		lru, fl := p.cleanTargets(nil, nil, budget, want, math.MaxUint64)
		need := false
		for _, ts := range [][]cleanTarget{lru, fl} {
			for _, t := range ts {
				need = need || t.newest >= durable
			}
		}
		if need {
			if err := p.SyncLog(mm); err != nil {
				return 0, err
			}
			durable = p.log.Durable()
		}
	}
	lru, fl := p.cleanTargets(nil, nil, budget, want, durable)
	// Two batches, as InnoDB's LRU batch and flush-list batch (with a
	// doublewrite buffer each goes through it on its own, split if it is
	// bigger than the area).
	b := p.newBatcher(mm)
	for i, ts := range [][]cleanTarget{lru, fl} {
		count := &mm.CleanerLRUPages
		if i == 1 {
			count = &mm.CleanerFlushListPages
		}
		for _, t := range ts {
			if b.n+len(b.ws) >= budget {
				break
			}
			if err := b.add(t.f, t.id, false, count); err != nil {
				return b.n, err
			}
		}
		if err := b.flush(); err != nil {
			return b.n, err
		}
	}
	return b.n, nil
}

// cleanTargets appends to lru the dirty, unpinned, idle pages of the LRU
// tail a pass looks at (lruScanLocked), at most budget, and to fl up to
// want pages from the flush list's oldest end that are not among them,
// each with its newest change below durable.
func (p *Pool) cleanTargets(lru, fl []cleanTarget, budget, want int, durable uint64) ([]cleanTarget, []cleanTarget) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fl.Lock()
	defer p.fl.Unlock()
	p.repl.tail(p.lruScanLocked(), func(f *Page) bool {
		if len(lru) >= budget {
			return false
		}
		if f.pinCount() == 0 && !f.busy && f.dirty.Load() && f.newest < durable {
			lru = append(lru, cleanTarget{f: f, id: f.id, newest: f.newest})
		}
		return true
	})
	for f := p.fl.tail; f != nil && len(fl) < want; f = f.flPrev {
		if f.newest < durable && f.resident && !f.busy && !slices.ContainsFunc(lru, func(t cleanTarget) bool { return t.f == f }) {
			fl = append(fl, cleanTarget{f: f, id: f.id, newest: f.newest})
		}
	}
	return lru, fl
}

// lruScanLocked is how many frames from the LRU tail a pass looks at:
// enough to bring the free frames, with the clean ones it leaves at the
// tail, up to the scan depth, as InnoDB's LRU batch scans while its free
// list is shorter than innodb_lru_scan_depth. InnoDB leaves a list of
// BUF_LRU_MIN_LEN (256) pages alone; a pool here may be far smaller (16
// frames), so the depth is capped at an eighth of the frames instead:
// the cleaner keeps the tail clean, not the whole pool.
// REQUIRES: p.mu held.
func (p *Pool) lruScanLocked() int {
	depth := min(p.opts.LRUScanDepth, max(1, len(p.frames)/8))
	return depth - len(p.mu.free)
}

// SyncLog makes the log durable to its end, charging m's counters (nil:
// none): the page cleaner's sync before a pass. It is group-committed with
// the transactions' syncs. Without a log it does nothing.
func (p *Pool) SyncLog(m *Meter) error {
	if p.log == nil {
		return nil
	}
	end := p.log.End()
	if p.log.Durable() >= end {
		return nil
	}
	return p.log.SyncTo(countsOf(m), end)
}

// flushListTargets appends up to limit frames from the flush list's
// oldest end whose oldest modification is below below and whose newest is
// below durable.
func (p *Pool) flushListTargets(ts []cleanTarget, below, durable uint64, limit int) []cleanTarget {
	p.mu.Lock()
	p.fl.Lock()
	for f := p.fl.tail; f != nil && len(ts) < limit && f.oldest < below; f = f.flPrev {
		if f.newest < durable && f.resident {
			ts = append(ts, cleanTarget{f: f, id: f.id, newest: f.newest})
		}
	}
	p.fl.Unlock()
	p.mu.Unlock()
	return ts
}

// FlushUpTo writes, oldest first, every page whose oldest modification is
// below target, and returns how many it wrote: the synchronous flush of a
// transaction past the log's sync point (InnoDB's log_free_check →
// log_preflush_pool_modified_pages, which waits for the flush list to be
// written up to an LSN). Writes are charged to m (nil: the background
// meter) as PageFlushes. Each write waits for the log's durability as any
// write does; a caller that holds no latch makes the log durable to its
// end first (one group sync), so that they need not. A page changed again
// while it is written keeps a place on the list, so FlushUpTo gives up
// after a few rounds rather than chase a hot page; the caller checks the
// checkpoint age again.
func (p *Pool) FlushUpTo(m *Meter, target uint64) (int, error) {
	if p.log == nil {
		return 0, nil
	}
	var local Meter
	mm := m
	if mm == nil {
		mm = &local
		defer p.ChargeBackground(&local)
	}
	b := p.newBatcher(mm)
	var ts []cleanTarget
	for range 4 {
		ts = p.flushListTargets(ts[:0], target, math.MaxUint64, math.MaxInt)
		if len(ts) == 0 {
			break
		}
		ts = p.neighbors51(ts, math.MaxInt, false)
		for _, t := range ts {
			if err := b.add(t.f, t.id, !t.neighbor, &mm.PageFlushes); err != nil {
				return b.n, err
			}
		}
		// A round's batch is written before the list is looked at
		// again.
		if err := b.flush(); err != nil {
			return b.n, err
		}
	}
	return b.n, nil
}

func countsOf(m *Meter) *redo.Counts {
	if m == nil {
		return nil
	}
	return &m.Counts
}

// cleanerLoop is the real-mode cleaner's goroutine (CleanerGoroutine).
type cleanerLoop struct {
	mu   sync.Mutex
	stop chan struct{} // closed by StopCleaner; nil when not running
	done chan struct{} // closed by the goroutine as it returns
	wake chan struct{} // WakeCleaner's signal, buffered by one
}

func (c *cleanerLoop) start(p *Pool) {
	c.stop, c.done, c.wake = make(chan struct{}), make(chan struct{}), make(chan struct{}, 1)
	if p.opts.Flushing == Flushing51 {
		go p.runMaster(c.stop, c.done) // WakeCleaner's signal is not read
		return
	}
	go p.runCleaner(c.stop, c.done, c.wake)
}

// runCleaner is the goroutine: a pass every CleanerInterval, or at once
// when woken, until stopped. A failed write leaves its page dirty for the
// next pass, a checkpoint or an eviction to write, and report.
func (p *Pool) runCleaner(stop <-chan struct{}, done chan<- struct{}, wake <-chan struct{}) {
	defer close(done)
	t := time.NewTicker(CleanerInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		case <-wake:
		}
		_, _ = p.CleanStep(nil, p.opts.IOCapacityMax, true)
	}
}

// WakeCleaner asks the cleaner goroutine, if there is one, for a pass now
// rather than at its next tick (a transaction past the log's async point
// does, as InnoDB's log_free_check wakes the page cleaner). It never
// blocks.
func (p *Pool) WakeCleaner() {
	c := &p.cleaner
	c.mu.Lock()
	if c.stop != nil {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
	c.mu.Unlock()
}

// StopCleaner stops the cleaner goroutine, if there is one, and returns
// once it has returned (a pass under way finishes first), and the
// WaffleLRU sender goroutine likewise. Close calls it; it is safe to call
// more than once.
func (p *Pool) StopCleaner() {
	p.sender.halt()
	c := &p.cleaner
	c.mu.Lock()
	stop, done := c.stop, c.done
	c.stop = nil
	c.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}
