package cache

import "github.com/enginelab/enginelab/cache/page"

// pageTable maps resident page ids to their frames. Page numbers of a
// space are dense (allocated from 1 upward), so each space gets a slice
// indexed by page number instead of a hash table: a lookup is one small-map
// probe for the space (a handful of entries, always in cache) and one slice
// index, where a hash map over every resident page would add a cache miss
// or two to each hit on a large pool. The cost is 8 bytes for every page
// number up to the highest one resident in each space.
//
// Not safe for concurrent use: the pool's lock guards it.
type pageTable struct {
	spaces map[uint32][]*Page
	n      int
	// last caches the most recent space's slice: most lookups in a row
	// are in one space.
	lastSpace uint32
	last      []*Page
}

func newPageTable() pageTable {
	return pageTable{spaces: make(map[uint32][]*Page), lastSpace: ^uint32(0)}
}

func (t *pageTable) slice(space uint32) []*Page {
	if space == t.lastSpace {
		return t.last
	}
	s := t.spaces[space]
	t.lastSpace, t.last = space, s
	return s
}

func (t *pageTable) get(id page.ID) *Page {
	s := t.slice(id.Space)
	if int(id.Page) < len(s) {
		return s[id.Page]
	}
	return nil
}

func (t *pageTable) put(id page.ID, f *Page) {
	s := t.slice(id.Space)
	if int(id.Page) >= len(s) {
		ns := make([]*Page, max(int(id.Page)+1, 2*len(s), 64))
		copy(ns, s)
		s = ns
		t.spaces[id.Space] = s
		t.lastSpace, t.last = id.Space, s
	}
	if s[id.Page] == nil {
		t.n++
	}
	s[id.Page] = f
}

func (t *pageTable) remove(id page.ID) {
	s := t.slice(id.Space)
	if int(id.Page) < len(s) && s[id.Page] != nil {
		s[id.Page] = nil
		t.n--
	}
}

func (t *pageTable) len() int { return t.n }
