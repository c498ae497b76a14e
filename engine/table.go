package engine

import (
	"fmt"

	"github.com/enginelab/enginelab/btree"
	"github.com/enginelab/enginelab/heap"
)

// TableHandle is an open table: its declaration and its storage. It is
// safe for concurrent use.
type TableHandle struct {
	db      *DB
	info    *tableInfo
	org     Org
	primary *btree.Tree   // the clustered tree, or the primary-key index of a heap table
	heap    *heap.Heap    // the rows of a heap table; nil when clustered
	indexes []*btree.Tree // secondary indexes, in declaration order
	entry   catalogEntry
}

// openTable opens the storage a catalog entry names.
func (db *DB) openTable(e *catalogEntry) (*TableHandle, error) {
	def := e.Table
	info, err := def.validate()
	if err != nil {
		return nil, fmt.Errorf("engine: catalog entry of table %s: %w", def.Name, err)
	}
	t := &TableHandle{db: db, info: info, org: e.Org, entry: *e}
	if t.primary, err = btree.Open(nil, db.pool, e.Primary); err != nil {
		return nil, fmt.Errorf("engine: table %s: open primary index: %w", def.Name, err)
	}
	if e.Heap != 0 {
		if t.heap, err = heap.Open(nil, db.pool, e.Heap); err != nil {
			return nil, fmt.Errorf("engine: table %s: open heap: %w", def.Name, err)
		}
	}
	if len(e.Indexes) != len(info.secondary) {
		return nil, fmt.Errorf("engine: catalog entry of table %s names %d index spaces for %d indexes",
			def.Name, len(e.Indexes), len(info.secondary))
	}
	for i, s := range e.Indexes {
		ix, err := btree.Open(nil, db.pool, s)
		if err != nil {
			return nil, fmt.Errorf("engine: table %s: open index %s: %w", def.Name, info.secondary[i].def.Name, err)
		}
		t.indexes = append(t.indexes, ix)
	}
	return t, nil
}

// Name returns the table's name.
func (t *TableHandle) Name() string { return t.info.def.Name }

// Org returns the table's organization.
func (t *TableHandle) Org() Org { return t.org }

// Schema returns a copy of the table's declaration (its Org resolved).
func (t *TableHandle) Schema() Table {
	d := cloneTable(*t.info.def)
	d.Org = t.org
	return d
}
