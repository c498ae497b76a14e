package tpcc

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/enginelab/enginelab/engine"
	"github.com/stretchr/testify/require"
)

// The kits' tables, pinned column by column, in the order of their CREATE
// TABLE statements.
var (
	// go-tpc's tpcc/ddl.go, createTables (its MySQL and PostgreSQL
	// statements list the same columns in the same order).
	wantGoTPC = []ExportFile{
		{Name: "test.item.0.csv", Table: "item", From: Item,
			Columns: []string{"i_id", "i_im_id", "i_name", "i_price", "i_data"}},
		{Name: "test.warehouse.0.csv", Table: "warehouse", From: Warehouse,
			Columns: []string{"w_id", "w_name", "w_street_1", "w_street_2", "w_city", "w_state", "w_zip", "w_tax", "w_ytd"}},
		{Name: "test.district.0.csv", Table: "district", From: District,
			Columns: []string{"d_id", "d_w_id", "d_name", "d_street_1", "d_street_2", "d_city", "d_state", "d_zip",
				"d_tax", "d_ytd", "d_next_o_id"}},
		{Name: "test.customer.0.csv", Table: "customer", From: Customer,
			Columns: []string{"c_id", "c_d_id", "c_w_id", "c_first", "c_middle", "c_last", "c_street_1", "c_street_2",
				"c_city", "c_state", "c_zip", "c_phone", "c_since", "c_credit", "c_credit_lim", "c_discount", "c_balance",
				"c_ytd_payment", "c_payment_cnt", "c_delivery_cnt", "c_data"}},
		{Name: "test.history.0.csv", Table: "history", From: History,
			Columns: []string{"h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date", "h_amount", "h_data"}},
		{Name: "test.orders.0.csv", Table: "orders", From: Orders,
			Columns: []string{"o_id", "o_d_id", "o_w_id", "o_c_id", "o_entry_d", "o_carrier_id", "o_ol_cnt", "o_all_local"}},
		{Name: "test.new_order.0.csv", Table: "new_order", From: NewOrder,
			Columns: []string{"no_o_id", "no_d_id", "no_w_id"}},
		{Name: "test.order_line.0.csv", Table: "order_line", From: OrderLine,
			Columns: []string{"ol_o_id", "ol_d_id", "ol_w_id", "ol_number", "ol_i_id", "ol_supply_w_id", "ol_delivery_d",
				"ol_quantity", "ol_amount", "ol_dist_info"}},
		{Name: "test.stock.0.csv", Table: "stock", From: Stock,
			Columns: []string{"s_i_id", "s_w_id", "s_quantity", "s_dist_01", "s_dist_02", "s_dist_03", "s_dist_04",
				"s_dist_05", "s_dist_06", "s_dist_07", "s_dist_08", "s_dist_09", "s_dist_10", "s_ytd", "s_order_cnt",
				"s_remote_cnt", "s_data"}},
	}
	// BenchmarkSQL 5.0's run/sql.common/tableCreates.sql (run/sql.mysql's
	// lists the same columns in the same order).
	wantBenchmarkSQL = []ExportFile{
		{Name: "bmsql_item.csv", Table: "bmsql_item", From: Item,
			Columns: []string{"i_id", "i_name", "i_price", "i_data", "i_im_id"}},
		{Name: "bmsql_warehouse.csv", Table: "bmsql_warehouse", From: Warehouse,
			Columns: []string{"w_id", "w_ytd", "w_tax", "w_name", "w_street_1", "w_street_2", "w_city", "w_state", "w_zip"}},
		{Name: "bmsql_district.csv", Table: "bmsql_district", From: District,
			Columns: []string{"d_w_id", "d_id", "d_ytd", "d_tax", "d_next_o_id", "d_name", "d_street_1", "d_street_2",
				"d_city", "d_state", "d_zip"}},
		{Name: "bmsql_customer.csv", Table: "bmsql_customer", From: Customer,
			Columns: []string{"c_w_id", "c_d_id", "c_id", "c_discount", "c_credit", "c_last", "c_first", "c_credit_lim",
				"c_balance", "c_ytd_payment", "c_payment_cnt", "c_delivery_cnt", "c_street_1", "c_street_2", "c_city",
				"c_state", "c_zip", "c_phone", "c_since", "c_middle", "c_data"}},
		{Name: "bmsql_history.csv", Table: "bmsql_history", From: History,
			Columns: []string{"hist_id", "h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date", "h_amount", "h_data"}},
		{Name: "bmsql_oorder.csv", Table: "bmsql_oorder", From: Orders,
			Columns: []string{"o_w_id", "o_d_id", "o_id", "o_c_id", "o_carrier_id", "o_ol_cnt", "o_all_local", "o_entry_d"}},
		{Name: "bmsql_new_order.csv", Table: "bmsql_new_order", From: NewOrder,
			Columns: []string{"no_w_id", "no_d_id", "no_o_id"}},
		{Name: "bmsql_order_line.csv", Table: "bmsql_order_line", From: OrderLine,
			Columns: []string{"ol_w_id", "ol_d_id", "ol_o_id", "ol_number", "ol_i_id", "ol_delivery_d", "ol_amount",
				"ol_supply_w_id", "ol_quantity", "ol_dist_info"}},
		{Name: "bmsql_stock.csv", Table: "bmsql_stock", From: Stock,
			Columns: []string{"s_w_id", "s_i_id", "s_quantity", "s_ytd", "s_order_cnt", "s_remote_cnt", "s_data",
				"s_dist_01", "s_dist_02", "s_dist_03", "s_dist_04", "s_dist_05", "s_dist_06", "s_dist_07", "s_dist_08",
				"s_dist_09", "s_dist_10"}},
		{Name: "bmsql_config.csv", Table: "bmsql_config", From: ConfigTable,
			Columns: []string{"cfg_name", "cfg_value"}},
	}
)

// TestExportFiles pins each schema's files: names, tables, columns in the
// kits' order, headers; and checks that every kit column is an engine
// column of the same name, the engine's h_id the only column a kit lacks
// and BenchmarkSQL's hist_id the only one the engine lacks.
func TestExportFiles(t *testing.T) {
	files, err := ExportFiles(SchemaGoTPC)
	require.NoError(t, err)
	require.Equal(t, wantGoTPC, files)
	files, err = ExportFiles(SchemaBenchmarkSQL)
	require.NoError(t, err)
	require.Equal(t, wantBenchmarkSQL, files)

	var wantSpec []ExportFile
	decl := map[string]engine.Table{}
	for _, def := range Tables(engine.Clustered) {
		decl[def.Name] = def
	}
	for _, name := range TableNames {
		wantSpec = append(wantSpec, ExportFile{Name: name + ".csv", Table: name, From: name, Header: true,
			Columns: exportColumnNames(decl[name])})
	}
	for _, s := range []ExportSchema{SchemaSpec, ""} {
		files, err = ExportFiles(s)
		require.NoError(t, err)
		require.Equal(t, wantSpec, files, "%q", s)
	}

	for _, s := range []ExportSchema{SchemaGoTPC, SchemaBenchmarkSQL} {
		files, err := ExportFiles(s)
		require.NoError(t, err)
		for _, f := range files {
			if f.From == ConfigTable {
				require.Equal(t, []string{"cfg_name", "cfg_value"}, exportColumnNames(configTable()))
				continue
			}
			engineCols := exportColumnNames(decl[f.From])
			var onlyKit, onlyEngine []string
			for _, c := range f.Columns {
				if !slices.Contains(engineCols, c) {
					onlyKit = append(onlyKit, c)
				}
			}
			for _, c := range engineCols {
				if !slices.Contains(f.Columns, c) {
					onlyEngine = append(onlyEngine, c)
				}
			}
			switch {
			case f.From != History:
				require.Empty(t, onlyKit, "%s %s", s, f.Table)
				require.Empty(t, onlyEngine, "%s %s", s, f.Table)
			case s == SchemaGoTPC:
				require.Empty(t, onlyKit, "%s %s", s, f.Table)
				require.Equal(t, []string{"h_id"}, onlyEngine, "%s %s", s, f.Table)
			default:
				require.Equal(t, []string{"hist_id"}, onlyKit, "%s %s", s, f.Table)
				require.Equal(t, []string{"h_id"}, onlyEngine, "%s %s", s, f.Table)
			}
		}
	}

	// The slices are copies: changing them changes nothing.
	files, err = ExportFiles(SchemaGoTPC)
	require.NoError(t, err)
	files[0].Columns[0] = "x"
	files, err = ExportFiles(SchemaGoTPC)
	require.NoError(t, err)
	require.Equal(t, "i_id", files[0].Columns[0])
}

// TestExportBadSchema: an unknown schema is refused, naming it and the
// accepted ones, before anything is created; ParseExportSchema takes the
// three names.
func TestExportBadSchema(t *testing.T) {
	db := exportTinyDB(t)
	dir := filepath.Join(t.TempDir(), "out")
	for _, s := range []ExportSchema{"hammerdb", "SPEC", "go_tpc", " spec"} {
		_, err := Export(db, dir, ExportConfig{Schema: s})
		require.ErrorIs(t, err, ErrBadSchema, "%q", s)
		require.ErrorIs(t, err, ErrInvalidConfig, "%q", s)
		require.Contains(t, err.Error(), fmt.Sprintf("%q", s))
		require.Contains(t, err.Error(), "want one of spec, go-tpc, benchmarksql")
		require.NoDirExists(t, dir)

		_, _, err = ExportLoadCommands(dir, ExportConfig{Schema: s})
		require.ErrorIs(t, err, ErrBadSchema, "%q", s)
		_, err = ExportFiles(s)
		require.ErrorIs(t, err, ErrBadSchema, "%q", s)
		_, err = ParseExportSchema(string(s))
		require.ErrorIs(t, err, ErrBadSchema, "%q", s)
	}
	for _, s := range ExportSchemas {
		got, err := ParseExportSchema(string(s))
		require.NoError(t, err)
		require.Equal(t, s, got)
	}
	_, err := ParseExportSchema("")
	require.ErrorIs(t, err, ErrBadSchema)
	require.Equal(t, []ExportSchema{"spec", "go-tpc", "benchmarksql"}, ExportSchemas)
}

// exportTinyKitDB is exportTinyDB with four HISTORY rows, inserted out of
// key order (two of the loader's, one of a terminal's, one of another
// warehouse), and ConfigTable.
func exportTinyKitDB(t *testing.T) *engine.DB {
	t.Helper()
	db := exportTinyDB(t)
	h, err := db.Table(History)
	require.NoError(t, err)
	i, s, d := engine.Int, engine.Str, engine.Dec
	t1 := engine.Time(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	t2 := engine.Time(time.Date(2024, 2, 29, 23, 59, 59, 123456789, time.FixedZone("UTC-5", -5*3600)))
	tx := db.Begin(nil)
	for _, row := range []engine.Row{
		{i(HistoryID(1, 0, 2)), i(2), i(1), i(1), i(1), i(1), t1, d(1000), s("second")},
		{i(HistoryID(1, 0, 1)), i(1), i(1), i(1), i(1), i(1), t2, d(1000), s("a,b")},
		{i(HistoryID(2, 0, 1)), i(1), i(1), i(2), i(1), i(2), t1, d(-250), s("")},
		{i(HistoryID(1, 3, 1)), i(3), i(2), i(1), i(2), i(1), t2, d(500000), s("NULL")},
	} {
		require.NoError(t, tx.Insert(h, row))
	}
	require.NoError(t, tx.Commit())
	require.NoError(t, writeLoaded(db, Loaded{Warehouses: 1, Seed: 9, Constants: Constants{CLast: 123, CID: 456, CItem: 7890},
		Org: engine.Clustered, LoadTime: DefaultLoadTime}))
	return db
}

// exportTinyKitFiles is what Export writes of exportTinyKitDB for schema,
// by file name, with NULL written as null.
func exportTinyKitFiles(schema ExportSchema, null string) map[string]string {
	q := func(s string) string { // a text equal to the NULL string is quoted
		if s == null {
			return `"` + s + `"`
		}
		return s
	}
	switch schema {
	case SchemaGoTPC:
		return map[string]string{
			"test.item.0.csv": "",
			"test.warehouse.0.csv": "1,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\"\",\" X\",123411111,0.0500,-0.05\n" +
				"2,\"\\.\"," + q(`\N`) + ",ok," + q("NULL") + ",TX,000011111,0.0000,1234.56\n",
			"test.district.0.csv": "",
			"test.customer.0.csv": "",
			"test.history.0.csv": "1,1,1,1,1,2024-03-01 04:59:59,10.00,\"a,b\"\n" +
				"2,1,1,1,1,2025-01-01 00:00:00,10.00,second\n" +
				"3,2,1,2,1,2024-03-01 04:59:59,5000.00," + q("NULL") + "\n" +
				"1,1,2,1,2,2025-01-01 00:00:00,-2.50,\"\"\n",
			"test.orders.0.csv": "1,1,1,5,2025-01-01 00:00:00," + null + ",2,1\n" +
				"2,1,1,6,2024-03-01 04:59:59,7,1,0\n",
			"test.new_order.0.csv": "2101,1,1\n2102,1,1\n2103,1,1\n1,2,1\n3,2,1\n",
			"test.order_line.0.csv": "1,1,1,1,77,1," + null + ",5,0.00,dist-info\n" +
				"2,1,1,1,78,2,2024-03-01 04:59:59,10,-0.01,x\n",
			"test.stock.0.csv": "",
		}
	case SchemaBenchmarkSQL:
		return map[string]string{
			"bmsql_item.csv": "",
			"bmsql_warehouse.csv": "1,-0.05,0.0500,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\"\",\" X\",123411111\n" +
				"2,1234.56,0.0000,\"\\.\"," + q(`\N`) + ",ok," + q("NULL") + ",TX,000011111\n",
			"bmsql_district.csv": "",
			"bmsql_customer.csv": "",
			"bmsql_history.csv": "1,1,1,1,1,1,2024-03-01 04:59:59.123456,10.00,\"a,b\"\n" +
				"2,2,1,1,1,1,2025-01-01 00:00:00.000000,10.00,second\n" +
				"3,3,2,1,2,1,2024-03-01 04:59:59.123456,5000.00," + q("NULL") + "\n" +
				"4,1,1,2,1,2,2025-01-01 00:00:00.000000,-2.50,\"\"\n",
			"bmsql_oorder.csv": "1,1,1,5," + null + ",2,1,2025-01-01 00:00:00.000000\n" +
				"1,1,2,6,7,1,0,2024-03-01 04:59:59.123456\n",
			"bmsql_new_order.csv": "1,1,2101\n1,1,2102\n1,1,2103\n1,2,1\n1,2,3\n",
			"bmsql_order_line.csv": "1,1,1,1,77," + null + ",0.00,1,5,dist-info\n" +
				"1,1,2,1,78,2024-03-01 04:59:59.123456,-0.01,2,10,x\n",
			"bmsql_stock.csv":  "",
			"bmsql_config.csv": "warehouses,1\nnURandCLast,123\nnURandCC_ID,456\nnURandCI_ID,7890\n",
		}
	}
	panic(schema)
}

// TestExportKitsHandMade exports a hand-made database for go-tpc and
// BenchmarkSQL and compares every file byte for byte: the kits' names,
// column orders, no header, go-tpc's timestamps to the second, h_id
// dropped or renumbered as hist_id, bmsql_config from ConfigTable; then
// reads every file back with encoding/csv, each record with as many
// fields as the kit's table has columns.
func TestExportKitsHandMade(t *testing.T) {
	db := exportTinyKitDB(t)
	for _, schema := range []ExportSchema{SchemaGoTPC, SchemaBenchmarkSQL} {
		for _, null := range []string{"NULL", "", `\N`} {
			for _, perTx := range []int{0, 1, 3} {
				t.Run(fmt.Sprintf("%s/null=%q/rowsPerTx=%d", schema, null, perTx), func(t *testing.T) {
					dir := t.TempDir()
					progress := map[string]int64{}
					stats, err := Export(db, dir, ExportConfig{Schema: schema, NullString: null, RowsPerTx: perTx,
						Progress: func(table string, rows int64) { progress[table] = rows }})
					require.NoError(t, err)
					want := exportTinyKitFiles(schema, null)
					entries, err := os.ReadDir(dir)
					require.NoError(t, err)
					require.Len(t, entries, len(want))
					files, err := ExportFiles(schema)
					require.NoError(t, err)
					wantRows := map[string]int64{}
					var size int64
					for _, f := range files {
						got, err := os.ReadFile(filepath.Join(dir, f.Name))
						require.NoError(t, err)
						require.Equal(t, want[f.Name], string(got), f.Name)
						size += int64(len(got))
						wantRows[f.Table] = int64(strings.Count(want[f.Name], "\n") - strings.Count(want[f.Name], "two\nlines"))

						r := csv.NewReader(strings.NewReader(string(got)))
						r.FieldsPerRecord = len(f.Columns)
						recs, err := r.ReadAll()
						require.NoError(t, err, f.Name)
						require.Len(t, recs, int(wantRows[f.Table]), f.Name)
					}
					require.Equal(t, wantRows, stats.Rows)
					require.Equal(t, wantRows, progress)
					require.Equal(t, size, stats.Bytes)
				})
			}
		}
	}
}

// TestExportBenchmarkSQLNeedsConfig: without ConfigTable there is no
// bmsql_config to write, and nothing is written; the other schemas do
// without it.
func TestExportBenchmarkSQLNeedsConfig(t *testing.T) {
	db := exportTinyDB(t)
	dir := filepath.Join(t.TempDir(), "out")
	_, err := Export(db, dir, ExportConfig{Schema: SchemaBenchmarkSQL})
	require.ErrorIs(t, err, ErrNotLoaded)
	require.Contains(t, err.Error(), ConfigTable)
	require.NoDirExists(t, dir)
	_, err = Export(db, dir, ExportConfig{Schema: SchemaGoTPC})
	require.NoError(t, err)
}

// TestExportLoadCommands pins the statements of each schema for a few
// tables, and checks that every file is loaded once, with its columns.
func TestExportLoadCommands(t *testing.T) {
	dir := "/data/it's here"
	pg, my, err := ExportLoadCommands(dir, ExportConfig{Schema: SchemaGoTPC, NullString: "NULL"})
	require.NoError(t, err)
	require.Contains(t, pg, "\nSET TIME ZONE 'UTC';\n")
	require.Contains(t, pg, "\n\\copy orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)"+
		" FROM '/data/it''s here/test.orders.0.csv' WITH (FORMAT csv, NULL 'NULL')\n")
	require.Contains(t, pg, "\n\\copy history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)"+
		" FROM '/data/it''s here/test.history.0.csv' WITH (FORMAT csv, NULL 'NULL')\n")
	require.Contains(t, my, "\nSET time_zone = '+00:00';\n")
	require.Contains(t, my, "\nLOAD DATA LOCAL INFILE '/data/it''s here/test.orders.0.csv' INTO TABLE orders CHARACTER SET utf8mb4"+
		" FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' ESCAPED BY '' LINES TERMINATED BY '\\n'"+
		" (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local);\n")

	pg, my, err = ExportLoadCommands(dir, ExportConfig{Schema: SchemaBenchmarkSQL})
	require.NoError(t, err)
	require.Contains(t, pg, "\n\\copy bmsql_history (hist_id, h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)"+
		" FROM '/data/it''s here/bmsql_history.csv' WITH (FORMAT csv)\n")
	require.Contains(t, my, "\nLOAD DATA LOCAL INFILE '/data/it''s here/bmsql_order_line.csv' INTO TABLE bmsql_order_line"+
		" CHARACTER SET utf8mb4 FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' ESCAPED BY '' LINES TERMINATED BY '\\n'"+
		" (ol_w_id, ol_d_id, ol_o_id, ol_number, ol_i_id, @ol_delivery_d, ol_amount, ol_supply_w_id, ol_quantity, ol_dist_info)"+
		" SET ol_delivery_d = NULLIF(@ol_delivery_d, '');\n")
	require.Contains(t, pg, "extraHistID")
	require.Contains(t, my, "extraHistID")

	pg, my, err = ExportLoadCommands(dir, ExportConfig{NullString: `\N`})
	require.NoError(t, err)
	require.Contains(t, pg, "\n\\copy warehouse (w_id, w_name, w_street_1, w_street_2, w_city, w_state, w_zip, w_tax, w_ytd)"+
		" FROM '/data/it''s here/warehouse.csv' WITH (FORMAT csv, HEADER, NULL '\\N')\n")
	require.Contains(t, my, "\nLOAD DATA LOCAL INFILE '/data/it''s here/orders.csv' INTO TABLE orders CHARACTER SET utf8mb4"+
		" FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' LINES TERMINATED BY '\\n' IGNORE 1 LINES"+
		" (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local);\n")

	_, my, err = ExportLoadCommands(dir, ExportConfig{NullString: `nil\`})
	require.NoError(t, err)
	require.Contains(t, my, " SET o_carrier_id = NULLIF(@o_carrier_id, 'nil\\\\');\n")

	for _, s := range ExportSchemas {
		for _, null := range []string{"", "NULL", `\N`} {
			pg, my, err := ExportLoadCommands(dir, ExportConfig{Schema: s, NullString: null})
			require.NoError(t, err)
			files, err := ExportFiles(s)
			require.NoError(t, err)
			pgLines, myLines := exportStatements(pg), exportStatements(my)
			require.Len(t, pgLines, len(files)+1, "%s: SET, then a statement per file", s)
			require.Len(t, myLines, len(files)+1, "%s", s)
			for i, f := range files {
				path := strings.ReplaceAll(filepath.Join(dir, f.Name), "'", "''")
				require.True(t, strings.HasPrefix(pgLines[i+1], `\copy `+f.Table+" ("+strings.Join(f.Columns, ", ")+") FROM '"+path+"' "),
					"%s: %s", s, pgLines[i+1])
				require.Equal(t, f.Header, strings.Contains(pgLines[i+1], "HEADER"), pgLines[i+1])
				require.True(t, strings.HasPrefix(myLines[i+1], "LOAD DATA LOCAL INFILE '"+path+"' INTO TABLE "+f.Table+" "), myLines[i+1])
				require.Equal(t, f.Header, strings.Contains(myLines[i+1], "IGNORE 1 LINES"), myLines[i+1])
			}
		}
	}

	_, _, err = ExportLoadCommands(dir, ExportConfig{NullString: "a,b"})
	require.ErrorIs(t, err, ErrInvalidConfig)
}

// exportStatements returns the lines of script that are not comments.
func exportStatements(script string) []string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(script, "\n"), "\n") {
		if !strings.HasPrefix(l, "--") {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestExportKitsLoaded exports the shared small-scale W=1 database (the
// same columns and formats as a full one, a tenth of the rows) for each schema
// and reads each kit's files alongside the spec's: the same rows in the
// same order, every field of a kit's column equal to the spec file's of
// the same name (timestamps cut to the second for go-tpc, NULL written
// as NULL), hist_id numbering the rows, and bmsql_config holding the
// load's constants.
func TestExportKitsLoaded(t *testing.T) {
	db, _ := loadSmall(t, engine.Clustered)
	loaded, err := ReadLoaded(db)
	require.NoError(t, err)
	specDir := t.TempDir()
	spec, err := Export(db, specDir, ExportConfig{})
	require.NoError(t, err)
	specFiles, err := ExportFiles(SchemaSpec)
	require.NoError(t, err)

	for _, schema := range []ExportSchema{SchemaGoTPC, SchemaBenchmarkSQL} {
		dir := t.TempDir()
		stats, err := Export(db, dir, ExportConfig{Schema: schema, NullString: "NULL"})
		require.NoError(t, err)
		files, err := ExportFiles(schema)
		require.NoError(t, err)
		for _, f := range files {
			if f.From == ConfigTable {
				got, err := os.ReadFile(filepath.Join(dir, f.Name))
				require.NoError(t, err)
				require.Equal(t, fmt.Sprintf("warehouses,%d\nnURandCLast,%d\nnURandCC_ID,%d\nnURandCI_ID,%d\n",
					loaded.Warehouses, loaded.Constants.CLast, loaded.Constants.CID, loaded.Constants.CItem), string(got))
				require.EqualValues(t, 4, stats.Rows[f.Table])
				continue
			}
			i := slices.IndexFunc(specFiles, func(s ExportFile) bool { return s.Table == f.From })
			rows := exportCompareKitFile(t, schema, f, filepath.Join(dir, f.Name), filepath.Join(specDir, specFiles[i].Name))
			require.Equal(t, spec.Rows[f.From], rows, "%s %s", schema, f.Table)
			require.Equal(t, rows, stats.Rows[f.Table], "%s %s", schema, f.Table)
		}
	}
}

// exportCompareKitFile reads kit file path of f alongside the spec's file
// of the same table and returns the rows read; see TestExportKitsLoaded.
func exportCompareKitFile(t *testing.T, schema ExportSchema, f ExportFile, path, specPath string) int64 {
	t.Helper()
	open := func(p string) *csv.Reader {
		file, err := os.Open(p)
		require.NoError(t, err)
		t.Cleanup(func() { _ = file.Close() })
		r := csv.NewReader(file)
		r.ReuseRecord = true
		return r
	}
	kit, ref := open(path), open(specPath)
	kit.FieldsPerRecord = len(f.Columns)
	header, err := ref.Read()
	require.NoError(t, err)
	at := map[string]int{}
	for i, c := range header {
		at[c] = i
	}
	decl := map[string]engine.Column{}
	for _, def := range Tables(engine.Clustered) {
		if def.Name == f.From {
			for _, c := range def.Columns {
				decl[c.Name] = c
			}
		}
	}
	var rows int64
	var problems []string
	for {
		want, werr := ref.Read()
		got, gerr := kit.Read()
		if werr == io.EOF || gerr == io.EOF {
			require.ErrorIs(t, werr, io.EOF, "%s %s: the spec's file has more rows", schema, f.Table)
			require.ErrorIs(t, gerr, io.EOF, "%s %s: the kit's file has more rows", schema, f.Table)
			break
		}
		require.NoError(t, errors.Join(werr, gerr), "%s %s row %d", schema, f.Table, rows+1)
		rows++
		for i, c := range f.Columns {
			var w string
			switch col := decl[c]; {
			case c == histIDColumn:
				w = strconv.FormatInt(rows, 10)
			case want[at[c]] == "" && col.Nullable:
				w = "NULL"
			case col.Type == engine.TypeTimestamp && schema == SchemaGoTPC:
				w = want[at[c]][:len("2006-01-02 15:04:05")]
			default:
				w = want[at[c]]
			}
			if got[i] != w && len(problems) < 5 {
				problems = append(problems, fmt.Sprintf("row %d %s: %q, want %q", rows, c, got[i], w))
			}
		}
	}
	require.Empty(t, problems, "%s %s", schema, f.Table)
	return rows
}
