package heap

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync"

	"github.com/enginelab/enginelab/cache/page"
)

// A heap page is a slotted page. After the 32-byte page header that package
// cache owns comes a 12-byte heap header, then the slot array growing
// forward; row bytes ("cells") grow backward from the end of the page.
//
//	0        32       34       36           40     43      44       48       52
//	+--------+--------+--------+------------+------+-------+--------+--------+----
//	| cache  | nslots | ndead  | cell start | frag | flags | slot 0 | slot 1 | ... ──►
//	| header |  (2B)  |  (2B)  |    (4B)    | (3B) |  (1B) |  (4B)  |  (4B)  |
//	+--------+--------+--------+------------+------+-------+--------+--------+----
//	|                          free space                               |
//	|            ◄── ... +-------------------+-------------+------------+
//	|                    |       row 2       |    row 1    |   row 0    |
//	+--------------------+-------------------+-------------+------------+
//	                     ^ cell start                                   ^ page size
//
//	a slot:  +-------------+-------------+
//	         | offset (2B) | length (2B) |
//	         +-------------+-------------+
//
// All integers are little-endian, like the cache header.
//
//   - nslots is the length of the slot array. A slot's index is the Slot of
//     a RowPtr, so slots never move; the array only grows, except that
//     deleted slots at its end are trimmed off.
//   - ndead counts deleted slots inside the array. A deleted slot has
//     offset 0 (no cell can start there) and is reused by the next insert
//     into the page, lowest index first.
//   - cell start is the offset of the lowest cell: free space runs from the
//     end of the slot array to it. It is 4 bytes because on an empty 64 KiB
//     page it equals the page size, 65536, one more than 16 bits hold. A
//     slot's offset needs only 16 bits: a cell of at least one byte starts
//     below the page size.
//   - frag counts the dead bytes inside the cell area (deleted rows other
//     than the lowest one, the tail of a row that shrank in place). They are
//     reclaimed by compaction, which packs the live cells against the end of
//     the page in slot order when an insert or update needs contiguous
//     room that only frag can give.
//   - flags is PostgreSQL's pd_flags, with its bit values: only
//     PD_ALL_VISIBLE (0x04) is used, on versioned heaps (vm.go). frag
//     never exceeds the page size (64 KiB at most), so 3 bytes hold it;
//     the flags byte was frag's high byte, always 0, so pages written
//     before it existed read as flags 0.
//   - A live row of length 0 has offset 1 (emptyRowOff): not 0, which means
//     deleted, and pointing at no bytes.
//   - Two more offsets below any cell (cells start at or after slotsStart)
//     give a slot PostgreSQL's other line-pointer states (storage/itemid.h),
//     which only versioned heaps use (versions.go): offset 2 (lpDeadOff,
//     length 0) is LP_DEAD, a slot whose tuple is gone but that index
//     entries may still name, so it is not reused; offset 3
//     (lpRedirectOff) is LP_REDIRECT, whose length field holds the slot it
//     redirects to (the live member of a pruned HOT chain). A deleted slot
//     (offset 0) is LP_UNUSED, and a slot with a cell is LP_NORMAL. ndead
//     counts LP_UNUSED slots only (the reusable ones).
//
// Worked example: a 4 KiB page holding "alpha" (slot 0) then "hello, world"
// (slot 1) has nslots 2, ndead 0, cell start 4096-5-12 = 4079, frag 0,
// slot 0 = (4091, 5) and slot 1 = (4079, 12). Its slot array ends at
// 44+2·4 = 52, so 4079-52 = 4027 bytes are free; a new row also needs a new
// slot, so it may be up to 4023 bytes (bounded again by MaxRowSize), and the
// page's free-space category is 4023/16 = 251 (see fsm.go).
const (
	offNSlots    = page.HeaderSize      // u16
	offNDead     = page.HeaderSize + 2  // u16
	offCellStart = page.HeaderSize + 4  // u32
	offFrag      = page.HeaderSize + 8  // u24
	offPDFlags   = page.HeaderSize + 11 // u8
	slotsStart   = page.HeaderSize + 12 // first slot

	// heapHeaderSize is the heap's own header after the cache header.
	heapHeaderSize = slotsStart - page.HeaderSize

	// slotSize is the size of one slot: offset (2B) and length (2B).
	slotSize = 4

	// emptyRowOff is the offset stored for a live row of length 0.
	emptyRowOff = 1

	// lpDeadOff marks an LP_DEAD slot (length 0): no storage, not
	// reusable until vacuum has removed the index entries that name it.
	lpDeadOff = 2
	// lpRedirectOff marks an LP_REDIRECT slot: its length field is the
	// slot it redirects to, on the same page.
	lpRedirectOff = 3
)

// MaxRowSize returns the longest row a heap on pages of pageSize bytes
// accepts: a quarter of the page body, the body being what follows the
// cache and heap headers, rounded down. That is (pageSize-44)/4: 1013 bytes
// on 4 KiB pages, 4085 on 16 KiB pages, 16373 on 64 KiB pages. At least
// three rows of that size (and their slots) fit in an empty page.
func MaxRowSize(pageSize int) int {
	return (pageSize - page.HeaderSize - heapHeaderSize) / 4
}

// hpage is the bytes of a heap page. Callers hold the page's latch: shared
// to read, exclusive to change.
type hpage []byte

func (b hpage) nslots() int    { return int(binary.LittleEndian.Uint16(b[offNSlots:])) }
func (b hpage) ndead() int     { return int(binary.LittleEndian.Uint16(b[offNDead:])) }
func (b hpage) cellStart() int { return int(binary.LittleEndian.Uint32(b[offCellStart:])) }
func (b hpage) frag() int      { return int(binary.LittleEndian.Uint32(b[offFrag:]) & 0xffffff) }
func (b hpage) pdFlags() uint8 { return b[offPDFlags] }

func (b hpage) setNSlots(n int)    { binary.LittleEndian.PutUint16(b[offNSlots:], uint16(n)) }
func (b hpage) setNDead(n int)     { binary.LittleEndian.PutUint16(b[offNDead:], uint16(n)) }
func (b hpage) setCellStart(n int) { binary.LittleEndian.PutUint32(b[offCellStart:], uint32(n)) }
func (b hpage) setFrag(n int) {
	binary.LittleEndian.PutUint32(b[offFrag:], uint32(n)&0xffffff|uint32(b[offPDFlags])<<24)
}
func (b hpage) setPDFlags(f uint8) { b[offPDFlags] = f }

// slot returns slot i's offset and length. REQUIRES: i < nslots.
func (b hpage) slot(i int) (off, n int) {
	p := slotsStart + i*slotSize
	return int(binary.LittleEndian.Uint16(b[p:])), int(binary.LittleEndian.Uint16(b[p+2:]))
}

func (b hpage) setSlot(i, off, n int) {
	p := slotsStart + i*slotSize
	binary.LittleEndian.PutUint16(b[p:], uint16(off))
	binary.LittleEndian.PutUint16(b[p+2:], uint16(n))
}

func (b hpage) slotsEnd() int { return slotsStart + b.nslots()*slotSize }

// free returns the bytes an insert or update can claim: the gap between the
// slot array and the cells plus the fragmented bytes compaction recovers.
func (b hpage) free() int { return b.cellStart() - b.slotsEnd() + b.frag() }

// avail returns the longest row an insert can put in the page: free space,
// less a new slot when no deleted slot can be reused.
func (b hpage) avail() int {
	f := b.free()
	if b.ndead() == 0 {
		f -= slotSize
	}
	return max(f, 0)
}

// fits reports whether a row of n bytes can be inserted: its bytes plus,
// when no deleted slot can be reused, a new slot. (avail is clamped at 0,
// so "avail() >= n" would wrongly admit an empty row into a page without
// room for its slot.)
func (b hpage) fits(n int) bool {
	need := n
	if b.ndead() == 0 {
		need += slotSize
	}
	return need <= b.free()
}

// initHeapPage writes an empty heap header into a page that AllocPage has
// just formatted as KindHeap.
func initHeapPage(b hpage) {
	b.setNSlots(0)
	b.setNDead(0)
	b.setCellStart(len(b))
	b.setFrag(0)
	b.setPDFlags(0)
}

// headerOK reports whether the heap header is self-consistent, so that the
// slot and cell arithmetic of the other methods stays inside the page. It
// is cheap and checked on every access; a page failing it is corrupt.
func (b hpage) headerOK() bool {
	ns, cs := b.nslots(), b.cellStart()
	end := slotsStart + ns*slotSize
	return end <= cs && cs <= len(b) && b.ndead() <= ns && b.frag() <= len(b)-cs
}

// row returns slot i's row and whether it is live; ok is also false for a
// slot whose offset and length point outside the cell area (corruption the
// caller reports). REQUIRES: headerOK, i < nslots.
func (b hpage) row(i int) (row []byte, live, ok bool) {
	off, n := b.slot(i)
	switch {
	case off == 0, off == lpDeadOff, off == lpRedirectOff:
		return nil, false, true
	case n == 0:
		return b[:0], true, true
	case off < b.cellStart() || off+n > len(b):
		return nil, true, false
	}
	return b[off : off+n], true, true
}

// insert stores row in the page and returns its slot, reusing the lowest
// deleted slot if there is one and compacting if the gap is too small. It
// reports false, changing nothing, if the row does not fit (len(row) >
// avail). REQUIRES: exclusive latch, headerOK.
func (b hpage) insert(row []byte) (int, bool) {
	s := b.reusableSlot()
	need := len(row)
	if s < 0 {
		need += slotSize
	}
	if need > b.free() {
		return 0, false
	}
	if need > b.gap() {
		b.compact()
	}
	if s < 0 {
		s = b.nslots()
		b.setNSlots(s + 1)
	} else {
		b.setNDead(b.ndead() - 1)
	}
	b.put(s, row)
	return s, true
}

// reusableSlot returns the lowest deleted slot, which the next insert
// reuses, or -1 if there is none (the insert appends slot nslots).
func (b hpage) reusableSlot() int {
	if b.ndead() > 0 {
		for i := range b.nslots() {
			if off, _ := b.slot(i); off == 0 {
				return i
			}
		}
	}
	return -1
}

// insertSlot returns the slot insert would give a row: the lowest deleted
// one, else a new one at the end of the array.
func (b hpage) insertSlot() int {
	if s := b.reusableSlot(); s >= 0 {
		return s
	}
	return b.nslots()
}

// gap returns the contiguous free bytes between the slot array and the
// cells.
func (b hpage) gap() int { return b.cellStart() - b.slotsEnd() }

// insertCompacts reports whether insert of an n-byte row, which fits,
// compacts the page first (the gap is too small without frag).
func (b hpage) insertCompacts(n int) bool {
	if b.reusableSlot() < 0 {
		n += slotSize
	}
	return n > b.gap()
}

// updateCompacts reports whether update(s, row), which fits, compacts the
// page: the row does not shrink into its old cell, and is longer than the
// gap once the old cell is given back. It follows update step by step.
func (b hpage) updateCompacts(s int, row []byte) bool {
	off, n := b.slot(s)
	if len(row) <= n && len(row) > 0 {
		return false
	}
	gap := b.gap()
	if n > 0 && off == b.cellStart() {
		gap += n // release gives the lowest cell back to the gap
	}
	return len(row) > gap
}

// put writes row as a new cell at the bottom of the cell area and points
// slot s at it. REQUIRES: the gap holds len(row) bytes.
func (b hpage) put(s int, row []byte) {
	if len(row) == 0 {
		b.setSlot(s, emptyRowOff, 0)
		return
	}
	cs := b.cellStart() - len(row)
	copy(b[cs:], row)
	b.setCellStart(cs)
	b.setSlot(s, cs, len(row))
}

// release gives back the n-byte cell at off: to the gap if it is the
// lowest cell, else to frag.
func (b hpage) release(off, n int) {
	if n == 0 {
		return
	}
	if off == b.cellStart() {
		b.setCellStart(off + n)
	} else {
		b.setFrag(b.frag() + n)
	}
}

// del deletes live slot s and trims deleted slots off the end of the
// array. REQUIRES: exclusive latch, headerOK, slot s live and valid.
func (b hpage) del(s int) {
	off, n := b.slot(s)
	b.release(off, n)
	b.setSlot(s, 0, 0)
	b.setNDead(b.ndead() + 1)
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
}

// delEffect returns what free() and ndead() will be after del(s), without
// changing the page, so that the caller can tell whether the page's FSM
// category changes before it changes anything. REQUIRES: as for del.
func (b hpage) delEffect(s int) (free, ndead int) {
	_, n := b.slot(s)
	free, ndead = b.free()+n, b.ndead()+1
	if s == b.nslots()-1 {
		// del trims slot s and the deleted slots just before it.
		free, ndead = free+slotSize, ndead-1
		for i := s - 1; i >= 0; i-- {
			if off, _ := b.slot(i); off != 0 {
				break
			}
			free, ndead = free+slotSize, ndead-1
		}
	}
	return free, ndead
}

// update replaces live slot s's row with row if it fits in the page, the
// old row's bytes counting as free, and reports whether it did. A row that
// shrinks stays where it is. REQUIRES: exclusive latch, headerOK, slot s
// live and valid.
func (b hpage) update(s int, row []byte) bool {
	off, n := b.slot(s)
	if len(row) <= n && len(row) > 0 {
		copy(b[off:], row)
		b.setFrag(b.frag() + n - len(row))
		b.setSlot(s, off, len(row))
		return true
	}
	if len(row)-n > b.free() {
		return false
	}
	b.release(off, n)
	b.setSlot(s, emptyRowOff, 0)
	if len(row) > b.gap() {
		b.compact()
	}
	b.put(s, row)
	return true
}

// fitsInPlace reports whether update(s, row) would succeed.
func (b hpage) fitsInPlace(s int, row []byte) bool {
	_, n := b.slot(s)
	return len(row) <= n || len(row)-n <= b.free()
}

// scratchPool holds page-sized buffers for compaction.
var scratchPool = sync.Pool{New: func() any { b := make([]byte, page.MaxSize); return &b }}

// compact packs the live cells against the end of the page in slot order
// (slot 0 highest, as if inserted in order into an empty page), which makes
// frag 0 and the gap as large as free(). REQUIRES: exclusive latch,
// headerOK, every live slot valid.
func (b hpage) compact() {
	sp := scratchPool.Get().(*[]byte)
	tmp := (*sp)[:len(b)]
	cs := b.cellStart()
	copy(tmp[cs:], b[cs:])
	end := len(b)
	for i := range b.nslots() {
		off, n := b.slot(i)
		if off < slotsStart {
			continue // no cell: unused, empty, dead or redirect
		}
		end -= n
		copy(b[end:], tmp[off:off+n])
		b.setSlot(i, end, n)
	}
	b.setCellStart(end)
	b.setFrag(0)
	scratchPool.Put(sp)
}

// cellsOK checks, without allocating, what the page operations need so
// that they stay inside the page whatever its bytes: headerOK, every live
// cell inside the cell area, an empty row at emptyRowOff, ndead matching
// the deleted slots, and live bytes plus frag adding up to the cell area
// (so that compaction ends at or above the cell start, and leaves a gap
// of free() bytes). Redo checks it before every heap operation it
// replays: a page that fails it is corrupt, or the log is. verify checks
// more (no overlapping cells, the last slot live) and allocates.
func (b hpage) cellsOK() error {
	if !b.headerOK() {
		return fmt.Errorf("bad header: nslots %d, ndead %d, cell start %d, frag %d, page size %d",
			b.nslots(), b.ndead(), b.cellStart(), b.frag(), len(b))
	}
	cs := b.cellStart()
	live, dead := 0, 0
	for i := range b.nslots() {
		off, n := b.slot(i)
		switch {
		case off == 0:
			dead++
		case off == lpDeadOff || off == lpRedirectOff:
			if err := b.specialOK(i, off, n); err != nil {
				return err
			}
		case n == 0:
			if off != emptyRowOff {
				return fmt.Errorf("slot %d: empty row with offset %d, want %d", i, off, emptyRowOff)
			}
		case off < cs || off+n > len(b):
			return fmt.Errorf("slot %d: cell [%d,%d) outside the cell area [%d,%d)", i, off, off+n, cs, len(b))
		default:
			live += n
		}
	}
	if dead != b.ndead() {
		return fmt.Errorf("%d deleted slots, header says %d", dead, b.ndead())
	}
	if got := live + b.frag(); got != len(b)-cs {
		return fmt.Errorf("live bytes %d + frag %d = %d, cell area is %d", live, b.frag(), got, len(b)-cs)
	}
	return nil
}

// verify checks everything about a page that headerOK does not: every live
// cell inside the cell area, no two overlapping, live and fragmented bytes
// adding up to the cell area, ndead matching the deleted slots, and the
// last slot live. It allocates; Heap.Check uses it, hot paths do not.
func (b hpage) verify() error {
	if !b.headerOK() {
		return fmt.Errorf("bad header: nslots %d, ndead %d, cell start %d, frag %d, page size %d",
			b.nslots(), b.ndead(), b.cellStart(), b.frag(), len(b))
	}
	ns := b.nslots()
	type cell struct{ slot, off, end int }
	var cells []cell
	live, dead := 0, 0
	for i := range ns {
		off, n := b.slot(i)
		if off == 0 {
			dead++
			continue
		}
		if off == lpDeadOff || off == lpRedirectOff {
			if err := b.specialOK(i, off, n); err != nil {
				return err
			}
			continue
		}
		if n == 0 {
			if off != emptyRowOff {
				return fmt.Errorf("slot %d: empty row with offset %d, want %d", i, off, emptyRowOff)
			}
			continue
		}
		if off < b.cellStart() || off+n > len(b) {
			return fmt.Errorf("slot %d: cell [%d,%d) outside the cell area [%d,%d)", i, off, off+n, b.cellStart(), len(b))
		}
		cells = append(cells, cell{i, off, off + n})
		live += n
	}
	slices.SortFunc(cells, func(x, y cell) int { return x.off - y.off })
	for i := 1; i < len(cells); i++ {
		if x, y := cells[i-1], cells[i]; x.end > y.off {
			return fmt.Errorf("slot %d: cell [%d,%d) overlaps the cell [%d,%d) of slot %d", x.slot, x.off, x.end, y.off, y.end, y.slot)
		}
	}
	if dead != b.ndead() {
		return fmt.Errorf("%d deleted slots, header says %d", dead, b.ndead())
	}
	if ns > 0 {
		if off, _ := b.slot(ns - 1); off == 0 {
			return fmt.Errorf("last slot %d is deleted (should have been trimmed)", ns-1)
		}
	}
	if got := live + b.frag(); got != len(b)-b.cellStart() {
		return fmt.Errorf("live bytes %d + frag %d = %d, cell area is %d", live, b.frag(), got, len(b)-b.cellStart())
	}
	return nil
}

// specialOK checks an LP_DEAD or LP_REDIRECT slot: a dead slot has length
// 0; a redirect names another slot of the page that holds a cell (an
// LP_NORMAL tuple, the live end of a pruned HOT chain).
func (b hpage) specialOK(i, off, n int) error {
	if off == lpDeadOff {
		if n != 0 {
			return fmt.Errorf("slot %d: dead with length %d", i, n)
		}
		return nil
	}
	if n == i || n >= b.nslots() {
		return fmt.Errorf("slot %d: redirect to slot %d of %d", i, n, b.nslots())
	}
	if to, _ := b.slot(n); to < slotsStart {
		return fmt.Errorf("slot %d: redirect to slot %d, which holds no tuple (offset %d)", i, n, to)
	}
	return nil
}
