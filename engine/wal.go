package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/enginelab/enginelab/btree"
	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/heap"
)

// CommitMode says when Commit returns, like innodb_flush_log_at_trx_commit.
type CommitMode uint8

// Commit modes.
const (
	// SyncCommit returns from Commit when the commit record is durable
	// (innodb_flush_log_at_trx_commit=1). Commits that arrive while a
	// sync is running share the next one: group commit.
	SyncCommit CommitMode = iota
	// NoSyncCommit returns at once; the commit is durable at the next
	// sync (another transaction's sync commit) or checkpoint
	// (innodb_flush_log_at_trx_commit=0 or 2, without their one-second
	// timer: nothing here runs on a timer).
	NoSyncCommit
)

func (c CommitMode) String() string {
	switch c {
	case SyncCommit:
		return "sync"
	case NoSyncCommit:
		return "no-sync"
	}
	return fmt.Sprintf("CommitMode(%d)", uint8(c))
}

// Transaction records ride in the note of a mini-transaction (cache.Mtr):
// a step's undo information is in the same log record as the page change
// it undoes, so recovery sees both or neither.
//
//	'S' tx step: the undo of one structure operation (see step)
//	'C' tx n ptr: compensation: step n is undone (ptr: where a heap undo
//	              put the row back)
//	'K' tx:       commit
//	'E' tx:       rollback finished
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
// bytes, the note, the held-lock list), kept for the next: a short
// transaction then allocates nothing for them.
type undoBufs struct {
	steps []step
	arena []byte
	note  []byte
	held  []heldLock
}

// putUndoBufs recycles tx's buffers (small ones only) and drops them from
// tx. Its locks must be released already.
func (db *DB) putUndoBufs(tx *Tx) {
	if cap(tx.arena) <= 64<<10 && cap(tx.steps) <= 1024 && cap(tx.owner.held) <= 1024 {
		clear(tx.steps) // no references into the arena survive
		b := tx.bufs
		if b == nil {
			b = &undoBufs{}
		}
		*b = undoBufs{steps: tx.steps[:0], arena: tx.arena[:0], note: tx.note[:0], held: tx.owner.held[:0]}
		db.undoBufs.Put(b)
	}
	tx.steps, tx.arena, tx.note, tx.owner.held, tx.bufs = nil, nil, nil, nil, nil
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
	if err := ix.tree.InsertIn(mt, key, val); err != nil {
		mt.Commit()
		return err
	}
	tx.logStep(mt, &step{kind: stepTreeInsert, flags: flagsOf(ix), space: ix.tree.Space(), key: key})
	return nil
}

func (tx *Tx) treeDelete(ix *index, key, old []byte) error {
	mt := tx.mtr()
	if err := ix.tree.DeleteIn(mt, key); err != nil {
		mt.Commit()
		return err
	}
	tx.logStep(mt, &step{kind: stepTreeDelete, flags: flagsOf(ix), space: ix.tree.Space(), key: key, val: old})
	return nil
}

func (tx *Tx) treeUpdate(ix *index, key, val, old []byte) error {
	mt := tx.mtr()
	if err := ix.tree.UpdateIn(mt, key, val); err != nil {
		mt.Commit()
		return err
	}
	tx.logStep(mt, &step{kind: stepTreeUpdate, flags: flagsOf(ix), space: ix.tree.Space(), key: key, val: old})
	return nil
}

func (tx *Tx) heapInsert(t *TableHandle, row []byte) (heap.RowPtr, error) {
	mt := tx.mtr()
	ptr, err := t.heap.InsertIn(mt, row)
	if err != nil {
		mt.Commit()
		return ptr, err
	}
	tx.logStep(mt, &step{kind: stepHeapInsert, space: t.heap.Space(), ptr: ptr})
	return ptr, nil
}

func (tx *Tx) heapDelete(t *TableHandle, ptr heap.RowPtr, old []byte) error {
	mt := tx.mtr()
	if err := t.heap.DeleteIn(mt, ptr); err != nil {
		mt.Commit()
		return err
	}
	tx.logStep(mt, &step{kind: stepHeapDelete, space: t.heap.Space(), ptr: ptr, val: old})
	return nil
}

func (tx *Tx) heapUpdate(t *TableHandle, ptr heap.RowPtr, row, old []byte) (heap.RowPtr, error) {
	mt := tx.mtr()
	np, err := t.heap.UpdateIn(mt, ptr, row)
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

// structure names what lives in a space.
type structure struct {
	tree *btree.Tree
	heap *heap.Heap
}

func (db *DB) registerSpaces(t *TableHandle) {
	db.spaceMu.Lock()
	defer db.spaceMu.Unlock()
	for _, ix := range t.ixs {
		db.spaces[ix.tree.Space()] = structure{tree: ix.tree}
	}
	if t.heap != nil {
		db.spaces[t.heap.Space()] = structure{heap: t.heap}
	}
}

func (db *DB) structureOf(space uint32) (structure, error) {
	db.spaceMu.RLock()
	defer db.spaceMu.RUnlock()
	s, ok := db.spaces[space]
	if !ok {
		return s, fmt.Errorf("%w: undo names space %d, which no table uses", ErrInconsistent, space)
	}
	return s, nil
}

func (db *DB) registerActive(tx, lsn uint64) {
	db.activeMu.Lock()
	db.active[tx] = lsn
	db.activeMu.Unlock()
}

func (db *DB) unregisterActive(tx uint64) {
	db.activeMu.Lock()
	delete(db.active, tx)
	db.activeMu.Unlock()
}

// oldestActive returns the first LSN of the oldest transaction that has
// logged something and not ended, or math.MaxUint64.
func (db *DB) oldestActive() uint64 {
	db.activeMu.Lock()
	defer db.activeMu.Unlock()
	o := uint64(math.MaxUint64)
	for _, l := range db.active {
		o = min(o, l)
	}
	return o
}

// undoer takes back the steps of one transaction: at Rollback, or for a
// transaction that a crash interrupted, at recovery.
//
// Steps are undone newest row operation first. Within one row operation
// the order is: undo the index entries it inserted, then its heap step,
// then put back the index entries it deleted or changed. Undoing a heap
// delete or a moving update puts the row at a new row pointer (its old
// slot may have been reused by then); remap records where each pointer's
// row went, and every later undo step rewrites the pointers it carries
// through it. The index entries that step three puts back then point at
// the row where it now is, so nothing needs the vacated slot to stay
// reserved. An update in place is undone in place: a heap row updated in
// place never shrinks (padRow), so its old image always fits back.
type undoer struct {
	db    *DB
	m     *cache.Meter
	tx    uint64
	steps []step
	done  []bool
	remap map[heap.RowPtr]heap.RowPtr
	note  []byte
	buf   []byte
}

func (u *undoer) resolve(p heap.RowPtr) heap.RowPtr {
	if q, ok := u.remap[p]; ok {
		return q
	}
	return p
}

// rewrite returns b with the row pointer that flag f says it holds run
// through the remap (a copy when it changes).
func (u *undoer) rewrite(b []byte, tail bool) ([]byte, error) {
	if len(b) < heap.RowPtrSize {
		return nil, fmt.Errorf("%w: undo entry of %d bytes holds no row pointer", ErrInconsistent, len(b))
	}
	at := len(b) - heap.RowPtrSize
	if !tail {
		at = 0
	}
	p, err := heap.DecodeRowPtr(b[at : at+heap.RowPtrSize])
	if err != nil {
		return nil, err
	}
	q := u.resolve(p)
	if q == p {
		return b, nil
	}
	c := append([]byte{}, b...)
	enc := q.Encode()
	copy(c[at:], enc[:])
	return c, nil
}

func (u *undoer) run() error {
	for end := len(u.steps); end > 0; {
		g := u.steps[end-1].group
		start := end - 1
		for start > 0 && u.steps[start-1].group == g {
			start--
		}
		for class := 0; class < 3; class++ {
			for i := end - 1; i >= start; i-- {
				if u.done[i] || stepClass(u.steps[i].kind) != class {
					continue
				}
				if err := u.undo(i); err != nil {
					return fmt.Errorf("engine: undo of transaction %d, step %d (%c): %w", u.tx, i, u.steps[i].kind, err)
				}
				u.done[i] = true
			}
		}
		end = start
	}
	return nil
}

func stepClass(k byte) int {
	switch k {
	case stepTreeInsert:
		return 0
	case stepHeapInsert, stepHeapDelete, stepHeapUpdate:
		return 1
	}
	return 2
}

// undo takes back step i in one mini-transaction whose record carries the
// compensation note, so a crash never undoes a step twice.
func (u *undoer) undo(i int) error {
	s := &u.steps[i]
	st, err := u.db.structureOf(s.space)
	if err != nil {
		return err
	}
	key, val := s.key, s.val
	if s.flags&remapKeyTail != 0 {
		if key, err = u.rewrite(key, true); err != nil {
			return err
		}
	}
	if s.flags&remapVal != 0 && s.kind != stepTreeInsert {
		if val, err = u.rewrite(val, false); err != nil {
			return err
		}
	}
	mt := u.db.pool.BeginMtr(u.m)
	var moved heap.RowPtr
	switch s.kind {
	case stepTreeInsert:
		err = st.tree.DeleteIn(mt, key)
	case stepTreeDelete:
		err = st.tree.InsertIn(mt, key, val)
	case stepTreeUpdate:
		err = st.tree.UpdateIn(mt, key, val)
	case stepHeapInsert:
		err = st.heap.DeleteIn(mt, u.resolve(s.ptr))
	case stepHeapDelete:
		moved, err = st.heap.InsertIn(mt, s.val)
	case stepHeapUpdate:
		cur := u.resolve(s.ptr2)
		moved, err = st.heap.UpdateIn(mt, cur, s.val)
		if err == nil && s.ptr == s.ptr2 && moved != cur {
			err = fmt.Errorf("%w: undo of an update in place of row %s had to move it to %s", ErrInconsistent, cur, moved)
		}
	default:
		err = fmt.Errorf("%w: unknown step kind %q", ErrInconsistent, s.kind)
	}
	if err != nil {
		mt.Commit()
		return err
	}
	u.note = append(u.note[:0], noteCLR)
	u.note = binary.AppendUvarint(u.note, u.tx)
	u.note = binary.AppendUvarint(u.note, uint64(i))
	u.note = moved.Append(u.note)
	mt.Note(u.note)
	mt.Commit()
	if s.kind == stepHeapDelete || s.kind == stepHeapUpdate {
		u.remap[s.ptr] = moved
	}
	if testHookUndoStep != nil {
		testHookUndoStep()
	}
	return nil
}

// testHookUndoStep, when set by a test, runs after each undo step (crash
// tests take their crash image there).
var testHookUndoStep func()

// loser is a transaction recovery found unfinished.
type loser struct {
	steps []step
	clrs  []txNote
}

// Checkpoint writes every dirty page, makes it durable, records where
// recovery will start, and drops the log before that (and before the
// oldest unfinished transaction's first record). Its page writes are
// charged to the pool's background meter.
func (db *DB) Checkpoint() error {
	db.ckptMu.Lock()
	defer db.ckptMu.Unlock()
	return db.checkpointLocked()
}

func (db *DB) checkpointLocked() error {
	redo := db.log.End()
	keep := min(redo, db.oldestActive())
	before := db.pool.BackgroundMeter()
	if err := db.pool.FlushAll(nil); err != nil {
		return fmt.Errorf("engine: checkpoint: %w", err)
	}
	after := db.pool.BackgroundMeter()
	db.pool.ChargeBackground(&cache.Meter{CheckpointPages: after.PageFlushes - before.PageFlushes})
	if err := db.store.Sync(); err != nil {
		return fmt.Errorf("engine: checkpoint: %w", err)
	}
	var rec [24]byte
	binary.LittleEndian.PutUint64(rec[0:], redo)
	binary.LittleEndian.PutUint64(rec[8:], keep)
	binary.LittleEndian.PutUint64(rec[16:], db.txSeq.Load())
	if err := db.log.SaveCheckpoint(rec[:]); err != nil {
		return fmt.Errorf("engine: checkpoint: %w", err)
	}
	db.checkpoints.Add(1)
	return db.log.Checkpointed(redo, keep)
}

// maybeCheckpoint checkpoints when the log has grown by CheckpointBytes
// since the last one. The transaction that crosses the mark does it (on
// the background meter); others go on.
func (db *DB) maybeCheckpoint() error {
	if db.log.SinceCheckpoint() < uint64(db.opts.CheckpointBytes) {
		return nil
	}
	if !db.ckptMu.TryLock() {
		return nil
	}
	defer db.ckptMu.Unlock()
	if db.log.SinceCheckpoint() < uint64(db.opts.CheckpointBytes) {
		return nil
	}
	return db.checkpointLocked()
}

// recover redoes the log from the last checkpoint and returns the
// transactions that never finished, to be rolled back once the catalog is
// open.
func (db *DB) recover() (map[uint64]*loser, error) {
	from, keep := uint64(redo.FirstLSN), uint64(redo.FirstLSN)
	rec, err := db.log.LoadCheckpoint()
	if err != nil {
		return nil, err
	}
	if rec != nil {
		if len(rec) != 24 {
			return nil, fmt.Errorf("%w: checkpoint record of %d bytes", redo.ErrCorruptLog, len(rec))
		}
		from = binary.LittleEndian.Uint64(rec[0:])
		keep = binary.LittleEndian.Uint64(rec[8:])
		db.txSeq.Store(binary.LittleEndian.Uint64(rec[16:]))
	}
	losers := make(map[uint64]*loser)
	var pages []redo.PageRedo
	bg := &cache.Meter{}
	err = db.log.Scan(min(from, keep), func(lsn uint64, body []byte) error {
		var note []byte
		var err error
		pages, note, err = redo.Decode(body, pages)
		if err != nil {
			return fmt.Errorf("record at LSN %d: %w", lsn, err)
		}
		if lsn >= from {
			for i := range pages {
				if _, err := db.pool.Redo(bg, lsn, &pages[i]); err != nil {
					return fmt.Errorf("redo of record at LSN %d: %w", lsn, err)
				}
			}
			db.recovered.pages += int64(len(pages))
			db.recovered.records++
		}
		if len(note) == 0 {
			return nil
		}
		n, err := decodeNote(note)
		if err != nil {
			return fmt.Errorf("record at LSN %d: %w", lsn, err)
		}
		if n.tx > db.txSeq.Load() {
			db.txSeq.Store(n.tx)
		}
		// Records of a transaction that began before the scan start
		// (it had finished when the checkpoint was taken) may follow:
		// its end record is among them, so it is dropped before the end.
		l := losers[n.tx]
		if l == nil && (n.kind == noteStep || n.kind == noteCLR) {
			l = &loser{}
			losers[n.tx] = l
		}
		switch n.kind {
		case noteStep:
			s := n.step
			s.key = append([]byte(nil), s.key...)
			s.val = append([]byte(nil), s.val...)
			l.steps = append(l.steps, s)
		case noteCLR:
			n.lsn = lsn
			l.clrs = append(l.clrs, n)
		case noteCommit, noteEnd:
			delete(losers, n.tx)
		}
		return nil
	})
	db.pool.ChargeBackground(bg)
	if err != nil {
		return nil, fmt.Errorf("engine: recovery: %w", err)
	}
	return losers, nil
}

// rollBackLosers undoes every unfinished transaction recovery found, each
// from where its own rollback (if any) stopped.
func (db *DB) rollBackLosers(losers map[uint64]*loser) error {
	var errs []error
	// Newest transaction first, so that the order (and the pages the
	// undo writes) is the same on every run.
	ids := slices.Sorted(maps.Keys(losers))
	slices.Reverse(ids)
	for _, id := range ids {
		l := losers[id]
		u := &undoer{db: db, tx: id, steps: l.steps, done: make([]bool, len(l.steps)),
			remap: make(map[heap.RowPtr]heap.RowPtr)}
		var bad error
		for _, c := range l.clrs {
			if c.n >= len(l.steps) {
				bad = fmt.Errorf("%w: compensation at LSN %d for step %d of unfinished transaction %d, which logged %d steps since the checkpoint",
					redo.ErrCorruptLog, c.lsn, c.n, id, len(l.steps))
				break
			}
			u.done[c.n] = true
			if k := l.steps[c.n].kind; k == stepHeapDelete || k == stepHeapUpdate {
				u.remap[l.steps[c.n].ptr] = c.ptr
			}
		}
		if bad != nil {
			errs = append(errs, bad)
			continue
		}
		if err := u.run(); err != nil {
			errs = append(errs, err)
			continue
		}
		db.writeNote(nil, endNote(id))
		db.recovered.rolledBack++
	}
	return errors.Join(errs...)
}

func endNote(tx uint64) []byte {
	return binary.AppendUvarint([]byte{noteEnd}, tx)
}

func commitNote(dst []byte, tx uint64) []byte {
	return binary.AppendUvarint(append(dst[:0], noteCommit), tx)
}

// RecoveryStats says what opening the database had to do.
type RecoveryStats struct {
	Records    int64 // log records redone (at or after the checkpoint)
	Pages      int64 // page changes in them (applied or found already on the page)
	RolledBack int64 // transactions rolled back
}

// Recovery returns what the last Open recovered.
func (db *DB) Recovery() RecoveryStats {
	return RecoveryStats{Records: db.recovered.records, Pages: db.recovered.pages, RolledBack: db.recovered.rolledBack}
}

// LogStats are the redo log's totals since Open, with the checkpoints
// taken.
type LogStats struct {
	redo.LogStats
	Checkpoints int64
}

// LogStats returns the redo log's totals.
func (db *DB) LogStats() LogStats {
	return LogStats{LogStats: db.log.Stats(), Checkpoints: db.checkpoints.Load()}
}
