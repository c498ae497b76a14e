package heap

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
)

// The free-space map (FSM) keeps one byte per page of the space: the page's
// free-space category, avail / (pageSize/256) capped at 255, where avail is
// the longest row an insert could put in the page (see hpage.avail). As in
// PostgreSQL, category c promises at least c·pageSize/256 bytes, so a page
// found in the FSM always has room; the map may understate a page's room,
// never overstate it (a candidate that turns out too full gets its byte
// corrected). The step is 16 bytes on 4 KiB pages, 64 on 16 KiB, 256 on
// 64 KiB. Bytes of pages that are not heap pages (the meta page, the FSM
// pages themselves) stay 0.
//
// FSM pages are pages of kind page.KindFSM in the heap's own space,
// chained in order; the first is the heap's root (the Root field of the
// space's meta page). FSM page k covers page numbers k·N to (k+1)·N-1,
// N = pageSize-48: 4048 pages per FSM page on 4 KiB pages (16 MiB of heap),
// 16336 on 16 KiB pages (255 MiB).
//
//	0        32       36        38       40         44           48
//	+--------+--------+---------+--------+----------+------------+-------------+-------------+----
//	| cache  | magic  | version | unused | next FSM | first page | category of | category of | ...
//	| header | "ELFS" |  (2B)   |  (2B)  |   (4B)   |    (4B)    | first page  | first+1     |
//	+--------+--------+---------+--------+----------+------------+-------------+-------------+----
//
// "version" is the heap's format version (of heap and FSM pages alike);
// Open refuses any other. "next FSM" is the page number of the next FSM
// page, 0 for the last; "first page" (k·N) lets Open check the chain.
//
// Version history: 1 — this layout.
const (
	fsmMagic   = 0x53464c45 // "ELFS" little-endian
	fsmVersion = 1

	offFSMMagic   = page.HeaderSize
	offFSMVersion = page.HeaderSize + 4
	offFSMNext    = page.HeaderSize + 8
	offFSMFirst   = page.HeaderSize + 12
	fsmBodyStart  = page.HeaderSize + 16

	maxCategory = 255
)

// fsmPerPage returns how many pages one FSM page covers.
func fsmPerPage(pageSize int) int { return pageSize - fsmBodyStart }

// category maps the room of a page (free bytes, deleted slots) to its FSM
// byte.
func (h *Heap) category(free, ndead int) uint8 {
	if ndead == 0 {
		free -= slotSize
	}
	if free <= 0 {
		return 0
	}
	return uint8(min(free/h.step, maxCategory))
}

// minCategory is the smallest category that guarantees room for an n-byte
// row. It is at least 1, so that pages whose byte is 0 (full, or not heap
// pages) are never candidates.
func (h *Heap) minCategory(n int) uint8 {
	return uint8(max((n+h.step-1)/h.step, 1))
}

// fsmPage is one page of the FSM chain as the heap remembers it.
type fsmPage struct {
	no uint32
	// max is an upper bound of the categories stored in the page: raised
	// under the page's exclusive latch whenever a byte is set, set to the
	// exact maximum under its shared latch by a search that read every
	// byte. A search skips pages whose bound is below what it needs,
	// without touching them, so a heap whose earlier pages are full pays
	// nothing for them.
	max atomic.Uint32
}

// fsmRef is an FSM page pinned to update one page's byte.
type fsmRef struct {
	pg  *cache.Page
	fp  *fsmPage
	no  uint32 // the heap page whose byte this is
	idx int    // its byte's offset in the FSM page body
}

// fsmLocate returns the FSM page covering page no and the byte's index.
func (h *Heap) fsmLocate(no uint32) (*fsmPage, int, bool) {
	chain := *h.chain.Load()
	k := int(no / uint32(h.fsmPer))
	if k >= len(chain) {
		return nil, 0, false
	}
	return chain[k], int(no % uint32(h.fsmPer)), true
}

// fsmPin pins the FSM page holding page no's byte.
func (h *Heap) fsmPin(m *cache.Meter, no uint32) (fsmRef, error) {
	fp, idx, ok := h.fsmLocate(no)
	if !ok {
		return fsmRef{}, fmt.Errorf("heap: space %d: page %d is beyond the free-space map: %w",
			h.space, no, page.ErrCorruptPage)
	}
	pg, err := h.pool.Fetch(m, page.ID{Space: h.space, Page: fp.no})
	if err != nil {
		return fsmRef{}, fmt.Errorf("heap: space %d: free-space map page %d: %w", h.space, fp.no, err)
	}
	return fsmRef{pg: pg, fp: fp, no: no, idx: idx}, nil
}

// fsmSet stores cat as the category of r's page, as part of mt, and hands
// r's pin to mt. The FSM page is latched through mt: if the byte changes,
// the page stays exclusively latched until mt commits; if not, it is
// released at once. Callers that change a heap page hold its exclusive
// latch throughout, so that two changes to one page update its byte in the
// same order; heap page latches come before FSM page latches, and FSM page
// latches come in chain order. A page that is not an FSM page (corruption)
// is left alone; Check reports it.
func (h *Heap) fsmSet(mt *cache.Mtr, r fsmRef, cat uint8) {
	mt.Latch(r.pg)
	b := r.pg.Data()
	changed := false
	if page.KindOf(b) == page.KindFSM && b[fsmBodyStart+r.idx] != cat {
		fsmSetByte(mt, r.pg, r.idx, cat)
		changed = true
		if uint32(cat) > r.fp.max.Load() {
			r.fp.max.Store(uint32(cat))
		}
	}
	mt.Release(r.pg, changed)
}

// fsmCorrect is fsmSet for a correction that an insert makes on its way
// (tryPage): the byte is a hint that need not be atomic with the insert,
// so it is set in an mtr of its own, committed at once. That way the
// insert's mtr holds no FSM latch while it goes on to latch heap pages
// and the meta page, which would invert the latch order (heap pages,
// then meta, then FSM pages). If mt already holds r's FSM page (a caller
// that broke the one-operation-per-mtr rule), the byte is set in mt
// instead, since a second mtr would wait for mt's latch forever.
func (h *Heap) fsmCorrect(mt *cache.Mtr, r fsmRef, cat uint8) {
	if mt.Holds(r.pg) {
		h.fsmSet(mt, r, cat)
		return
	}
	cm := h.pool.BeginMtr(mt.Meter())
	h.fsmSet(cm, r, cat)
	cm.Commit()
}

// fsmSearch returns the lowest page at or above from whose category is at
// least minCat. FSM pages are read under their shared latch (through mt,
// which may hold one exclusively already), one at a time; no heap page
// latch is taken here.
func (h *Heap) fsmSearch(mt *cache.Mtr, minCat uint8, from uint32) (uint32, bool, error) {
	m := mt.Meter()
	chain := *h.chain.Load()
	per := uint32(h.fsmPer)
	for k := int(from / per); k < len(chain); k++ {
		fp := chain[k]
		if fp.max.Load() < uint32(minCat) {
			continue
		}
		pg, err := h.pool.Fetch(m, page.ID{Space: h.space, Page: fp.no})
		if err != nil {
			return 0, false, fmt.Errorf("heap: space %d: free-space map page %d: %w", h.space, fp.no, err)
		}
		mt.RLatch(pg)
		b := pg.Data()
		if page.KindOf(b) != page.KindFSM {
			kind := page.KindOf(b)
			mt.RUnlatch(pg)
			pg.Unpin(false)
			return 0, false, fmt.Errorf("heap: space %d: free-space map page %d has kind %s: %w",
				h.space, fp.no, kind, page.ErrCorruptPage)
		}
		base := uint32(k) * per
		start := 0
		if from > base {
			start = int(from - base)
		}
		cats := b[fsmBodyStart : fsmBodyStart+h.fsmPer]
		found, mx := -1, byte(0)
		for i, c := range cats {
			mx = max(mx, c)
			if c >= minCat && i >= start && found < 0 {
				found = i
			}
		}
		fp.max.Store(uint32(mx))
		mt.RUnlatch(pg)
		pg.Unpin(false)
		if found >= 0 {
			return base + uint32(found), true, nil
		}
	}
	return 0, false, nil
}

// initFSMPage formats the FSM page covering pages from first on (the k-th
// FSM page covers k·N on): its header, and every category 0. Redo of
// fsm-init calls it.
func initFSMPage(b []byte, first uint32) {
	binary.LittleEndian.PutUint32(b[offFSMMagic:], fsmMagic)
	binary.LittleEndian.PutUint16(b[offFSMVersion:], fsmVersion)
	binary.LittleEndian.PutUint32(b[offFSMNext:], 0)
	binary.LittleEndian.PutUint32(b[offFSMFirst:], first)
	clear(b[fsmBodyStart:])
}

// checkFSMPage checks the header of what should be the k-th FSM page.
func checkFSMPage(b []byte, k, per int) error {
	switch {
	case page.KindOf(b) != page.KindFSM:
		return fmt.Errorf("kind %s, want %s", page.KindOf(b), page.KindFSM)
	case binary.LittleEndian.Uint32(b[offFSMMagic:]) != fsmMagic:
		return fmt.Errorf("magic %08x, want %08x", binary.LittleEndian.Uint32(b[offFSMMagic:]), uint32(fsmMagic))
	case binary.LittleEndian.Uint16(b[offFSMVersion:]) != fsmVersion:
		return fmt.Errorf("format version %d, want %d", binary.LittleEndian.Uint16(b[offFSMVersion:]), fsmVersion)
	case binary.LittleEndian.Uint32(b[offFSMFirst:]) != uint32(k*per):
		return fmt.Errorf("first page %d, want %d (FSM page %d of the chain)",
			binary.LittleEndian.Uint32(b[offFSMFirst:]), k*per, k)
	}
	return nil
}

// extendFSMLocked adds an FSM page at the end of the chain. It is the page
// at the high water mark, so it covers itself when it starts a range. The
// extension is a mini-transaction of its own (the meta page, the new FSM
// page and the link from the last one), committed before the caller's
// allocation goes on, so that the caller's mtr never holds the last FSM
// page's latch: FSM latches must come after heap and meta latches, and in
// chain order. A crash after it leaves an empty FSM page at the end of the
// chain, which the next extension would have added anyway.
// REQUIRES: h.allocMu held; the caller's mtr holds no meta or FSM page.
func (h *Heap) extendFSMLocked(m *cache.Meter) error {
	chain := *h.chain.Load()
	last := chain[len(chain)-1]
	lpg, err := h.pool.Fetch(m, page.ID{Space: h.space, Page: last.no})
	if err != nil {
		return fmt.Errorf("heap: space %d: extend free-space map: %w", h.space, err)
	}
	mt := h.pool.BeginMtr(m)
	npg, err := h.pool.AllocPage(mt, nil, h.space, page.KindFSM)
	if err != nil {
		lpg.Unpin(false)
		mt.Commit()
		return fmt.Errorf("heap: space %d: extend free-space map: %w", h.space, err)
	}
	no := npg.ID().Page
	fsmInit(mt, npg, uint32(len(chain)*h.fsmPer))
	mt.Release(npg, true)

	// The last FSM page after the meta page: the meta page is latched
	// before FSM pages everywhere. The new page is unknown to anyone else.
	mt.Latch(lpg)
	fsmLink(mt, lpg, no)
	mt.Release(lpg, true)
	mt.Commit()

	// Publish the page in the chain before the high water mark covers it,
	// so that a scan never mistakes it for a heap page.
	next := make([]*fsmPage, len(chain), len(chain)+1)
	copy(next, chain)
	next = append(next, &fsmPage{no: no})
	h.chain.Store(&next)
	h.raiseHighWater(no + 1)
	return nil
}

// isFSMPage reports whether page no is one of the FSM pages.
func (h *Heap) isFSMPage(no uint32) bool {
	for _, fp := range *h.chain.Load() {
		if fp.no == no {
			return true
		}
	}
	return false
}
