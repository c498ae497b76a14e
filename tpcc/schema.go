package tpcc

import (
	"fmt"
	"strings"

	"github.com/enginelab/enginelab/engine"
)

// The nine tables of the specification [1.3], with its column names, in its
// column order, and their primary keys. Two secondary indexes, the ones
// every serious kit has: customer by (warehouse, district, last name, first
// name) for the by-name lookups of Payment and Order-Status, and orders by
// (warehouse, district, customer, order id) for Order-Status's newest order
// of a customer.
//
// Types: identifiers and counts are integers; money is a decimal of scale 2,
// tax and discount rates scale 4; texts are varchar (or char where the
// specification fixes the length) of the specification's maximum length;
// dates are timestamps.

// Table names.
const (
	Warehouse = "warehouse"
	District  = "district"
	Customer  = "customer"
	History   = "history"
	NewOrder  = "new_order"
	Orders    = "orders"
	OrderLine = "order_line"
	Item      = "item"
	Stock     = "stock"
)

// Secondary index names.
const (
	CustomerByName   = "idx_customer_name"
	OrdersByCustomer = "idx_orders_customer"
)

// TableNames lists the tables in load order.
var TableNames = []string{Item, Warehouse, District, Customer, History, Orders, NewOrder, OrderLine, Stock}

func col(name string, t engine.Type) engine.Column { return engine.Column{Name: name, Type: t} }

func str(name string, n int) engine.Column {
	return engine.Column{Name: name, Type: engine.TypeVarchar, Length: n}
}

func fixed(name string, n int) engine.Column {
	return engine.Column{Name: name, Type: engine.TypeChar, Length: n}
}

func dec(name string, scale int) engine.Column {
	return engine.Column{Name: name, Type: engine.TypeDecimal, Scale: scale}
}

func nullable(c engine.Column) engine.Column { c.Nullable = true; return c }

const (
	tInt  = engine.TypeInt
	tTime = engine.TypeTimestamp
)

// Column positions, table by table, in the order of Tables' declarations.
const (
	WID, WName, WStreet1, WStreet2, WCity, WState, WZip, WTax, WYtd = 0, 1, 2, 3, 4, 5, 6, 7, 8
)

const (
	DID, DWID, DName, DStreet1, DStreet2, DCity, DState, DZip, DTax, DYtd, DNextOID = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10
)

const (
	CID, CDID, CWID, CFirst, CMiddle, CLast, CStreet1, CStreet2, CCity, CState, CZip, CPhone, CSince,
	CCredit, CCreditLim, CDiscount, CBalance, CYtdPayment, CPaymentCnt, CDeliveryCnt, CData = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
		13, 14, 15, 16, 17, 18, 19, 20
)

const (
	HID, HCID, HCDID, HCWID, HDID, HWID, HDate, HAmount, HData = 0, 1, 2, 3, 4, 5, 6, 7, 8
)

const (
	NOOID, NODID, NOWID = 0, 1, 2
)

const (
	OID, ODID, OWID, OCID, OEntryD, OCarrierID, OOlCnt, OAllLocal = 0, 1, 2, 3, 4, 5, 6, 7
)

const (
	OLOID, OLDID, OLWID, OLNumber, OLIID, OLSupplyWID, OLDeliveryD, OLQuantity, OLAmount, OLDistInfo = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9
)

const (
	IID, IImID, IName, IPrice, IData = 0, 1, 2, 3, 4
)

const (
	SIID, SWID, SQuantity, SDist01, SYtd = 0, 1, 2, 3, 13
	SOrderCnt, SRemoteCnt, SData         = 14, 15, 16
)

// CKey is the extra primary-key column of CUSTOMER when the load asks for
// a wide key (LoadConfig.WideCustomerKey): a varchar every secondary index
// of CUSTOMER then carries in each entry.
const CKey = "c_key"

// CKeyPos is c_key's position in a CUSTOMER row (after c_data).
const CKeyPos = CData + 1

// WideCustomerKey is customer (w, d, id)'s c_key, width bytes: the ids
// written out and padded, unique because its prefix is.
func WideCustomerKey(w, d, id int64, width int) string {
	s := fmt.Sprintf("customer-%d-%d-%d-", w, d, id)
	if len(s) >= width {
		return s[:width]
	}
	return s + strings.Repeat("k", width-len(s))
}

// Tables returns the declarations of the nine tables in organization org,
// with KitFillFactor's fill factors in the heap organizations.
func Tables(org engine.Org) []engine.Table { return TablesWith(org, 0) }

// TablesWith is Tables with CUSTOMER's primary key widened by a c_key
// varchar of wideKey bytes (0: none): (c_w_id, c_d_id, c_id, c_key).
func TablesWith(org engine.Org, wideKey int) []engine.Table {
	stockCols := []engine.Column{col("s_i_id", tInt), col("s_w_id", tInt), col("s_quantity", tInt)}
	for d := 1; d <= 10; d++ {
		stockCols = append(stockCols, fixed(distName(d), 24))
	}
	stockCols = append(stockCols, col("s_ytd", tInt), col("s_order_cnt", tInt), col("s_remote_cnt", tInt), str("s_data", 50))
	tables := []engine.Table{
		{Name: Warehouse, Columns: []engine.Column{
			col("w_id", tInt), str("w_name", 10), str("w_street_1", 20), str("w_street_2", 20), str("w_city", 20),
			fixed("w_state", 2), fixed("w_zip", 9), dec("w_tax", 4), dec("w_ytd", 2)},
			PrimaryKey: []string{"w_id"}},
		{Name: District, Columns: []engine.Column{
			col("d_id", tInt), col("d_w_id", tInt), str("d_name", 10), str("d_street_1", 20), str("d_street_2", 20),
			str("d_city", 20), fixed("d_state", 2), fixed("d_zip", 9), dec("d_tax", 4), dec("d_ytd", 2), col("d_next_o_id", tInt)},
			PrimaryKey: []string{"d_w_id", "d_id"}},
		{Name: Customer, Columns: []engine.Column{
			col("c_id", tInt), col("c_d_id", tInt), col("c_w_id", tInt), str("c_first", 16), fixed("c_middle", 2),
			str("c_last", 16), str("c_street_1", 20), str("c_street_2", 20), str("c_city", 20), fixed("c_state", 2),
			fixed("c_zip", 9), fixed("c_phone", 16), col("c_since", tTime), fixed("c_credit", 2), dec("c_credit_lim", 2),
			dec("c_discount", 4), dec("c_balance", 2), dec("c_ytd_payment", 2), col("c_payment_cnt", tInt),
			col("c_delivery_cnt", tInt), str("c_data", 500)},
			PrimaryKey: []string{"c_w_id", "c_d_id", "c_id"},
			Indexes:    []engine.Index{{Name: CustomerByName, Columns: []string{"c_w_id", "c_d_id", "c_last", "c_first"}}}},
		// HISTORY has no primary key in the specification [1.3]; h_id is a
		// surrogate, unique per loader and per terminal (see HistoryID).
		{Name: History, Columns: []engine.Column{
			col("h_id", tInt), col("h_c_id", tInt), col("h_c_d_id", tInt), col("h_c_w_id", tInt), col("h_d_id", tInt),
			col("h_w_id", tInt), col("h_date", tTime), dec("h_amount", 2), str("h_data", 24)},
			PrimaryKey: []string{"h_id"}},
		{Name: NewOrder, Columns: []engine.Column{col("no_o_id", tInt), col("no_d_id", tInt), col("no_w_id", tInt)},
			PrimaryKey: []string{"no_w_id", "no_d_id", "no_o_id"}},
		{Name: Orders, Columns: []engine.Column{
			col("o_id", tInt), col("o_d_id", tInt), col("o_w_id", tInt), col("o_c_id", tInt), col("o_entry_d", tTime),
			nullable(col("o_carrier_id", tInt)), col("o_ol_cnt", tInt), col("o_all_local", tInt)},
			PrimaryKey: []string{"o_w_id", "o_d_id", "o_id"},
			Indexes:    []engine.Index{{Name: OrdersByCustomer, Columns: []string{"o_w_id", "o_d_id", "o_c_id", "o_id"}}}},
		{Name: OrderLine, Columns: []engine.Column{
			col("ol_o_id", tInt), col("ol_d_id", tInt), col("ol_w_id", tInt), col("ol_number", tInt), col("ol_i_id", tInt),
			col("ol_supply_w_id", tInt), nullable(col("ol_delivery_d", tTime)), col("ol_quantity", tInt),
			dec("ol_amount", 2), fixed("ol_dist_info", 24)},
			PrimaryKey: []string{"ol_w_id", "ol_d_id", "ol_o_id", "ol_number"}},
		{Name: Item, Columns: []engine.Column{
			col("i_id", tInt), col("i_im_id", tInt), str("i_name", 24), dec("i_price", 2), str("i_data", 50)},
			PrimaryKey: []string{"i_id"}},
		{Name: Stock, Columns: stockCols, PrimaryKey: []string{"s_w_id", "s_i_id"}},
	}
	for i := range tables {
		tables[i].Org = org
		if org == engine.HeapRowPointer || org == engine.HeapPrimaryKey {
			tables[i].FillFactor = KitFillFactor[tables[i].Name]
		}
		if tables[i].Name == Customer && wideKey > 0 {
			t := &tables[i]
			t.Columns = append(t.Columns, str(CKey, wideKey))
			t.PrimaryKey = append(t.PrimaryKey, CKey)
		}
	}
	return tables
}

// KitFillFactor is the heap fill factor (engine.Table.FillFactor,
// PostgreSQL's fillfactor) of the tables that a TPC-C kit for PostgreSQL
// loads with less than full pages; the others fill them (100). Tables
// sets it in the heap organizations only: a clustered table takes none
// (engine.ErrFillFactorClustered), as InnoDB has none.
//
// The values are BenchmarkSQL's, the kit whose transactions these are
// phrased after and whose PostgreSQL build still sets them:
// src/main/resources/sql.postgres/extraCommandsBeforeLoad.sql of
// BenchmarkSQL 6.0 (github.com/pgsql-io/benchmarksql, REL6_0_RC2), run
// between the schema's creation and the load: ALTER TABLE bmsql_oorder
// SET (FILLFACTOR = 85), bmsql_order_line 85, bmsql_warehouse 50,
// bmsql_district 79, bmsql_customer 90, bmsql_stock 95. The kits differ:
// BenchmarkSQL 5.0 as released (2016) set none, 5.1 (2018) had ORDERS
// and ORDER_LINE at 80; HammerDB's PostgreSQL schema set WAREHOUSE and
// DISTRICT to 10 and every other table to 50 up to version 4.0 and
// none since 4.1 (src/postgresql/pgoltp.tcl, "Change PostgreSQL Schema
// Data Types", 2021); go-tpc's PostgreSQL DDL (tpcc/ddl.go) sets none.
var KitFillFactor = map[string]int{
	Orders:    85,
	OrderLine: 85,
	Warehouse: 50,
	District:  79,
	Customer:  90,
	Stock:     95,
}

func distName(d int) string {
	return "s_dist_" + string(rune('0'+d/10)) + string(rune('0'+d%10))
}
