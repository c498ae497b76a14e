package ristretto

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/enginelab/enginelab/cache/page"

	rc "github.com/dgraph-io/ristretto/v2"
	"github.com/enginelab/enginelab/cache/tier"
)

// Tier is an in-process tier.Tier over a ristretto cache (TinyLFU
// admission, sampled-LFU eviction): the tier without the network, to
// compare placement modes and policies against the memcached tier at
// memory speed.
//
// Ristretto applies a Set of a new key asynchronously: Put hands the page
// to a buffer that one goroutine drains, and only then is the page
// admitted (or rejected), and visible to Get. Put does not wait for that
// (see Put), so a Get right after a Put may miss; Wait applies every Put
// made so far. A Put over a page the cache holds replaces it at once.
//
// Invariant: once Wait has returned, a key holds the page of its latest
// Put, or nothing (dropped, evicted, deleted); never an older page, except
// in the races described at Put and onReject.
//
// Counting. Puts, Drops, Evictions, Gets, Hits and Deletes are counted
// here. Bytes is what ristretto's policy has charged (MaxCost minus
// RemainingCost, read under its lock), Items comes from its metrics (keys
// added minus keys removed, by eviction or Delete); both are exact once
// the buffer is drained. Bytes and Capacity count page bytes only: the
// cache is built with IgnoreInternalCost, so each page costs its length,
// and ristretto's own per-item memory (about a hundred bytes, plus 3 bytes
// per admission counter) comes on top of the budget.
type Tier struct {
	c        *rc.Cache[uint64, *ristrettoEntry]
	capacity int64

	puts, immediateDrops, lateDrops atomic.Int64
	evictions, deletes              atomic.Int64
	gets, hits, errors              atomic.Int64

	seq atomic.Uint64 // numbers Puts, so that a later one wins

	// deleting is read-held by Delete, so that onReject can tell that no
	// Delete runs while it re-applies a page.
	deleting sync.RWMutex

	closed atomic.Bool
}

var _ tier.Tier = (*Tier)(nil)

// ristrettoEntry is a page as the tier holds it: never modified once
// stored, so that a Get may copy from it while a Put replaces it.
type ristrettoEntry struct {
	key  tier.Key // the full key, checked on Get: see ristrettoHash
	seq  uint64   // the Put's number (Tier.seq)
	page []byte
}

// New makes an in-process tier holding up to capacityBytes bytes of pages.
func New(capacityBytes int64) (*Tier, error) {
	if capacityBytes <= 0 {
		return nil, fmt.Errorf("cache: %w: ristretto tier capacity %d: want > 0", tier.ErrInvalidOptions, capacityBytes)
	}
	t := &Tier{capacity: capacityBytes}
	// Ristretto wants about ten admission counters per item it will hold.
	// The page size is not known here; counting with the smallest one
	// errs on the generous side (3 bytes a counter: under 1% of the
	// budget even for 4 KiB pages).
	items := max(capacityBytes/page.MinSize, 1)
	c, err := rc.NewCache(&rc.Config[uint64, *ristrettoEntry]{
		NumCounters: max(10*items, 1000),
		MaxCost:     capacityBytes,
		BufferItems: 64,
		// Metrics are off by default; Items comes from them.
		Metrics: true,
		// Otherwise ristretto adds its own per-item size to each cost, and
		// MaxCost would no longer be a page budget.
		IgnoreInternalCost: true,
		// Only pages the policy threw out (not Delete, which goes through
		// OnExit alone).
		OnEvict: func(*rc.Item[*ristrettoEntry]) {
			if !t.closed.Load() { // Close empties the cache through OnEvict
				t.evictions.Add(1)
			}
		},
		OnReject: t.onReject,
		// A page replaces the one held under its key only if it was put
		// later: onReject's re-applied pages may arrive after newer ones.
		ShouldUpdate: func(cur, prev *ristrettoEntry) bool { return cur.seq > prev.seq },
	})
	if err != nil {
		return nil, fmt.Errorf("cache: %w: ristretto tier: %v", tier.ErrInvalidOptions, err)
	}
	t.c = c
	return t, nil
}

// Name implements tier.Tier.
func (t *Tier) Name() string { return "ristretto" }

// Get implements tier.Tier. lsn is not used: the pool compares the page's LSN
// itself and counts a stale copy as such, which it could not do if the
// tier turned it into a miss.
func (t *Tier) Get(k tier.Key, lsn uint64, dst []byte) (bool, error) {
	if t.closed.Load() {
		t.errors.Add(1)
		return false, tier.ErrClosed
	}
	t.gets.Add(1)
	e, ok := t.c.Get(ristrettoHash(k))
	if !ok || e.key != k {
		return false, nil
	}
	if len(e.page) != len(dst) {
		t.errors.Add(1)
		return false, fmt.Errorf("cache: ristretto tier: page %s holds %d bytes, want %d", k.ID, len(e.page), len(dst))
	}
	copy(dst, e.page)
	t.hits.Add(1)
	return true, nil
}

// Put implements tier.Tier. It stores a copy of page (the caller's buffer is
// reused at once) and returns without waiting for ristretto to admit it:
// stored is false only when ristretto refused the page on the spot (its
// set buffer full) or the page exceeds the whole budget; a later refusal
// by the admission policy is counted in Drops.
//
// Not waiting costs no correctness: the pool does not expect to read its
// own put back, and checks the LSN of every page it gets. It costs hits:
// a Get soon after a Put of a new key misses. Waiting in every Put (Wait)
// would cost a round trip to ristretto's goroutine per Put, which about
// doubles the cost of a Put of a 16 KiB page (BenchmarkTierPutRistretto).
// A key put twice before the buffer is drained is handled by onReject.
func (t *Tier) Put(k tier.Key, lsn uint64, page []byte) (bool, error) {
	if t.closed.Load() {
		t.errors.Add(1)
		return false, tier.ErrClosed
	}
	t.puts.Add(1)
	if int64(len(page)) > t.capacity {
		// The page it replaces goes too, as in the other backends: no
		// older image outlives a failed put.
		t.immediateDrops.Add(1)
		t.del(k)
		return false, nil
	}
	e := &ristrettoEntry{key: k, seq: t.seq.Add(1), page: append([]byte(nil), page...)}
	if !t.c.Set(ristrettoHash(k), e, int64(len(page))) {
		// Only a new key is refused here (a present one is updated in
		// place), so there is no older page to remove.
		t.immediateDrops.Add(1)
		return false, nil
	}
	return true, nil
}

// Delete implements tier.Tier. The page disappears from Get at once.
func (t *Tier) Delete(k tier.Key) error {
	if t.closed.Load() {
		t.errors.Add(1)
		return tier.ErrClosed
	}
	t.deletes.Add(1)
	t.del(k)
	return nil
}

func (t *Tier) del(k tier.Key) {
	t.deleting.RLock()
	t.c.Del(ristrettoHash(k))
	t.deleting.RUnlock()
}

// onReject is called, on ristretto's goroutine, for a page that Set
// accepted into its buffer but the policy refused when it got there:
// TinyLFU judged it less worth keeping than the pages it would evict, or
// the key was in the cache by then. The second case is a key put twice
// before the buffer was drained: both Puts were queued as new keys, the
// first one's page went in, and ristretto refuses the second as a key it
// has ("an update is not an addition") although that page is the newer.
// Left alone, the key would keep its older page (which the pool would
// find stale). So a refused page whose key holds an older page replaces
// it, as a Put over a present key does.
//
// Best effort, counted as a drop when skipped: while a Delete runs,
// re-applying could bring back a page that Delete has just removed (Set
// of a key found absent queues it as new), so the page is dropped then;
// onReject cannot wait for the Delete, which may be waiting for this very
// goroutine to make room in the buffer. A later Put that wins against the
// re-applied page is not affected (ShouldUpdate), unless ristretto falls
// back to queueing the re-applied page as new and the later page is
// evicted before it arrives: an older page, found stale by the pool.
func (t *Tier) onReject(it *rc.Item[*ristrettoEntry]) {
	e := it.Value
	if e == nil || t.closed.Load() || !t.deleting.TryLock() {
		t.lateDrops.Add(1)
		return
	}
	defer t.deleting.Unlock()
	cur, ok := t.c.Get(it.Key)
	switch {
	case !ok: // refused by TinyLFU (or deleted since)
		t.lateDrops.Add(1)
		return
	case cur.seq >= e.seq: // a later Put replaced it already (or it is in)
		if cur.key != e.key {
			t.lateDrops.Add(1)
		}
		return
	}
	// Present and older: Set updates it in place (ShouldUpdate agrees),
	// without going through admission.
	t.c.Set(it.Key, e, it.Cost)
}

// Wait blocks until every Put and Delete made before it has been applied,
// so that a Get sees their outcome and Stats counts them. Tests call it
// before they read back or count; the pool never needs to.
func (t *Tier) Wait() {
	if !t.closed.Load() {
		t.c.Wait()
	}
}

// Stats implements tier.Tier. After Close the tier holds nothing (Items and
// Bytes are 0); the call counters remain.
func (t *Tier) Stats() tier.Stats {
	var items, bytes int64
	if !t.closed.Load() {
		// Removals are read before additions: both only grow, so the
		// difference cannot go negative however the drain interleaves
		// (it may count a page added meanwhile).
		out := t.c.Metrics.KeysEvicted()
		items = int64(t.c.Metrics.KeysAdded() - out)
		// One reading, not two counters: never above MaxCost, as long as
		// no key is put again with another length (ristretto charges the
		// difference without evicting; the pool's pages all have one).
		bytes = t.c.MaxCost() - t.c.RemainingCost()
	}
	return tier.Stats{
		Items:     items,
		Bytes:     bytes,
		Capacity:  t.capacity,
		Puts:      t.puts.Load(),
		Drops:     t.immediateDrops.Load() + t.lateDrops.Load(),
		Evictions: t.evictions.Load(),
		Gets:      t.gets.Load(),
		Hits:      t.hits.Load(),
		Deletes:   t.deletes.Load(),
		Errors:    t.errors.Load(),
	}
}

// Close implements tier.Tier: it drops every page and stops ristretto's
// goroutines. Calls made after Close fail with tier.ErrClosed; none may be in
// flight during it.
func (t *Tier) Close() error {
	if t.closed.Swap(true) {
		return nil
	}
	t.c.Close()
	return nil
}

// ristrettoHash is the key ristretto files a page under. Ristretto keys are
// 64-bit hashes: a string key would be hashed twice (a key hash, and a
// "conflict" hash stored beside it and compared on Get), at the price of
// building the string on every call. The tier instead keys by this hash
// and relies on its own check: each entry carries its full tier.Key and Get
// returns a page only if that key is k. Two keys with one hash therefore
// share a slot (a Put of one replaces the other, a Delete of one removes
// the other) but never read each other's page. They cannot even collide
// within one database and open: for fixed DB and Epoch the hash is a
// bijection of the page id (every step below is invertible). And the pool
// would catch a wrong page anyway, by the page id in its header, its
// checksum and its LSN.
func ristrettoHash(k tier.Key) uint64 {
	h := mix64(k.DB ^ mix64(k.Epoch^0x9e3779b97f4a7c15))
	return mix64(h ^ (uint64(k.ID.Space)<<32 | uint64(k.ID.Page)))
}

// mix64 is MurmurHash3's 64-bit finaliser: a bijection that spreads every
// input bit over the output (ristretto shards by the low bits).
func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}
