package engine

import (
	"encoding/binary"
	"fmt"

	"github.com/enginelab/enginelab/btree"
	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/engine/lock"
	"github.com/enginelab/enginelab/heap"
)

// A transaction's undo is a list of steps, one per structure operation
// (one B+tree or heap change), oldest first, kept in memory for Rollback
// and written, in the same mini-transaction as the change, as a record on
// the transaction's undo pages (undolog.go), from which recovery rolls
// back a transaction a crash interrupted.
//
// Step kinds: one per structure operation, with what undoing it needs.
const (
	stepTreeInsert = 'i' // key inserted: undo deletes it
	stepTreeDelete = 'd' // key and value deleted: undo inserts them
	stepTreeUpdate = 'u' // key's old value: undo puts it back
	stepHeapInsert = 'I' // row inserted at ptr: undo deletes it
	stepHeapDelete = 'D' // row image deleted at ptr: undo inserts it (anywhere)
	stepHeapUpdate = 'U' // row at ptr replaced by one at ptr2: undo writes the old image back

	// Clustered records (clust.go), whose undo records also rebuild older
	// versions for consistent reads, as InnoDB's (trx0rec.cc):
	stepClustInsert  = 'n' // TRX_UNDO_INSERT_REC: key inserted; undo deletes it
	stepClustUpdate  = 'c' // TRX_UNDO_UPD_EXIST_REC (TRX_UNDO_UPD_DEL_REC when the record was delete-marked): the previous system fields and row image
	stepClustDelMark = 'x' // TRX_UNDO_DEL_MARK_REC: the previous system fields (and the row image, for purge)
)

// Step flags: where a step's bytes hold a row pointer, and whether its
// value is whole or only the changed bytes.
const (
	remapKeyTail = 1 << iota // the key ends with a row pointer (row-pointer secondaries)
	remapVal                 // the value is a row pointer (heap primary indexes)
	valEdit                  // val is an edit that turns the new value back into the old (undoEdit)
	// ordChange says a clustered update changed a column of a secondary
	// index (InnoDB's cmpl_info without UPD_NODE_NO_ORD_CHANGE): val is
	// then the whole old image, from which purge builds the old entries
	// it may remove.
	ordChange
)

// step is the undo of one structure operation of a transaction. Steps of
// one row operation (an Insert, Update or Delete) share a group.
type step struct {
	group uint32
	kind  byte
	flags byte
	space uint32 // the B+tree's or the heap's space
	key   []byte // tree: the key
	val   []byte // tree: the old value; heap: the old row image (whole, or a patch: valEdit)
	ptr   heap.RowPtr
	ptr2  heap.RowPtr
	prev  clustHdr // stepClustUpdate, stepClustDelMark: the record's system fields before the change
	at    undoPos  // where its undo record is
	// pos: stepClustUpdate, stepClustDelMark: where the read of the
	// record found it, the leaf clustWrite starts from (not logged).
	pos btree.Pos
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// encodeStep appends the body of s's undo record to dst: what the kind
// needs and nothing more, so an update of a few columns costs a few bytes
// (InnoDB's update undo records likewise hold the updated fields' old
// values only, TRX_UNDO_UPD_EXIST_REC):
//
//	+-----------+------+-------+-----------+---------------------------+
//	|   group   | kind | flags |   space   |  the kind's fields ...    |
//	| (uvarint) | (1B) | (1B)  | (uvarint) |                           |
//	+-----------+------+-------+-----------+---------------------------+
//
//	kind             fields
//	'i' tree insert  key
//	'd' tree delete  key, val (the old value)
//	'u' tree update  key, val (the old value, or with valEdit an edit to it)
//	'I' heap insert  ptr
//	'D' heap delete  ptr, val (the old row image)
//	'U' heap update  ptr, ptr2, val (the old image, or with valEdit an edit to it)
//	'n' clustered    key
//	    insert
//	'c' clustered    key, prev (14B: the record's info bits, DB_TRX_ID and
//	    update       DB_ROLL_PTR before the change, clust.go), val (the old
//	                 row image, or with valEdit an edit from the new image;
//	                 whole with ordChange)
//	'x' clustered    key, prev (14B), val (the row image when the table has
//	    delete-mark  secondary indexes, else empty: purge builds the
//	                 delete-marked entries it removes from it)
//
// key and val are a uvarint length and the bytes; a row pointer is
// heap.RowPtr's 6-byte encoding. group is the row operation's number in
// its transaction; flags are the step flags (remapKeyTail 1, remapVal 2,
// valEdit 4, ordChange 8). With valEdit, val is a value edit (redo.AppendEdit) from
// the new value to the old, written when shorter than the old value:
// undo applies it to the current value, which is the step's new value
// (the transaction holds the row's lock, and its later steps are undone
// first).
func encodeStep(dst []byte, s *step) []byte {
	dst = binary.AppendUvarint(dst, uint64(s.group))
	dst = append(dst, s.kind, s.flags)
	dst = binary.AppendUvarint(dst, uint64(s.space))
	switch s.kind {
	case stepTreeInsert, stepClustInsert:
		dst = appendBytes(dst, s.key)
	case stepClustUpdate, stepClustDelMark:
		dst = appendBytes(dst, s.key)
		n := len(dst)
		dst = append(dst, make([]byte, clustHdrSize)...)
		s.prev.put(dst[n:])
		dst = appendBytes(dst, s.val)
	case stepTreeDelete, stepTreeUpdate:
		dst = appendBytes(dst, s.key)
		dst = appendBytes(dst, s.val)
	case stepHeapInsert:
		dst = s.ptr.Append(dst)
	case stepHeapDelete:
		dst = s.ptr.Append(dst)
		dst = appendBytes(dst, s.val)
	case stepHeapUpdate:
		dst = s.ptr.Append(dst)
		dst = s.ptr2.Append(dst)
		dst = appendBytes(dst, s.val)
	}
	return dst
}

var errBadUndo = fmt.Errorf("%w: undo record", ErrCorrupt)

type noteReader struct {
	b   []byte
	err error
}

func (r *noteReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errBadUndo
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *noteReader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		r.err = errBadUndo
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *noteReader) byte() byte {
	if r.err != nil || len(r.b) == 0 {
		r.err = errBadUndo
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *noteReader) ptr() heap.RowPtr {
	if r.err != nil || len(r.b) < heap.RowPtrSize {
		r.err = errBadUndo
		return heap.RowPtr{}
	}
	p, err := heap.DecodeRowPtr(r.b[:heap.RowPtrSize])
	if err != nil {
		r.err = fmt.Errorf("%w: %w", errBadUndo, err)
	}
	r.b = r.b[heap.RowPtrSize:]
	return p
}

// decodeStep reads a step's body (encodeStep); its slices alias b.
func decodeStep(b []byte) (step, error) {
	var s step
	r := noteReader{b: b}
	s.group = uint32(r.uvarint())
	s.kind = r.byte()
	s.flags = r.byte()
	s.space = uint32(r.uvarint())
	switch s.kind {
	case stepTreeInsert, stepClustInsert:
		s.key = r.bytes()
	case stepClustUpdate, stepClustDelMark:
		s.key = r.bytes()
		if r.err == nil && len(r.b) < clustHdrSize {
			r.err = errBadUndo
		}
		if r.err == nil {
			s.prev = readClustHdr(r.b)
			r.b = r.b[clustHdrSize:]
		}
		s.val = r.bytes()
	case stepTreeDelete, stepTreeUpdate:
		s.key = r.bytes()
		s.val = r.bytes()
	case stepHeapInsert:
		s.ptr = r.ptr()
	case stepHeapDelete:
		s.ptr = r.ptr()
		s.val = r.bytes()
	case stepHeapUpdate:
		s.ptr = r.ptr()
		s.ptr2 = r.ptr()
		s.val = r.bytes()
	default:
		if r.err == nil {
			r.err = fmt.Errorf("%w: step kind %q", errBadUndo, s.kind)
		}
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%w: %d bytes left over", errBadUndo, len(r.b))
	}
	return s, r.err
}

// undoEdit appends to dst the edit that turns new back into old
// (redo.AppendEdit), or returns nil when the whole old value is shorter.
func undoEdit(dst, old, new []byte) []byte {
	e := redo.AppendEdit(dst, new, old)
	if len(e)-len(dst) >= len(old) {
		return nil
	}
	return e
}

// applyUndoEdit returns the old value: cur (the step's new value) with the
// edit applied (a new slice).
func applyUndoEdit(cur, edit []byte) ([]byte, error) {
	old, err := redo.ApplyEdit(nil, cur, edit, 1<<20)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadUndo, err)
	}
	return old, nil
}

// flagsOf says where ix's entries hold a row pointer.
func flagsOf(ix *index) byte {
	switch ix.carry {
	case carryPtr:
		return remapKeyTail
	case carryPtrVal:
		return remapVal
	}
	return 0
}

// keep copies s's bytes into the transaction's arena and appends it to the
// undo list. The arena grows in chunks, so earlier steps' slices stay valid.
func (tx *Tx) keep(s *step) {
	s.key = tx.copyBytes(s.key)
	s.val = tx.copyBytes(s.val)
	tx.steps = append(tx.steps, *s)
}

func (tx *Tx) copyBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	if cap(tx.arena)-len(tx.arena) < len(b) {
		tx.arena = make([]byte, 0, max(4096, len(b)))
	}
	s := len(tx.arena)
	tx.arena = append(tx.arena, b...)
	return tx.arena[s:len(tx.arena):len(tx.arena)]
}

// undoBufs are a finished transaction's buffers (undo steps and their
// bytes, the note, the lock owner with its held-lock list), kept for the
// next: a short transaction then allocates nothing for them.
type undoBufs struct {
	steps []step
	arena []byte
	note  []byte
	owner lock.Owner // released: no locks, its buffer kept
}

// putUndoBufs recycles tx's buffers (small ones only) and drops them from
// tx. Its locks must be released already.
func (db *DB) putUndoBufs(tx *Tx) {
	if cap(tx.arena) <= 64<<10 && cap(tx.steps) <= 1024 && tx.owner.Cap() <= 1024 {
		clear(tx.steps) // no references into the arena survive
		b := tx.bufs
		if b == nil {
			b = &undoBufs{}
		}
		*b = undoBufs{steps: tx.steps[:0], arena: tx.arena[:0], note: tx.note[:0], owner: tx.owner}
		db.undoBufs.Put(b)
	}
	tx.steps, tx.arena, tx.note, tx.owner, tx.bufs = nil, nil, nil, lock.Owner{}, nil
}

// logStep writes s's undo record to the transaction's undo log in mt (the
// change's own mini-transaction, so recovery sees both or neither), then
// commits mt and keeps s for Rollback. The transaction's first step also
// takes its undo log (undoBegin).
func (tx *Tx) logStep(mt *cache.Mtr, s *step) error {
	s.group = tx.group
	if !tx.logged {
		if err := tx.undoBegin(mt); err != nil {
			mt.Commit()
			return err
		}
		tx.logged = true
	}
	tx.note = encodeStep(tx.note[:0], s)
	at, err := tx.undoAppend(mt, tx.note, hasMoved(s.kind))
	mt.Commit()
	if err != nil {
		return fmt.Errorf("engine: transaction %d: the change was made but its undo could not be written: %w", tx.id, err)
	}
	s.at = at
	tx.keep(s)
	return nil
}

func (tx *Tx) mtr() *cache.Mtr { return tx.db.pool.BeginMtr(tx.cm()) }

// treeInsert inserts key and val into ix, with its undo. trx, if not 0,
// is the transaction id the leaf's max trx id is raised to (a clustered
// table's secondary index: btree.InsertTrxIn, InnoDB's PAGE_MAX_TRX_ID).
func (tx *Tx) treeInsert(ix *index, key, val []byte, trx uint64) error {
	mt := tx.mtr()
	if err := ix.tree.InsertTrxIn(tx.m, mt, key, val, trx); err != nil {
		mt.Commit()
		return err
	}
	return tx.logStep(mt, &step{kind: stepTreeInsert, flags: flagsOf(ix), space: ix.tree.Space(), key: key})
}

func (tx *Tx) treeDelete(ix *index, key, old []byte) error {
	mt := tx.mtr()
	if err := ix.tree.DeleteIn(tx.m, mt, key); err != nil {
		mt.Commit()
		return err
	}
	return tx.logStep(mt, &step{kind: stepTreeDelete, flags: flagsOf(ix), space: ix.tree.Space(), key: key, val: old})
}

// treeUpdate replaces key's value in ix by val, with its undo (old, the
// value before); trx as treeInsert's.
func (tx *Tx) treeUpdate(ix *index, key, val, old []byte, trx uint64) error {
	mt := tx.mtr()
	if err := ix.tree.UpdateTrxIn(tx.m, mt, key, val, trx); err != nil {
		mt.Commit()
		return err
	}
	s := step{kind: stepTreeUpdate, flags: flagsOf(ix), space: ix.tree.Space(), key: key, val: old}
	if e := undoEdit(tx.patch[:0], old, val); e != nil {
		tx.patch = e
		s.val, s.flags = e, s.flags|valEdit
	}
	return tx.logStep(mt, &s)
}

func (tx *Tx) heapInsert(t *TableHandle, row []byte) (heap.RowPtr, error) {
	mt := tx.mtr()
	ptr, err := t.heap.InsertIn(tx.m, mt, row)
	if err != nil {
		mt.Commit()
		return ptr, err
	}
	return ptr, tx.logStep(mt, &step{kind: stepHeapInsert, space: t.heap.Space(), ptr: ptr})
}

func (tx *Tx) heapDelete(t *TableHandle, ptr heap.RowPtr, old []byte) error {
	mt := tx.mtr()
	if err := t.heap.DeleteIn(tx.m, mt, ptr); err != nil {
		mt.Commit()
		return err
	}
	return tx.logStep(mt, &step{kind: stepHeapDelete, space: t.heap.Space(), ptr: ptr, val: old})
}

func (tx *Tx) heapUpdate(t *TableHandle, ptr heap.RowPtr, row, old []byte) (heap.RowPtr, error) {
	mt := tx.mtr()
	np, err := t.heap.UpdateIn(tx.m, mt, ptr, row)
	if err != nil {
		mt.Commit()
		return ptr, err
	}
	s := step{kind: stepHeapUpdate, space: t.heap.Space(), ptr: ptr, ptr2: np, val: old}
	if e := undoEdit(tx.patch[:0], old, row); e != nil {
		tx.patch = e
		s.val, s.flags = e, s.flags|valEdit
	}
	return np, tx.logStep(mt, &s)
}

// clustWrite inserts (stepClustInsert), updates (stepClustUpdate, with
// s.prev and s.val set) or delete-marks (stepClustDelMark, with s.prev
// set; body is the record's image, unchanged) the clustered record of key
// in the primary tree ix: the record is body (a row image) behind system
// fields naming tx's transaction id and the undo record this change
// appends, in one mini-transaction (see clust.go). A tree error (a
// duplicate key on insert, a key purge removed meanwhile on update)
// leaves no undo record.
func (tx *Tx) clustWrite(ix *index, s *step, body []byte) error {
	s.group, s.space = tx.group, ix.tree.Space()
	tx.note = encodeStep(tx.note[:0], s)
	pos, pending, err := tx.undoReserve(undoRecSize(tx.note, false))
	if err != nil {
		return err
	}
	h := clustHdr{trxID: tx.trxID, roll: rollPtr{insert: s.kind == stepClustInsert, page: pos.page, off: uint16(pos.off)}}
	if s.kind == stepClustDelMark {
		h.info = recDeleted
	}
	tx.rec = appendClustRec(tx.rec[:0], h, body)
	mt := tx.mtr()
	if s.kind == stepClustInsert {
		err = ix.tree.InsertIn(tx.m, mt, s.key, tx.rec)
	} else {
		err = ix.tree.UpdateAtIn(tx.m, mt, s.key, tx.rec, s.pos)
	}
	if pending != nil {
		// The log is started even if the change failed: its max tx id
		// may have been raised in memory, and must reach the page.
		if serr := tx.undoStart(mt, pending.l, pending.raise, pending.maxTx); serr != nil && err == nil {
			err = serr
		}
	}
	if err != nil {
		mt.Commit()
		return err
	}
	at, err := tx.undoAppend(mt, tx.note, false)
	mt.Commit()
	if err == nil && (at.page != pos.page || at.off != pos.off) {
		err = fmt.Errorf("%w: undo record went to page %d offset %d, its roll pointer says %d, %d", ErrInconsistent, at.page, at.off, pos.page, pos.off)
	}
	if err != nil {
		return fmt.Errorf("engine: transaction %d: the change was made but its undo could not be written: %w", tx.trxID, err)
	}
	s.at = at
	tx.keep(s)
	if s.kind != stepClustInsert {
		tx.versions = true
	}
	return nil
}
