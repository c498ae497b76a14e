package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// sortTable makes a table (id int, a int, v varchar(vlen), n varchar(8)
// NULL) of rows rows in org, from seed, v made by gen.
func sortTable(t testing.TB, org Org, rows, vlen int, seed uint64, gen func(r *rand.Rand, i int) string) (*DB, *TableHandle) {
	t.Helper()
	o := &Options{SkipMemoryCheck: true}
	o.PoolSize = 16 << 20
	db, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	tb, err := db.CreateTable(Table{Name: "s", Org: org, PrimaryKey: []string{"id"},
		Columns: []Column{{Name: "id", Type: TypeInt}, {Name: "a", Type: TypeInt},
			{Name: "v", Type: TypeVarchar, Length: vlen}, {Name: "n", Type: TypeVarchar, Length: 8, Nullable: true}},
		Indexes: []Index{{Name: "by_a", Columns: []string{"a"}}}})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 7))
	tx := db.Begin(nil)
	for i := range rows {
		n := Null
		if r.IntN(4) != 0 {
			n = Str(fmt.Sprintf("n%d", r.IntN(50)))
		}
		if err := tx.Insert(tb, Row{Int(int64(i)), Int(r.Int64N(1000) - 500), Str(gen(r, i)), n}); err != nil {
			t.Fatal(err)
		}
		if i%500 == 499 {
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			tx = db.Begin(nil)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return db, tb
}

func randWord(r *rand.Rand, _ int) string {
	rs := []rune("aAbBcCäÄßéE z")
	n := r.IntN(8)
	var b []rune
	for range n {
		b = append(b, rs[r.IntN(len(rs))])
	}
	return string(b)
}

func collect(t testing.TB, tx *Tx, tb *TableHandle, o SortOptions) ([]Row, SortStats) {
	t.Helper()
	s, err := tx.Sort(tb, o)
	if err != nil {
		t.Fatal(err)
	}
	var out []Row
	for s.Next() {
		row := slices.Clone(s.Row())
		for i := range row {
			if row[i].B != nil {
				row[i].B = slices.Clone(row[i].B)
			}
		}
		out = append(out, row)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return out, s.Stats()
}

func TestSortSmoke(t *testing.T) {
	for _, org := range []Org{Clustered, HeapRowPointer, HeapPrimaryKey} {
		_, tb := sortTable(t, org, 3000, 300, 1, randWord)
		for _, f := range []KeyFormat{KeyFormatFixed, KeyFormatPacked} {
			for _, buf := range []int64{MinSortBufferSize, DefaultSortBufferSize} {
				for _, mlsd := range []int{0, 16} {
					tx := tb.db.Begin(nil)
					rows, st := collect(t, tx, tb, SortOptions{OrderBy: []SortKey{{Column: "v", Collation: "utf8mb4_general_ci"}, {Column: "id", Desc: true}},
						KeyFormat: f, SortBufferSize: buf, MaxLengthForSortData: mlsd})
					if len(rows) != 3000 {
						t.Fatalf("%v %v: %d rows", org, f, len(rows))
					}
					c, _ := LookupCollation("utf8mb4_general_ci")
					for i := 1; i < len(rows); i++ {
						r, _ := c.compare(rows[i-1][2].B, rows[i][2].B)
						if r > 0 || (r == 0 && rows[i-1][0].I < rows[i][0].I) {
							t.Fatalf("%v %v %+v: rows %d, %d out of order: %v %v", org, f, st, i-1, i, rows[i-1], rows[i])
						}
					}
					t.Logf("%v %v buf=%d mlsd=%d: %+v", org, f, buf, mlsd, st)
					_ = tx.Commit()
				}
			}
		}
	}
}

// intTable makes a table (id int, a int) of n rows, a a seeded permutation.
func intTable(t testing.TB, org Org, n int, seed uint64) *TableHandle {
	t.Helper()
	o := &Options{SkipMemoryCheck: true}
	o.PoolSize = 16 << 20
	db, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	tb, err := db.CreateTable(Table{Name: "i", Org: org, PrimaryKey: []string{"id"},
		Columns: []Column{{Name: "id", Type: TypeInt}, {Name: "a", Type: TypeInt}}})
	if err != nil {
		t.Fatal(err)
	}
	perm := rand.New(rand.NewPCG(seed, 1)).Perm(n)
	tx := db.Begin(nil)
	for i, a := range perm {
		if err := tx.Insert(tb, Row{Int(int64(i)), Int(int64(a))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return tb
}

// TestSortExternalExact sorts 10,000 rows of (id, a) by a in the least
// buffer: every count is fixed by the design. A record is the key (8
// bytes) and two 8-byte addon columns, 24 bytes, and takes 32 with its
// pointer: 16 KiB holds 512, so 19 full runs and one of 272. 20 runs are
// more than 15: a pass merges runs 0-6 and 7-13 (7 at a time while one
// starts at or before run 20-1-10 = 9) and the last six, then the last
// merge takes the three results.
func TestSortExternalExact(t *testing.T) {
	tb := intTable(t, Clustered, 10000, 3)
	var m Meter
	tx := tb.db.Begin(&m)
	rows, st := collect(t, tx, tb, SortOptions{OrderBy: []SortKey{{Column: "a"}}, SortBufferSize: MinSortBufferSize})
	if len(rows) != 10000 {
		t.Fatalf("%d rows", len(rows))
	}
	for i, r := range rows {
		if r[1].I != int64(i) {
			t.Fatalf("row %d: a = %d", i, r[1].I)
		}
	}
	want := SortStats{Mode: SortAddonFields, ModeName: "addon-fields", SortLength: 8, ResLength: 16, RecLength: 24,
		BufferBytes: 16384, KeysPerBuffer: 512, Runs: 20, MergePasses: 2, MergeCalls: 4,
		RowsExamined: 10000, RowsSorted: 10000, RowsReturned: 10000}
	if st != want {
		t.Fatalf("stats\n got %+v\nwant %+v", st, want)
	}
	c := m.SortCounts
	// Written: the runs (24 bytes a record), the first pass's three runs,
	// the result (16 bytes a record). Read: the same.
	if c.SortTempWriteBytes != 10000*(24+24+16) || c.SortTempReadBytes != 10000*(24+24+16) {
		t.Fatalf("temp bytes written %d, read %d", c.SortTempWriteBytes, c.SortTempReadBytes)
	}
	if c.SortKeysBuilt != 10000 || c.SortKeyBytes != 80000 || c.SortRuns != 20 || c.SortMergePasses != 2 || c.SortMergeCalls != 4 {
		t.Fatalf("counts %s", c.String())
	}
	if c.SortPackedCompares != 0 || c.SortCollCompareTotal() != 0 || c.SortRowsRefetched != 0 {
		t.Fatalf("fixed keys of integers, addon fields: %s", c.String())
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if m.RowsReturned != 10000 {
		t.Fatalf("rows returned %d", m.RowsReturned)
	}
}

// TestSortInMemoryCounts checks the in-memory paths' counts: quicksort's
// comparisons between n-1 and 2 n log2 n, radix sort's none, and the
// priority queue's keys.
func TestSortInMemoryCounts(t *testing.T) {
	tb := intTable(t, HeapRowPointer, 5000, 9)
	t.Run("quicksort", func(t *testing.T) {
		// 900 records: under radix sort's 1,000.
		small := intTable(t, HeapRowPointer, 900, 10)
		var m Meter
		tx := small.db.Begin(&m)
		rows, st := collect(t, tx, small, SortOptions{OrderBy: []SortKey{{Column: "a", Desc: true}}})
		if st.Radix || st.Runs != 0 || len(rows) != 900 || rows[0][1].I != 899 || rows[899][1].I != 0 {
			t.Fatalf("%+v", st)
		}
		n := 900.0
		lo, hi := int64(n-1), int64(2*n*math.Log2(n))
		if m.SortMemcmps < lo || m.SortMemcmps > hi {
			t.Fatalf("%d comparisons, want %d to %d", m.SortMemcmps, lo, hi)
		}
		_ = tx.Commit()
	})
	t.Run("radix", func(t *testing.T) {
		var m Meter
		tx := tb.db.Begin(&m)
		rows, st := collect(t, tx, tb, SortOptions{OrderBy: []SortKey{{Column: "a"}}})
		if !st.Radix || st.Runs != 0 || m.SortMemcmps != 0 || len(rows) != 5000 {
			t.Fatalf("%+v %s", st, m.SortCounts.String())
		}
		for i, r := range rows {
			if r[1].I != int64(i) {
				t.Fatalf("row %d: %v", i, r)
			}
		}
		// a < 5000 has two bytes that vary: the other six positions are
		// skipped.
		if m.SortRadixPasses != 2 || m.SortRadixSkipped != 6 {
			t.Fatalf("radix passes %d, skipped %d", m.SortRadixPasses, m.SortRadixSkipped)
		}
		_ = tx.Commit()
	})
	t.Run("priority queue", func(t *testing.T) {
		var m Meter
		tx := tb.db.Begin(&m)
		rows, st := collect(t, tx, tb, SortOptions{OrderBy: []SortKey{{Column: "a", Desc: true}}, Limit: 10})
		if !st.PriorityQueue || st.PackedKeys || len(rows) != 10 || st.KeysPerBuffer != 11 {
			t.Fatalf("%+v", st)
		}
		for i, r := range rows {
			if r[1].I != int64(4999-i) {
				t.Fatalf("row %d: %v", i, r)
			}
		}
		if m.SortKeysBuilt != 5000 {
			t.Fatalf("keys built %d", m.SortKeysBuilt)
		}
		// Once full (11 records), each key costs a sift from the top:
		// at least the two comparisons at the root, at most two a level
		// of a heap of 11 (3 levels below the root).
		lo, hi := int64(2*(5000-11)), int64(2*3*5000+11*11)
		if m.SortMemcmps < lo || m.SortMemcmps > hi {
			t.Fatalf("%d comparisons, want %d to %d", m.SortMemcmps, lo, hi)
		}
		_ = tx.Commit()
	})
}
