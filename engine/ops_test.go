package engine

import (
	"bytes"
	"cmp"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/btree"
	"github.com/enginelab/enginelab/cache"
)

// Bad input changes nothing, and Get, Update, Delete and Scan agree with
// a simple model in every organization (issue 3, "Bad input").

var opsSeedFlag = flag.Uint64("engine.opsseed", 0, "seed of the operations model test (0: the fixed default)")

var opsOrgs = []Org{Clustered, HeapRowPointer, HeapPrimaryKey}

// Column positions of opsTable.
const (
	opsW = iota
	opsID
	opsK
	opsName
	opsBal
	opsNote
)

// opsTable has a composite primary key (w, id), a unique index on k and a
// non-unique index on (name, bal); note is in no index and may be NULL.
func opsTable(org Org) Table {
	return Table{
		Name: "ops_" + org.String(),
		Columns: []Column{
			{Name: "w", Type: TypeInt},
			{Name: "id", Type: TypeInt},
			{Name: "k", Type: TypeInt},
			{Name: "name", Type: TypeVarchar, Length: 8},
			{Name: "bal", Type: TypeDecimal, Scale: 2},
			{Name: "note", Type: TypeVarchar, Length: 300, Nullable: true},
		},
		PrimaryKey: []string{"w", "id"},
		Indexes: []Index{
			{Name: "ix_k", Columns: []string{"k"}, Unique: true},
			{Name: "ix_name", Columns: []string{"name", "bal"}},
		},
		Org: org,
	}
}

// opsIndexCols gives each index's key columns, for the model.
var opsIndexCols = map[string][]int{"PRIMARY": {opsW, opsID}, "ix_k": {opsK}, "ix_name": {opsName, opsBal}}

func opsRow(w, id int64) Row {
	note := Str(strings.Repeat("n", int(id%7)*10))
	if id%4 == 0 {
		note = Null
	}
	return Row{Int(w), Int(id), Int(w*100 + id), Str(fmt.Sprintf("n%02d", id%5)), Dec(id*100 - 1000), note}
}

// opsLoad creates opsTable (w 1..3, id 1..20) and returns it with a model
// of its rows.
func opsLoad(t *testing.T, db *DB, org Org) (*TableHandle, map[[2]int64]Row) {
	t.Helper()
	tb, err := db.CreateTable(opsTable(org))
	require.NoError(t, err)
	model := make(map[[2]int64]Row)
	tx := db.Begin(nil)
	for w := int64(1); w <= 3; w++ {
		for id := int64(1); id <= 20; id++ {
			row := opsRow(w, id)
			require.NoError(t, tx.Insert(tb, row))
			model[[2]int64{w, id}] = row
		}
	}
	require.NoError(t, tx.Commit())
	return tb, model
}

// opsSnapshot renders every entry of every index and every heap row of
// tb, byte for byte.
func opsSnapshot(t *testing.T, tb *TableHandle) string {
	t.Helper()
	var b strings.Builder
	for _, ix := range tb.ixs {
		it := ix.tree.NewIter(nil, &btree.IterOptions{})
		for ok := it.First(); ok; ok = it.Next() {
			fmt.Fprintf(&b, "%s %x=%x\n", ix.name, it.Key(), it.Value())
		}
		require.NoError(t, it.Close())
	}
	if tb.heap != nil {
		s := tb.heap.NewScan(nil)
		for s.Next() {
			fmt.Fprintf(&b, "heap %s=%x\n", s.Ptr(), s.Row())
		}
		require.NoError(t, s.Close())
	}
	return b.String()
}

func TestOpsBadInputChangesNothing(t *testing.T) {
	long := Str("ABCDEFGHIJ") // name is varchar(8)
	type op func(tx *Tx, tb *TableHandle) error
	scan := func(o ScanOptions) op {
		return func(tx *Tx, tb *TableHandle) error {
			cur, err := tx.Scan(tb, o)
			if err == nil {
				require.NoError(t, cur.Close())
			}
			return err
		}
	}
	count := func(o CountOptions) op {
		return func(tx *Tx, tb *TableHandle) error {
			_, _, err := tx.Count(tb, o)
			return err
		}
	}
	insert := func(change func(Row)) op {
		return func(tx *Tx, tb *TableHandle) error {
			row := opsRow(9, 9)
			change(row)
			return tx.Insert(tb, row)
		}
	}
	update := func(pk []Value, set ...Set) op {
		return func(tx *Tx, tb *TableHandle) error { return tx.Update(tb, pk, set) }
	}
	del := func(pk ...Value) op {
		return func(tx *Tx, tb *TableHandle) error { return tx.Delete(tb, pk) }
	}
	get := func(pk ...Value) op {
		return func(tx *Tx, tb *TableHandle) error {
			_, _, err := tx.Get(tb, pk, nil)
			return err
		}
	}
	pk11 := []Value{Int(1), Int(1)}
	for _, tc := range []struct {
		name  string
		op    op
		err   error
		class error    // ErrSchema or ErrBadValue, or nil
		says  []string // besides the table's name
	}{
		// Insert.
		{"insert/wrong type", insert(func(r Row) { r[opsW] = Str("x") }), ErrWrongType, ErrBadValue, []string{"column w", `"x"`}},
		{"insert/int in string column", insert(func(r Row) { r[opsName] = Int(7) }), ErrWrongType, ErrBadValue, []string{"column name", "integer 7"}},
		{"insert/too long", insert(func(r Row) { r[opsName] = long }), ErrValueTooLong, ErrBadValue, []string{"column name", "ABCDEFGHIJ", "10 bytes"}},
		{"insert/null in not null", insert(func(r Row) { r[opsK] = Null }), ErrNotNullable, ErrBadValue, []string{"column k", "NULL"}},
		{"insert/null in primary key", insert(func(r Row) { r[opsID] = Null }), ErrNotNullable, ErrBadValue, []string{"column id"}},
		{"insert/wrong arity", func(tx *Tx, tb *TableHandle) error { return tx.Insert(tb, opsRow(9, 9)[:3]) }, ErrWrongArity, ErrBadValue, []string{"6 columns", "3 values"}},
		{"insert/duplicate primary key", insert(func(r Row) { r[opsW], r[opsID] = Int(1), Int(1) }), ErrDuplicateKey, nil, []string{"primary key", "w=1, id=1"}},
		{"insert/unique violation", insert(func(r Row) { r[opsK] = Int(101) }), ErrDuplicateKey, nil, []string{"ix_k", "k=101"}},
		{"insert/duplicate primary key and unique", insert(func(r Row) { r[opsW], r[opsID], r[opsK] = Int(2), Int(2), Int(101) }), ErrDuplicateKey, nil, nil},
		// Update.
		{"update/unknown column", update(pk11, Set{"nope", Int(1)}), ErrUnknownColumn, ErrSchema, []string{`"nope"`}},
		{"update/too long", update(pk11, Set{"name", long}), ErrValueTooLong, ErrBadValue, []string{"column name", "ABCDEFGHIJ"}},
		{"update/wrong type", update(pk11, Set{"bal", Str("1.00")}), ErrWrongType, ErrBadValue, []string{"column bal", `"1.00"`}},
		{"update/null in not null", update(pk11, Set{"k", Null}), ErrNotNullable, ErrBadValue, []string{"column k"}},
		{"update/primary-key column", update(pk11, Set{"id", Int(5)}), ErrPrimaryKeyUpdate, ErrBadValue, []string{"column id"}},
		{"update/valid change then a bad one", update(pk11, Set{"note", Str("changed")}, Set{"bal", Dec(1)}, Set{"name", long}), ErrValueTooLong, ErrBadValue, []string{"column name"}},
		{"update/wrong primary-key arity", update([]Value{Int(1)}, Set{"note", Null}), ErrWrongArity, ErrBadValue, []string{"2 columns", "1 values"}},
		{"update/primary key of the wrong type", update([]Value{Str("1"), Int(1)}, Set{"note", Null}), ErrWrongType, ErrBadValue, []string{"column w", `"1"`}},
		{"update/unique violation", update(pk11, Set{"note", Null}, Set{"k", Int(102)}), ErrDuplicateKey, nil, []string{"ix_k", "k=102"}},
		{"update/not found", update([]Value{Int(9), Int(9)}, Set{"note", Null}), ErrNotFound, nil, []string{"w=9, id=9"}},
		// Delete.
		{"delete/wrong arity", del(Int(1), Int(1), Int(1)), ErrWrongArity, ErrBadValue, []string{"3 values"}},
		{"delete/wrong type", del(Int(1), Str("1")), ErrWrongType, ErrBadValue, []string{"column id"}},
		{"delete/null", del(Null, Int(1)), ErrNotNullable, ErrBadValue, []string{"column w"}},
		{"delete/not found", del(Int(1), Int(99)), ErrNotFound, nil, []string{"w=1, id=99"}},
		// Get.
		{"get/wrong arity", get(Int(1)), ErrWrongArity, ErrBadValue, []string{"1 values"}},
		{"get/wrong type", get(Int(1), Str("x")), ErrWrongType, ErrBadValue, []string{"column id", `"x"`}},
		{"get/null", get(Int(1), Null), ErrNotNullable, ErrBadValue, []string{"column id"}},
		// Scan.
		{"scan/unknown index", scan(ScanOptions{Index: "ix_nope"}), ErrUnknownIndex, nil, []string{`"ix_nope"`}},
		{"scan/unknown column", scan(ScanOptions{Index: "ix_k", Columns: []string{"k", "nope"}}), ErrUnknownColumn, ErrSchema, []string{`"nope"`}},
		{"scan/duplicate column", scan(ScanOptions{Columns: []string{"k", "k"}}), ErrDuplicateColumn, ErrSchema, []string{"k"}},
		{"scan/bound with too many values", scan(ScanOptions{Index: "ix_k", Lower: []Value{Int(1), Int(2)}}), ErrWrongArity, ErrBadValue, []string{"ix_k", "2 values"}},
		{"scan/upper bound with too many values", scan(ScanOptions{Upper: []Value{Int(1), Int(2), Int(3)}}), ErrWrongArity, ErrBadValue, []string{"PRIMARY", "3 values"}},
		{"scan/bound of the wrong type", scan(ScanOptions{Index: "ix_name", Lower: []Value{Int(5)}}), ErrWrongType, ErrBadValue, []string{"column name", "integer 5"}},
		{"scan/bound too long", scan(ScanOptions{Index: "ix_name", Upper: []Value{long}}), ErrValueTooLong, ErrBadValue, []string{"column name", "ABCDEFGHIJ"}},
		{"scan/negative limit", scan(ScanOptions{Limit: -1}), ErrBadValue, ErrBadValue, []string{"-1"}},
		// Count.
		{"count/unknown column", count(CountOptions{Column: "nope"}), ErrUnknownColumn, ErrSchema, []string{`"nope"`}},
		{"count/unknown index", count(CountOptions{ScanOptions: ScanOptions{Index: "ix_nope"}}), ErrUnknownIndex, nil, []string{`"ix_nope"`}},
		{"count/bound with too many values", count(CountOptions{ScanOptions: ScanOptions{Index: "ix_name", Lower: []Value{Str("a"), Dec(1), Int(3)}}}), ErrWrongArity, ErrBadValue, []string{"ix_name", "3 values"}},
		{"count/bound of the wrong type", count(CountOptions{ScanOptions: ScanOptions{Index: "ix_k", Upper: []Value{Str("1")}}}), ErrWrongType, ErrBadValue, []string{"column k"}},
	} {
		for _, org := range opsOrgs {
			t.Run(tc.name+"/"+org.String(), func(t *testing.T) {
				// Single-version heaps: the test compares the pages'
				// bytes, and a versioned heap's read sets hint bits.
				db, err := Open(&Options{Options: cache.Options{PoolSize: 4 << 20}, HeapVersions: HeapVersionsOff})
				require.NoError(t, err)
				defer db.Close()
				tb, _ := opsLoad(t, db, org)
				before := opsSnapshot(t, tb)
				var m Meter
				tx := db.Begin(&m)
				err = tc.op(tx, tb)
				require.ErrorIs(t, err, tc.err)
				if tc.class != nil {
					require.ErrorIs(t, err, tc.class)
				}
				msg := err.Error()
				require.Contains(t, msg, tb.Name(), "the message names the table")
				for _, s := range tc.says {
					require.Contains(t, msg, s)
				}
				require.NoError(t, tx.Commit())
				require.Zero(t, m.IndexEntriesWritten, m.String())
				require.Zero(t, m.IndexEntriesDeleted, m.String())
				require.Zero(t, m.PageCreates, m.String())
				require.Zero(t, m.Splits+m.Merges+m.HeapMoves, m.String())
				require.Equal(t, before, opsSnapshot(t, tb), "the failed operation changed the table")
			})
		}
	}
}

func TestOpsUseAfterCommit(t *testing.T) {
	db, err := Open(&Options{Options: cache.Options{PoolSize: 4 << 20}})
	require.NoError(t, err)
	defer db.Close()
	tb, _ := opsLoad(t, db, Clustered)
	tx := db.Begin(nil)
	require.NoError(t, tx.Commit())
	require.ErrorIs(t, tx.Commit(), ErrTxDone)
	_, _, err = tx.Get(tb, []Value{Int(1), Int(1)}, nil)
	require.ErrorIs(t, err, ErrTxDone)
	require.ErrorIs(t, tx.Insert(tb, opsRow(9, 9)), ErrTxDone)
	_, err = tx.Scan(tb, ScanOptions{})
	require.ErrorIs(t, err, ErrTxDone)

	// A table handle of another database.
	db2, err := Open(&Options{Options: cache.Options{PoolSize: 4 << 20}})
	require.NoError(t, err)
	defer db2.Close()
	tx2 := db2.Begin(nil)
	_, _, err = tx2.Get(tb, []Value{Int(1), Int(1)}, nil)
	require.ErrorIs(t, err, ErrUnknownTable)
}

// opsCompare orders two values of the same column (NULL first).
func opsCompare(a, b Value) int {
	switch {
	case a.IsNull() || b.IsNull():
		return cmp.Compare(boolInt(!a.IsNull()), boolInt(!b.IsNull()))
	case a.B != nil || b.B != nil:
		return bytes.Compare(a.B, b.B)
	default:
		return cmp.Compare(a.I, b.I)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// opsCompareKey compares rows a and b on cols, the first n of them.
func opsCompareKey(cols []int, n int, a, b Row) int {
	for _, c := range cols[:n] {
		if r := opsCompare(a[c], b[c]); r != 0 {
			return r
		}
	}
	return 0
}

// opsScanCase is a scan and what the model says it returns.
type opsScanCase struct {
	o ScanOptions
}

func (sc opsScanCase) String() string {
	o := sc.o
	return fmt.Sprintf("index=%q lower=%v excl=%v upper=%v excl=%v reverse=%v limit=%d",
		o.Index, o.Lower, o.LowerExclusive, o.Upper, o.UpperExclusive, o.Reverse, o.Limit)
}

// expect returns, from the model, the rows the scan returns in order. For
// secondary indexes, rows with equal index keys come in primary-key order
// (an entry carries the primary key, or a row pointer: the caller compares
// those groups as sets).
func (sc opsScanCase) expect(model map[[2]int64]Row) []Row {
	name := cmp.Or(sc.o.Index, "PRIMARY")
	cols := opsIndexCols[name]
	var out []Row
	for _, r := range model {
		if lo := sc.o.Lower; lo != nil {
			c := opsCompareKey(cols, len(lo), r, opsBoundRow(cols, lo))
			if c < 0 || (c == 0 && sc.o.LowerExclusive) {
				continue
			}
		}
		if hi := sc.o.Upper; hi != nil {
			c := opsCompareKey(cols, len(hi), r, opsBoundRow(cols, hi))
			if c > 0 || (c == 0 && sc.o.UpperExclusive) {
				continue
			}
		}
		out = append(out, r)
	}
	pk := opsIndexCols["PRIMARY"]
	slices.SortFunc(out, func(a, b Row) int {
		return cmp.Or(opsCompareKey(cols, len(cols), a, b), opsCompareKey(pk, 2, a, b))
	})
	if sc.o.Reverse {
		slices.Reverse(out)
	}
	if sc.o.Limit > 0 && len(out) > sc.o.Limit {
		out = out[:sc.o.Limit]
	}
	return out
}

func opsBoundRow(cols []int, vals []Value) Row {
	r := make(Row, opsNote+1)
	for i, v := range vals {
		r[cols[i]] = v
	}
	return r
}

// opsCheck compares every row, and a set of scans and counts, with the
// model.
func opsCheck(t *testing.T, db *DB, tb *TableHandle, model map[[2]int64]Row, heapMoved bool) {
	t.Helper()
	tx := db.Begin(nil)
	defer tx.Commit()
	for w := int64(0); w <= 4; w++ {
		for id := int64(0); id <= 40; id++ {
			got, found, err := tx.Get(tb, []Value{Int(w), Int(id)}, nil)
			require.NoError(t, err)
			want, ok := model[[2]int64{w, id}]
			require.Equal(t, ok, found, "row (%d,%d)", w, id)
			if ok {
				require.Equal(t, want, got, "row (%d,%d)", w, id)
			}
		}
	}
	var cases []opsScanCase
	for _, rev := range []bool{false, true} {
		for _, limit := range []int{0, 1, 5} {
			for _, b := range []ScanOptions{
				{},
				{Lower: []Value{Int(2)}, Upper: []Value{Int(2)}},
				{Lower: []Value{Int(2)}, LowerExclusive: true},
				{Upper: []Value{Int(2)}, UpperExclusive: true},
				{Lower: []Value{Int(1), Int(5)}, LowerExclusive: true, Upper: []Value{Int(2), Int(3)}, UpperExclusive: true},
				{Lower: []Value{Int(1), Int(5)}, Upper: []Value{Int(2), Int(3)}},
				{Lower: []Value{Int(2), Int(7)}, Upper: []Value{Int(2), Int(7)}},
				{Lower: []Value{Int(2), Int(7)}, LowerExclusive: true, Upper: []Value{Int(2), Int(7)}},
				{Lower: []Value{Int(3)}, Upper: []Value{Int(1)}}, // empty
				{Index: "ix_k", Lower: []Value{Int(110)}, Upper: []Value{Int(305)}, UpperExclusive: true},
				{Index: "ix_k", Lower: []Value{Int(110)}, LowerExclusive: true},
				{Index: "ix_k", Upper: []Value{Int(7000)}},
			} {
				b.Reverse, b.Limit = rev, limit
				cases = append(cases, opsScanCase{b})
			}
		}
		// Non-unique keys: no limit, groups of equal keys compared as sets.
		for _, b := range []ScanOptions{
			{Index: "ix_name"},
			{Index: "ix_name", Lower: []Value{Str("n01")}, Upper: []Value{Str("n03")}},
			{Index: "ix_name", Lower: []Value{Str("n01")}, LowerExclusive: true, Upper: []Value{Str("n03")}, UpperExclusive: true},
			{Index: "ix_name", Lower: []Value{Str("n02"), Dec(0)}, Upper: []Value{Str("n02")}},
			{Index: "ix_name", Lower: []Value{Str("n02"), Dec(-500)}, LowerExclusive: true, Upper: []Value{Str("n04"), Dec(900)}, UpperExclusive: true},
			{Index: "ix_name", Lower: []Value{Str("n")}, Upper: []Value{Str("n00")}}, // a string prefix is not a key prefix
		} {
			b.Reverse = rev
			cases = append(cases, opsScanCase{b})
		}
	}
	for _, sc := range cases {
		want := sc.expect(model)
		cur, err := tx.Scan(tb, sc.o)
		require.NoError(t, err, sc.String())
		var got []Row
		for cur.Next() {
			got = append(got, costClone(cur.Row()))
		}
		require.NoError(t, cur.Close(), sc.String())
		if sc.o.Index == "ix_name" && tb.org == HeapRowPointer {
			// Equal keys come in row-pointer order: compare sets per key.
			key := func(r Row) string { return fmt.Sprint(r[opsName].B, r[opsBal].I) }
			require.Equal(t, len(want), len(got), sc.String())
			for i := range got {
				require.Equal(t, key(want[i]), key(got[i]), "%s: entry %d", sc, i)
			}
			byKey := func(rows []Row) map[string][]string {
				m := make(map[string][]string)
				for _, r := range rows {
					m[key(r)] = append(m[key(r)], fmt.Sprint(r))
				}
				for _, v := range m {
					slices.Sort(v)
				}
				return m
			}
			require.Equal(t, byKey(want), byKey(got), sc.String())
			if !heapMoved {
				require.Equal(t, want, got, "%s: before any row moved, pointer order is insertion order", sc)
			}
		} else {
			require.Equal(t, want, got, sc.String())
		}
		// Count agrees (Limit is not a count's business).
		n, path, err := tx.Count(tb, CountOptions{ScanOptions: sc.o})
		require.NoError(t, err)
		require.True(t, path.IndexOnly)
		if sc.o.Limit == 0 {
			require.EqualValues(t, len(want), n, sc.String())
		}
		// count(note) counts the non-NULL notes.
		sc.o.Limit = 0
		all := sc.expect(model)
		nn := 0
		for _, r := range all {
			if !r[opsNote].IsNull() {
				nn++
			}
		}
		n, _, err = tx.Count(tb, CountOptions{ScanOptions: sc.o, Column: "note"})
		require.NoError(t, err)
		require.EqualValues(t, nn, n, sc.String())
	}
}

func TestOpsModel(t *testing.T) {
	seed := *opsSeedFlag
	if seed == 0 {
		seed = 3
	}
	t.Logf("seed %d (-engine.opsseed)", seed)
	// Single-version heaps in both update modes, and versioned heaps
	// (whose updates write a new version whatever the mode says).
	for _, v := range []struct {
		mode     HeapUpdate
		versions HeapVersioning
	}{{InPlace, HeapVersionsOff}, {NewVersion, HeapVersionsOff}, {InPlace, HeapVersionsOn}} {
		mode := v.mode
		for _, org := range opsOrgs {
			t.Run(fmt.Sprintf("%s/mode=%d/versions=%s", org, mode, v.versions), func(t *testing.T) {
				db, err := Open(&Options{Options: cache.Options{PoolSize: 8 << 20}, PageSize: 4096, HeapUpdate: mode, HeapVersions: v.versions})
				require.NoError(t, err)
				defer db.Close()
				tb, model := opsLoad(t, db, org)
				opsCheck(t, db, tb, model, false)

				rng := rand.New(rand.NewPCG(seed, 0))
				pick := func() [2]int64 {
					keys := make([][2]int64, 0, len(model))
					for k := range model {
						keys = append(keys, k)
					}
					slices.SortFunc(keys, func(a, b [2]int64) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
					return keys[rng.IntN(len(keys))]
				}
				nextK := int64(5000)
				var m Meter
				tx := db.Begin(&m)
				for range 300 {
					switch op := rng.IntN(10); {
					case op < 3: // a non-indexed column: grow, shrink or NULL
						k := pick()
						v := Null
						if rng.IntN(4) > 0 {
							v = Str(strings.Repeat(string(rune('a'+rng.IntN(26))), rng.IntN(301)))
						}
						require.NoError(t, tx.Update(tb, []Value{Int(k[0]), Int(k[1])}, []Set{{"note", v}}))
						model[k][opsNote] = v
					case op < 5: // an indexed column, with the other
						k := pick()
						bal := Dec(int64(rng.IntN(4000) - 2000))
						name := Str(fmt.Sprintf("n%02d", rng.IntN(6)))
						require.NoError(t, tx.Update(tb, []Value{Int(k[0]), Int(k[1])}, []Set{{"bal", bal}, {"name", name}}))
						model[k][opsBal], model[k][opsName] = bal, name
					case op < 6: // the unique column
						k := pick()
						nextK++
						require.NoError(t, tx.Update(tb, []Value{Int(k[0]), Int(k[1])}, []Set{{"k", Int(nextK)}}))
						model[k][opsK] = Int(nextK)
					case op < 8:
						if len(model) > 10 {
							k := pick()
							require.NoError(t, tx.Delete(tb, []Value{Int(k[0]), Int(k[1])}))
							delete(model, k)
							require.ErrorIs(t, tx.Delete(tb, []Value{Int(k[0]), Int(k[1])}), ErrNotFound)
						}
					default:
						k := [2]int64{int64(rng.IntN(5)), int64(rng.IntN(41))}
						nextK++
						row := opsRow(k[0], k[1])
						row[opsK] = Int(nextK)
						err := tx.Insert(tb, row)
						if _, ok := model[k]; ok {
							require.ErrorIs(t, err, ErrDuplicateKey)
						} else {
							require.NoError(t, err)
							model[k] = row
						}
					}
				}
				require.NoError(t, tx.Commit())
				if org != Clustered && mode == InPlace && !tb.Versioned() {
					require.Positive(t, m.HeapMoves, "the workload should move rows: %s", m.String())
				}
				opsCheck(t, db, tb, model, true)
			})
		}
	}
}

// An update that names a unique column with the value it already has must
// succeed and, the entry being unchanged, need not rewrite it.
func TestOpsUpdateUniqueColumnToItsOwnValue(t *testing.T) {
	for _, org := range opsOrgs {
		t.Run(org.String(), func(t *testing.T) {
			db, err := Open(&Options{Options: cache.Options{PoolSize: 4 << 20}})
			require.NoError(t, err)
			defer db.Close()
			tb, _ := opsLoad(t, db, org)
			tx := db.Begin(nil)
			defer tx.Commit()
			err = tx.Update(tb, []Value{Int(1), Int(1)}, []Set{{"k", Int(101)}, {"note", Str("x")}})
			require.NoError(t, err)
			row, found, err := tx.Get(tb, []Value{Int(1), Int(1)}, nil)
			require.NoError(t, err)
			require.True(t, found)
			require.Equal(t, Str("x"), row[opsNote])
		})
	}
}

// Scan's Columns may list columns in any order.
func TestOpsScanColumnsInAnyOrder(t *testing.T) {
	for _, org := range opsOrgs {
		t.Run(org.String(), func(t *testing.T) {
			db, err := Open(&Options{Options: cache.Options{PoolSize: 4 << 20}})
			require.NoError(t, err)
			defer db.Close()
			tb, model := opsLoad(t, db, org)
			tx := db.Begin(nil)
			defer tx.Commit()
			var got []Row
			cur, err := tx.Scan(tb, ScanOptions{Lower: []Value{Int(2), Int(3)}, Upper: []Value{Int(2), Int(3)},
				Columns: []string{"note", "k"}})
			require.NoError(t, err)
			for cur.Next() {
				got = append(got, costClone(cur.Row()))
			}
			require.NoError(t, cur.Close())
			want := model[[2]int64{2, 3}]
			require.Equal(t, []Row{{Null, Null, want[opsK], Null, Null, want[opsNote]}}, got)
		})
	}
}

// A row whose secondary index key is too large for the index (a string of
// zero bytes doubles in a key) must be refused before anything is written.
func TestOpsOversizedSecondaryKeyChangesNothing(t *testing.T) {
	for _, org := range opsOrgs {
		t.Run(org.String(), func(t *testing.T) {
			db, err := Open(&Options{Options: cache.Options{PoolSize: 4 << 20}})
			require.NoError(t, err)
			defer db.Close()
			tb, err := db.CreateTable(Table{Name: "big_" + org.String(), Org: org,
				Columns:    []Column{{Name: "id", Type: TypeInt}, {Name: "s", Type: TypeVarchar, Length: 4096}},
				PrimaryKey: []string{"id"},
				Indexes:    []Index{{Name: "ix_s", Columns: []string{"s"}}}})
			require.NoError(t, err)
			tx := db.Begin(nil)
			defer tx.Commit()
			require.NoError(t, tx.Insert(tb, Row{Int(1), Str("a")}))
			before := opsSnapshot(t, tb)
			zeros := Str(strings.Repeat("\x00", 2100)) // a 2,106-byte row, a 4,200-byte key
			errInsert := tx.Insert(tb, Row{Int(2), zeros})
			errUpdate := tx.Update(tb, []Value{Int(1)}, []Set{{"s", zeros}})
			after := opsSnapshot(t, tb)
			require.ErrorIs(t, errInsert, ErrBadValue)
			require.ErrorIs(t, errUpdate, ErrBadValue)
			require.Contains(t, errInsert.Error(), tb.Name())
			require.Equal(t, before, after)
		})
	}
}
