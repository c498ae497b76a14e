package tpcc

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/enginelab/enginelab/engine"
)

// ExportConfig is what an Export job runs with. The zero value writes the
// engine's own tables (SchemaSpec), NULL as an empty field, and reads
// 10,000 rows a transaction.
type ExportConfig struct {
	// Schema is whose tables the files are for (see Export): SchemaSpec
	// (the default, ""), SchemaGoTPC or SchemaBenchmarkSQL. Any other
	// value is refused with an error wrapping ErrBadSchema.
	Schema ExportSchema
	// NullString is written, unquoted, for a NULL. "" (the default) is
	// PostgreSQL's CSV NULL; `\N` is MySQL LOAD DATA's; NULL is what
	// go-tpc's and BenchmarkSQL's own CSV writers write, and what both
	// PostgreSQL (told NULL 'NULL') and MySQL (with OPTIONALLY ENCLOSED
	// BY) read as NULL. A value whose literal equals it is quoted, so
	// that it does not read back as NULL. It may not hold a comma, a
	// double quote, CR or LF (it would not read back as one field).
	NullString string
	// Progress, if not nil, is called once per file, after it is written
	// and closed, with its table's name in the schema (ExportFile.Table)
	// and the rows written.
	Progress func(table string, rows int64)
	// RowsPerTx is how many rows one part of the export reads; 0 means
	// 10,000. On tables without versions, whose reads lock, a part is a
	// read transaction, so it is how many shared locks one holds at most
	// (see Export's Transactions).
	RowsPerTx int
	// Workers is how many files are written at once, each by a goroutine
	// of its own reading the export's snapshot, as parallel pg_dump's
	// jobs (-j); 0: GOMAXPROCS. A negative value is refused with an error
	// wrapping ErrInvalidConfig. Files are written one at a time when a
	// table is read with locks (see Export's Transactions) or when the
	// database runs on a Runtime other than engine.RealRuntime (the
	// simulator's scheduler runs one goroutine's calls).
	Workers int
}

// ExportReport is what Export wrote.
type ExportReport struct {
	// Rows is the rows written per file, by its table's name in the
	// schema (ExportFile.Table); headers not counted.
	Rows map[string]int64
	// TotalRows is the sum of Rows.
	TotalRows int64
	// Bytes is the size of the files written, headers included.
	Bytes int64
	// Elapsed is the time Export took.
	Elapsed time.Duration
}

// defaultExportRowsPerTx bounds an export transaction's locks like Check's
// per-district transactions do (tens of thousands of rows at most).
const defaultExportRowsPerTx = 10_000

// Export writes every TPC-C table of db as CSV into dir, which is created
// (with its parents) if missing; files already there are replaced. The
// files are what other engines' bulk loaders read as they are, so that a
// population, loaded or after a run, can be loaded into them, or into a
// benchmark kit's tables to run the kit on it, or compared with theirs,
// without generating it again.
//
// # Schemas
//
// ExportConfig.Schema says whose tables the files are for: their names,
// columns, column order and the form of timestamps. ExportFiles lists
// each schema's files, tables and columns.
//
//   - SchemaSpec (the default): the engine's own tables (Tables), with the
//     specification's names and column order, HISTORY's surrogate h_id
//     first. One file per table, <table>.csv (warehouse.csv, ...,
//     order_line.csv); its first line is a header of the column names.
//   - SchemaGoTPC: go-tpc's tables, as its CREATE TABLE statements have
//     them (tpcc/ddl.go): the specification's names and column order, and
//     no h_id in HISTORY, so the file has none (its rows are still
//     written in h_id order). The files are named, and have no header,
//     as go-tpc's own CSV writer's (go-tpc tpcc prepare --output-type
//     csv) with its default database and one thread: test.<table>.0.csv,
//     which TiDB Lightning reads into database test (rename them for
//     another). Timestamps are written to the second, as go-tpc's writer
//     writes them and its MySQL tables' DATETIME holds them.
//   - SchemaBenchmarkSQL: BenchmarkSQL 5.0's tables, as its CREATE TABLE
//     statements have them (run/sql.common/tableCreates.sql):
//     bmsql_warehouse, ..., bmsql_oorder for ORDERS, ..., bmsql_stock,
//     with their column order (c_w_id, c_d_id, c_id first, s_w_id before
//     s_i_id, ...). One file per table, <table>.csv (bmsql_customer.csv),
//     without header. bmsql_history has its own surrogate key, hist_id, in
//     place of h_id, and BenchmarkSQL's loader writes it: the file holds
//     the row's position, 1, 2, ..., rows being in h_id order. That is
//     unique, fits its integer column, and on a fresh load at full scale
//     is the loader's own numbering, (w−1)×30000 + (d−1)×3000 + c; its
//     extraHistID.sql then moves the sequence a run's inserts draw from
//     past the largest. A tenth file, bmsql_config.csv, holds what
//     BenchmarkSQL's run reads from bmsql_config, taken from ConfigTable:
//     warehouses, and the load's NURand constants nURandCLast, nURandCC_ID
//     and nURandCI_ID (a run draws its C for C_LAST at the distance from
//     the load's that [2.1.6.1] requires).
//
// BenchmarkSQL's own CSV writer (5.0 as released) writes some tables in
// another column order than their CREATE TABLE statements, the one its
// run/sql.postgres/tableCopies.sql lists (s_i_id before s_w_id, d_id
// before d_w_id, c_id before c_w_id, o_id before o_w_id), and names the
// files otherwise (customer.csv, cust-hist.csv, order.csv, ...): load
// these files with ExportLoadCommands' statements, not tableCopies.sql,
// which would swap integer columns without an error.
//
// # Values
//
// One line per row, in the engine table's primary-key order. Lines end in
// "\n"; fields are separated by commas. Each value is in the form a SQL
// literal of its type takes:
//
//   - integers in decimal: 42, -7;
//   - decimals with exactly their column's scale, from the stored count of
//     units, so nothing is rounded and there is no exponent: 12.34, -0.50,
//     0.0500 (scale 4). The kits' tables have the specification's scales
//     (decimal(4,4) for rates, (12,2), (6,2) and (5,2) for money), so the
//     text is the same in every schema;
//   - timestamps in UTC, with no zone in the text, as 2006-01-02
//     15:04:05.000000, or for go-tpc 2006-01-02 15:04:05, the fraction cut
//     (not rounded, as MySQL would round it into DATETIME), so that its
//     MySQL and PostgreSQL tables get the same values. The engine stores
//     UTC, and a loader reading the value into a zone-aware type must be
//     told so (PostgreSQL: SET TIME ZONE 'UTC' before COPY into
//     timestamptz; MySQL: SET time_zone = '+00:00' before LOAD DATA into
//     TIMESTAMP, BenchmarkSQL's type there; timestamp and DATETIME take it
//     as is);
//   - texts as stored, quoted by the rules of RFC 4180 and encoding/csv
//     (a field holding a comma, a double quote, CR or LF, or starting with
//     white space, is enclosed in double quotes, a quote inside doubled),
//     and also when the text is empty, when it equals the NULL string and
//     when it is \. (PostgreSQL's end-of-data marker), so that no text
//     reads back as a NULL or ends the data;
//   - NULL as ExportConfig.NullString, unquoted: by default the empty
//     field. go-tpc's and BenchmarkSQL's writers write the word NULL; set
//     NullString to "NULL" for files like theirs (the command does so
//     for those schemas unless told otherwise).
//
// # Loading
//
// ExportLoadCommands returns the statements that load the files: psql's
// \copy and MySQL's LOAD DATA LOCAL INFILE, each with the file's column
// list, so that the table's own column order does not matter, and the
// options that read NullString back as NULL. With the defaults:
//
//	\copy warehouse (w_id, w_name, ...) FROM '/path/warehouse.csv' WITH (FORMAT csv, HEADER)
//
// An empty unquoted field is NULL there, a quoted one ("") an empty text,
// which is why empty texts are quoted. Any other NullString is given to
// COPY as NULL '...'. MySQL's LOAD DATA reads an empty field as 0 or an
// empty string (with a warning, or an error in strict mode), not NULL; it
// reads the word NULL, unquoted, as NULL when fields may be enclosed, and
// `\N` when a backslash is its escape (its default ESCAPED BY '\\', which
// also makes a backslash in a text an escape: the generated TPC-C texts
// are alphanumeric and have none; for any other NULL string the
// statements give ESCAPED BY an empty string, so that a backslash is
// read as itself). For any other NULL string, such as the default, the
// two nullable columns, o_carrier_id and ol_delivery_d, are read into
// variables and the NULL string turned into NULL (neither column is a
// text, so no text is lost):
//
//	LOAD DATA LOCAL INFILE '/path/orders.csv' INTO TABLE orders CHARACTER SET utf8mb4
//	  FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '"' ESCAPED BY '' LINES TERMINATED BY '\n'
//	  IGNORE 1 LINES (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, @o_carrier_id, o_ol_cnt, o_all_local)
//	  SET o_carrier_id = NULLIF(@o_carrier_id, '')
//
// # Transactions
//
// Each table is read in chunks of ExportConfig.RowsPerTx rows in
// primary-key order, each chunk starting after the last key of the one
// before, all in one RepeatableRead transaction: on tables with versions
// (the clustered organization, and the heap organizations with
// engine.Options.HeapVersions) its reads are consistent reads of one read
// view, so the files are one committed state of the database, taken
// without a lock, and Export can run while terminals run. On tables
// without versions (the heap organizations otherwise) a cursor keeps a
// shared lock on every row it returns until its transaction ends, and one
// transaction would lock all of STOCK or ORDER_LINE at once (100,000 and
// some 300,000 rows a warehouse): from the first chunk that took a lock,
// each chunk commits its transaction, and the export is then no
// snapshot: run it while no transaction writes, as Check.
//
// # Workers
//
// With ExportConfig.Workers above one, the files are written by that many
// goroutines at once, as parallel pg_dump's jobs: the largest table first
// (by engine.TableHandle.DataPages, the pages its rows take, as pg_dump
// orders by relpages), each goroutine taking the next file when it has
// written one. Every goroutine reads in a transaction of its own that
// shares the export's snapshot (engine.Tx.ShareSnapshot, pg_dump's
// exported snapshot), so the files are still one committed state of the
// database. The files are the same as one goroutine's; Progress is then
// called as each file is done, from the goroutine that wrote it, one
// call at a time.
//
// # Errors
//
// Before it creates anything, Export checks the options (an unknown
// Schema returns an error wrapping ErrBadSchema, naming the value and the
// accepted ones; a bad NullString or RowsPerTx one wrapping ErrInvalidConfig,
// as ErrBadSchema does too, and so does a negative Workers) and that db
// has the nine tables with the
// schema's columns: a missing table returns an error wrapping
// ErrNotLoaded that names it, and so, for BenchmarkSQL, does a missing or
// incomplete ConfigTable (a load that did not finish). A read error is
// returned as the engine gives it, wrapped with the table's name; an I/O
// error is wrapped with the file's name. On an error the files already
// written stay, and the file being written is removed; with workers, the
// others finish the files they are writing and take no more, and every
// worker's error is returned (errors.Join).
func Export(db *engine.DB, dir string, opts ExportConfig) (ExportReport, error) {
	start := time.Now()
	layout, err := exportLayoutOf(opts.Schema)
	if err != nil {
		return ExportReport{}, err
	}
	if strings.ContainsAny(opts.NullString, ",\"\r\n") {
		return ExportReport{}, fmt.Errorf("tpcc: %w: export NullString %q holds a comma, a double quote, CR or LF",
			ErrInvalidConfig, opts.NullString)
	}
	if opts.RowsPerTx < 0 {
		return ExportReport{}, fmt.Errorf("tpcc: %w: export RowsPerTx %d is negative", ErrInvalidConfig, opts.RowsPerTx)
	}
	if opts.RowsPerTx == 0 {
		opts.RowsPerTx = defaultExportRowsPerTx
	}
	workers, err := readWorkers(db, opts.Workers, "export")
	if err != nil {
		return ExportReport{}, err
	}
	opts.Workers = workers
	plans, err := exportPlans(db, layout)
	if err != nil {
		return ExportReport{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ExportReport{}, fmt.Errorf("tpcc: export: create directory %s: %w", dir, err)
	}
	ex := &exporter{dir: dir, timeLayout: layout.timeLayout, opts: &opts,
		stats: ExportReport{Rows: make(map[string]int64, len(plans))}}
	r := &snapshotReads{db: db}
	defer r.abort()
	if workers := min(opts.Workers, len(plans)); workers > 1 && exportConsistent(plans) {
		if err := ex.parallel(r, plans, workers); err != nil {
			return ExportReport{}, err
		}
	} else {
		for i := range plans {
			if err := ex.file(r, &plans[i]); err != nil {
				return ExportReport{}, err
			}
		}
	}
	stats := ex.stats
	if err := r.end(); err != nil {
		return ExportReport{}, fmt.Errorf("tpcc: export: commit of the read transaction: %w", err)
	}
	stats.Elapsed = time.Since(start)
	return stats, nil
}

// exporter writes an export's files and adds them up.
type exporter struct {
	dir, timeLayout string
	opts            *ExportConfig
	mu              sync.Mutex // stats and Progress calls, with workers
	stats           ExportReport
}

// file writes the file of plan p with r's reads and counts it.
func (ex *exporter) file(r *snapshotReads, p *exportPlan) error {
	rows, size, err := exportFile(r, p, filepath.Join(ex.dir, p.file.Name), ex.timeLayout, ex.opts)
	if err != nil {
		return err
	}
	ex.mu.Lock()
	defer ex.mu.Unlock()
	ex.stats.Bytes += size
	ex.stats.Rows[p.file.Table] = rows
	ex.stats.TotalRows += rows
	if ex.opts.Progress != nil {
		ex.opts.Progress(p.file.Table, rows)
	}
	return nil
}

// testHookExportWorkers, if set (tests only), is called as workers are
// about to write the files, with the files' tables in the order the
// workers take them.
var testHookExportWorkers func(order []string)

// exportConsistent says whether every table of plans is read without row
// locks (readsWithoutLocks): only then do workers write the files.
func exportConsistent(plans []exportPlan) bool {
	for _, p := range plans {
		if !readsWithoutLocks(p.h) {
			return false
		}
	}
	return true
}

// parallel writes plans' files with workers goroutines, the largest table
// first, each reading in a transaction that shares the snapshot of r's
// (begun here; see Export's Workers). After an error no file is taken;
// every worker's error is returned.
func (ex *exporter) parallel(r *snapshotReads, plans []exportPlan, workers int) error {
	order := make([]int, len(plans))
	pages := make([]int64, len(plans))
	for i := range plans {
		order[i] = i
		if h := plans[i].h; h != nil {
			n, err := h.DataPages()
			if err != nil {
				return fmt.Errorf("tpcc: export: %w", err)
			}
			pages[i] = n
		}
	}
	// Largest first, ties in the schema's order: the longest files start
	// at once, and the short ones fill in behind them.
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(pages[b], pages[a]) })

	if h := testHookExportWorkers; h != nil {
		names := make([]string, len(order))
		for k, i := range order {
			names[k] = plans[i].file.Table
		}
		h(names)
	}
	if r.tx == nil {
		r.tx = r.db.BeginTx(r.m, engine.TxOptions{Isolation: engine.RepeatableRead})
	}
	return withSharedSnapshot(r.tx, nil, "export", workers, len(order), func(wtx *engine.Tx, j int) error {
		wr := &snapshotReads{db: r.db, tx: wtx, locks: wtx.Meter().LockRequests, shared: true}
		return ex.file(wr, &plans[order[j]])
	})
}

// exportPlan is how one file is written: the engine's table (nil for
// ConfigTable, whose rows are config), and for each field the position of
// the engine column it holds, or rowNumberField.
type exportPlan struct {
	file   ExportFile
	h      *engine.TableHandle
	fields []int
	config [][2]string
}

// rowNumberField is a field holding the row's position in the file, from
// 1 (BenchmarkSQL's hist_id).
const rowNumberField = -1

// exportPlans checks db's tables against the schema's (their columns, by
// name, type and scale, are the specification's, so that the header and
// the literal of each value are right) and returns how each of the
// layout's files is written.
func exportPlans(db *engine.DB, layout *exportLayout) ([]exportPlan, error) {
	decl := make(map[string]engine.Table)
	for _, t := range Tables(engine.Clustered) {
		decl[t.Name] = t
	}
	handles := make(map[string]*engine.TableHandle, len(TableNames))
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
		handles[name] = h
	}
	plans := make([]exportPlan, 0, len(layout.files))
	for _, f := range layout.files {
		p := exportPlan{file: f}
		if f.From == ConfigTable {
			l, err := ReadLoaded(db)
			if err != nil {
				return nil, err
			}
			// BenchmarkSQL's loader writes these four (LoadDataWorker's
			// loadItem); its run reads warehouses and nURandCLast.
			p.config = [][2]string{
				{"warehouses", strconv.Itoa(l.Warehouses)},
				{"nURandCLast", strconv.Itoa(l.Constants.CLast)},
				{"nURandCC_ID", strconv.Itoa(l.Constants.CID)},
				{"nURandCI_ID", strconv.Itoa(l.Constants.CItem)},
			}
			plans = append(plans, p)
			continue
		}
		p.h = handles[f.From]
		cols := p.h.Schema().Columns
		for _, name := range f.Columns {
			i := slices.IndexFunc(cols, func(c engine.Column) bool { return c.Name == name })
			switch {
			case i >= 0:
				p.fields = append(p.fields, i)
			case name == histIDColumn:
				p.fields = append(p.fields, rowNumberField)
			default:
				return nil, fmt.Errorf("tpcc: export: %s schema: table %s: no engine column %s", layout.schema, f.Table, name)
			}
		}
		plans = append(plans, p)
	}
	return plans, nil
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

// exportFile writes the file of plan p to path and returns its rows and
// its size. A file it created is removed on an error, so that no
// truncated table is left looking complete.
func exportFile(r *snapshotReads, p *exportPlan, path, timeLayout string, opts *ExportConfig) (rows, size int64, err error) {
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
	if rows, err = exportRows(r, p, bw, path, timeLayout, opts); err != nil {
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

// exportRows writes p's header, if it has one, and rows to w, the
// buffered writer of path, RowsPerTx rows a part of r's reads, and returns
// the rows written.
func exportRows(r *snapshotReads, p *exportPlan, w io.Writer, path, timeLayout string, opts *ExportConfig) (int64, error) {
	var line, scratch []byte
	if p.file.Header {
		for i, c := range p.file.Columns {
			if i > 0 {
				line = append(line, ',')
			}
			line = appendCSVField(line, []byte(c), opts.NullString)
		}
		line = append(line, '\n')
		if _, err := w.Write(line); err != nil {
			return 0, fmt.Errorf("tpcc: export: write %s: %w", path, err)
		}
	}
	if p.h == nil {
		for _, kv := range p.config {
			line = appendCSVField(line[:0], []byte(kv[0]), opts.NullString)
			line = append(line, ',')
			line = appendCSVField(line, []byte(kv[1]), opts.NullString)
			line = append(line, '\n')
			if _, err := w.Write(line); err != nil {
				return 0, fmt.Errorf("tpcc: export: write %s: %w", path, err)
			}
		}
		return int64(len(p.config)), nil
	}

	h := p.h
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
	var (
		rows  int64
		after []engine.Value // primary key of the last row written; nil before the first
	)
	for {
		n := 0
		err := r.part(func(tx *engine.Tx) error {
			so := engine.ScanOptions{Limit: opts.RowsPerTx}
			if after != nil {
				so.Lower, so.LowerExclusive = after, true
			}
			cur, err := tx.Scan(h, so)
			if err != nil {
				return fmt.Errorf("tpcc: export: scan of %s: %w", h.Name(), err)
			}
			var werr error
			for cur.Next() {
				r := cur.Row()
				line = line[:0]
				for i, c := range p.fields {
					if i > 0 {
						line = append(line, ',')
					}
					if c == rowNumberField {
						num := rows + int64(n) + 1
						if num > math.MaxInt32 {
							werr = fmt.Errorf("row %d: %s is an integer column in the %s schema, at most %d",
								num, p.file.Columns[i], SchemaBenchmarkSQL, math.MaxInt32)
							break
						}
						line = strconv.AppendInt(line, num, 10)
						continue
					}
					line, scratch = appendExportValue(line, scratch, r[c], &cols[c], opts.NullString, timeLayout)
				}
				if werr != nil {
					break
				}
				line = append(line, '\n')
				if _, werr = w.Write(line); werr != nil {
					break
				}
				n++
				// The row's bytes are the cursor's until its next step:
				// keep a copy of the key to start the next chunk from.
				after = after[:0]
				for _, c := range pk {
					v := r[c]
					v.B = bytes.Clone(v.B)
					after = append(after, v)
				}
			}
			rows += int64(n)
			cerr := cur.Close()
			if werr != nil {
				return fmt.Errorf("tpcc: export: write %s: %w", path, werr)
			}
			if cerr != nil {
				return fmt.Errorf("tpcc: export: scan of %s: %w", h.Name(), cerr)
			}
			return nil
		})
		if err != nil {
			return rows, err
		}
		if n < opts.RowsPerTx {
			return rows, nil
		}
	}
}

// appendExportValue appends v, a value of column c, as a CSV field: NULL
// as null, unquoted; any other value as its SQL literal (see Export),
// timestamps in timeLayout, quoted when appendCSVField says so. scratch
// is a buffer to reuse; the grown one is returned.
func appendExportValue(dst, scratch []byte, v engine.Value, c *engine.Column, null, timeLayout string) ([]byte, []byte) {
	if v.IsNull() {
		return append(dst, null...), scratch
	}
	scratch = scratch[:0]
	switch c.Type {
	case engine.TypeDecimal:
		scratch = appendDecimal(scratch, v.I, c.Scale)
	case engine.TypeTimestamp:
		scratch = time.UnixMicro(v.I).UTC().AppendFormat(scratch, timeLayout)
	case engine.TypeChar, engine.TypeVarchar:
		scratch = append(scratch, v.B...)
	default: // TypeInt; exportPlans admits no other type
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
