package cache

import (
	"fmt"
	"sync"
)

// TierItemOverhead is what the in-process tiers (LRUTier, SLRUTier) charge
// each page on top of its length, so that their byte budget means what a
// memcached's does: a memcached of N bytes holds fewer than N/pageSize
// pages. It is the size of memcached's item header on a 64-bit build
// (three list and hash pointers, times, lengths, refcount, flags: 48
// bytes). A real memcached adds more (the key, an 8-byte CAS, the value's
// trailing CRLF) and then rounds the item up to a slab chunk; the
// idealized tiers count none of that.
const TierItemOverhead = 48

// tierSpares is how many removed items (with their page buffers) a tier
// keeps for reuse. In exclusive mode every hit is followed by a Delete and
// every pool eviction by a Put, so one spare already makes that cycle
// allocation-free; a few more cover a Put that evicts several small pages.
// The spares' buffers are memory outside the byte budget, at most
// tierSpares pages.
const tierSpares = 8

// tierItem is one page held by an LRUTier or an SLRUTier, and a node of the
// tier's intrusive lists.
type tierItem struct {
	key        TierKey
	page       []byte // the tier's own copy; cap may exceed len when reused
	prev, next *tierItem
	list       *tierList // the list the item is on; nil when on none

	// The SLRU's flags, memcached's ITEM_FETCHED and ITEM_ACTIVE.
	fetched bool // hit at least once
	active  bool // hit again since fetched (or since the last move cleared it)
}

// cost is what the item counts against the byte budget.
func (it *tierItem) cost() int64 { return tierCost(len(it.page)) }

func tierCost(pageLen int) int64 { return int64(pageLen) + TierItemOverhead }

// tierList is an intrusive doubly linked list of items, head first, that
// also sums its items' costs. An item is on at most one list.
type tierList struct {
	head, tail *tierItem
	n          int
	bytes      int64
}

func (l *tierList) pushFront(it *tierItem) {
	it.list, it.prev, it.next = l, nil, l.head
	if l.head != nil {
		l.head.prev = it
	} else {
		l.tail = it
	}
	l.head = it
	l.n++
	l.bytes += it.cost()
}

func (l *tierList) remove(it *tierItem) {
	if it.prev != nil {
		it.prev.next = it.next
	} else {
		l.head = it.next
	}
	if it.next != nil {
		it.next.prev = it.prev
	} else {
		l.tail = it.prev
	}
	it.list, it.prev, it.next = nil, nil, nil
	l.n--
	l.bytes -= it.cost()
}

// keys lists the keys from head to tail.
func (l *tierList) keys() []TierKey {
	out := make([]TierKey, 0, l.n)
	for it := l.head; it != nil; it = it.next {
		out = append(out, it.key)
	}
	return out
}

// tierCore is what the in-process tiers share: the index, the byte count,
// the counters and the spare items. Its owner holds its lock around every
// call. Invariant: bytes is the sum of the costs of the items in index, and
// every item in index is on exactly one of the owner's lists.
type tierCore struct {
	name     string
	capacity int64
	index    map[TierKey]*tierItem
	bytes    int64
	spares   []*tierItem
	st       TierStats // counters only; Items, Bytes and Capacity are filled in by stats
	closed   bool
}

func newTierCore(name string, capacity int64) (tierCore, error) {
	if capacity <= 0 {
		return tierCore{}, fmt.Errorf("%w: %s tier capacity %d bytes: want more than 0",
			ErrInvalidConfig, name, capacity)
	}
	return tierCore{name: name, capacity: capacity, index: make(map[TierKey]*tierItem)}, nil
}

// copyOut copies it.page into dst, which must be exactly as long: a
// shorter dst would get a truncated page, a longer one a page with a stale
// tail, and Get has no length to return.
func (c *tierCore) copyOut(it *tierItem, dst []byte) error {
	if len(dst) != len(it.page) {
		c.st.Errors++
		return fmt.Errorf("cache: %s tier: page %s holds %d bytes, dst %d",
			c.name, it.key.ID, len(it.page), len(dst))
	}
	copy(dst, it.page)
	c.st.Hits++
	return nil
}

// newItem returns an unlinked item holding a copy of page, reusing a
// spare's buffer when it is large enough but less than twice too large (a
// buffer much larger than its page would hold memory the budget does not
// count). It does not touch the index.
func (c *tierCore) newItem(k TierKey, page []byte) *tierItem {
	var it *tierItem
	for i := len(c.spares) - 1; i >= 0; i-- {
		if n := cap(c.spares[i].page); n >= len(page) && n <= 2*len(page) {
			it = c.spares[i]
			last := len(c.spares) - 1
			c.spares[i] = c.spares[last]
			c.spares[last] = nil
			c.spares = c.spares[:last]
			break
		}
	}
	switch {
	case it != nil:
		it.page = it.page[:len(page)]
	case len(c.spares) > 0: // no buffer fits: keep the struct, not its buffer
		last := len(c.spares) - 1
		it = c.spares[last]
		c.spares[last] = nil
		c.spares = c.spares[:last]
		it.page = make([]byte, len(page))
	default:
		it = &tierItem{page: make([]byte, len(page))}
	}
	copy(it.page, page)
	it.key = k
	it.fetched, it.active = false, false
	return it
}

// link adds an item made by newItem to the index; the caller puts it on a
// list.
func (c *tierCore) link(it *tierItem) {
	c.index[it.key] = it
	c.bytes += it.cost()
}

// unlink removes it from the index and from its list and keeps it as a
// spare (or lets it go when there are enough).
func (c *tierCore) unlink(it *tierItem) {
	delete(c.index, it.key)
	c.bytes -= it.cost()
	it.list.remove(it)
	if len(c.spares) < tierSpares {
		c.spares = append(c.spares, it)
	}
}

// stats returns the counters with the current size.
func (c *tierCore) stats() TierStats {
	s := c.st
	s.Items = int64(len(c.index))
	s.Bytes = c.bytes
	s.Capacity = c.capacity
	return s
}

// close drops every page and the spares: the memory goes back to the
// garbage collector.
func (c *tierCore) close() {
	c.closed = true
	c.index = nil
	c.bytes = 0
	c.spares = nil
}

// LRUTier is a Tier that is an exact least-recently-used cache with a byte
// budget: an idealized classic memcached (before its segmented LRU, or
// with it turned off), in process.
//
// Each page costs its length plus TierItemOverhead. A Get hit moves the
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
// staleness is the pool's job (Meter.TierStale). Every operation is O(1) (plus O(1) per
// page a Put evicts) under one mutex.
// Buffers of evicted and deleted pages are reused by later Puts (see
// tierSpares), so a tier in its steady state does not allocate.
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
//     TierItemOverhead: the same budget holds fewer pages there.
type LRUTier struct {
	mu   sync.Mutex
	core tierCore
	lru  tierList // head: most recently used
}

var _ Tier = (*LRUTier)(nil)

// NewLRUTier makes an LRUTier of capacityBytes, which must be positive.
func NewLRUTier(capacityBytes int64) (*LRUTier, error) {
	c, err := newTierCore("lru", capacityBytes)
	if err != nil {
		return nil, err
	}
	return &LRUTier{core: c}, nil
}

// Get implements Tier.
func (t *LRUTier) Get(k TierKey, lsn uint64, dst []byte) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := &t.core
	c.st.Gets++
	if c.closed {
		c.st.Errors++
		return false, ErrClosed
	}
	it := c.index[k]
	if it == nil {
		return false, nil
	}
	if err := c.copyOut(it, dst); err != nil {
		return false, err
	}
	if t.lru.head != it {
		t.lru.remove(it)
		t.lru.pushFront(it)
	}
	return true, nil
}

// Put implements Tier.
func (t *LRUTier) Put(k TierKey, lsn uint64, page []byte) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := &t.core
	c.st.Puts++
	if c.closed {
		c.st.Errors++
		return false, ErrClosed
	}
	if old := c.index[k]; old != nil {
		c.unlink(old) // its buffer is likely the one newItem reuses
	}
	cost := tierCost(len(page))
	if cost > c.capacity {
		c.st.Drops++
		return false, nil
	}
	for c.bytes+cost > c.capacity {
		c.unlink(t.lru.tail)
		c.st.Evictions++
	}
	it := c.newItem(k, page)
	c.link(it)
	t.lru.pushFront(it)
	return true, nil
}

// Delete implements Tier.
func (t *LRUTier) Delete(k TierKey) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.core.delete(k)
}

// Stats implements Tier.
func (t *LRUTier) Stats() TierStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.core.stats()
}

// Name implements Tier.
func (t *LRUTier) Name() string { return "lru" }

// Close implements Tier: it frees every page. Later calls fail with
// ErrClosed; closing again is a no-op.
func (t *LRUTier) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.core.close()
	t.lru = tierList{}
	return nil
}

// Order lists the keys held, most recently used first: for tests and
// diagnostics (it allocates and walks every item).
func (t *LRUTier) Order() []TierKey {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lru.keys()
}

// delete removes k's page from the core (and so from whichever queue holds
// it: unlink takes it off its list).
func (c *tierCore) delete(k TierKey) error {
	c.st.Deletes++
	if c.closed {
		c.st.Errors++
		return ErrClosed
	}
	if it := c.index[k]; it != nil {
		c.unlink(it)
	}
	return nil
}
