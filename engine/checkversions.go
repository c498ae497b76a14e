package engine

import (
	"bytes"
	"fmt"

	"github.com/enginelab/enginelab/btree"
	"github.com/enginelab/enginelab/heap"
)

// Check of a versioned heap table (Options.HeapVersions). The heap holds
// versions, not rows, and each index holds an entry per version chain
// (heapmvcc.go), so Check reads the table through its index entries and
// the HOT chains they name, each chain read under one latch of its page
// (heap.Heap.HotChain), with the table's vacuum held off (vacState.mu:
// vacuum removes entries and frees the line pointers they named, which
// would make an entry read before the removal look stale; prunes on
// access go on, and change no line pointer an index names but to dead).
// Live means visible to one snapshot taken at the start (the checking
// transaction's read view, so that nothing it may see is pruned), so
// that the rows and entries agree whatever commits meanwhile:
//
//  1. Every primary entry (primary key, root) names a line pointer that
//     is not unused and does not hold a heap-only tuple (a dead one is an
//     entry vacuum has yet to remove); every version of its HOT chain
//     decodes, fits the schema and has the entry's primary key. Across
//     the entries of one primary key at most one version is live: a key with
//     a live version is a row, and each secondary index has the entry
//     its values imply (with the live version's root as row pointer).
//  2. Every secondary entry that carries a row pointer names, in the same
//     way, a line pointer that is not unused: a dead one, or a HOT chain
//     one of whose versions gives the entry back exactly (the live one: a
//     live entry, counted; or a dead one, kept until vacuum). An entry
//     that carries the primary key is live when the row's live version
//     gives it back; otherwise it is an old values' entry, or a
//     deleted row's, which vacuum has yet to remove (or skipped: see
//     bulkDeleteByKey). A unique index holds no two live
//     entries with the same non-NULL values, and each index has as many
//     live entries as the table has rows: with 1, every row has exactly
//     one live entry per index, naming its HOT chain.
//
// Versions no index entry names (heap-only versions off every chain, an
// aborted update's that lost its entries to rollback) are not checked.
//
// Writers may run meanwhile. What they do cannot make a disagreement:
// they add versions and entries the snapshot does not see (their
// transactions are in progress or began after it), stamp xmax on
// versions it still sees, and remove only the entries their own
// rollbacks take back, whose versions it never saw; prunes on access
// free only what is dead to every snapshot, this one included (its view
// holds the horizon back). The structures are read under latches
// beside them: each B+tree by btree.Tree.Check, which holds its
// root-to-node path, and the heap by heap.Heap.Check, which reads each
// page with its FSM byte and map bits under the page's latch.

// chainOf reads the HOT chain rooted at root for ix's entry desc and
// calls f with each version and whether it is live. It fails when root
// names an unused line pointer or a heap-only tuple.
func (c *checker) chainOf(ix *index, desc string, root heap.RowPtr, f func(img []byte, at heap.RowPtr, live bool) error) error {
	t, tx := c.t, c.tx
	state, vs, err := t.heap.HotChain(tx.m, root)
	if err != nil {
		return c.fail(ix, desc, "version chain at %s: %w", root, err)
	}
	switch state {
	case "unused", "heap-only":
		return c.fail(ix, desc, "entry names %s, whose line pointer is %s", root, state)
	}
	cs := t.db.clog.Load()
	for _, v := range vs {
		live, err := heap.Visible(v.Header, c.snap, cs)
		if err != nil {
			return err
		}
		if err := f(v.Row, v.At, live); err != nil {
			return err
		}
	}
	return nil
}

// versionedChains is step 1.
func (c *checker) versionedChains() error {
	t, tx := c.t, c.tx
	prim := t.ixs[0]
	cols := t.info.def.Columns
	// Killed entries too: each must name a chain no snapshot sees.
	it := prim.tree.NewIter(tx.m, &btree.IterOptions{Killed: true})
	defer it.Close()
	var curPK, liveImg []byte
	var liveRoot heap.RowPtr
	lives := 0
	endKey := func() error {
		if lives > 1 {
			return c.fail(prim, fmt.Sprintf("%x", curPK), "%d live versions", lives)
		}
		if lives == 1 {
			if err := c.decode(prim, func() string { return fmt.Sprintf("%x", curPK) }, liveImg); err != nil {
				return err
			}
			if err := c.secondaryOf(c.row, curPK, liveRoot); err != nil {
				return err
			}
			c.rows++
		}
		return nil
	}
	started := false
	for ok := c.step(prim, it.First); ok; ok = c.step(prim, it.Next) {
		pk, root, err := splitPrimEntry(it.Key())
		if err != nil {
			return c.fail(prim, fmt.Sprintf("%x", it.Key()), "entry key: %w", err)
		}
		desc := fmt.Sprintf("%x; root %s", pk, root)
		if len(it.Value()) != 0 {
			return c.fail(prim, desc, "entry has a %d-byte value, want none", len(it.Value()))
		}
		if !started || !bytes.Equal(pk, curPK) {
			if started {
				if err := endKey(); err != nil {
					return err
				}
			}
			started, lives = true, 0
			curPK = append(curPK[:0], pk...)
		}
		err = c.chainOf(prim, desc, root, func(img []byte, at heap.RowPtr, live bool) error {
			where := func() string { return fmt.Sprintf("%s, version at %s", desc, at) }
			if err := c.decode(prim, where, img); err != nil {
				return err
			}
			c.pk = appendKey(c.pk[:0], cols, t.info.pk, c.row)
			if !bytes.Equal(c.pk, curPK) {
				return c.fail(prim, where(), "a version of primary key (%s) on the chain", c.rowKey(c.row))
			}
			if live && it.Killed() {
				return c.fail(prim, where(), "killed entry names a live version")
			}
			if live {
				lives++
				liveRoot = root
				liveImg = append(liveImg[:0], img...)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	if started {
		return endKey()
	}
	return nil
}

// versionedSecondary is step 2 for ix.
func (c *checker) versionedSecondary(ix *index) error {
	t, tx := c.t, c.tx
	cols := t.info.def.Columns
	it := ix.tree.NewIter(tx.m, &btree.IterOptions{Killed: true})
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
		var roots []heap.RowPtr
		var pk []byte
		if ix.carry == carryPtr {
			root, err := heap.DecodeRowPtr(rest)
			if err != nil {
				return c.fail(ix, desc, "entry's row pointer %x: %w", rest, err)
			}
			desc += "; row pointer " + root.String()
			roots = []heap.RowPtr{root}
		} else {
			desc += fmt.Sprintf("; primary key %x", rest)
			pk = append([]byte(nil), rest...)
			if roots, err = tx.versionRoots(t, pk, nil); err != nil {
				return err
			}
		}
		givenBack, liveMatch := false, false
		for _, root := range roots {
			err = c.chainOf(ix, desc, root, func(img []byte, _ heap.RowPtr, live bool) error {
				if err := c.decode(ix, func() string { return desc }, img); err != nil {
					return err
				}
				c.pk = appendKey(c.pk[:0], cols, t.info.pk, c.row)
				if pk != nil && !bytes.Equal(c.pk, pk) {
					return c.fail(ix, desc, "a version of primary key (%s) in the row's chain", c.rowKey(c.row))
				}
				c.key = t.entryKey(c.key, ix, c.row, c.pk, root)
				if bytes.Equal(c.key, key) {
					givenBack = true
					liveMatch = liveMatch || live
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		if ix.carry == carryPtr && !givenBack {
			// The chain's versions are gone (a dead line pointer) or
			// it gives the entry back; a chain that is there but has
			// other values is a misplaced entry.
			state, vs, err := t.heap.HotChain(tx.m, roots[0])
			if err != nil {
				return err
			}
			if state != "dead" || len(vs) != 0 {
				return c.fail(ix, desc, "no version of the chain at %s gives back the entry", roots[0])
			}
		}
		if liveMatch && it.Killed() {
			return c.fail(ix, desc, "killed entry names a live version")
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
