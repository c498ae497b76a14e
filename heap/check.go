package heap

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
)

// Check verifies the heap's invariants and returns every violation found
// (joined with errors.Join), or nil. It checks the space's meta page
// against what the heap remembers, the FSM chain (format, links, the
// in-memory bound on each FSM page's categories), every heap page (see the
// page format in page.go: cells inside the cell area and disjoint, byte
// accounting, deleted-slot count) and that every heap page's FSM byte is
// at least its current category (never below: room would be lost), and
// every other page's byte 0; the visibility map chain (format, links,
// the meta page's Aux), that map pages have no bits, that no page is
// all-frozen without being all-visible, and that every heap page's
// PD_ALL_VISIBLE agrees with its all-visible bit.
//
// Check reads every page through the pool, charging a.Pages(). It may
// run while other goroutines change the heap (inserts, updates, deletes,
// prunes, vacuum): each heap page is judged under its shared latch
// together with its FSM byte and its visibility-map bits, read then
// under their own latches (heap page latches come before FSM and map
// page latches, the order writers take them in). A writer changes a
// page, its FSM byte and its map bits in one mini-transaction that
// keeps all of them latched until it commits, so the three are seen as
// of one moment. The space's high water is bracketed by two loads
// around the meta page's read, since a page may be allocated between
// them; pages allocated after Check started are not checked. Tests call
// it; so can a tool.
func (h *Heap) Check(a Account) error {
	m, _ := accounts(a)
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("heap: check space %d: "+format, append([]any{h.space}, args...)...))
	}
	// Loaded before the map chains: a map page allocated later is at or
	// above hw, beyond the pages checked.
	hw := h.highWater.Load()
	vmBefore := h.vmChain()
	info, err := h.pool.Space(m, h.space)
	if err != nil {
		return fmt.Errorf("heap: check space %d: %w", h.space, err)
	}
	// The high water is raised before the allocation's mini-transaction
	// commits the meta page, and the meta page is read under its latch:
	// what the meta page says lies between the loads before and after.
	hwAfter := h.highWater.Load()
	if info.HighWater < hw || info.HighWater > hwAfter {
		fail("meta page high water %d, heap remembers %d", info.HighWater, hwAfter)
	}
	chain := *h.chain.Load()
	if info.Root != chain[0].no {
		fail("meta page root %d, heap's first FSM page is %d", info.Root, chain[0].no)
	}

	// Copy the FSM bytes out.
	cats := make([]byte, 0, len(chain)*h.fsmPer)
	isFSM := make(map[uint32]bool, len(chain))
	for k, fp := range chain {
		isFSM[fp.no] = true
		pg, err := h.pool.Fetch(m, h.id(fp.no))
		if err != nil {
			return errors.Join(append(errs, fmt.Errorf("heap: check space %d: FSM page %d: %w", h.space, fp.no, err))...)
		}
		pg.RLatch()
		b := pg.Data()
		if err := checkFSMPage(b, k, h.fsmPer); err != nil {
			fail("FSM page %d: %v", fp.no, err)
		}
		next := binary.LittleEndian.Uint32(b[offFSMNext:])
		var want uint32
		if k+1 < len(chain) {
			want = chain[k+1].no
		}
		if next != want {
			fail("FSM page %d links to %d, want %d", fp.no, next, want)
		}
		body := b[fsmBodyStart : fsmBodyStart+h.fsmPer]
		mx := byte(0)
		for _, c := range body {
			mx = max(mx, c)
		}
		if uint32(mx) > fp.max.Load() {
			fail("FSM page %d holds category %d, above its remembered bound %d", fp.no, mx, fp.max.Load())
		}
		cats = append(cats, body...)
		pg.RUnlatch()
		pg.Unpin(false)
	}
	if int(hw) > len(cats) {
		fail("the FSM covers %d pages, high water is %d", len(cats), hw)
		return errors.Join(errs...)
	}
	// A page's byte is set after its allocation raised the high water:
	// bytes past the high water loaded after the copy are 0.
	hwFSM := h.highWater.Load()
	for i := int(hwFSM); i < len(cats); i++ {
		if cats[i] != 0 {
			fail("FSM byte of page %d, beyond high water %d, is %d", i, hwFSM, cats[i])
		}
	}
	if cats[0] != 0 {
		fail("FSM byte of the meta page is %d", cats[0])
	}

	// The visibility map chain. Its first page is recorded in the meta
	// page (Aux) when it is created, which may fall between the two
	// loads of the chain.
	vmChain := h.vmChain()
	auxOK := func(c []uint32) bool { return len(c) > 0 && info.Aux == c[0] || len(c) == 0 && info.Aux == 0 }
	if !auxOK(vmBefore) && !auxOK(vmChain) {
		fail("meta page aux %d, heap's visibility map chain is %v", info.Aux, vmChain)
	}
	isVM := make(map[uint32]bool, len(vmChain))
	for k, no := range vmChain {
		isVM[no] = true
		pg, err := h.pool.Fetch(m, h.id(no))
		if err != nil {
			return errors.Join(append(errs, fmt.Errorf("heap: check space %d: visibility map page %d: %w", h.space, no, err))...)
		}
		pg.RLatch()
		b := pg.Data()
		if err := checkVMPage(b, k, h.vmPer); err != nil {
			fail("visibility map page %d: %v", no, err)
		}
		var want uint32
		if k+1 < len(vmChain) {
			want = vmChain[k+1]
		}
		if next := binary.LittleEndian.Uint32(b[offVMNext:]); next != want {
			fail("visibility map page %d links to %d, want %d", no, next, want)
		}
		pg.RUnlatch()
		pg.Unpin(false)
	}

	for no := uint32(1); no < hw; no++ {
		if isFSM[no] || isVM[no] {
			// A map page's byte and bits never change.
			cat, v, err := h.checkMapBits(m, no)
			if err != nil {
				fail("page %d: %w", no, err)
				continue
			}
			if cat != 0 {
				fail("FSM byte of map page %d is %d", no, cat)
			}
			if v != 0 {
				fail("visibility map bits of map page %d are %#x", no, v)
			}
			continue
		}
		pg, err := h.pool.Fetch(m, h.id(no))
		if err != nil {
			fail("page %d: %w", no, err)
			continue
		}
		pg.RLatch()
		b := hpage(pg.Data())
		switch k := page.KindOf(b); {
		case k != page.KindHeap:
			fail("page %d has kind %s, want %s", no, k, page.KindHeap)
		default:
			// Read under the heap page's latch: the page, its byte and
			// its bits as of one moment.
			cat, v, err := h.checkMapBits(m, no)
			if err != nil {
				fail("heap page %d: %w", no, err)
				break
			}
			if v == VMAllFrozen {
				fail("heap page %d is all-frozen in the visibility map but not all-visible", no)
			}
			if av, pd := v&VMAllVisible != 0, b.pdFlags()&PDAllVisible != 0; av != pd {
				// Both change in one mini-transaction (vm.go).
				fail("heap page %d: all-visible in the visibility map %v, PD_ALL_VISIBLE %v", no, av, pd)
			}
			if err := b.verify(); err != nil {
				fail("heap page %d: %v", no, err)
			} else if want := h.category(b.free(), b.ndead()); cat < want {
				// Inserts leave a page's byte high (it is corrected when
				// an insert finds the page full); a byte below the page's
				// category would hide room for good.
				fail("FSM byte of heap page %d is %d, below its category %d (avail %d)", no, cat, want, b.avail())
			}
		}
		pg.RUnlatch()
		pg.Unpin(false)
	}
	return errors.Join(errs...)
}

// checkMapBits reads page no's FSM byte and visibility-map bits, each
// under its map page's shared latch. The caller may hold no's latch:
// heap page latches come before map page latches.
func (h *Heap) checkMapBits(m *cache.Meter, no uint32) (cat, bits uint8, err error) {
	fr, err := h.fsmPin(m, no)
	if err != nil {
		return 0, 0, err
	}
	fr.pg.RLatch()
	b := fr.pg.Data()
	if page.KindOf(b) == page.KindFSM {
		cat = b[fsmBodyStart+fr.idx]
	} else {
		err = fmt.Errorf("free-space map page %d has kind %s: %w", fr.pg.ID().Page, page.KindOf(b), page.ErrCorruptPage)
	}
	fr.pg.RUnlatch()
	fr.pg.Unpin(false)
	if err != nil {
		return 0, 0, err
	}
	r, err := h.vmPin(m, nil, no)
	if err != nil || r.pg == nil {
		return cat, 0, err
	}
	r.pg.RLatch()
	b = r.pg.Data()
	if page.KindOf(b) == page.KindVM {
		bits = vmGet(b, r.idx)
	} else {
		err = fmt.Errorf("visibility map page %d has kind %s: %w", r.pg.ID().Page, page.KindOf(b), page.ErrCorruptPage)
	}
	r.pg.RUnlatch()
	r.pg.Unpin(false)
	return cat, bits, err
}
