package engine

import (
	"bytes"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/enginelab/enginelab/cache"
	"github.com/stretchr/testify/require"
)

var (
	metaSeedFlag = flag.Uint64("engine.metaseed", 20261130, "seed of TestMetamorphic")
	metaOpsFlag  = flag.Int("engine.metaops", 2000, "operations per run of TestMetamorphic")
)

// The metamorphic test replays one seeded random sequence of operations on
// the same table declared in the three organizations, in one database, and
// on a reference model (a map of rows), and requires every operation to
// give the same result everywhere: the same error class, found or not,
// the same rows. At checkpoints and at the end, a full scan of every index
// gives the model's rows and Check passes. It runs twice: heap updates in
// place, and always as a new row version.
//
// Rows through a non-unique index (and the NULLs of a unique one) come in
// a different order in HeapRowPointer: entries with equal columns are
// ordered by row pointer there and by primary key elsewhere. So Clustered
// and HeapPrimaryKey must return exactly the model's sequence, and
// HeapRowPointer the same sequence up to the order within each run of
// equal index columns (with a limit that cuts a run, any rows of that run).
//
// Scan rows are compared whole: a row shows the wanted columns and NULL
// elsewhere, on every path (TestScanRowShowsOnlyWantedColumns).
func TestMetamorphic(t *testing.T) {
	skipUnderRace(t)
	seed := *metaSeedFlag
	t.Logf("seed %d (rerun with -engine.metaseed=%d)", seed, seed)
	for _, run := range []struct {
		mode     HeapUpdate
		rewrite  bool
		versions HeapVersioning
	}{{InPlace, false, HeapVersionsOff}, {NewVersion, false, HeapVersionsOff}, {InPlace, true, HeapVersionsOff}, {InPlace, false, HeapVersionsOn}} {
		t.Run(fmt.Sprintf("update=%d/rewrite=%v/versions=%s", run.mode, run.rewrite, run.versions), func(t *testing.T) {
			runMetamorphic(t, seed, Options{HeapUpdate: run.mode, CountRewrite: run.rewrite, HeapVersions: run.versions}, *metaOpsFlag)
		})
	}
}

// metaTable is the table under test. The primary key (k1, k2) is not in
// the leading columns, ix_name is a non-unique index on a string and a
// decimal, ix_u a unique index on a nullable int, and note a nullable
// string that grows so that heap rows move.
func metaTable(org Org) Table {
	return Table{
		Name: "meta_" + org.String(),
		Org:  org,
		Columns: []Column{
			{Name: "name", Type: TypeVarchar, Length: 24},
			{Name: "k1", Type: TypeInt},
			{Name: "amount", Type: TypeDecimal, Scale: 2},
			{Name: "u", Type: TypeInt, Nullable: true},
			{Name: "k2", Type: TypeInt},
			{Name: "note", Type: TypeVarchar, Length: 700, Nullable: true},
		},
		PrimaryKey: []string{"k1", "k2"},
		Indexes: []Index{
			{Name: "ix_name", Columns: []string{"name", "amount"}},
			{Name: "ix_u", Columns: []string{"u"}, Unique: true},
		},
	}
}

// Column positions in metaTable.
const (
	mName, mK1, mAmount, mU, mK2, mNote = 0, 1, 2, 3, 4, 5
	mCols                               = 6
)

// metaIndexes are the indexes of metaTable and their columns.
var metaIndexes = []struct {
	name string
	cols []int
}{
	{"", []int{mK1, mK2}},
	{"ix_name", []int{mName, mAmount}},
	{"ix_u", []int{mU}},
}

var metaColumns = metaTable(Clustered).Columns

// Operations.
const (
	opInsert = iota
	opUpdate
	opDelete
	opGet
	opScan
	opCount
)

var opNames = [...]string{"insert", "update", "delete", "get", "scan", "count"}

type metaOp struct {
	kind  int
	row   Row     // insert
	pk    []Value // update, delete, get
	set   []Set   // update
	ix    int     // scan, count: position in metaIndexes
	scan  ScanOptions
	count string // count: the counted column
}

func (op *metaOp) String() string {
	var b strings.Builder
	b.WriteString(opNames[op.kind])
	switch op.kind {
	case opInsert:
		fmt.Fprintf(&b, " %s", formatRow(op.row, nil))
	case opUpdate:
		fmt.Fprintf(&b, " pk=%s set", formatVals(op.pk))
		for _, s := range op.set {
			c := slices.IndexFunc(metaColumns, func(c Column) bool { return c.Name == s.Column })
			fmt.Fprintf(&b, " %s=%s", s.Column, shortFormat(c, s.Value))
		}
	case opDelete, opGet:
		fmt.Fprintf(&b, " pk=%s", formatVals(op.pk))
	case opScan, opCount:
		o := op.scan
		fmt.Fprintf(&b, " index=%q lower=%s excl=%v upper=%s excl=%v reverse=%v limit=%d columns=%q count=%q",
			o.Index, formatVals(o.Lower), o.LowerExclusive, formatVals(o.Upper), o.UpperExclusive,
			o.Reverse, o.Limit, o.Columns, op.count)
	}
	return b.String()
}

func formatVals(vs []Value) string {
	if vs == nil {
		return "-"
	}
	s := make([]string, len(vs))
	for i, v := range vs {
		if v.B != nil {
			s[i] = fmt.Sprintf("%q", v.B)
		} else {
			s[i] = v.Format(TypeInt, 0)
		}
	}
	return "(" + strings.Join(s, ",") + ")"
}

// shortFormat formats a value of column c, long strings by their length.
func shortFormat(c int, v Value) string {
	if len(v.B) > 30 {
		return fmt.Sprintf("%q…(%d bytes)", v.B[:30], len(v.B))
	}
	col := metaColumns[c]
	return v.Format(col.Type, col.Scale)
}

// formatRow renders the columns of row that want lists (nil: all) as a
// string, so rows compare as strings: a missing column prints as NULL.
// (It is on the test's hot path: no fmt.)
func formatRow(row Row, want []int) string {
	b := make([]byte, 0, 128)
	for c := range metaColumns {
		if want != nil && !slices.Contains(want, c) {
			continue
		}
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = append(b, metaColumns[c].Name...)
		b = append(b, '=')
		v := row[c]
		switch {
		case v.IsNull():
			b = append(b, "NULL"...)
		case len(v.B) > 30:
			// Long notes: a prefix, the length and a digest.
			b = strconv.AppendQuote(b, string(v.B[:30]))
			b = append(b, "…("...)
			b = strconv.AppendInt(b, int64(len(v.B)), 10)
			b = append(b, " bytes, sum "...)
			b = strconv.AppendUint(b, uint64(crc32.ChecksumIEEE(v.B)), 16)
			b = append(b, ')')
		case v.B != nil:
			b = strconv.AppendQuote(b, string(v.B))
		default:
			b = strconv.AppendInt(b, v.I, 10)
		}
	}
	return string(b)
}

// metaResult is what one operation returned.
type metaResult struct {
	err   string   // error class
	found bool     // get
	rows  []string // get, scan: rows as formatRow renders them
	n     int64    // count
}

func errClass(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, ErrDuplicateKey):
		return "duplicate"
	case errors.Is(err, ErrNotFound):
		return "not found"
	case errors.Is(err, ErrPrimaryKeyUpdate):
		return "primary key update"
	case errors.Is(err, ErrBadValue):
		return "bad value"
	}
	return "unexpected: " + err.Error()
}

// wantCols resolves a scan's column list (nil: all).
func wantCols(names []string) []int {
	if names == nil {
		return nil
	}
	want := []int{}
	for _, n := range names {
		want = append(want, slices.IndexFunc(metaColumns, func(c Column) bool { return c.Name == n }))
	}
	return want
}

// apply runs op on table tb.
func (op *metaOp) apply(t *testing.T, tx *Tx, tb *TableHandle) metaResult {
	var r metaResult
	var err error
	switch op.kind {
	case opInsert:
		err = tx.Insert(tb, op.row)
	case opUpdate:
		err = tx.Update(tb, op.pk, op.set)
	case opDelete:
		err = tx.Delete(tb, op.pk)
	case opGet:
		var row Row
		row, r.found, err = tx.Get(tb, op.pk, nil)
		if r.found {
			r.rows = []string{formatRow(row, nil)}
		}
	case opScan:
		var cur *Cursor
		cur, err = tx.Scan(tb, op.scan)
		if err == nil {
			for cur.Next() {
				// The whole row: unwanted columns must be NULL on every
				// path, so they compare too.
				r.rows = append(r.rows, formatRow(cur.Row(), nil))
			}
			err = cur.Close()
			if p := cur.Path(); p.Index != cmp.Or(op.scan.Index, "PRIMARY") {
				t.Fatalf("%s: scan of %q says it took index %q", tb.Name(), op.scan.Index, p.Index)
			}
		}
	case opCount:
		r.n, _, err = tx.Count(tb, CountOptions{ScanOptions: op.scan, Column: op.count})
	}
	r.err = errClass(err)
	return r
}

// project returns row with the columns not in want (nil: all) NULL.
func project(row Row, want []int) Row {
	if want == nil {
		return row
	}
	p := make(Row, len(row))
	for _, c := range want {
		p[c] = row[c]
	}
	return p
}

// metaModel is the reference: the rows by primary key.
type metaModel struct {
	rows map[[2]int64]Row
	// keys lists the keys of rows in an order that depends only on the
	// operations applied (not on map iteration), for the generator.
	keys []([2]int64)
	pos  map[[2]int64]int // index of each key in keys
}

func newMetaModel() *metaModel {
	return &metaModel{rows: map[[2]int64]Row{}, pos: map[[2]int64]int{}}
}

func (m *metaModel) put(k [2]int64, row Row) {
	if _, ok := m.rows[k]; !ok {
		m.pos[k] = len(m.keys)
		m.keys = append(m.keys, k)
	}
	m.rows[k] = cloneRow(row)
}

func (m *metaModel) remove(k [2]int64) {
	i := m.pos[k]
	last := m.keys[len(m.keys)-1]
	m.keys[i], m.pos[last] = last, i
	m.keys = m.keys[:len(m.keys)-1]
	delete(m.pos, k)
	delete(m.rows, k)
}

func pkOf(vals []Value) [2]int64 { return [2]int64{vals[0].I, vals[1].I} }

func (m *metaModel) sorted() []Row {
	rows := make([]Row, 0, len(m.rows))
	for _, r := range m.rows {
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b Row) int { return cmpCols(a, b, metaIndexes[0].cols) })
	return rows
}

func cmpValue(c int, a, b Value) int {
	switch {
	case a.IsNull() && b.IsNull():
		return 0
	case a.IsNull():
		return -1
	case b.IsNull():
		return 1
	case metaColumns[c].Type.isString():
		return bytes.Compare(a.B, b.B)
	}
	return cmp.Compare(a.I, b.I)
}

func cmpCols(a, b Row, cols []int) int {
	for _, c := range cols {
		if r := cmpValue(c, a[c], b[c]); r != 0 {
			return r
		}
	}
	return 0
}

// cmpPrefix compares the first len(vals) columns of cols in row with vals.
func cmpPrefix(row Row, cols []int, vals []Value) int {
	for i, v := range vals {
		if r := cmpValue(cols[i], row[cols[i]], v); r != 0 {
			return r
		}
	}
	return 0
}

// valid reports the error class of a row or changes that do not fit the
// schema, or "".
func metaCheck(c int, v Value) string {
	if err := checkValue("meta", &metaColumns[c], v); err != nil {
		return errClass(err)
	}
	return ""
}

func (m *metaModel) uniqueTaken(u Value, except [2]int64) bool {
	if u.IsNull() {
		return false
	}
	for k, r := range m.rows {
		if k != except && !r[mU].IsNull() && r[mU].I == u.I {
			return true
		}
	}
	return false
}

// apply runs op on the model. For a scan it also returns the matching rows
// (before the limit) in index order, for HeapRowPointer's comparison.
func (m *metaModel) apply(op *metaOp) (metaResult, []Row) {
	var r metaResult
	switch op.kind {
	case opInsert:
		for c, v := range op.row {
			if e := metaCheck(c, v); e != "" {
				r.err = e
				return r, nil
			}
		}
		k := [2]int64{op.row[mK1].I, op.row[mK2].I}
		if _, ok := m.rows[k]; ok || m.uniqueTaken(op.row[mU], k) {
			r.err = "duplicate"
			return r, nil
		}
		m.put(k, op.row)
	case opUpdate:
		for _, s := range op.set {
			c := slices.IndexFunc(metaColumns, func(c Column) bool { return c.Name == s.Column })
			if c == mK1 || c == mK2 {
				r.err = "primary key update"
				return r, nil
			}
			if e := metaCheck(c, s.Value); e != "" {
				r.err = e
				return r, nil
			}
		}
		k := pkOf(op.pk)
		old, ok := m.rows[k]
		if !ok {
			r.err = "not found"
			return r, nil
		}
		row := cloneRow(old)
		for _, s := range op.set {
			c := slices.IndexFunc(metaColumns, func(c Column) bool { return c.Name == s.Column })
			row[c] = s.Value
			if c == mU && m.uniqueTaken(s.Value, k) {
				r.err = "duplicate"
				return r, nil
			}
		}
		m.put(k, row)
	case opDelete:
		k := pkOf(op.pk)
		if _, ok := m.rows[k]; !ok {
			r.err = "not found"
			return r, nil
		}
		m.remove(k)
	case opGet:
		if row, ok := m.rows[pkOf(op.pk)]; ok {
			r.found = true
			r.rows = []string{formatRow(row, nil)}
		}
	case opScan, opCount:
		rows := m.inRange(op)
		want := wantCols(op.scan.Columns)
		if op.kind == opCount {
			c := slices.IndexFunc(metaColumns, func(c Column) bool { return c.Name == op.count })
			for _, row := range rows {
				if c < 0 || !row[c].IsNull() {
					r.n++
				}
			}
		} else {
			for i, row := range rows {
				if op.scan.Limit > 0 && i == op.scan.Limit {
					break
				}
				r.rows = append(r.rows, formatRow(project(row, want), nil))
			}
		}
		r.err = "ok"
		return r, rows
	}
	r.err = "ok"
	return r, nil
}

// inRange returns the model's rows within op's scan bounds, in the order of
// op's index (ties by primary key), reversed for a reverse scan.
func (m *metaModel) inRange(op *metaOp) []Row {
	o := &op.scan
	cols := metaIndexes[op.ix].cols
	var rows []Row
	for _, row := range m.rows {
		if o.Lower != nil {
			if c := cmpPrefix(row, cols, o.Lower); c < 0 || (c == 0 && o.LowerExclusive) {
				continue
			}
		}
		if o.Upper != nil {
			if c := cmpPrefix(row, cols, o.Upper); c > 0 || (c == 0 && o.UpperExclusive) {
				continue
			}
		}
		rows = append(rows, row)
	}
	slices.SortFunc(rows, func(a, b Row) int {
		return cmp.Or(cmpCols(a, b, cols), cmpCols(a, b, metaIndexes[0].cols))
	})
	if o.Reverse {
		slices.Reverse(rows)
	}
	return rows
}

// sameUpToTies checks got against the model's rows of a scan (all matches,
// in index order, before the limit): run by run of equal index columns,
// the same rows in any order; a run the limit cut, any of its rows.
func sameUpToTies(op *metaOp, all []Row, got []string) error {
	cols := metaIndexes[op.ix].cols
	want := wantCols(op.scan.Columns)
	limit := len(all)
	if op.scan.Limit > 0 && op.scan.Limit < limit {
		limit = op.scan.Limit
	}
	if len(got) != limit {
		return fmt.Errorf("%d rows, want %d", len(got), limit)
	}
	for i := 0; i < limit; {
		j := i + 1
		for j < len(all) && cmpCols(all[i], all[j], cols) == 0 {
			j++
		}
		run := make([]string, 0, j-i)
		for _, row := range all[i:j] {
			run = append(run, formatRow(project(row, want), nil))
		}
		part := slices.Clone(got[i:min(j, limit)])
		slices.Sort(run)
		slices.Sort(part)
		if j <= limit {
			if !slices.Equal(run, part) {
				return fmt.Errorf("rows %d..%d are %q, want %q in any order", i, j-1, part, run)
			}
		} else {
			for _, s := range part {
				k, ok := slices.BinarySearch(run, s)
				if !ok {
					return fmt.Errorf("row %q in the last %d rows is not among %q", s, len(part), run)
				}
				run = slices.Delete(run, k, k+1)
			}
		}
		i = j
	}
	return nil
}

// metaGen generates operations against the model's current rows.
type metaGen struct {
	r *rand.Rand
	m *metaModel
}

var metaNames = []string{"", "a", "a\x00", "a\x00b", "ab", "alice", "bob", "bob", "carol", "dave", "zz", "\xff"}

func (g *metaGen) name() Value { return Str(metaNames[g.r.IntN(len(metaNames))]) }

func (g *metaGen) amount() Value { return Dec(int64(g.r.IntN(9)-4) * 125) }

func (g *metaGen) u() Value {
	if g.r.IntN(4) == 0 {
		return Null
	}
	return Int(int64(g.r.IntN(1000)))
}

func (g *metaGen) note() Value {
	switch g.r.IntN(6) {
	case 0:
		return Null
	case 1, 2, 3:
		// Long enough that a row growing into it moves off a full page.
		n := 200 + g.r.IntN(490)
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + g.r.IntN(26))
		}
		return Bytes(b)
	}
	return Str(strings.Repeat("n", g.r.IntN(12)))
}

// existing returns a random row of the model, or nil.
func (g *metaGen) existing() Row {
	if len(g.m.keys) == 0 {
		return nil
	}
	return g.m.rows[g.m.keys[g.r.IntN(len(g.m.keys))]]
}

// pk returns a primary key: usually an existing row's.
func (g *metaGen) pk(existing int) []Value {
	if row := g.existing(); row != nil && g.r.IntN(100) < existing {
		return []Value{row[mK1], row[mK2]}
	}
	return []Value{Int(int64(g.r.IntN(8))), Int(int64(g.r.IntN(100)))}
}

// value returns a value for column c: from an existing row half the time.
func (g *metaGen) value(c int) Value {
	if row := g.existing(); row != nil && g.r.IntN(2) == 0 {
		return row[c]
	}
	switch c {
	case mName:
		return g.name()
	case mAmount:
		return g.amount()
	case mU:
		return g.u()
	case mK1:
		return Int(int64(g.r.IntN(10) - 1))
	case mK2:
		return Int(int64(g.r.IntN(102) - 1))
	}
	return g.note()
}

func (g *metaGen) next() *metaOp {
	r := g.r
	op := &metaOp{}
	switch p := r.IntN(100); {
	case p < 30:
		op.kind = opInsert
		pk := g.pk(20) // 20%: a duplicate primary key
		op.row = Row{g.name(), pk[0], g.amount(), g.u(), pk[1], g.note()}
		if r.IntN(100) == 0 {
			op.row[mName] = Str(strings.Repeat("x", 25)) // too long
		}
	case p < 55:
		op.kind = opUpdate
		op.pk = g.pk(90)
		cols := []int{mName, mAmount, mU, mNote}
		r.Shuffle(len(cols), func(i, j int) { cols[i], cols[j] = cols[j], cols[i] })
		for _, c := range cols[:1+r.IntN(len(cols))] {
			v := g.value(c)
			if c == mNote && r.IntN(2) == 0 {
				v = g.note() // grow (or shrink) the row
			}
			op.set = append(op.set, Set{Column: metaColumns[c].Name, Value: v})
		}
		if old, ok := g.m.rows[pkOf(op.pk)]; ok && r.IntN(8) == 0 {
			// Set a column, maybe a unique one, to the value it has.
			op.set[0].Value = old[slices.IndexFunc(metaColumns, func(c Column) bool { return c.Name == op.set[0].Column })]
		}
		switch r.IntN(100) {
		case 0:
			op.set = append(op.set, Set{Column: "k2", Value: Int(1)})
		case 1:
			op.set[0] = Set{Column: "amount", Value: Str("x")} // wrong type
		}
	case p < 65:
		op.kind = opDelete
		op.pk = g.pk(75)
	case p < 76:
		op.kind = opGet
		op.pk = g.pk(75)
	default:
		op.kind = opScan
		if p >= 95 {
			op.kind = opCount
		}
		op.ix = r.IntN(len(metaIndexes))
		cols := metaIndexes[op.ix].cols
		o := &op.scan
		o.Index = metaIndexes[op.ix].name
		bound := func() []Value {
			if r.IntN(3) == 0 {
				return nil
			}
			vals := make([]Value, 1+r.IntN(len(cols)))
			for i := range vals {
				vals[i] = g.value(cols[i])
			}
			return vals
		}
		o.Lower, o.LowerExclusive = bound(), r.IntN(2) == 0
		o.Upper, o.UpperExclusive = bound(), r.IntN(2) == 0
		if o.Lower != nil && o.Upper != nil && r.IntN(3) == 0 {
			o.Upper = slices.Clone(o.Lower) // an equality range, or an empty one
		}
		o.Reverse = r.IntN(2) == 0
		if r.IntN(2) == 0 {
			o.Limit = 1 + r.IntN(12)
		}
		if r.IntN(4) != 0 {
			// Any subset, in any order; rows come back in schema order.
			o.Columns = []string{}
			for _, c := range r.Perm(mCols) {
				if r.IntN(3) == 0 {
					o.Columns = append(o.Columns, metaColumns[c].Name)
				}
			}
		}
		op.count = []string{"", "*", "u", "note", "name", "k2"}[r.IntN(6)]
	}
	return op
}

func runMetamorphic(t *testing.T, seed uint64, o Options, nops int) {
	mode := o.HeapUpdate
	// 64 frames of 4 KiB for three tables of a few hundred rows (about
	// 80 pages): a thousand evictions and store reads per table and run.
	// (A smaller pool evicts more but slows the race build down, where
	// every store read records a stack in pebble's invariant checks.)
	o.PageSize, o.PoolSize = 4096, 64*4096
	db, err := Open(&o)
	require.NoError(t, err)
	defer db.Close()
	tables := make([]*TableHandle, len(allOrgs))
	meters := make([]Meter, len(allOrgs))
	txs := make([]*Tx, len(allOrgs))
	for i, org := range allOrgs {
		tables[i], err = db.CreateTable(metaTable(org))
		require.NoError(t, err)
		txs[i] = db.Begin(&meters[i])
	}
	model := newMetaModel()
	gen := &metaGen{r: rand.New(rand.NewPCG(seed, uint64(mode))), m: model}
	classes := map[string]int{}

	checkpoint := func(step int) {
		t.Helper()
		for i, tb := range tables {
			require.NoError(t, txs[i].Commit())
			txs[i] = db.Begin(&meters[i])
			require.NoError(t, tb.Check(txs[i]), "op %d: %s", step, tb.Name())
		}
		for ix := range metaIndexes {
			op := &metaOp{kind: opScan, ix: ix, scan: ScanOptions{Index: metaIndexes[ix].name}}
			want, all := model.apply(op)
			for i, tb := range tables {
				got := op.apply(t, txs[i], tb)
				require.Equal(t, "ok", got.err)
				if tb.Org() == HeapRowPointer {
					require.NoError(t, sameUpToTies(op, all, got.rows), "op %d: full scan of %s", step, tb.Name())
				} else {
					require.Equal(t, want.rows, got.rows, "op %d: full scan of %s", step, tb.Name())
				}
			}
		}
	}

	for step := range nops {
		op := gen.next()
		want, all := model.apply(op)
		classes[opNames[op.kind]+" "+want.err]++
		for i, tb := range tables {
			got := op.apply(t, txs[i], tb)
			where := fmt.Sprintf("seed %d, op %d, %s: %s", seed, step, tb.Name(), op)
			require.Equal(t, want.err, got.err, where)
			require.Equal(t, want.found, got.found, where)
			require.Equal(t, want.n, got.n, where)
			if op.kind == opScan && tb.Org() == HeapRowPointer {
				require.NoError(t, sameUpToTies(op, all, got.rows), where)
			} else {
				require.Equal(t, want.rows, got.rows, where)
			}
		}
		if (step+1)%500 == 0 {
			checkpoint(step)
		}
	}
	checkpoint(nops)

	// The run did what it is meant to: rows in the table, every error
	// class met, a pool that evicted, heap rows that moved.
	t.Logf("%d rows at the end; results: %v", len(model.rows), classes)
	for _, c := range []string{"insert ok", "insert duplicate", "update ok", "update duplicate", "update not found", "delete ok", "delete not found"} {
		require.Positive(t, classes[c], "no %q in the run", c)
	}
	for i, tb := range tables {
		m := &meters[i]
		require.Positive(t, m.Evictions, "%s: the pool never evicted: %s", tb.Name(), m.String())
		if tb.Org() != Clustered && mode == InPlace && !tb.Versioned() {
			require.Positive(t, m.HeapMoves, "%s: no heap row moved", tb.Name())
		}
	}
}

// TestScanRowShowsOnlyWantedColumns: the same scan returns the same row in
// every organization, whether it was index-only or fetched the row.
func TestScanRowShowsOnlyWantedColumns(t *testing.T) {
	for _, org := range allOrgs {
		t.Run(org.String(), func(t *testing.T) {
			db, err := Open(&Options{PageSize: 4096, Options: cache.Options{PoolSize: 64 * 4096}})
			require.NoError(t, err)
			defer db.Close()
			tb, err := db.CreateTable(metaTable(org))
			require.NoError(t, err)
			tx := db.Begin(nil)
			require.NoError(t, tx.Insert(tb, Row{Str("a"), Int(1), Dec(100), Int(7), Int(2), Str("n")}))

			// Cursor.Row shows the wanted columns and NULL elsewhere, so
			// the same scan returns the same row in every organization,
			// index-only or not.
			t.Run("index-only scan leaves unwanted columns NULL", func(t *testing.T) {
				for _, ix := range []string{"", "ix_u"} {
					cur, err := tx.Scan(tb, ScanOptions{Index: ix, Columns: []string{"k2"}})
					require.NoError(t, err)
					require.True(t, cur.Next())
					require.Equal(t, Row{Null, Null, Null, Null, Int(2), Null}, cur.Row(), "index %q path %+v", ix, cur.Path())
					require.NoError(t, cur.Close())
				}
			})
			require.NoError(t, tx.Commit())

			// A consistent read of a committed row, with no column
			// wanted: a secondary entry its view trusts is read
			// index-only, and must still show no column.
			t.Run("consistent read with no column wanted", func(t *testing.T) {
				rd := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
				defer rd.Rollback()
				for _, ix := range []string{"", "ix_u", "ix_name"} {
					for _, reverse := range []bool{false, true} {
						cur, err := rd.Scan(tb, ScanOptions{Index: ix, Columns: []string{}, Reverse: reverse})
						require.NoError(t, err)
						require.True(t, cur.Next())
						require.Equal(t, Row{Null, Null, Null, Null, Null, Null}, cur.Row(), "index %q reverse %v path %+v", ix, reverse, cur.Path())
						require.NoError(t, cur.Close())
					}
				}
			})
		})
	}
}
