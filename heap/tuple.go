package heap

import (
	"encoding/binary"
	"fmt"
)

// Versioned tuples: PostgreSQL's heap tuple header (HeapTupleHeaderData in
// access/htup_details.h), for heaps whose rows are versions (versions.go).
// A versioned row's cell is a 26-byte header followed by the row's bytes:
//
//	0        8        16                  22           24          26
//	+--------+--------+---------+---------+------------+-----------+--------
//	|  xmin  |  xmax  | ctid    | ctid    | infomask2  | infomask  | row ...
//	|  (8B)  |  (8B)  | page 4B | slot 2B |    (2B)    |   (2B)    |
//	+--------+--------+---------+---------+------------+-----------+--------
//
// All little-endian, like the page.
//
//   - xmin (t_xmin) is the transaction that created the version; xmax
//     (t_xmax) the one that deleted it, updated it (wrote a newer version)
//     or locked it (HEAP_XMAX_LOCK_ONLY), 0 (InvalidTransactionId) if
//     none. Transaction ids are the engine's 64-bit ids, PostgreSQL's
//     FullTransactionId: they never wrap around, so no tuple needs
//     freezing for wraparound's sake (freezing survives as the
//     all-frozen bit of the visibility map and HEAP_XMIN_FROZEN).
//   - ctid (t_ctid) is the version's own pointer until an update sets it
//     to the newer version's (a RowPtr): readers follow it from a
//     version another transaction replaced, and the HOT chain follows it
//     within the page.
//   - infomask2 keeps PostgreSQL's t_infomask2 flags HEAP_KEYS_UPDATED,
//     HEAP_HOT_UPDATED (the newer version is a heap-only tuple on this
//     page) and HEAP_ONLY_TUPLE (no index entry names this version: it
//     is reached through its HOT chain's root), at PostgreSQL's bit
//     positions; the attribute count PostgreSQL keeps in the low bits is
//     0 (rows are opaque bytes here).
//   - infomask keeps t_infomask's hint bits (HEAP_XMIN_COMMITTED,
//     HEAP_XMIN_INVALID, HEAP_XMAX_COMMITTED, HEAP_XMAX_INVALID: the
//     commit log's answer cached on the tuple), HEAP_XMAX_EXCL_LOCK and
//     HEAP_XMAX_LOCK_ONLY (xmax only locks the row) and HEAP_UPDATED
//     (this version was written by an update), at PostgreSQL's bit
//     positions.
//
// PostgreSQL's header also has t_cid (the command id, which hides rows a
// statement wrote from that same statement) and t_hoff (where the data
// starts, after a null bitmap). Here a transaction sees all of its own
// writes (the engine's statements do not read what they are writing), and
// rows are opaque bytes without a null bitmap, so neither is kept.
const (
	offTupXmin      = 0
	offTupXmax      = 8
	offTupCtidPage  = 16
	offTupCtidSlot  = 20
	offTupInfomask2 = 22
	offTupInfomask  = 24

	// TupleHeaderSize is the size of a versioned tuple's header.
	TupleHeaderSize = 26
)

// Infomask bits (t_infomask), with PostgreSQL's values.
const (
	HeapXmaxExclLock  uint16 = 0x0040 // HEAP_XMAX_EXCL_LOCK: xmax holds an exclusive row lock
	HeapXmaxLockOnly  uint16 = 0x0080 // HEAP_XMAX_LOCK_ONLY: xmax locked the row, did not delete it
	HeapXminCommitted uint16 = 0x0100 // HEAP_XMIN_COMMITTED: hint, xmin committed
	HeapXminInvalid   uint16 = 0x0200 // HEAP_XMIN_INVALID: hint, xmin aborted
	HeapXmaxCommitted uint16 = 0x0400 // HEAP_XMAX_COMMITTED: hint, xmax committed
	HeapXmaxInvalid   uint16 = 0x0800 // HEAP_XMAX_INVALID: hint, xmax aborted or none
	HeapUpdated       uint16 = 0x2000 // HEAP_UPDATED: this is an updated version of a row

	// HeapXminFrozen is HEAP_XMIN_FROZEN: both xmin hint bits, the
	// version visible to every snapshot.
	HeapXminFrozen = HeapXminCommitted | HeapXminInvalid

	// hintBits are the bits a heap-hint record may set.
	hintBits = HeapXminCommitted | HeapXminInvalid | HeapXmaxCommitted | HeapXmaxInvalid
	// xmaxBits are cleared whenever xmax changes.
	xmaxBits = HeapXmaxCommitted | HeapXmaxInvalid | HeapXmaxLockOnly | HeapXmaxExclLock
)

// Infomask2 bits (t_infomask2), with PostgreSQL's values.
const (
	HeapKeysUpdated uint16 = 0x2000 // HEAP_KEYS_UPDATED: deleted, or updated with a changed key
	HeapHotUpdated  uint16 = 0x4000 // HEAP_HOT_UPDATED: the newer version is heap-only, on this page
	HeapOnlyTuple   uint16 = 0x8000 // HEAP_ONLY_TUPLE: no index entry names this version
)

// TupleHeader is a versioned tuple's header, decoded.
type TupleHeader struct {
	Xmin, Xmax uint64
	Ctid       RowPtr
	Infomask2  uint16
	Infomask   uint16
}

// HotUpdated reports HEAP_HOT_UPDATED: the next version is on this page,
// reached through Ctid's slot.
func (t TupleHeader) HotUpdated() bool { return t.Infomask2&HeapHotUpdated != 0 }

// HeapOnly reports HEAP_ONLY_TUPLE.
func (t TupleHeader) HeapOnly() bool { return t.Infomask2&HeapOnlyTuple != 0 }

// LockOnly reports whether xmax, if any, only locks the row.
func (t TupleHeader) LockOnly() bool { return t.Infomask&HeapXmaxLockOnly != 0 }

func (t TupleHeader) String() string {
	return fmt.Sprintf("xmin %d xmax %d ctid %s infomask2 %#04x infomask %#04x", t.Xmin, t.Xmax, t.Ctid, t.Infomask2, t.Infomask)
}

// tuple is a versioned tuple's cell on a page (header and row).
type tuple []byte

func (t tuple) header() TupleHeader {
	return TupleHeader{
		Xmin:      binary.LittleEndian.Uint64(t[offTupXmin:]),
		Xmax:      binary.LittleEndian.Uint64(t[offTupXmax:]),
		Ctid:      RowPtr{Page: binary.LittleEndian.Uint32(t[offTupCtidPage:]), Slot: binary.LittleEndian.Uint16(t[offTupCtidSlot:])},
		Infomask2: binary.LittleEndian.Uint16(t[offTupInfomask2:]),
		Infomask:  binary.LittleEndian.Uint16(t[offTupInfomask:]),
	}
}

func (t tuple) xmin() uint64         { return binary.LittleEndian.Uint64(t[offTupXmin:]) }
func (t tuple) xmax() uint64         { return binary.LittleEndian.Uint64(t[offTupXmax:]) }
func (t tuple) infomask() uint16     { return binary.LittleEndian.Uint16(t[offTupInfomask:]) }
func (t tuple) infomask2() uint16    { return binary.LittleEndian.Uint16(t[offTupInfomask2:]) }
func (t tuple) setInfomask(v uint16) { binary.LittleEndian.PutUint16(t[offTupInfomask:], v) }

// setXmaxFields writes the fields an xmax change writes: xmax, ctid and
// both infomasks. Redo of heap-xmax calls it.
func (t tuple) setXmaxFields(xmax uint64, ctid RowPtr, infomask2, infomask uint16) {
	binary.LittleEndian.PutUint64(t[offTupXmax:], xmax)
	binary.LittleEndian.PutUint32(t[offTupCtidPage:], ctid.Page)
	binary.LittleEndian.PutUint16(t[offTupCtidSlot:], ctid.Slot)
	binary.LittleEndian.PutUint16(t[offTupInfomask2:], infomask2)
	binary.LittleEndian.PutUint16(t[offTupInfomask:], infomask)
}

// appendTuple appends a new version's cell: header then row.
func appendTuple(dst []byte, h TupleHeader, row []byte) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, h.Xmin)
	dst = binary.LittleEndian.AppendUint64(dst, h.Xmax)
	dst = binary.LittleEndian.AppendUint32(dst, h.Ctid.Page)
	dst = binary.LittleEndian.AppendUint16(dst, h.Ctid.Slot)
	dst = binary.LittleEndian.AppendUint16(dst, h.Infomask2)
	dst = binary.LittleEndian.AppendUint16(dst, h.Infomask)
	return append(dst, row...)
}

// lpState is a slot's line-pointer state (storage/itemid.h's lp_flags).
type lpState uint8

const (
	lpUnused   lpState = iota // LP_UNUSED: offset 0, reusable
	lpNormal                  // LP_NORMAL: a cell (or an empty plain row)
	lpRedirect                // LP_REDIRECT: to the slot in the length field
	lpDead                    // LP_DEAD: no storage, not reusable yet
)

func (s lpState) String() string {
	return [...]string{"unused", "normal", "redirect", "dead"}[s]
}

// lp returns slot i's state and, for a redirect, its target slot.
// REQUIRES: i < nslots.
func (b hpage) lp(i int) (lpState, int) {
	off, n := b.slot(i)
	switch off {
	case 0:
		return lpUnused, 0
	case lpDeadOff:
		return lpDead, 0
	case lpRedirectOff:
		return lpRedirect, n
	}
	return lpNormal, 0
}

// tupleAt returns slot i's versioned tuple, or nil if the slot holds no
// cell of at least a header's length (or one outside the cell area).
// REQUIRES: headerOK, i < nslots.
func (b hpage) tupleAt(i int) tuple {
	off, n := b.slot(i)
	if off < slotsStart || n < TupleHeaderSize || off < b.cellStart() || off+n > len(b) {
		return nil
	}
	return tuple(b[off : off+n])
}
