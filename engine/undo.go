package engine

import (
	"encoding/binary"
	"fmt"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/engine/lock"
	"github.com/enginelab/enginelab/heap"
)

// Transaction records ride in the note of a mini-transaction (cache.Mtr):
// a step's undo information is in the same log record as the page change
// it undoes, so recovery sees both or neither. There are four kinds, each
// starting with its kind byte and the transaction's id:
//
//	'S' tx step: the undo of one structure operation (see step; encodeStep
//	             draws its bytes)
//	'C' tx n ptr: compensation: step n is undone (ptr: where a heap undo
//	              put the row back)
//	'K' tx:       commit
//	'E' tx:       rollback finished
//
// A compensation note (written by undoer.undo, read back by
// rollBackLosers):
//
//	+-----+-----------+-----------+-----------+-----------+
//	| 'C' |    tx     |     n     | ptr: page | ptr: slot |
//	| 1B  | (uvarint) | (uvarint) |  (4B BE)  |  (2B BE)  |
//	+-----+-----------+-----------+-----------+-----------+
//
// n is the index of the undone step among the transaction's steps, oldest
// first, from 0. ptr is where the undo of a heap delete or heap update put
// the row (recovery's undo carries on rewriting row pointers through it);
// for every other step kind it is the zero pointer, six zero bytes.
//
// A commit note (commitNote) and a rollback-finished note (endNote) hold
// the kind and the id and nothing more:
//
//	+-----+-----------+
//	| 'K' |    tx     |     'E' likewise
//	| 1B  | (uvarint) |
//	+-----+-----------+
//
// A uvarint is encoding/binary's unsigned varint (7 bits a byte, low
// bits first, 1 to 10 bytes); a row pointer is heap.RowPtr's 6-byte
// encoding (page then slot, big-endian). decodeNote rejects an unknown
// kind, a truncated field and bytes after the last field, all as
// redo.ErrCorruptLog.
const (
	noteStep   = 'S'
	noteCLR    = 'C'
	noteCommit = 'K'
	noteEnd    = 'E'
)

// Step kinds: one per structure operation, with what undoing it needs.
const (
	stepTreeInsert = 'i' // key inserted: undo deletes it
	stepTreeDelete = 'd' // key and value deleted: undo inserts them
	stepTreeUpdate = 'u' // key's old value: undo puts it back
	stepHeapInsert = 'I' // row inserted at ptr: undo deletes it
	stepHeapDelete = 'D' // row image deleted at ptr: undo inserts it (anywhere)
	stepHeapUpdate = 'U' // row at ptr replaced by one at ptr2: undo writes the old image back
)

// Remap flags: where a step's bytes hold a row pointer.
const (
	remapKeyTail = 1 << iota // the key ends with a row pointer (row-pointer secondaries)
	remapVal                 // the value is a row pointer (heap primary indexes)
)

// step is the undo of one structure operation of a transaction. Steps of
// one row operation (an Insert, Update or Delete) share a group.
type step struct {
	group uint32
	kind  byte
	flags byte
	space uint32 // the B+tree's or the heap's space
	key   []byte // tree: the key
	val   []byte // tree: the old value; heap: the old row image
	ptr   heap.RowPtr
	ptr2  heap.RowPtr
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// encodeStep appends the note of step s of transaction tx to dst:
//
//	+-----+-----------+-----------+------+-------+-----------+
//	| 'S' |    tx     |   group   | kind | flags |   space   |  ...
//	| 1B  | (uvarint) | (uvarint) | (1B) | (1B)  | (uvarint) |
//	+-----+-----------+-----------+------+-------+-----------+
//
//	    +-----------+---------+-----------+---------+-----------+-----------+
//	... |  key len  |   key   |  val len  |   val   |    ptr    |   ptr2    |
//	    | (uvarint) | key len | (uvarint) | val len | (6B, BE)  | (6B, BE)  |
//	    +-----------+---------+-----------+---------+-----------+-----------+
//
// group is the row operation's number in its transaction; kind is a step
// kind ('i' 'd' 'u' 'I' 'D' 'U'), flags the remap flags (remapKeyTail 1,
// remapVal 2, only on tree steps of indexes whose entries hold a row
// pointer); space is the B+tree's or the heap's. Every field is always
// written: what a kind does not use is an empty byte string (one zero
// length byte) or the zero pointer (six zero bytes).
//
//	kind             key              val                  ptr          ptr2
//	'i' tree insert  the key inserted -                    -            -
//	'd' tree delete  the key deleted  its value            -            -
//	'u' tree update  the key          its old value        -            -
//	'I' heap insert  -                -                    the new row  -
//	'D' heap delete  -                the old row image    where it was -
//	'U' heap update  -                the old row image    where it was where it is now (= ptr in place)
func encodeStep(dst []byte, tx uint64, s *step) []byte {
	dst = append(dst, noteStep)
	dst = binary.AppendUvarint(dst, tx)
	dst = binary.AppendUvarint(dst, uint64(s.group))
	dst = append(dst, s.kind, s.flags)
	dst = binary.AppendUvarint(dst, uint64(s.space))
	dst = appendBytes(dst, s.key)
	dst = appendBytes(dst, s.val)
	dst = s.ptr.Append(dst)
	return s.ptr2.Append(dst)
}

// txNote is a decoded transaction record.
type txNote struct {
	kind byte
	tx   uint64
	step step        // noteStep (slices alias the record)
	n    int         // noteCLR: the step undone
	ptr  heap.RowPtr // noteCLR: where the row went
	lsn  uint64      // where recovery found it
}

var errBadNote = fmt.Errorf("%w: transaction record", redo.ErrCorruptLog)

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
		r.err = errBadNote
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *noteReader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		r.err = errBadNote
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *noteReader) byte() byte {
	if r.err != nil || len(r.b) == 0 {
		r.err = errBadNote
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *noteReader) ptr() heap.RowPtr {
	if r.err != nil || len(r.b) < heap.RowPtrSize {
		r.err = errBadNote
		return heap.RowPtr{}
	}
	p, err := heap.DecodeRowPtr(r.b[:heap.RowPtrSize])
	if err != nil {
		r.err = fmt.Errorf("%w: %w", errBadNote, err)
	}
	r.b = r.b[heap.RowPtrSize:]
	return p
}

func decodeNote(b []byte) (txNote, error) {
	var n txNote
	r := noteReader{b: b}
	n.kind = r.byte()
	n.tx = r.uvarint()
	switch n.kind {
	case noteStep:
		n.step.group = uint32(r.uvarint())
		n.step.kind = r.byte()
		n.step.flags = r.byte()
		n.step.space = uint32(r.uvarint())
		n.step.key = r.bytes()
		n.step.val = r.bytes()
		n.step.ptr = r.ptr()
		n.step.ptr2 = r.ptr()
	case noteCLR:
		n.n = int(r.uvarint())
		n.ptr = r.ptr()
	case noteCommit, noteEnd:
	default:
		if r.err == nil {
			r.err = fmt.Errorf("%w: kind %q", errBadNote, n.kind)
		}
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%w: %d bytes left over", errBadNote, len(r.b))
	}
	return n, r.err
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

// logStep commits mt with s's undo record in its note.
//
// A transaction joins the active set before its first record exists, with
// the log end as a lower bound of that record's LSN: a checkpoint reads
// the log end, then the active set, so it either sees the transaction or
// began before the record, and never drops a record recovery will need.
func (tx *Tx) logStep(mt *cache.Mtr, s *step) {
	s.group = tx.group
	tx.note = encodeStep(tx.note[:0], tx.id, s)
	mt.Note(tx.note)
	if !tx.logged {
		tx.logged = true
		tx.db.registerActive(tx.id, tx.db.log.End())
	}
	mt.Commit()
	tx.keep(s)
}

func (tx *Tx) mtr() *cache.Mtr { return tx.db.pool.BeginMtr(tx.cm()) }

func (tx *Tx) treeInsert(ix *index, key, val []byte) error {
	mt := tx.mtr()
	if err := ix.tree.InsertIn(tx.m, mt, key, val); err != nil {
		mt.Commit()
		return err
	}
	tx.logStep(mt, &step{kind: stepTreeInsert, flags: flagsOf(ix), space: ix.tree.Space(), key: key})
	return nil
}

func (tx *Tx) treeDelete(ix *index, key, old []byte) error {
	mt := tx.mtr()
	if err := ix.tree.DeleteIn(tx.m, mt, key); err != nil {
		mt.Commit()
		return err
	}
	tx.logStep(mt, &step{kind: stepTreeDelete, flags: flagsOf(ix), space: ix.tree.Space(), key: key, val: old})
	return nil
}

func (tx *Tx) treeUpdate(ix *index, key, val, old []byte) error {
	mt := tx.mtr()
	if err := ix.tree.UpdateIn(tx.m, mt, key, val); err != nil {
		mt.Commit()
		return err
	}
	tx.logStep(mt, &step{kind: stepTreeUpdate, flags: flagsOf(ix), space: ix.tree.Space(), key: key, val: old})
	return nil
}

func (tx *Tx) heapInsert(t *TableHandle, row []byte) (heap.RowPtr, error) {
	mt := tx.mtr()
	ptr, err := t.heap.InsertIn(tx.m, mt, row)
	if err != nil {
		mt.Commit()
		return ptr, err
	}
	tx.logStep(mt, &step{kind: stepHeapInsert, space: t.heap.Space(), ptr: ptr})
	return ptr, nil
}

func (tx *Tx) heapDelete(t *TableHandle, ptr heap.RowPtr, old []byte) error {
	mt := tx.mtr()
	if err := t.heap.DeleteIn(tx.m, mt, ptr); err != nil {
		mt.Commit()
		return err
	}
	tx.logStep(mt, &step{kind: stepHeapDelete, space: t.heap.Space(), ptr: ptr, val: old})
	return nil
}

func (tx *Tx) heapUpdate(t *TableHandle, ptr heap.RowPtr, row, old []byte) (heap.RowPtr, error) {
	mt := tx.mtr()
	np, err := t.heap.UpdateIn(tx.m, mt, ptr, row)
	if err != nil {
		mt.Commit()
		return ptr, err
	}
	tx.logStep(mt, &step{kind: stepHeapUpdate, space: t.heap.Space(), ptr: ptr, ptr2: np, val: old})
	return np, nil
}

// writeNote logs a record with only a note (commit, end) and returns its
// LSN.
func (db *DB) writeNote(m *cache.Meter, note []byte) uint64 {
	mt := db.pool.BeginMtr(m)
	mt.Note(note)
	return mt.Commit()
}

// endNote returns the note that ends a rolled-back transaction: 'E' and
// tx as a uvarint (drawn beside noteEnd).
func endNote(tx uint64) []byte {
	return binary.AppendUvarint([]byte{noteEnd}, tx)
}

// commitNote writes the commit note of tx into dst's buffer: 'K' and tx as
// a uvarint (drawn beside noteCommit).
func commitNote(dst []byte, tx uint64) []byte {
	return binary.AppendUvarint(append(dst[:0], noteCommit), tx)
}
