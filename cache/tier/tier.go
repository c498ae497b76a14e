package tier

import (
	"errors"
	"fmt"

	"github.com/enginelab/enginelab/cache/page"
)

// A Tier is a page cache behind the buffer pool: Waffle Grid's memcached
// tier. A pool miss asks the tier before the store; what the pool pushes
// there depends on the placement mode (Mode).
//
//	engine call ──► buffer pool ──miss──► tier ──miss──► store
//	  exclusive: an evicted page ──► tier; a page read back is deleted there
//	  inclusive: a page read from the store ──► tier; a write-back overwrites it
//
// A tier is a cache, never the truth: the pool uses a page from it only if
// its checksum holds and its LSN equals the newest LSN the pool knows for
// the page, and a tier that fails is a miss. So a backend may lose, drop or
// evict anything at any time; it must only never return bytes it was not
// given for that key.
//
// Keys carry the database's id and the epoch of this open (Key), so a
// restarted process, or another database sharing a memcached, never finds
// a page it did not put there.
//
// Implementations are safe for concurrent use.
type Tier interface {
	// Get copies the page stored under k into dst (one page long) and
	// reports whether there was one. lsn is the LSN the pool expects the
	// page to carry (a backend may use it to skip a copy it knows to be
	// stale; the pool checks the image itself).
	Get(k Key, lsn uint64, dst []byte) (found bool, err error)
	// Put stores a copy of page (which carries lsn) under k, replacing
	// what was there. stored is false when the backend dropped the page
	// at once (too large, refused by its admission policy); a backend that
	// drops later, asynchronously, counts that in its Stats.
	Put(k Key, lsn uint64, page []byte) (stored bool, err error)
	// Delete removes k's page, if any.
	Delete(k Key) error
	// Stats returns the backend's own counters.
	Stats() Stats
	// Name names the backend for reports ("lru", "memcached"...).
	Name() string
	// Close releases the backend (its memory, its connections).
	Close() error
}

// Key names a page in a tier.
type Key struct {
	DB    uint64 // the database's id, random at creation
	Epoch uint64 // this open of the database
	ID    page.ID
}

// String is the key's text form, as memcached stores it: short, printable,
// no spaces ("el:" db:epoch:space:page in hex).
func (k Key) String() string {
	return fmt.Sprintf("el:%x:%x:%x:%x", k.DB, k.Epoch, k.ID.Space, k.ID.Page)
}

// Stats are a backend's own counters, since it was opened.
type Stats struct {
	Items     int64 // pages held now (-1 when the backend cannot tell)
	Bytes     int64 // bytes held now, as the backend counts them (-1 when it cannot tell)
	Capacity  int64 // the byte budget (0: unbounded or unknown)
	Puts      int64 // Put calls
	Drops     int64 // puts the backend did not keep: refused at once or later by admission
	Evictions int64 // pages removed to make room
	Gets      int64
	Hits      int64
	Deletes   int64
	Errors    int64 // calls that returned an error
}

// Mode is where pages enter the tier.
type Mode string

// Placement modes, both Waffle Grid's.
const (
	// Exclusive ("LRU mode"): a page evicted from the pool is pushed to
	// the tier (a dirty one is written to the store first); a page read
	// back from the tier is deleted from it.
	Exclusive Mode = "exclusive"
	// Inclusive ("non-LRU mode"): a page read from the store is pushed to
	// the tier at once, and a dirty page written back to the store
	// overwrites its tier copy.
	Inclusive Mode = "inclusive"
)

// Errors of the tiers.
var (
	// ErrTooLarge is returned (wrapped) when a tier cannot hold a page of
	// the database's page size at all, such as a memcached whose item
	// limit is smaller: a configuration error, found before any work.
	ErrTooLarge = errors.New("cache: page larger than the tier's item limit")

	// ErrInvalidOptions is wrapped by every option a backend's constructor
	// (or NewTraceTier) refuses; the message names the option and the
	// allowed values. It is page.ErrInvalidOptions, the one value every
	// layer's refused options wrap.
	ErrInvalidOptions = page.ErrInvalidOptions

	// ErrClosed is returned by a tier used after Close.
	ErrClosed = errors.New("cache: tier closed")
)

// ItemOverhead is what the in-process tiers (lru.Tier, slru.Tier) charge
// each page on top of its length, so that their byte budget means what a
// memcached's does: a memcached of N bytes holds fewer than N/pageSize
// pages. It is the size of memcached's item header on a 64-bit build
// (three list and hash pointers, times, lengths, refcount, flags: 48
// bytes). A real memcached adds more (the key, an 8-byte CAS, the value's
// trailing CRLF) and then rounds the item up to a slab chunk; the
// idealized tiers count none of that.
const ItemOverhead = 48

// InProcessBytes is the most memory of this process that t may hold at
// its fullest: what a memory estimate (engine.Open's check) counts for a
// tier. A tier says so with a method InProcessBytes() int64: 0 where its
// pages live in another process (memcached.Tier: the servers' memory, not
// this process's), or none at all (NullTier), and the inner tier's for a
// TraceTier. Any other tier counts its whole budget, Stats().Capacity
// (for lru.Tier and slru.Tier that includes the per-page overhead,
// ItemOverhead). A nil tier holds nothing.
func InProcessBytes(t Tier) int64 {
	if t == nil {
		return 0
	}
	if m, ok := t.(interface{ InProcessBytes() int64 }); ok {
		return m.InProcessBytes()
	}
	return max(0, t.Stats().Capacity)
}
