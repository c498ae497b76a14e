package slab

import (
	"time"
)

// Server is the model of one memcached server's memory: its slab
// allocator and its per-class LRUs, keys and sizes only (Tier adds the
// values). Every request is applied at once, in the caller's goroutine;
// a Server is not safe for concurrent use (Tier locks it).
//
// What it does, and the memcached code it follows (1.2.5's and 1.3.2's
// items.c and slabs.c):
//
//   - Set (process_update_command, do_item_alloc, do_store_item): the
//     item's size (ItemSize) picks its class (slabs_clsid); a chunk comes
//     from the class's free chunks, or from a new slab page if the memory
//     limit allows it (do_slabs_alloc, do_slabs_newslab; a class's first
//     page is always allowed), or else by evicting the tail of the class's
//     LRU (do_item_alloc: the first of up to 50 items from the tail that
//     no request holds: here always the tail). Only then is an item under
//     the same key unlinked (do_item_replace), so a Set of a key held can
//     evict another item first. The new item goes to its LRU's head.
//   - Get (process_get_command, do_item_get, do_item_update): a hit moves
//     the item to its LRU's head if it was last moved more than 60
//     seconds ago (ITEM_UPDATE_INTERVAL, in memcached's unsigned
//     seconds; see Params.Now); with Params.MRUPatch, to its tail.
//   - Delete (process_delete_command with no delay, do_item_unlink): the
//     item's chunk goes back to its class's free chunks.
//
// No item expires (Waffle Grid sets pages without an expiry), so expired
// items, delete-locks, flush_all and the 1.6 LRU crawler are not
// modelled; nor are 1.6's segmented LRU and slab page moves (slab_automove),
// which change which item an eviction takes but not how many items fit.
type Server struct {
	p       Params
	classes []class
	index   map[string]*item
	malloc  int64 // mem_malloced: slab pages taken, in bytes
	st      Stats
	onEvict func(key string)
}

type class struct {
	Class
	pages      int64
	free       int64 // chunks of its pages that hold no item
	head, tail *item // its LRU, head most recently used
	items      int64
	evicted    int64
}

type item struct {
	key        string
	size       int
	cls        *class
	time       uint32 // rel_time_t of its last move to the head
	prev, next *item  // prev toward the head
}

// Stats are a server's counters in the names of memcached's "stats".
type Stats struct {
	CurrItems     int64 // curr_items
	TotalItems    int64 // total_items: items ever linked
	Bytes         int64 // bytes: the ItemSize of every item held
	Evictions     int64 // evictions: items unlinked to make room
	CmdGet        int64 // cmd_get: keys asked for
	CmdSet        int64 // cmd_set
	GetHits       int64 // get_hits
	GetMisses     int64 // get_misses
	DeleteHits    int64 // delete_hits (1.3 and later)
	DeleteMisses  int64 // delete_misses
	LimitMaxbytes int64 // limit_maxbytes: -m
	TotalMalloced int64 // total_malloced ("stats slabs"): slab pages taken
	PointerSize   int   // pointer_size, in bits
	Threads       int   // threads
	OutOfMemory   int64 // sets refused: no class holds the item
}

// ClassStats are one class's, in the names of "stats slabs" and
// "stats items".
type ClassStats struct {
	Class
	TotalPages  int64 // total_pages
	TotalChunks int64 // total_chunks
	UsedChunks  int64 // used_chunks
	FreeChunks  int64 // free_chunks (and free_chunks_end)
	Number      int64 // items:number
	Evicted     int64 // items:evicted
}

// NewServer returns an empty server with parameters p, or an error
// wrapping tier.ErrInvalidOptions. onEvict, if not nil, is told the key of
// every item an eviction unlinks.
func NewServer(p Params, onEvict func(key string)) (*Server, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	p.ensureDefaults()
	cs := p.Classes()
	s := &Server{p: p, classes: make([]class, len(cs)), index: make(map[string]*item), onEvict: onEvict}
	for i, c := range cs {
		s.classes[i].Class = c
	}
	s.st.LimitMaxbytes = p.MaxBytes
	s.st.PointerSize = 8 * p.PointerSize
	s.st.Threads = p.Threads
	return s, nil
}

// Params returns the server's parameters, defaults applied.
func (s *Server) Params() Params { return s.p }

// currentTime is memcached's current_time: seconds since the server
// started, plus the 2 seconds stats.started is set back by.
func (s *Server) currentTime() uint32 {
	var d time.Duration
	if s.p.Now != nil {
		d = s.p.Now()
	}
	return uint32(2 + d/time.Second)
}

// Set stores an item of valueLen bytes under key and reports whether it
// did: false when no class holds it (memcached's "SERVER_ERROR object too
// large for cache"), in which case an item held under key is unlinked too
// (as 1.4 and later do; 1.2.5 left it).
func (s *Server) Set(key string, valueLen int, flags uint32) bool {
	s.st.CmdSet++
	size := s.p.ItemSize(len(key), valueLen, flags)
	ci := s.classFor(size)
	if ci < 0 {
		s.st.OutOfMemory++
		if old := s.index[key]; old != nil {
			s.unlink(old)
		}
		return false
	}
	c := &s.classes[ci]
	if !s.alloc(c) {
		// do_item_alloc: evict the LRU tail, then allocate again.
		v := c.tail
		c.evicted++
		s.st.Evictions++
		s.unlink(v)
		if s.onEvict != nil {
			s.onEvict(v.key)
		}
		s.alloc(c)
	}
	if old := s.index[key]; old != nil {
		s.unlink(old)
	}
	it := &item{key: key, size: size, cls: c, time: s.currentTime()}
	s.index[key] = it
	c.pushFront(it)
	c.items++
	s.st.CurrItems++
	s.st.TotalItems++
	s.st.Bytes += int64(size)
	return true
}

// alloc takes a chunk of c for a new item: a free one, or one of a new
// slab page if the limit allows (do_slabs_alloc, do_slabs_newslab).
func (s *Server) alloc(c *class) bool {
	if c.free == 0 {
		n := s.p.PageLen(c.Class)
		if s.malloc+n > s.p.MaxBytes && c.pages > 0 {
			return false
		}
		s.malloc += n
		c.pages++
		c.free += int64(c.PerPage)
	}
	c.free--
	return true
}

func (s *Server) classFor(size int) int {
	for i := range s.classes {
		if size <= s.classes[i].Size {
			return i
		}
	}
	return -1
}

// unlink removes it from the index and its LRU; its chunk is free again
// (do_item_unlink, item_free, do_slabs_free).
func (s *Server) unlink(it *item) {
	c := it.cls
	delete(s.index, it.key)
	c.remove(it)
	c.items--
	c.free++
	s.st.CurrItems--
	s.st.Bytes -= int64(it.size)
}

// Get reports whether the server holds key, counting a hit or a miss, and
// moves a hit in its LRU as memcached does (see Server).
func (s *Server) Get(key string) bool {
	s.st.CmdGet++
	it := s.index[key]
	if it == nil {
		s.st.GetMisses++
		return false
	}
	s.st.GetHits++
	c := it.cls
	now := s.currentTime()
	switch {
	case s.p.MRUPatch:
		c.remove(it)
		c.pushBack(it)
		it.time = now
	case it.time < now-updateInterval: // rel_time_t arithmetic: wraps
		c.remove(it)
		c.pushFront(it)
		it.time = now
	}
	return true
}

// Delete unlinks key's item, reporting whether there was one.
func (s *Server) Delete(key string) bool {
	it := s.index[key]
	if it == nil {
		s.st.DeleteMisses++
		return false
	}
	s.st.DeleteHits++
	s.unlink(it)
	return true
}

// Holds reports whether the server holds key, without counting or moving
// anything.
func (s *Server) Holds(key string) bool { return s.index[key] != nil }

// Stats returns the server's counters.
func (s *Server) Stats() Stats {
	st := s.st
	st.TotalMalloced = s.malloc
	return st
}

// ClassStats returns the classes that hold at least one slab page, in
// class order, as "stats slabs" lists them.
func (s *Server) ClassStats() []ClassStats {
	var out []ClassStats
	for i := range s.classes {
		c := &s.classes[i]
		if c.pages == 0 {
			continue
		}
		total := c.pages * int64(c.PerPage)
		out = append(out, ClassStats{Class: c.Class, TotalPages: c.pages, TotalChunks: total,
			UsedChunks: total - c.free, FreeChunks: c.free, Number: c.items, Evicted: c.evicted})
	}
	return out
}

// LRU lists class id's keys from the head (most recently used) to the
// tail: for tests (it allocates).
func (s *Server) LRU(id int) []string {
	var out []string
	for i := range s.classes {
		if s.classes[i].ID != id {
			continue
		}
		for it := s.classes[i].head; it != nil; it = it.next {
			out = append(out, it.key)
		}
	}
	return out
}

func (c *class) pushFront(it *item) {
	it.prev, it.next = nil, c.head
	if c.head != nil {
		c.head.prev = it
	} else {
		c.tail = it
	}
	c.head = it
}

func (c *class) pushBack(it *item) {
	it.prev, it.next = c.tail, nil
	if c.tail != nil {
		c.tail.next = it
	} else {
		c.head = it
	}
	c.tail = it
}

func (c *class) remove(it *item) {
	if it.prev != nil {
		it.prev.next = it.next
	} else {
		c.head = it.next
	}
	if it.next != nil {
		it.next.prev = it.prev
	} else {
		c.tail = it.prev
	}
	it.prev, it.next = nil, nil
}
