package heap

import (
	"fmt"
	"strings"

	"github.com/enginelab/enginelab/cache"
)

// HeapCounts counts the heap's own events for one caller. Like cache.Meter
// it is plain integers owned by one goroutine at a time; totals are sums
// (Add). Only this package increments them.
//
// The type and its fields carry the package's name because a transaction's
// meter embeds it next to the B+tree's counts and cache.Meter, and reads
// them as its own fields: m.HeapFetches must not be mistaken for a count of
// another layer's.
type HeapCounts struct {
	// HeapFetches counts rows fetched by row pointer.
	HeapFetches int64
	// HeapRowsScanned counts rows returned by sequential scans.
	HeapRowsScanned int64
	// HeapMoves counts updates that moved a row to another page.
	HeapMoves int64

	// HeapHOTUpdates counts versioned updates that wrote a heap-only
	// tuple on the old version's page (no index entries needed), and
	// HeapNonHOTUpdates those that did not (PostgreSQL's n_tup_hot_upd
	// and n_tup_upd less it).
	HeapHOTUpdates    int64
	HeapNonHOTUpdates int64
	// HeapVersionsRead counts versions whose visibility a fetch tested
	// (one per member of a HOT chain walked).
	HeapVersionsRead int64
	// HeapHintsSet counts tuples whose hint bits a reader or a prune set
	// (each a logged heap-hint operation).
	HeapHintsSet int64
	// HeapPrunes counts pages pruned (one heap-prune operation each),
	// HeapTuplesPruned the versions they removed (line pointers made
	// dead, redirected or unused that held a tuple).
	HeapPrunes       int64
	HeapTuplesPruned int64
	// HeapPruneSkipped counts prunes on access given up because another
	// goroutine held a pin on the page (no cleanup lock).
	HeapPruneSkipped int64
	// HeapVMPagesRead counts visibility map page requests (AllVisible,
	// MarkVisible, and changes to an all-visible page);
	// HeapVMBitsSet and HeapVMBitsCleared count map bits turned on and
	// off (all-visible and all-frozen each count one).
	HeapVMPagesRead   int64
	HeapVMBitsSet     int64
	HeapVMBitsCleared int64
}

// Add adds o's counts to c.
func (c *HeapCounts) Add(o *HeapCounts) { c.combine(o, 1) }

// Sub subtracts o's counts from c.
func (c *HeapCounts) Sub(o *HeapCounts) { c.combine(o, -1) }

// Diff returns c − o without changing either.
func (c *HeapCounts) Diff(o *HeapCounts) HeapCounts {
	d := *c
	d.Sub(o)
	return d
}

func (c *HeapCounts) combine(o *HeapCounts, sign int64) {
	if c == nil || o == nil {
		return
	}
	c.HeapFetches += sign * o.HeapFetches
	c.HeapRowsScanned += sign * o.HeapRowsScanned
	c.HeapMoves += sign * o.HeapMoves
	c.HeapHOTUpdates += sign * o.HeapHOTUpdates
	c.HeapNonHOTUpdates += sign * o.HeapNonHOTUpdates
	c.HeapVersionsRead += sign * o.HeapVersionsRead
	c.HeapHintsSet += sign * o.HeapHintsSet
	c.HeapPrunes += sign * o.HeapPrunes
	c.HeapTuplesPruned += sign * o.HeapTuplesPruned
	c.HeapPruneSkipped += sign * o.HeapPruneSkipped
	c.HeapVMPagesRead += sign * o.HeapVMPagesRead
	c.HeapVMBitsSet += sign * o.HeapVMBitsSet
	c.HeapVMBitsCleared += sign * o.HeapVMBitsCleared
}

// String lists the non-zero counts.
func (c *HeapCounts) String() string {
	var b strings.Builder
	add := func(name string, v int64) {
		if v != 0 {
			fmt.Fprintf(&b, "%s=%d ", name, v)
		}
	}
	add("heap-fetches", c.HeapFetches)
	add("heap-rows-scanned", c.HeapRowsScanned)
	add("heap-moves", c.HeapMoves)
	add("heap-hot-updates", c.HeapHOTUpdates)
	add("heap-non-hot-updates", c.HeapNonHOTUpdates)
	add("heap-versions-read", c.HeapVersionsRead)
	add("heap-hints-set", c.HeapHintsSet)
	add("heap-prunes", c.HeapPrunes)
	add("heap-tuples-pruned", c.HeapTuplesPruned)
	add("heap-prune-skipped", c.HeapPruneSkipped)
	add("heap-vm-pages-read", c.HeapVMPagesRead)
	add("heap-vm-bits-set", c.HeapVMBitsSet)
	add("heap-vm-bits-cleared", c.HeapVMBitsCleared)
	return strings.TrimSpace(b.String())
}

// Account is what a call of the heap charges: the pool counts the pages it
// requests in Pages(), the heap counts its fetches, scanned rows and moves
// in Heap(). Either may return nil (that half counts nothing), and a nil
// Account counts nothing. Each operation calls the two methods once, when
// it starts (a scan when NewScan makes it), never per page or row.
//
// *Meter is the ready-made Account; a caller that keeps more counters (a
// transaction's meter) implements Account on its own struct, which embeds
// cache.Meter and HeapCounts, with nil-safe methods on a pointer receiver.
type Account interface {
	Pages() *cache.Meter
	Heap() *HeapCounts
}

// Meter holds the page counts and the heap's counts of one caller, for a
// user of the heap alone: a test or a tool.
//
//	var m heap.Meter
//	row, err := h.Fetch(&m, ptr, buf)
//	// m.HeapFetches == 1, m.PoolHits + m.PoolMisses == 1
type Meter struct {
	cache.Meter
	HeapCounts
}

// Pages returns the page counts; nil for a nil m.
func (m *Meter) Pages() *cache.Meter {
	if m == nil {
		return nil
	}
	return &m.Meter
}

// Heap returns the heap's counts; nil for a nil m.
func (m *Meter) Heap() *HeapCounts {
	if m == nil {
		return nil
	}
	return &m.HeapCounts
}

// Add adds o's counters to m.
func (m *Meter) Add(o *Meter) {
	if m == nil || o == nil {
		return
	}
	m.Meter.Add(&o.Meter)
	m.HeapCounts.Add(&o.HeapCounts)
}

// Sub subtracts o's counters from m.
func (m *Meter) Sub(o *Meter) {
	if m == nil || o == nil {
		return
	}
	m.Meter.Sub(&o.Meter)
	m.HeapCounts.Sub(&o.HeapCounts)
}

// Diff returns m − o without changing either.
func (m *Meter) Diff(o *Meter) Meter {
	d := *m
	d.Sub(o)
	return d
}

// String lists the non-zero counters, the pages' first.
func (m *Meter) String() string {
	a, b := m.Meter.String(), m.HeapCounts.String()
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + " " + b
}

// accounts splits a into its two halves, once per operation.
func accounts(a Account) (*cache.Meter, *HeapCounts) {
	if a == nil {
		return nil, nil
	}
	return a.Pages(), a.Heap()
}

// heapCounts is the heap's half of a, for the In methods, whose pages the
// mtr's meter counts.
func heapCounts(a Account) *HeapCounts {
	if a == nil {
		return nil
	}
	return a.Heap()
}
