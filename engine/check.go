package engine

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/enginelab/enginelab/heap"
)

// ErrInconsistent is wrapped by every disagreement Check finds between a
// table's rows and its indexes: a row without its entry, an entry without
// its row, an entry whose columns differ from its row's, a unique index
// holding the same values twice. The message names the table, the index
// and the key.
var ErrInconsistent = errors.New("engine: index and table disagree")

// Check verifies that every index of t agrees with t's rows, and the
// structure of every B+tree and of the heap. It is meant for tests and
// tools.
//
// What it checks, in this order:
//
//  1. Each B+tree's own invariants (btree.Tree.Check) and, in a heap
//     table, the heap's (heap.Heap.Check). Such an error is returned as
//     those packages give it (it matches btree.ErrCorruptTree, or a heap
//     or cache error), with the table and index named, and does not wrap
//     ErrInconsistent.
//  2. Every row, read in storage order (the clustered tree, or a heap
//     scan): it decodes and fits the schema; in a clustered table its
//     entry's key is its primary key; in a heap table the primary index
//     maps its primary key to its row pointer; and every secondary index
//     has exactly the entry the row implies (t.entryKey) with an empty
//     value (a live entry). A delete-marked clustered record (delmark.go)
//     decodes and has its key, but is no row: its entries may be marked
//     or already purged.
//  3. Conversely, every entry of every index other than the clustered
//     tree: it decodes, names a live row (by primary key or row pointer)
//     whose values give back exactly that entry, and a unique index holds
//     no two entries with the same non-NULL values. Each index has as many
//     live entries as the table has rows. In a clustered table an entry
//     may instead be delete-marked (its value 0x20): it must name a
//     clustered record, live or marked (purge removes the entries before
//     the record), whose values need not give it back (it belongs to an
//     older version of the row).
//
// Steps 2 and 3 together make each index a bijection with the rows. Check
// returns the first disagreement it meets, wrapping ErrInconsistent. A
// versioned heap table (Options.HeapVersions) is checked through its
// version chains instead (checkversions.go).
//
// Metering: Check charges tx's meter for every page it requests and for
// the B+trees' node visits (attributed to each index), so a meter that
// includes a Check still prices the pages it read. It counts no rows
// (RowsExamined, RowFetches and the like describe queries, and Check is
// not one). It costs a read of every index and, per secondary or heap
// primary entry, one more lookup: run it on test-sized tables.
//
// Check of a table that keeps no versions must not run concurrently with
// writes to t: it reads pages without row locks, so a concurrent change
// can look like a disagreement. Purge waits while it runs (it holds the
// purge mutex). A versioned heap table may be checked while transactions
// write it: its rows are judged by one snapshot, each page is read under
// its latch, and its vacuum waits for the check (checkversions.go).
func (t *TableHandle) Check(tx *Tx) error {
	if err := tx.check(t); err != nil {
		return err
	}
	t.db.undo.purgeMu.Lock()
	defer t.db.undo.purgeMu.Unlock()
	return t.checkLocked(tx)
}

func (t *TableHandle) checkLocked(tx *Tx) error {
	n := len(t.info.def.Columns)
	c := &checker{t: t, tx: tx, ent: make(Row, n)}
	if t.versioned() {
		// Vacuum waits for the whole check (checkversions.go).
		t.vac.mu.Lock()
		defer t.vac.mu.Unlock()
	}
	for _, ix := range t.ixs {
		b := tx.m.NodeVisitsTotal()
		_, err := ix.tree.Check(tx.m)
		tx.charge(ix, b)
		if err != nil {
			return fmt.Errorf("engine: check table %s: index %s: %w", t.info.def.Name, ix.name, err)
		}
	}
	if t.heap != nil {
		if err := t.heap.Check(tx.m); err != nil {
			return fmt.Errorf("engine: check table %s: heap: %w", t.info.def.Name, err)
		}
	}
	if t.versioned() {
		snap := *tx.snapOfView(tx.readView(true))
		c.snap = &snap
		if err := c.versionedChains(); err != nil {
			return err
		}
		for _, ix := range t.ixs[1:] {
			if err := c.versionedSecondary(ix); err != nil {
				return err
			}
		}
		return nil
	}
	var err error
	if t.org == Clustered {
		err = c.clusteredRows()
	} else {
		err = c.heapRows()
	}
	if err != nil {
		return err
	}
	if t.org != Clustered {
		if err := c.primaryEntries(); err != nil {
			return err
		}
	}
	for _, ix := range t.ixs[1:] {
		if err := c.secondaryEntries(ix); err != nil {
			return err
		}
	}
	return nil
}

// checker holds the state and buffers of one Check.
type checker struct {
	t    *TableHandle
	tx   *Tx
	rows int // rows found in storage

	row Row // the row being checked
	ent Row // the values decoded from an index entry

	snap *heap.Snapshot // a versioned table's check's snapshot

	pk, key, val, img, scratch []byte
}

// fail returns an ErrInconsistent error naming ix and a key.
func (c *checker) fail(ix *index, key string, format string, args ...any) error {
	return fmt.Errorf("%w: table %s: index %s: key (%s): "+format,
		append([]any{ErrInconsistent, c.t.info.def.Name, ix.name, key}, args...)...)
}

// describe renders the values of cols of row, as t.describeKey does but
// with long strings cut (an index on a 4 KiB string would otherwise put
// the whole string in the message).
func (c *checker) describe(cols []int, row Row) string {
	const maxShown = 40
	long := false
	for _, col := range cols {
		long = long || len(row[col].B) > maxShown
	}
	if !long {
		return c.t.describeKey(cols, row)
	}
	parts := make([]string, len(cols))
	for i, col := range cols {
		def := &c.t.info.def.Columns[col]
		v := row[col]
		if len(v.B) > maxShown {
			parts[i] = fmt.Sprintf("%s=%s…(%d bytes)", def.Name, Bytes(v.B[:maxShown]).Format(def.Type, def.Scale), len(v.B))
		} else {
			parts[i] = def.Name + "=" + v.Format(def.Type, def.Scale)
		}
	}
	return strings.Join(parts, ", ")
}

// rowKey describes row by its primary key.
func (c *checker) rowKey(row Row) string { return c.describe(c.t.info.pk, row) }

// entryDesc describes the entry of row in ix: its columns and then what
// identifies the row.
func (c *checker) entryDesc(ix *index, row Row, ptr heap.RowPtr) string {
	s := c.describe(ix.cols, row)
	if ix.primary {
		return s
	}
	if ix.carry == carryPtr {
		return s + "; row pointer " + ptr.String() + ", the row of primary key " + c.rowKey(row)
	}
	return s + "; primary key " + c.rowKey(row)
}

// step moves it with move, charging ix's node visits.
func (c *checker) step(ix *index, move func() bool) bool {
	b := c.tx.m.NodeVisitsTotal()
	ok := move()
	c.tx.charge(ix, b)
	return ok
}

// get looks key up in ix, charging its node visits.
func (c *checker) get(ix *index, key []byte) ([]byte, bool, error) {
	b := c.tx.m.NodeVisitsTotal()
	v, found, err := ix.tree.Get(c.tx.m, key, c.val)
	c.tx.charge(ix, b)
	if v != nil {
		c.val = v
	}
	return v, found, err
}

// decode decodes a stored row image into c.row and checks it against the
// schema; where names the image for a message.
func (c *checker) decode(ix *index, where func() string, img []byte) error {
	t := c.t
	row, err := decodeRow(img, t.info.def.Columns, c.row)
	if err != nil {
		return c.fail(ix, where(), "row image does not decode: %w", err)
	}
	c.row = row
	if err := t.info.checkRow(row); err != nil {
		return c.fail(ix, where(), "row does not fit the schema: %w", err)
	}
	return nil
}

// clusteredRows walks the clustered tree: each entry's key must be its
// row's primary key, and each row must have its secondary entries.
func (c *checker) clusteredRows() error {
	t, tx := c.t, c.tx
	prim := t.ixs[0]
	cols := t.info.def.Columns
	it := prim.tree.NewIter(tx.m, nil)
	defer it.Close()
	for ok := c.step(prim, it.First); ok; ok = c.step(prim, it.Next) {
		key := it.Key()
		where := func() string { return fmt.Sprintf("entry %x", key) }
		h, body, err := splitClustRec(it.Value())
		if err != nil {
			return c.fail(prim, where(), "%w", err)
		}
		if err := c.decode(prim, where, body); err != nil {
			return err
		}
		c.pk = appendKey(c.pk[:0], cols, t.info.pk, c.row)
		if !bytes.Equal(c.pk, key) {
			return c.fail(prim, where(), "holds a row whose primary key is (%s)", c.rowKey(c.row))
		}
		if h.deleted() {
			continue // no row; purge removes it
		}
		if err := c.secondaryOf(c.row, c.pk, heap.RowPtr{}); err != nil {
			return err
		}
		c.rows++
	}
	return it.Err()
}

// heapRows scans the heap: the primary index must map each row's primary
// key to its pointer, and each row must have its secondary entries.
func (c *checker) heapRows() error {
	t, tx := c.t, c.tx
	prim := t.ixs[0]
	cols := t.info.def.Columns
	s := t.heap.NewScan(tx.m)
	defer s.Close()
	for s.Next() {
		ptr := s.Ptr()
		if err := c.decode(prim, func() string { return "row at " + ptr.String() }, s.Row()); err != nil {
			return err
		}
		c.pk = appendKey(c.pk[:0], cols, t.info.pk, c.row)
		v, found, err := c.get(prim, c.pk)
		if err != nil {
			return err
		}
		if !found {
			return c.fail(prim, c.rowKey(c.row), "no entry for the row at %s", ptr)
		}
		p, err := heap.DecodeRowPtr(v)
		if err != nil {
			return c.fail(prim, c.rowKey(c.row), "entry value %x: %w", v, err)
		}
		if p != ptr {
			return c.fail(prim, c.rowKey(c.row), "entry points at %s, the row is at %s", p, ptr)
		}
		if err := c.secondaryOf(c.row, c.pk, ptr); err != nil {
			return err
		}
		c.rows++
	}
	return s.Err()
}

// secondaryOf checks that every secondary index has row's entry.
func (c *checker) secondaryOf(row Row, pk []byte, ptr heap.RowPtr) error {
	t := c.t
	for _, ix := range t.ixs[1:] {
		c.key = t.entryKey(c.key, ix, row, pk, ptr)
		v, found, err := c.get(ix, c.key)
		if err != nil {
			return err
		}
		if !found {
			return c.fail(ix, c.entryDesc(ix, row, ptr), "no entry for the row")
		}
		if len(v) != 0 {
			return c.fail(ix, c.entryDesc(ix, row, ptr), "entry has a %d-byte value, want none", len(v))
		}
	}
	return nil
}

// primaryEntries walks the primary index of a heap table: every entry must
// point at a live row with its primary key.
func (c *checker) primaryEntries() error {
	t, tx := c.t, c.tx
	prim := t.ixs[0]
	cols := t.info.def.Columns
	it := prim.tree.NewIter(tx.m, nil)
	defer it.Close()
	n := 0
	for ok := c.step(prim, it.First); ok; ok = c.step(prim, it.Next) {
		n++
		key := it.Key()
		desc := fmt.Sprintf("%x", key)
		clear(c.ent)
		rest, scratch, err := decodeKeyInto(key, cols, t.info.pk, c.ent, c.scratch[:0])
		c.scratch = scratch
		if err == nil && len(rest) != 0 {
			err = fmt.Errorf("%d bytes after the primary key", len(rest))
		}
		if err != nil {
			return c.fail(prim, desc, "entry key does not decode: %w", err)
		}
		desc = c.rowKey(c.ent)
		ptr, err := heap.DecodeRowPtr(it.Value())
		if err != nil {
			return c.fail(prim, desc, "entry value %x: %w", it.Value(), err)
		}
		c.img, err = t.heap.Fetch(tx.m, ptr, c.img)
		if errors.Is(err, heap.ErrRowNotFound) {
			return c.fail(prim, desc, "entry points at %s, where no row lives", ptr)
		} else if err != nil {
			return err
		}
		if err := c.decode(prim, func() string { return desc }, c.img); err != nil {
			return err
		}
		c.pk = appendKey(c.pk[:0], cols, t.info.pk, c.row)
		if !bytes.Equal(c.pk, key) {
			return c.fail(prim, desc, "entry points at %s, a row with primary key (%s)", ptr, c.rowKey(c.row))
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	if n != c.rows {
		return c.fail(prim, "*", "%d entries for %d rows", n, c.rows)
	}
	return nil
}

// secondaryEntries walks a secondary index: every entry must name a live
// row whose values give back the entry, and a unique index must not hold
// the same non-NULL values twice.
func (c *checker) secondaryEntries(ix *index) error {
	t, tx := c.t, c.tx
	prim := t.ixs[0]
	cols := t.info.def.Columns
	it := ix.tree.NewIter(tx.m, nil)
	defer it.Close()
	var prev []byte // the previous entry's column part, for a unique index
	n := 0
	for ok := c.step(ix, it.First); ok; ok = c.step(ix, it.Next) {
		key := it.Key()
		clear(c.ent)
		rest, scratch, err := decodeKeyInto(key, cols, ix.cols, c.ent, c.scratch[:0])
		c.scratch = scratch
		if err != nil {
			return c.fail(ix, fmt.Sprintf("%x", key), "entry key does not decode: %w", err)
		}
		colPart := key[:len(key)-len(rest)]
		desc := c.describe(ix.cols, c.ent)
		marked := t.org == Clustered && bytes.Equal(it.Value(), secDelMarked)
		if len(it.Value()) != 0 && !marked {
			return c.fail(ix, desc, "entry has a %d-byte value, want none", len(it.Value()))
		}
		// Find the row the entry names.
		var ptr heap.RowPtr
		if ix.carry == carryPtr {
			if ptr, err = heap.DecodeRowPtr(rest); err != nil {
				return c.fail(ix, desc, "entry's row pointer %x: %w", rest, err)
			}
			desc += "; row pointer " + ptr.String()
			c.img, err = t.heap.Fetch(tx.m, ptr, c.img)
			if errors.Is(err, heap.ErrRowNotFound) {
				return c.fail(ix, desc, "no row lives there")
			} else if err != nil {
				return err
			}
		} else {
			after, scratch, err := decodeKeyInto(rest, cols, t.info.pk, c.ent, c.scratch)
			c.scratch = scratch
			if err == nil && len(after) != 0 {
				err = fmt.Errorf("%d bytes after the primary key", len(after))
			}
			if err != nil {
				return c.fail(ix, fmt.Sprintf("%s; primary key %x", desc, rest), "entry key does not decode: %w", err)
			}
			desc += "; primary key " + c.rowKey(c.ent)
			v, found, err := c.get(prim, rest)
			if err != nil {
				return err
			}
			if !found {
				return c.fail(ix, desc, "no row has that primary key")
			}
			c.img = append(c.img[:0], v...)
			if t.org == Clustered {
				h, body, err := splitClustRec(v)
				if err != nil {
					return c.fail(prim, c.rowKey(c.ent), "%w", err)
				}
				if marked {
					continue // an older version's entry: its record is there
				}
				if h.deleted() {
					return c.fail(ix, desc, "live entry of a delete-marked record")
				}
				c.img = append(c.img[:0], body...)
			}
			if t.org == HeapPrimaryKey {
				if ptr, err = heap.DecodeRowPtr(v); err != nil {
					return c.fail(prim, c.rowKey(c.ent), "entry value %x: %w", v, err)
				}
				c.img, err = t.heap.Fetch(tx.m, ptr, c.img)
				if errors.Is(err, heap.ErrRowNotFound) {
					return c.fail(prim, c.rowKey(c.ent), "entry points at %s, where no row lives", ptr)
				} else if err != nil {
					return err
				}
			}
		}
		if err := c.decode(ix, func() string { return desc }, c.img); err != nil {
			return err
		}
		c.pk = appendKey(c.pk[:0], cols, t.info.pk, c.row)
		c.key = t.entryKey(c.key, ix, c.row, c.pk, ptr)
		if !bytes.Equal(c.key, key) {
			return c.fail(ix, desc, "the row it names has (%s)", c.entryDesc(ix, c.row, ptr))
		}
		n++
		if uniqueRepeat(ix, c.row, colPart, &prev) {
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

// uniqueRepeat reports whether an entry of a unique index ix, whose
// columns in row encode to colPart, repeats the entry before it (prev: the
// index is read in order, so a repeat is adjacent), and remembers colPart
// in prev. NULLs never repeat: a unique index may hold several. Always
// false for a non-unique index.
func uniqueRepeat(ix *index, row Row, colPart []byte, prev *[]byte) bool {
	if !ix.unique {
		return false
	}
	repeat := !anyNull(row, ix.cols) && bytes.Equal(*prev, colPart)
	*prev = append((*prev)[:0], colPart...)
	return repeat
}
