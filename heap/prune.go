package heap

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
)

// Page pruning: PostgreSQL's heap_page_prune (access/heap/pruneheap.c). A
// page's versions that no snapshot can see any more (HEAPTUPLE_DEAD for
// the horizon, see vacuumState) are removed and their room given back,
// without touching any index:
//
//   - a HOT chain whose first versions are dead keeps its root slot, the
//     slot the indexes name: the root becomes LP_REDIRECT to the chain's
//     first surviving version, or LP_DEAD if none survives; the dead
//     heap-only versions' slots become LP_UNUSED (no index names them);
//   - a dead version that is not part of a HOT chain becomes LP_DEAD:
//     indexes still name it, so its slot cannot be reused until vacuum has
//     removed their entries and set it LP_UNUSED (VacuumDeadSlots,
//     lazy_vacuum_heap_page);
//   - a dead heap-only version left out of every chain (its inserter
//     aborted) becomes LP_UNUSED;
//   - then the page is compacted (PageRepairFragmentation) and trailing
//     unused slots are trimmed.
//
// The whole prune is one heap-prune operation, replayed by the same code
// (pruneExecute, heap_page_prune_execute, as redo of XLOG_HEAP2_PRUNE
// does), in one mini-transaction with the page's FSM byte.
//
// The cleanup lock. PostgreSQL prunes under a buffer cleanup lock
// (ConditionalLockBufferForCleanup): the exclusive content lock and no
// other backend holding a pin, because a backend with only a pin may be
// reading tuples through pointers into the shared buffer (heapgetpage's
// page-at-a-time mode), and compaction moves tuples. No reader of this
// heap keeps a pointer into a page past its latch: Fetch, FetchVersion,
// ReadVersion and scans copy what they need under the shared latch. So
// the exclusive latch, taken through a mini-transaction, is the cleanup
// lock for Prune and vacuum. The prune on access (PruneOpt) asks for the
// cleanup lock proper, as heap_page_prune_opt does: the exclusive latch
// and no pin but its own (cache.Page.Pins), and skips the page, without
// waiting, when another goroutine holds one. What the pin rule also
// protects in PostgreSQL, a row pointer an index scan holds between the
// index and the heap, is kept as there: a root slot that an index names
// is never made unused by pruning, only dead, and the HOT search checks
// xmin against the prior xmax.

// PruneResult says what one prune did.
type PruneResult struct {
	// Pruned counts versions whose storage was freed (PostgreSQL's
	// ndeleted); Redirected, Dead and Unused count the line pointers set
	// to each state.
	Pruned, Redirected, Dead, Unused int
	// FreeBefore and FreeAfter are the page's free bytes.
	FreeBefore, FreeAfter int
}

// prunePlan is heap_page_prune's PruneState: the line pointers to change.
type prunePlan struct {
	redirected [][2]int
	dead       []int
	unused     []int
	marked     []bool
	pruned     int
	chain      []int // pruneChain's scratch: the chain it walks
	// hints: hint bits the analysis learned from the commit log for
	// tuples that lacked them, which the prune sets (see prune).
	hints []slotHint
}

// planPool keeps prune plans, their slices grown, for the next prune: a
// page prune is frequent (every update that finds its page prunable), and
// a plan and its chains allocated afresh each time were most of a
// versioned heap's allocations.
var planPool = sync.Pool{New: func() any { return new(prunePlan) }}

// newPrunePlan returns an empty plan for a page of ns slots, from planPool.
func newPrunePlan(ns int) *prunePlan {
	p := planPool.Get().(*prunePlan)
	p.redirected, p.dead, p.unused, p.chain, p.hints = p.redirected[:0], p.dead[:0], p.unused[:0], p.chain[:0], p.hints[:0]
	p.marked = slices.Grow(p.marked[:0], ns)[:ns]
	clear(p.marked)
	p.pruned = 0
	return p
}

// release gives p back to planPool; p is not used after.
func (p *prunePlan) release() { planPool.Put(p) }

func (p *prunePlan) recordRedirect(from, to int) {
	p.redirected = append(p.redirected, [2]int{from, to})
	p.marked[from], p.marked[to] = true, true
}
func (p *prunePlan) recordDead(s int)   { p.dead = append(p.dead, s); p.marked[s] = true }
func (p *prunePlan) recordUnused(s int) { p.unused = append(p.unused, s); p.marked[s] = true }
func (p *prunePlan) empty() bool {
	return len(p.redirected)+len(p.dead)+len(p.unused) == 0
}

// learned keeps the hint bits vacuumState learned for the tuple in slot s.
func (p *prunePlan) learned(s int, th TupleHeader, bits uint16) {
	if bits&^th.Infomask != 0 {
		p.hints = append(p.hints, slotHint{slot: s, xmin: th.Xmin, xmax: th.Xmax, bits: bits})
	}
}

// planPrune is heap_page_prune's analysis: every chain from a root (a
// redirect, or a normal version that is not heap-only), and every
// heap-only version left over. REQUIRES: b latched, headerOK.
func planPrune(b hpage, horizon uint64, cs CommitStatus) (*prunePlan, error) {
	ns := b.nslots()
	p := newPrunePlan(ns)
	// Chains from their roots first, then the heap-only versions no
	// chain reached (PostgreSQL 17's order): a heap-only version on a
	// lower slot than its root is a chain member, not an orphan.
	for pass := range 2 {
		for root := range ns {
			if p.marked[root] {
				continue
			}
			st, _ := b.lp(root)
			if st == lpUnused || st == lpDead {
				continue
			}
			if st == lpNormal {
				if t := b.tupleAt(root); t != nil && t.header().HeapOnly() != (pass == 1) {
					continue
				}
			}
			if pass == 1 && st != lpNormal {
				continue
			}
			if err := p.pruneChain(b, root, horizon, cs); err != nil {
				p.release()
				return nil, err
			}
		}
	}
	return p, nil
}

// pruneChain is heap_prune_chain.
func (p *prunePlan) pruneChain(b hpage, root int, horizon uint64, cs CommitStatus) error {
	rootState, _ := b.lp(root)
	if rootState == lpNormal {
		t := b.tupleAt(root)
		if t == nil {
			return fmt.Errorf("slot %d holds no versioned tuple", root)
		}
		th := t.header()
		if th.HeapOnly() {
			// Reached from its chain's root if it is part of one; on
			// its own only when dead and chaining to nothing (an
			// aborted heap-only update).
			st, bits, err := vacuumState(th, horizon, cs)
			if err != nil {
				return err
			}
			p.learned(root, th, bits)
			if st == TupleDead && !th.HotUpdated() {
				p.recordUnused(root)
				p.pruned++
			}
			return nil
		}
	}
	chain := p.chain[:0]
	defer func() { p.chain = chain[:0] }()
	latestDead := -1
	slot := root
	var priorXmax uint64
	for range b.nslots() + 1 {
		if slot >= b.nslots() || p.marked[slot] {
			break
		}
		st, to := b.lp(slot)
		if st == lpUnused || st == lpDead {
			break
		}
		if st == lpRedirect {
			if len(chain) > 0 {
				break
			}
			chain = append(chain, slot)
			slot = to
			continue
		}
		t := b.tupleAt(slot)
		if t == nil {
			return fmt.Errorf("slot %d holds no versioned tuple", slot)
		}
		th := t.header()
		if priorXmax != 0 && th.Xmin != priorXmax {
			break
		}
		chain = append(chain, slot)
		vs, bits, err := vacuumState(th, horizon, cs)
		if err != nil {
			return err
		}
		p.learned(slot, th, bits)
		if vs == TupleDead {
			latestDead = slot
		} else if vs != TupleRecentlyDead {
			break
		}
		if !th.HotUpdated() || th.Ctid.Page != b.pageNo() {
			break
		}
		slot, priorXmax = int(th.Ctid.Slot), th.Xmax
	}
	// Every member is visited, changed or not: a heap-only member left
	// alone (a live version) is not taken for one left out of every
	// chain when the page loop comes to its slot.
	for _, s := range chain {
		p.marked[s] = true
	}
	if latestDead >= 0 {
		i := 1
		for ; i < len(chain) && chain[i-1] != latestDead; i++ {
			p.recordUnused(chain[i])
			p.pruned++
		}
		if rootState == lpNormal {
			p.pruned++
		}
		if i >= len(chain) {
			p.recordDead(root)
		} else {
			p.recordRedirect(root, chain[i])
		}
	} else if len(chain) < 2 && rootState == lpRedirect {
		p.recordDead(root)
	}
	return nil
}

// pageNo returns the page's own number, from its cache header.
func (b hpage) pageNo() uint32 { return page.IDOf(b).Page }

// pruneExecute is heap_page_prune_execute: it sets the planned line
// pointers, trims trailing unused slots and compacts the page. Redo of
// heap-prune calls it after pruneCheck. REQUIRES: exclusive latch, the
// plan valid for the page (pruneCheck).
func (b hpage) pruneExecute(red [][2]int, dead, unused []int) {
	for _, r := range red {
		b.setSlot(r[0], lpRedirectOff, r[1])
	}
	for _, s := range dead {
		b.setSlot(s, lpDeadOff, 0)
	}
	for _, s := range unused {
		b.setSlot(s, 0, 0)
	}
	b.setNDead(b.ndead() + len(unused))
	ns, nd := b.nslots(), b.ndead()
	for ns > 0 {
		if off, _ := b.slot(ns - 1); off != 0 {
			break
		}
		ns--
		nd--
	}
	b.setNSlots(ns)
	b.setNDead(nd)
	b.compact()
}

// pruneCheck checks a prune plan against the page before anything is
// changed: every slot in range and named once; a redirect from a normal
// or redirect slot to a normal slot holding a cell; dead from normal or
// redirect; unused from normal or dead; and no redirect, new or left
// alone, to a slot the prune changes.
func (b hpage) pruneCheck(red [][2]int, dead, unused []int) error {
	ns := b.nslots()
	seen := make(map[int]bool, len(red)*2+len(dead)+len(unused))
	use := func(s int) error {
		if s >= ns {
			return fmt.Errorf("slot %d of %d", s, ns)
		}
		if seen[s] {
			return fmt.Errorf("slot %d named twice", s)
		}
		seen[s] = true
		return nil
	}
	for _, r := range red {
		if err := use(r[0]); err != nil {
			return err
		}
		if st, _ := b.lp(r[0]); st != lpNormal && st != lpRedirect {
			return fmt.Errorf("redirect from slot %d, which is %s", r[0], st)
		}
	}
	for _, r := range red {
		if r[1] >= ns {
			return fmt.Errorf("redirect to slot %d of %d", r[1], ns)
		}
		if off, _ := b.slot(r[1]); off < slotsStart || r[1] == r[0] {
			return fmt.Errorf("redirect to slot %d, which holds no tuple", r[1])
		}
	}
	for _, s := range dead {
		if err := use(s); err != nil {
			return err
		}
		if st, _ := b.lp(s); st != lpNormal && st != lpRedirect {
			return fmt.Errorf("slot %d made dead is %s", s, st)
		}
	}
	for _, s := range unused {
		if err := use(s); err != nil {
			return err
		}
		if st, _ := b.lp(s); st != lpNormal && st != lpDead {
			return fmt.Errorf("slot %d made unused is %s", s, st)
		}
	}
	for _, r := range red {
		if seen[r[1]] {
			return fmt.Errorf("redirect to slot %d, which the prune changes", r[1])
		}
	}
	// A redirect the prune leaves alone must keep its target too.
	for i := range ns {
		if st, to := b.lp(i); st == lpRedirect && !seen[i] && seen[to] {
			return fmt.Errorf("slot %d redirects to slot %d, which the prune changes", i, to)
		}
	}
	return nil
}

// heapPrune executes a prune on pg and logs it.
func heapPrune(mt *cache.Mtr, pg *cache.Page, red [][2]int, dead, unused []int) {
	hpage(pg.Data()).pruneExecute(red, dead, unused)
	if !mt.Logging() {
		mt.Log(pg, kindHeapPrune, nil)
		return
	}
	p := binary.AppendUvarint(mt.Payload(), uint64(len(red)))
	for _, r := range red {
		p = binary.AppendUvarint(p, uint64(r[0]))
		p = binary.AppendUvarint(p, uint64(r[1]))
	}
	p = binary.AppendUvarint(p, uint64(len(dead)))
	for _, s := range dead {
		p = binary.AppendUvarint(p, uint64(s))
	}
	p = binary.AppendUvarint(p, uint64(len(unused)))
	for _, s := range unused {
		p = binary.AppendUvarint(p, uint64(s))
	}
	mt.Log(pg, kindHeapPrune, p)
}

// decodePrune reads a heap-prune payload.
func decodePrune(payload []byte) (red [][2]int, dead, unused []int, err error) {
	r := redo.NewReader(payload)
	n := r.Int(math.MaxUint16)
	if n > len(payload) {
		return nil, nil, nil, fmt.Errorf("%d redirects in %d bytes", n, len(payload))
	}
	for range n {
		red = append(red, [2]int{r.Int(math.MaxUint16), r.Int(math.MaxUint16)})
	}
	list := func() []int {
		n := r.Int(math.MaxUint16)
		if n > len(payload) {
			n = len(payload) + 1 // Int past the end fails the reader
		}
		var out []int
		for range n {
			out = append(out, r.Int(math.MaxUint16))
			if r.Failed() != nil {
				break
			}
		}
		return out
	}
	dead = list()
	unused = list()
	if err := r.Err(); err != nil {
		return nil, nil, nil, err
	}
	return red, dead, unused, nil
}

func redoHeapPrune(_ page.ID, buf, payload []byte) error {
	b, err := redoHeapPage(buf)
	if err != nil {
		return err
	}
	red, dead, unused, err := decodePrune(payload)
	if err != nil {
		return err
	}
	if err := b.pruneCheck(red, dead, unused); err != nil {
		return err
	}
	b.pruneExecute(red, dead, unused)
	return nil
}

// Prune prunes heap page no for horizon (the oldest transaction id a
// running snapshot may still see as running: a version whose deleter
// committed below it is dead to all), as heap_page_prune, under the
// page's exclusive latch (the cleanup lock, see above), in one
// mini-transaction: the hint bits it learned (a heap-hint operation per
// version that lacked them, before the prune, see prune), the heap-prune
// operation and, if the page's free-space category rose, its FSM byte. A
// page with nothing to prune gets only the hints. Cost: one heap page
// request, one FSM page request when the category changes; HeapHintsSet
// per version hinted; HeapPrunes+1 and HeapTuplesPruned when it pruned.
func (h *Heap) Prune(m Account, no uint32, horizon uint64, cs CommitStatus) (PruneResult, error) {
	return h.prune(m, no, horizon, cs, false)
}

// PruneOpt is heap_page_prune_opt, the prune on access: it prunes page no
// only if the page's prune hint (pd_prune_xid, see Heap.pruneXid) is set
// and older than horizon, so that something on it may be dead, and the
// page is short of room: less free than the fill factor's reserve or a
// tenth of the page, whichever is more (PostgreSQL's minfree,
// max(RelationGetTargetPageFreeSpace, BLCKSZ/10)), and only under the
// cleanup lock: the exclusive latch and no other pin on the page; a page
// another goroutine holds is skipped (HeapPruneSkipped), not waited for. The hint is read without the latch,
// as PostgreSQL reads pd_prune_xid; the free-space test is made under the
// latch (a Go RWMutex has no cheaper look). A prune, or a look that found
// nothing to prune, sets the hint to the oldest deleter of a version on
// the page that is not dead yet (0: none), as heap_page_prune's
// new_prune_xid.
func (h *Heap) PruneOpt(m Account, no uint32, horizon uint64, cs CommitStatus) (PruneResult, error) {
	if x := h.PruneXid(no); x == 0 || x >= horizon {
		return PruneResult{}, nil
	}
	return h.prune(m, no, horizon, cs, true)
}

// PruneXid returns page no's prune hint: the oldest transaction that
// deleted or updated a version on it since it was last pruned, 0 if none.
func (h *Heap) PruneXid(no uint32) uint64 {
	h.pruneMu.Lock()
	defer h.pruneMu.Unlock()
	return h.pruneXid[no]
}

// setPrunable is PageSetPrunable: xid deleted or updated a version on
// page no.
func (h *Heap) setPrunable(no uint32, xid uint64) {
	h.pruneMu.Lock()
	if x, ok := h.pruneXid[no]; !ok || xid < x {
		h.pruneXid[no] = xid
	}
	h.pruneMu.Unlock()
}

// setPruneXid sets page no's prune hint to x (0: removes it).
func (h *Heap) setPruneXid(no uint32, x uint64) {
	h.pruneMu.Lock()
	if x == 0 {
		delete(h.pruneXid, no)
	} else {
		h.pruneXid[no] = x
	}
	h.pruneMu.Unlock()
}

// pruneXidOf is the prune hint of page b after a prune for horizon: the
// smallest xmax of a version whose deleter or updater has not aborted and
// that is not dead yet. REQUIRES: b latched, headerOK.
func pruneXidOf(b hpage, horizon uint64, cs CommitStatus) (uint64, error) {
	var x uint64
	for s := range b.nslots() {
		t := b.tupleAt(s)
		if t == nil {
			continue
		}
		th := t.header()
		if th.Xmax == 0 || th.LockOnly() || th.Infomask&HeapXmaxInvalid != 0 {
			continue
		}
		vs, _, err := vacuumState(th, horizon, cs)
		if err != nil {
			return 0, err
		}
		if (vs == TupleRecentlyDead || vs == TupleDeleteInProgress) && (x == 0 || th.Xmax < x) {
			x = th.Xmax
		}
	}
	return x, nil
}

func (h *Heap) prune(m Account, no uint32, horizon uint64, cs CommitStatus, opt bool) (PruneResult, error) {
	var res PruneResult
	ptr := RowPtr{Page: no}
	if err := h.checkPtr(ptr); err != nil {
		return res, err
	}
	pm, hc := accounts(m)
	mt := h.pool.BeginMtr(pm)
	defer mt.Commit()
	pg, err := h.pool.Fetch(pm, h.id(no))
	if err != nil {
		return res, fmt.Errorf("heap: prune page %d of space %d: %w", no, h.space, err)
	}
	mt.Latch(pg)
	b := hpage(pg.Data())
	if page.KindOf(b) != page.KindHeap {
		mt.Release(pg, false)
		return res, h.notFound(ptr, "page %d has kind %s, not %s", no, page.KindOf(b), page.KindHeap)
	}
	if !b.headerOK() {
		mt.Release(pg, false)
		return res, h.badHeader(no, b)
	}
	res.FreeBefore, res.FreeAfter = b.free(), b.free()
	if opt && b.free() >= h.pruneMinFree() {
		mt.Release(pg, false)
		return res, nil
	}
	if opt && pg.Pins() > 1 {
		mt.Release(pg, false)
		if hc != nil {
			hc.HeapPruneSkipped++
		}
		return res, nil
	}
	plan, err := planPrune(b, horizon, cs)
	if err != nil {
		mt.Release(pg, false)
		return res, h.corrupt(no, "prune: %v", err)
	}
	defer plan.release()
	// The hint bits the analysis learned are set first, in this
	// mini-transaction (logged as heap-hint, before the prune's record),
	// as heap_prune_satisfies_vacuum sets them through
	// HeapTupleSatisfiesVacuumHorizon's SetHintBits: the next prune of
	// the page, and pruneXidOf below, then read them instead of asking
	// the commit log again for every version on the page.
	for _, x := range plan.hints {
		heapHint(mt, pg, x.slot, x.bits)
		if hc != nil {
			hc.HeapHintsSet++
		}
	}
	hinted := len(plan.hints) > 0
	if plan.empty() {
		// The hint is stored under the latch: an update or delete
		// after its release sets its own (setPrunable), which a late
		// store would overwrite or remove.
		x, err := pruneXidOf(b, horizon, cs)
		if err == nil {
			h.setPruneXid(no, x)
		}
		mt.Release(pg, hinted)
		if err != nil {
			return res, h.corrupt(no, "prune: %v", err)
		}
		return res, nil
	}
	oldCat := h.category(b.free(), b.ndead())
	// The category after the prune, from a scratch copy, so that the FSM
	// page is pinned before the heap page changes.
	sp := scratchPool.Get().(*[]byte)
	cp := hpage((*sp)[:len(b)])
	copy(cp, b)
	cp.pruneExecute(plan.redirected, plan.dead, plan.unused)
	newCat := h.category(cp.free(), cp.ndead())
	res.FreeAfter = cp.free()
	newXid, err := pruneXidOf(cp, horizon, cs)
	scratchPool.Put(sp)
	if err != nil {
		mt.Release(pg, hinted)
		return res, h.corrupt(no, "prune: %v", err)
	}
	var fr fsmRef
	if newCat != oldCat {
		if fr, err = h.fsmPin(pm, no); err != nil {
			mt.Release(pg, hinted)
			return res, fmt.Errorf("heap: prune page %d of space %d: %w", no, h.space, err)
		}
	}
	// An all-visible page holds no version that is dead to anybody, so
	// this finds nothing to prune on one; should it (a horizon that went
	// back, a damaged page), the bits go with the change, as with any
	// other change to the page.
	vr, err := h.vmPrepare(mt, hc, pg)
	if err != nil {
		mt.Release(pg, hinted)
		if fr.pg != nil {
			fr.pg.Unpin(false)
		}
		return res, err
	}
	heapPrune(mt, pg, plan.redirected, plan.dead, plan.unused)
	vmClearPage(mt, pg)
	h.setPruneXid(no, newXid) // under the latch, as above
	mt.Release(pg, true)
	if fr.pg != nil {
		h.fsmSet(mt, fr, newCat)
	}
	h.vmClear(mt, hc, vr, vmValidBits)
	res.Pruned, res.Redirected, res.Dead, res.Unused = plan.pruned, len(plan.redirected), len(plan.dead), len(plan.unused)
	if hc != nil {
		hc.HeapPrunes++
		hc.HeapTuplesPruned += int64(plan.pruned)
	}
	return res, nil
}

// VacuumDeadSlots sets LP_DEAD slots of page no to LP_UNUSED, so that
// inserts reuse them: vacuum's second heap pass (lazy_vacuum_heap_page),
// after it removed the index entries that named them. Slots that are not
// dead are left alone. It is logged as a heap-prune with only unused
// slots (PostgreSQL logs XLOG_HEAP2_VACUUM), in one mini-transaction with
// the page's FSM byte.
func (h *Heap) VacuumDeadSlots(m Account, no uint32, slots []uint16) (int, error) {
	ptr := RowPtr{Page: no}
	if err := h.checkPtr(ptr); err != nil {
		return 0, err
	}
	pm, _ := accounts(m)
	mt := h.pool.BeginMtr(pm)
	defer mt.Commit()
	pg, err := h.pool.Fetch(pm, h.id(no))
	if err != nil {
		return 0, fmt.Errorf("heap: vacuum page %d of space %d: %w", no, h.space, err)
	}
	mt.Latch(pg)
	b := hpage(pg.Data())
	if page.KindOf(b) != page.KindHeap || !b.headerOK() {
		mt.Release(pg, false)
		return 0, h.notFound(ptr, "page %d is not a valid heap page", no)
	}
	var unused []int
	seen := map[uint16]bool{}
	for _, s := range slots {
		if int(s) < b.nslots() && !seen[s] {
			if st, _ := b.lp(int(s)); st == lpDead {
				unused = append(unused, int(s))
				seen[s] = true
			}
		}
	}
	if len(unused) == 0 {
		mt.Release(pg, false)
		return 0, nil
	}
	oldCat := h.category(b.free(), b.ndead())
	sp := scratchPool.Get().(*[]byte)
	cp := hpage((*sp)[:len(b)])
	copy(cp, b)
	cp.pruneExecute(nil, nil, unused)
	newCat := h.category(cp.free(), cp.ndead())
	scratchPool.Put(sp)
	var fr fsmRef
	if newCat != oldCat {
		if fr, err = h.fsmPin(pm, no); err != nil {
			mt.Release(pg, false)
			return 0, fmt.Errorf("heap: vacuum page %d of space %d: %w", no, h.space, err)
		}
	}
	heapPrune(mt, pg, nil, nil, unused)
	mt.Release(pg, true)
	if fr.pg != nil {
		h.fsmSet(mt, fr, newCat)
	}
	return len(unused), nil
}
