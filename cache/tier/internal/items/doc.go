// Package items is what the in-process tiers (lru.Tier, slru.Tier) share:
// the items that hold their pages, the intrusive lists their policies
// order items on, and Core, the index with the byte budget, the counters
// and the spare buffers. A policy keeps a Core and its lists under one
// mutex of its own, and decides only where items go: Core.Put asks it for
// victims, and it puts the item Put returns on a list.
//
//	t.core, err = items.NewCore("lru", capacity)
//	it, err := t.core.Put(k, page, t.list.Tail) // evicts list tails as needed
//	if it != nil {
//		t.list.PushFront(it)
//	}
//
// Not safe for concurrent use: the owning tier's lock guards everything.
// Internal: the policies' own packages are the API.
package items
