// Package lru is an in-process tier.Tier that is an exact
// least-recently-used cache with a byte budget: an idealized classic
// memcached, without slab classes or a once-a-minute bump, so that
// experiments see the policy and nothing else.
//
//	t, err := lru.New(64 << 20)          // a budget of 64 MiB
//	if err != nil { ... }                // tier.ErrInvalidOptions
//	defer t.Close()
//	stored, err := t.Put(k, lsn, page)   // a copy; evicts from the LRU end
//	found, err := t.Get(k, lsn, dst)     // dst exactly one page long
//	keys := t.Order()                    // most recently used first
//
// Each page costs its length plus tier.ItemOverhead against the budget. A
// hit makes a page most recently used; a Put evicts from the least
// recently used end until the page fits, and a page that alone exceeds the
// budget is dropped, taking the page it would have replaced with it. Tier's
// comment tells how the real memcached differs.
//
// A Tier is safe for concurrent use: one mutex, held for every call, each
// O(1) plus O(1) per eviction. Close frees the pages; later calls fail
// with tier.ErrClosed. In its steady state a tier does not allocate: the
// buffers of a few removed pages are kept for the next Puts, outside the
// budget (at most eight pages).
package lru
