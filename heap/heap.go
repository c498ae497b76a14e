package heap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
)

// Heap is a table's rows on slotted pages of one space of a buffer pool. It
// is safe for concurrent use by several goroutines; see the package
// documentation for the contract.
type Heap struct {
	pool     *cache.Pool
	space    uint32
	pageSize int
	maxRow   int
	step     int // bytes per FSM category: pageSize/256
	fsmPer   int // pages covered by one FSM page

	// target is the page an insert tries first (0: none), like
	// PostgreSQL's target block: the page the last FSM search or
	// allocation chose. It is only a hint.
	target atomic.Uint32

	// highWater mirrors the high water mark of the space's meta page:
	// pages 1 .. highWater-1 exist. It only grows, and only under allocMu,
	// after the new page is allocated (and still latched by the
	// allocator), so a reader never sees a page number the pool does not
	// know.
	highWater atomic.Uint32

	// allocMu serialises page allocation (heap pages and FSM extension),
	// so that the FSM always covers the next page number before it is
	// handed out. It is taken with heap page latches held (a moving update
	// may allocate), never the other way round. The meta page latch an
	// allocation takes is held by its mtr past allocMu, until the commit;
	// the next allocation waits for it under allocMu, which is in order
	// (allocMu before the meta page).
	allocMu sync.Mutex

	// chain lists the FSM pages in order. Extended under allocMu by
	// replacing the slice (copy on write); read without a lock.
	chain atomic.Pointer[[]*fsmPage]

	// vmPer is how many heap pages one visibility map page covers; vm
	// lists the map pages in chain order (nil: no map yet), extended
	// under allocMu by replacing the slice (vm.go).
	vmPer int
	vm    atomic.Pointer[[]uint32]

	// pruneXid is PostgreSQL's pd_prune_xid for each page that has one:
	// the oldest transaction that deleted or updated a version on the
	// page since its last prune (PageSetPrunable), so that a prune on
	// access (PruneOpt) skips, without latching the page, every page on
	// which nothing can be dead yet. The page layout has no room for it
	// (its header is fixed by the unversioned heaps' exact sizes), so it
	// is kept here, in memory, as the hint it is in PostgreSQL too: a
	// page whose hint is lost (the heap reopened) is pruned by vacuum,
	// or on access once another version on it is deleted or updated.
	pruneMu  sync.Mutex
	pruneXid map[uint32]uint64

	// fillFactor is the percentage of a page inserts fill
	// (fillfactor.go); 0 is the default, DefaultFillFactor.
	fillFactor atomic.Int32
}

// maxSearchTries bounds how many FSM candidates an insert tries before it
// allocates a new page instead (candidates can fill up between the search
// and the latch).
const maxSearchTries = 8

// testFSMPerPage, when not 0, replaces the number of pages an FSM page
// covers, so that tests can build long FSM chains from small heaps. Only
// tests set it, before creating or opening heaps; it changes the on-page
// format, so a heap must be opened with the value it was created with.
var testFSMPerPage int

func newHeap(pool *cache.Pool, space uint32) *Heap {
	ps := pool.PageSize()
	per := fsmPerPage(ps)
	if testFSMPerPage > 0 {
		per = min(testFSMPerPage, per)
	}
	vper := vmPerPage(ps)
	if testVMPerPage > 0 {
		vper = min(testVMPerPage, vper)
	}
	return &Heap{
		pool:     pool,
		space:    space,
		pageSize: ps,
		maxRow:   MaxRowSize(ps),
		step:     ps / 256,
		fsmPer:   per,
		vmPer:    vper,
		pruneXid: map[uint32]uint64{},
	}
}

// Create makes an empty heap in space and returns it. The space is created
// if it does not exist; if it exists it must be empty (created by
// pool.CreateSpace and never allocated from), otherwise the error matches
// ErrNotHeap. Create allocates the first FSM page (page 1) and records it as
// the space's root, in one mini-transaction (the space's creation is one
// of its own, cache.Pool.CreateSpace). Callers serialise Create and Open
// of one space.
func Create(m Account, pool *cache.Pool, space uint32) (*Heap, error) {
	pm, _ := accounts(m)
	err := pool.CreateSpace(pm, space)
	if errors.Is(err, cache.ErrSpaceExists) {
		info, serr := pool.Space(pm, space)
		if serr != nil {
			return nil, fmt.Errorf("heap: create in space %d: %w", space, serr)
		}
		if info.HighWater != 1 || info.Root != 0 {
			return nil, fmt.Errorf("%w: create in space %d: it already has %d pages (root %d)",
				ErrNotHeap, space, info.HighWater-1, info.Root)
		}
	} else if err != nil {
		return nil, fmt.Errorf("heap: create in space %d: %w", space, err)
	}
	h := newHeap(pool, space)
	// One mtr: the first FSM page and the meta page's root are one redo
	// record, so a space is either empty or holds a heap.
	mt := pool.BeginMtr(pm)
	pg, err := pool.AllocPage(mt, nil, space, page.KindFSM)
	if err != nil {
		mt.Commit()
		return nil, fmt.Errorf("heap: create in space %d: %w", space, err)
	}
	root := pg.ID().Page
	fsmInit(mt, pg, 0)
	mt.Release(pg, true)
	err = pool.SetRoot(mt, space, root)
	mt.Commit()
	if err != nil {
		return nil, fmt.Errorf("heap: create in space %d: %w", space, err)
	}
	h.highWater.Store(root + 1)
	chain := []*fsmPage{{no: root}}
	h.chain.Store(&chain)
	return h, nil
}

// Open returns the heap that Create made in space. It reads the space's
// meta page and every FSM page (one page request each: one FSM page covers
// 4048 pages at 4 KiB, 16336 at 16 KiB) and every visibility map page,
// and takes from them all it keeps
// in memory (the high water mark, the FSM chain and its bounds), so it
// works on pages that redo has just rebuilt.
func Open(m Account, pool *cache.Pool, space uint32) (*Heap, error) {
	pm, _ := accounts(m)
	info, err := pool.Space(pm, space)
	if err != nil {
		return nil, fmt.Errorf("heap: open space %d: %w", space, err)
	}
	if info.Root == 0 || info.Root >= info.HighWater {
		return nil, fmt.Errorf("%w: space %d has root page %d and high water %d",
			ErrNotHeap, space, info.Root, info.HighWater)
	}
	h := newHeap(pool, space)
	h.highWater.Store(info.HighWater)
	var chain []*fsmPage
	for no := info.Root; no != 0; {
		k := len(chain)
		if no >= info.HighWater || k >= int(info.HighWater) {
			return nil, fmt.Errorf("%w: space %d: free-space map page %d (number %d of the chain) is beyond high water %d",
				ErrNotHeap, space, no, k, info.HighWater)
		}
		pg, err := pool.Fetch(pm, page.ID{Space: space, Page: no})
		if err != nil {
			return nil, fmt.Errorf("heap: open space %d: free-space map page %d: %w", space, no, err)
		}
		pg.RLatch()
		b := pg.Data()
		cerr := checkFSMPage(b, k, h.fsmPer)
		next := binary.LittleEndian.Uint32(b[offFSMNext:])
		mx := byte(0)
		for _, c := range b[fsmBodyStart : fsmBodyStart+h.fsmPer] {
			mx = max(mx, c)
		}
		pg.RUnlatch()
		pg.Unpin(false)
		if cerr != nil {
			return nil, fmt.Errorf("%w: space %d: free-space map page %d: %v", ErrNotHeap, space, no, cerr)
		}
		fp := &fsmPage{no: no}
		fp.max.Store(uint32(mx))
		chain = append(chain, fp)
		no = next
	}
	h.chain.Store(&chain)
	if err := h.openVM(pm, info.Aux, info.HighWater); err != nil {
		return nil, err
	}
	return h, nil
}

// Space returns the heap's space.
func (h *Heap) Space() uint32 { return h.space }

// MaxRowSize returns the longest row the heap accepts (see MaxRowSize).
func (h *Heap) MaxRowSize() int { return h.maxRow }

// HighWater returns the first page number the heap has never allocated:
// rows live on the heap pages among pages 1 .. HighWater()-1 (FSM pages
// are interleaved with them).
func (h *Heap) HighWater() uint32 { return h.highWater.Load() }

func (h *Heap) id(no uint32) page.ID { return page.ID{Space: h.space, Page: no} }

func (h *Heap) raiseHighWater(hw uint32) {
	for {
		cur := h.highWater.Load()
		if hw <= cur || h.highWater.CompareAndSwap(cur, hw) {
			return
		}
	}
}

func (h *Heap) tooLarge(n int) error {
	return fmt.Errorf("%w: %d bytes, at most %d (a quarter of the body of a %d-byte page)",
		ErrRowTooLarge, n, h.maxRow, h.pageSize)
}

func (h *Heap) notFound(ptr RowPtr, format string, args ...any) error {
	return fmt.Errorf("%w: %s in space %d: %s", ErrRowNotFound, ptr, h.space, fmt.Sprintf(format, args...))
}

func (h *Heap) corrupt(no uint32, format string, args ...any) error {
	return fmt.Errorf("heap: page %s: %s: %w", h.id(no), fmt.Sprintf(format, args...), page.ErrCorruptPage)
}

func (h *Heap) badHeader(no uint32, b hpage) error {
	return h.corrupt(no, "bad heap header (nslots %d, ndead %d, cell start %d, frag %d)",
		b.nslots(), b.ndead(), b.cellStart(), b.frag())
}

// checkPtr rejects pointers to pages that cannot hold rows without
// touching any page.
func (h *Heap) checkPtr(ptr RowPtr) error {
	if ptr.Page == 0 {
		return h.notFound(ptr, "page 0 is the space's meta page")
	}
	if hw := h.highWater.Load(); ptr.Page >= hw {
		return h.notFound(ptr, "page %d is beyond the heap's end (high water %d)", ptr.Page, hw)
	}
	return nil
}

// liveSlot checks that pg (latched) is a heap page and ptr's slot holds a
// live, well-formed row.
func (h *Heap) liveSlot(pg *cache.Page, ptr RowPtr) (hpage, []byte, error) {
	b := hpage(pg.Data())
	if k := page.KindOf(b); k != page.KindHeap {
		return nil, nil, h.notFound(ptr, "page %d has kind %s, not %s", ptr.Page, k, page.KindHeap)
	}
	if !b.headerOK() {
		return nil, nil, h.badHeader(ptr.Page, b)
	}
	if int(ptr.Slot) >= b.nslots() {
		return nil, nil, h.notFound(ptr, "page %d has %d slots", ptr.Page, b.nslots())
	}
	row, live, ok := b.row(int(ptr.Slot))
	if !ok {
		off, n := b.slot(int(ptr.Slot))
		return nil, nil, h.corrupt(ptr.Page, "slot %d points at [%d,%d), outside the cell area", ptr.Slot, off, off+n)
	}
	if !live {
		return nil, nil, h.notFound(ptr, "slot %d is deleted", ptr.Slot)
	}
	return b, row, nil
}

// Fetch copies the row ptr names into dst[:0] and returns the extended
// slice, which is dst's array when it is large enough: a warm fetch into a
// reused buffer allocates nothing. A pointer that names no live row is
// ErrRowNotFound; on any error Fetch returns dst[:0].
//
// Cost: one page request for the row's page (none when the page number is
// 0 or at or beyond the high water mark), and m.Heap().HeapFetches+1
// whenever the page was requested, whether or not the slot held a row.
func (h *Heap) Fetch(m Account, ptr RowPtr, dst []byte) ([]byte, error) {
	dst = dst[:0]
	if err := h.checkPtr(ptr); err != nil {
		return dst, err
	}
	pm, hc := accounts(m)
	pg, err := h.pool.Fetch(pm, h.id(ptr.Page))
	if err != nil {
		return dst, fmt.Errorf("heap: fetch %s in space %d: %w", ptr, h.space, err)
	}
	if hc != nil {
		hc.HeapFetches++
	}
	pg.RLatch()
	_, row, err := h.liveSlot(pg, ptr)
	if err == nil {
		dst = append(dst, row...)
	}
	pg.RUnlatch()
	pg.Unpin(false)
	return dst, err
}

// Insert stores row and returns its pointer. A row longer than MaxRowSize
// is ErrRowTooLarge.
//
// Where it goes: the target page if the row fits there, else the lowest
// page the FSM says has room (which becomes the target), else a new page
// (which becomes the target). Cost when the target page has room: one
// heap page request (the FSM is not touched; see the package doc).
//
// Insert is one mini-transaction: InsertIn in an mtr of its own, committed.
func (h *Heap) Insert(m Account, row []byte) (RowPtr, error) {
	pm, _ := accounts(m)
	mt := h.pool.BeginMtr(pm)
	ptr, err := h.InsertIn(m, mt, row)
	mt.Commit()
	return ptr, err
}

// InsertIn is Insert as part of the caller's mini-transaction mt, which it
// does not commit: the caller may add to it (mt.Note) and must commit it
// soon, because the pages the insert changed (the row's page; for a new
// page also the space's meta page and an FSM page) stay exclusively
// latched until then. Page requests are charged to mt.Meter(), as
// everything done in mt, and the heap's counts to m.Heap() (m.Pages() is
// not asked for; it is normally the meter mt was begun with). An insert
// counts none of the heap's events today; InsertIn takes m all the same,
// so that every heap call has the same shape.
//
// mt must hold no page of the heap's space when InsertIn is called (one
// heap operation per mtr): the latch order of the package doc assumes
// that an operation starts with no heap, FSM or meta latch held. A hint
// correction of the FSM, or an extension of the FSM chain, that the
// insert makes on the way is committed in an mtr of its own before
// InsertIn returns.
func (h *Heap) InsertIn(m Account, mt *cache.Mtr, row []byte) (RowPtr, error) {
	if len(row) > h.maxRow {
		return RowPtr{}, h.tooLarge(len(row))
	}
	pg, fr, err := h.place(mt, len(row), 0)
	if err != nil {
		return RowPtr{}, fmt.Errorf("heap: insert %d-byte row in space %d: %w", len(row), h.space, err)
	}
	ptr, cat, err := h.insertLatched(mt, pg, row)
	mt.Release(pg, err == nil)
	if err != nil {
		if fr.pg != nil {
			fr.pg.Unpin(false)
		}
		return RowPtr{}, fmt.Errorf("heap: insert %d-byte row in space %d: %w", len(row), h.space, err)
	}
	if fr.pg != nil {
		h.fsmSet(mt, fr, cat)
	}
	return ptr, nil
}

// insertLatched puts row in pg, which place returned with room for it, and
// returns the page's free-space category afterwards. As in PostgreSQL, an
// insert does not update the FSM: the byte of a page being filled is left
// high, and corrected when an insert finds the page full (place). Only a
// new page's byte is set, by the caller, from the category returned here.
// REQUIRES: pg pinned and exclusively latched by mt.
func (h *Heap) insertLatched(mt *cache.Mtr, pg *cache.Page, row []byte) (RowPtr, uint8, error) {
	b := hpage(pg.Data())
	no := pg.ID().Page
	free, ndead := b.free()-len(row), b.ndead()-1
	if ndead < 0 {
		free, ndead = free-slotSize, 0
	}
	newCat := h.category(free, ndead)
	s, ok := heapInsert(mt, pg, row)
	if !ok {
		// place promised room; this is a bug, not bad input.
		return RowPtr{}, 0, h.corrupt(no, "%d-byte row does not fit although avail is %d", len(row), b.avail())
	}
	return RowPtr{Page: no, Slot: uint16(s)}, newCat, nil
}

// place returns a heap page numbered above `above` (0: any) with room for
// an n-byte row, pinned and exclusively latched by mt. If the page is new,
// the returned fsmRef holds its FSM page pinned (not latched); otherwise it
// is empty. A new page is already changed in mt (allocated and formatted,
// with the meta page), so it stays latched until mt commits whatever the
// caller does with it.
//
// Latch order: the caller may hold the exclusive latch of heap page
// `above` (a moving update); place latches only higher heap pages, and FSM
// pages one at a time, so heap latches are always taken in ascending page
// order and before FSM latches. The FSM corrections it makes (tryPage) are
// committed at once in mtrs of their own, so that mt holds no FSM latch
// while place goes on latching heap pages and the meta page.
func (h *Heap) place(mt *cache.Mtr, n int, above uint32) (*cache.Page, fsmRef, error) {
	// Every page found is judged by the room the row needs plus the fill
	// factor's reserve; a new page holds the row whatever the reserve.
	need := h.targetFree(n)
	if t := h.target.Load(); t > above && t < h.highWater.Load() {
		// Inserts into the target left its FSM byte high: when it is
		// full, tryPage records what it really has before we look
		// elsewhere (PostgreSQL's RecordAndGetPageWithFreeSpace).
		pg, err := h.tryPage(mt, t, need)
		if pg != nil || err != nil {
			return pg, fsmRef{}, err
		}
	}

	minCat := h.minCategory(need)
	from := above + 1
	for range maxSearchTries {
		no, ok, err := h.fsmSearch(mt, minCat, from)
		if err != nil {
			return nil, fsmRef{}, err
		}
		if !ok {
			break
		}
		pg, err := h.tryPage(mt, no, need)
		if err != nil {
			return nil, fsmRef{}, err
		}
		if pg != nil {
			h.target.Store(no)
			return pg, fsmRef{}, nil
		}
		from = no + 1
	}

	pg, fr, err := h.allocHeapPage(mt)
	if err != nil {
		return nil, fsmRef{}, err
	}
	h.target.Store(pg.ID().Page)
	return pg, fr, nil
}

// tryPage returns heap page no pinned and exclusively latched by mt if an
// n-byte row fits in it. If not, it corrects the page's FSM byte (stale:
// the FSM promised more than the page has), releases the page and returns
// nil. The byte is written while the page is still latched, so that a
// concurrent delete on the page, which sets the byte under the same latch,
// cannot be overwritten by an older, lower value; it is written in an mtr
// of its own, committed at once (see fsmCorrect).
func (h *Heap) tryPage(mt *cache.Mtr, no uint32, n int) (*cache.Page, error) {
	m := mt.Meter()
	pg, err := h.pool.Fetch(m, h.id(no))
	if err != nil {
		return nil, err
	}
	mt.Latch(pg)
	b := hpage(pg.Data())
	isHeap := page.KindOf(b) == page.KindHeap
	if isHeap && !b.headerOK() {
		mt.Release(pg, false)
		return nil, h.badHeader(no, b)
	}
	if isHeap && b.fits(n) {
		return pg, nil
	}
	cat := uint8(0)
	if isHeap {
		cat = h.category(b.free(), b.ndead())
	} else if fp, _, ok := h.fsmLocate(no); ok && fp.no == no {
		// An FSM page whose byte in itself is not 0 (corruption, which
		// Check reports): correcting it would latch the page mt is
		// holding a second time. Just pass it by.
		mt.Release(pg, false)
		return nil, nil
	}
	fr, err := h.fsmPin(m, no)
	if err == nil {
		h.fsmCorrect(mt, fr, cat)
	}
	mt.Release(pg, false)
	return nil, err
}

// allocHeapPage allocates and formats a new, empty heap page in mt and
// returns it pinned and exclusively latched by mt, with its FSM page
// pinned. The FSM is extended first (in an mtr of its own, committed) if
// it does not cover the new page, and the FSM page is pinned before the
// heap page is allocated, so that once a page is allocated nothing can
// fail.
//
// The high water mark is raised here, under allocMu, before mt commits:
// the next allocation must see it. A reader that goes to the new page
// before the commit waits for its latch.
func (h *Heap) allocHeapPage(mt *cache.Mtr) (*cache.Page, fsmRef, error) {
	m := mt.Meter()
	h.allocMu.Lock()
	defer h.allocMu.Unlock()
	hw := h.highWater.Load()
	if _, _, ok := h.fsmLocate(hw); !ok {
		if err := h.extendFSMLocked(m); err != nil {
			return nil, fsmRef{}, err
		}
		hw = h.highWater.Load()
	}
	fr, err := h.fsmPin(m, hw)
	if err != nil {
		return nil, fsmRef{}, err
	}
	pg, err := h.pool.AllocPage(mt, nil, h.space, page.KindHeap)
	if err != nil {
		fr.pg.Unpin(false)
		return nil, fsmRef{}, err
	}
	no := pg.ID().Page
	heapInit(mt, pg)
	h.raiseHighWater(no + 1)
	if no != hw {
		// Someone else allocates in this space: the page is usable, but
		// the FSM page pinned for it may be the wrong one.
		fr.pg.Unpin(false)
		if fr, err = h.fsmPin(m, no); err != nil {
			mt.Release(pg, true)
			return nil, fsmRef{}, fmt.Errorf("heap: space %d: allocated page %d, expected %d (does another user allocate in the heap's space?): %w",
				h.space, no, hw, err)
		}
	}
	return pg, fr, nil
}

// Update replaces the row ptr names with row and returns the row's pointer
// afterwards. If row fits in the row's page (counting the old row's bytes
// as free) it is updated in place and the pointer is unchanged. Otherwise
// the row moves to a page numbered higher than its old page (the target
// page, a page the FSM finds, or a new page), the old slot is deleted, the
// new pointer is returned and m.Heap().HeapMoves is incremented: the
// caller must repoint whatever stored the old pointer.
//
// Both pages are latched during a move (old page first, as higher pages
// always come after lower ones), so the row is never missing: a scan
// running meanwhile sees it once or, if it read the old page before the
// move, twice. The move is one mini-transaction: redo replays the row's
// new copy and the old slot's deletion together or not at all.
//
// Cost in place: one heap page request, plus one FSM request if the page's
// category changes.
func (h *Heap) Update(m Account, ptr RowPtr, row []byte) (RowPtr, error) {
	pm, _ := accounts(m)
	mt := h.pool.BeginMtr(pm)
	newPtr, err := h.UpdateIn(m, mt, ptr, row)
	mt.Commit()
	return newPtr, err
}

// UpdateIn is Update as part of the caller's mini-transaction mt, which it
// does not commit; see InsertIn for what that asks of the caller and which
// meter it charges (a move counts in m.Heap().HeapMoves). The pages it
// changed (the row's page, for a move also the new page, and
// their FSM pages, and for a new page the meta page) stay exclusively
// latched until mt commits.
func (h *Heap) UpdateIn(m Account, mt *cache.Mtr, ptr RowPtr, row []byte) (RowPtr, error) {
	if len(row) > h.maxRow {
		return ptr, h.tooLarge(len(row))
	}
	if err := h.checkPtr(ptr); err != nil {
		return ptr, err
	}
	pg, err := h.pool.Fetch(mt.Meter(), h.id(ptr.Page))
	if err != nil {
		return ptr, fmt.Errorf("heap: update %s in space %d: %w", ptr, h.space, err)
	}
	mt.Latch(pg)
	newPtr, dirty, err := h.updateLatched(mt, heapCounts(m), pg, ptr, row)
	mt.Release(pg, dirty)
	return newPtr, err
}

func (h *Heap) updateLatched(mt *cache.Mtr, hc *HeapCounts, pg *cache.Page, ptr RowPtr, row []byte) (RowPtr, bool, error) {
	m := mt.Meter()
	b, _, err := h.liveSlot(pg, ptr)
	if err != nil {
		return ptr, false, err
	}
	s := int(ptr.Slot)
	_, oldLen := b.slot(s)
	oldCat := h.category(b.free(), b.ndead())

	if b.fitsInPlace(s, row) {
		newCat := h.category(b.free()+oldLen-len(row), b.ndead())
		var fr fsmRef
		if newCat != oldCat {
			if fr, err = h.fsmPin(m, ptr.Page); err != nil {
				return ptr, false, fmt.Errorf("heap: update %s in space %d: %w", ptr, h.space, err)
			}
		}
		heapUpdate(mt, pg, s, row)
		if fr.pg != nil {
			h.fsmSet(mt, fr, newCat)
		}
		return ptr, true, nil
	}

	// Move. Pin everything that can fail first: the FSM page of the old
	// page (if its category changes), then the new page (and its FSM
	// page, if it is a new page), so that the page changes below cannot
	// fail half way.
	free, ndead := b.delEffect(s)
	pCat := h.category(free, ndead)
	var fp fsmRef
	if pCat != oldCat {
		if fp, err = h.fsmPin(m, ptr.Page); err != nil {
			return ptr, false, fmt.Errorf("heap: move %s in space %d: %w", ptr, h.space, err)
		}
	}
	q, fq, err := h.place(mt, len(row), ptr.Page)
	if err != nil {
		if fp.pg != nil {
			fp.pg.Unpin(false)
		}
		return ptr, false, fmt.Errorf("heap: move %s in space %d: %w", ptr, h.space, err)
	}
	newPtr, qCat, err := h.insertLatched(mt, q, row)
	mt.Release(q, err == nil)
	if err != nil {
		if fp.pg != nil {
			fp.pg.Unpin(false)
		}
		if fq.pg != nil {
			fq.pg.Unpin(false)
		}
		return ptr, false, fmt.Errorf("heap: move %s in space %d: %w", ptr, h.space, err)
	}
	heapDelete(mt, pg, s)
	// FSM latches in chain order: the old page's FSM page is never after
	// the new (higher) page's.
	if fp.pg != nil {
		h.fsmSet(mt, fp, pCat)
	}
	if fq.pg != nil {
		h.fsmSet(mt, fq, qCat)
	}
	if hc != nil {
		hc.HeapMoves++
	}
	return newPtr, true, nil
}

// Delete deletes the row ptr names. Its slot is reused by a later insert
// into the page, so ptr may then name another row. Cost: one heap page
// request, plus one FSM request if the page's category changes.
func (h *Heap) Delete(m Account, ptr RowPtr) error {
	pm, _ := accounts(m)
	mt := h.pool.BeginMtr(pm)
	err := h.DeleteIn(m, mt, ptr)
	mt.Commit()
	return err
}

// DeleteIn is Delete as part of the caller's mini-transaction mt, which it
// does not commit; see InsertIn for what that asks of the caller and which
// meter it charges. The row's
// page (and its FSM page, if the page's category changed) stays
// exclusively latched until mt commits.
func (h *Heap) DeleteIn(m Account, mt *cache.Mtr, ptr RowPtr) error {
	if err := h.checkPtr(ptr); err != nil {
		return err
	}
	pg, err := h.pool.Fetch(mt.Meter(), h.id(ptr.Page))
	if err != nil {
		return fmt.Errorf("heap: delete %s in space %d: %w", ptr, h.space, err)
	}
	mt.Latch(pg)
	dirty, err := h.deleteLatched(mt, pg, ptr)
	mt.Release(pg, dirty)
	return err
}

func (h *Heap) deleteLatched(mt *cache.Mtr, pg *cache.Page, ptr RowPtr) (bool, error) {
	b, _, err := h.liveSlot(pg, ptr)
	if err != nil {
		return false, err
	}
	s := int(ptr.Slot)
	oldCat := h.category(b.free(), b.ndead())
	free, ndead := b.delEffect(s)
	newCat := h.category(free, ndead)
	var fr fsmRef
	if newCat != oldCat {
		if fr, err = h.fsmPin(mt.Meter(), ptr.Page); err != nil {
			return false, fmt.Errorf("heap: delete %s in space %d: %w", ptr, h.space, err)
		}
	}
	heapDelete(mt, pg, s)
	if fr.pg != nil {
		h.fsmSet(mt, fr, newCat)
	}
	return true, nil
}
