package lru

import (
	"sync"

	"github.com/enginelab/enginelab/cache/tier"
	"github.com/enginelab/enginelab/cache/tier/internal/items"
)

// Tier is a tier.Tier that is an exact least-recently-used cache with a
// byte budget: an idealized classic memcached (before its segmented LRU,
// or with it turned off), in process.
//
// Each page costs its length plus tier.ItemOverhead. A Get hit moves the
// page to the most recently used end. A Put of a new key evicts from the
// least recently used end until the page fits; a Put of a key already held
// replaces the page (a new item, as memcached's set makes) and makes it
// most recently used. A page that alone exceeds the budget is dropped
// (stored is false, counted in Drops), and a page held before under its
// key is removed with it, as memcached unlinks the old item when a set
// fails, so that a dropped Put never leaves an older image behind.
//
// Get copies into dst, which must be exactly the page's length; Put copies
// page: no caller ever shares the tier's buffers. The LSNs given to Get
// and Put are not used: memcached cannot see them either, and judging
// staleness is the pool's job (cache.Meter.TierStale). Every operation is
// O(1) (plus O(1) per page a Put evicts) under one mutex. Buffers of
// evicted and deleted pages are reused by later Puts (a few are kept, at
// most eight pages outside the budget), so a tier in its steady state does
// not allocate.
//
// How the real memcached differs, which is why this one is idealized:
//   - It keeps one LRU per slab class (items of similar size), not one for
//     all items: a page competes only with items of its own class.
//   - It bumps an item to the head at most once a minute
//     (ITEM_UPDATE_INTERVAL, 60 seconds): a hit within a minute of the last
//     bump does not reorder, so its LRU order is only exact to the minute.
//   - An item occupies a slab chunk, the smallest of its class that fits,
//     so some memory is lost to rounding (classes grow by a factor of 1.25
//     by default), and the header, key and CAS cost more than
//     tier.ItemOverhead: the same budget holds fewer pages there.
type Tier struct {
	// mu guards core and lru: every call holds it throughout.
	mu   sync.Mutex
	core items.Core
	lru  items.List // head: most recently used
}

var _ tier.Tier = (*Tier)(nil)

// New makes a Tier of capacityBytes, which must be positive.
func New(capacityBytes int64) (*Tier, error) {
	c, err := items.NewCore("lru", capacityBytes)
	if err != nil {
		return nil, err
	}
	return &Tier{core: c}, nil
}

// Get implements tier.Tier.
func (t *Tier) Get(k tier.Key, lsn uint64, dst []byte) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	it, err := t.core.Get(k, dst)
	if it == nil {
		return false, err
	}
	if t.lru.Head() != it {
		t.lru.Remove(it)
		t.lru.PushFront(it)
	}
	return true, nil
}

// Put implements tier.Tier.
func (t *Tier) Put(k tier.Key, lsn uint64, page []byte) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	it, err := t.core.Put(k, page, t.lru.Tail)
	if it == nil {
		return false, err
	}
	t.lru.PushFront(it)
	return true, nil
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
func (t *Tier) Name() string { return "lru" }

// Close implements tier.Tier: it frees every page. Later calls fail with
// tier.ErrClosed; closing again is a no-op.
func (t *Tier) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.core.Close()
	t.lru = items.List{}
	return nil
}

// Order lists the keys held, most recently used first: for tests and
// diagnostics (it allocates and walks every item).
func (t *Tier) Order() []tier.Key {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lru.Keys()
}
