package client

import (
	"github.com/enginelab/enginelab/tpcc"
)

// Kit is a TPC-C client kit whose statements a terminal sends.
type Kit int

// Kits.
const (
	// BenchmarkSQL is BenchmarkSQL 5.0's jTPCC (a Java client over JDBC,
	// PreparedStatement objects kept per connection, autocommit off).
	BenchmarkSQL Kit = iota
	// SysbenchTPCC is Percona's sysbench-tpcc (Lua over sysbench's C
	// drivers; tpcc-mysql sends the same count(c_id)). Its statements are
	// formatted text (con:query(string.format(...))).
	SysbenchTPCC
	numKits
)

var kitNames = [numKits]string{"benchmarksql", "sysbench-tpcc"}

func (k Kit) String() string {
	if k >= 0 && k < numKits {
		return kitNames[k]
	}
	return "unknown kit"
}

// KitOf is the kit whose statements a tpcc.Profile's engine calls stand
// for: Sysbench's are sysbench-tpcc's; BenchmarkSQL's and Optimized's
// BenchmarkSQL's (Optimized differs in the rows it reads, not in the
// statements it sends, but for its count(*), which it sends as
// sysbench-tpcc's count with count(*)).
func KitOf(p tpcc.Profile) Kit {
	if p == tpcc.Sysbench {
		return SysbenchTPCC
	}
	return BenchmarkSQL
}

// Kind is what a statement does, which decides its messages.
type Kind uint8

// Statement kinds.
const (
	Select Kind = iota // rows come back
	Update             // an UPDATE, INSERT or DELETE: an OK with the count
	Commit             // COMMIT (BenchmarkSQL: Connection.commit)
	Rollback
	numKinds
)

var kindNames = [numKinds]string{"select", "update", "commit", "rollback"}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "unknown kind"
}

// Join says how an engine step relates to the statement the client sent.
type Join uint8

const (
	// Own: the step is a statement of its own.
	Own Join = iota
	// Merged: the step is more engine work of the statement in progress
	// (a join's other table, an UPDATE's own read of the row).
	Merged
	// Once: the first of a run of the same step is a statement, the
	// rest of the run is its work (one UPDATE that changes every line of
	// an order).
	Once
)

// Statement is one statement a kit sends, as the engine step it starts.
type Statement struct {
	// ID numbers the kit's statements: a PreparedStatement object, which
	// a driver prepares once per connection.
	ID   int
	Kind Kind
	SQL  string
	// Params is the number of bound parameters; Columns of the result.
	Params, Columns int
	// RowBytes is a result row's values on the wire (text form; the
	// binary form is within a few bytes of it for these rows).
	RowBytes int
	// Rows, if not 0, is the rows the statement returns whatever the
	// engine's scan handed back (an aggregate: 1); 0 takes the engine's
	// rows returned over the statement's steps.
	Rows int
	// FirstRowOnly says the kit reads the first row and closes the
	// result (BenchmarkSQL's Delivery: the oldest new order).
	FirstRowOnly bool
	// Batched says the kit adds it to a batch (addBatch) and sends the
	// batch after the loop (executeBatch).
	Batched bool
	// Insert says it is an INSERT (Connector/J rewrites an INSERT batch
	// into one multi-row INSERT).
	Insert bool
}

// StepStatement is what one engine step is in a kit's statement
// sequence.
type StepStatement struct {
	Join Join
	// Stmt is the statement the step starts (nil if Merged).
	Stmt *Statement
}

// Steps returns the kit's statement for each engine step, indexed by
// tpcc.Step; countStar says the count steps send count(*) (Optimized) or
// count(c_id) (Sysbench). The tables are in the package's documentation.
func (k Kit) Steps(countStar bool) *[tpcc.NumSteps]StepStatement {
	t := benchmarkSQLSteps
	if k == SysbenchTPCC {
		t = sysbenchSteps
	}
	if countStar {
		c := countStarStmt
		t[tpcc.PByNameCount] = StepStatement{Stmt: &c}
		c2 := countStarStmt
		c2.ID = countStarStmt.ID + 1
		t[tpcc.OSByNameCount] = StepStatement{Stmt: &c2}
	}
	return &t
}

func own(s Statement) StepStatement  { return StepStatement{Stmt: &s} }
func once(s Statement) StepStatement { return StepStatement{Join: Once, Stmt: &s} }

var merged = StepStatement{Join: Merged}

// BenchmarkSQL 5.0's statements (src/client/jTPCCConnection.java), in the
// order of the engine steps. Row widths are the columns' values as text.
var benchmarkSQLSteps = [tpcc.NumSteps]StepStatement{
	tpcc.NOWarehouse: own(Statement{ID: 1, Kind: Select, Params: 3, Columns: 4, RowBytes: 30,
		SQL: "SELECT c_discount, c_last, c_credit, w_tax FROM bmsql_customer JOIN bmsql_warehouse ON (w_id = c_w_id) WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"}),
	tpcc.NODistrict: own(Statement{ID: 2, Kind: Select, Params: 2, Columns: 2, RowBytes: 10,
		SQL: "SELECT d_tax, d_next_o_id FROM bmsql_district WHERE d_w_id = ? AND d_id = ? FOR UPDATE"}),
	tpcc.NODistrictUpdate: own(Statement{ID: 3, Kind: Update, Params: 2,
		SQL: "UPDATE bmsql_district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?"}),
	tpcc.NOCustomer: merged, // the warehouse statement's join
	tpcc.NOInsertOrder: own(Statement{ID: 4, Kind: Update, Params: 7, Insert: true,
		SQL: "INSERT INTO bmsql_oorder (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, ?, ?, ?)"}),
	tpcc.NOInsertNewOrder: own(Statement{ID: 5, Kind: Update, Params: 3, Insert: true,
		SQL: "INSERT INTO bmsql_new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)"}),
	tpcc.NOItem: own(Statement{ID: 6, Kind: Select, Params: 1, Columns: 3, RowBytes: 50,
		SQL: "SELECT i_price, i_name, i_data FROM bmsql_item WHERE i_id = ?"}),
	tpcc.NOStock: own(Statement{ID: 7, Kind: Select, Params: 2, Columns: 15, RowBytes: 320,
		SQL: "SELECT s_quantity, s_data, s_dist_01, ..., s_dist_10 FROM bmsql_stock WHERE s_w_id = ? AND s_i_id = ? FOR UPDATE"}),
	tpcc.NOStockUpdate: own(Statement{ID: 8, Kind: Update, Params: 6, Batched: true,
		SQL: "UPDATE bmsql_stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_w_id = ? AND s_i_id = ?"}),
	tpcc.NOInsertOrderLine: own(Statement{ID: 9, Kind: Update, Params: 9, Batched: true, Insert: true,
		SQL: "INSERT INTO bmsql_order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"}),
	tpcc.NORollback: own(Statement{ID: 10, Kind: Rollback, SQL: "ROLLBACK"}),
	tpcc.NOCommit:   own(Statement{ID: 11, Kind: Commit, SQL: "COMMIT"}),

	tpcc.PWarehouse: own(Statement{ID: 12, Kind: Select, Params: 1, Columns: 6, RowBytes: 80,
		SQL: "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM bmsql_warehouse WHERE w_id = ?"}),
	tpcc.PWarehouseUpdate: own(Statement{ID: 13, Kind: Update, Params: 2,
		SQL: "UPDATE bmsql_warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?"}),
	tpcc.PDistrict: own(Statement{ID: 14, Kind: Select, Params: 2, Columns: 6, RowBytes: 80,
		SQL: "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM bmsql_district WHERE d_w_id = ? AND d_id = ?"}),
	tpcc.PDistrictUpdate: own(Statement{ID: 15, Kind: Update, Params: 3,
		SQL: "UPDATE bmsql_district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?"}),
	tpcc.PByNameCount: merged, // BenchmarkSQL sends no count
	tpcc.PByNameScan: own(Statement{ID: 16, Kind: Select, Params: 3, Columns: 1, RowBytes: 4,
		SQL: "SELECT c_id FROM bmsql_customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first"}),
	tpcc.PCustomer: own(Statement{ID: 17, Kind: Select, Params: 3, Columns: 15, RowBytes: 650,
		SQL: "SELECT c_first, c_middle, c_last, c_street_1, ..., c_balance, c_data FROM bmsql_customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE"}),
	tpcc.PCustomerUpdate: own(Statement{ID: 18, Kind: Update, Params: 7,
		SQL: "UPDATE bmsql_customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"}),
	tpcc.PInsertHistory: own(Statement{ID: 19, Kind: Update, Params: 8, Insert: true,
		SQL: "INSERT INTO bmsql_history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"}),
	tpcc.PCommit: own(Statement{ID: 11, Kind: Commit, SQL: "COMMIT"}),

	tpcc.OSByNameCount: merged,
	tpcc.OSByNameScan: own(Statement{ID: 20, Kind: Select, Params: 3, Columns: 1, RowBytes: 4,
		SQL: "SELECT c_id FROM bmsql_customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first"}),
	tpcc.OSCustomer: own(Statement{ID: 21, Kind: Select, Params: 3, Columns: 4, RowBytes: 50,
		SQL: "SELECT c_first, c_middle, c_last, c_balance FROM bmsql_customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"}),
	tpcc.OSOrder: own(Statement{ID: 22, Kind: Select, Params: 6, Columns: 3, RowBytes: 30, Rows: 1,
		SQL: "SELECT o_id, o_entry_d, o_carrier_id FROM bmsql_oorder WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? AND o_id = (SELECT max(o_id) FROM bmsql_oorder WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ?)"}),
	tpcc.OSOrderLines: own(Statement{ID: 23, Kind: Select, Params: 3, Columns: 5, RowBytes: 40,
		SQL: "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM bmsql_order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ? ORDER BY ol_w_id, ol_d_id, ol_o_id, ol_number"}),
	tpcc.OSCommit: own(Statement{ID: 11, Kind: Commit, SQL: "COMMIT"}),

	tpcc.DNewOrder: own(Statement{ID: 24, Kind: Select, Params: 2, Columns: 1, RowBytes: 4, FirstRowOnly: true,
		SQL: "SELECT no_o_id FROM bmsql_new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id ASC"}),
	tpcc.DDeleteNewOrder: own(Statement{ID: 25, Kind: Update, Params: 3,
		SQL: "DELETE FROM bmsql_new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?"}),
	tpcc.DOrder: own(Statement{ID: 26, Kind: Select, Params: 3, Columns: 1, RowBytes: 4,
		SQL: "SELECT o_c_id FROM bmsql_oorder WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?"}),
	tpcc.DOrderUpdate: own(Statement{ID: 27, Kind: Update, Params: 4,
		SQL: "UPDATE bmsql_oorder SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?"}),
	tpcc.DOrderLines: own(Statement{ID: 28, Kind: Select, Params: 3, Columns: 1, RowBytes: 8, Rows: 1,
		SQL: "SELECT sum(ol_amount) AS sum_ol_amount FROM bmsql_order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?"}),
	tpcc.DOrderLineUpdate: once(Statement{ID: 29, Kind: Update, Params: 4,
		SQL: "UPDATE bmsql_order_line SET ol_delivery_d = ? WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?"}),
	tpcc.DCustomer: merged, // the UPDATE's own read
	tpcc.DCustomerUpdate: own(Statement{ID: 30, Kind: Update, Params: 4,
		SQL: "UPDATE bmsql_customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"}),
	tpcc.DCommit: own(Statement{ID: 11, Kind: Commit, SQL: "COMMIT"}),

	tpcc.SLDistrict: own(Statement{ID: 31, Kind: Select, Params: 5, Columns: 1, RowBytes: 4, Rows: 1,
		SQL: "SELECT count(*) AS low_stock FROM (SELECT s_w_id, s_i_id, s_quantity FROM bmsql_stock WHERE s_w_id = ? AND s_quantity < ? AND s_i_id IN (SELECT ol_i_id FROM bmsql_district JOIN bmsql_order_line ON ol_w_id = d_w_id AND ol_d_id = d_id AND ol_o_id >= d_next_o_id - 20 AND ol_o_id < d_next_o_id WHERE d_w_id = ? AND d_id = ?)) AS L"}),
	tpcc.SLOrderLines: merged,
	tpcc.SLStock:      merged,
	tpcc.SLCommit:     own(Statement{ID: 11, Kind: Commit, SQL: "COMMIT"}),
}

// count(*) as the Optimized profile sends it (sysbench-tpcc's count, with
// the rewrite done by the client).
var countStarStmt = Statement{ID: 70, Kind: Select, Params: 3, Columns: 1, RowBytes: 4, Rows: 1,
	SQL: "SELECT count(*) AS namecnt FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ?"}

// sysbench-tpcc's statements (tpcc_run.lua), in the order of the engine
// steps; text, with the values formatted in.
var sysbenchSteps = [tpcc.NumSteps]StepStatement{
	tpcc.NOWarehouse: own(Statement{ID: 32, Kind: Select, Params: 3, Columns: 4, RowBytes: 30,
		SQL: "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?"}),
	tpcc.NODistrict: own(Statement{ID: 33, Kind: Select, Params: 2, Columns: 2, RowBytes: 10,
		SQL: "SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = ? AND d_id = ? FOR UPDATE"}),
	tpcc.NODistrictUpdate: own(Statement{ID: 34, Kind: Update, Params: 3,
		SQL: "UPDATE district SET d_next_o_id = ? WHERE d_id = ? AND d_w_id = ?"}),
	tpcc.NOCustomer: merged,
	tpcc.NOInsertOrder: own(Statement{ID: 35, Kind: Update, Params: 7, Insert: true,
		SQL: "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, NOW(), ?, ?)"}),
	tpcc.NOInsertNewOrder: own(Statement{ID: 36, Kind: Update, Params: 3, Insert: true,
		SQL: "INSERT INTO new_orders (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)"}),
	tpcc.NOItem: own(Statement{ID: 37, Kind: Select, Params: 1, Columns: 3, RowBytes: 50,
		SQL: "SELECT i_price, i_name, i_data FROM item WHERE i_id = ?"}),
	tpcc.NOStock: own(Statement{ID: 38, Kind: Select, Params: 2, Columns: 3, RowBytes: 80,
		SQL: "SELECT s_quantity, s_data, s_dist_NN s_dist FROM stock WHERE s_i_id = ? AND s_w_id = ? FOR UPDATE"}),
	tpcc.NOStockUpdate: own(Statement{ID: 39, Kind: Update, Params: 5,
		SQL: "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?"}),
	tpcc.NOInsertOrderLine: own(Statement{ID: 40, Kind: Update, Params: 9, Insert: true,
		SQL: "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"}),
	tpcc.NORollback: own(Statement{ID: 41, Kind: Rollback, SQL: "ROLLBACK"}),
	tpcc.NOCommit:   own(Statement{ID: 42, Kind: Commit, SQL: "COMMIT"}),

	tpcc.PWarehouse: own(Statement{ID: 43, Kind: Select, Params: 1, Columns: 6, RowBytes: 80,
		SQL: "SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name FROM warehouse WHERE w_id = ? FOR UPDATE"}),
	tpcc.PWarehouseUpdate: own(Statement{ID: 44, Kind: Update, Params: 2,
		SQL: "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?"}),
	tpcc.PDistrict: own(Statement{ID: 45, Kind: Select, Params: 2, Columns: 6, RowBytes: 80,
		SQL: "SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name FROM district WHERE d_w_id = ? AND d_id = ? FOR UPDATE"}),
	tpcc.PDistrictUpdate: own(Statement{ID: 46, Kind: Update, Params: 3,
		SQL: "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?"}),
	tpcc.PByNameCount: own(Statement{ID: 47, Kind: Select, Params: 3, Columns: 1, RowBytes: 4, Rows: 1,
		SQL: "SELECT count(c_id) namecnt FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ?"}),
	tpcc.PByNameScan: own(Statement{ID: 48, Kind: Select, Params: 3, Columns: 1, RowBytes: 4,
		SQL: "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first"}),
	tpcc.PCustomer: own(Statement{ID: 49, Kind: Select, Params: 3, Columns: 13, RowBytes: 180,
		SQL: "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_credit, c_credit_lim, c_discount, c_balance, c_ytd_payment, c_since FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE"}),
	tpcc.PCustomerUpdate: own(Statement{ID: 50, Kind: Update, Params: 7,
		SQL: "UPDATE customer SET c_balance = ?, c_ytd_payment = ?, c_payment_cnt = ?, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"}),
	tpcc.PInsertHistory: own(Statement{ID: 51, Kind: Update, Params: 8, Insert: true,
		SQL: "INSERT INTO history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, NOW(), ?, ?)"}),
	tpcc.PCommit: own(Statement{ID: 42, Kind: Commit, SQL: "COMMIT"}),

	tpcc.OSByNameCount: own(Statement{ID: 52, Kind: Select, Params: 3, Columns: 1, RowBytes: 4, Rows: 1,
		SQL: "SELECT count(c_id) namecnt FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ?"}),
	tpcc.OSByNameScan: own(Statement{ID: 53, Kind: Select, Params: 3, Columns: 4, RowBytes: 40,
		SQL: "SELECT c_balance, c_first, c_middle, c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first"}),
	tpcc.OSCustomer: own(Statement{ID: 54, Kind: Select, Params: 3, Columns: 4, RowBytes: 40,
		SQL: "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"}),
	tpcc.OSOrder: own(Statement{ID: 55, Kind: Select, Params: 3, Columns: 3, RowBytes: 30,
		SQL: "SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC"}),
	tpcc.OSOrderLines: own(Statement{ID: 56, Kind: Select, Params: 3, Columns: 5, RowBytes: 40,
		SQL: "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?"}),
	tpcc.OSCommit: own(Statement{ID: 42, Kind: Commit, SQL: "COMMIT"}),

	tpcc.DNewOrder: own(Statement{ID: 57, Kind: Select, Params: 2, Columns: 1, RowBytes: 4,
		SQL: "SELECT no_o_id FROM new_orders WHERE no_d_id = ? AND no_w_id = ? ORDER BY no_o_id ASC LIMIT 1 FOR UPDATE"}),
	tpcc.DDeleteNewOrder: own(Statement{ID: 58, Kind: Update, Params: 3,
		SQL: "DELETE FROM new_orders WHERE no_o_id = ? AND no_d_id = ? AND no_w_id = ?"}),
	tpcc.DOrder: own(Statement{ID: 59, Kind: Select, Params: 3, Columns: 1, RowBytes: 4,
		SQL: "SELECT o_c_id FROM orders WHERE o_id = ? AND o_d_id = ? AND o_w_id = ?"}),
	tpcc.DOrderUpdate: own(Statement{ID: 61, Kind: Update, Params: 4,
		SQL: "UPDATE orders SET o_carrier_id = ? WHERE o_id = ? AND o_d_id = ? AND o_w_id = ?"}),
	tpcc.DOrderLines: own(Statement{ID: 62, Kind: Select, Params: 3, Columns: 1, RowBytes: 8, Rows: 1,
		SQL: "SELECT SUM(ol_amount) sm FROM order_line WHERE ol_o_id = ? AND ol_d_id = ? AND ol_w_id = ?"}),
	tpcc.DOrderLineUpdate: once(Statement{ID: 63, Kind: Update, Params: 4,
		SQL: "UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_o_id = ? AND ol_d_id = ? AND ol_w_id = ?"}),
	tpcc.DCustomer: merged,
	tpcc.DCustomerUpdate: own(Statement{ID: 64, Kind: Update, Params: 4,
		SQL: "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_id = ? AND c_d_id = ? AND c_w_id = ?"}),
	tpcc.DCommit: own(Statement{ID: 42, Kind: Commit, SQL: "COMMIT"}),

	tpcc.SLDistrict: own(Statement{ID: 65, Kind: Select, Params: 2, Columns: 1, RowBytes: 4,
		SQL: "SELECT d_next_o_id FROM district WHERE d_id = ? AND d_w_id = ?"}),
	tpcc.SLOrderLines: own(Statement{ID: 66, Kind: Select, Params: 4, Columns: 1, RowBytes: 6,
		SQL: "SELECT DISTINCT ol_i_id FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ?"}),
	tpcc.SLStock: own(Statement{ID: 67, Kind: Select, Params: 3, Columns: 1, RowBytes: 2, Rows: 1,
		SQL: "SELECT count(*) FROM stock WHERE s_w_id = ? AND s_i_id = ? AND s_quantity < ?"}),
	tpcc.SLCommit: own(Statement{ID: 42, Kind: Commit, SQL: "COMMIT"}),
}
