package heap

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
)

// The visibility map: PostgreSQL's access/heap/visibilitymap.c. Two bits
// per heap page, with PostgreSQL's values:
//
//   - VMAllVisible (VISIBILITYMAP_ALL_VISIBLE): every tuple on the page is
//     visible to every snapshot, now and later. An index-only scan trusts
//     the index entry without visiting the heap (AllVisible), and vacuum
//     may skip the page.
//   - VMAllFrozen (VISIBILITYMAP_ALL_FROZEN): besides, every tuple is
//     frozen (HEAP_XMIN_FROZEN, no xmax), so no vacuum ever needs to visit
//     the page again. Only set together with all-visible.
//
// The bits are set by vacuum (MarkVisible, lazy_scan_prune's all_visible
// test and visibilitymap_set) and cleared by every change that can make a
// tuple invisible to someone: a new version on the page (InsertVersion,
// UpdateVersion's new version), an xmax (DeleteVersion, UpdateVersion's
// old version), a prune; a row lock (LockVersion) clears only
// all-frozen, as heap_lock_tuple does, because a lock-only xmax hides
// nothing from anybody. The clear is part of the mini-transaction that
// changes the heap page, so redo replays both or neither: a page is never
// durable with a change and a stale all-visible bit, and the remote page
// tier's LSN check sees the map page's change in the same record.
//
// PD_ALL_VISIBLE. As in PostgreSQL, the heap page carries the all-visible
// bit too (pd_flags in its header, page.go): set with the map bit, in the
// same mini-transaction, and cleared with it. It is what lets a change
// find out, from the page it has latched anyway, whether the map needs
// clearing: without it every insert, update, delete and lock would read
// the map page. With it, only a change to a page that is all-visible
// touches the map (one page request, metered as HeapVMPagesRead).
//
// Map pages are pages of kind page.KindVM in the heap's own space, made
// when vacuum first marks a page they cover (PostgreSQL extends the map
// fork lazily too, vm_extend), chained in order. The first one is the
// heap's second root: the Aux field of the space's meta page (cache.Pool.
// SetAux), set in the mini-transaction that allocates it. Map page k
// covers heap pages k·V to (k+1)·V-1, V = 4·(pageSize-48): 16192 pages on
// 4 KiB pages (63 MiB of heap), 65344 on 16 KiB pages (1 GiB). A page
// beyond the map has both bits 0.
//
//	0        32       36        38       40        44           48        49
//	+--------+--------+---------+--------+---------+------------+---------+----
//	| cache  | magic  | version | unused | next VM | first page | pages   | ...
//	| header | "ELVM" |  (2B)   |  (2B)  |  (4B)   |    (4B)    | f..f+3  |
//	+--------+--------+---------+--------+---------+------------+---------+----
//
//	a byte:  bit 7 6 | 5 4 | 3 2 | 1 0       bit 0 all-visible,
//	         page f+3 | f+2 | f+1 | f         bit 1 all-frozen
//
// Latch order: a map page is latched after the heap pages and FSM pages of
// its operation (last), and a map page is pinned before its heap page
// changes, so that nothing can fail between the change and the clear.
//
// Version history: 1 — this layout.
const (
	// VMAllVisible and VMAllFrozen are a page's bits in the map.
	VMAllVisible uint8 = 0x01
	VMAllFrozen  uint8 = 0x02
	vmValidBits        = VMAllVisible | VMAllFrozen

	// PDAllVisible is PostgreSQL's PD_ALL_VISIBLE page flag.
	PDAllVisible uint8 = 0x04

	vmMagic   = 0x4d564c45 // "ELVM" little-endian
	vmVersion = 1

	offVMMagic   = page.HeaderSize
	offVMVersion = page.HeaderSize + 4
	offVMNext    = page.HeaderSize + 8
	offVMFirst   = page.HeaderSize + 12
	vmBodyStart  = page.HeaderSize + 16
)

// vmPerPage returns how many heap pages one map page covers.
func vmPerPage(pageSize int) int { return 4 * (pageSize - vmBodyStart) }

// testVMPerPage, when not 0, replaces the number of pages a map page
// covers (as testFSMPerPage), so tests build map chains from small heaps.
var testVMPerPage int

// vmChain returns the map pages' numbers in chain order.
func (h *Heap) vmChain() []uint32 {
	if c := h.vm.Load(); c != nil {
		return *c
	}
	return nil
}

// vmLocate returns the map page covering heap page no and the page's
// index in it.
func (h *Heap) vmLocate(no uint32) (uint32, int, bool) {
	chain := h.vmChain()
	k := int(no / uint32(h.vmPer))
	if k >= len(chain) {
		return 0, 0, false
	}
	return chain[k], int(no % uint32(h.vmPer)), true
}

// isVMPage reports whether page no is a map page.
func (h *Heap) isVMPage(no uint32) bool {
	for _, v := range h.vmChain() {
		if v == no {
			return true
		}
	}
	return false
}

// vmGet returns the bits at index idx of a map page's bytes.
func vmGet(b []byte, idx int) uint8 {
	return b[vmBodyStart+idx/4] >> (2 * (idx % 4)) & vmValidBits
}

// vmRef is a map page pinned for one heap page's bits.
type vmRef struct {
	pg  *cache.Page
	idx int
}

// vmPin pins the map page holding heap page no's bits. A page beyond the
// map returns an empty ref (its bits are 0).
func (h *Heap) vmPin(m *cache.Meter, hc *HeapCounts, no uint32) (vmRef, error) {
	vno, idx, ok := h.vmLocate(no)
	if !ok {
		return vmRef{}, nil
	}
	pg, err := h.pool.Fetch(m, h.id(vno))
	if err != nil {
		return vmRef{}, fmt.Errorf("heap: space %d: visibility map page %d: %w", h.space, vno, err)
	}
	if hc != nil {
		hc.HeapVMPagesRead++
	}
	return vmRef{pg: pg, idx: idx}, nil
}

// vmPrepare is what a change to heap page pg (exclusively latched by mt)
// does before it changes anything: if the page is all-visible
// (PD_ALL_VISIBLE), it pins the map page, so that the clear after the
// change cannot fail. It returns an empty ref for a page that is not.
func (h *Heap) vmPrepare(mt *cache.Mtr, hc *HeapCounts, pg *cache.Page) (vmRef, error) {
	if hpage(pg.Data()).pdFlags()&PDAllVisible == 0 {
		return vmRef{}, nil
	}
	return h.vmPin(mt.Meter(), hc, pg.ID().Page)
}

// vmClearPage clears PD_ALL_VISIBLE on pg (exclusively latched by mt,
// which has just changed it), as PageClearAllVisible. The map bits are
// cleared by vmClear at the end of the operation.
func vmClearPage(mt *cache.Mtr, pg *cache.Page) {
	b := hpage(pg.Data())
	if f := b.pdFlags(); f&PDAllVisible != 0 {
		heapFlags(mt, pg, f&^PDAllVisible)
	}
}

// vmClear clears bits of r's heap page in the map, as part of mt, and
// hands r's pin to mt (visibilitymap_clear). An empty ref does nothing.
func (h *Heap) vmClear(mt *cache.Mtr, hc *HeapCounts, r vmRef, clear uint8) {
	if r.pg == nil {
		return
	}
	mt.Latch(r.pg)
	b := r.pg.Data()
	changed := false
	if page.KindOf(b) == page.KindVM {
		if cur := vmGet(b, r.idx); cur&clear != 0 {
			vmClearBits(mt, r.pg, r.idx, cur&clear)
			changed = true
			if hc != nil {
				hc.HeapVMBitsCleared += int64(bits.OnesCount8(cur & clear))
			}
		}
	}
	mt.Release(r.pg, changed)
}

// vmUnpin drops r's pin after an operation that failed before changing
// anything.
func (r vmRef) unpin() {
	if r.pg != nil {
		r.pg.Unpin(false)
	}
}

// VisibilityBits returns heap page no's bits in the map (VMAllVisible,
// VMAllFrozen), 0 for a page the map does not cover yet. Cost: one map
// page request (HeapVMPagesRead+1) when the map covers the page.
func (h *Heap) VisibilityBits(m Account, no uint32) (uint8, error) {
	if err := h.checkPtr(RowPtr{Page: no}); err != nil {
		return 0, err
	}
	pm, hc := accounts(m)
	r, err := h.vmPin(pm, hc, no)
	if err != nil || r.pg == nil {
		return 0, err
	}
	r.pg.RLatch()
	b := r.pg.Data()
	var v uint8
	if page.KindOf(b) == page.KindVM {
		v = vmGet(b, r.idx)
	} else {
		err = fmt.Errorf("heap: space %d: visibility map page %d has kind %s: %w",
			h.space, r.pg.ID().Page, page.KindOf(b), page.ErrCorruptPage)
	}
	r.pg.RUnlatch()
	r.pg.Unpin(false)
	return v, err
}

// AllVisible reports whether heap page no is all-visible in the map
// (VM_ALL_VISIBLE): an index-only scan returns an entry on such a page
// without fetching the heap tuple; otherwise it must fetch it (a "Heap
// Fetch" in PostgreSQL's EXPLAIN ANALYZE). Cost as VisibilityBits.
func (h *Heap) AllVisible(m Account, no uint32) (bool, error) {
	v, err := h.VisibilityBits(m, no)
	return v&VMAllVisible != 0, err
}

// vmEnsure extends the map until it covers heap page no, each new map
// page in a mini-transaction of its own (allocation, format, and the link
// from the last map page or the meta page's Aux field), committed before
// the caller latches anything. REQUIRES: the caller holds no latch of the
// heap's space.
func (h *Heap) vmEnsure(m *cache.Meter, no uint32) error {
	if _, _, ok := h.vmLocate(no); ok {
		return nil
	}
	h.allocMu.Lock()
	defer h.allocMu.Unlock()
	for {
		if _, _, ok := h.vmLocate(no); ok {
			return nil
		}
		if err := h.extendVMLocked(m); err != nil {
			return err
		}
	}
}

// extendVMLocked adds a map page at the end of the chain, at the high
// water mark (the FSM extended first if it does not cover that page, so
// that the map page has its FSM byte, 0). REQUIRES: h.allocMu held.
func (h *Heap) extendVMLocked(m *cache.Meter) error {
	if _, _, ok := h.fsmLocate(h.highWater.Load()); !ok {
		if err := h.extendFSMLocked(m); err != nil {
			return err
		}
	}
	chain := h.vmChain()
	var lpg *cache.Page
	if len(chain) > 0 {
		var err error
		if lpg, err = h.pool.Fetch(m, h.id(chain[len(chain)-1])); err != nil {
			return fmt.Errorf("heap: space %d: extend visibility map: %w", h.space, err)
		}
	}
	mt := h.pool.BeginMtr(m)
	npg, err := h.pool.AllocPage(mt, nil, h.space, page.KindVM)
	if err != nil {
		if lpg != nil {
			lpg.Unpin(false)
		}
		mt.Commit()
		return fmt.Errorf("heap: space %d: extend visibility map: %w", h.space, err)
	}
	no := npg.ID().Page
	vmInit(mt, npg, uint32(len(chain)*h.vmPer))
	mt.Release(npg, true)
	if lpg != nil {
		mt.Latch(lpg)
		vmLink(mt, lpg, no)
		mt.Release(lpg, true)
	} else if err := h.pool.SetAux(mt, h.space, no); err != nil {
		// The meta page is latched by the allocation already: SetAux
		// cannot fail to fetch it. Committed all the same, the page is
		// unreachable, and the next extension tries again.
		mt.Commit()
		h.raiseHighWater(no + 1)
		return fmt.Errorf("heap: space %d: extend visibility map: %w", h.space, err)
	}
	mt.Commit()
	next := make([]uint32, len(chain), len(chain)+1)
	copy(next, chain)
	next = append(next, no)
	h.vm.Store(&next)
	h.raiseHighWater(no + 1)
	return nil
}

// openVM reads the map chain from aux (the meta page's Aux field) at Open.
func (h *Heap) openVM(m *cache.Meter, aux, hw uint32) error {
	var chain []uint32
	for no := aux; no != 0; {
		k := len(chain)
		if no >= hw || k >= int(hw) {
			return fmt.Errorf("%w: space %d: visibility map page %d (number %d of the chain) is beyond high water %d",
				ErrNotHeap, h.space, no, k, hw)
		}
		pg, err := h.pool.Fetch(m, h.id(no))
		if err != nil {
			return fmt.Errorf("heap: open space %d: visibility map page %d: %w", h.space, no, err)
		}
		pg.RLatch()
		b := pg.Data()
		cerr := checkVMPage(b, k, h.vmPer)
		next := binary.LittleEndian.Uint32(b[offVMNext:])
		pg.RUnlatch()
		pg.Unpin(false)
		if cerr != nil {
			return fmt.Errorf("%w: space %d: visibility map page %d: %v", ErrNotHeap, h.space, no, cerr)
		}
		chain = append(chain, no)
		no = next
	}
	h.vm.Store(&chain)
	return nil
}

// initVMPage formats the map page covering heap pages from first on.
func initVMPage(b []byte, first uint32) {
	binary.LittleEndian.PutUint32(b[offVMMagic:], vmMagic)
	binary.LittleEndian.PutUint16(b[offVMVersion:], vmVersion)
	binary.LittleEndian.PutUint32(b[offVMNext:], 0)
	binary.LittleEndian.PutUint32(b[offVMFirst:], first)
	clear(b[vmBodyStart:])
}

// checkVMPage checks the header of what should be the k-th map page.
func checkVMPage(b []byte, k, per int) error {
	switch {
	case page.KindOf(b) != page.KindVM:
		return fmt.Errorf("kind %s, want %s", page.KindOf(b), page.KindVM)
	case binary.LittleEndian.Uint32(b[offVMMagic:]) != vmMagic:
		return fmt.Errorf("magic %08x, want %08x", binary.LittleEndian.Uint32(b[offVMMagic:]), uint32(vmMagic))
	case binary.LittleEndian.Uint16(b[offVMVersion:]) != vmVersion:
		return fmt.Errorf("format version %d, want %d", binary.LittleEndian.Uint16(b[offVMVersion:]), vmVersion)
	case binary.LittleEndian.Uint32(b[offVMFirst:]) != uint32(k*per):
		return fmt.Errorf("first page %d, want %d (map page %d of the chain)",
			binary.LittleEndian.Uint32(b[offVMFirst:]), k*per, k)
	}
	return nil
}

// MarkVisibleResult says what MarkVisible found and did.
type MarkVisibleResult struct {
	// Bits are the page's map bits afterwards; 0 when the page is not
	// all-visible.
	Bits uint8
	// Frozen counts tuples it froze (HEAP_XMIN_FROZEN set).
	Frozen int
}

// MarkVisible is vacuum's visibility step for heap page no (lazy
// vacuum's lazy_scan_prune test and visibilitymap_set, or
// lazy_vacuum_heap_page's after the dead slots are gone): the page is
// all-visible when it has no LP_DEAD slot and every tuple on it is
// HEAPTUPLE_LIVE for the horizon with an xmin that committed below the
// horizon (so every snapshot, running or to come, sees it), and then
// MarkVisible sets PD_ALL_VISIBLE on the page and the all-visible bit in
// the map, in one mini-transaction. Unused and redirect slots do not
// matter (a redirect's target is checked as a tuple).
//
// All-frozen: an all-visible page whose tuples are all frozen
// (HEAP_XMIN_FROZEN, no xmax or an aborted one) is all-frozen too. With
// freeze, MarkVisible freezes the tuples of an all-visible page that have
// no live xmax (heap_freeze_execute_prepared: the frozen hint, logged as
// heap-hint, is PostgreSQL's freezing since 9.4) and marks the page
// all-frozen if that made every tuple frozen. Transaction ids never wrap
// here (64-bit), so freezing is never needed for wraparound's sake: it
// only saves visibility tests and lets vacuum skip the page for good.
//
// A page that is not all-visible is left alone (its bits are not
// cleared: the changes that made it so cleared them). Versioned heaps
// only. Cost: the map is extended first if it does not cover the page
// (a page allocation), then one heap page request and one map page
// request (HeapVMPagesRead+1); HeapVMBitsSet counts bits it set.
func (h *Heap) MarkVisible(m Account, no uint32, horizon uint64, cs CommitStatus, freeze bool) (MarkVisibleResult, error) {
	var res MarkVisibleResult
	ptr := RowPtr{Page: no}
	if err := h.checkPtr(ptr); err != nil {
		return res, err
	}
	if h.isVMPage(no) {
		return res, h.notFound(ptr, "page %d is a visibility map page", no)
	}
	pm, hc := accounts(m)
	if err := h.vmEnsure(pm, no); err != nil {
		return res, err
	}
	r, err := h.vmPin(pm, hc, no)
	if err != nil {
		return res, err
	}
	pg, err := h.pool.Fetch(pm, h.id(no))
	if err != nil {
		r.unpin()
		return res, fmt.Errorf("heap: mark page %d of space %d visible: %w", no, h.space, err)
	}
	mt := h.pool.BeginMtr(pm)
	defer mt.Commit()
	mt.Latch(pg)
	b := hpage(pg.Data())
	if page.KindOf(b) != page.KindHeap || !b.headerOK() {
		mt.Release(pg, false)
		r.unpin()
		return res, h.notFound(ptr, "page %d is not a valid heap page", no)
	}
	allVisible, allFrozen, toFreeze, err := pageVisibility(b, horizon, cs)
	if err != nil {
		mt.Release(pg, false)
		r.unpin()
		return res, h.corrupt(no, "mark visible: %v", err)
	}
	if !allVisible {
		mt.Release(pg, false)
		r.unpin()
		return res, nil
	}
	if freeze && !allFrozen && toFreeze != nil {
		for _, s := range toFreeze {
			heapHint(mt, pg, s, HeapXminFrozen)
		}
		res.Frozen = len(toFreeze)
		allFrozen = true
	}
	want := VMAllVisible
	if allFrozen {
		want |= VMAllFrozen
	}
	changed := res.Frozen > 0
	if f := b.pdFlags(); f&PDAllVisible == 0 {
		heapFlags(mt, pg, f|PDAllVisible)
		changed = true
	}
	// The map's bits are set while the heap page is still latched (the
	// heap-then-map latch order), as lazy vacuum calls
	// visibilitymap_set with the heap buffer locked. Released first, the
	// page could take a change (its bits cleared in that change's mtr)
	// before the bits are set here, and the map would call a page
	// all-visible whose new tuple no snapshot before it can see.
	mt.Latch(r.pg)
	set := false
	if page.KindOf(r.pg.Data()) == page.KindVM {
		cur := vmGet(r.pg.Data(), r.idx)
		if add := want &^ cur; add != 0 {
			vmSetBits(mt, r.pg, r.idx, add)
			set = true
			if hc != nil {
				hc.HeapVMBitsSet += int64(bits.OnesCount8(add))
			}
		}
		res.Bits = cur | want
	}
	mt.Release(r.pg, set)
	mt.Release(pg, changed)
	return res, nil
}

// pageVisibility decides whether page b is all-visible for horizon (see
// MarkVisible) and whether it is all-frozen already, and lists the tuples
// freezing would change: nil when there are none, or when some tuple
// cannot be frozen (it has an xmax that is not known invalid: a lock, or
// an abort without its hint; PostgreSQL's freezing would clear such an
// xmax, here the page just stays not frozen).
func pageVisibility(b hpage, horizon uint64, cs CommitStatus) (allVisible, allFrozen bool, toFreeze []int, err error) {
	allFrozen = true
	canFreeze := true
	for i := range b.nslots() {
		st, _ := b.lp(i)
		switch st {
		case lpUnused, lpRedirect:
			continue
		case lpDead:
			return false, false, nil, nil
		}
		t := b.tupleAt(i)
		if t == nil {
			return false, false, nil, fmt.Errorf("slot %d holds no versioned tuple", i)
		}
		th := t.header()
		vs, _, err := vacuumState(th, horizon, cs)
		if err != nil {
			return false, false, nil, err
		}
		frozen := th.Infomask&HeapXminFrozen == HeapXminFrozen
		if vs != TupleLive || (!frozen && th.Xmin >= horizon) {
			return false, false, nil, nil
		}
		noXmax := th.Xmax == 0 || th.Infomask&HeapXmaxInvalid != 0
		switch {
		case !noXmax:
			allFrozen, canFreeze = false, false
		case !frozen:
			allFrozen = false
			toFreeze = append(toFreeze, i)
		}
	}
	if !canFreeze {
		toFreeze = nil
	}
	return true, allFrozen, toFreeze, nil
}

// The visibility map's logged operations (redo.go lists the kinds).

// heapFlags stores f as heap page pg's pd_flags and logs it.
func heapFlags(mt *cache.Mtr, pg *cache.Page, f uint8) {
	hpage(pg.Data()).setPDFlags(f)
	if !mt.Logging() {
		mt.Log(pg, kindHeapFlags, nil)
		return
	}
	mt.Log(pg, kindHeapFlags, append(mt.Payload(), f))
}

// vmInit formats map page pg, which AllocPage has just formatted, for heap
// pages from first on, and logs it.
func vmInit(mt *cache.Mtr, pg *cache.Page, first uint32) {
	initVMPage(pg.Data(), first)
	logUvarint(mt, pg, kindVMInit, uint64(first))
}

// vmSetBits ORs v into the bits at index idx of map page pg and logs it.
func vmSetBits(mt *cache.Mtr, pg *cache.Page, idx int, v uint8) {
	pg.Data()[vmBodyStart+idx/4] |= v << (2 * (idx % 4))
	logUvarint(mt, pg, kindVMSet, uint64(idx), v)
}

// vmClearBits clears v from the bits at index idx of map page pg and logs
// it.
func vmClearBits(mt *cache.Mtr, pg *cache.Page, idx int, v uint8) {
	pg.Data()[vmBodyStart+idx/4] &^= v << (2 * (idx % 4))
	logUvarint(mt, pg, kindVMClear, uint64(idx), v)
}

// vmLink makes next the map page after map page pg and logs it.
func vmLink(mt *cache.Mtr, pg *cache.Page, next uint32) {
	binary.LittleEndian.PutUint32(pg.Data()[offVMNext:], next)
	logUvarint(mt, pg, kindVMLink, uint64(next))
}

func redoHeapFlags(_ page.ID, buf, payload []byte) error {
	b, err := redoHeapPage(buf)
	if err != nil {
		return err
	}
	if len(payload) != 1 {
		return fmt.Errorf("%d bytes of payload, want 1", len(payload))
	}
	if f := payload[0]; f&^PDAllVisible != 0 {
		return fmt.Errorf("page flags %#02x include unknown flags", f)
	}
	b.setPDFlags(payload[0])
	return nil
}

func redoVMInit(_ page.ID, buf, payload []byte) error {
	if err := redoPage(buf, page.KindVM); err != nil {
		return err
	}
	r := redo.NewReader(payload)
	first, err := readPageNo(&r)
	if err != nil {
		return err
	}
	initVMPage(buf, first)
	return nil
}

// readVMBits reads an index-and-bits payload and checks both.
func readVMBits(buf, payload []byte) (int, uint8, error) {
	if err := redoPage(buf, page.KindVM); err != nil {
		return 0, 0, err
	}
	r := redo.NewReader(payload)
	idx := r.Int(4*(len(buf)-vmBodyStart) - 1)
	v := r.Byte()
	if err := r.Err(); err != nil {
		return 0, 0, err
	}
	if v == 0 || v&^vmValidBits != 0 {
		return 0, 0, fmt.Errorf("map bits %#02x", v)
	}
	return idx, v, nil
}

func redoVMSet(_ page.ID, buf, payload []byte) error {
	idx, v, err := readVMBits(buf, payload)
	if err != nil {
		return err
	}
	buf[vmBodyStart+idx/4] |= v << (2 * (idx % 4))
	return nil
}

func redoVMClear(_ page.ID, buf, payload []byte) error {
	idx, v, err := readVMBits(buf, payload)
	if err != nil {
		return err
	}
	buf[vmBodyStart+idx/4] &^= v << (2 * (idx % 4))
	return nil
}

func redoVMLink(id page.ID, buf, payload []byte) error {
	return redoLink(id, buf, payload, page.KindVM, "map", offVMNext)
}
