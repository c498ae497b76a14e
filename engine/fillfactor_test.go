package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/heap"
)

// ffTable has fixed-size rows: ids 1000 to 1099 and their v and w values
// (1000 to 8191) are two-byte varints, pad a 200-byte char.
func ffTable(org Org, ff int) Table {
	return Table{
		Name: "ff",
		Columns: []Column{{Name: "id", Type: TypeInt}, {Name: "v", Type: TypeInt}, {Name: "w", Type: TypeInt},
			{Name: "pad", Type: TypeChar, Length: 200}},
		PrimaryKey: []string{"id"},
		Indexes:    []Index{{Name: "by_v", Columns: []string{"v"}}},
		Org:        org,
		FillFactor: ff,
	}
}

func ffRow(id int64) Row {
	return Row{Int(id), Int(id + 1000), Int(id + 2000), Str(strings.Repeat("p", 200))}
}

// ffPageRows inserts rows 1000 to 1099 and returns how many landed on
// the first row's heap page.
func ffPageRows(t *testing.T, db *DB, tb *TableHandle) int {
	t.Helper()
	tx := db.Begin(nil)
	for id := int64(1000); id < 1100; id++ {
		require.NoError(t, tx.Insert(tb, ffRow(id)))
	}
	require.NoError(t, tx.Commit())
	tx = db.Begin(nil)
	defer func() { require.NoError(t, tx.Commit()) }()
	first := uint32(0)
	n := 0
	for id := int64(1000); id < 1100; id++ {
		_, ptr, found, err := tx.lookup(tb, mustKey(t, tb, id), false)
		require.NoError(t, err)
		require.True(t, found)
		if first == 0 {
			first = ptr.Page
		}
		if ptr.Page == first {
			n++
		}
	}
	return n
}

// TestFillFactorRowsPerPage checks the rows a 16 KiB heap page takes, from
// the page layout: a 44-byte page header (the cache's 32 bytes, the
// heap's 12), and per row a 4-byte slot and its cell: the 211-byte row
// (format byte, column count, null bitmap, three two-byte varints, the
// char's two-byte length and 200 bytes) after a 26-byte tuple header when
// the heap keeps versions. Inserts fill a page while its used bytes stay
// within fillfactor% of it: at 100, (16384-44)/(26+211+4) = 67 versions;
// at 50, (8192-44)/241 = 33; without versions, (8192-44)/215 = 37 at 50
// and (16384-44)/215 = 76 at 100.
func TestFillFactorRowsPerPage(t *testing.T) {
	rowLen := len(appendRow(nil, ffTable(HeapRowPointer, 0).Columns, ffRow(1000)))
	require.Equal(t, 211, rowLen)
	const hdr, slot, pageSize = 44, 4, 16 << 10
	for _, tc := range []struct {
		versions bool
		org      Org
		ff       int
		want     int
	}{
		{true, HeapRowPointer, 0, 67},
		{true, HeapRowPointer, 50, 33},
		{true, HeapPrimaryKey, 50, 33},
		{false, HeapRowPointer, 50, 37},
		{false, HeapPrimaryKey, 100, 76},
	} {
		t.Run(fmt.Sprintf("%s/versions=%v/ff=%d", tc.org, tc.versions, tc.ff), func(t *testing.T) {
			cell := rowLen
			if tc.versions {
				cell += heap.TupleHeaderSize
			}
			ff := tc.ff
			if ff == 0 {
				ff = DefaultFillFactor
			}
			require.Equal(t, tc.want, (pageSize*ff/100-hdr)/(cell+slot))
			db, err := Open(&Options{HeapVersions: versioning(tc.versions), Vacuum: VacuumManual, Options: cache.Options{PoolSize: 8 << 20}})
			require.NoError(t, err)
			defer func() { require.NoError(t, db.Close()) }()
			tb, err := db.CreateTable(ffTable(tc.org, tc.ff))
			require.NoError(t, err)
			require.Equal(t, ff, tb.FillFactor())
			require.Equal(t, tc.want, ffPageRows(t, db, tb))
		})
	}
}

// TestFillFactorHOT checks that an update of a column no index covers, on
// a page filled at fill factor 50, stays on its page as a heap-only
// version, writing no index entry, and that at 100 the full page sends
// it elsewhere: a non-HOT update.
func TestFillFactorHOT(t *testing.T) {
	for _, org := range hvOrgs {
		for _, tc := range []struct {
			ff  int
			hot bool
		}{{50, true}, {100, false}} {
			t.Run(fmt.Sprintf("%s/ff=%d", org, tc.ff), func(t *testing.T) {
				db := hvOpen(t)
				tb, err := db.CreateTable(ffTable(org, tc.ff))
				require.NoError(t, err)
				ffPageRows(t, db, tb)
				var m Meter
				tx := db.Begin(&m)
				require.NoError(t, tx.Update(tb, []Value{Int(1000)}, []Set{{Column: "w", Value: Int(4000)}}))
				require.NoError(t, tx.Commit())
				if tc.hot {
					require.Equal(t, int64(1), m.HeapHOTUpdates)
					require.Zero(t, m.HeapNonHOTUpdates)
					require.Zero(t, m.IndexEntriesWritten)
				} else {
					require.Zero(t, m.HeapHOTUpdates)
					require.Equal(t, int64(1), m.HeapNonHOTUpdates)
				}
				r := db.Begin(nil)
				row, found := hvGet(t, r, tb, 1000)
				require.NoError(t, r.Commit())
				require.True(t, found)
				require.EqualValues(t, 4000, row[2].I)
			})
		}
	}
}

// TestFillFactorErrors checks that a bad fill factor is refused before
// anything is created, with a sentinel and the table and value named.
func TestFillFactorErrors(t *testing.T) {
	db, err := Open(&Options{HeapVersions: HeapVersionsOff, Options: cache.Options{PoolSize: 4 << 20}})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	for _, tc := range []struct {
		org Org
		ff  int
		err error
	}{
		{HeapRowPointer, 9, ErrBadFillFactor},
		{HeapPrimaryKey, 101, ErrBadFillFactor},
		{HeapRowPointer, -5, ErrBadFillFactor},
		{Clustered, 101, ErrBadFillFactor},
		{Clustered, 50, ErrFillFactorClustered},
		{OrgDefault, 90, ErrFillFactorClustered}, // the database's default: clustered
	} {
		_, err := db.CreateTable(ffTable(tc.org, tc.ff))
		require.ErrorIs(t, err, tc.err, "%s %d", tc.org, tc.ff)
		require.ErrorIs(t, err, ErrSchema)
		require.Contains(t, err.Error(), "table ff")
		require.Contains(t, err.Error(), fmt.Sprintf("fill factor %d", tc.ff))
		require.Empty(t, db.Tables())
	}
	for _, ff := range []int{0, 100} {
		def := ffTable(Clustered, ff)
		def.Name = fmt.Sprintf("clustered_%d", ff)
		tb, err := db.CreateTable(def)
		require.NoError(t, err)
		require.Equal(t, DefaultFillFactor, tb.FillFactor())
	}
}

// TestFillFactorSurvivesReopen checks that the catalog keeps the fill
// factor: after a reopen the table still fills pages to it.
func TestFillFactorSurvivesReopen(t *testing.T) {
	opts := &Options{HeapVersions: HeapVersionsOff, FS: vfs.NewMem(), Dir: "db", Options: cache.Options{PoolSize: 4 << 20}}
	db, err := Open(opts)
	require.NoError(t, err)
	_, err = db.CreateTable(ffTable(HeapRowPointer, 50))
	require.NoError(t, err)
	require.NoError(t, db.Close())

	db, err = Open(opts)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	tb, err := db.Table("ff")
	require.NoError(t, err)
	require.Equal(t, 50, tb.FillFactor())
	require.Equal(t, 50, tb.Schema().FillFactor)
	require.Equal(t, 50, tb.heap.FillFactor())
	require.Equal(t, 37, ffPageRows(t, db, tb))
}

// versioning is Options.HeapVersions for a test's bool.
func versioning(on bool) HeapVersioning {
	if on {
		return HeapVersionsOn
	}
	return HeapVersionsOff
}
