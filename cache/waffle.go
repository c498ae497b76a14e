package cache

import (
	"fmt"
	"sync"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/tier"
)

// Waffle Grid's two tier modes (Options.Waffle), as Waffle Grid built
// them on MySQL 5.1's InnoDB in front of memcached:
//
//	"LRU mode" (WaffleLRU, exclusive):
//	  eviction ──SET──► memcached           on the evicting caller's path: the
//	                                        frame is free once the SET has gone
//	                                        out (or is queued: WaffleSetQueue)
//	  miss ──GET──► memcached ──hit──DELETE  the page read back is expired there
//	                                        (one more request a hit), unless
//	                                        WaffleKeepOnRead
//	"non-LRU mode" (WaffleNonLRU, inclusive):
//	  store read ──SET──► memcached          both off the foreground path: the
//	  store write ──SET──► memcached         background meter pays for them
//	  miss ──GET──► memcached                a hit leaves the page there
//
// The pool's own protocol (TierMode alone, Waffle unset) is the same
// placement; what Waffle adds is where each request is paid for and the
// options of Waffle Grid's releases. Per page event, in requests to the
// tier (the tests count them exactly):
//
//	event                 LRU      LRU+keep   LRU+queue          non-LRU
//	miss, tier has it     GET+DEL  GET        GET+DEL            GET
//	miss, tier has not    GET      GET        GET                GET + SET (bg)
//	eviction              SET      SET        (queued) SET later  –
//	page write            –        –          –                  SET (bg)

// WaffleMode names Waffle Grid's tier modes (Options.Waffle).
type WaffleMode string

// Waffle Grid's modes.
const (
	// WaffleNone (the default) is the pool's own protocol: TierMode's.
	WaffleNone WaffleMode = ""
	// WaffleLRU is Waffle Grid's "LRU mode": TierMode tier.Exclusive. An
	// evicted page is SET on the evicting caller's path and its frame is
	// free only once the SET has gone out (synchronous; WaffleSetQueue
	// makes it asynchronous, through a bounded queue); a page read back is
	// deleted from memcached ("expired" there: one more request a hit),
	// unless WaffleKeepOnRead.
	WaffleLRU WaffleMode = "lru"
	// WaffleNonLRU is Waffle Grid's "non-LRU mode": TierMode
	// tier.Inclusive, a page SET after every read from the store and
	// after every write to it, off the foreground path: the SETs are
	// charged to the pool's background meter (InnoDB's I/O threads sent
	// them in Waffle Grid), whoever made the read or the write.
	WaffleNonLRU WaffleMode = "non-lru"
)

// QueueFull is what a WaffleLRU eviction does when the asynchronous SET
// queue (Options.WaffleSetQueue) is full (Options.WaffleQueueFull).
type QueueFull string

// Full-queue policies.
const (
	// QueueFullWait (the default): the evicting caller waits for a slot,
	// modelled as the caller sending the oldest queued SET itself
	// (Meter.TierSetWaits, its SET on the caller's meter), then queueing
	// its own: one SET's time, as a caller behind a single sender waits.
	QueueFullWait QueueFull = "wait"
	// QueueFullDrop: the evicted page is not sent at all
	// (Meter.TierQueueDrops); the tier never sees it.
	QueueFullDrop QueueFull = "drop"
)

// EffectiveTierMode is the tier mode o runs with: TierMode, or if that is
// unset the default, inclusive for WaffleNonLRU and exclusive otherwise.
func (o *Options) EffectiveTierMode() tier.Mode {
	switch {
	case o.TierMode != "":
		return o.TierMode
	case o.Waffle == WaffleNonLRU:
		return tier.Inclusive
	}
	return tier.Exclusive
}

// validateWaffle checks the Waffle options; o has its defaults applied
// except TierMode's.
func (o *Options) validateWaffle() error {
	switch o.Waffle {
	case WaffleNone:
		if o.WaffleSetQueue != 0 || o.WaffleQueueFull != "" || o.WaffleKeepOnRead {
			return fmt.Errorf("cache: %w: WaffleSetQueue, WaffleQueueFull and WaffleKeepOnRead need Waffle %q", ErrInvalidOptions, WaffleLRU)
		}
		return nil
	case WaffleLRU:
		if o.TierMode != "" && o.TierMode != tier.Exclusive {
			return fmt.Errorf("cache: %w: Waffle %q is exclusive; tier mode %q contradicts it", ErrInvalidOptions, o.Waffle, o.TierMode)
		}
		if o.WaffleSetQueue < 0 {
			return fmt.Errorf("cache: %w: Waffle SET queue %d: want 0 (synchronous SETs) or more", ErrInvalidOptions, o.WaffleSetQueue)
		}
		switch o.WaffleQueueFull {
		case "", QueueFullWait, QueueFullDrop:
		default:
			return fmt.Errorf("cache: %w: Waffle queue-full policy %q: want %q or %q", ErrInvalidOptions, o.WaffleQueueFull, QueueFullWait, QueueFullDrop)
		}
		if o.WaffleQueueFull != "" && o.WaffleSetQueue == 0 {
			return fmt.Errorf("cache: %w: Waffle queue-full policy %q without a SET queue (WaffleSetQueue)", ErrInvalidOptions, o.WaffleQueueFull)
		}
		return nil
	case WaffleNonLRU:
		if o.TierMode != "" && o.TierMode != tier.Inclusive {
			return fmt.Errorf("cache: %w: Waffle %q is inclusive; tier mode %q contradicts it", ErrInvalidOptions, o.Waffle, o.TierMode)
		}
		if o.WaffleSetQueue != 0 || o.WaffleQueueFull != "" || o.WaffleKeepOnRead {
			return fmt.Errorf("cache: %w: WaffleSetQueue, WaffleQueueFull and WaffleKeepOnRead belong to Waffle %q, not %q", ErrInvalidOptions, WaffleLRU, o.Waffle)
		}
		return nil
	}
	return fmt.Errorf("cache: %w: Waffle mode %q: want %q, %q or none", ErrInvalidOptions, o.Waffle, WaffleLRU, WaffleNonLRU)
}

// setQueue is WaffleLRU's asynchronous SET queue: sealed copies of evicted
// pages, oldest first, at most cap of them.
type setQueue struct {
	mu    sync.Mutex
	items []queuedSet
	cap   int
}

type queuedSet struct {
	id  page.ID
	buf *[]byte // from Pool.scratch, sealed
}

// tierEvict sends the page of an evicted frame (private to the caller,
// clean) to the tier: at once (the SET is on the caller's path), or
// through the queue with WaffleSetQueue.
func (p *Pool) tierEvict(m *Meter, id page.ID, frame []byte) {
	q := &p.setQ
	if q.cap == 0 {
		p.tierPush(m, id, frame)
		return
	}
	bp := p.scratch.Get().(*[]byte)
	copy(*bp, frame)
	page.Seal(*bp)
	for {
		q.mu.Lock()
		if len(q.items) < q.cap {
			q.items = append(q.items, queuedSet{id, bp})
			q.mu.Unlock()
			if m != nil {
				m.TierSetsQueued++
			}
			p.sender.wakeUp()
			return
		}
		if p.opts.WaffleQueueFull == QueueFullDrop {
			q.mu.Unlock()
			p.scratch.Put(bp)
			if m != nil {
				m.TierQueueDrops++
			}
			return
		}
		// Wait for a slot: send the oldest SET ourselves.
		head := q.items[0]
		q.items = q.items[1:]
		q.mu.Unlock()
		if m != nil {
			m.TierSetWaits++
		}
		p.tierPut(m, head.id, *head.buf)
		p.scratch.Put(head.buf)
	}
}

// takeQueued removes page id's queued SET, if any, and copies its image
// into buf: a page evicted and wanted back before its SET went out is
// still in this process, and never reaches the tier.
func (p *Pool) takeQueued(id page.ID, buf []byte) bool {
	q := &p.setQ
	if q.cap == 0 {
		return false
	}
	q.mu.Lock()
	for i, s := range q.items {
		if s.id == id {
			q.items = append(q.items[:i], q.items[i+1:]...)
			q.mu.Unlock()
			copy(buf, *s.buf)
			p.scratch.Put(s.buf)
			return true
		}
	}
	q.mu.Unlock()
	return false
}

// QueuedSets returns how many WaffleLRU SETs are queued, not yet sent.
func (p *Pool) QueuedSets() int {
	p.setQ.mu.Lock()
	defer p.setQ.mu.Unlock()
	return len(p.setQ.items)
}

// SendStep sends up to limit of the queued WaffleLRU SETs (WaffleSetQueue),
// oldest first, and returns how many it sent: the sender of the
// asynchronous SETs. They are charged to m, or to the pool's background
// meter if m is nil. Who calls it is the owner's choice, as for CleanStep:
// the simulator at its virtual times, a test step by step; with
// Wiring.Cleaner CleanerGoroutine the pool runs a sender goroutine of its
// own that sends every SET as soon as it is queued. Without a queue it
// does nothing.
func (p *Pool) SendStep(m *Meter, limit int) int {
	q := &p.setQ
	var local Meter
	mm := m
	if mm == nil {
		mm = &local
		defer p.ChargeBackground(&local)
	}
	n := 0
	for n < limit {
		q.mu.Lock()
		if len(q.items) == 0 {
			q.mu.Unlock()
			break
		}
		head := q.items[0]
		q.items = q.items[1:]
		q.mu.Unlock()
		p.tierPut(mm, head.id, *head.buf)
		p.scratch.Put(head.buf)
		n++
	}
	return n
}

// dropQueued discards the queued SETs (Close: the tier is a cache, and
// no later open can read this one's pages).
func (p *Pool) dropQueued() {
	q := &p.setQ
	q.mu.Lock()
	items := q.items
	q.items = nil
	q.mu.Unlock()
	for _, s := range items {
		p.scratch.Put(s.buf)
	}
}

// tierStoreCopy is inclusive mode's SET of a sealed image the store has
// just given or taken: on m, or with WaffleNonLRU on the background meter.
func (p *Pool) tierStoreCopy(m *Meter, id page.ID, sealed []byte) {
	if p.opts.Waffle != WaffleNonLRU {
		p.tierPut(m, id, sealed)
		return
	}
	var bg Meter
	p.tierPut(&bg, id, sealed)
	p.ChargeBackground(&bg)
}

// senderLoop is the real-mode goroutine that sends queued SETs
// (CleanerGoroutine with WaffleSetQueue).
type senderLoop struct {
	mu   sync.Mutex
	stop chan struct{}
	done chan struct{}
	wake chan struct{}
}

func (s *senderLoop) start(p *Pool) {
	s.stop, s.done, s.wake = make(chan struct{}), make(chan struct{}), make(chan struct{}, 1)
	go func(stop <-chan struct{}, done chan<- struct{}, wake <-chan struct{}) {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-wake:
				for p.SendStep(nil, 64) > 0 {
				}
			}
		}
	}(s.stop, s.done, s.wake)
}

// wakeUp tells the sender goroutine, if there is one, that a SET is
// queued. It never blocks.
func (s *senderLoop) wakeUp() {
	s.mu.Lock()
	if s.stop != nil {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
	s.mu.Unlock()
}

func (s *senderLoop) halt() {
	s.mu.Lock()
	stop, done := s.stop, s.done
	s.stop = nil
	s.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}
