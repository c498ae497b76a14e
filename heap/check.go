package heap

import (
	"encoding/binary"
	"errors"
	"fmt"

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
// Check reads every page through the pool, charging a.Pages(), and must
// not run concurrently with changes to the heap. Tests call it; so can a
// tool.
func (h *Heap) Check(a Account) error {
	m, _ := accounts(a)
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("heap: check space %d: "+format, append([]any{h.space}, args...)...))
	}
	info, err := h.pool.Space(m, h.space)
	if err != nil {
		return fmt.Errorf("heap: check space %d: %w", h.space, err)
	}
	hw := h.highWater.Load()
	if info.HighWater != hw {
		fail("meta page high water %d, heap remembers %d", info.HighWater, hw)
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
	for i := int(hw); i < len(cats); i++ {
		if cats[i] != 0 {
			fail("FSM byte of page %d, beyond high water %d, is %d", i, hw, cats[i])
		}
	}
	if cats[0] != 0 {
		fail("FSM byte of the meta page is %d", cats[0])
	}

	// Copy the visibility map's bytes out.
	vmChain := h.vmChain()
	if len(vmChain) > 0 && info.Aux != vmChain[0] || len(vmChain) == 0 && info.Aux != 0 {
		fail("meta page aux %d, heap's visibility map chain is %v", info.Aux, vmChain)
	}
	var vmBytes []byte
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
		vmBytes = append(vmBytes, b[vmBodyStart:vmBodyStart+(h.vmPer+3)/4]...)
		pg.RUnlatch()
		pg.Unpin(false)
	}
	vmBits := func(no uint32) uint8 {
		k, idx := int(no)/h.vmPer, int(no)%h.vmPer
		if k >= len(vmChain) {
			return 0
		}
		return vmBytes[k*((h.vmPer+3)/4)+idx/4] >> (2 * (idx % 4)) & vmValidBits
	}

	for no := uint32(1); no < hw; no++ {
		if isFSM[no] || isVM[no] {
			if cats[no] != 0 {
				fail("FSM byte of map page %d is %d", no, cats[no])
			}
			if v := vmBits(no); v != 0 {
				fail("visibility map bits of map page %d are %#x", no, v)
			}
			continue
		}
		if v := vmBits(no); v == VMAllFrozen {
			fail("heap page %d is all-frozen in the visibility map but not all-visible", no)
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
			if av, pd := vmBits(no)&VMAllVisible != 0, b.pdFlags()&PDAllVisible != 0; av != pd {
				// Both change in one mini-transaction (vm.go).
				fail("heap page %d: all-visible in the visibility map %v, PD_ALL_VISIBLE %v", no, av, pd)
			}
			if err := b.verify(); err != nil {
				fail("heap page %d: %v", no, err)
			} else if want := h.category(b.free(), b.ndead()); cats[no] < want {
				// Inserts leave a page's byte high (it is corrected when
				// an insert finds the page full); a byte below the page's
				// category would hide room for good.
				fail("FSM byte of heap page %d is %d, below its category %d (avail %d)", no, cats[no], want, b.avail())
			}
		}
		pg.RUnlatch()
		pg.Unpin(false)
	}
	return errors.Join(errs...)
}
