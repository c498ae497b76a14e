package engine

import (
	"fmt"

	"github.com/enginelab/enginelab/btree"
	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/heap"
)

// structure names what lives in a space.
type structure struct {
	tree *btree.Tree
	heap *heap.Heap
	// table and ix are the clustered table and its index (the clustered
	// tree or a secondary) the space holds: purge finds a record's
	// secondary indexes through them, and rollback the versions that
	// decide whether a secondary entry it would mark again is still
	// needed. Nil for a heap table's structures.
	table *TableHandle
	ix    *index
}

func (db *DB) registerSpaces(t *TableHandle) {
	db.spaceMu.Lock()
	defer db.spaceMu.Unlock()
	for _, ix := range t.ixs {
		s := structure{tree: ix.tree}
		if t.org == Clustered {
			s.table, s.ix = t, ix
		}
		db.spaces[ix.tree.Space()] = s
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
	m     *Meter // nil at recovery
	tx    uint64
	steps []step
	done  []bool
	remap map[heap.RowPtr]heap.RowPtr
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
	case stepTreeInsert, stepClustInsert:
		return 0
	case stepHeapInsert, stepHeapDelete, stepHeapUpdate:
		return 1
	}
	return 2
}

// undo takes back step i in one mini-transaction that also marks its undo
// record undone, so a crash never undoes a step twice.
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
	if s.flags&valEdit != 0 {
		// The old value is the edit applied to the current one, which is
		// what the step wrote (the row is locked, and the transaction's
		// later steps are undone).
		var cur []byte
		switch s.kind {
		case stepTreeUpdate, stepClustUpdate:
			var found bool
			cur, found, err = st.tree.Get(u.m, key, nil)
			if err == nil && !found {
				err = fmt.Errorf("%w: undo of an update of a key the tree no longer holds", ErrInconsistent)
			}
		case stepHeapUpdate:
			cur, err = st.heap.Fetch(u.m, u.resolve(s.ptr2), nil)
		default:
			err = fmt.Errorf("%w: an edited undo step of kind %q", ErrInconsistent, s.kind)
		}
		if err == nil && s.kind == stepClustUpdate {
			_, cur, err = splitClustRec(cur)
		}
		if err == nil {
			val, err = applyUndoEdit(cur, val)
		}
		if err != nil {
			return err
		}
	}
	switch s.kind {
	case stepClustUpdate:
		// The record before the change: its system fields and image.
		val = appendClustRec(nil, s.prev, val)
	case stepClustDelMark:
		// The record before the delete-mark: its system fields, and
		// the image it still has.
		cur, found, err := st.tree.Get(u.m, key, nil)
		if err == nil && !found {
			err = fmt.Errorf("%w: undo of a delete-mark of a key the tree no longer holds", ErrInconsistent)
		}
		var body []byte
		if err == nil {
			_, body, err = splitClustRec(cur)
		}
		if err != nil {
			return err
		}
		val = appendClustRec(nil, s.prev, body)
	}
	if s.flags&remapVal != 0 && s.kind != stepTreeInsert {
		if val, err = u.rewrite(val, false); err != nil {
			return err
		}
	}
	// Undoing an unmark of a clustered table's secondary entry marks it
	// again, unless no version a view may read has it: it is then
	// removed, as purge would (row_undo_mod_del_mark_or_remove_sec), since
	// purge may have passed the log that first marked it while this
	// transaction had it unmarked.
	remove := false
	if s.kind == stepTreeUpdate && st.table != nil && !st.ix.primary && secDeleted(val) {
		if remove, err = u.orphanEntry(st, key); err != nil {
			return err
		}
	}
	mt := u.db.pool.BeginMtr(u.m.Pages())
	var moved heap.RowPtr
	switch {
	case remove:
		err = st.tree.DeleteIn(u.m, mt, key)
	default:
		err = u.apply(mt, st, s, key, val, &moved)
	}
	if err != nil {
		mt.Commit()
		return err
	}
	// The compensation: the record is marked undone (and where the row
	// went) in the same mini-transaction, so a crash never undoes a step
	// twice.
	if err := u.db.markUndone(mt, s.at, hasMoved(s.kind), moved); err != nil {
		mt.Commit()
		return err
	}
	mt.Commit()
	if s.kind == stepHeapDelete || s.kind == stepHeapUpdate {
		u.remap[s.ptr] = moved
	}
	if s.kind == stepClustUpdate && s.prev.deleted() && st.table != nil {
		// An insert over a delete-marked record, undone: the record is
		// delete-marked again, and if purge has passed the delete it
		// is removed here (row_undo_mod_remove_clust_low).
		view := u.db.purgeView()
		if view.changesVisible(s.prev.trxID) {
			var pm Meter
			m := u.m
			if m == nil {
				m = &pm
			}
			if err := u.db.purgeClust(m, st.table, key, s.prev.roll); err != nil {
				return err
			}
		}
	}
	if testHookUndoStep != nil {
		testHookUndoStep()
	}
	return nil
}

// orphanEntry says whether the secondary entry key of st (a clustered
// table's secondary index), which an undo is about to mark again, is
// needed by no version older than the row's current one, the version
// being rolled back (row_vers_old_has_index_entry without also_curr).
func (u *undoer) orphanEntry(st structure, key []byte) (bool, error) {
	t, ix := st.table, st.ix
	row := make(Row, len(t.info.def.Columns))
	pk, _, err := decodeKeyInto(key, t.info.def.Columns, ix.cols, row, nil)
	if err != nil {
		return false, err
	}
	var pm Meter
	m := u.m
	if m == nil {
		m = &pm
	}
	view := u.db.purgeView()
	needed, err := u.db.versionHasEntry(m, &view, t, ix, key, pk, true)
	return !needed, err
}

// apply makes the change that undoes step s (key and val prepared by
// undo) in mt; moved is where a heap undo put the row.
func (u *undoer) apply(mt *cache.Mtr, st structure, s *step, key, val []byte, moved *heap.RowPtr) error {
	var err error
	switch s.kind {
	case stepTreeInsert, stepClustInsert:
		err = st.tree.DeleteIn(u.m, mt, key)
	case stepClustUpdate, stepClustDelMark:
		err = st.tree.UpdateIn(u.m, mt, key, val)
	case stepTreeDelete:
		err = st.tree.InsertIn(u.m, mt, key, val)
	case stepTreeUpdate:
		err = st.tree.UpdateIn(u.m, mt, key, val)
	case stepHeapInsert:
		err = st.heap.DeleteIn(u.m, mt, u.resolve(s.ptr))
	case stepHeapDelete:
		*moved, err = st.heap.InsertIn(u.m, mt, val)
	case stepHeapUpdate:
		cur := u.resolve(s.ptr2)
		*moved, err = st.heap.UpdateIn(u.m, mt, cur, val)
		if err == nil && s.ptr == s.ptr2 && *moved != cur {
			err = fmt.Errorf("%w: undo of an update in place of row %s had to move it to %s", ErrInconsistent, cur, *moved)
		}
	default:
		err = fmt.Errorf("%w: unknown step kind %q", ErrInconsistent, s.kind)
	}
	return err
}

// testHookUndoStep, when set by a test, runs after each undo step (crash
// tests take their crash image there).
var testHookUndoStep func()
