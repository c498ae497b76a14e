package engine

import (
	"bytes"
	"fmt"

	"github.com/enginelab/enginelab/heap"
)

// Check of a versioned heap table (Options.HeapVersions). The heap holds
// versions, not rows, so Check reads the table through its index entries
// and the rows' version chains instead of a heap scan:
//
//  1. Every primary entry names a chain head; every version on the chain
//     (walked as reads walk it, redirects followed) decodes, fits the
//     schema and has the entry's primary key, and at most one of them is
//     live (the latest committed, or the checking transaction's own).
//     A chain with a live version is a row: each secondary index has the
//     entry its values imply (with the chain's head as row pointer).
//  2. Every secondary entry names a chain (by head pointer, or by primary
//     key through the primary index) one of whose versions gives back the
//     entry exactly: the live one (a live entry, counted), or a dead one
//     (a deleted row's entry, which the delete keeps for older snapshots
//     and vacuum would remove). A unique index holds no two live entries
//     with the same non-NULL values, and each index has as many live
//     entries as the table has rows.
//
// Versions no chain reaches (an aborted update's) are not checked.

// chainVersions calls f with each version of the chain from head, in
// chain order, and whether it is the live one.
func (c *checker) chainVersions(head heap.RowPtr, f func(img []byte, at heap.RowPtr, live bool) error) error {
	t, tx := c.t, c.tx
	cs := t.db.clog.Load()
	snap := tx.latestSnap()
	p := head
	for range 1 << 20 {
		th, row, at, ok, err := t.heap.ReadChainVersion(tx.m, p, c.img)
		if err != nil {
			return err
		}
		c.img = row
		if !ok {
			return nil
		}
		live, err := heap.Visible(th, snap, cs)
		if err != nil {
			return err
		}
		if err := f(row, at, live); err != nil {
			return err
		}
		next, err := chainNext(th, at, cs)
		if err != nil || !next {
			return err
		}
		p = th.Ctid
	}
	return fmt.Errorf("engine: check table %s: version chain from %s does not end", t.info.def.Name, head)
}

// versionedChains is step 1.
func (c *checker) versionedChains() error {
	t, tx := c.t, c.tx
	prim := t.ixs[0]
	cols := t.info.def.Columns
	it := prim.tree.NewIter(tx.m, nil)
	defer it.Close()
	var liveImg []byte
	for ok := c.step(prim, it.First); ok; ok = c.step(prim, it.Next) {
		key := append([]byte(nil), it.Key()...)
		desc := fmt.Sprintf("%x", key)
		head, err := heap.DecodeRowPtr(it.Value())
		if err != nil {
			return c.fail(prim, desc, "entry value %x: %w", it.Value(), err)
		}
		lives := 0
		err = c.chainVersions(head, func(img []byte, at heap.RowPtr, live bool) error {
			where := func() string { return fmt.Sprintf("%s, version at %s", desc, at) }
			if err := c.decode(prim, where, img); err != nil {
				return err
			}
			c.pk = appendKey(c.pk[:0], cols, t.info.pk, c.row)
			if !bytes.Equal(c.pk, key) {
				return c.fail(prim, where(), "a version of primary key (%s) on the chain", c.rowKey(c.row))
			}
			if live {
				lives++
				liveImg = append(liveImg[:0], img...)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if lives > 1 {
			return c.fail(prim, desc, "%d live versions on the chain from %s", lives, head)
		}
		if lives == 1 {
			if err := c.decode(prim, func() string { return desc }, liveImg); err != nil {
				return err
			}
			if err := c.secondaryOf(c.row, key, head); err != nil {
				return err
			}
			c.rows++
		}
	}
	return it.Err()
}

// versionedSecondary is step 2 for ix.
func (c *checker) versionedSecondary(ix *index) error {
	t, tx := c.t, c.tx
	prim := t.ixs[0]
	cols := t.info.def.Columns
	it := ix.tree.NewIter(tx.m, nil)
	defer it.Close()
	var prev []byte
	n := 0
	for ok := c.step(ix, it.First); ok; ok = c.step(ix, it.Next) {
		key := append([]byte(nil), it.Key()...)
		clear(c.ent)
		rest, scratch, err := decodeKeyInto(key, cols, ix.cols, c.ent, c.scratch[:0])
		c.scratch = scratch
		if err != nil {
			return c.fail(ix, fmt.Sprintf("%x", key), "entry key does not decode: %w", err)
		}
		colPart := key[:len(key)-len(rest)]
		desc := c.describe(ix.cols, c.ent)
		if len(it.Value()) != 0 {
			return c.fail(ix, desc, "entry has a %d-byte value, want none", len(it.Value()))
		}
		var head heap.RowPtr
		if ix.carry == carryPtr {
			if head, err = heap.DecodeRowPtr(rest); err != nil {
				return c.fail(ix, desc, "entry's row pointer %x: %w", rest, err)
			}
			desc += "; row pointer " + head.String()
		} else {
			desc += fmt.Sprintf("; primary key %x", rest)
			v, found, err := c.get(prim, rest)
			if err != nil {
				return err
			}
			if !found {
				return c.fail(ix, desc, "no row has that primary key")
			}
			if head, err = heap.DecodeRowPtr(v); err != nil {
				return c.fail(prim, desc, "entry value %x: %w", v, err)
			}
		}
		givenBack, liveMatch := false, false
		err = c.chainVersions(head, func(img []byte, _ heap.RowPtr, live bool) error {
			if err := c.decode(ix, func() string { return desc }, img); err != nil {
				return err
			}
			c.pk = appendKey(c.pk[:0], cols, t.info.pk, c.row)
			c.key = t.entryKey(c.key, ix, c.row, c.pk, head)
			if bytes.Equal(c.key, key) {
				givenBack = true
				liveMatch = liveMatch || live
			}
			return nil
		})
		if err != nil {
			return err
		}
		if !givenBack {
			return c.fail(ix, desc, "no version of the chain from %s gives back the entry", head)
		}
		if !liveMatch {
			continue // a deleted or changed row's entry, kept until vacuum
		}
		n++
		if uniqueRepeat(ix, c.ent, colPart, &prev) {
			return c.fail(ix, desc, "unique index holds these values twice")
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	if n != c.rows {
		return c.fail(ix, "*", "%d live entries for %d rows", n, c.rows)
	}
	return nil
}
