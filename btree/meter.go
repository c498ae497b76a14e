package btree

import (
	"fmt"
	"strings"

	"github.com/enginelab/enginelab/cache"
)

// MaxLevels bounds the per-depth node visit counters; visits deeper than
// that are counted in the last slot.
const MaxLevels = 8

// TreeCounts counts the tree's own events for one caller. Like cache.Meter
// it is plain integers owned by one goroutine at a time; totals are sums
// (Add). Only this package increments them.
//
// The name carries the package's because a transaction's meter embeds it
// next to other layers' counts, and two embedded types may not share a
// name.
type TreeCounts struct {
	// NodeVisits counts B+tree nodes latched, by depth from the root (0 is
	// the root; a tree of height 3 visits depths 0, 1 and 2 on a point get).
	NodeVisits [MaxLevels]int64
	// Splits and Merges count structural changes.
	Splits int64
	Merges int64
}

// NodeVisitsTotal sums NodeVisits over all depths.
func (c *TreeCounts) NodeVisitsTotal() int64 {
	var n int64
	for _, v := range c.NodeVisits {
		n += v
	}
	return n
}

// Add adds o's counts to c.
func (c *TreeCounts) Add(o *TreeCounts) { c.combine(o, 1) }

// Sub subtracts o's counts from c.
func (c *TreeCounts) Sub(o *TreeCounts) { c.combine(o, -1) }

// Diff returns c − o without changing either.
func (c *TreeCounts) Diff(o *TreeCounts) TreeCounts {
	d := *c
	d.Sub(o)
	return d
}

func (c *TreeCounts) combine(o *TreeCounts, sign int64) {
	if c == nil || o == nil {
		return
	}
	for i := range c.NodeVisits {
		c.NodeVisits[i] += sign * o.NodeVisits[i]
	}
	c.Splits += sign * o.Splits
	c.Merges += sign * o.Merges
}

// String lists the non-zero counts.
func (c *TreeCounts) String() string {
	var b strings.Builder
	add := func(name string, v int64) {
		if v != 0 {
			fmt.Fprintf(&b, "%s=%d ", name, v)
		}
	}
	for d, v := range c.NodeVisits {
		add(fmt.Sprintf("nodes.d%d", d), v)
	}
	add("splits", c.Splits)
	add("merges", c.Merges)
	return strings.TrimSpace(b.String())
}

// Account is what a call of the tree charges: the pool counts the pages it
// requests in Pages(), the tree counts its node visits, splits and merges in
// Tree(). Either may return nil (that half counts nothing), and a nil
// Account counts nothing. Each operation calls the two methods once, when
// it starts (an iterator when NewIter makes it), never per page.
//
// *Meter is the ready-made Account; a caller that keeps more counters (a
// transaction's meter) implements Account on its own struct, which embeds
// cache.Meter and TreeCounts, with nil-safe methods on a pointer receiver.
type Account interface {
	Pages() *cache.Meter
	Tree() *TreeCounts
}

// Meter holds the page counts and the tree's counts of one caller, for a
// user of the tree alone: a test or a tool that wants the cost of an
// index lookup.
//
//	var m btree.Meter
//	val, found, err := tree.Get(&m, key, nil)
//	// m.NodeVisits[0] == 1 (the root), m.PoolHits + m.PoolMisses == height
type Meter struct {
	cache.Meter
	TreeCounts
}

// Pages returns the page counts; nil for a nil m.
func (m *Meter) Pages() *cache.Meter {
	if m == nil {
		return nil
	}
	return &m.Meter
}

// Tree returns the tree's counts; nil for a nil m.
func (m *Meter) Tree() *TreeCounts {
	if m == nil {
		return nil
	}
	return &m.TreeCounts
}

// Add adds o's counters to m.
func (m *Meter) Add(o *Meter) {
	if m == nil || o == nil {
		return
	}
	m.Meter.Add(&o.Meter)
	m.TreeCounts.Add(&o.TreeCounts)
}

// Sub subtracts o's counters from m.
func (m *Meter) Sub(o *Meter) {
	if m == nil || o == nil {
		return
	}
	m.Meter.Sub(&o.Meter)
	m.TreeCounts.Sub(&o.TreeCounts)
}

// Diff returns m − o without changing either.
func (m *Meter) Diff(o *Meter) Meter {
	d := *m
	d.Sub(o)
	return d
}

// String lists the non-zero counters, the pages' first.
func (m *Meter) String() string {
	return joinNonEmpty(m.Meter.String(), m.TreeCounts.String())
}

func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + " " + b
}

// accounts splits a into its two halves, once per operation.
func accounts(a Account) (*cache.Meter, *TreeCounts) {
	if a == nil {
		return nil, nil
	}
	return a.Pages(), a.Tree()
}

// treeCounts is the tree's half of a, for the In methods, whose pages the
// mtr's meter counts.
func treeCounts(a Account) *TreeCounts {
	if a == nil {
		return nil
	}
	return a.Tree()
}
