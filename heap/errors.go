package heap

import "errors"

// Errors from row operations. Every error this package returns for them
// wraps one of these (or an error of package cache, such as
// cache.ErrPoolExhausted or page.ErrCorruptPage), so callers match with
// errors.Is; the message adds the row pointer or the sizes involved.
var (
	// ErrRowTooLarge means a row is longer than MaxRowSize for the heap's
	// page size (a quarter of the page body). Nothing was changed. The
	// message names the row's length and the limit.
	ErrRowTooLarge = errors.New("heap: row too large")

	// ErrRowNotFound means a row pointer names no live row: its page is 0,
	// at or beyond the heap's high water mark, or not a heap page (an FSM
	// page), or its slot is out of range or deleted. The message names the
	// pointer and which of these it was.
	ErrRowNotFound = errors.New("heap: row not found")

	// ErrBadRowPtr means an encoded row pointer is not RowPtrSize bytes.
	ErrBadRowPtr = errors.New("heap: bad encoded row pointer")
)

// Errors from Create and Open.
var (
	// ErrNotHeap means Open was pointed at a space that does not hold a
	// heap (no root page, or a root that is not a free-space-map page of a
	// known format), or Create at a space that already has pages.
	ErrNotHeap = errors.New("heap: space does not hold a heap")
)
