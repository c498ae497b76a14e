package engine

import (
	"fmt"
	"strings"

	"github.com/enginelab/enginelab/btree"
	"github.com/enginelab/enginelab/heap"
)

// TableHandle is an open table: its declaration and its storage. It is
// safe for concurrent use.
type TableHandle struct {
	db   *DB
	info *tableInfo
	org  Org
	heap *heap.Heap // the rows of a heap table; nil when clustered
	// ixs[0] is the primary index (the clustered tree, or the primary-key
	// index of a heap table); then the secondary indexes in declaration
	// order.
	ixs   []*index
	entry catalogEntry
	// vac is a versioned table's vacuum bookkeeping (vacuum.go); nil
	// for the others.
	vac *vacState
}

// openTable opens the storage a catalog entry names.
func (db *DB) openTable(e *catalogEntry) (*TableHandle, error) {
	def := e.Table
	info, err := def.validate()
	if err != nil {
		return nil, fmt.Errorf("engine: catalog entry of table %s: %w", def.Name, err)
	}
	t := &TableHandle{db: db, info: info, org: e.Org, entry: *e}
	ncol := len(def.Columns)
	pt, err := btree.Open(nil, db.pool, e.Primary)
	if err != nil {
		return nil, fmt.Errorf("engine: table %s: open primary index: %w", def.Name, err)
	}
	prim := &index{id: db.newIndexID(def.Name + ".PRIMARY"), name: "PRIMARY", tree: pt, cols: info.pk,
		unique: true, primary: true, carry: carryPtrVal, has: make([]bool, ncol)}
	for _, c := range info.pk {
		prim.has[c] = true
	}
	if e.Org == Clustered {
		prim.carry = carryRow
		for c := range prim.has {
			prim.has[c] = true
		}
	}
	t.ixs = append(t.ixs, prim)
	if e.Heap != 0 {
		if t.heap, err = heap.Open(nil, db.pool, e.Heap); err != nil {
			return nil, fmt.Errorf("engine: table %s: open heap: %w", def.Name, err)
		}
		if err := t.heap.SetFillFactor(t.FillFactor()); err != nil {
			return nil, fmt.Errorf("engine: catalog entry of table %s: %w", def.Name, err)
		}
		if e.Versioned {
			t.vac = new(vacState)
		}
	}
	if len(e.Indexes) != len(info.secondary) {
		return nil, fmt.Errorf("engine: catalog entry of table %s names %d index spaces for %d indexes",
			def.Name, len(e.Indexes), len(info.secondary))
	}
	for i, s := range e.Indexes {
		sec := info.secondary[i]
		tree, err := btree.Open(nil, db.pool, s)
		if err != nil {
			return nil, fmt.Errorf("engine: table %s: open index %s: %w", def.Name, sec.def.Name, err)
		}
		ix := &index{id: db.newIndexID(def.Name + "." + sec.def.Name), name: sec.def.Name, tree: tree,
			cols: sec.cols, unique: sec.def.Unique, carry: carryPK, has: make([]bool, ncol)}
		for _, c := range sec.cols {
			ix.has[c] = true
		}
		if e.Org == HeapRowPointer {
			ix.carry = carryPtr
		} else {
			for _, c := range info.pk {
				ix.has[c] = true
			}
		}
		t.ixs = append(t.ixs, ix)
	}
	db.registerSpaces(t)
	return t, nil
}

// index returns the index called name ("" or "PRIMARY": the primary one).
func (t *TableHandle) index(name string) (*index, error) {
	if name == "" {
		return t.ixs[0], nil
	}
	for _, ix := range t.ixs {
		if ix.name == name {
			return ix, nil
		}
	}
	// The message gets a copy of name, so that name does not escape: a
	// caller's ScanOptions, which holds it, can then stay on its stack.
	return nil, fmt.Errorf("%w: table %s has no index %q", ErrUnknownIndex, t.info.def.Name, strings.Clone(name))
}

// Name returns the table's name.
func (t *TableHandle) Name() string { return t.info.def.Name }

// FillFactor returns the percentage of a heap page that inserts fill
// (Table.FillFactor, DefaultFillFactor when it was left 0).
func (t *TableHandle) FillFactor() int {
	if ff := t.info.def.FillFactor; ff != 0 {
		return ff
	}
	return DefaultFillFactor
}

// Org returns the table's organization.
func (t *TableHandle) Org() Org { return t.org }

// Versioned reports whether the table keeps PostgreSQL's row versions
// (Options.HeapVersions when it was created): a stored table keeps the
// choice it was created with, whatever the Options it is opened with.
func (t *TableHandle) Versioned() bool { return t.versioned() }

// DataPages returns how many pages the space holding the table's rows has
// in use (allocated and not freed, its meta page and a heap's free-space
// map included): the clustered B+tree's space for a Clustered table, the
// heap's otherwise; the indexes of a heap table are not counted. It is
// PostgreSQL's relpages for a table, what parallel pg_dump orders its
// tables by, largest first; unlike relpages it is exact, read from the
// space's meta page (one page read, charged to no meter).
func (t *TableHandle) DataPages() (int64, error) {
	space := t.ixs[0].tree.Space()
	if t.heap != nil {
		space = t.heap.Space()
	}
	info, err := t.db.pool.Space(nil, space)
	if err != nil {
		return 0, fmt.Errorf("engine: table %s: %w", t.Name(), err)
	}
	return int64(info.HighWater) - int64(info.FreePages), nil
}

// Schema returns a copy of the table's declaration (its Org resolved).
func (t *TableHandle) Schema() Table {
	d := cloneTable(*t.info.def)
	d.Org = t.org
	return d
}
