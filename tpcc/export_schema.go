package tpcc

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/enginelab/enginelab/engine"
)

// ExportSchema is whose tables Export writes its files for: the files'
// and tables' names, the columns and their order, whether a header comes
// first, and the form of timestamps. See Export for each.
type ExportSchema string

const (
	// SchemaSpec is the engine's own tables (Tables): the
	// specification's names and column order, the surrogate h_id
	// included, a header line, timestamps to the microsecond.
	SchemaSpec ExportSchema = "spec"
	// SchemaGoTPC is go-tpc's tables, as its CREATE TABLE statements
	// and its own CSV writer have them.
	SchemaGoTPC ExportSchema = "go-tpc"
	// SchemaBenchmarkSQL is BenchmarkSQL 5.0's bmsql_ tables, as its
	// CREATE TABLE statements and its loader have them.
	SchemaBenchmarkSQL ExportSchema = "benchmarksql"
)

// ExportSchemas lists the schemas Export accepts, the default first.
var ExportSchemas = []ExportSchema{SchemaSpec, SchemaGoTPC, SchemaBenchmarkSQL}

// ErrBadSchema is wrapped by the error of an ExportSchema that is not one
// of ExportSchemas. It wraps ErrInvalidConfig.
var ErrBadSchema = fmt.Errorf("tpcc: %w: unknown export schema", ErrInvalidConfig)

// ParseExportSchema returns the schema named s: spec, go-tpc or
// benchmarksql.
func ParseExportSchema(s string) (ExportSchema, error) {
	if slices.Contains(ExportSchemas, ExportSchema(s)) {
		return ExportSchema(s), nil
	}
	return "", errBadSchema(s)
}

func errBadSchema(s string) error {
	names := make([]string, len(ExportSchemas))
	for i, x := range ExportSchemas {
		names[i] = string(x)
	}
	return fmt.Errorf("%w %q: want one of %s", ErrBadSchema, s, strings.Join(names, ", "))
}

// ExportFile is one file Export writes.
type ExportFile struct {
	// Name is the file's name in the export directory.
	Name string
	// Table is the table the file loads into, by the schema's name.
	Table string
	// Columns are the file's fields in order, by the table's column
	// names.
	Columns []string
	// Header says the file's first line is Columns.
	Header bool
	// From is the engine's table the rows come from: one of TableNames,
	// or ConfigTable.
	From string
}

// ExportFiles returns the files Export writes for schema ("" is
// SchemaSpec), in the order it writes them: the nine tables in TableNames
// order, then, for BenchmarkSQL, bmsql_config.
func ExportFiles(schema ExportSchema) ([]ExportFile, error) {
	l, err := exportLayoutOf(schema)
	if err != nil {
		return nil, err
	}
	files := make([]ExportFile, len(l.files))
	for i, f := range l.files {
		f.Columns = slices.Clone(f.Columns)
		files[i] = f
	}
	return files, nil
}

// exportLayout is a schema's files and the form of its timestamps.
type exportLayout struct {
	schema     ExportSchema
	files      []ExportFile
	timeLayout string
}

// histIDColumn is BenchmarkSQL's surrogate key of HISTORY; Export writes
// the row's position in the file (see Export).
const histIDColumn = "hist_id"

// goTPCColumns are the columns of go-tpc's tables, in the order of their
// CREATE TABLE statements in go-tpc's tpcc/ddl.go (createTables; the MySQL
// and PostgreSQL variants have the same columns in the same order). Its
// own CSV writer (tpcc/csv.go) writes them in this order too. HISTORY has
// no h_id.
var goTPCColumns = map[string][]string{
	Warehouse: {"w_id", "w_name", "w_street_1", "w_street_2", "w_city", "w_state", "w_zip", "w_tax", "w_ytd"},
	District: {"d_id", "d_w_id", "d_name", "d_street_1", "d_street_2", "d_city", "d_state", "d_zip", "d_tax",
		"d_ytd", "d_next_o_id"},
	Customer: {"c_id", "c_d_id", "c_w_id", "c_first", "c_middle", "c_last", "c_street_1", "c_street_2", "c_city",
		"c_state", "c_zip", "c_phone", "c_since", "c_credit", "c_credit_lim", "c_discount", "c_balance",
		"c_ytd_payment", "c_payment_cnt", "c_delivery_cnt", "c_data"},
	History:  {"h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date", "h_amount", "h_data"},
	NewOrder: {"no_o_id", "no_d_id", "no_w_id"},
	Orders:   {"o_id", "o_d_id", "o_w_id", "o_c_id", "o_entry_d", "o_carrier_id", "o_ol_cnt", "o_all_local"},
	OrderLine: {"ol_o_id", "ol_d_id", "ol_w_id", "ol_number", "ol_i_id", "ol_supply_w_id", "ol_delivery_d",
		"ol_quantity", "ol_amount", "ol_dist_info"},
	Item: {"i_id", "i_im_id", "i_name", "i_price", "i_data"},
	Stock: {"s_i_id", "s_w_id", "s_quantity", "s_dist_01", "s_dist_02", "s_dist_03", "s_dist_04", "s_dist_05",
		"s_dist_06", "s_dist_07", "s_dist_08", "s_dist_09", "s_dist_10", "s_ytd", "s_order_cnt", "s_remote_cnt",
		"s_data"},
}

// benchmarkSQLTables are BenchmarkSQL 5.0's table names for the engine's
// tables.
var benchmarkSQLTables = map[string]string{
	Warehouse: "bmsql_warehouse", District: "bmsql_district", Customer: "bmsql_customer",
	History: "bmsql_history", NewOrder: "bmsql_new_order", Orders: "bmsql_oorder",
	OrderLine: "bmsql_order_line", Item: "bmsql_item", Stock: "bmsql_stock",
	ConfigTable: "bmsql_config",
}

// benchmarkSQLColumns are the columns of BenchmarkSQL 5.0's tables, by
// the engine's table names, in the order of their CREATE TABLE statements
// in BenchmarkSQL's run/sql.common/tableCreates.sql (run/sql.mysql's has
// the same columns in the same order). bmsql_history has the surrogate
// hist_id in place of h_id; bmsql_config is (cfg_name, cfg_value).
var benchmarkSQLColumns = map[string][]string{
	ConfigTable: {"cfg_name", "cfg_value"},
	Warehouse:   {"w_id", "w_ytd", "w_tax", "w_name", "w_street_1", "w_street_2", "w_city", "w_state", "w_zip"},
	District: {"d_w_id", "d_id", "d_ytd", "d_tax", "d_next_o_id", "d_name", "d_street_1", "d_street_2", "d_city",
		"d_state", "d_zip"},
	Customer: {"c_w_id", "c_d_id", "c_id", "c_discount", "c_credit", "c_last", "c_first", "c_credit_lim",
		"c_balance", "c_ytd_payment", "c_payment_cnt", "c_delivery_cnt", "c_street_1", "c_street_2", "c_city",
		"c_state", "c_zip", "c_phone", "c_since", "c_middle", "c_data"},
	History:  {histIDColumn, "h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date", "h_amount", "h_data"},
	NewOrder: {"no_w_id", "no_d_id", "no_o_id"},
	Orders:   {"o_w_id", "o_d_id", "o_id", "o_c_id", "o_carrier_id", "o_ol_cnt", "o_all_local", "o_entry_d"},
	OrderLine: {"ol_w_id", "ol_d_id", "ol_o_id", "ol_number", "ol_i_id", "ol_delivery_d", "ol_amount",
		"ol_supply_w_id", "ol_quantity", "ol_dist_info"},
	Item: {"i_id", "i_name", "i_price", "i_data", "i_im_id"},
	Stock: {"s_w_id", "s_i_id", "s_quantity", "s_ytd", "s_order_cnt", "s_remote_cnt", "s_data", "s_dist_01",
		"s_dist_02", "s_dist_03", "s_dist_04", "s_dist_05", "s_dist_06", "s_dist_07", "s_dist_08", "s_dist_09",
		"s_dist_10"},
}

// goTPCDatabase is the database name in go-tpc's CSV file names,
// <database>.<table>.<thread>.csv: go-tpc's default (its -D flag).
const goTPCDatabase = "test"

// exportLayoutOf returns schema's layout; "" is SchemaSpec.
func exportLayoutOf(schema ExportSchema) (*exportLayout, error) {
	l := &exportLayout{schema: schema}
	switch schema {
	case "", SchemaSpec:
		l.schema = SchemaSpec
		l.timeLayout = "2006-01-02 15:04:05.000000"
		decl := map[string]engine.Table{}
		for _, t := range Tables(engine.Clustered) {
			decl[t.Name] = t
		}
		for _, name := range TableNames {
			cols := make([]string, len(decl[name].Columns))
			for i, c := range decl[name].Columns {
				cols[i] = c.Name
			}
			l.files = append(l.files, ExportFile{Name: name + ".csv", Table: name, Columns: cols, Header: true, From: name})
		}
	case SchemaGoTPC:
		// go-tpc's timeFormat (tpcc/load.go); its MySQL tables'
		// DATETIME holds no fraction either.
		l.timeLayout = "2006-01-02 15:04:05"
		for _, name := range TableNames {
			l.files = append(l.files, ExportFile{Name: goTPCDatabase + "." + name + ".0.csv", Table: name,
				Columns: goTPCColumns[name], From: name})
		}
	case SchemaBenchmarkSQL:
		l.timeLayout = "2006-01-02 15:04:05.000000"
		for _, name := range append(slices.Clone(TableNames), ConfigTable) {
			table := benchmarkSQLTables[name]
			l.files = append(l.files, ExportFile{Name: table + ".csv", Table: table,
				Columns: benchmarkSQLColumns[name], From: name})
		}
	default:
		return nil, errBadSchema(string(schema))
	}
	return l, nil
}

// ExportLoadCommands returns the statements that load the files Export
// writes into dir with opts into the schema's tables, one a line, after a
// SET of the session's time zone to UTC: for PostgreSQL, psql's \copy
// commands (psql reads the files, so any role that may insert into the
// tables can run them); for MySQL, LOAD DATA LOCAL INFILE statements (the
// client reads the files: mysql --local-infile=1, with the server's
// local_infile on; without LOCAL the server reads them itself, from where
// its secure_file_priv allows). Each names its file by
// filepath.Join(dir, name), so an absolute dir gives statements that run
// from any directory, and lists the file's columns, so that the tables'
// own column order does not matter. The tables must exist: the schema's
// CREATE TABLE statements (see Export). Lines starting with -- are
// comments to both clients.
func ExportLoadCommands(dir string, opts ExportConfig) (postgres, mysql string, err error) {
	l, err := exportLayoutOf(opts.Schema)
	if err != nil {
		return "", "", err
	}
	null := opts.NullString
	if strings.ContainsAny(null, ",\"\r\n") {
		return "", "", fmt.Errorf("tpcc: %w: export NullString %q holds a comma, a double quote, CR or LF", ErrInvalidConfig, null)
	}
	nullable := map[[2]string]bool{}
	for _, t := range Tables(engine.Clustered) {
		for _, c := range t.Columns {
			nullable[[2]string{t.Name, c.Name}] = c.Nullable
		}
	}
	whose := map[ExportSchema]string{SchemaSpec: "the specification's tables, as the engine names them",
		SchemaGoTPC: "go-tpc's tables", SchemaBenchmarkSQL: "BenchmarkSQL's tables"}[l.schema]
	var pg, my strings.Builder
	fmt.Fprintf(&pg, "-- PostgreSQL, in psql (\\copy reads the files where psql runs): into %s\n", whose)
	pg.WriteString("SET TIME ZONE 'UTC';\n")
	fmt.Fprintf(&my, "-- MySQL, in mysql --local-infile=1 (the server's local_infile on): into %s\n", whose)
	my.WriteString("SET time_zone = '+00:00';\n")

	// MySQL reads an unquoted NULL as NULL when fields may be enclosed,
	// and \N when a backslash is the escape; any other NULL string is
	// turned into NULL by NULLIF.
	escape := " ESCAPED BY ''"
	if null == `\N` {
		escape = ""
	}
	mysqlNullif := null != "NULL" && null != `\N`
	for _, f := range l.files {
		path := filepath.Join(dir, f.Name)
		fmt.Fprintf(&pg, "\\copy %s (%s) FROM %s WITH (FORMAT csv", f.Table, strings.Join(f.Columns, ", "), sqlQuote(path))
		if f.Header {
			pg.WriteString(", HEADER")
		}
		if null != "" {
			fmt.Fprintf(&pg, ", NULL %s", sqlQuote(null))
		}
		pg.WriteString(")\n")

		fmt.Fprintf(&my, "LOAD DATA LOCAL INFILE %s INTO TABLE %s CHARACTER SET utf8mb4 FIELDS TERMINATED BY ','"+
			" OPTIONALLY ENCLOSED BY '\"'%s LINES TERMINATED BY '\\n'", mysqlQuote(path), f.Table, escape)
		if f.Header {
			my.WriteString(" IGNORE 1 LINES")
		}
		fields := make([]string, len(f.Columns))
		var set []string
		for i, c := range f.Columns {
			fields[i] = c
			if mysqlNullif && nullable[[2]string{f.From, c}] {
				fields[i] = "@" + c
				set = append(set, fmt.Sprintf("%s = NULLIF(@%s, %s)", c, c, mysqlQuote(null)))
			}
		}
		fmt.Fprintf(&my, " (%s)", strings.Join(fields, ", "))
		if len(set) > 0 {
			fmt.Fprintf(&my, " SET %s", strings.Join(set, ", "))
		}
		my.WriteString(";\n")
	}
	if l.schema == SchemaBenchmarkSQL {
		after := "-- then what BenchmarkSQL's runDatabaseBuild.sh runs after its loader: runSQL.sh PROPS with" +
			" indexCreates, foreignKeys, extraHistID and buildFinish\n"
		pg.WriteString(after)
		my.WriteString(after)
	}
	return pg.String(), my.String(), nil
}

// sqlQuote quotes s as a standard SQL string literal.
func sqlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// mysqlQuote quotes s as a MySQL string literal, in which a backslash is
// an escape (its default SQL mode).
func mysqlQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", "''") + "'"
}
