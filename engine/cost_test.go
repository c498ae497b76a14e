package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/enginelab/enginelab/cache"
	"github.com/stretchr/testify/require"
)

// Exact costs of updates, point gets and secondary lookups in the three
// organizations, and the space a wide primary key costs each secondary
// index (issue 3, "Tests that must exist").

var costOrgs = []Org{Clustered, HeapRowPointer, HeapPrimaryKey}

// costTable has a non-indexed column (pad), a unique index on k and a
// non-unique index on s.
func costTable(org Org) Table {
	return Table{
		Name: "cost_" + org.String(),
		Columns: []Column{
			{Name: "id", Type: TypeInt},
			{Name: "k", Type: TypeInt},
			{Name: "s", Type: TypeVarchar, Length: 16},
			{Name: "pad", Type: TypeVarchar, Length: 2000, Nullable: true},
		},
		PrimaryKey: []string{"id"},
		Indexes: []Index{
			{Name: "ix_s", Columns: []string{"s"}},
			{Name: "ix_k", Columns: []string{"k"}, Unique: true},
		},
		Org: org,
	}
}

// costRow is row id of costTable: k = 1000+id, s shared by groups of 3
// ids, pad of padLen bytes.
func costRow(id int64, padLen int) Row {
	return Row{Int(id), Int(1000 + id), Str(fmt.Sprintf("s%03d", id/3)), Str(strings.Repeat(string(rune('a'+id%26)), padLen))}
}

// costLoad creates costTable in db and inserts rows 0..n-1.
func costLoad(t *testing.T, db *DB, org Org, n int, padLen int) *TableHandle {
	t.Helper()
	tb, err := db.CreateTable(costTable(org))
	require.NoError(t, err)
	tx := db.Begin(nil)
	for id := range int64(n) {
		require.NoError(t, tx.Insert(tb, costRow(id, padLen)))
	}
	require.NoError(t, tx.Commit())
	return tb
}

// costIx returns the (written, deleted) entries of each index of tb, in
// table order: PRIMARY, ix_s, ix_k.
func costIx(m *Meter, tb *TableHandle) [][2]int64 {
	out := make([][2]int64, len(tb.ixs))
	for i, ix := range tb.ixs {
		if ix.id < len(m.Index) {
			out[i] = [2]int64{m.Index[ix.id].EntriesWritten, m.Index[ix.id].EntriesDeleted}
		}
	}
	return out
}

// costUpdate runs one update on a fresh meter and returns the meter.
func costUpdate(t *testing.T, db *DB, tb *TableHandle, id int64, set ...Set) *Meter {
	t.Helper()
	m := &Meter{}
	tx := db.Begin(m)
	require.NoError(t, tx.Update(tb, []Value{Int(id)}, set))
	require.NoError(t, tx.Commit())
	return m
}

// costVerify checks that row id reads back as want by primary key and
// through both secondary indexes (so that every index still leads to it).
func costVerify(t *testing.T, db *DB, tb *TableHandle, want Row) {
	t.Helper()
	tx := db.Begin(nil)
	defer tx.Commit()
	got, found, err := tx.Get(tb, []Value{want[0]}, nil)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, want, got)
	for _, by := range []struct {
		index string
		key   Value
	}{{"ix_k", want[1]}, {"ix_s", want[2]}} {
		cur, err := tx.Scan(tb, ScanOptions{Index: by.index, Lower: []Value{by.key}, Upper: []Value{by.key}})
		require.NoError(t, err)
		n := 0
		for cur.Next() {
			if cur.Row()[0].I == want[0].I {
				require.Equal(t, want, cur.Row(), "through %s", by.index)
				n++
			}
		}
		require.NoError(t, cur.Close())
		require.Equal(t, 1, n, "row %d through %s", want[0].I, by.index)
	}
}

// costClone deep-copies a row (a cursor's row is valid until Next).
func costClone(r Row) Row {
	c := append(Row(nil), r...)
	for i := range c {
		if c[i].B != nil {
			c[i].B = append([]byte{}, c[i].B...)
		}
	}
	return c
}

var (
	costNone    = [][2]int64{{0, 0}, {0, 0}, {0, 0}}
	costAll     = [][2]int64{{1, 1}, {1, 1}, {1, 1}}
	costPrimary = [][2]int64{{1, 1}, {0, 0}, {0, 0}}
	costK       = [][2]int64{{0, 0}, {0, 0}, {1, 1}}
	costPrimK   = [][2]int64{{1, 1}, {0, 0}, {1, 1}}
)

func costTotal(want [][2]int64) (w, d int64) {
	for _, x := range want {
		w, d = w+x[0], d+x[1]
	}
	return w, d
}

func TestCostUpdate(t *testing.T) {
	for _, tc := range []struct {
		org  Org
		mode HeapUpdate
		// Index entries written and deleted, per index (PRIMARY, ix_s,
		// ix_k), by an update of:
		inPlace [][2]int64 // a non-indexed column, same length
		moved   [][2]int64 // a non-indexed column, grown past its page's room
		indexed [][2]int64 // the indexed column k
	}{
		{Clustered, InPlace, costNone, costNone, costK},
		{HeapRowPointer, InPlace, costNone, costAll, costK},
		{HeapPrimaryKey, InPlace, costNone, costPrimary, costK},
		// Always a new version: every update moves the row.
		{Clustered, NewVersion, costNone, costNone, costK},
		{HeapRowPointer, NewVersion, costAll, costAll, costAll},
		{HeapPrimaryKey, NewVersion, costPrimary, costPrimary, costPrimK},
	} {
		mode := map[HeapUpdate]string{InPlace: "in-place", NewVersion: "new-version"}[tc.mode]
		t.Run(fmt.Sprintf("%s/%s", tc.org, mode), func(t *testing.T) {
			db, err := Open(&Options{HeapVersions: HeapVersionsOff, Options: cache.Options{PoolSize: 8 << 20}, HeapUpdate: tc.mode})
			require.NoError(t, err)
			defer db.Close()
			// 200 rows of ~220 bytes: row 0 is on a full heap page
			// (about 70 rows a 16 KiB page).
			tb := costLoad(t, db, tc.org, 200, 200)
			// moved says whether the heap must have moved the row (an
			// in-place update that no longer fits). A new version is
			// written by insert and delete, not counted as a move.
			check := func(what string, m *Meter, want [][2]int64, moved bool) {
				t.Helper()
				require.Equal(t, want, costIx(m, tb), "%s: %s", what, m)
				w, d := costTotal(want)
				require.Equal(t, w, m.IndexEntriesWritten, what)
				require.Equal(t, d, m.IndexEntriesDeleted, what)
				if tc.mode == InPlace {
					wantMoves := int64(0)
					if moved && tc.org != Clustered {
						wantMoves = 1
					}
					require.Equal(t, wantMoves, m.HeapMoves, "%s: %s", what, m)
				}
			}

			// A non-indexed column, same length: the row stays where it is.
			row := costRow(0, 200)
			row[3] = Str(strings.Repeat("Z", 200))
			m := costUpdate(t, db, tb, 0, Set{"pad", row[3]})
			check("non-indexed column in place", m, tc.inPlace, false)
			costVerify(t, db, tb, row)
			if tc.org == Clustered {
				// The update reads the record with a descent and writes it
				// at the leaf where the read found it (InnoDB's UPDATE
				// restoring its persistent cursor): one node more than a
				// point get, none elsewhere (no index changes).
				var gm Meter
				tx := db.Begin(&gm)
				_, found, err := tx.Get(tb, []Value{Int(0)}, nil)
				require.NoError(t, err)
				require.True(t, found)
				require.NoError(t, tx.Commit())
				require.Equal(t, gm.NodeVisitsTotal()+1, m.NodeVisitsTotal(), "update: %s; get: %s", m, &gm)
			}

			// A non-indexed column grown by 1800 bytes: the row no longer
			// fits its (full) heap page and moves.
			row[3] = Str(strings.Repeat("M", 2000))
			m = costUpdate(t, db, tb, 0, Set{"pad", row[3]})
			check("row that moves", m, tc.moved, true)
			costVerify(t, db, tb, row)

			// The indexed column k, row 1 (still in place on the first
			// page; its size does not change): exactly one entry out and
			// one in, in ix_k only.
			row = costRow(1, 200)
			row[1] = Int(5000)
			m = costUpdate(t, db, tb, 1, Set{"k", row[1]})
			check("indexed column", m, tc.indexed, false)
			costVerify(t, db, tb, row)

			// Both at once: only indexes whose columns changed, plus the
			// row-pointer indexes when a new version is written.
			row[2] = Str("zzz")
			row[3] = Str("short")
			m = costUpdate(t, db, tb, 1, Set{"s", row[2]}, Set{"pad", row[3]})
			want := [][2]int64{{0, 0}, {1, 1}, {0, 0}}
			switch {
			case tc.mode == NewVersion && tc.org == HeapRowPointer:
				want = costAll
			case tc.mode == NewVersion && tc.org == HeapPrimaryKey:
				want = [][2]int64{{1, 1}, {1, 1}, {0, 0}}
			}
			check("indexed and non-indexed column", m, want, false)
			costVerify(t, db, tb, row)
		})
	}
}

func TestCostPointGet(t *testing.T) {
	db, err := Open(&Options{HeapVersions: HeapVersionsOff, Options: cache.Options{PoolSize: 8 << 20}})
	require.NoError(t, err)
	defer db.Close()
	for _, org := range costOrgs {
		t.Run(org.String(), func(t *testing.T) {
			tb := costLoad(t, db, org, 300, 50)
			var m Meter
			tx := db.Begin(&m)
			row, found, err := tx.Get(tb, []Value{Int(123)}, nil)
			require.NoError(t, err)
			require.True(t, found)
			require.Equal(t, costRow(123, 50), row)
			require.NoError(t, tx.Commit())
			heap := int64(0)
			if org != Clustered {
				heap = 1
			}
			require.Equal(t, heap, m.RowFetches, m.String())
			require.Equal(t, heap, m.RowFetchesHeap, m.String())
			require.Zero(t, m.RowFetchesPrimary, m.String())
			require.Equal(t, heap, m.HeapFetches, m.String())
			require.EqualValues(t, 1, m.RowsExamined)
			require.EqualValues(t, 1, m.RowsReturned)
			require.EqualValues(t, 1, m.RowsDecoded)
			require.Zero(t, m.IndexEntriesWritten)
			// Node visits: one root-to-leaf descent of the primary index,
			// all charged to it.
			prim := tb.ixs[0]
			shape, err := prim.tree.Check(nil)
			require.NoError(t, err)
			require.EqualValues(t, shape.Height, m.NodeVisitsTotal(), m.String())
			require.EqualValues(t, shape.Height, m.Index[prim.id].NodeVisits)

			// A missing key costs the descent and no fetch.
			m = Meter{}
			tx = db.Begin(&m)
			_, found, err = tx.Get(tb, []Value{Int(1 << 40)}, nil)
			require.NoError(t, err)
			require.False(t, found)
			require.Zero(t, m.RowFetches)
			require.Zero(t, m.RowsReturned)
		})
	}
}

func TestCostSecondaryLookup(t *testing.T) {
	db, err := Open(&Options{HeapVersions: HeapVersionsOff, Options: cache.Options{PoolSize: 8 << 20}})
	require.NoError(t, err)
	defer db.Close()
	for _, org := range costOrgs {
		t.Run(org.String(), func(t *testing.T) {
			tb := costLoad(t, db, org, 300, 50)
			lookup := func(o ScanOptions) (*Meter, []Row, Path) {
				t.Helper()
				m := &Meter{}
				tx := db.Begin(m)
				cur, err := tx.Scan(tb, o)
				require.NoError(t, err)
				var rows []Row
				for cur.Next() {
					rows = append(rows, costClone(cur.Row()))
				}
				require.NoError(t, cur.Close())
				require.NoError(t, tx.Commit())
				return m, rows, cur.Path()
			}
			// s = "s040" is shared by ids 120, 121, 122; pad is in no index.
			m, rows, path := lookup(ScanOptions{Index: "ix_s", Lower: []Value{Str("s040")}, Upper: []Value{Str("s040")},
				Columns: []string{"id", "pad"}})
			require.Len(t, rows, 3)
			for i, r := range rows {
				want := costRow(int64(120+i), 50)
				require.Equal(t, Row{want[0], Null, Null, want[3]}, r)
			}
			require.Equal(t, Path{Index: "ix_s", IndexOnly: false}, path)
			require.EqualValues(t, 3, m.RowFetches, m.String())
			require.EqualValues(t, 3, m.RowsExamined)
			require.EqualValues(t, 3, m.RowsReturned)
			require.EqualValues(t, 3, m.RowsDecoded)
			switch org {
			case HeapRowPointer:
				require.EqualValues(t, 3, m.RowFetchesHeap, m.String())
				require.Zero(t, m.RowFetchesPrimary, m.String())
				require.EqualValues(t, 3, m.HeapFetches, m.String())
				require.Zero(t, m.Index[tb.ixs[0].id].NodeVisits, "no primary index visit")
			case HeapPrimaryKey:
				require.EqualValues(t, 3, m.RowFetchesPrimary, m.String())
				require.Zero(t, m.RowFetchesHeap, m.String())
				require.EqualValues(t, 3, m.HeapFetches, m.String())
			case Clustered:
				require.EqualValues(t, 3, m.RowFetchesPrimary, m.String())
				require.Zero(t, m.RowFetchesHeap, m.String())
				require.Zero(t, m.HeapFetches, m.String())
			}
			if org != HeapRowPointer {
				// Each fetch is one descent of the primary index.
				shape, err := tb.ixs[0].tree.Check(nil)
				require.NoError(t, err)
				require.EqualValues(t, 3*shape.Height, m.Index[tb.ixs[0].id].NodeVisits, m.String())
			}

			// The unique index: one match, one fetch.
			m, rows, _ = lookup(ScanOptions{Index: "ix_k", Lower: []Value{Int(1200)}, Upper: []Value{Int(1200)},
				Columns: []string{"pad"}})
			require.Len(t, rows, 1)
			require.Equal(t, costRow(200, 50)[3], rows[0][3])
			require.EqualValues(t, 1, m.RowFetches, m.String())

			// Wanting only the index's columns and the primary key: index
			// only where entries carry the primary key.
			m, rows, path = lookup(ScanOptions{Index: "ix_s", Lower: []Value{Str("s040")}, Upper: []Value{Str("s040")},
				Columns: []string{"id", "s"}})
			require.Len(t, rows, 3)
			for i, r := range rows {
				require.Equal(t, Row{Int(int64(120 + i)), Null, Str("s040"), Null}, r)
			}
			fetches := int64(0)
			if org == HeapRowPointer {
				fetches = 3
			}
			require.Equal(t, fetches == 0, path.IndexOnly)
			require.Equal(t, fetches, m.RowFetches, m.String())
			require.Equal(t, fetches, m.RowFetchesHeap, m.String())
		})
	}
}

// costWideTable is costTable's shape with a primary key of the given
// type: an integer, or a 64-character string.
func costWideTable(org Org, wide bool) Table {
	def := Table{
		Name: fmt.Sprintf("wide_%s_%v", org, wide),
		Columns: []Column{
			{Name: "id", Type: TypeInt},
			{Name: "k", Type: TypeInt},
			{Name: "s", Type: TypeVarchar, Length: 16},
			{Name: "pad", Type: TypeVarchar, Length: 100},
		},
		PrimaryKey: []string{"id"},
		Indexes: []Index{
			{Name: "ix_k", Columns: []string{"k"}},
			{Name: "ix_s", Columns: []string{"s"}},
		},
		Org: org,
	}
	if wide {
		def.Columns[0] = Column{Name: "id", Type: TypeChar, Length: 64}
	}
	return def
}

// TestCostWidePrimaryKey is the seventh question: a 64-character
// primary key instead of an integer grows every secondary index where
// entries carry the primary key (Clustered, HeapPrimaryKey), and none
// where they carry a 6-byte row pointer (HeapRowPointer).
func TestCostWidePrimaryKey(t *testing.T) {
	const rows = 2000
	db, err := Open(&Options{HeapVersions: HeapVersionsOff, Options: cache.Options{PoolSize: 32 << 20}})
	require.NoError(t, err)
	defer db.Close()
	for _, org := range costOrgs {
		for _, wide := range []bool{false, true} {
			tb, err := db.CreateTable(costWideTable(org, wide))
			require.NoError(t, err)
			tx := db.Begin(nil)
			for i := range int64(rows) {
				id := Int(i)
				if wide {
					id = Str(fmt.Sprintf("%064d", i))
				}
				// 2003 is prime: k is a permutation, inserted out of order.
				row := Row{id, Int(i * 7919 % 2003), Str(fmt.Sprintf("name%04d", i%500)), Str(strings.Repeat("p", 80))}
				require.NoError(t, tx.Insert(tb, row))
			}
			require.NoError(t, tx.Commit())
		}
	}
	stats, err := db.SpaceReport()
	require.NoError(t, err)
	by := make(map[string]SpaceStats)
	for _, s := range stats {
		by[s.Table+"."+s.Index] = s
	}
	var report strings.Builder
	require.NoError(t, FormatSpaceReport(&report, stats))
	t.Logf("\n%s", report.String())

	// The encoded key of an integer is 9 bytes, of the 64-character
	// string 1+64+2 = 67: 58 more in every entry that carries it.
	const grow = 67 - 9
	for _, org := range costOrgs {
		for _, index := range []string{"PRIMARY", "ix_k", "ix_s"} {
			narrow := by[costWideTable(org, false).Name+"."+index]
			wide := by[costWideTable(org, true).Name+"."+index]
			require.EqualValues(t, rows, narrow.Entries)
			require.EqualValues(t, rows, wide.Entries)
			t.Logf("%-12s %-8s bytes %7d -> %7d (x%.2f)  pages %3d -> %3d",
				org, index, narrow.Bytes, wide.Bytes, float64(wide.Bytes)/float64(narrow.Bytes), narrow.Pages, wide.Pages)
			if index == "PRIMARY" || org != HeapRowPointer {
				// Every entry carries the key: at least 58 bytes more each
				// (the primary index's inner separators grow too).
				require.GreaterOrEqual(t, wide.Bytes-narrow.Bytes, int64(rows*grow), "%s %s", org, index)
				require.Greater(t, wide.Pages, narrow.Pages, "%s %s", org, index)
				continue
			}
			// Row-pointer secondaries: the same entries, the same sizes.
			require.Equal(t, narrow.Pages, wide.Pages, "%s %s", org, index)
			require.Equal(t, narrow.Height, wide.Height, "%s %s", org, index)
			require.InDelta(t, narrow.Bytes, wide.Bytes, float64(narrow.Bytes)/100, "%s %s", org, index)
		}
	}
}
