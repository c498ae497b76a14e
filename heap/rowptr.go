package heap

import (
	"encoding/binary"
	"fmt"
)

// RowPtrSize is the length of an encoded RowPtr.
const RowPtrSize = 6

// RowPtr names a row of a heap: the page that holds it and its slot in that
// page's slot array (PostgreSQL's ctid). A pointer stays valid until the row
// is deleted or moved by an Update; after a Delete, a later Insert may reuse
// the slot, so a stale pointer can name another row.
//
// The zero RowPtr names no row (page 0 is the space's meta page).
type RowPtr struct {
	Page uint32
	Slot uint16
}

// String formats p as (page,slot), the way PostgreSQL prints a ctid.
func (p RowPtr) String() string { return fmt.Sprintf("(%d,%d)", p.Page, p.Slot) }

// Compare orders pointers in physical order: by page, then by slot. It
// returns -1, 0 or +1. Encoded pointers compare the same way bytewise.
func (p RowPtr) Compare(q RowPtr) int {
	switch {
	case p.Page < q.Page:
		return -1
	case p.Page > q.Page:
		return 1
	case p.Slot < q.Slot:
		return -1
	case p.Slot > q.Slot:
		return 1
	}
	return 0
}

// Encode returns the fixed-size encoding of p: page (4 bytes) then slot (2
// bytes), big-endian, so that encoded pointers sort in physical order
// (secondary indexes that store them as key suffixes rely on it).
//
//	+-----------+-----------+
//	| page (4B) | slot (2B) |
//	+-----------+-----------+
func (p RowPtr) Encode() [RowPtrSize]byte {
	var b [RowPtrSize]byte
	binary.BigEndian.PutUint32(b[0:], p.Page)
	binary.BigEndian.PutUint16(b[4:], p.Slot)
	return b
}

// Append appends the encoding of p to dst and returns the extended slice.
func (p RowPtr) Append(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, p.Page)
	return binary.BigEndian.AppendUint16(dst, p.Slot)
}

// DecodeRowPtr decodes a pointer encoded by Encode or Append. b must be
// exactly RowPtrSize bytes long; anything else is ErrBadRowPtr.
func DecodeRowPtr(b []byte) (RowPtr, error) {
	if len(b) != RowPtrSize {
		return RowPtr{}, fmt.Errorf("%w: %d bytes, want %d", ErrBadRowPtr, len(b), RowPtrSize)
	}
	return RowPtr{Page: binary.BigEndian.Uint32(b), Slot: binary.BigEndian.Uint16(b[4:])}, nil
}
