// Package tier defines the remote page tier: a page cache behind the buffer
// pool (Waffle Grid's memcached tier), which a pool miss asks before the
// store. It holds the Tier interface the pool calls, its keys and counters,
// the placement modes, and the page trace; the backends are packages of
// their own, so that a program links only the ones it uses:
//
//	tier/lru        an exact LRU with a byte budget, in process
//	tier/slru       memcached's segmented LRU (HOT, WARM, COLD), in process
//	tier/ristretto  a ristretto cache (TinyLFU admission), in process
//	tier/slab       a model of one memcached server's memory (its slab
//	                allocator, per release and pointer size), in process
//	tier/memcached  one or more memcached servers
//	tier/tiertest   the conformance checks every backend's tests run
//
// # Basics
//
// The pool owns the protocol (cache.Options.Tier and TierMode); a backend
// only stores bytes under keys:
//
//	t, err := lru.New(256 << 20)                     // or slru, ristretto, memcached
//	pool, err := cache.NewPool(st, &cache.Options{
//		Tier: t, TierMode: tier.Exclusive,           // evicted pages go to the tier
//	}, &cache.Wiring{
//		TierDB: id, TierEpoch: epoch,                // st.Identity()
//		Log: lg,
//	})
//	defer t.Close()                                  // the pool does not close it
//
// A Key is the database's id, the number of this open (its epoch) and the
// page id, so that a tier shared by several databases, or kept across a
// restart, never hands one a page it did not put there. A tier is a cache,
// never the truth: the pool uses a page from it only if its checksum holds
// and its LSN is the newest the pool knows for the page; a backend may
// lose, drop or evict anything at any time, and a tier that fails is a
// miss. Stats are the backend's own counters; the pool counts its side in
// cache.Meter (TierGets, TierHits, TierStale, ...).
//
// InProcessBytes says how much of this process's memory a tier may hold
// (0 for memcached, whose pages live in the servers): what the engine's
// memory check counts. ItemOverhead is the per-page charge of the
// in-process lru and slru tiers, so that their budgets mean what a
// memcached's does.
//
// # Traces
//
// A TraceTier records every call the pool makes to a tier, in a text
// format (Trace draws it), and forwards it; over a NullTier, which stores
// nothing, it records the pool's demand alone. ReadTrace reads one back,
// and sim.ReplayTrace replays it into any policy at any size.
//
// # Concurrency
//
// Every Tier is safe for concurrent use; the pool calls it without holding
// its own lock. Close must not race with other calls.
//
// # Caveats
//
// Get copies into a dst exactly one page long, and Put copies its page:
// no backend keeps a caller's buffer. ristretto applies a Put later (its
// Wait applies every Put made so far), so a Get right after a Put may
// miss; tiertest treats it and memcached as inexact.
package tier
