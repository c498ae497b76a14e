package tpcc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/enginelab/enginelab/engine"
)

// ExportOptions configure Export. The zero value writes NULL as an empty
// field and reads 10,000 rows a transaction.
type ExportOptions struct {
	// NullString is written, unquoted, for a NULL. "" (the default) is
	// PostgreSQL's CSV NULL; `\N` is MySQL LOAD DATA's. A value whose
	// literal equals it is quoted, so that it does not read back as NULL.
	// It may not hold a comma, a double quote, CR or LF (it would not read
	// back as one field).
	NullString string
	// Progress, if not nil, is called once per table, after its file is
	// written and closed, with the table's name and the rows written.
	Progress func(table string, rows int64)
	// RowsPerTx is how many rows one read transaction reads, and so how
	// many shared locks it holds at most; 0 means 10,000.
	RowsPerTx int
}

// ExportStats is what Export wrote.
type ExportStats struct {
	// Rows is the rows written per table (headers not counted).
	Rows map[string]int64
	// TotalRows is the sum of Rows.
	TotalRows int64
	// Bytes is the size of the files written, headers included.
	Bytes int64
	// Elapsed is the time Export took.
	Elapsed time.Duration
}

// exportTimeLayout is the timestamp form both PostgreSQL and MySQL parse
// into timestamp and DATETIME(6) without a format argument.
const exportTimeLayout = "2006-01-02 15:04:05.000000"

// defaultExportRowsPerTx bounds an export transaction's locks like Check's
// per-district transactions do (tens of thousands of rows at most).
const defaultExportRowsPerTx = 10_000

// Export writes every TPC-C table of db as CSV into dir, which is created
// (with its parents) if missing; files already there are replaced. The
// files are what other engines' bulk loaders read as they are, so that a
// population, loaded or after a run, can be loaded into them or compared
// with theirs without generating it again.
//
// # Files
//
// One file per table, <table>.csv (warehouse.csv, ..., order_line.csv),
// in the directory given. The first line is a header of the schema's
// column names (the specification's, see Tables), then one line per row
// in primary-key order. Lines end in "\n"; fields are separated by
// commas. Each value is in the form a SQL literal of its type takes:
//
//   - integers in decimal: 42, -7;
//   - decimals with exactly their column's scale, from the stored count of
//     units, so nothing is rounded and there is no exponent: 12.34, -0.50,
//     0.0500 (scale 4);
//   - timestamps as 2006-01-02 15:04:05.000000, in UTC, with no zone in the
//     text: the engine stores UTC, and a loader reading the value into a
//     zone-aware type must be told so (PostgreSQL: SET TIME ZONE 'UTC'
//     before COPY into timestamptz; MySQL: SET time_zone = '+00:00' before
//     LOAD DATA into TIMESTAMP; timestamp and DATETIME(6) take it as is);
//   - texts as stored, quoted by the rules of RFC 4180 and encoding/csv
//     (a field holding a comma, a double quote, CR or LF, or starting with
//     white space, is enclosed in double quotes, a quote inside doubled),
//     and also when the text is empty, when it equals the NULL string and
//     when it is \. (PostgreSQL's end-of-data marker), so that no text
//     reads back as a NULL or ends the data;
//   - NULL as ExportOptions.NullString, unquoted: by default the empty
//     field.
//
// The default suits PostgreSQL:
//
//	COPY warehouse FROM '/path/warehouse.csv' WITH (FORMAT csv, HEADER)
//
// An empty unquoted field is NULL there, a quoted one ("") an empty text,
// which is why empty texts are quoted. MySQL's LOAD DATA reads an empty
// field as 0 or an empty string (with a warning, or an error in strict
// mode), not NULL. Two ways around it: NullString `\N`, which LOAD DATA
// reads as NULL (its default ESCAPED BY '\\' also makes a backslash in a
// text an escape; the generated TPC-C texts are alphanumeric and have
// none),
//
//	LOAD DATA INFILE '/path/orders.csv' INTO TABLE orders
//	  FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '"' IGNORE 1 LINES
//
// or the default NullString, reading the two nullable columns,
// o_carrier_id and ol_delivery_d, into variables and turning the empty
// ones into NULL (neither column is a text, so no empty text is lost):
//
//	LOAD DATA INFILE '/path/orders.csv' INTO TABLE orders
//	  FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '"' IGNORE 1 LINES
//	  (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, @carrier, o_ol_cnt, o_all_local)
//	  SET o_carrier_id = NULLIF(@carrier, '')
//
// # Transactions
//
// A cursor keeps a shared lock on every row it returns until its
// transaction ends, so one transaction per table would lock all of STOCK
// or ORDER_LINE at once (100,000 and some 300,000 rows a warehouse). Each
// table is read instead in chunks of ExportOptions.RowsPerTx rows in
// primary-key order, one read transaction a chunk, each chunk starting
// after the last key of the one before. The export is therefore not a
// snapshot: run it while no transaction writes, as Check.
//
// # Errors
//
// Before it creates anything, Export checks the options (a bad NullString
// or RowsPerTx returns an error wrapping ErrBadConfig) and that db has the
// nine tables with the schema's columns: a missing table returns an error
// wrapping ErrNotLoaded that names it. A read error is returned as the
// engine gives it, wrapped with the table's name; an I/O error is wrapped
// with the file's name. On an error the files of the tables already
// written stay, and the file being written is removed.
func Export(db *engine.DB, dir string, opts ExportOptions) (ExportStats, error) {
	start := time.Now()
	if strings.ContainsAny(opts.NullString, ",\"\r\n") {
		return ExportStats{}, fmt.Errorf("%w: export NullString %q holds a comma, a double quote, CR or LF",
			ErrBadConfig, opts.NullString)
	}
	if opts.RowsPerTx < 0 {
		return ExportStats{}, fmt.Errorf("%w: export RowsPerTx %d is negative", ErrBadConfig, opts.RowsPerTx)
	}
	if opts.RowsPerTx == 0 {
		opts.RowsPerTx = defaultExportRowsPerTx
	}
	handles, err := exportOpen(db)
	if err != nil {
		return ExportStats{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ExportStats{}, fmt.Errorf("tpcc: export: create directory %s: %w", dir, err)
	}
	stats := ExportStats{Rows: make(map[string]int64, len(handles))}
	for _, h := range handles {
		rows, size, err := exportTable(db, h, filepath.Join(dir, h.Name()+".csv"), &opts)
		if err != nil {
			return ExportStats{}, err
		}
		stats.Bytes += size
		stats.Rows[h.Name()] = rows
		stats.TotalRows += rows
		if opts.Progress != nil {
			opts.Progress(h.Name(), rows)
		}
	}
	stats.Elapsed = time.Since(start)
	return stats, nil
}

// exportOpen returns the handles of the nine tables, in TableNames order,
// after checking their columns against the schema's: the header is the
// schema's, and the literal of each value is chosen by its declared type
// and scale.
func exportOpen(db *engine.DB) ([]*engine.TableHandle, error) {
	decl := make(map[string]engine.Table)
	for _, t := range Tables(engine.Clustered) {
		decl[t.Name] = t
	}
	handles := make([]*engine.TableHandle, 0, len(TableNames))
	for _, name := range TableNames {
		h, err := db.Table(name)
		if err != nil {
			if errors.Is(err, engine.ErrUnknownTable) {
				return nil, fmt.Errorf("%w: no table %s: %w", ErrNotLoaded, name, err)
			}
			return nil, fmt.Errorf("tpcc: export: table %s: %w", name, err)
		}
		got, want := h.Schema().Columns, decl[name].Columns
		if len(got) != len(want) {
			return nil, fmt.Errorf("tpcc: export: table %s has %d columns, TPC-C's has %d", name, len(got), len(want))
		}
		for i := range want {
			if got[i].Name != want[i].Name || got[i].Type != want[i].Type || got[i].Scale != want[i].Scale {
				return nil, fmt.Errorf("tpcc: export: table %s: column %d is %s %s(%d), want %s %s(%d)", name, i,
					got[i].Name, got[i].Type, got[i].Scale, want[i].Name, want[i].Type, want[i].Scale)
			}
		}
		handles = append(handles, h)
	}
	return handles, nil
}

// countingWriter counts the bytes that reach the file.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// exportTable writes table h to path and returns its rows and the file's
// size. A file it created is removed on an error, so that no truncated
// table is left looking complete.
func exportTable(db *engine.DB, h *engine.TableHandle, path string, opts *ExportOptions) (rows, size int64, err error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, 0, fmt.Errorf("tpcc: export: create %s: %w", path, err)
	}
	cw := &countingWriter{w: f}
	defer func() {
		if err != nil {
			_ = f.Close() // already failed; the first error is the one to report
			_ = os.Remove(path)
		}
	}()
	bw := bufio.NewWriterSize(cw, 256<<10)
	if rows, err = exportRows(db, h, bw, path, opts); err != nil {
		return 0, 0, err
	}
	if err = bw.Flush(); err != nil {
		return 0, 0, fmt.Errorf("tpcc: export: write %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return 0, 0, fmt.Errorf("tpcc: export: close %s: %w", path, err)
	}
	return rows, cw.n, nil
}

// exportRows writes h's header and rows to w, the buffered writer of path,
// RowsPerTx rows a read transaction, and returns the rows written.
func exportRows(db *engine.DB, h *engine.TableHandle, w io.Writer, path string, opts *ExportOptions) (int64, error) {
	schema := h.Schema()
	cols := schema.Columns
	pk := make([]int, len(schema.PrimaryKey))
	for i, name := range schema.PrimaryKey {
		for c := range cols {
			if cols[c].Name == name {
				pk[i] = c
			}
		}
	}

	var line, scratch []byte
	for i, c := range cols {
		if i > 0 {
			line = append(line, ',')
		}
		line = appendCSVField(line, []byte(c.Name), opts.NullString)
	}
	line = append(line, '\n')
	if _, err := w.Write(line); err != nil {
		return 0, fmt.Errorf("tpcc: export: write %s: %w", path, err)
	}

	var (
		rows  int64
		after []engine.Value // primary key of the last row written; nil before the first
	)
	for {
		n := 0
		tx := db.Begin(nil)
		so := engine.ScanOptions{Limit: opts.RowsPerTx}
		if after != nil {
			so.Lower, so.LowerExclusive = after, true
		}
		cur, err := tx.Scan(h, so)
		if err != nil {
			_ = tx.Rollback()
			return rows, fmt.Errorf("tpcc: export: scan of %s: %w", h.Name(), err)
		}
		var werr error
		for cur.Next() {
			r := cur.Row()
			line = line[:0]
			for i := range cols {
				if i > 0 {
					line = append(line, ',')
				}
				line, scratch = appendExportValue(line, scratch, r[i], &cols[i], opts.NullString)
			}
			line = append(line, '\n')
			if _, werr = w.Write(line); werr != nil {
				break
			}
			n++
			// The row's bytes are the cursor's until its next step: keep
			// a copy of the key to start the next chunk from.
			after = after[:0]
			for _, c := range pk {
				v := r[c]
				v.B = bytes.Clone(v.B)
				after = append(after, v)
			}
		}
		rows += int64(n)
		cerr := cur.Close()
		if werr != nil || cerr != nil {
			_ = tx.Rollback() // may already be rolled back (a lock error)
			if werr != nil {
				return rows, fmt.Errorf("tpcc: export: write %s: %w", path, werr)
			}
			return rows, fmt.Errorf("tpcc: export: scan of %s: %w", h.Name(), cerr)
		}
		if err := tx.Commit(); err != nil {
			return rows, fmt.Errorf("tpcc: export: commit of a read of %s: %w", h.Name(), err)
		}
		if n < opts.RowsPerTx {
			return rows, nil
		}
	}
}

// appendExportValue appends v, a value of column c, as a CSV field: NULL
// as null, unquoted; any other value as its SQL literal (see Export),
// quoted when appendCSVField says so. scratch is a buffer to reuse; the
// grown one is returned.
func appendExportValue(dst, scratch []byte, v engine.Value, c *engine.Column, null string) ([]byte, []byte) {
	if v.IsNull() {
		return append(dst, null...), scratch
	}
	scratch = scratch[:0]
	switch c.Type {
	case engine.TypeDecimal:
		scratch = appendDecimal(scratch, v.I, c.Scale)
	case engine.TypeTimestamp:
		scratch = time.UnixMicro(v.I).UTC().AppendFormat(scratch, exportTimeLayout)
	case engine.TypeChar, engine.TypeVarchar:
		scratch = append(scratch, v.B...)
	default: // TypeInt; exportOpen admits no other type
		scratch = strconv.AppendInt(scratch, v.I, 10)
	}
	return appendCSVField(dst, scratch, null), scratch
}

// appendDecimal appends units × 10^-scale in plain decimal notation with
// exactly scale digits after the point (none, and no point, for scale 0).
// It works on the integer, never a float, so every stored value prints
// exactly.
func appendDecimal(dst []byte, units int64, scale int) []byte {
	if scale <= 0 {
		return strconv.AppendInt(dst, units, 10)
	}
	u := uint64(units)
	if units < 0 {
		dst = append(dst, '-')
		u = -u // two's complement: right for math.MinInt64 too
	}
	var buf [20]byte
	digits := strconv.AppendUint(buf[:0], u, 10)
	if len(digits) <= scale {
		dst = append(dst, '0', '.')
		for range scale - len(digits) {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	dst = append(dst, digits[:len(digits)-scale]...)
	dst = append(dst, '.')
	return append(dst, digits[len(digits)-scale:]...)
}

// appendCSVField appends s as a CSV field, enclosed in double quotes (a
// quote inside doubled) when it needs them. encoding/csv's Writer quotes
// a field holding the separator, a quote, CR or LF, or starting with white
// space, or equal to \. (PostgreSQL's end of data); it cannot quote an
// empty field, which PostgreSQL would read as NULL, so the rule is
// repeated here with two more cases: the empty field, and a field equal to
// the NULL string.
func appendCSVField(dst, s []byte, null string) []byte {
	if !csvNeedsQuotes(s, null) {
		return append(dst, s...)
	}
	dst = append(dst, '"')
	for {
		i := bytes.IndexByte(s, '"')
		if i < 0 {
			break
		}
		dst = append(dst, s[:i+1]...)
		dst = append(dst, '"')
		s = s[i+1:]
	}
	dst = append(dst, s...)
	return append(dst, '"')
}

func csvNeedsQuotes(s []byte, null string) bool {
	if len(s) == 0 || string(s) == null || string(s) == `\.` {
		return true
	}
	if bytes.ContainsAny(s, ",\"\r\n") {
		return true
	}
	r, _ := utf8.DecodeRune(s)
	return unicode.IsSpace(r)
}
