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
// every other page's byte 0.
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

	for no := uint32(1); no < hw; no++ {
		if isFSM[no] {
			if cats[no] != 0 {
				fail("FSM byte of FSM page %d is %d", no, cats[no])
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
