package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/stretchr/testify/require"
)

func customerTable() Table {
	return Table{
		Name: "customer",
		Columns: []Column{
			{Name: "c_w_id", Type: TypeInt},
			{Name: "c_d_id", Type: TypeInt},
			{Name: "c_id", Type: TypeInt},
			{Name: "c_first", Type: TypeVarchar, Length: 16},
			{Name: "c_last", Type: TypeVarchar, Length: 16},
			{Name: "c_balance", Type: TypeDecimal, Scale: 2},
			{Name: "c_data", Type: TypeVarchar, Length: 500, Nullable: true},
		},
		PrimaryKey: []string{"c_w_id", "c_d_id", "c_id"},
		Indexes: []Index{
			{Name: "idx_customer_name", Columns: []string{"c_w_id", "c_d_id", "c_last", "c_first"}},
		},
	}
}

func TestCatalogSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(&Options{Dir: dir, Options: cache.Options{PoolSize: 4 << 20}})
	require.NoError(t, err)
	for _, org := range []Org{Clustered, HeapRowPointer, HeapPrimaryKey} {
		def := customerTable()
		def.Name = "customer_" + org.String()
		def.Org = org
		_, err := db.CreateTable(def)
		require.NoError(t, err)
	}
	def := customerTable()
	_, err = db.CreateTable(def) // the database default: clustered
	require.NoError(t, err)
	require.NoError(t, db.Close())

	db, err = Open(&Options{Dir: dir, Options: cache.Options{PoolSize: 4 << 20}})
	require.NoError(t, err)
	defer db.Close()
	require.Equal(t, []string{"customer", "customer_clustered", "customer_heap-pk", "customer_heap-rowptr"}, db.Tables())
	tb, err := db.Table("customer_heap-rowptr")
	require.NoError(t, err)
	require.Equal(t, HeapRowPointer, tb.Org())
	want := customerTable()
	want.Name, want.Org = "customer_heap-rowptr", HeapRowPointer
	require.Equal(t, want, tb.Schema())
	tb, err = db.Table("customer")
	require.NoError(t, err)
	require.Equal(t, Clustered, tb.Org())

	// A new table after the reopen gets fresh spaces.
	def = customerTable()
	def.Name = "later"
	_, err = db.CreateTable(def)
	require.NoError(t, err)
	_, err = db.CreateTable(def)
	require.ErrorIs(t, err, ErrTableExists)
	_, err = db.Table("nope")
	require.ErrorIs(t, err, ErrUnknownTable)
}

func TestSchemaErrors(t *testing.T) {
	db, err := Open(&Options{Options: cache.Options{PoolSize: 4 << 20}})
	require.NoError(t, err)
	defer db.Close()
	for _, tc := range []struct {
		name   string
		change func(*Table)
		err    error
		says   []string
	}{
		{"unknown pk column", func(t *Table) { t.PrimaryKey = []string{"c_w_id", "nope"} }, ErrUnknownColumn, []string{"customer", "nope"}},
		{"unknown index column", func(t *Table) { t.Indexes[0].Columns = []string{"c_lats"} }, ErrUnknownColumn, []string{"idx_customer_name", "c_lats"}},
		{"duplicate index", func(t *Table) { t.Indexes = append(t.Indexes, t.Indexes[0]) }, ErrDuplicateIndex, []string{"idx_customer_name"}},
		{"nullable pk", func(t *Table) { t.PrimaryKey = []string{"c_data"} }, ErrNullablePrimaryKey, []string{"customer", "c_data"}},
		{"no pk", func(t *Table) { t.PrimaryKey = nil }, ErrNoPrimaryKey, []string{"customer"}},
		{"duplicate column", func(t *Table) { t.Columns = append(t.Columns, t.Columns[0]) }, ErrDuplicateColumn, []string{"c_w_id"}},
		{"string without length", func(t *Table) { t.Columns[3].Length = 0 }, ErrBadColumn, []string{"c_first", "length 0"}},
		{"bad scale", func(t *Table) { t.Columns[5].Scale = 19 }, ErrBadColumn, []string{"c_balance", "scale 19"}},
		{"bad type", func(t *Table) { t.Columns[0].Type = 99 }, ErrBadColumn, []string{"c_w_id", "type(99)"}},
		{"bad org", func(t *Table) { t.Org = 9 }, ErrSchema, []string{"org(9)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def := customerTable()
			tc.change(&def)
			_, err := db.CreateTable(def)
			require.ErrorIs(t, err, tc.err)
			require.ErrorIs(t, err, ErrSchema)
			for _, s := range tc.says {
				require.Contains(t, err.Error(), s)
			}
			require.Empty(t, db.Tables(), "a rejected table was created")
		})
	}
}

func TestValueErrors(t *testing.T) {
	tb := customerTable()
	info, err := tb.validate()
	require.NoError(t, err)
	good := Row{Int(1), Int(2), Int(3), Str("ALICE"), Str("BARBARBAR"), Dec(-1000), Null}
	require.NoError(t, info.checkRow(good))
	for _, tc := range []struct {
		name string
		col  int
		v    Value
		err  error
		says []string
	}{
		{"too long", 4, Str("ABCDEFGHIJKLMNOPQ"), ErrValueTooLong, []string{"customer", "c_last", "ABCDEFGHIJKLMNOPQ", "17 bytes"}},
		{"string in int column", 0, Str("x"), ErrWrongType, []string{"c_w_id", `"x"`}},
		{"int in string column", 3, Int(7), ErrWrongType, []string{"c_first", "integer 7"}},
		{"null in not null", 2, Null, ErrNotNullable, []string{"customer", "c_id"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row := append(Row(nil), good...)
			row[tc.col] = tc.v
			err := info.checkRow(row)
			require.ErrorIs(t, err, tc.err)
			require.ErrorIs(t, err, ErrBadValue)
			for _, s := range tc.says {
				require.Contains(t, err.Error(), s)
			}
		})
	}
	require.ErrorIs(t, info.checkRow(good[:3]), ErrWrongArity)
}

func TestOptionsValidation(t *testing.T) {
	for _, o := range []Options{
		{PageSize: 1000},
		{Options: cache.Options{PoolSize: -1}},
		{Options: cache.Options{PoolSize: 1 << 10}},
		{Options: cache.Options{Policy: "fifo"}},
		{DefaultOrg: 7},
		{HeapUpdate: 3},
		{LogSize: -1},
		{LogSize: redo.MinCapacity - 1},
	} {
		_, err := Open(&o)
		require.ErrorIs(t, err, ErrInvalidOptions, "%+v", o)
	}
	// Refused before anything is created.
	dir := filepath.Join(t.TempDir(), "db")
	_, err := Open(&Options{Dir: dir, LogSize: 1 << 10})
	require.ErrorIs(t, err, ErrInvalidOptions)
	require.NoDirExists(t, dir)
}

// TestLogSize: the redo log lives in the database directory's redo/, in
// segments of an eighth of LogSize, and the default checkpoint interval
// keeps within it.
func TestLogSize(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(&Options{Dir: dir, LogSize: 4 << 20, Options: cache.Options{PoolSize: 4 << 20}})
	require.NoError(t, err)
	require.EqualValues(t, 3<<20, db.opts.CheckpointBytes, "three quarters of the log")
	require.EqualValues(t, 4<<20, db.log.Capacity())
	tb, err := db.CreateTable(metaTable(Clustered))
	require.NoError(t, err)
	tx := db.Begin(nil)
	require.NoError(t, tx.Insert(tb, Row{Str("a"), Int(1), Dec(1), Null, Int(0), Null}))
	require.NoError(t, tx.Commit())
	require.NoError(t, db.Close())
	ents, err := os.ReadDir(filepath.Join(dir, "redo"))
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
		if e.Name() == "checkpoint" {
			continue
		}
		fi, err := e.Info()
		require.NoError(t, err)
		require.EqualValues(t, 512<<10, fi.Size(), "segment %s: an eighth of LogSize, zero-filled", e.Name())
	}
	require.Equal(t, []string{"0000000000000000", "checkpoint"}, names)
}

func TestValueFormat(t *testing.T) {
	require.Equal(t, "-12.34", Dec(-1234).Format(TypeDecimal, 2))
	require.Equal(t, "0.05", Dec(5).Format(TypeDecimal, 2))
	require.Equal(t, "NULL", Null.Format(TypeInt, 0))
	require.Equal(t, `"a"`, Str("a").Format(TypeVarchar, 0))
	require.Equal(t, "42", Int(42).Format(TypeInt, 0))
	org, err := ParseOrg("heap-pk")
	require.NoError(t, err)
	require.Equal(t, HeapPrimaryKey, org)
	_, err = ParseOrg("default")
	require.ErrorIs(t, err, ErrSchema)
}

// TestDataSurvivesReopen: rows, their indexes and the catalog that finds
// them survive a clean close, in every organization.
func TestDataSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(&Options{Dir: dir, Options: cache.Options{PoolSize: 4 << 20}})
	require.NoError(t, err)
	for _, org := range []Org{Clustered, HeapRowPointer, HeapPrimaryKey} {
		loadCustomers(t, db, org)
	}
	require.NoError(t, db.Close())

	db, err = Open(&Options{Dir: dir, Options: cache.Options{PoolSize: 4 << 20}})
	require.NoError(t, err)
	defer db.Close()
	for _, org := range []Org{Clustered, HeapRowPointer, HeapPrimaryKey} {
		tb, err := db.Table("customer_" + org.String())
		require.NoError(t, err)
		tx := db.Begin(nil)
		row, found, err := tx.Get(tb, []Value{Int(1), Int(2), Int(42)}, nil)
		require.NoError(t, err)
		require.True(t, found)
		require.Equal(t, "FIRST042", string(row[3].B))
		key := []Value{Int(1), Int(1), Str("BARBARBAR")}
		n, _, err := tx.Count(tb, CountOptions{ScanOptions: ScanOptions{Index: "idx_customer_name", Lower: key, Upper: key}, Column: "c_first"})
		require.NoError(t, err)
		require.EqualValues(t, 30, n)
		require.NoError(t, tb.Check(tx))
		require.NoError(t, tx.Commit())
	}
}
