package engine

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/heap"
)

var allOrgs = []Org{Clustered, HeapRowPointer, HeapPrimaryKey}

// checkTable is customerTable with a unique index on c_phone (nullable), so
// that Check's uniqueness rule has something to check.
func checkTable(org Org) Table {
	def := customerTable()
	def.Name = "check_" + org.String()
	def.Org = org
	def.Columns = append(def.Columns, Column{Name: "c_phone", Type: TypeInt, Nullable: true})
	def.Indexes = append(def.Indexes, Index{Name: "idx_customer_phone", Columns: []string{"c_phone"}, Unique: true})
	return def
}

// loadCheckTable creates checkTable(org) and fills it through the API:
// 200 inserts, then updates of indexed and non-indexed columns (some of
// them growing rows so that heap rows move) and deletes.
func loadCheckTable(t *testing.T, db *DB, org Org) *TableHandle {
	t.Helper()
	tb, err := db.CreateTable(checkTable(org))
	require.NoError(t, err)
	tx := db.Begin(nil)
	for id := int64(1); id <= 200; id++ {
		phone := Int(5550000 + id)
		if id%7 == 0 {
			phone = Null
		}
		row := Row{Int(1), Int(1 + id%3), Int(id), Str(fmt.Sprintf("F%03d", id%17)),
			Str(fmt.Sprintf("LAST%02d", id%11)), Dec(id * 100), Str("d"), phone}
		require.NoError(t, tx.Insert(tb, row))
	}
	for id := int64(1); id <= 200; id += 3 {
		pk := []Value{Int(1), Int(1 + id%3), Int(id)}
		switch id % 4 {
		case 0:
			require.NoError(t, tx.Update(tb, pk, []Set{{"c_last", Str("RENAMED")}}))
		case 1:
			require.NoError(t, tx.Update(tb, pk, []Set{{"c_data", Str(string(make([]byte, 300)))}}))
		case 2:
			require.NoError(t, tx.Update(tb, pk, []Set{{"c_phone", Int(9990000 + id)}, {"c_balance", Dec(1)}}))
		default:
			require.NoError(t, tx.Delete(tb, pk))
		}
	}
	require.NoError(t, tx.Commit())
	return tb
}

func TestCheckPassesOnTablesBuiltThroughTheAPI(t *testing.T) {
	for _, mode := range []HeapUpdate{InPlace, NewVersion} {
		db, err := Open(&Options{HeapVersions: HeapVersionsOff, PageSize: 4096, Options: cache.Options{PoolSize: 64 * 4096}, HeapUpdate: mode})
		require.NoError(t, err)
		for _, org := range allOrgs {
			t.Run(fmt.Sprintf("%s/update=%d", org, mode), func(t *testing.T) {
				tb := loadCheckTable(t, db, org)
				var m Meter
				tx := db.Begin(&m)
				require.NoError(t, tb.Check(tx))
				// Check charges pages and node visits, and no rows.
				require.Positive(t, m.PageRequestsTotal(), m.String())
				for _, ix := range tb.ixs {
					require.Positive(t, m.Index[ix.id].NodeVisits, "index %s: %s", ix.name, m.String())
				}
				require.Zero(t, m.RowsExamined)
				require.Zero(t, m.RowFetches)
				require.NoError(t, tx.Commit())
				require.ErrorIs(t, tb.Check(tx), ErrTxDone)
			})
		}
		// An empty table is consistent too.
		tb, err := db.CreateTable(Table{Name: "empty", Columns: []Column{{Name: "a", Type: TypeInt}},
			PrimaryKey: []string{"a"}, Indexes: []Index{{Name: "ia", Columns: []string{"a"}}}, Org: HeapRowPointer})
		require.NoError(t, err)
		require.NoError(t, tb.Check(db.Begin(nil)))
		require.NoError(t, db.Close())
	}
}

// rowOf returns the row with primary key (1, d, id), its encoded primary
// key and, in a heap table, its row pointer.
func rowOf(t *testing.T, db *DB, tb *TableHandle, d, id int64) (Row, []byte, heap.RowPtr) {
	t.Helper()
	pk := []Value{Int(1), Int(d), Int(id)}
	tx := db.Begin(nil)
	row, found, err := tx.Get(tb, pk, nil)
	require.NoError(t, err)
	require.True(t, found)
	row = cloneRow(row)
	require.NoError(t, tx.Commit())
	key, err := tb.pkKey(nil, pk)
	require.NoError(t, err)
	var ptr heap.RowPtr
	if tb.org != Clustered {
		v, found, err := tb.ixs[0].tree.Get(nil, key, nil)
		require.NoError(t, err)
		require.True(t, found)
		ptr, err = heap.DecodeRowPtr(v)
		require.NoError(t, err)
	}
	return row, key, ptr
}

func cloneRow(r Row) Row {
	c := make(Row, len(r))
	for i, v := range r {
		if v.B != nil {
			v.B = append([]byte{}, v.B...)
		}
		c[i] = v
	}
	return c
}

func TestCheckCatchesBrokenIndexes(t *testing.T) {
	const nameIx, phoneIx = 1, 2 // positions in TableHandle.ixs
	for _, tc := range []struct {
		name   string
		orgs   []Org // nil: all three
		damage func(t *testing.T, db *DB, tb *TableHandle)
		says   []string
	}{
		{
			name: "stray secondary entry for a missing row",
			damage: func(t *testing.T, db *DB, tb *TableHandle) {
				row, _, ptr := rowOf(t, db, tb, 2, 1)
				row[2] = Int(999) // no such customer
				pk := appendKey(nil, tb.info.def.Columns, tb.info.pk, row)
				if tb.org == HeapRowPointer {
					ptr.Slot += 500 // no such slot
				}
				ix := tb.ixs[nameIx]
				require.NoError(t, ix.tree.Insert(nil, tb.entryKey(nil, ix, row, pk, ptr), nil))
			},
			says: []string{"idx_customer_name", `c_last="LAST01"`},
		},
		{
			name: "stray secondary entry with other values for a live row",
			damage: func(t *testing.T, db *DB, tb *TableHandle) {
				row, pk, ptr := rowOf(t, db, tb, 2, 1)
				row[4] = Str("ZZZ")
				ix := tb.ixs[nameIx]
				require.NoError(t, ix.tree.Insert(nil, tb.entryKey(nil, ix, row, pk, ptr), nil))
			},
			says: []string{"idx_customer_name", `c_last="ZZZ"`},
		},
		{
			name: "missing secondary entry",
			damage: func(t *testing.T, db *DB, tb *TableHandle) {
				row, pk, ptr := rowOf(t, db, tb, 2, 1)
				ix := tb.ixs[nameIx]
				require.NoError(t, ix.tree.Delete(nil, tb.entryKey(nil, ix, row, pk, ptr)))
			},
			says: []string{"idx_customer_name", `c_last="LAST01"`, "c_id=1", "no entry"},
		},
		{
			name: "secondary entry with stale values",
			damage: func(t *testing.T, db *DB, tb *TableHandle) {
				row, pk, ptr := rowOf(t, db, tb, 2, 1)
				ix := tb.ixs[phoneIx]
				require.NoError(t, ix.tree.Delete(nil, tb.entryKey(nil, ix, row, pk, ptr)))
				row[7] = Int(1)
				require.NoError(t, ix.tree.Insert(nil, tb.entryKey(nil, ix, row, pk, ptr), nil))
			},
			says: []string{"idx_customer_phone", "c_phone="},
		},
		{
			name: "secondary entry with a value",
			damage: func(t *testing.T, db *DB, tb *TableHandle) {
				row, pk, ptr := rowOf(t, db, tb, 2, 1)
				ix := tb.ixs[nameIx]
				require.NoError(t, ix.tree.Update(nil, tb.entryKey(nil, ix, row, pk, ptr), []byte("x")))
			},
			says: []string{"idx_customer_name", "1-byte value"},
		},
		{
			name: "unique index holding a value twice",
			damage: func(t *testing.T, db *DB, tb *TableHandle) {
				// An update through the API with the index briefly not
				// unique: every entry is right, the uniqueness is not.
				tb.ixs[phoneIx].unique = false
				defer func() { tb.ixs[phoneIx].unique = true }()
				require.NoError(t, db.Begin(nil).Update(tb, []Value{Int(1), Int(2), Int(1)},
					[]Set{{"c_phone", Int(5550102)}})) // customer (1, 1, 2)'s
			},
			says: []string{"idx_customer_phone", "c_phone=5550102", "twice"},
		},
		{
			name: "missing primary index entry",
			orgs: []Org{HeapRowPointer, HeapPrimaryKey},
			damage: func(t *testing.T, db *DB, tb *TableHandle) {
				_, pk, _ := rowOf(t, db, tb, 2, 1)
				require.NoError(t, tb.ixs[0].tree.Delete(nil, pk))
			},
			says: []string{"PRIMARY", "c_id=1", "no entry"},
		},
		{
			name: "primary index entry pointing at another row",
			orgs: []Org{HeapRowPointer, HeapPrimaryKey},
			damage: func(t *testing.T, db *DB, tb *TableHandle) {
				_, pk, _ := rowOf(t, db, tb, 2, 1)
				_, _, other := rowOf(t, db, tb, 3, 2)
				p := other.Encode()
				require.NoError(t, tb.ixs[0].tree.Update(nil, pk, p[:]))
			},
			says: []string{"PRIMARY", "c_id=1", "points at"},
		},
		{
			name: "stray primary index entry",
			orgs: []Org{HeapRowPointer, HeapPrimaryKey},
			damage: func(t *testing.T, db *DB, tb *TableHandle) {
				row, _, ptr := rowOf(t, db, tb, 2, 1)
				row[2] = Int(999)
				pk := appendKey(nil, tb.info.def.Columns, tb.info.pk, row)
				p := ptr.Encode()
				require.NoError(t, tb.ixs[0].tree.Insert(nil, pk, p[:]))
			},
			says: []string{"PRIMARY", "c_id=999"},
		},
		{
			name: "clustered entry under another key",
			orgs: []Org{Clustered},
			damage: func(t *testing.T, db *DB, tb *TableHandle) {
				row, _, _ := rowOf(t, db, tb, 2, 1)
				row[2] = Int(999)
				pk := appendKey(nil, tb.info.def.Columns, tb.info.pk, row)
				row[2] = Int(1000)
				require.NoError(t, tb.ixs[0].tree.Insert(nil, pk, appendClustRec(nil, clustHdr{}, appendRow(nil, tb.info.def.Columns, row))))
			},
			says: []string{"PRIMARY", "c_id=1000"},
		},
	} {
		orgs := tc.orgs
		if orgs == nil {
			orgs = allOrgs
		}
		for _, org := range orgs {
			t.Run(tc.name+"/"+org.String(), func(t *testing.T) {
				db, err := Open(&Options{HeapVersions: HeapVersionsOff, PageSize: 4096, Options: cache.Options{PoolSize: 64 * 4096}})
				require.NoError(t, err)
				defer db.Close()
				tb, err := db.CreateTable(checkTable(org))
				require.NoError(t, err)
				tx := db.Begin(nil)
				for d := int64(1); d <= 3; d++ {
					for id := int64(1); id <= 40; id++ {
						row := Row{Int(1), Int(d), Int(id), Str("F"), Str(fmt.Sprintf("LAST%02d", id)),
							Dec(0), Null, Int(5550000 + 100*d + id)}
						require.NoError(t, tx.Insert(tb, row))
					}
				}
				require.NoError(t, tb.Check(tx))
				require.NoError(t, tx.Commit())
				tc.damage(t, db, tb)
				err = tb.Check(db.Begin(nil))
				require.ErrorIs(t, err, ErrInconsistent)
				require.Contains(t, err.Error(), tb.Name())
				for _, s := range tc.says {
					require.Contains(t, err.Error(), s)
				}
				t.Log(err)
			})
		}
	}
}

// A stored row that does not decode is a disagreement too, and says why.
func TestCheckReportsCorruptRows(t *testing.T) {
	for _, org := range allOrgs {
		t.Run(org.String(), func(t *testing.T) {
			db, err := Open(&Options{HeapVersions: HeapVersionsOff, PageSize: 4096, Options: cache.Options{PoolSize: 64 * 4096}})
			require.NoError(t, err)
			defer db.Close()
			tb := loadCheckTable(t, db, org)
			_, pk, ptr := rowOf(t, db, tb, 2, 1)
			bad := []byte{rowFormatVersion, 99}
			if org == Clustered {
				require.NoError(t, tb.ixs[0].tree.Update(nil, pk, bad))
			} else {
				_, err := tb.heap.Update(nil, ptr, bad)
				require.NoError(t, err)
			}
			err = tb.Check(db.Begin(nil))
			require.ErrorIs(t, err, ErrInconsistent)
			require.ErrorIs(t, err, ErrCorruptRow)
			t.Log(err)
		})
	}
}

// A write that fails because an index entry would be too large (a key
// escapes every 0x00 byte, so an entry can outgrow its row) changes
// nothing: Check finds every index in agreement afterwards.
func TestCheckAfterRefusedWrites(t *testing.T) {
	for _, org := range allOrgs {
		t.Run(org.String(), func(t *testing.T) {
			db, err := Open(&Options{HeapVersions: HeapVersionsOff, PageSize: 4096, Options: cache.Options{PoolSize: 64 * 4096}})
			require.NoError(t, err)
			defer db.Close()
			def := checkTable(org)
			def.Columns[6].Length = 2000 // c_data
			def.Indexes = append(def.Indexes, Index{Name: "idx_data", Columns: []string{"c_data"}})
			tb, err := db.CreateTable(def)
			require.NoError(t, err)
			tx := db.Begin(nil)
			row := Row{Int(1), Int(1), Int(1), Str("F"), Str("L"), Dec(0), Str("d"), Int(1)}
			require.NoError(t, tx.Insert(tb, row))
			zeros := Str(string(make([]byte, 600))) // a 600-byte row value, a 1,200-byte key
			row[2], row[6] = Int(2), zeros
			require.Error(t, tx.Insert(tb, row))
			require.NoError(t, tb.Check(tx))
			require.Error(t, tx.Update(tb, []Value{Int(1), Int(1), Int(1)}, []Set{{"c_data", zeros}}))
			require.NoError(t, tb.Check(tx))
			_, found, err := tx.Get(tb, []Value{Int(1), Int(1), Int(2)}, nil)
			require.NoError(t, err)
			require.False(t, found)
		})
	}
}
