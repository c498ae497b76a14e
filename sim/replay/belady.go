package replay

import (
	"container/heap"
	"fmt"
	"math"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/tier"
)

// beladyTier is the clairvoyant cache (Belady's MIN, with bypass): it
// knows the whole trace, and when a put leaves it over budget it evicts
// the page whose next get comes last, or never, which may be the page just
// put (then it was not worth admitting). Gets hit if the page is resident;
// deletes remove it; a put over a resident page replaces it. Each page
// costs its bytes plus tier.ItemOverhead, as in lru.Tier, so the
// two are compared on the same budget; and as there, a page that alone
// exceeds the budget is dropped, with its older copy.
//
// A resident page's next use is the position of the next event on its
// page if that is a get, and never (math.MaxInt32) if it is a put or a
// delete or there is none: a put replaces the page and a delete removes
// it, so only a get before either can hit this copy. After a hit in
// inclusive mode that cancels the next event, a put (see Run), the
// page's next use is that put's.
//
// Why this is the optimum for the number of hits, given the put stream.
// Suppose every page has one size (the pool's do), so that the budget is
// a number of slots, and that a copy of a page can serve at most one get
// before its page is put again or deleted. That holds in exclusive mode,
// where the pool deletes a page it got back, and in inclusive mode for a
// trace recorded over a tier.NullTier, where each get is followed by the
// push of its page (which a hit cancels: the same as a push that replaces
// the copy). A hit needs the page resident at its get, and a page enters
// only on a put. Take any cache's decisions on the same events, and the
// first eviction where it keeps a page a that this one evicts, and evicts
// (or bypasses) a page b that this one keeps: b's next get t_b comes
// before a's, t_a (or neither comes). Change that cache to keep b in a's
// place until t_b, then drop b. It gains the hit at t_b (it had evicted b,
// which cannot come back before t_b: its next event is that get) and
// loses at most the one hit a's copy could serve, at t_a, after which it
// may hold what the original holds again; in between, it holds a subset
// of the original's pages. So the change loses no hit, and repeating it at
// each first difference turns any cache into this one, which therefore
// has as many hits as any (Belady 1966). Where a copy can serve several
// gets (an inclusive trace whose gets are not followed by their pushes)
// or pages have mixed sizes (then the choice is a knapsack problem), the
// rule is a strong heuristic, not the optimum. TestReplayBeladyOptimal
// checks it against an exhaustive search.
//
// Each put, get and delete costs O(log n) in the resident pages n, through
// a heap ordered by next use.
type beladyTier struct {
	capacity, bytes int64
	events          []tier.TraceEvent
	next            []int32
	inclusive       bool
	items           map[page.ID]*beladyItem
	heap            beladyHeap
}

// beladyItem is a resident page. Invariant: heap[index] is this item.
type beladyItem struct {
	id      page.ID
	cost    int64
	nextUse int32 // event index of its next get; math.MaxInt32: never
	index   int
}

func newBeladyTier(capacity int64, t *tier.Trace, next []int32) *beladyTier {
	return &beladyTier{capacity: capacity, events: t.Events, next: next,
		inclusive: t.Mode == tier.Inclusive, items: make(map[page.ID]*beladyItem)}
}

// nextUse is the next get of event i's page that can hit the copy
// resident after event i.
func (b *beladyTier) nextUse(i int) int32 {
	j := b.next[i]
	if int(j) < len(b.events) && b.events[j].Op == tier.TraceGet {
		return j
	}
	return math.MaxInt32
}

func (b *beladyTier) get(i int, e tier.TraceEvent) (bool, error) {
	it := b.items[e.ID]
	if it == nil {
		return false, nil
	}
	if it.nextUse != int32(i) {
		// A broken invariant, not bad input: every resident page's next
		// use is the next get on it, and the gets come in order.
		return false, fmt.Errorf("sim: belady: page %s resident for event %d, found at event %d", e.ID, it.nextUse, i)
	}
	if it.cost != int64(e.Bytes)+tier.ItemOverhead {
		return false, fmt.Errorf("sim: belady: page %s holds %d bytes, get of %d", e.ID, it.cost-tier.ItemOverhead, e.Bytes)
	}
	it.nextUse = b.nextUse(i)
	if j := b.next[i]; b.inclusive && int(j) < len(b.events) && b.events[j].Op == tier.TracePut {
		it.nextUse = b.nextUse(int(j)) // the replay skips put j: this copy lives on
	}
	heap.Fix(&b.heap, it.index)
	return true, nil
}

func (b *beladyTier) put(i int, e tier.TraceEvent) error {
	if old := b.items[e.ID]; old != nil {
		b.remove(old)
	}
	cost := int64(e.Bytes) + tier.ItemOverhead
	if cost > b.capacity {
		return nil // dropped, as LRUTier drops it
	}
	it := &beladyItem{id: e.ID, cost: cost, nextUse: b.nextUse(i)}
	b.items[e.ID] = it
	b.bytes += cost
	heap.Push(&b.heap, it)
	for b.bytes > b.capacity {
		b.remove(b.heap[0]) // farthest next use: possibly it (a bypass)
	}
	return nil
}

func (b *beladyTier) del(_ int, e tier.TraceEvent) error {
	if it := b.items[e.ID]; it != nil {
		b.remove(it)
	}
	return nil
}

func (b *beladyTier) remove(it *beladyItem) {
	heap.Remove(&b.heap, it.index)
	delete(b.items, it.id)
	b.bytes -= it.cost
}

func (b *beladyTier) close() error { return nil }

// beladyHeap is a max-heap of resident pages by next use; ties go to the
// lower page id, so that a replay does not depend on map or heap order.
type beladyHeap []*beladyItem

func (h beladyHeap) Len() int { return len(h) }
func (h beladyHeap) Less(i, j int) bool {
	if h[i].nextUse != h[j].nextUse {
		return h[i].nextUse > h[j].nextUse
	}
	a, b := h[i].id, h[j].id
	return a.Space < b.Space || (a.Space == b.Space && a.Page < b.Page)
}
func (h beladyHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *beladyHeap) Push(x any) {
	it := x.(*beladyItem)
	it.index = len(*h)
	*h = append(*h, it)
}
func (h *beladyHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	it.index = -1
	return it
}
