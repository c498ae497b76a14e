package tpcc

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/engine"
)

// The consistency fixture: one warehouse, two districts of three customers
// and four orders each, written out by hand so that every condition of
// 3.3.2 holds, with delivered orders of non-zero amounts (so that 10 and
// 12 see them) and one payment made in district 1 by a customer of
// district 2 (so that 9 and 10 sum different HISTORY columns). Money is in
// cents. Orders 1 and 2 of each district are delivered, 3 and 4 are not:
// condition 11 expects 2 delivered orders per district here.

const chkDelivered = 2

var chkDistricts = []struct{ d, ytd, next int64 }{
	{1, 10000, 5}, // payments h1..h5
	{2, 3000, 5},  // payments h6..h8
}

const chkWarehouseYtd = 13000

// carrier 0 means NULL: the order is not delivered, has a NEW_ORDER row,
// and its lines have no delivery date.
var chkOrders = []struct {
	d, id, c, carrier int64
	amounts           []int64 // one per line: O_OL_CNT is their number
}{
	{1, 1, 2, 3, []int64{10000, 2550}},
	{1, 2, 1, 5, []int64{725}},
	{1, 3, 2, 0, []int64{100, 200, 300}},
	{1, 4, 3, 0, []int64{400, 500}},
	{2, 1, 3, 1, []int64{1234, 0}}, // a delivered line of 0.00, as at load
	{2, 2, 3, 2, []int64{66, 300}},
	{2, 3, 1, 0, []int64{999}},
	{2, 4, 2, 0, []int64{150, 250}},
}

var chkHistory = []struct{ id, cw, cd, c, w, d, amount int64 }{
	{1, 1, 1, 1, 1, 1, 1000},
	{2, 1, 1, 2, 1, 1, 1000},
	{3, 1, 1, 3, 1, 1, 1000},
	{4, 1, 1, 2, 1, 1, 5000},
	{5, 1, 2, 1, 1, 1, 2000}, // customer of district 2 paying in district 1
	{6, 1, 2, 1, 1, 2, 1000},
	{7, 1, 2, 2, 1, 2, 1000},
	{8, 1, 2, 3, 1, 2, 1000},
}

// balance = delivered − paid; ytd = paid.
var chkCustomers = []struct{ d, c, balance, ytd int64 }{
	{1, 1, -275, 1000},  // delivered 7.25, paid 10.00
	{1, 2, 6550, 6000},  // delivered 125.50, paid 60.00
	{1, 3, -1000, 1000}, // delivered 0, paid 10.00
	{2, 1, -3000, 3000}, // delivered 0, paid 30.00 (20.00 of it in district 1)
	{2, 2, -1000, 1000}, // delivered 0, paid 10.00
	{2, 3, 600, 1000},   // delivered 16.00, paid 10.00
}

var chkTime = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)

var chkOrgs = []engine.Org{engine.Clustered, engine.HeapRowPointer, engine.HeapPrimaryKey}

// chkTables opens a database in memory with the nine tables in org.
func chkTables(t *testing.T, org engine.Org) (*engine.DB, map[string]*engine.TableHandle) {
	t.Helper()
	return chkTablesWith(t, org, engine.HeapVersionsDefault)
}

// chkTablesWith is chkTables with heap tables versioned as v says.
func chkTablesWith(t *testing.T, org engine.Org, v engine.HeapVersioning) (*engine.DB, map[string]*engine.TableHandle) {
	t.Helper()
	return chkTablesOpts(t, org, &engine.Options{HeapVersions: v})
}

// chkTablesOpts is chkTables on a database opened with opts.
func chkTablesOpts(t *testing.T, org engine.Org, opts *engine.Options) (*engine.DB, map[string]*engine.TableHandle) {
	t.Helper()
	db, err := engine.Open(opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	tabs := make(map[string]*engine.TableHandle)
	for _, def := range Tables(org) {
		h, err := db.CreateTable(def)
		require.NoError(t, err)
		tabs[def.Name] = h
	}
	return db, tabs
}

// chkWrite runs fn in a transaction and commits it.
func chkWrite(t *testing.T, db *engine.DB, fn func(tx *engine.Tx) error) {
	t.Helper()
	tx := db.Begin(nil)
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		require.NoError(t, err)
	}
	require.NoError(t, tx.Commit())
}

func chkOrderLine(d, o, n, amount int64, delivered bool) engine.Row {
	dd := engine.Null
	if delivered {
		dd = engine.Time(chkTime)
	}
	return engine.Row{engine.Int(o), engine.Int(d), engine.Int(1), engine.Int(n), engine.Int(100 + n), engine.Int(1),
		dd, engine.Int(5), engine.Dec(amount), engine.Str("dist-info-0123456789abcd")}
}

func chkNewOrder(d, o int64) engine.Row {
	return engine.Row{engine.Int(o), engine.Int(d), engine.Int(1)}
}

// chkLoad builds the consistent fixture in a new database.
func chkLoad(t *testing.T, org engine.Org) (*engine.DB, map[string]*engine.TableHandle) {
	t.Helper()
	return chkLoadWith(t, org, engine.HeapVersionsDefault)
}

// chkLoadWith is chkLoad with heap tables versioned as v says.
func chkLoadWith(t *testing.T, org engine.Org, v engine.HeapVersioning) (*engine.DB, map[string]*engine.TableHandle) {
	t.Helper()
	return chkLoadOpts(t, org, &engine.Options{HeapVersions: v})
}

// chkLoadOpts is chkLoad on a database opened with opts.
func chkLoadOpts(t *testing.T, org engine.Org, opts *engine.Options) (*engine.DB, map[string]*engine.TableHandle) {
	t.Helper()
	db, tabs := chkTablesOpts(t, org, opts)
	chkWrite(t, db, func(tx *engine.Tx) error {
		err := tx.Insert(tabs[Warehouse], engine.Row{engine.Int(1), engine.Str("w1"), engine.Str("1 Main St"),
			engine.Str("Suite 2"), engine.Str("Springfield"), engine.Str("CA"), engine.Str("123411111"),
			engine.Dec(1000), engine.Dec(chkWarehouseYtd)})
		if err != nil {
			return err
		}
		for _, d := range chkDistricts {
			err := tx.Insert(tabs[District], engine.Row{engine.Int(d.d), engine.Int(1), engine.Str(fmt.Sprint("d", d.d)),
				engine.Str("2 Side St"), engine.Str(""), engine.Str("Springfield"), engine.Str("CA"),
				engine.Str("123411111"), engine.Dec(500), engine.Dec(d.ytd), engine.Int(d.next)})
			if err != nil {
				return err
			}
		}
		for _, c := range chkCustomers {
			err := tx.Insert(tabs[Customer], engine.Row{engine.Int(c.c), engine.Int(c.d), engine.Int(1),
				engine.Str(fmt.Sprint("first", c.c)), engine.Str("OE"), engine.Str("BARBARBAR"), engine.Str("3 Road"),
				engine.Str(""), engine.Str("Springfield"), engine.Str("CA"), engine.Str("123411111"),
				engine.Str("0123456789012345"), engine.Time(chkTime), engine.Str("GC"), engine.Dec(5000000),
				engine.Dec(1000), engine.Dec(c.balance), engine.Dec(c.ytd), engine.Int(1), engine.Int(0),
				engine.Str("some customer data")})
			if err != nil {
				return err
			}
		}
		for _, h := range chkHistory {
			err := tx.Insert(tabs[History], engine.Row{engine.Int(h.id), engine.Int(h.c), engine.Int(h.cd),
				engine.Int(h.cw), engine.Int(h.d), engine.Int(h.w), engine.Time(chkTime), engine.Dec(h.amount),
				engine.Str("w1    d1")})
			if err != nil {
				return err
			}
		}
		for _, o := range chkOrders {
			carrier := engine.Null
			if o.carrier != 0 {
				carrier = engine.Int(o.carrier)
			}
			err := tx.Insert(tabs[Orders], engine.Row{engine.Int(o.id), engine.Int(o.d), engine.Int(1), engine.Int(o.c),
				engine.Time(chkTime), carrier, engine.Int(int64(len(o.amounts))), engine.Int(1)})
			if err != nil {
				return err
			}
			if o.carrier == 0 {
				if err := tx.Insert(tabs[NewOrder], chkNewOrder(o.d, o.id)); err != nil {
					return err
				}
			}
			for i, a := range o.amounts {
				if err := tx.Insert(tabs[OrderLine], chkOrderLine(o.d, o.id, int64(i+1), a, o.carrier != 0)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return db, tabs
}

func chkOpts() CheckConfig {
	return CheckConfig{Fresh: true, DeliveredPerDistrict: chkDelivered}
}

func TestCheckConsistent(t *testing.T) {
	for _, c := range []struct {
		org engine.Org
		v   engine.HeapVersioning
	}{{engine.Clustered, engine.HeapVersionsDefault},
		{engine.HeapRowPointer, engine.HeapVersionsDefault}, {engine.HeapPrimaryKey, engine.HeapVersionsDefault},
		{engine.HeapRowPointer, engine.HeapVersionsOff}, {engine.HeapPrimaryKey, engine.HeapVersionsOff}} {
		org := c.org
		t.Run(org.String()+"/versions="+c.v.String(), func(t *testing.T) {
			db, tabs := chkLoadWith(t, org, c.v)
			versioned := tabs[Stock].Versioned()
			require.Equal(t, org != engine.Clustered && c.v.Keep(), versioned)
			var m engine.Meter
			opts := chkOpts()
			opts.Meter, opts.Workers = &m, 2
			rep, err := Check(db, opts)
			require.NoError(t, err)
			require.True(t, rep.Passed(), "%s", rep)
			require.Empty(t, rep.Failed())
			require.Len(t, rep.Conditions, 12)
			for i, c := range rep.Conditions {
				require.Equal(t, i+1, c.Number)
				require.Equal(t, CheckPass, c.Status, "condition %d", c.Number)
				require.NotEmpty(t, c.Statement)
				require.Zero(t, c.Failures)
				require.Empty(t, c.Differences)
			}
			// What each condition examined.
			type seen struct{ w, d, c, o int64 }
			want := map[int]seen{
				1: {1, 2, 0, 0}, 2: {0, 2, 0, 8}, 3: {0, 2, 0, 0}, 4: {0, 2, 0, 8}, 5: {0, 2, 0, 8}, 6: {0, 2, 0, 8},
				7: {0, 2, 0, 8}, 8: {1, 0, 0, 0}, 9: {0, 2, 0, 0}, 10: {0, 2, 6, 8}, 11: {0, 2, 0, 8}, 12: {0, 2, 6, 8},
			}
			for n, s := range want {
				c := rep.Condition(n)
				require.Equal(t, s, seen{c.Warehouses, c.Districts, c.Customers, c.Orders}, "condition %d", n)
			}
			require.Equal(t, "count(ORDERS) - count(NEW_ORDER) = 2 per district", rep.Condition(11).Statement)
			// The reads were charged to the meter given, and every row
			// read was returned once: 1 + 2 + 8 history + 4 + 8 + 15
			// order lines + 6 customers.
			require.Equal(t, int64(1+2+8+4+8+15+6), m.RowsReturned)
			if org == engine.Clustered || versioned {
				// Consistent reads: one snapshot, one read view, no lock
				// (InnoDB's undo versions, PostgreSQL's heap versions).
				require.Equal(t, int64(1+2), m.Commits, "one read transaction, a snapshot, and one for each district worker, reading it")
				require.Equal(t, int64(1), m.ReadViews)
				require.Zero(t, m.LockRequests)
			} else {
				// Single-version heap tables: reads that lock, a
				// transaction per part.
				require.Equal(t, int64(2+2), m.Commits, "one read transaction for W and D, one for HISTORY, one per district")
			}
		})
	}
}

// After a run, condition 11 is skipped and does not make the report fail.
func TestCheckAfterRunSkips11(t *testing.T) {
	db, _ := chkLoad(t, engine.Clustered)
	rep, err := Check(db, CheckConfig{})
	require.NoError(t, err)
	require.True(t, rep.Passed())
	c := rep.Condition(11)
	require.Equal(t, CheckSkipped, c.Status)
	require.Equal(t, "holds after load only", c.Reason)
	require.Zero(t, c.Districts)
	require.Contains(t, rep.String(), "skipped: holds after load only")
	require.Equal(t, int64(DeliveredPerDistrictAtLoad), rep.DeliveredPerDistrict)
}

// Without DeliveredPerDistrict, condition 11 expects the load's 2,100.
func TestCheckDefaultDelivered(t *testing.T) {
	db, _ := chkLoad(t, engine.Clustered)
	rep, err := Check(db, CheckConfig{Fresh: true})
	require.NoError(t, err)
	require.Equal(t, []int{11}, rep.Failed())
	require.Equal(t, []string{
		"warehouse 1 district 1: count(ORDERS) - count(NEW_ORDER) = 4 - 2 = 2, expected 2100",
		"warehouse 1 district 2: count(ORDERS) - count(NEW_ORDER) = 4 - 2 = 2, expected 2100",
	}, rep.Condition(11).Differences)
}

// With a scale and no DeliveredPerDistrict, condition 11 expects the
// scale's (210 at small scale); a scale out of range is refused.
func TestCheckScaleDelivered(t *testing.T) {
	db, _ := chkLoad(t, engine.Clustered)
	rep, err := Check(db, CheckConfig{Fresh: true, Scale: SmallScale})
	require.NoError(t, err)
	require.Equal(t, int64(210), rep.DeliveredPerDistrict)
	require.Equal(t, "count(ORDERS) - count(NEW_ORDER) = 210 per district", rep.Condition(11).Statement)
	require.Equal(t, []int{11}, rep.Failed())
	require.Contains(t, rep.Condition(11).Differences[0], "expected 210")

	_, err = Check(db, CheckConfig{Scale: Scale{CustomersPerDistrict: 7}})
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.ErrorContains(t, err, "7 customers per district")
}

// chkCorruption changes one row of the fixture (an update, or a delete and
// an insert that move it to another key) and names every difference Check
// must then report, by condition: no other condition may fail.
type chkCorruption struct {
	name   string
	change chkChange
	fresh  bool // Fresh = false: condition 11 skipped
	want   map[int][]string
}

func chkUpdate(table string, pk []int64, col string, v engine.Value) chkChange {
	return func(tx *engine.Tx, tabs map[string]*engine.TableHandle) error {
		key := make([]engine.Value, len(pk))
		for i, k := range pk {
			key[i] = engine.Int(k)
		}
		return tx.Update(tabs[table], key, []engine.Set{{Column: col, Value: v}})
	}
}

func chkMove(table string, from []int64, to engine.Row) chkChange {
	return func(tx *engine.Tx, tabs map[string]*engine.TableHandle) error {
		key := make([]engine.Value, len(from))
		for i, k := range from {
			key[i] = engine.Int(k)
		}
		if err := tx.Delete(tabs[table], key); err != nil {
			return err
		}
		return tx.Insert(tabs[table], to)
	}
}

var chkCorruptions = []chkCorruption{
	{
		// W_YTD is on both sides of 1 and 8.
		name:   "1: w_ytd of warehouse 1",
		change: chkUpdate(Warehouse, []int64{1}, "w_ytd", engine.Dec(chkWarehouseYtd+1)),
		fresh:  true,
		want: map[int][]string{
			1: {"warehouse 1: w_ytd = 130.01, sum(d_ytd) = 130.00 over 2 districts"},
			8: {"warehouse 1: w_ytd = 130.01, sum(h_amount) = 130.00 over 8 HISTORY rows"},
		},
	},
	{
		name:   "2: d_next_o_id of district 2",
		change: chkUpdate(District, []int64{1, 2}, "d_next_o_id", engine.Int(6)),
		fresh:  true,
		want: map[int][]string{
			2: {"warehouse 1 district 2: d_next_o_id - 1 = 5, max(o_id) = 4, max(no_o_id) = 4"},
		},
	},
	{
		// A gap in the NEW_ORDER ids needs an order in it with a NULL
		// carrier and no NEW_ORDER row, or an order outside it with one:
		// 3 cannot fail without 5.
		name:   "3: NEW_ORDER row of order 3 moved to delivered order 2",
		change: chkMove(NewOrder, []int64{1, 1, 3}, chkNewOrder(1, 2)),
		fresh:  true,
		want: map[int][]string{
			3: {"warehouse 1 district 1: max(no_o_id) - min(no_o_id) + 1 = 4 - 2 + 1 = 3, NEW_ORDER rows = 2"},
			5: {
				"warehouse 1 district 1 order 2: o_carrier_id = 5, NEW_ORDER row present",
				"warehouse 1 district 1 order 3: o_carrier_id = NULL, no NEW_ORDER row",
			},
		},
	},
	{
		name: "4: an ORDER_LINE row without its order",
		change: func(tx *engine.Tx, tabs map[string]*engine.TableHandle) error {
			return tx.Insert(tabs[OrderLine], chkOrderLine(1, 9, 1, 100, false))
		},
		fresh: true,
		want: map[int][]string{
			4: {"warehouse 1 district 1: sum(o_ol_cnt) = 8, ORDER_LINE rows = 9"},
		},
	},
	{
		name:   "4 and 6: o_ol_cnt of order 2 of district 2",
		change: chkUpdate(Orders, []int64{1, 2, 2}, "o_ol_cnt", engine.Int(3)),
		fresh:  true,
		want: map[int][]string{
			4: {"warehouse 1 district 2: sum(o_ol_cnt) = 8, ORDER_LINE rows = 7"},
			6: {"warehouse 1 district 2 order 2: o_ol_cnt = 3, ORDER_LINE rows = 2"},
		},
	},
	{
		// The NEW_ORDER count changes too, so 11 fails with 5 on a
		// fresh database ...
		name:   "5: NEW_ORDER row of order 3 deleted, fresh",
		change: func(tx *engine.Tx, tabs map[string]*engine.TableHandle) error { return chkDeleteNewOrder3(tx, tabs) },
		fresh:  true,
		want: map[int][]string{
			5:  {"warehouse 1 district 1 order 3: o_carrier_id = NULL, no NEW_ORDER row"},
			11: {"warehouse 1 district 1: count(ORDERS) - count(NEW_ORDER) = 4 - 1 = 3, expected 2"},
		},
	},
	{
		// ... and alone after a run.
		name:   "5: NEW_ORDER row of order 3 deleted, after a run",
		change: func(tx *engine.Tx, tabs map[string]*engine.TableHandle) error { return chkDeleteNewOrder3(tx, tabs) },
		want: map[int][]string{
			5: {"warehouse 1 district 1 order 3: o_carrier_id = NULL, no NEW_ORDER row"},
		},
	},
	{
		// Both orders undelivered: no amount changes hands, the total
		// stays.
		name:   "6: line 3 of order 3 moved to order 4",
		change: chkMove(OrderLine, []int64{1, 1, 3, 3}, chkOrderLine(1, 4, 3, 300, false)),
		fresh:  true,
		want: map[int][]string{
			6: {
				"warehouse 1 district 1 order 3: o_ol_cnt = 3, ORDER_LINE rows = 2",
				"warehouse 1 district 1 order 4: o_ol_cnt = 2, ORDER_LINE rows = 3",
			},
		},
	},
	{
		// The line's amount is 0.00, so no customer's sum changes.
		name:   "7: ol_delivery_d of a delivered line of 0.00 set to NULL",
		change: chkUpdate(OrderLine, []int64{1, 2, 1, 2}, "ol_delivery_d", engine.Null),
		fresh:  true,
		want: map[int][]string{
			7: {"warehouse 1 district 2 order 1 line 2: ol_delivery_d = NULL, o_carrier_id = 1"},
		},
	},
	{
		name:   "7, 10 and 12: an undelivered line of 1.00 given a delivery date",
		change: chkUpdate(OrderLine, []int64{1, 1, 3, 1}, "ol_delivery_d", engine.Time(chkTime)),
		fresh:  true,
		want: map[int][]string{
			7:  {"warehouse 1 district 1 order 3 line 1: ol_delivery_d = 2024-03-01T12:00:00Z, o_carrier_id = NULL"},
			10: {"warehouse 1 district 1 customer 2: c_balance = 65.50, sum(delivered ol_amount) - sum(h_amount) = 126.50 - 60.00 = 66.50"},
			12: {"warehouse 1 district 1 customer 2: c_balance + c_ytd_payment = 65.50 + 60.00 = 125.50, sum(delivered ol_amount) = 126.50"},
		},
	},
	{
		// A payment credited to another warehouse leaves its district's
		// sum short too: 8 cannot fail without 9 (or 1).
		name:   "8: h_w_id of HISTORY row 8 set to warehouse 2",
		change: chkUpdate(History, []int64{8}, "h_w_id", engine.Int(2)),
		fresh:  true,
		want: map[int][]string{
			8: {"warehouse 1: w_ytd = 130.00, sum(h_amount) = 120.00 over 7 HISTORY rows"},
			9: {"warehouse 1 district 2: d_ytd = 30.00, sum(h_amount) = 20.00 over 2 HISTORY rows"},
		},
	},
	{
		name:   "9: h_d_id of HISTORY row 1 set to district 2",
		change: chkUpdate(History, []int64{1}, "h_d_id", engine.Int(2)),
		fresh:  true,
		want: map[int][]string{
			9: {
				"warehouse 1 district 1: d_ytd = 100.00, sum(h_amount) = 90.00 over 4 HISTORY rows",
				"warehouse 1 district 2: d_ytd = 30.00, sum(h_amount) = 40.00 over 4 HISTORY rows",
			},
		},
	},
	{
		// The payment now belongs to customer 3 of district 1; the
		// warehouse and district sums do not move, nor does 12.
		name:   "10: h_c_id of HISTORY row 2 set to customer 3",
		change: chkUpdate(History, []int64{2}, "h_c_id", engine.Int(3)),
		fresh:  true,
		want: map[int][]string{
			10: {
				"warehouse 1 district 1 customer 2: c_balance = 65.50, sum(delivered ol_amount) - sum(h_amount) = 125.50 - 50.00 = 75.50",
				"warehouse 1 district 1 customer 3: c_balance = -10.00, sum(delivered ol_amount) - sum(h_amount) = 0.00 - 20.00 = -20.00",
			},
		},
	},
	{
		name:   "10 and 12: c_balance of customer 3 of district 2",
		change: chkUpdate(Customer, []int64{1, 2, 3}, "c_balance", engine.Dec(601)),
		fresh:  true,
		want: map[int][]string{
			10: {"warehouse 1 district 2 customer 3: c_balance = 6.01, sum(delivered ol_amount) - sum(h_amount) = 16.00 - 10.00 = 6.00"},
			12: {"warehouse 1 district 2 customer 3: c_balance + c_ytd_payment = 6.01 + 10.00 = 16.01, sum(delivered ol_amount) = 16.00"},
		},
	},
	{
		// Order 0, delivered, no lines: every other condition holds.
		name: "11: an extra delivered order",
		change: func(tx *engine.Tx, tabs map[string]*engine.TableHandle) error {
			return tx.Insert(tabs[Orders], engine.Row{engine.Int(0), engine.Int(1), engine.Int(1), engine.Int(1),
				engine.Time(chkTime), engine.Int(4), engine.Int(0), engine.Int(1)})
		},
		fresh: true,
		want: map[int][]string{
			11: {"warehouse 1 district 1: count(ORDERS) - count(NEW_ORDER) = 5 - 2 = 3, expected 2"},
		},
	},
	{
		name:   "12: c_ytd_payment of customer 1 of district 1",
		change: chkUpdate(Customer, []int64{1, 1, 1}, "c_ytd_payment", engine.Dec(900)),
		fresh:  true,
		want: map[int][]string{
			12: {"warehouse 1 district 1 customer 1: c_balance + c_ytd_payment = -2.75 + 9.00 = 6.25, sum(delivered ol_amount) = 7.25"},
		},
	},
}

func chkDeleteNewOrder3(tx *engine.Tx, tabs map[string]*engine.TableHandle) error {
	return tx.Delete(tabs[NewOrder], []engine.Value{engine.Int(1), engine.Int(1), engine.Int(3)})
}

// Every condition, once broken, fails with a message naming the place and
// both sides; the conditions that fail with it are exactly the ones listed.
func TestCheckCorruptions(t *testing.T) {
	covered := make(map[int]bool)
	for _, org := range chkOrgs {
		for _, cc := range chkCorruptions {
			t.Run(org.String()+"/"+cc.name, func(t *testing.T) {
				db, tabs := chkLoad(t, org)
				chkWrite(t, db, func(tx *engine.Tx) error { return cc.change(tx, tabs) })
				opts := chkOpts()
				opts.Fresh = cc.fresh
				rep, err := Check(db, opts)
				require.NoError(t, err)
				var want []int
				for n := range cc.want {
					want = append(want, n)
					covered[n] = true
				}
				slices.Sort(want)
				require.False(t, rep.Passed())
				require.Equal(t, want, rep.Failed(), "%s", rep)
				for _, c := range rep.Conditions {
					if d, ok := cc.want[c.Number]; ok {
						require.Equal(t, CheckFail, c.Status)
						require.Equal(t, d, c.Differences, "condition %d", c.Number)
						require.Equal(t, int64(len(d)), c.Failures, "condition %d", c.Number)
						continue
					}
					if c.Number == 11 && !cc.fresh {
						require.Equal(t, CheckSkipped, c.Status)
						continue
					}
					require.Equal(t, CheckPass, c.Status, "condition %d", c.Number)
				}
				s := rep.String()
				for _, n := range want {
					require.Contains(t, s, fmt.Sprintf("condition %d fails in", n))
					require.Contains(t, s, cc.want[n][0])
				}
			})
		}
	}
	for n := 1; n <= 12; n++ {
		require.True(t, covered[n], "no corruption breaks condition %d", n)
	}
}

// The brief's example: one district's d_next_o_id fails condition 2, and
// only it, by name.
func TestCheckNextOrderID(t *testing.T) {
	db, tabs := chkLoad(t, engine.Clustered)
	chkWrite(t, db, chkUpdate(District, []int64{1, 1}, "d_next_o_id", engine.Int(4)).bind(tabs))
	rep, err := Check(db, chkOpts())
	require.NoError(t, err)
	require.Equal(t, []int{2}, rep.Failed())
	c := rep.Condition(2)
	require.Equal(t, CheckFail, c.Status)
	require.Equal(t, "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) of the district", c.Statement)
	require.Equal(t, []string{"warehouse 1 district 1: d_next_o_id - 1 = 3, max(o_id) = 4, max(no_o_id) = 4"}, c.Differences)
	require.Regexp(t, `(?m)^2\s+FAIL \(1\)\s`, rep.String())
	require.Contains(t, rep.String(), "inconsistent: conditions 2 fail")
}

// MaxDifferences bounds the list, not the count.
func TestCheckMaxDifferences(t *testing.T) {
	db, tabs := chkLoad(t, engine.Clustered)
	chkWrite(t, db, chkUpdate(History, []int64{1}, "h_d_id", engine.Int(2)).bind(tabs))
	opts := chkOpts()
	opts.MaxDifferences = 1
	rep, err := Check(db, opts)
	require.NoError(t, err)
	c := rep.Condition(9)
	require.Equal(t, int64(2), c.Failures)
	require.Len(t, c.Differences, 1)
	require.Contains(t, rep.String(), "condition 9 fails in 2 places:\n  warehouse 1 district 1: ")
	require.Contains(t, rep.String(), "  and 1 more\n")
}

// bind turns a change into chkWrite's argument.
func (f chkChange) bind(tabs map[string]*engine.TableHandle) func(*engine.Tx) error {
	return func(tx *engine.Tx) error { return f(tx, tabs) }
}

// chkChange changes the fixture's tables in a transaction.
type chkChange func(*engine.Tx, map[string]*engine.TableHandle) error

// The text and JSON forms name every condition; the JSON form round-trips.
func TestCheckReportForms(t *testing.T) {
	db, tabs := chkLoad(t, engine.HeapRowPointer)
	chkWrite(t, db, chkUpdate(Customer, []int64{1, 2, 3}, "c_balance", engine.Dec(601)).bind(tabs))
	rep, err := Check(db, CheckConfig{DeliveredPerDistrict: chkDelivered})
	require.NoError(t, err)

	s := rep.String()
	lines := strings.Split(s, "\n")
	require.Regexp(t, `^cond\s+result\s+warehouses\s+districts\s+customers\s+orders\s+statement$`, lines[0])
	for n := 1; n <= 12; n++ {
		require.Regexp(t, fmt.Sprintf(`^%d\s+(pass|FAIL \(\d+\)|skipped: holds after load only)\s+\d+\s+\d+\s+\d+\s+\d+\s+\S`, n),
			lines[n], "line for condition %d", n)
	}
	// Aligned: every row's statement starts in the same column.
	col := strings.Index(lines[0], "statement")
	for n := 1; n <= 12; n++ {
		require.Equal(t, rep.Conditions[n-1].Statement, lines[n][col:], "condition %d", n)
	}
	require.Contains(t, s, "condition 10 fails in 1 place:\n  warehouse 1 district 2 customer 3: c_balance = 6.01")
	require.Contains(t, s, "inconsistent: conditions 10, 12 fail")

	b, err := json.Marshal(rep)
	require.NoError(t, err)
	js := string(b)
	for n := 1; n <= 12; n++ {
		require.Contains(t, js, fmt.Sprintf(`{"number":%d,"statement":`, n))
	}
	for _, key := range []string{`"fresh":false`, `"delivered_per_district":2`, `"conditions":[`, `"status":"fail"`,
		`"status":"skipped"`, `"reason":"holds after load only"`, `"failures":1`, `"differences":["warehouse 1 district 2 customer 3: `,
		`"warehouses":`, `"districts":`, `"customers":6`, `"orders":8`} {
		require.Contains(t, js, key)
	}
	var back CheckReport
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, rep, back)
	require.Equal(t, []int{10, 12}, back.Failed())

	ok, _ := chkLoad(t, engine.Clustered)
	rep, err = Check(ok, chkOpts())
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(rep.String(), "consistent\n"))
	require.False(t, regexp.MustCompile(`fails in`).MatchString(rep.String()))
}

// A database without the tables is not loaded: the error names the table.
func TestCheckNotLoaded(t *testing.T) {
	db, err := engine.Open(&engine.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	_, err = Check(db, CheckConfig{})
	require.ErrorIs(t, err, ErrNotLoaded)
	require.ErrorIs(t, err, engine.ErrUnknownTable)
	require.Contains(t, err.Error(), "no table warehouse")

	for _, def := range Tables(engine.Clustered) {
		if def.Name != OrderLine {
			_, err := db.CreateTable(def)
			require.NoError(t, err)
		}
	}
	_, err = Check(db, CheckConfig{})
	require.ErrorIs(t, err, ErrNotLoaded)
	require.Contains(t, err.Error(), "no table order_line")
	require.True(t, errors.Is(err, ErrNotLoaded))
}

// A table of the right name but not TPC-C's columns is an error, not a
// finding.
func TestCheckWrongSchema(t *testing.T) {
	db, err := engine.Open(&engine.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	for _, def := range Tables(engine.Clustered) {
		if def.Name == District {
			def.Columns = slices.Clone(def.Columns)
			def.Columns[DYtd].Scale = 4
		}
		_, err := db.CreateTable(def)
		require.NoError(t, err)
	}
	_, err = Check(db, CheckConfig{})
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrNotLoaded)
	require.Contains(t, err.Error(), "table district: column 9 is d_ytd")
}

// TestCheckWorkers: districts checked by several workers, each in a
// transaction reading the first one's snapshot, give the report one
// worker gives, differences in the same order (the first ones in key
// order when MaxDifferences cuts them), for every corruption and
// organization. The meter shows who read: on versioned tables one
// transaction and one read view, plus a transaction a worker; on heap
// tables without versions (locking reads) one worker, whatever was asked.
func TestCheckWorkers(t *testing.T) {
	for _, c := range []struct {
		org       engine.Org
		v         engine.HeapVersioning
		snapshots bool
	}{{engine.Clustered, engine.HeapVersionsDefault, true},
		{engine.HeapRowPointer, engine.HeapVersionsOn, true},
		{engine.HeapPrimaryKey, engine.HeapVersionsOff, false}} {
		for _, cc := range chkCorruptions {
			t.Run(fmt.Sprintf("%s/%s/%s", c.org, c.v, cc.name), func(t *testing.T) {
				db, tabs := chkLoadWith(t, c.org, c.v)
				chkWrite(t, db, func(tx *engine.Tx) error { return cc.change(tx, tabs) })
				var reps [2]CheckReport
				var meters [2]engine.Meter
				for i, workers := range []int{1, 2} {
					opts := chkOpts()
					opts.Fresh, opts.Workers, opts.MaxDifferences, opts.Meter = cc.fresh, workers, 1, &meters[i]
					rep, err := Check(db, opts)
					require.NoError(t, err)
					require.False(t, rep.Passed())
					reps[i] = rep
				}
				require.Equal(t, reps[0], reps[1])
				if c.snapshots {
					require.Equal(t, [2]int64{1, 1}, [2]int64{meters[0].ReadViews, meters[1].ReadViews}, "one snapshot")
					require.Equal(t, [2]int64{1, 3}, [2]int64{meters[0].Commits, meters[1].Commits}, "two workers, two more transactions")
					require.Zero(t, meters[1].LockRequests)
				} else {
					require.Positive(t, meters[0].LockRequests)
					require.Equal(t, meters[0].Commits, meters[1].Commits, "locking reads: one district at a time")
				}
			})
		}
	}
}

// TestCheckWorkersOrder: a condition broken in both districts lists its
// differences in key order, district 1's first, and a cut list keeps
// district 1's, with one worker and with two.
func TestCheckWorkersOrder(t *testing.T) {
	db, tabs := chkLoad(t, engine.Clustered)
	chkWrite(t, db, chkUpdate(District, []int64{1, 2}, "d_next_o_id", engine.Int(9)).bind(tabs))
	chkWrite(t, db, chkUpdate(District, []int64{1, 1}, "d_next_o_id", engine.Int(9)).bind(tabs))
	for _, workers := range []int{1, 2} {
		for _, keep := range []int{1, 5} {
			opts := chkOpts()
			opts.Workers, opts.MaxDifferences = workers, keep
			rep, err := Check(db, opts)
			require.NoError(t, err)
			want := []string{
				"warehouse 1 district 1: d_next_o_id - 1 = 8, max(o_id) = 4, max(no_o_id) = 4",
				"warehouse 1 district 2: d_next_o_id - 1 = 8, max(o_id) = 4, max(no_o_id) = 4",
			}
			c := rep.Condition(2)
			require.Equal(t, int64(2), c.Failures, "%d workers", workers)
			require.Equal(t, want[:min(keep, 2)], c.Differences, "%d workers, at most %d", workers, keep)
		}
	}
}

// otherRuntime is the real runtime under another type: a database on it
// is not on engine.RealRuntime, as a simulated one is not.
type otherRuntime struct{ engine.RealRuntime }

// TestCheckWorkersOtherRuntime: a database on another Runtime than the
// real one (the simulator's scheduler runs one goroutine's calls) is
// checked by one worker whatever CheckConfig asks: one transaction.
func TestCheckWorkersOtherRuntime(t *testing.T) {
	db, _ := chkLoadOpts(t, engine.Clustered, &engine.Options{Runtime: otherRuntime{}})
	var m engine.Meter
	opts := chkOpts()
	opts.Workers, opts.Meter = 2, &m
	rep, err := Check(db, opts)
	require.NoError(t, err)
	require.True(t, rep.Passed(), "%s", rep)
	require.Equal(t, int64(1), m.Commits, "one transaction: no workers")
}

// TestCheckWorkerError: a district whose reads fail fails the Check with
// that error, with one worker and with two, and leaves no transaction or
// read view open.
func TestCheckWorkerError(t *testing.T) {
	errRead := errors.New("a failed read")
	testHookCheckDistrict = func(w, d int64) error {
		if d == 2 {
			return fmt.Errorf("warehouse %d district %d: %w", w, d, errRead)
		}
		return nil
	}
	t.Cleanup(func() { testHookCheckDistrict = nil })
	db, _ := chkLoad(t, engine.Clustered)
	for _, workers := range []int{1, 2} {
		opts := chkOpts()
		opts.Workers = workers
		_, err := Check(db, opts)
		require.ErrorIs(t, err, errRead, "%d workers", workers)
		require.ErrorContains(t, err, "district 2")
		rw, views := db.ActiveTransactions()
		require.Equal(t, [2]int{0, 0}, [2]int{rw, views}, "%d workers: nothing left open", workers)
	}
}

func TestCheckWorkersNegative(t *testing.T) {
	db, _ := chkLoad(t, engine.Clustered)
	_, err := Check(db, CheckConfig{Workers: -1})
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.ErrorContains(t, err, "-1 workers")
}

// BenchmarkCheck checks the shared W=1 load (clustered, one snapshot)
// with one worker and with two: the rows read per check are the same
// (rows/op), the wall time is what more workers change.
func BenchmarkCheck(b *testing.B) {
	db, _ := loadW1(b)
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			var m engine.Meter
			b.ReportAllocs()
			for range b.N {
				rep, err := Check(db, CheckConfig{Fresh: true, Workers: workers, Meter: &m})
				if err != nil || !rep.Passed() {
					b.Fatal(err, rep.Failed())
				}
			}
			b.ReportMetric(float64(m.RowsReturned)/float64(b.N), "rows/op")
		})
	}
}
