package tpcc

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/enginelab/enginelab/engine"
	"github.com/stretchr/testify/require"
)

// exportWant is the test's own rendering of a value, to compare with what
// encoding/csv reads back from an exported field: the engine's formatter for
// decimals, time.Format for timestamps, the bytes for texts, "" for NULL.
func exportWant(v engine.Value, c engine.Column) string {
	switch {
	case v.IsNull():
		return ""
	case c.Type == engine.TypeDecimal:
		return v.Format(engine.TypeDecimal, c.Scale)
	case c.Type == engine.TypeTimestamp:
		return time.UnixMicro(v.I).UTC().Format("2006-01-02 15:04:05.000000")
	case c.Type == engine.TypeChar || c.Type == engine.TypeVarchar:
		return string(v.B)
	default:
		return strconv.FormatInt(v.I, 10)
	}
}

func exportColumnNames(def engine.Table) []string {
	names := make([]string, len(def.Columns))
	for i, c := range def.Columns {
		names[i] = c.Name
	}
	return names
}

// TestExportLoaded exports the shared W=1 database and reads every file
// back: the nine files, their headers, a row per row of the table (counted
// just before), strictly ascending primary keys, and every field equal to
// the test's rendering of the engine's row (under the race detector, for
// WAREHOUSE, DISTRICT, ORDERS and NEW_ORDER only).
func TestExportLoaded(t *testing.T) {
	skipUnderRace(t)
	db := loadOrg(t, engine.Clustered)
	want := make(map[string]int64)
	var wantTotal int64
	for _, name := range TableNames {
		h, err := db.Table(name)
		require.NoError(t, err)
		want[name] = count(t, db, h)
		wantTotal += want[name]
	}

	dir := filepath.Join(t.TempDir(), "csv", "w1") // two levels to create
	var calls []string
	start := time.Now()
	stats, err := Export(db, dir, ExportConfig{Workers: 1, Progress: func(table string, rows int64) {
		calls = append(calls, fmt.Sprintf("%s=%d", table, rows))
	}})
	require.NoError(t, err)
	t.Logf("exported %d rows, %d bytes in %v", stats.TotalRows, stats.Bytes, time.Since(start))

	var wantCalls, wantFiles []string
	for _, name := range TableNames {
		wantCalls = append(wantCalls, fmt.Sprintf("%s=%d", name, want[name]))
		wantFiles = append(wantFiles, name+".csv")
	}
	require.Equal(t, wantCalls, calls, "one Progress call per table, in TableNames order")
	require.Equal(t, want, stats.Rows)
	require.Equal(t, wantTotal, stats.TotalRows)

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	slices.Sort(wantFiles)
	require.Equal(t, wantFiles, files)

	var size int64
	for _, def := range Tables(engine.Clustered) {
		path := filepath.Join(dir, def.Name+".csv")
		fi, err := os.Stat(path)
		require.NoError(t, err)
		size += fi.Size()
		// Under the race detector, scanning the big tables again costs a
		// minute; their files are still checked for header, rows and
		// key order.
		fields := !raceEnabled || slices.Contains([]string{Warehouse, District, Orders, NewOrder}, def.Name)
		exportCompareTable(t, db, def, path, want[def.Name], fields)
	}
	require.Equal(t, size, stats.Bytes)
}

// exportCompareTable reads path with encoding/csv and checks its header,
// its rows' count and their strictly ascending primary keys; with fields,
// it reads the file alongside a primary-key scan of def's table and
// compares every field too.
func exportCompareTable(t *testing.T, db *engine.DB, def engine.Table, path string, wantRows int64, fields bool) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r := csv.NewReader(bufio.NewReader(f))
	r.FieldsPerRecord = len(def.Columns)
	header, err := r.Read()
	require.NoError(t, err, "%s: header", def.Name)
	require.Equal(t, exportColumnNames(def), header, "%s: header", def.Name)
	r.ReuseRecord = true

	var pk []int
	for _, name := range def.PrimaryKey {
		pk = append(pk, slices.Index(exportColumnNames(def), name))
	}
	var (
		rows      int64
		prev, key []int64
		problems  []string
	)
	report := func(format string, args ...any) {
		if len(problems) < 5 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	// next reads the next record and checks its key; it returns nil at
	// the end of the file or on a read error.
	next := func() []string {
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		rows++
		if err != nil {
			report("row %d: %v", rows, err)
			return nil
		}
		key = key[:0]
		for _, p := range pk {
			v, err := strconv.ParseInt(rec[p], 10, 64)
			if err != nil {
				report("row %d: key column %d: %v", rows, p, err)
			}
			key = append(key, v)
		}
		if prev != nil && slices.Compare(prev, key) >= 0 {
			report("row %d: key %v after %v", rows, key, prev)
		}
		prev = append(prev[:0], key...)
		return rec
	}
	if fields {
		var engineRows int64
		// No require inside the scan: it would leave the shared
		// database's transaction open, and its locks held.
		scan(t, db, def.Name, func(row engine.Row) {
			engineRows++
			rec := next()
			if rec == nil {
				report("engine row %d: not in the file", engineRows)
				return
			}
			for i, c := range def.Columns {
				if w := exportWant(row[i], c); rec[i] != w {
					report("row %d column %s: file %q, engine %q", rows, c.Name, rec[i], w)
				}
			}
		})
		require.Equal(t, wantRows, engineRows, "%s: rows scanned", def.Name)
	}
	for next() != nil {
	}
	require.Empty(t, problems, "%s", def.Name)
	require.Equal(t, wantRows, rows, "%s: rows in the file", def.Name)
}

// exportTinyDB creates the nine tables and a few hand-made rows: texts that
// need quoting, NULLs, decimals of both scales, timestamps, and NEW_ORDER
// rows inserted out of key order.
func exportTinyDB(t *testing.T) *engine.DB {
	t.Helper()
	db, err := engine.Open(&engine.Options{Commit: engine.NoSyncCommit})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	for _, def := range Tables(engine.Clustered) {
		_, err := db.CreateTable(def)
		require.NoError(t, err)
	}
	tbl := func(name string) *engine.TableHandle {
		h, err := db.Table(name)
		require.NoError(t, err)
		return h
	}
	i, s, d := engine.Int, engine.Str, engine.Dec
	t1 := engine.Time(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	t2 := engine.Time(time.Date(2024, 2, 29, 23, 59, 59, 123456789, time.FixedZone("UTC-5", -5*3600)))
	tx := db.Begin(nil)
	for _, ins := range []struct {
		table string
		row   engine.Row
	}{
		{Warehouse, engine.Row{i(1), s("a,b"), s(`say "hi"`), s("two\nlines"), s(""), s(" X"), s("123411111"), d(500), d(-5)}},
		{Warehouse, engine.Row{i(2), s(`\.`), s(`\N`), s("ok"), s("NULL"), s("TX"), s("000011111"), d(0), d(123456)}},
		{Orders, engine.Row{i(1), i(1), i(1), i(5), t1, engine.Null, i(2), i(1)}},
		{Orders, engine.Row{i(2), i(1), i(1), i(6), t2, i(7), i(1), i(0)}},
		{OrderLine, engine.Row{i(1), i(1), i(1), i(1), i(77), i(1), engine.Null, i(5), d(0), s("dist-info")}},
		{OrderLine, engine.Row{i(2), i(1), i(1), i(1), i(78), i(2), t2, i(10), d(-1), s("x")}},
		{NewOrder, engine.Row{i(3), i(2), i(1)}},
		{NewOrder, engine.Row{i(2101), i(1), i(1)}},
		{NewOrder, engine.Row{i(1), i(2), i(1)}},
		{NewOrder, engine.Row{i(2102), i(1), i(1)}},
		{NewOrder, engine.Row{i(2103), i(1), i(1)}},
	} {
		require.NoError(t, tx.Insert(tbl(ins.table), ins.row), "%s %v", ins.table, ins.row)
	}
	require.NoError(t, tx.Commit())
	return db
}

// exportTinyFiles is what Export writes of exportTinyDB with NULL written
// as null.
func exportTinyFiles(null string) map[string]string {
	files := make(map[string]string)
	for _, def := range Tables(engine.Clustered) {
		files[def.Name] = strings.Join(exportColumnNames(def), ",") + "\n"
	}
	q := func(s string) string { // a text equal to the NULL string is quoted
		if s == null {
			return `"` + s + `"`
		}
		return s
	}
	files[Warehouse] += "1,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\"\",\" X\",123411111,0.0500,-0.05\n" +
		"2,\"\\.\"," + q(`\N`) + ",ok," + q("NULL") + ",TX,000011111,0.0000,1234.56\n"
	files[Orders] += "1,1,1,5,2025-01-01 00:00:00.000000," + null + ",2,1\n" +
		"2,1,1,6,2024-03-01 04:59:59.123456,7,1,0\n"
	files[OrderLine] += "1,1,1,1,77,1," + null + ",5,0.00,dist-info\n" +
		"2,1,1,1,78,2,2024-03-01 04:59:59.123456,10,-0.01,x\n"
	files[NewOrder] += "2101,1,1\n2102,1,1\n2103,1,1\n1,2,1\n3,2,1\n"
	return files
}

// TestExportHandMade exports a hand-made database and compares every file
// byte for byte, for both NULL strings, for chunk sizes that end
// NEW_ORDER's five rows mid-chunk, on a chunk boundary and one row a
// chunk, and with one and three workers.
func TestExportHandMade(t *testing.T) {
	db := exportTinyDB(t)
	wantRows := map[string]int64{}
	for _, name := range TableNames {
		wantRows[name] = 0
	}
	wantRows[Warehouse], wantRows[Orders], wantRows[OrderLine], wantRows[NewOrder] = 2, 2, 2, 5
	for _, null := range []string{"", `\N`, "NULL"} {
		for _, perTx := range []int{0, 1, 2, 5} {
			for _, workers := range []int{1, 3} {
				t.Run(fmt.Sprintf("null=%q/rowsPerTx=%d/workers=%d", null, perTx, workers), func(t *testing.T) {
					dir := t.TempDir()
					progress := map[string]int64{}
					stats, err := Export(db, dir, ExportConfig{NullString: null, RowsPerTx: perTx, Workers: workers,
						Progress: func(table string, rows int64) { progress[table] = rows }})
					require.NoError(t, err)
					require.Equal(t, wantRows, stats.Rows)
					require.Equal(t, wantRows, progress)
					require.Equal(t, int64(11), stats.TotalRows)
					var size int64
					for name, want := range exportTinyFiles(null) {
						got, err := os.ReadFile(filepath.Join(dir, name+".csv"))
						require.NoError(t, err)
						require.Equal(t, want, string(got), name)
						size += int64(len(got))
					}
					require.Equal(t, size, stats.Bytes)
				})
			}
		}
	}

	// encoding/csv reads the texts back as stored.
	dir := t.TempDir()
	_, err := Export(db, dir, ExportConfig{})
	require.NoError(t, err)
	f, err := os.Open(filepath.Join(dir, Warehouse+".csv"))
	require.NoError(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.Equal(t, [][]string{
		exportColumnNames(Tables(engine.Clustered)[0]),
		{"1", "a,b", `say "hi"`, "two\nlines", "", " X", "123411111", "0.0500", "-0.05"},
		{"2", `\.`, `\N`, "ok", "NULL", "TX", "000011111", "0.0000", "1234.56"},
	}, recs)
}

// TestExportLiteral checks the literal of exact values: decimals from
// their units, timestamps in UTC, NULL, and texts that need quotes.
func TestExportLiteral(t *testing.T) {
	dec := func(scale int) engine.Column { return engine.Column{Type: engine.TypeDecimal, Scale: scale} }
	tInt := engine.Column{Type: engine.TypeInt}
	ts := engine.Column{Type: engine.TypeTimestamp, Nullable: true}
	txt := engine.Column{Type: engine.TypeVarchar, Length: 100}
	at := func(tm time.Time) engine.Value { return engine.Time(tm) }
	for _, c := range []struct {
		v    engine.Value
		col  engine.Column
		null string
		want string
	}{
		{engine.Int(0), tInt, "", "0"},
		{engine.Int(-42), tInt, "", "-42"},
		{engine.Int(math.MaxInt64), tInt, "", "9223372036854775807"},
		{engine.Int(math.MinInt64), tInt, "", "-9223372036854775808"},
		{engine.Int(0), tInt, "0", `"0"`}, // a value equal to the NULL string is quoted

		{engine.Dec(0), dec(2), "", "0.00"},
		{engine.Dec(-5), dec(2), "", "-0.05"},
		{engine.Dec(-50), dec(2), "", "-0.50"},
		{engine.Dec(1234), dec(2), "", "12.34"},
		{engine.Dec(123456), dec(2), "", "1234.56"},
		{engine.Dec(-100), dec(2), "", "-1.00"},
		{engine.Dec(30000000), dec(2), "", "300000.00"},
		{engine.Dec(500), dec(4), "", "0.0500"},
		{engine.Dec(1), dec(4), "", "0.0001"},
		{engine.Dec(-2000), dec(4), "", "-0.2000"},
		{engine.Dec(12345), dec(4), "", "1.2345"},
		{engine.Dec(7), dec(0), "", "7"},
		{engine.Dec(-7), dec(0), "", "-7"},
		{engine.Dec(math.MaxInt64), dec(18), "", "9.223372036854775807"},
		{engine.Dec(math.MinInt64), dec(2), "", "-92233720368547758.08"},
		{engine.Dec(math.MinInt64), dec(18), "", "-9.223372036854775808"},

		{at(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)), ts, "", "2025-01-01 00:00:00.000000"},
		{at(time.Date(2024, 2, 29, 23, 59, 59, 123456789, time.FixedZone("UTC-5", -5*3600))), ts, "",
			"2024-03-01 04:59:59.123456"},
		{at(time.Date(2024, 7, 1, 1, 30, 0, 1000, time.FixedZone("UTC+5:30", 5*3600+1800))), ts, "",
			"2024-06-30 20:00:00.000001"},
		{engine.Value{I: 0, NotNull: true}, ts, "", "1970-01-01 00:00:00.000000"},
		{engine.Value{I: -1, NotNull: true}, ts, "", "1969-12-31 23:59:59.999999"},

		{engine.Null, ts, "", ""},
		{engine.Null, ts, `\N`, `\N`},
		{engine.Null, tInt, "NULL", "NULL"},
		{engine.Null, dec(2), "", ""},
		{engine.Null, txt, "", ""},

		{engine.Str("plain"), txt, "", "plain"},
		{engine.Str("a,b"), txt, "", `"a,b"`},
		{engine.Str(`say "hi"`), txt, "", `"say ""hi"""`},
		{engine.Str(`"`), txt, "", `""""`},
		{engine.Str("two\nlines"), txt, "", "\"two\nlines\""},
		{engine.Str("cr\rhere"), txt, "", "\"cr\rhere\""},
		{engine.Str("crlf\r\n"), txt, "", "\"crlf\r\n\""},
		{engine.Str(" lead"), txt, "", `" lead"`},
		{engine.Str("\tlead"), txt, "", "\"\tlead\""},
		{engine.Str("trail "), txt, "", "trail "},
		{engine.Str(""), txt, "", `""`}, // PostgreSQL: "" is the empty text, an empty field NULL
		{engine.Str(""), txt, `\N`, `""`},
		{engine.Str(`\.`), txt, "", `"\."`},
		{engine.Str(`\N`), txt, `\N`, `"\N"`},
		{engine.Str(`\N`), txt, "", `\N`},
		{engine.Str("NULL"), txt, "NULL", `"NULL"`},
		{engine.Str("back\\slash"), txt, "", `back\slash`},
		{engine.Str("naïve"), txt, "", "naïve"},
	} {
		got, _ := appendExportValue([]byte("x,"), nil, c.v, &c.col, c.null, "2006-01-02 15:04:05.000000")
		require.Equal(t, "x,"+c.want, string(got), "%v as %s(%d), null %q", c.v, c.col.Type, c.col.Scale, c.null)
	}

	// go-tpc's timestamps: to the second, the fraction cut, not rounded.
	for _, c := range []struct {
		v    engine.Value
		want string
	}{
		{at(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)), "2025-01-01 00:00:00"},
		{at(time.Date(2024, 2, 29, 23, 59, 59, 999999000, time.FixedZone("UTC-5", -5*3600))), "2024-03-01 04:59:59"},
		{engine.Value{I: -1, NotNull: true}, "1969-12-31 23:59:59"},
	} {
		l, err := exportLayoutOf(SchemaGoTPC)
		require.NoError(t, err)
		got, _ := appendExportValue(nil, nil, c.v, &ts, "", l.timeLayout)
		require.Equal(t, c.want, string(got))
	}
}

// TestExportDecimalMatchesEngine compares appendDecimal with the engine's
// own formatter over random units and every scale the engine allows.
func TestExportDecimalMatchesEngine(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		units := int64(rng.Uint64())
		if rng.IntN(2) == 0 {
			units %= 1_000_000
		}
		scale := rng.IntN(19)
		got := string(appendDecimal(nil, units, scale))
		require.Equal(t, engine.Dec(units).Format(engine.TypeDecimal, scale), got, "%d scale %d", units, scale)
		if scale > 0 {
			dot := strings.IndexByte(got, '.')
			require.Equal(t, scale, len(got)-dot-1, "%s: digits after the point", got)
		}
	}
}

// TestExportQuotingMatchesEncodingCSV checks appendCSVField against
// encoding/csv: the same output as its Writer except for the empty field
// and the NULL string, which it quotes too, and every field reads back
// with its Reader as written.
func TestExportQuotingMatchesEncodingCSV(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const alphabet = "ab ,\"\r\n\t\\.N"
	for range 20000 {
		b := make([]byte, rng.IntN(7))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		s := string(b)
		for _, null := range []string{"", `\N`} {
			field := string(appendCSVField(nil, b, null))

			var w bytes.Buffer
			cw := csv.NewWriter(&w)
			require.NoError(t, cw.Write([]string{s}))
			cw.Flush()
			std := strings.TrimSuffix(w.String(), "\n")
			if s == "" || s == null {
				require.Equal(t, `"`+s+`"`, field, "%q null %q", s, null)
				require.NotEqual(t, null, field)
			} else {
				require.Equal(t, std, field, "%q null %q", s, null)
			}

			if strings.Contains(s, "\r\n") {
				continue // encoding/csv's Reader turns a quoted CRLF into LF
			}
			rec, err := csv.NewReader(strings.NewReader(field + ",z\n")).Read()
			require.NoError(t, err, "%q as %q", s, field)
			require.Equal(t, []string{s, "z"}, rec, "%q as %q", s, field)
		}
	}
}

// TestExportNotLoaded: a database without the nine tables gives
// ErrNotLoaded naming the first missing table, and creates no directory.
func TestExportNotLoaded(t *testing.T) {
	db, err := engine.Open(&engine.Options{})
	require.NoError(t, err)
	defer db.Close()
	dir := filepath.Join(t.TempDir(), "out")
	_, err = Export(db, dir, ExportConfig{})
	require.ErrorIs(t, err, ErrNotLoaded)
	require.ErrorIs(t, err, engine.ErrUnknownTable)
	require.Contains(t, err.Error(), "table "+Item)
	require.NoDirExists(t, dir)

	for _, def := range Tables(engine.Clustered) {
		if def.Name != Stock {
			_, err := db.CreateTable(def)
			require.NoError(t, err)
		}
	}
	_, err = Export(db, dir, ExportConfig{})
	require.ErrorIs(t, err, ErrNotLoaded)
	require.Contains(t, err.Error(), "table "+Stock)
	require.NoDirExists(t, dir)
}

// TestExportWrongSchema: nine tables whose columns are not the schema's
// are not exported (nor reported as not loaded).
func TestExportWrongSchema(t *testing.T) {
	db, err := engine.Open(&engine.Options{})
	require.NoError(t, err)
	defer db.Close()
	for _, def := range Tables(engine.Clustered) {
		if def.Name == Warehouse {
			def.Columns = slices.Clone(def.Columns)
			def.Columns[WYtd].Scale = 3
		}
		_, err := db.CreateTable(def)
		require.NoError(t, err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	_, err = Export(db, dir, ExportConfig{})
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrNotLoaded)
	require.Contains(t, err.Error(), "w_ytd")
	require.NoDirExists(t, dir)
}

// TestExportBadOptions: a NULL string that would not read back as one field,
// a negative chunk size and a negative number of workers are refused
// before anything is read.
func TestExportBadOptions(t *testing.T) {
	db := exportTinyDB(t)
	for _, o := range []ExportConfig{{NullString: `"`}, {NullString: "a,b"}, {NullString: "\n"}, {RowsPerTx: -1}, {Workers: -1}} {
		dir := filepath.Join(t.TempDir(), "out")
		_, err := Export(db, dir, o)
		require.ErrorIs(t, err, ErrInvalidConfig, "%+v", o)
		require.NoDirExists(t, dir)
	}
}

// TestExportUnwritable: I/O errors name the path; a file that fails while
// being written is removed, the tables written before it stay.
func TestExportUnwritable(t *testing.T) {
	db := exportTinyDB(t)
	tmp := t.TempDir()

	t.Run("dir under a file", func(t *testing.T) {
		file := filepath.Join(tmp, "file")
		require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
		dir := filepath.Join(file, "out")
		_, err := Export(db, dir, ExportConfig{})
		require.Error(t, err)
		require.Contains(t, err.Error(), dir)
		require.NotErrorIs(t, err, ErrNotLoaded)
	})

	t.Run("file is a directory", func(t *testing.T) {
		dir := filepath.Join(tmp, "isdir")
		path := filepath.Join(dir, Item+".csv")
		require.NoError(t, os.MkdirAll(path, 0o755))
		_, err := Export(db, dir, ExportConfig{})
		require.Error(t, err)
		require.Contains(t, err.Error(), path)
		require.DirExists(t, path, "a file Export did not create is not removed")
	})

	t.Run("write fails", func(t *testing.T) {
		if _, err := os.Stat("/dev/full"); err != nil {
			t.Skip("no /dev/full")
		}
		dir := filepath.Join(tmp, "full")
		require.NoError(t, os.MkdirAll(dir, 0o755))
		path := filepath.Join(dir, Warehouse+".csv")
		require.NoError(t, os.Symlink("/dev/full", path))
		var done []string
		_, err := Export(db, dir, ExportConfig{Workers: 1, Progress: func(table string, _ int64) { done = append(done, table) }})
		require.Error(t, err)
		require.Contains(t, err.Error(), path)
		require.ErrorIs(t, err, syscall.ENOSPC)
		require.Equal(t, []string{Item}, done, "the tables before WAREHOUSE are written")
		require.FileExists(t, filepath.Join(dir, Item+".csv"))
		_, err = os.Lstat(path)
		require.ErrorIs(t, err, os.ErrNotExist, "the failed file is removed")
	})
}
