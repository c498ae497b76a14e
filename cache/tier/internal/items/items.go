package items

import (
	"fmt"

	"github.com/enginelab/enginelab/cache/tier"
)

// spares is how many removed items (with their page buffers) a Core keeps
// for reuse. In exclusive mode every hit is followed by a Delete and every
// pool eviction by a Put, so one spare already makes that cycle
// allocation-free; a few more cover a Put that evicts several small pages.
// The spares' buffers are memory outside the byte budget, at most spares
// pages.
const spares = 8

// Item is one page held by a tier, and a node of the tier's intrusive
// lists.
type Item struct {
	key        tier.Key
	page       []byte // the tier's own copy; cap may exceed len when reused
	prev, next *Item
	list       *List // the list the item is on; nil when on none

	// The SLRU's flags, memcached's ITEM_FETCHED and ITEM_ACTIVE; Core
	// clears them when it makes an item.
	Fetched bool // hit at least once
	Active  bool // hit again since fetched (or since the last move cleared it)
}

// Cost is what the item counts against the byte budget.
func (it *Item) Cost() int64 { return Cost(len(it.page)) }

// On reports whether the item is on list l.
func (it *Item) On(l *List) bool { return it.list == l }

// Cost is what a page of pageLen bytes counts against the byte budget: its
// length and tier.ItemOverhead.
func Cost(pageLen int) int64 { return int64(pageLen) + tier.ItemOverhead }

// List is an intrusive doubly linked list of items, head first, that also
// sums its items' costs. An item is on at most one list. The zero value is
// an empty list.
type List struct {
	head, tail *Item
	n          int
	bytes      int64
}

// Head returns the item at the head, nil if the list is empty.
func (l *List) Head() *Item { return l.head }

// Tail returns the item at the tail, nil if the list is empty.
func (l *List) Tail() *Item { return l.tail }

// Bytes returns the sum of the costs of the items on the list.
func (l *List) Bytes() int64 { return l.bytes }

// PushFront puts it, which is on no list, at the head.
func (l *List) PushFront(it *Item) {
	it.list, it.prev, it.next = l, nil, l.head
	if l.head != nil {
		l.head.prev = it
	} else {
		l.tail = it
	}
	l.head = it
	l.n++
	l.bytes += it.Cost()
}

// Remove takes it, which is on l, off the list.
func (l *List) Remove(it *Item) {
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
	l.bytes -= it.Cost()
}

// Keys lists the keys from head to tail.
func (l *List) Keys() []tier.Key {
	out := make([]tier.Key, 0, l.n)
	for it := l.head; it != nil; it = it.next {
		out = append(out, it.key)
	}
	return out
}

// Core is the index of a tier's items, its byte count, its counters and
// its spare items. Invariant: bytes is the sum of the costs of the items in
// index, and every item in index is on exactly one of the owner's lists.
type Core struct {
	name     string
	capacity int64
	index    map[tier.Key]*Item
	bytes    int64
	spares   []*Item
	st       tier.Stats // counters only; Items, Bytes and Capacity are filled in by Stats
	closed   bool
}

// NewCore returns the core of a tier called name (for messages) with a
// budget of capacity bytes, which must be positive.
func NewCore(name string, capacity int64) (Core, error) {
	if capacity <= 0 {
		return Core{}, fmt.Errorf("cache: %w: %s tier capacity %d bytes: want more than 0",
			tier.ErrInvalidOptions, name, capacity)
	}
	return Core{name: name, capacity: capacity, index: make(map[tier.Key]*Item)}, nil
}

// Get counts a get of k and, if the tier holds k, copies its page into dst
// and returns its item (a hit, counted), for the policy to move. It
// returns nil for a miss, and with an error when the tier is closed or dst
// is not exactly the page's length.
func (c *Core) Get(k tier.Key, dst []byte) (*Item, error) {
	c.st.Gets++
	if c.closed {
		c.st.Errors++
		return nil, tier.ErrClosed
	}
	it := c.index[k]
	if it == nil {
		return nil, nil
	}
	if err := c.copyOut(it, dst); err != nil {
		return nil, err
	}
	return it, nil
}

// copyOut copies it.page into dst, which must be exactly as long: a
// shorter dst would get a truncated page, a longer one a page with a stale
// tail, and Get has no length to return.
func (c *Core) copyOut(it *Item, dst []byte) error {
	if len(dst) != len(it.page) {
		c.st.Errors++
		return fmt.Errorf("cache: %s tier: page %s holds %d bytes, dst %d",
			c.name, it.key.ID, len(it.page), len(dst))
	}
	copy(dst, it.page)
	c.st.Hits++
	return nil
}

// Put counts a put of page under k and stores a copy: the page held under
// k before goes first (also when the new one is dropped, so that a
// dropped put never leaves an older image behind), then victim's items,
// one by one, until the page fits. It returns the new item, on no list,
// for the policy to place, or nil when the page alone exceeds the budget
// (a drop, counted) or the tier is closed (an error). victim is only
// called while the tier holds an item.
func (c *Core) Put(k tier.Key, page []byte, victim func() *Item) (*Item, error) {
	c.st.Puts++
	if c.closed {
		c.st.Errors++
		return nil, tier.ErrClosed
	}
	if old := c.index[k]; old != nil {
		c.unlink(old) // its buffer is likely the one newItem reuses
	}
	cost := Cost(len(page))
	if cost > c.capacity {
		c.st.Drops++
		return nil, nil
	}
	for c.bytes+cost > c.capacity {
		c.unlink(victim())
		c.st.Evictions++
	}
	it := c.newItem(k, page)
	c.index[it.key] = it
	c.bytes += it.Cost()
	return it, nil
}

// newItem returns an unlinked item holding a copy of page, reusing a
// spare's buffer when it is large enough but less than twice too large (a
// buffer much larger than its page would hold memory the budget does not
// count). It does not touch the index.
func (c *Core) newItem(k tier.Key, page []byte) *Item {
	var it *Item
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
		it = &Item{page: make([]byte, len(page))}
	}
	copy(it.page, page)
	it.key = k
	it.Fetched, it.Active = false, false
	return it
}

// unlink removes it from the index and from its list and keeps it as a
// spare (or lets it go when there are enough).
func (c *Core) unlink(it *Item) {
	delete(c.index, it.key)
	c.bytes -= it.Cost()
	it.list.Remove(it)
	if len(c.spares) < spares {
		c.spares = append(c.spares, it)
	}
}

// Delete counts a delete and removes k's page (from the index and from
// whichever list holds it), if any.
func (c *Core) Delete(k tier.Key) error {
	c.st.Deletes++
	if c.closed {
		c.st.Errors++
		return tier.ErrClosed
	}
	if it := c.index[k]; it != nil {
		c.unlink(it)
	}
	return nil
}

// Stats returns the counters with the current size.
func (c *Core) Stats() tier.Stats {
	s := c.st
	s.Items = int64(len(c.index))
	s.Bytes = c.bytes
	s.Capacity = c.capacity
	return s
}

// Close drops every page and the spares: the memory goes back to the
// garbage collector. The owner empties its lists; later calls fail with
// tier.ErrClosed.
func (c *Core) Close() {
	c.closed = true
	c.index = nil
	c.bytes = 0
	c.spares = nil
}
