package engine

import (
	"encoding/binary"
	"fmt"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
)

// A clustered table's leaf records carry, before the row image, InnoDB's
// system columns: who last changed the record, and where the undo record
// that rebuilds the version before that change is:
//
//	0        1                7                        14
//	+--------+----------------+------------------------+------------------
//	| info   | DB_TRX_ID      | DB_ROLL_PTR            | row image
//	| (1B)   | (6B, BE)       | (7B, BE)               | (rowenc.go)
//	+--------+----------------+------------------------+------------------
//
//	info:        bit 5 (0x20) delete-marked (InnoDB's REC_INFO_DELETED_FLAG,
//	             kept in its record header's info bits)
//	DB_TRX_ID:   the transaction id (trxSys) of the last insert, update or
//	             delete-mark of the record
//	DB_ROLL_PTR: that change's undo record:
//
//	             bit 55    bits 54–48   bits 47–16      bits 15–0
//	             +--------+-----------+---------------+-------------+
//	             | insert | rseg (0)  | undo page no  | offset      |
//	             +--------+-----------+---------------+-------------+
//
// exactly InnoDB's 7-byte roll pointer (trx0types.h, trx_undo_build_roll_ptr):
// the insert flag says the undo record is an insert's, so no older version
// exists; the rollback segment id is always 0 here (there is one); the page
// is in the system space (undoSpace), and the offset is the record's on it.
//
// The roll pointer is written with the record in the change's own
// mini-transaction, which also appends the undo record it points at
// (clustWrite): the undo record's place is known before the tree is
// touched because only its transaction appends to its undo log, and a log
// that must first be taken from a free slot, or grow a page, does so in a
// mini-transaction of its own beforehand (undoReserve).
const (
	clustHdrSize   = 14
	offClustTrxID  = 1
	offClustRoll   = 7
	recDeleted     = 0x20
	rollInsertFlag = 1 << 55
)

// rollPtr is a decoded DB_ROLL_PTR.
type rollPtr struct {
	insert bool
	page   uint32
	off    uint16
}

func (r rollPtr) encode() uint64 {
	v := uint64(r.page)<<16 | uint64(r.off)
	if r.insert {
		v |= rollInsertFlag
	}
	return v
}

func decodeRollPtr(v uint64) rollPtr {
	return rollPtr{insert: v&rollInsertFlag != 0, page: uint32(v >> 16), off: uint16(v)}
}

// clustHdr is a clustered record's system fields.
type clustHdr struct {
	info  byte
	trxID uint64
	roll  rollPtr
}

func (h clustHdr) deleted() bool { return h.info&recDeleted != 0 }

// put writes h into b[:clustHdrSize].
func (h clustHdr) put(b []byte) {
	b[0] = h.info
	var w [8]byte
	binary.BigEndian.PutUint64(w[:], h.trxID)
	copy(b[offClustTrxID:offClustRoll], w[2:])
	binary.BigEndian.PutUint64(w[:], h.roll.encode())
	copy(b[offClustRoll:clustHdrSize], w[1:])
}

// appendClustRec appends a clustered record: h, then the row image body.
func appendClustRec(dst []byte, h clustHdr, body []byte) []byte {
	n := len(dst)
	dst = append(dst, make([]byte, clustHdrSize)...)
	h.put(dst[n:])
	return append(dst, body...)
}

var errBadClustRec = fmt.Errorf("%w: clustered record shorter than its system fields", ErrCorruptRow)

// splitClustRec reads a clustered record's system fields and returns its
// row image (aliasing rec).
func splitClustRec(rec []byte) (clustHdr, []byte, error) {
	if len(rec) < clustHdrSize {
		return clustHdr{}, nil, errBadClustRec
	}
	return readClustHdr(rec), rec[clustHdrSize:], nil
}

func readClustHdr(b []byte) clustHdr {
	var w [8]byte
	copy(w[2:], b[offClustTrxID:offClustRoll])
	id := binary.BigEndian.Uint64(w[:])
	w = [8]byte{}
	copy(w[1:], b[offClustRoll:clustHdrSize])
	return clustHdr{info: b[0], trxID: id, roll: decodeRollPtr(binary.BigEndian.Uint64(w[:]))}
}

// Consistent reads (InnoDB's row_search_mvcc with a read view): a plain
// read under ReadCommitted or RepeatableRead takes no row lock; it copies
// the clustered record, releases the leaf, and, if the view does not see
// the transaction that wrote the record (DB_TRX_ID), builds the version
// before it from the undo record DB_ROLL_PTR names, then the one before
// that, until it reaches a version the view sees, or an insert's undo
// record (no older version: the row did not exist for the view). That is
// row_vers_build_for_consistent_read, one trx_undo_prev_version_build per
// step, each step counted in Meter.UndoVersionsRead. No page latch is held
// across the steps: the undo records a view needs are not purged while it
// is open (PurgeStep), and an undo page is read under its own shared
// latch.

// buildVersion returns the version of the record (h, body) that view v
// sees, and whether the row exists in it.
func (tx *Tx) buildVersion(v *ReadView, h clustHdr, body []byte) ([]byte, bool, error) {
	for !v.changesVisible(h.trxID) {
		if h.roll.insert {
			return nil, false, nil
		}
		var err error
		if h, body, err = tx.db.prevVersion(tx.cm(), h, body); err != nil {
			return nil, false, err
		}
		tx.m.UndoVersionsRead++
	}
	if h.deleted() {
		return nil, false, nil
	}
	return body, true, nil
}

// prevVersion returns the version of a clustered record before the change
// that made version (h, body), from the undo record h's roll pointer
// names (trx_undo_prev_version_build): its system fields and image. h
// must not be an insert's (no older version). The pages it reads are
// charged to m.
func (db *DB) prevVersion(m *cache.Meter, h clustHdr, body []byte) (clustHdr, []byte, error) {
	s, err := db.undoRecAt(m, h.roll)
	if err != nil {
		return h, nil, err
	}
	switch {
	case s.kind == stepClustDelMark:
		// The version before a delete-mark is the same image, not
		// delete-marked (or delete-marked, if the record was
		// re-inserted over a delete and deleted again: prev says).
	case s.kind != stepClustUpdate:
		return h, nil, fmt.Errorf("%w: roll pointer %d:%d names an undo record of kind %q", ErrCorrupt, h.roll.page, h.roll.off, s.kind)
	case s.flags&valEdit != 0:
		if body, err = applyUndoEdit(body, s.val); err != nil {
			return h, nil, err
		}
	default:
		body = s.val
	}
	return s.prev, body, nil
}

// undoRecAt reads the undo record a roll pointer names (its bytes
// copied: the page is released before it returns).
func (db *DB) undoRecAt(m *cache.Meter, r rollPtr) (step, error) {
	id := page.ID{Space: undoSpace, Page: r.page}
	pg, err := db.pool.Fetch(m, id)
	if err != nil {
		return step{}, fmt.Errorf("engine: undo record %d:%d: %w", r.page, r.off, err)
	}
	pg.RLatch()
	b := pg.Data()
	var rec []byte
	off := int(r.off)
	if page.KindOf(b) == page.KindUndo && off >= undoRecStart && off+undoRecHeader <= len(b) {
		n := int(binary.LittleEndian.Uint16(b[off:]))
		if end := off + undoRecHeader + n; end <= len(b) {
			rec = append([]byte(nil), b[off+undoRecHeader:end]...)
		}
	}
	pg.RUnlatch()
	pg.Unpin(false)
	if rec == nil {
		return step{}, fmt.Errorf("%w: roll pointer %d:%d names no undo record", ErrCorrupt, r.page, r.off)
	}
	return decodeStep(rec)
}
