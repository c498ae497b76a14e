// Package slru is an in-process tier.Tier modelled on the segmented LRU of
// memcached 1.5 and later: three queues, HOT, WARM and COLD, with the moves
// between them made deterministic (no background thread, no clock), so
// that a run is repeatable and the policy can be compared with lru and
// ristretto on one trace.
//
//	t, err := slru.New(64<<20, nil)      // memcached's shares: HOT 20%, WARM 40%
//	t, err = slru.New(64<<20, &slru.Options{HotPercent: 10, WarmPercent: 50})
//	defer t.Close()
//	hot, warm, cold := t.Queues()        // for tests: heads first
//
// A new page enters HOT; a page hit twice reaches WARM, where every further
// hit buys it another pass before it sinks to COLD; evictions come from
// COLD's tail. Tier's comment lists the five rules with the memcached code
// each comes from, and what memcached does differently. Each page costs
// its length plus tier.ItemOverhead; the copy, drop, counter and error
// rules are lru's.
//
// A Tier is safe for concurrent use: one mutex, held for every call and
// every move it causes. Close frees the pages; later calls fail with
// tier.ErrClosed.
package slru
