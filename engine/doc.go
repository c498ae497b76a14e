// Package engine is enginelab's storage engine: tables with typed columns
// on B+trees and heaps, in one of three organizations, with every operation
// metered so that a user can count what it cost.
//
// # Basics
//
//	db, _ := engine.Open(&engine.Options{})            // in memory; Dir for durable
//	t, _ := db.CreateTable(engine.Table{
//		Name:       "customer",
//		Columns:    []engine.Column{{Name: "w", Type: engine.TypeInt}, ...},
//		PrimaryKey: []string{"w", "d", "id"},
//		Indexes:    []engine.Index{{Name: "by_name", Columns: []string{"w", "d", "last", "first"}}},
//		Org:        engine.HeapRowPointer,             // or Clustered (the default), HeapPrimaryKey
//	})
//	var m engine.Meter
//	tx := db.Begin(&m)
//	_ = tx.Insert(t, engine.Row{engine.Int(1), ...})
//	row, found, _ := tx.Get(t, []engine.Value{engine.Int(1), ...}, nil)
//	_ = tx.Update(t, pk, []engine.Set{{Column: "balance", Value: engine.Dec(1250)}})
//	n, path, _ := tx.Count(t, engine.CountOptions{ScanOptions: ..., Column: "id"})
//	_ = tx.Commit()
//
// The core types: DB (a database: store, buffer pool, catalog), Table (a
// declaration), TableHandle (an open table), Tx (a transaction, which
// carries a Meter), Cursor (an index scan) and Meter.
//
// # Values
//
// Columns are 64-bit integers, fixed-point decimals (an integer count of
// 10^-Scale units: TPC-C money is Scale 2), strings with a declared maximum
// length in bytes (char and varchar; no padding), and timestamps
// (microseconds, UTC). A column may allow NULL; primary-key columns may
// not. A Value holds any of them; the column gives its type, so an integer,
// a decimal and a timestamp are all an int64 in the column's unit and the
// engine cannot tell Dec(1234) given to an int column from Int(1234): it
// checks strings against integers, lengths and NULLs. Values that do
// not fit their column are errors matching ErrBadValue that name the
// table, the column and the value; declarations that do not make sense
// are errors matching ErrSchema. Either way nothing changes.
//
// # Organizations
//
// Each table has one of three organizations (Options.DefaultOrg for those
// that name none):
//
//   - Clustered (InnoDB): rows live in the primary-key B+tree. A secondary
//     entry is (secondary columns, primary key); a lookup through it goes
//     secondary → primary tree.
//   - HeapRowPointer (PostgreSQL, openGauss): rows live in a heap. The
//     primary-key index and every secondary map their key to a row
//     pointer. Options.HeapUpdate chooses between updating rows in place
//     when they fit (indexes whose columns did not change are not touched:
//     Ustore, or HOT) and writing every update as a new row version with a
//     new entry in every index (PostgreSQL without HOT; the old entries are
//     removed at once, an idealized vacuum). A row that moves updates every
//     index either way.
//   - HeapPrimaryKey: rows in a heap; the primary-key index maps to the row
//     pointer and secondaries carry the primary key (secondary → primary
//     index → heap). A row that moves touches only the primary index.
//
// # Access paths and counting
//
// A scan names an index, a prefix bound at each end (inclusive, exclusive
// or none), a direction, a limit and the columns it wants. It is index-only
// exactly when the index entries hold every wanted column: the primary-key
// columns are in every secondary entry of Clustered and HeapPrimaryKey
// tables, and in none of HeapRowPointer's. Otherwise each match costs a row
// fetch, counted in Meter.RowFetches with its path. Cursor.Path says which
// path a scan took. An index-only scan of a HeapRowPointer table is
// PostgreSQL's best case, every page all-visible: there is no visibility
// map here to consult.
//
// Count counts an index range: count(*) never fetches a row; count(col)
// must read col, from the entry if it holds col, else by fetching the row.
// Options.CountRewrite counts count(col) of a NOT NULL column as count(*),
// the fix behind this project: see the package example.
//
// # Metering
//
// Every operation charges its transaction's Meter: the page-level counters
// of cache.Meter (page requests by kind, hits, misses, store I/O, B+tree
// node visits by depth, heap fetches), plus row fetches by path, rows
// examined, returned and decoded, and index entries written and deleted,
// also split by index (Meter.Index, named by DB.IndexName). A cost model
// prices these counts and nothing else.
//
// # Caveats
//
// Transactions lock rows (strict two-phase, keyed by primary key: Get
// shared, Insert, Update and Delete exclusive), find deadlocks and time
// lock waits out (ErrDeadlock, ErrLockTimeout: the transaction is then
// already rolled back), and Rollback takes changes back from an in-memory
// undo list. Cursors take no row locks yet, there are no gap locks, and
// there is no redo log or recovery yet: a clean Close keeps everything, a
// crash may not. Primary-key columns cannot be updated (delete and insert
// instead). Unique secondary indexes are checked before a write without a
// lock on the index key, so two concurrent inserts can both pass the check.
package engine
