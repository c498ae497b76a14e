package slab

import (
	"fmt"
	"sync"

	"github.com/enginelab/enginelab/cache/tier"
)

// Tier is a tier.Tier that holds pages in process the way one memcached
// server of the given Params would: a Server decides what fits and what
// is evicted (slab classes, slab pages within the memory limit, an LRU
// per class, Waffle Grid's MRU patch if asked), and Tier keeps a copy of
// each page the Server holds. Keys are tier.Key.String(), as the
// memcached tier sends them, so items are the sizes a real server's
// would be.
//
// Get copies into a dst exactly the page's length; Put copies its page.
// The LSNs are not used. A Put of a page no class holds is dropped
// (stored false) and removes the key's older page. Every call holds one
// mutex.
type Tier struct {
	mu      sync.Mutex
	srv     *Server
	pages   map[string][]byte
	spare   [][]byte // buffers of evicted and deleted pages, for reuse
	deletes int64
	errors  int64
	closed  bool
}

var _ tier.Tier = (*Tier)(nil)

// NewTier makes an empty tier modelling a server of parameters p; invalid
// parameters are refused with an error wrapping tier.ErrInvalidOptions.
func NewTier(p Params) (*Tier, error) {
	t := &Tier{pages: make(map[string][]byte)}
	srv, err := NewServer(p, t.evicted)
	if err != nil {
		return nil, err
	}
	t.srv = srv
	return t, nil
}

// evicted drops the copy of a page the server evicted.
// REQUIRES: t.mu held.
func (t *Tier) evicted(key string) {
	t.release(key)
}

func (t *Tier) release(key string) {
	if b, ok := t.pages[key]; ok {
		delete(t.pages, key)
		if len(t.spare) < 8 {
			t.spare = append(t.spare, b)
		}
	}
}

// Get implements tier.Tier.
func (t *Tier) Get(k tier.Key, _ uint64, dst []byte) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		t.errors++
		return false, tier.ErrClosed
	}
	key := k.String()
	if !t.srv.Get(key) {
		return false, nil
	}
	b := t.pages[key]
	if len(b) != len(dst) {
		t.errors++
		return false, fmt.Errorf("cache: slab tier: page %s holds %d bytes, dst %d", k.ID, len(b), len(dst))
	}
	copy(dst, b)
	return true, nil
}

// Put implements tier.Tier.
func (t *Tier) Put(k tier.Key, _ uint64, page []byte) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		t.errors++
		return false, tier.ErrClosed
	}
	key := k.String()
	if !t.srv.Set(key, len(page), 0) {
		t.release(key)
		return false, nil
	}
	b, ok := t.pages[key]
	if !ok || cap(b) < len(page) {
		b = nil
		for i := len(t.spare) - 1; i >= 0; i-- {
			if cap(t.spare[i]) >= len(page) {
				b = t.spare[i]
				t.spare = append(t.spare[:i], t.spare[i+1:]...)
				break
			}
		}
		if b == nil {
			b = make([]byte, len(page))
		}
	}
	b = b[:len(page)]
	copy(b, page)
	t.pages[key] = b
	return true, nil
}

// Delete implements tier.Tier.
func (t *Tier) Delete(k tier.Key) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.deletes++
	if t.closed {
		t.errors++
		return tier.ErrClosed
	}
	key := k.String()
	if t.srv.Delete(key) {
		t.release(key)
	}
	return nil
}

// Stats implements tier.Tier, from the server's counters: Items is
// curr_items, Bytes memcached's bytes (ITEM_ntotal summed, not the slab
// pages taken), Capacity the memory limit, Drops the Puts no class held.
func (t *Tier) Stats() tier.Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.srv.Stats()
	return tier.Stats{Items: s.CurrItems, Bytes: s.Bytes, Capacity: s.LimitMaxbytes, Puts: s.CmdSet,
		Drops: s.OutOfMemory, Evictions: s.Evictions, Gets: s.CmdGet, Hits: s.GetHits,
		Deletes: t.deletes, Errors: t.errors}
}

// MemcachedStats returns the server's counters in memcached's terms
// ("stats").
func (t *Tier) MemcachedStats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.srv.Stats()
}

// SlabStats returns the classes in use ("stats slabs").
func (t *Tier) SlabStats() []ClassStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.srv.ClassStats()
}

// Params returns the modelled server's parameters, defaults applied.
func (t *Tier) Params() Params { return t.srv.Params() }

// Name implements tier.Tier: "memcached-" and the release.
func (t *Tier) Name() string { return "memcached-" + string(t.srv.p.Release) }

// Close implements tier.Tier: it frees every page. Later calls fail with
// tier.ErrClosed; closing again is a no-op.
func (t *Tier) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	t.pages, t.spare = nil, nil
	return nil
}
