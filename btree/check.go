package btree

import (
	"bytes"
	"fmt"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
)

// Shape describes a tree, as found by Check.
type Shape struct {
	Height  int // levels, 1 for a lone root leaf
	Inner   int // inner nodes
	Leaves  int // leaf nodes
	Entries int // key/value pairs
	// Bytes sums what the nodes use of their pages: slots and live cells
	// (keys, values, child pointers and their headers), not the page and
	// node headers, free space or garbage.
	Bytes int
}

// Check walks the whole tree and verifies its invariants: node kinds match
// levels, keys are strictly ordered within each node and within the bounds
// set by the separators above, slot heads agree with their keys and the
// node's common prefix, every page's cells and slots fit and
// account for all its bytes, non-root leaves are non-empty, non-root inner
// nodes have at least one key, and the leaf
// chain links every leaf to its neighbours in key order. The error
// matches ErrCorruptTree.
//
// It may run beside writers. It holds shared latches on the whole path
// from the root to the node it checks (parent before child, the writers'
// order), so no split or merge changes a node on that path, nor moves
// keys across a separator it holds, while it looks below. A leaf's next
// link is followed at once, under the leaf's latch (left before right),
// and the neighbour's prev link must name the leaf: a split after the
// leaf was checked inserts a leaf that this check does not visit, so the
// neighbour's prev link is not compared with the visit order. The next
// links are: the leaf a link named when it was read is the leaf visited
// next, since between the two visits the check holds their common
// ancestor (no merge can join them under one parent) and a split adds
// pages only to the right of the page it splits. Shape counts what was
// visited: beside writers, a moment's tree or near it.
// It charges only m.Pages(): a check's node visits are not an index's cost.
func (t *Tree) Check(m Account) (Shape, error) {
	pm, _ := accounts(m)
	c := checker{t: t, m: pm}
	if err := c.node(t.root.Page, 0, -1, nil, nil); err != nil {
		return Shape{}, err
	}
	for i, no := range c.leaves {
		var want uint32
		if i > 0 {
			want = c.leaves[i-1]
		}
		if i == 0 && c.prevs[i] != want {
			// Later leaves' prev links were checked from their left
			// neighbour (node).
			return Shape{}, fmt.Errorf("%w: leaf %d has prev %d, want %d", ErrCorruptTree, no, c.prevs[i], want)
		}
		want = 0
		if i+1 < len(c.leaves) {
			want = c.leaves[i+1]
		}
		if c.nexts[i] != want {
			return Shape{}, fmt.Errorf("%w: leaf %d has next %d, want %d", ErrCorruptTree, no, c.nexts[i], want)
		}
	}
	return c.shape, nil
}

type checker struct {
	t      *Tree
	m      *cache.Meter
	shape  Shape
	leaves []uint32
	prevs  []uint32
	nexts  []uint32
}

// node checks page no at depth whose keys must lie in [lo, hi) (nil: open).
func (c *checker) node(no uint32, depth, wantLevel int, lo, hi []byte) error {
	pg, release, err := c.shared(no)
	if err != nil {
		return err
	}
	defer release()
	n := node(pg.Data())
	corrupt := func(format string, args ...any) error {
		return fmt.Errorf("%w: node %d (depth %d): %s", ErrCorruptTree, no, depth, fmt.Sprintf(format, args...))
	}
	lvl := n.level()
	if wantLevel >= 0 && lvl != wantLevel {
		return corrupt("level %d, want %d", lvl, wantLevel)
	}
	wantKind := page.KindBTreeInner
	if lvl == 0 {
		wantKind = page.KindBTreeLeaf
	}
	if k := page.KindOf(pg.Data()); k != wantKind {
		return corrupt("kind %s at level %d", k, lvl)
	}
	if depth == 0 {
		c.shape.Height = lvl + 1
	}
	if n.cellStart() < n.slotsEnd() || n.cellStart() > len(n) {
		return corrupt("cell start %d, slots end %d", n.cellStart(), n.slotsEnd())
	}
	cells := 0
	for i := 0; i < n.count(); i++ {
		off := n.slot(i)
		if off < n.cellStart() || off+n.cellSize(off) > len(n) {
			return corrupt("slot %d points at %d outside the cells", i, off)
		}
		cells += n.cellSize(off)
		k := n.key(i)
		if p := n.prefix(); p > len(k) || commonPrefix(k, n.key(0)) < p || n.head(i) != keyHead(k, p) {
			return corrupt("key %d %q does not match the node prefix %d and its head %08x", i, k, p, n.head(i))
		}
		if i > 0 && bytes.Compare(n.key(i-1), k) >= 0 {
			return corrupt("key %d %q not above key %d %q", i, k, i-1, n.key(i-1))
		}
		if lo != nil && bytes.Compare(k, lo) < 0 {
			return corrupt("key %q below the separator %q", k, lo)
		}
		if hi != nil && bytes.Compare(k, hi) >= 0 {
			return corrupt("key %q not below the separator %q", k, hi)
		}
	}
	if got := len(n) - n.cellStart(); got != cells+n.garbage() {
		return corrupt("cell area %d bytes, cells %d + garbage %d", got, cells, n.garbage())
	}
	c.shape.Bytes += n.used()
	if lvl == 0 {
		if depth > 0 && n.count() == 0 {
			return corrupt("non-root leaf is empty")
		}
		c.shape.Leaves++
		c.shape.Entries += n.count()
		c.leaves = append(c.leaves, no)
		c.prevs = append(c.prevs, n.prev())
		c.nexts = append(c.nexts, n.next())
		if next := n.next(); next != 0 {
			return c.neighbour(no, next)
		}
		return nil
	}
	if depth > 0 && n.count() == 0 {
		return corrupt("inner node below the root has no key (a single child)")
	}
	c.shape.Inner++
	for i := -1; i < n.count(); i++ {
		clo, chi := lo, hi
		if i >= 0 {
			clo = n.key(i)
		}
		if i+1 < n.count() {
			chi = n.key(i + 1)
		}
		if err := c.node(n.child(i), depth+1, lvl-1, clo, chi); err != nil {
			return err
		}
	}
	return nil
}

// shared fetches page no and latches it shared; release unlatches and
// unpins it.
func (c *checker) shared(no uint32) (pg *cache.Page, release func(), err error) {
	pg, err = c.t.pool.Fetch(c.m, c.t.id(no))
	if err != nil {
		return nil, nil, err
	}
	pg.RLatch()
	return pg, func() {
		pg.RUnlatch()
		pg.Unpin(false)
	}, nil
}

// neighbour checks, with leaf no latched, that its right neighbour next
// is a leaf whose prev link names no.
func (c *checker) neighbour(no, next uint32) error {
	pg, release, err := c.shared(next)
	if err != nil {
		return err
	}
	defer release()
	if k := page.KindOf(pg.Data()); k != page.KindBTreeLeaf {
		return fmt.Errorf("%w: leaf %d links to page %d of kind %s", ErrCorruptTree, no, next, k)
	}
	if prev := node(pg.Data()).prev(); prev != no {
		return fmt.Errorf("%w: leaf %d has prev %d, want %d", ErrCorruptTree, next, prev, no)
	}
	return nil
}
