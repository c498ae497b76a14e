package slru

import (
	"fmt"
	"sync"

	"github.com/enginelab/enginelab/cache/tier"
	"github.com/enginelab/enginelab/cache/tier/internal/items"
)

// Options configure a Tier. Zero fields take memcached's defaults; the
// limits are memcached's too.
type Options struct {
	// HotPercent is the share of the byte budget HOT may hold before its
	// tail moves on (memcached's hot_lru_pct). Default 20; allowed 1 to 79.
	HotPercent int
	// WarmPercent is WARM's share (warm_lru_pct). Default 40; allowed 1
	// to 79. HotPercent+WarmPercent may not exceed 80, which leaves at
	// least a fifth of the budget to COLD, where evictions come from.
	WarmPercent int
}

func (o *Options) ensureDefaults() {
	if o.HotPercent == 0 {
		o.HotPercent = 20
	}
	if o.WarmPercent == 0 {
		o.WarmPercent = 40
	}
}

func (o Options) validate() error {
	if o.HotPercent < 1 || o.HotPercent > 79 {
		return fmt.Errorf("cache: %w: slru tier HOT percent %d: want 1 to 79", tier.ErrInvalidOptions, o.HotPercent)
	}
	if o.WarmPercent < 1 || o.WarmPercent > 79 {
		return fmt.Errorf("cache: %w: slru tier WARM percent %d: want 1 to 79", tier.ErrInvalidOptions, o.WarmPercent)
	}
	if o.HotPercent+o.WarmPercent > 80 {
		return fmt.Errorf("cache: %w: slru tier HOT percent %d + WARM percent %d: want at most 80",
			tier.ErrInvalidOptions, o.HotPercent, o.WarmPercent)
	}
	return nil
}

// Tier is a tier.Tier modelled on the segmented LRU of memcached 1.5 and
// later (doc/new_lru.txt, items.c): three queues, HOT, WARM and COLD, with
// the flow of items between them made deterministic. There is no
// background thread and no clock: every move happens inside the call that
// causes it, under the tier's lock. Each page costs its length plus
// tier.ItemOverhead; the copy, drop, stats and error rules are lru.Tier's.
//
//	Put ─► HOT ─── over its share, tail not active ──────────► COLD ─► evicted
//	        │                                                   ▲ │   (its tail, when
//	        │ over its share, tail active                       │ │    a Put needs room)
//	        ▼                                                   │ │
//	       WARM ─── over its share, tail not active ────────────┘ │
//	       ▲  ▲                                                   │
//	       │  └── over its share, tail active: to WARM's head     │
//	       └───── a hit that makes a COLD item active ────────────┘
//
// An item always enters a queue at its head and leaves from its tail. The
// rules, with the memcached code each comes from:
//
//  1. A Put links a new item, without flags, at HOT's head (do_item_alloc).
//     A Put of a key already held makes a new item too, as memcached's set
//     does; the old one is unlinked (do_item_replace).
//  2. A hit never moves an item within HOT or WARM. The first hit on an
//     item sets its fetched flag; a later one sets active: "items hit at
//     least twice are considered active" (do_item_get). A fetched item
//     whose active flag a move cleared needs one hit to be active again.
//  3. A hit that makes a COLD item active moves it to WARM's head at once,
//     clearing the flag (do_item_update; memcached queues that move to its
//     maintainer thread, which may drop it when its buffer is full).
//  4. After every Put and every move, while HOT holds more than HotPercent
//     of the budget its tail leaves: to WARM if active (flag cleared), else
//     to COLD. Then, while WARM holds more than WarmPercent, an active tail
//     is bumped to WARM's head (flag cleared) and an inactive one goes to
//     COLD (lru_pull_tail, the HOT and WARM cases). COLD has no limit.
//  5. Room for a Put is made before it is linked, by evicting COLD's tail
//     (never active here: rule 3 moves an active COLD item out at once);
//     if COLD is empty, HOT's tail, then WARM's (do_item_alloc_pull, which
//     pulls HOT's tail down to COLD when COLD has nothing to evict).
//
// So an item hit once or never flows through HOT and COLD and out; an item
// hit twice (in HOT, or in COLD before it is evicted) reaches WARM, where
// every further hit buys it another pass before it sinks to COLD again.
//
// How memcached differs besides timing: its queues are per slab class; the
// shares are of the bytes the class holds, not of the budget (the same once
// memory is full); HOT and WARM are also capped by age (hot_max_factor 0.2
// and warm_max_factor 2.0 times the age of COLD's tail), which needs a
// clock; its maintainer also moves an active HOT tail to WARM while HOT is
// under its share, and rescues an active HOT tail instead of evicting it;
// the TEMP queue for short-lived items is not modelled.
type Tier struct {
	// mu guards core and the three queues: every call holds it
	// throughout, moves included.
	mu                  sync.Mutex
	core                items.Core
	hot, warm, cold     items.List // heads: most recently entered
	hotLimit, warmLimit int64      // bytes; fixed at New
}

var _ tier.Tier = (*Tier)(nil)

// New makes a Tier of capacityBytes, which must be positive; a nil o means
// memcached's defaults.
func New(capacityBytes int64, o *Options) (*Tier, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	opts.ensureDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	c, err := items.NewCore("slru", capacityBytes)
	if err != nil {
		return nil, err
	}
	return &Tier{
		core:      c,
		hotLimit:  percentOf(capacityBytes, opts.HotPercent),
		warmLimit: percentOf(capacityBytes, opts.WarmPercent),
	}, nil
}

// percentOf is n*pct/100, rounded down, without overflowing for any n.
func percentOf(n int64, pct int) int64 {
	return n/100*int64(pct) + n%100*int64(pct)/100
}

// Get implements tier.Tier.
func (t *Tier) Get(k tier.Key, lsn uint64, dst []byte) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	it, err := t.core.Get(k, dst)
	if it == nil {
		return false, err
	}
	switch {
	case it.Active:
	case !it.Fetched:
		it.Fetched = true
	case it.On(&t.cold):
		t.cold.Remove(it) // active at once, and so to WARM, flag cleared
		t.warm.PushFront(it)
		t.balance()
	default:
		it.Active = true
	}
	return true, nil
}

// Put implements tier.Tier.
func (t *Tier) Put(k tier.Key, lsn uint64, page []byte) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	it, err := t.core.Put(k, page, t.victim)
	if it == nil {
		return false, err
	}
	t.hot.PushFront(it)
	t.balance()
	return true, nil
}

// victim is the item a Put evicts: COLD's tail, else HOT's, else WARM's.
// The caller knows the tier is not empty.
func (t *Tier) victim() *items.Item {
	switch {
	case t.cold.Tail() != nil:
		return t.cold.Tail()
	case t.hot.Tail() != nil:
		return t.hot.Tail()
	default:
		return t.warm.Tail()
	}
}

// balance moves tails until HOT and WARM are within their shares (rule 4).
// It ends: every move out of HOT shrinks it, and each bump within WARM
// clears a flag, so WARM sends one to COLD at least every warm.n moves.
func (t *Tier) balance() {
	for t.hot.Bytes() > t.hotLimit {
		it := t.hot.Tail()
		t.hot.Remove(it)
		if it.Active {
			it.Active = false
			t.warm.PushFront(it)
		} else {
			t.cold.PushFront(it)
		}
	}
	for t.warm.Bytes() > t.warmLimit {
		it := t.warm.Tail()
		t.warm.Remove(it)
		if it.Active {
			it.Active = false
			t.warm.PushFront(it)
		} else {
			t.cold.PushFront(it)
		}
	}
}

// Delete implements tier.Tier.
func (t *Tier) Delete(k tier.Key) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.core.Delete(k)
}

// Stats implements tier.Tier.
func (t *Tier) Stats() tier.Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.core.Stats()
}

// Name implements tier.Tier.
func (t *Tier) Name() string { return "slru" }

// Close implements tier.Tier: it frees every page. Later calls fail with
// tier.ErrClosed; closing again is a no-op.
func (t *Tier) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.core.Close()
	t.hot, t.warm, t.cold = items.List{}, items.List{}, items.List{}
	return nil
}

// Queues lists the keys in each queue, head (most recently entered) first:
// for tests and diagnostics (it allocates and walks every item).
func (t *Tier) Queues() (hot, warm, cold []tier.Key) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.hot.Keys(), t.warm.Keys(), t.cold.Keys()
}
