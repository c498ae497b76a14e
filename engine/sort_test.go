package engine

import (
	"fmt"
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
