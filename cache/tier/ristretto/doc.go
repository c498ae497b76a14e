// Package ristretto is an in-process tier.Tier over a ristretto cache
// (TinyLFU admission, sampled-LFU eviction): the tier without the network,
// to compare placement modes and policies against memcached at memory
// speed.
//
//	t, err := ristretto.New(64 << 20)    // page bytes only; ristretto's own
//	if err != nil { ... }                // per-item memory comes on top
//	defer t.Close()
//	stored, err := t.Put(k, lsn, page)   // queued: applied later
//	t.Wait()                             // every Put so far applied
//	found, err := t.Get(k, lsn, dst)
//
// Ristretto applies a Set of a new key asynchronously, on a goroutine of
// its own, and its admission policy may refuse a page after Put said it
// was stored (counted in Drops then). So a Get right after a Put may miss,
// and a key put twice before the buffer drains needs care to keep its
// newer page (Tier.onReject tells how). Wait drains the buffer: tests call
// it before they read back; the pool never needs to.
//
// A Tier is safe for concurrent use. Close stops ristretto's goroutines;
// no call may be in flight during it, and later calls fail with
// tier.ErrClosed.
package ristretto
