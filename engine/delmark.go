package engine

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/enginelab/enginelab/btree"
	"github.com/enginelab/enginelab/engine/lock"
	"github.com/enginelab/enginelab/heap"
)

// Deletes in a clustered table are delete-marks, as InnoDB's: a Delete
// sets the record's delete-mark (the info bit of clust.go's system fields,
// REC_INFO_DELETED_FLAG) with its DB_TRX_ID and DB_ROLL_PTR naming the
// transaction and an undo record of kind 'x' (TRX_UNDO_DEL_MARK_REC: the
// previous system fields, so that a read view that does not see the
// delete rebuilds the version before it), and delete-marks every
// secondary entry of the row (row_upd_del_mark_clust_rec, then
// row_upd_sec_index_entry for each index). An update that changes a
// secondary index's columns delete-marks the old entry and inserts the
// new one. The records stay until purge (purge.go) removes them once no
// read view can need them.
//
// A secondary entry of a clustered table is (index columns, primary key)
// with a value that holds its delete-mark:
//
//	value empty        the entry is live
//	value 0x20 (1B)    delete-marked (REC_INFO_DELETED_FLAG again)
//
// so a live entry is laid out as before delete-marks existed. Heap tables'
// secondaries never carry a mark: their deletes stay physical.
//
// Who sees a delete-marked record:
//
//   - a consistent read builds the version its view sees (buildVersion):
//     a delete it does not see is undone through the 'x' record, a
//     delete-marked version it sees is no row;
//   - a locking read or a write acts on the latest version, in which the
//     row does not exist: Get, Update and Delete find no row; a scan
//     skips the record. A record delete-marked by a transaction still
//     active is locked first (InnoDB's implicit lock: the marker holds the
//     row's exclusive lock), so the scan waits for it and reads the row
//     again if it rolled back. One marked by a committed transaction is
//     skipped without a lock (there are no gap locks to take on it);
//   - an insert of its primary key updates it in place
//     (row_ins_clust_index_entry_by_modify), undone as an update of a
//     delete-marked record; the row's secondary entries that are still
//     there, delete-marked, are unmarked (row_ins_sec_index_entry_by_modify)
//     and the others inserted;
//   - a unique secondary index's duplicate check does not count a
//     delete-marked entry (row_ins_dupl_error_with_rec), but locks the row
//     it names, shared, and checks again if it had to wait
//     (row_ins_scan_sec_index_for_duplicate), so that a delete still being
//     rolled back cannot leave two live entries.

// secDelMarked is a delete-marked secondary entry's value.
var secDelMarked = []byte{recDeleted}

// secDeleted says whether a secondary entry's value is a delete-mark.
func secDeleted(val []byte) bool { return len(val) > 0 && val[0]&recDeleted != 0 }

// clustDeleted says whether a clustered record (system fields first) is
// delete-marked.
func clustDeleted(rec []byte) bool { return len(rec) > 0 && rec[0]&recDeleted != 0 }

// secMark delete-marks the entry key of secondary index ix (a live entry
// of the row tx holds locked), logged with its undo (a tree update back
// to the live value).
func (tx *Tx) secMark(ix *index, key []byte) error {
	tx.assignTrxID() // taken by the row's clustered change already
	b := tx.m.NodeVisitsTotal()
	err := tx.treeUpdate(ix, key, secDelMarked, nil, tx.trxID)
	tx.charge(ix, b)
	if err != nil {
		return err
	}
	tx.deleted(ix)
	return nil
}

// secInsert gives the row tx holds locked its live entry key in secondary
// index ix: a new entry, or, if the entry is there delete-marked (an older
// version of the row had the same values and purge has not removed it),
// the entry unmarked (row_ins_sec_index_entry_by_modify). Purge may
// remove a delete-marked entry between the two attempts; the insert is
// then tried again.
func (tx *Tx) secInsert(ix *index, key []byte) error {
	tx.assignTrxID()
	b := tx.m.NodeVisitsTotal()
	defer tx.charge(ix, b)
	for {
		err := tx.treeInsert(ix, key, nil, tx.trxID)
		if !errors.Is(err, btree.ErrDuplicateKey) {
			if err == nil {
				tx.wrote(ix)
			}
			return err
		}
		v, found, err := ix.tree.Get(tx.m, key, tx.val)
		if err != nil {
			return err
		}
		if !found {
			continue // purged since the insert met it
		}
		tx.val = v
		if !secDeleted(v) {
			return fmt.Errorf("%w: index %s already has a live entry %x for the row", ErrInconsistent, ix.name, key)
		}
		err = tx.treeUpdate(ix, key, nil, secDelMarked, tx.trxID)
		if errors.Is(err, btree.ErrKeyNotFound) {
			continue // purged since it was read
		}
		if err == nil {
			tx.wrote(ix)
		}
		return err
	}
}

// clustDelete delete-marks the clustered record of key (its row read by
// readOld into tx.old, tx.oldImg and tx.recHdr), then every secondary
// entry of the row.
func (tx *Tx) clustDelete(t *TableHandle, key []byte) error {
	prim := t.ixs[0]
	s := step{kind: stepClustDelMark, key: key, prev: tx.recHdr, pos: tx.recPos}
	if len(t.ixs) > 1 {
		s.val = tx.oldImg // purge builds the marked entries from it
	}
	b := tx.m.NodeVisitsTotal()
	err := tx.clustWrite(prim, &s, tx.oldImg)
	tx.charge(prim, b)
	if err != nil {
		return err
	}
	tx.deleted(prim)
	for _, ix := range t.ixs[1:] {
		tx.key2 = t.entryKey(tx.key2, ix, tx.old, key, heap.RowPtr{})
		if err := tx.secMark(ix, tx.key2); err != nil {
			return fmt.Errorf("engine: table %s: index %s: %w", t.info.def.Name, ix.name, err)
		}
	}
	return nil
}

// clustInsertByModify inserts the row whose image is tx.row over the
// delete-marked clustered record of pk that the insert met
// (row_ins_clust_index_entry_by_modify): the record is updated in place,
// undo as an update whose previous version is delete-marked. It reports
// false, having changed nothing, when the record is live (a duplicate
// key). Purge may remove the record meanwhile: the insert is then tried
// again.
func (tx *Tx) clustInsertByModify(prim *index, pk []byte) (bool, error) {
	for {
		b := tx.m.NodeVisitsTotal()
		var pos btree.Pos
		v, found, err := prim.tree.GetPos(tx.m, pk, tx.val, &pos)
		tx.charge(prim, b)
		if err != nil {
			return false, err
		}
		if !found {
			// Purged since the insert met it: insert again.
			b := tx.m.NodeVisitsTotal()
			err := tx.clustWrite(prim, &step{kind: stepClustInsert, key: pk}, tx.row)
			tx.charge(prim, b)
			if errors.Is(err, btree.ErrDuplicateKey) {
				continue
			}
			return true, err
		}
		tx.val = v
		h, body, err := splitClustRec(v)
		if err != nil {
			return false, err
		}
		if !h.deleted() {
			return false, nil
		}
		s := step{kind: stepClustUpdate, key: pk, prev: h, val: body, pos: pos}
		if e := undoEdit(tx.patch[:0], body, tx.row); e != nil {
			tx.patch = e
			s.val, s.flags = e, valEdit
		}
		b = tx.m.NodeVisitsTotal()
		err = tx.clustWrite(prim, &s, tx.row)
		tx.charge(prim, b)
		if errors.Is(err, btree.ErrKeyNotFound) {
			continue // purged since it was read
		}
		return true, err
	}
}

// clustInsertSecondaries gives a row inserted into clustered table t its
// secondary entries (secInsert: new, or unmarked where a delete-marked
// one is left from an older version of the row).
func (tx *Tx) clustInsertSecondaries(t *TableHandle, row Row, pk []byte) error {
	for _, ix := range t.ixs[1:] {
		tx.key2 = t.entryKey(tx.key2, ix, row, pk, heap.RowPtr{})
		if err := tx.secInsert(ix, tx.key2); err != nil {
			return fmt.Errorf("engine: table %s: index %s: %w", t.info.def.Name, ix.name, err)
		}
	}
	return nil
}

// uniqueClustered reports whether unique secondary index ix of clustered
// table t has a live entry whose columns encode to prefix (hi bounds the
// entries that start with it), as InnoDB's
// row_ins_scan_sec_index_for_duplicate: a delete-marked entry is no
// duplicate (row_ins_dupl_error_with_rec), but the row it names is locked
// shared first, so that a transaction still holding that row (its delete
// not yet committed, or being rolled back) is waited for; after a wait the
// check starts over, as the entry may be live again. The locks are held
// to the end of the transaction, as InnoDB's are.
func (tx *Tx) uniqueClustered(t *TableHandle, ix *index, prefix []byte, hi btree.Bound) (bool, error) {
	for {
		b := tx.m.NodeVisitsTotal()
		cb := tx.cursorBufs()
		ix.tree.InitIter(&cb.it, tx.m, &btree.IterOptions{Lower: btree.Incl(prefix), Upper: hi})
		found, waited := false, false
		var err error
		for ok := cb.it.First(); ok; ok = cb.it.Next() {
			if !secDeleted(cb.it.Value()) {
				found = true
				break
			}
			// The entry's key is prefix then the row's primary key: the
			// iterator holds a pin but no latch, so the wait holds none.
			before := tx.m.LockWaits
			if err = tx.lock(t, cb.it.Key()[len(prefix):], lock.Shared); err != nil {
				break
			}
			if waited = tx.m.LockWaits != before; waited {
				break
			}
		}
		if cerr := cb.it.Close(); err == nil {
			err = cerr
		}
		tx.putCursorBufs(cb)
		tx.charge(ix, b)
		if err != nil || !waited {
			return found, err
		}
	}
}

// skipMarked handles a delete-marked entry a locking scan (or a count)
// met in a clustered table (see the top of this file): the latest version
// is no row, so the entry is skipped. But a mark by a transaction still
// active is waited for (its exclusive row lock: InnoDB's implicit lock,
// whose holder is the clustered record's DB_TRX_ID, lock_sec_rec_some_has_impl
// for a secondary entry), and the row read again after the wait, in case
// that transaction rolled back. The entry was read without a latch held:
// if its leaf changed since, the mark is read again before it is
// trusted. A count that takes no locks skips at once.
func (c *Cursor) skipMarked(key, val []byte) error {
	tx, t, ix := c.tx, c.t, c.ix
	if !c.locks {
		return errSkip
	}
	prim := t.ixs[0]
	// marker reads the transaction id of the clustered record of pk (0
	// and false if it is gone: purged).
	marker := func(pk []byte) (uint64, bool, error) {
		b := tx.m.NodeVisitsTotal()
		v, found, err := prim.tree.Get(tx.m, pk, tx.val)
		tx.charge(prim, b)
		if err != nil || !found {
			return 0, false, err
		}
		tx.val = v
		if len(v) < clustHdrSize {
			return 0, false, fmt.Errorf("engine: table %s: %w", t.info.def.Name, errBadClustRec)
		}
		return readClustHdr(v).trxID, true, nil
	}
	var pk []byte
	var id uint64
	if ix.primary {
		if len(val) < clustHdrSize {
			return fmt.Errorf("engine: table %s: %w", t.info.def.Name, errBadClustRec)
		}
		pk, id = key, readClustHdr(val).trxID
	} else {
		rest, buf, err := decodeKeyInto(key, t.info.def.Columns, ix.cols, c.row, c.buf[:0])
		c.buf = buf
		if err != nil {
			return err
		}
		pk = rest
		var found bool
		if id, found, err = marker(pk); err != nil || !found {
			if err == nil {
				err = errSkip
			}
			return err
		}
	}
	for again := false; ; again = true {
		if id != tx.trxID && tx.db.trxActive(id) {
			if _, err := c.lockRow(pk); err != nil {
				return err
			}
			return c.rereadEntry(pk, key)
		}
		if again || !c.it.Changed() {
			return errSkip // a committed delete-mark
		}
		// The leaf changed since the entry was read (a rollback may
		// have unmarked it): read the entry again.
		b := tx.m.NodeVisitsTotal()
		v, found, err := ix.tree.Get(tx.m, key, tx.val)
		tx.charge(ix, b)
		if err != nil || !found {
			if err == nil {
				err = errSkip // purged
			}
			return err
		}
		tx.val = v
		if (ix.primary && !clustDeleted(v)) || (!ix.primary && !secDeleted(v)) {
			if _, err := c.lockRow(pk); err != nil {
				return err
			}
			return c.rereadEntry(pk, key)
		}
		if ix.primary {
			id = readClustHdr(v).trxID
		} else if id, found, err = marker(pk); err != nil || !found {
			if err == nil {
				err = errSkip
			}
			return err
		}
	}
}

// rereadEntry is reread for a clustered or a single-version heap table
// after a lock wait: the row read again by primary key pk must still have
// the scan's entry key (a secondary entry: row_sel_sec_rec_is_for_clust_rec;
// a row-pointer entry, the row's pointer too), else the entry belongs to a
// version the waited-for transaction replaced (or to the row's new values
// that its rollback took back), and the scan meets the row at its other
// entry, if that is in range. Counted at both entries otherwise.
func (c *Cursor) rereadEntry(pk, key []byte) error {
	tx, t, ix := c.tx, c.t, c.ix
	if ix.primary {
		return c.reread(pk)
	}
	key = append(c.keyBuf[:0:0], key...) // lookup reuses buffers key may alias
	pk = append(c.pkBuf[:0:0], pk...)
	img, ptr, found, err := tx.lookup(t, pk, false)
	if err != nil {
		return err
	}
	if !found {
		return errSkip
	}
	c.ptr = ptr
	if t.org == Clustered { // lookup counted a heap table's fetch itself
		tx.m.RowFetches++
		tx.m.RowFetchesPrimary++
	}
	tx.m.RowsDecoded++
	cols := t.info.def.Columns
	if c.full, err = decodeRow(img, cols, c.full); err != nil {
		return fmt.Errorf("engine: table %s: %w", t.info.def.Name, err)
	}
	if c.keyBuf = t.entryKey(c.keyBuf, ix, c.full, pk, ptr); !bytes.Equal(c.keyBuf, key) {
		return errSkip
	}
	clear(c.row)
	for _, w := range c.want {
		c.row[w] = c.full[w]
	}
	return nil
}
