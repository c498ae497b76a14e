package heap

import (
	"errors"
	"fmt"
)

// The fill factor, PostgreSQL's heap storage parameter (CREATE TABLE ...
// WITH (fillfactor = N)): a percentage of the page up to which an insert
// fills a page, the rest kept for later versions of the rows already
// there, so that an update can put its new version on the old one's page
// (a HOT update in a versioned heap, an in-place update that grew a row in
// a plain one).
//
// What uses the reserve and what does not is RelationGetBufferForTuple's
// and heap_update's rule (access/heap/hio.c, heapam.c):
//
//   - Every search for a page, place (an insert, or an update whose new
//     version does not fit on its old page), asks for the row plus the
//     reserve, pageSize·(100-fillfactor)/100 bytes
//     (RelationGetTargetPageFreeSpace): the target page, the FSM and a
//     page found full all judge that amount. So an insert stops filling a
//     page once the page's used bytes, headers and slots included, would
//     pass fillfactor% of the page.
//   - An update whose new version fits on its old page goes there whatever
//     the reserve (heap_update compares the new tuple's size with the
//     page's free space, PageGetHeapFreeSpace, and calls
//     RelationGetBufferForTuple only when it does not fit). So does a plain
//     heap's in-place update.
//   - A row too large for the reserve (row plus reserve beyond what a
//     nearly empty page holds, nearlyEmptyFreeSpace) asks for
//     max(row, nearly empty) instead: a low fill factor never sends a
//     large row to a new page when a nearly empty one would hold it.
//   - A page prune on access (PruneOpt) prunes a page whose free space is
//     below max(reserve, pageSize/10), heap_page_prune_opt's minfree.
//
// The fill factor is the table's, not the page's: it lives in the caller's
// catalog and is handed to the heap at every open (SetFillFactor); the
// pages do not record it, and changing it changes only where later rows
// go, as ALTER TABLE ... SET (fillfactor) does.

// Fill factor bounds, as PostgreSQL's heap reloption
// (HEAP_MIN_FILLFACTOR, HEAP_DEFAULT_FILLFACTOR).
const (
	MinFillFactor     = 10
	DefaultFillFactor = 100
)

// ErrBadFillFactor means a fill factor outside MinFillFactor ..
// DefaultFillFactor. Nothing was changed.
var ErrBadFillFactor = errors.New("heap: fill factor out of range")

// CheckFillFactor returns nil if ff is a valid fill factor, else an error
// wrapping ErrBadFillFactor that names it.
func CheckFillFactor(ff int) error {
	if ff < MinFillFactor || ff > DefaultFillFactor {
		return fmt.Errorf("%w: %d, want %d to %d", ErrBadFillFactor, ff, MinFillFactor, DefaultFillFactor)
	}
	return nil
}

// SetFillFactor sets the percentage of a page that inserts fill (see
// above); a new or opened heap fills pages to DefaultFillFactor. An
// invalid value is ErrBadFillFactor and changes nothing. Call it before
// the heap is used: rows placed earlier keep their pages.
func (h *Heap) SetFillFactor(ff int) error {
	if err := CheckFillFactor(ff); err != nil {
		return fmt.Errorf("heap: space %d: %w", h.space, err)
	}
	h.fillFactor.Store(int32(ff))
	return nil
}

// FillFactor returns the heap's fill factor.
func (h *Heap) FillFactor() int {
	if ff := h.fillFactor.Load(); ff != 0 {
		return int(ff)
	}
	return DefaultFillFactor
}

// saveFree is the fill factor's reserve in bytes, what an insert leaves
// free on a page for later versions (RelationGetTargetPageFreeSpace); 0 at
// the default fill factor.
func (h *Heap) saveFree() int {
	return h.pageSize * (DefaultFillFactor - h.FillFactor()) / DefaultFillFactor
}

// targetFree is the room a page must have for place to choose it for an
// n-byte cell: n plus the fill factor's reserve, capped at a nearly empty
// page's room (RelationGetBufferForTuple's targetFreeSpace).
func (h *Heap) targetFree(n int) int {
	save := h.saveFree()
	if save == 0 {
		return n
	}
	// nearlyEmpty is PostgreSQL's nearlyEmptyFreeSpace: an empty page's
	// room for one cell (MaxHeapTupleSize), less the slots an eighth of
	// the most versions a page can hold would take (a page without cells
	// can still have slots).
	room := h.pageSize - slotsStart - slotSize
	most := (h.pageSize - slotsStart) / (TupleHeaderSize + slotSize)
	nearlyEmpty := room - most/8*slotSize
	if n+save > nearlyEmpty {
		return max(n, nearlyEmpty)
	}
	return n + save
}

// pruneMinFree is the free space below which PruneOpt prunes a page:
// heap_page_prune_opt's max(fill factor reserve, BLCKSZ/10).
func (h *Heap) pruneMinFree() int {
	return max(h.saveFree(), h.pageSize/10)
}
