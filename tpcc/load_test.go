package tpcc

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/engine"
	"github.com/stretchr/testify/require"
)

// openLoadDB opens an in-memory database for a load: a pool that holds a
// warehouse or two, and commits that do not wait for a sync.
func openLoadDB(tb testing.TB) *engine.DB {
	tb.Helper()
	db, err := engine.Open(&engine.Options{Options: cache.Options{PoolSize: 512 << 20}, Commit: engine.NoSyncCommit})
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

const testSeed = 20250101

// w1 is one W = 1 load that the population tests share (a load is the
// expensive part, under the race detector especially). The tests that read
// it as loaded are in this file; run_test.go, sorted after it, runs
// transactions on the same database, so they must run first (no -shuffle).
var w1 struct {
	sync.Mutex
	done  bool
	db    *engine.DB
	stats LoadReport
	calls [][2]int64 // Progress calls
	err   error
}

func loadW1(t testing.TB) (*engine.DB, LoadReport) {
	t.Helper()
	w1.Lock()
	defer w1.Unlock()
	if !w1.done {
		w1.done = true
		db, err := engine.Open(&engine.Options{Options: cache.Options{PoolSize: 512 << 20}, Commit: engine.NoSyncCommit})
		if err != nil {
			w1.err = err
		} else {
			w1.db = db
			w1.stats, w1.err = Load(context.Background(), db, LoadConfig{
				Warehouses: 1, Seed: testSeed, Org: engine.Clustered,
				Progress: func(done, total int64) { w1.calls = append(w1.calls, [2]int64{done, total}) },
			})
		}
	}
	require.NoError(t, w1.err, "the shared W=1 load")
	return w1.db, w1.stats
}

// loadKey names a shared load: its scale and organization.
type loadKey struct {
	sc  Scale
	org engine.Org
}

// sharedLoads are W = 1 loads shared by the tests, loaded on first use:
// at full scale the two heap organizations (the clustered one is w1), at
// SmallScale all three. A load at small scale is about a tenth of the
// work, so the tests whose point does not need the specification's
// population use those, under the race detector too.
var sharedLoads struct {
	sync.Mutex
	dbs   map[loadKey]*engine.DB
	stats map[loadKey]LoadReport
	errs  map[loadKey]error
}

func loadShared(t *testing.T, sc Scale, org engine.Org) (*engine.DB, LoadReport) {
	t.Helper()
	k := loadKey{sc, org}
	sharedLoads.Lock()
	defer sharedLoads.Unlock()
	if sharedLoads.dbs == nil {
		sharedLoads.dbs, sharedLoads.stats, sharedLoads.errs = map[loadKey]*engine.DB{}, map[loadKey]LoadReport{}, map[loadKey]error{}
	}
	if _, ok := sharedLoads.dbs[k]; !ok {
		db, err := engine.Open(&engine.Options{Options: cache.Options{PoolSize: 512 << 20}, Commit: engine.NoSyncCommit})
		var stats LoadReport
		if err == nil {
			stats, err = Load(context.Background(), db, LoadConfig{Warehouses: 1, Scale: sc, Seed: testSeed, Org: org})
		}
		sharedLoads.dbs[k], sharedLoads.stats[k], sharedLoads.errs[k] = db, stats, err
	}
	require.NoError(t, sharedLoads.errs[k], "the shared W=1 load of %s at %v scale", org, sc)
	return sharedLoads.dbs[k], sharedLoads.stats[k]
}

// loadOrg returns the shared full-scale W = 1 database of org, loading it
// on first use. Tests that change it commit whole TPC-C transactions only,
// so the consistency conditions keep holding; none may assume it is fresh.
func loadOrg(t *testing.T, org engine.Org) *engine.DB {
	t.Helper()
	if org == engine.Clustered {
		db, _ := loadW1(t)
		return db
	}
	db, _ := loadShared(t, FullScale, org)
	return db
}

// loadSmall returns the shared W = 1 database of org at SmallScale, on the
// same terms as loadOrg. TestLoadSmallScale (this file) reads the
// clustered one as loaded; the runs of run_test.go, sorted after it,
// change them.
func loadSmall(t *testing.T, org engine.Org) (*engine.DB, LoadReport) {
	t.Helper()
	return loadShared(t, SmallScale, org)
}

// count counts the rows of h whose primary key starts with prefix.
func count(t *testing.T, db *engine.DB, h *engine.TableHandle, prefix ...int64) int64 {
	t.Helper()
	tx := db.Begin(nil)
	defer func() { require.NoError(t, tx.Commit()) }()
	var so engine.ScanOptions
	for _, v := range prefix {
		so.Lower = append(so.Lower, engine.Int(v))
	}
	so.Upper = so.Lower
	n, _, err := tx.Count(h, engine.CountOptions{ScanOptions: so})
	require.NoError(t, err)
	return n
}

// scan calls fn with every row of table name, in primary-key order.
func scan(t *testing.T, db *engine.DB, name string, fn func(engine.Row)) {
	t.Helper()
	h, err := db.Table(name)
	require.NoError(t, err)
	tx := db.Begin(nil)
	cur, err := tx.Scan(h, engine.ScanOptions{})
	require.NoError(t, err)
	for cur.Next() {
		fn(cur.Row())
	}
	require.NoError(t, cur.Err())
	require.NoError(t, cur.Close())
	require.NoError(t, tx.Commit())
}

// wantRows returns the rows per table of a load of W warehouses with
// seed at scale sc (full or small): the population of 4.3.3.1, ORDER_LINE
// as the generator's O_OL_CNT add up.
func wantRows(t *testing.T, seed uint64, w int, sc Scale) map[string]int64 {
	var ol int64
	for wid := 1; wid <= w; wid++ {
		for d := 1; d <= DistrictsPerWarehouse; d++ {
			for _, c := range olCounts(seed, wid, d, sc.Orders()) {
				ol += int64(c)
			}
		}
	}
	n := int64(w)
	if sc.IsFull() {
		return map[string]int64{
			Item:      100_000,
			Warehouse: n,
			District:  10 * n,
			Customer:  30_000 * n,
			History:   30_000 * n,
			Orders:    30_000 * n,
			NewOrder:  9_000 * n,
			OrderLine: ol,
			Stock:     100_000 * n,
		}
	}
	require.Equal(t, SmallScale, sc, "the figures below are the small scale's")
	return map[string]int64{
		Item:      10_000,
		Warehouse: n,
		District:  10 * n,
		Customer:  3_000 * n,
		History:   3_000 * n,
		Orders:    3_000 * n,
		NewOrder:  900 * n,
		OrderLine: ol,
		Stock:     10_000 * n,
	}
}

func checkCounts(t *testing.T, db *engine.DB, stats LoadReport, w int, sc Scale) {
	t.Helper()
	want := wantRows(t, testSeed, w, sc)
	// O_OL_CNT is 5..15, so about 10 lines an order [4.3.3.1].
	orders := int64(w * DistrictsPerWarehouse * sc.Orders())
	require.InDelta(t, 10*orders, want[OrderLine], 0.01*float64(10*orders))
	var total int64
	for name, n := range want {
		h, err := db.Table(name)
		require.NoError(t, err)
		require.Equal(t, n, count(t, db, h), "rows of %s", name)
		require.Equal(t, n, stats.Rows[name], "LoadReport.Rows[%s]", name)
		total += n
	}
	require.Len(t, stats.Rows, 9)
	require.Equal(t, total, stats.TotalRows)
	require.Equal(t, w, stats.Warehouses)
	require.Equal(t, NewLoadConstants(testSeed), stats.Constants)
	require.Positive(t, stats.Elapsed)
	require.Positive(t, stats.RowsPerSecond)
	require.Positive(t, stats.Meter.Commits)
	require.GreaterOrEqual(t, stats.Meter.IndexEntriesWritten, total)
}

// The column position constants of schema.go name the columns the loader
// writes: check them against the declarations.
func TestColumnPositions(t *testing.T) {
	pos := map[string]map[string]int{
		Warehouse: {"w_id": WID, "w_name": WName, "w_street_1": WStreet1, "w_street_2": WStreet2, "w_city": WCity,
			"w_state": WState, "w_zip": WZip, "w_tax": WTax, "w_ytd": WYtd},
		District: {"d_id": DID, "d_w_id": DWID, "d_name": DName, "d_street_1": DStreet1, "d_street_2": DStreet2,
			"d_city": DCity, "d_state": DState, "d_zip": DZip, "d_tax": DTax, "d_ytd": DYtd, "d_next_o_id": DNextOID},
		Customer: {"c_id": CID, "c_d_id": CDID, "c_w_id": CWID, "c_first": CFirst, "c_middle": CMiddle, "c_last": CLast,
			"c_street_1": CStreet1, "c_street_2": CStreet2, "c_city": CCity, "c_state": CState, "c_zip": CZip,
			"c_phone": CPhone, "c_since": CSince, "c_credit": CCredit, "c_credit_lim": CCreditLim,
			"c_discount": CDiscount, "c_balance": CBalance, "c_ytd_payment": CYtdPayment,
			"c_payment_cnt": CPaymentCnt, "c_delivery_cnt": CDeliveryCnt, "c_data": CData},
		History: {"h_id": HID, "h_c_id": HCID, "h_c_d_id": HCDID, "h_c_w_id": HCWID, "h_d_id": HDID, "h_w_id": HWID,
			"h_date": HDate, "h_amount": HAmount, "h_data": HData},
		NewOrder: {"no_o_id": NOOID, "no_d_id": NODID, "no_w_id": NOWID},
		Orders: {"o_id": OID, "o_d_id": ODID, "o_w_id": OWID, "o_c_id": OCID, "o_entry_d": OEntryD,
			"o_carrier_id": OCarrierID, "o_ol_cnt": OOlCnt, "o_all_local": OAllLocal},
		OrderLine: {"ol_o_id": OLOID, "ol_d_id": OLDID, "ol_w_id": OLWID, "ol_number": OLNumber, "ol_i_id": OLIID,
			"ol_supply_w_id": OLSupplyWID, "ol_delivery_d": OLDeliveryD, "ol_quantity": OLQuantity,
			"ol_amount": OLAmount, "ol_dist_info": OLDistInfo},
		Item: {"i_id": IID, "i_im_id": IImID, "i_name": IName, "i_price": IPrice, "i_data": IData},
		Stock: {"s_i_id": SIID, "s_w_id": SWID, "s_quantity": SQuantity, "s_dist_01": SDist01, "s_dist_10": SDist01 + 9,
			"s_ytd": SYtd, "s_order_cnt": SOrderCnt, "s_remote_cnt": SRemoteCnt, "s_data": SData},
	}
	for _, def := range Tables(engine.Clustered) {
		want := pos[def.Name]
		require.NotNil(t, want, def.Name)
		for name, i := range want {
			require.Less(t, i, len(def.Columns), "%s.%s", def.Name, name)
			require.Equal(t, name, def.Columns[i].Name, "position %d of %s", i, def.Name)
		}
		if def.Name != Stock {
			require.Len(t, def.Columns, len(want), def.Name)
		} else {
			require.Len(t, def.Columns, SData+1)
		}
	}
}

func TestLoadBadConfig(t *testing.T) {
	for _, cfg := range []LoadConfig{
		{Warehouses: 0},
		{Warehouses: -1},
		{Warehouses: MaxWarehouses + 1},
		{Warehouses: 1, Workers: -1},
		{Warehouses: 1, BatchRows: -1},
		{Warehouses: 1, ProgressEvery: -5},
		{Warehouses: 1, Org: engine.HeapPrimaryKey + 1},
		{Warehouses: 1, Scale: Scale{Items: -5}},
		{Warehouses: 1, Scale: Scale{CustomersPerDistrict: 15}},
	} {
		db := openLoadDB(t)
		_, err := Load(context.Background(), db, cfg)
		require.ErrorIs(t, err, ErrInvalidConfig, "%+v", cfg)
		require.Empty(t, db.Tables(), "nothing is created for %+v", cfg)
	}
	_, err := Load(context.Background(), nil, LoadConfig{Warehouses: 1})
	require.ErrorIs(t, err, ErrInvalidConfig)
}

func TestLoadTableExists(t *testing.T) {
	db := openLoadDB(t)
	_, err := db.CreateTable(Tables(engine.Clustered)[0])
	require.NoError(t, err)
	_, err = Load(context.Background(), db, LoadConfig{Warehouses: 1})
	require.ErrorIs(t, err, engine.ErrTableExists)
}

func TestLoadCancel(t *testing.T) {
	db := openLoadDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Load(ctx, db, LoadConfig{Warehouses: 1})
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, db.Tables(), "a cancelled context stops Load before it creates anything")

	// Cancelled at the first progress report: the workers stop at their
	// next transaction.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	var last int64
	_, err = Load(ctx, db, LoadConfig{Warehouses: 1, ProgressEvery: 1000, Progress: func(done, total int64) {
		last = done
		if done > 0 {
			cancel()
		}
	}})
	require.ErrorIs(t, err, context.Canceled)
	require.Positive(t, last)
	require.Less(t, last, int64(100_000), "the load stopped early")
}

func TestLoadPopulation(t *testing.T) {
	db, stats := loadW1(t)
	t.Logf("W = 1: %d rows in %v (%.0f rows/s)", stats.TotalRows, stats.Elapsed.Round(time.Millisecond), stats.RowsPerSecond)
	checkCounts(t, db, stats, 1, FullScale)

	// Progress: first (0, total), last (total, total), done increasing by
	// at least ProgressEvery (5000) in between.
	calls := w1.calls
	require.GreaterOrEqual(t, len(calls), 3)
	require.Equal(t, [2]int64{0, stats.TotalRows}, calls[0])
	require.Equal(t, [2]int64{stats.TotalRows, stats.TotalRows}, calls[len(calls)-1])
	for i := 1; i < len(calls); i++ {
		require.Equal(t, stats.TotalRows, calls[i][1])
		if i < len(calls)-1 {
			require.GreaterOrEqual(t, calls[i][0]-calls[i-1][0], int64(5000), "call %d", i)
		} else {
			require.Greater(t, calls[i][0], calls[i-1][0])
		}
	}

	// Every index agrees with its table.
	start := time.Now()
	defer func() { t.Logf("engine Check of the nine tables: %v", time.Since(start).Round(time.Millisecond)) }()
	for _, name := range TableNames {
		h, err := db.Table(name)
		require.NoError(t, err)
		tx := db.Begin(nil)
		require.NoError(t, h.Check(tx), name)
		require.NoError(t, tx.Commit())
	}
}

// 10% of I_DATA and S_DATA hold "ORIGINAL" [4.3.3.1]: counted in the
// loaded rows, equal to what the generator marked, and within 8..12%.
func TestLoadOriginal(t *testing.T) {
	db, stats := loadW1(t)
	for _, c := range []struct {
		table string
		col   int
		want  int64
	}{{Item, IData, stats.ItemOriginal}, {Stock, SData, stats.StockOriginal}} {
		var n, rows int64
		scan(t, db, c.table, func(r engine.Row) {
			rows++
			d := r[c.col].B
			if len(d) < 26 || len(d) > 50 {
				t.Fatalf("%s data %q", c.table, d)
			}
			if bytes.Contains(d, []byte(Original)) {
				n++
			}
		})
		require.Equal(t, c.want, n, "%s rows holding ORIGINAL", c.table)
		require.True(t, n*100 >= 8*rows && n*100 <= 12*rows, "%s: %d of %d rows hold ORIGINAL", c.table, n, rows)
	}
}

// Orders 2101..3000 of each district are undelivered: a NEW_ORDER row each
// (900 a district), a NULL carrier, order lines without delivery date and
// with an amount; the others have a carrier and delivered lines of amount
// 0 [4.3.3.1]. O_C_ID is a permutation of 1..3000.
//
// The row loops test with if and t.Fatalf, not require: hundreds of
// thousands of require calls are slow under the race detector.
func TestLoadOrders(t *testing.T) {
	db, _ := loadW1(t)
	no, err := db.Table(NewOrder)
	require.NoError(t, err)
	for d := int64(1); d <= 10; d++ {
		require.Equal(t, int64(900), count(t, db, no, 1, d), "NEW_ORDER rows of district %d", d)
	}
	scan(t, db, NewOrder, func(r engine.Row) {
		if o := r[NOOID].I; o < FirstNewOrder || o > 3000 {
			t.Fatalf("new order %v", r)
		}
	})

	load := engine.Time(DefaultLoadTime).I
	seen := make(map[[2]int64]bool) // (d, c_id)
	olCnt := make(map[[2]int64]int64)
	scan(t, db, Orders, func(r engine.Row) {
		o, d := r[OID].I, r[ODID].I
		carrier := r[OCarrierID]
		switch {
		case o < FirstNewOrder && (carrier.IsNull() || carrier.I < 1 || carrier.I > 10),
			o >= FirstNewOrder && !carrier.IsNull():
			t.Fatalf("order %d: o_carrier_id %v", o, r)
		case r[OOlCnt].I < 5 || r[OOlCnt].I > 15, r[OAllLocal].I != 1, r[OEntryD].I != load:
			t.Fatalf("order %v", r)
		}
		k := [2]int64{d, r[OCID].I}
		if seen[k] {
			t.Fatalf("O_C_ID %d twice in district %d", k[1], d)
		}
		seen[k] = true
		olCnt[[2]int64{d, o}] = r[OOlCnt].I
	})
	require.Len(t, seen, 30_000)

	lines := make(map[[2]int64]int64)
	scan(t, db, OrderLine, func(r engine.Row) {
		o, d := r[OLOID].I, r[OLDID].I
		lines[[2]int64{d, o}]++
		if lines[[2]int64{d, o}] != r[OLNumber].I {
			t.Fatalf("order line numbers do not run from 1: %v", r)
		}
		del, amt := r[OLDeliveryD], r[OLAmount].I
		switch {
		case o < FirstNewOrder && (del.IsNull() || del.I != load || amt != 0),
			o >= FirstNewOrder && (!del.IsNull() || amt < 1 || amt > 999_999):
			t.Fatalf("order line of order %d: delivery %v, amount %d", o, del, amt)
		case r[OLIID].I < 1 || r[OLIID].I > Items, r[OLSupplyWID].I != 1, r[OLQuantity].I != 5, len(r[OLDistInfo].B) != 24:
			t.Fatalf("order line %v", r)
		}
	})
	require.Equal(t, olCnt, lines, "O_OL_CNT = the order's lines")
}

// Customers 1..1000 of each district have the names of numbers 0..999 in
// order; the rest NURand(255, 0, 999) with the load's C [4.3.3.1].
func TestLoadCustomers(t *testing.T) {
	db, stats := loadW1(t)
	var bc, rows int64
	names := make(map[string]int)
	load := engine.Time(DefaultLoadTime).I
	scan(t, db, Customer, func(r engine.Row) {
		rows++
		c := r[CID].I
		last := string(r[CLast].B)
		if c <= 1000 && last != LastName(int(c-1)) {
			t.Fatalf("customer %d of district %d: c_last %s, want %s", c, r[CDID].I, last, LastName(int(c-1)))
		}
		names[last]++
		switch {
		case string(r[CMiddle].B) != "OE",
			len(r[CFirst].B) < 8 || len(r[CFirst].B) > 16,
			len(r[CData].B) < 300 || len(r[CData].B) > 500,
			r[CSince].I != load,
			len(r[CZip].B) != 9 || !strings.HasSuffix(string(r[CZip].B), "11111"),
			len(r[CPhone].B) != 16,
			r[CDiscount].I < 0 || r[CDiscount].I > 5000,
			r[CCreditLim].I != 5_000_000,
			r[CBalance].I != -1000, r[CYtdPayment].I != 1000, r[CPaymentCnt].I != 1, r[CDeliveryCnt].I != 0:
			t.Fatalf("customer %v", r)
		}
		switch string(r[CCredit].B) {
		case "BC":
			bc++
		case "GC":
		default:
			t.Fatalf("c_credit %q", r[CCredit].B)
		}
	})
	require.Equal(t, int64(30_000), rows)
	require.True(t, bc*100 >= 8*rows && bc*100 <= 12*rows, "%d of %d customers BC", bc, rows)
	require.Len(t, names, 1000, "every name occurs")

	// The other 2,000 customers of each district follow NURand(255, 0, 999)
	// with the load's C: their names are distributed as the 256 × 1000
	// equally likely draw pairs give for that C, much closer than for
	// another C (total variation distance).
	dist := func(c int) float64 {
		want := make([]float64, 1000)
		for ra := range 256 {
			for rxy := range 1000 {
				want[nurand(0, 999, c, ra, rxy)] += 1.0 / 256_000
			}
		}
		var d float64
		for n := range 1000 {
			got := float64(names[LastName(n)]-10) / 20_000 // less the ten sequential ones
			d += abs(got - want[n])
		}
		return d / 2
	}
	own := dist(stats.Constants.CLast)
	other := dist((stats.Constants.CLast + 100) % 256)
	t.Logf("TV distance: own C %.4f, C+100 %.4f", own, other)
	require.Less(t, own, other/2, "C_LAST follows the load's C (%d)", stats.Constants.CLast)

	// History: one row per customer, h_id by HistoryID.
	var h int64
	scan(t, db, History, func(r engine.Row) {
		h++
		seq := (r[HDID].I-1)*3000 + r[HCID].I
		if r[HID].I != HistoryID(1, 0, uint32(seq)) || r[HAmount].I != 1000 || r[HDate].I != load ||
			len(r[HData].B) < 12 || len(r[HData].B) > 24 || r[HCDID].I != r[HDID].I || r[HCWID].I != 1 || r[HWID].I != 1 {
			t.Fatalf("history %v", r)
		}
	})
	require.Equal(t, int64(30_000), h)
}

// The consistency conditions of 3.3.2 hold after a load, condition 11
// included.
func TestLoadConsistent(t *testing.T) {
	db, _ := loadW1(t)
	rep, err := Check(db, CheckConfig{Fresh: true})
	require.NoError(t, err)
	require.True(t, rep.Passed(), "%s", rep)
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// rowHasher hashes rows, value by value.
type rowHasher struct {
	h hash.Hash64
	b [8]byte
}

func newRowHasher() *rowHasher { return &rowHasher{h: fnv.New64a()} }

func (rh *rowHasher) add(r engine.Row) {
	for _, v := range r {
		if v.IsNull() {
			rh.h.Write([]byte{0})
			continue
		}
		rh.h.Write([]byte{1})
		binary.LittleEndian.PutUint64(rh.b[:], uint64(v.I))
		rh.h.Write(rh.b[:])
		binary.LittleEndian.PutUint64(rh.b[:], uint64(len(v.B)))
		rh.h.Write(rh.b[:])
		rh.h.Write(v.B)
	}
}

// tableHashes hashes every row of every table, in primary-key order.
func tableHashes(t *testing.T, db *engine.DB) map[string]uint64 {
	out := make(map[string]uint64)
	for _, name := range TableNames {
		rh := newRowHasher()
		scan(t, db, name, rh.add)
		out[name] = rh.h.Sum64()
	}
	return out
}

// generatedHashes runs the loader's generator without a database, lane
// after lane in plan order (each table's rows in primary-key order), and
// hashes the rows of each table; only the lanes of tables, if any are
// given.
func generatedHashes(t *testing.T, cfg LoadConfig, tables ...int) map[string]uint64 {
	l := newLoader(nil, cfg)
	var hs [numTables]*rowHasher
	w := &worker{loader: l, ctx: context.Background(), row: make(engine.Row, 0, 21),
		emit: func(table int, r engine.Row) {
			if hs[table] == nil {
				hs[table] = newRowHasher()
			}
			hs[table].add(r)
		}}
	for _, ln := range l.plan() {
		if len(tables) == 0 || slices.Contains(tables, ln.table) {
			require.NoError(t, w.load(ln))
		}
	}
	out := make(map[string]uint64)
	for i, rh := range hs {
		if rh != nil {
			out[tableNames[i]] = rh.h.Sum64()
		}
	}
	return out
}

// The same seed and W give the same rows: the shared load (parallel, in
// batches) holds exactly the rows the generator gives when run again
// alone, in one goroutine and without a database; a different seed gives
// other rows. (TestLoadTwice loads twice, without the race detector.)
func TestLoadDeterministic(t *testing.T) {
	skipUnderRace(t)
	db, _ := loadW1(t)
	got := tableHashes(t, db)
	cfg := LoadConfig{Warehouses: 1, Seed: testSeed}
	want := generatedHashes(t, cfg)
	require.Equal(t, want, got, "the loaded tables are the generator's rows")

	// Another seed: other rows (the small tables are enough to see it).
	cfg.Seed++
	other := generatedHashes(t, cfg, tWarehouse, tHistory, tNewOrder)
	require.Len(t, other, 4)
	for name, h := range other {
		if name == NewOrder { // no random column
			require.Equal(t, want[name], h)
			continue
		}
		require.NotEqual(t, want[name], h, name)
	}
}

// A second load of the same seed, by one worker in batches of another size
// (so in other transactions, and no longer concurrently with other
// tables), holds the same rows, table by table, in trees and heaps of the
// same shape. At small scale: the property does not depend on the
// population's size, and two small loads are affordable under the race
// detector.
func TestLoadTwice(t *testing.T) {
	db, _ := loadSmall(t, engine.Clustered)
	want := tableHashes(t, db)
	wantSpace, err := db.SpaceReport()
	require.NoError(t, err)

	db2 := openLoadDB(t)
	_, err = Load(context.Background(), db2, LoadConfig{Warehouses: 1, Scale: SmallScale, Seed: testSeed, Org: engine.Clustered,
		Workers: 1, BatchRows: 777})
	require.NoError(t, err)
	require.Equal(t, want, tableHashes(t, db2))
	space, err := db2.SpaceReport()
	require.NoError(t, err)
	require.Equal(t, wantSpace, space)
}

// Two warehouses hold twice the rows, half each, and warehouse 1 is the
// same as in a W = 1 load (of another organization: the rows do not
// depend on it). At small scale, for the race detector's sake.
func TestLoadTwoWarehouses(t *testing.T) {
	db := openLoadDB(t)
	stats, err := Load(context.Background(), db, LoadConfig{Warehouses: 2, Scale: SmallScale, Seed: testSeed, Org: engine.HeapRowPointer})
	require.NoError(t, err)
	checkCounts(t, db, stats, 2, SmallScale)
	for _, name := range []string{Customer, Orders, NewOrder, Stock} {
		h, err := db.Table(name)
		require.NoError(t, err)
		for w := int64(1); w <= 2; w++ {
			require.Equal(t, stats.Rows[name]/2, count(t, db, h, w), "%s rows of warehouse %d", name, w)
		}
	}
	db1, _ := loadSmall(t, engine.Clustered)
	h1, err := db1.Table(Customer)
	require.NoError(t, err)
	h2, err := db.Table(Customer)
	require.NoError(t, err)
	for _, pk := range [][]engine.Value{{engine.Int(1), engine.Int(3), engine.Int(150)}, {engine.Int(1), engine.Int(10), engine.Int(300)}} {
		tx1, tx2 := db1.Begin(nil), db.Begin(nil)
		r1, ok1, err1 := tx1.Get(h1, pk, nil)
		r2, ok2, err2 := tx2.Get(h2, pk, nil)
		require.NoError(t, errors.Join(err1, err2))
		require.True(t, ok1 && ok2)
		require.Equal(t, r1.String(), r2.String())
		require.NoError(t, errors.Join(tx1.Commit(), tx2.Commit()))
	}
}

// A load at SmallScale has the figures the scale gives (10,000 items and
// STOCK rows; 300 customers, HISTORY rows and orders a district; orders
// 211 to 300 undelivered; customers named after 0 to 299 in order; D_YTD
// and W_YTD the sums of the history), the consistency conditions hold
// with condition 11 at 210, its rows are the generator's, and tpcc_config
// stores the scale.
//
// The row loops test with if and t.Fatalf, not require (see
// TestLoadOrders).
func TestLoadSmallScale(t *testing.T) {
	db, stats := loadSmall(t, engine.Clustered)
	checkCounts(t, db, stats, 1, SmallScale)

	no, err := db.Table(NewOrder)
	require.NoError(t, err)
	for d := int64(1); d <= DistrictsPerWarehouse; d++ {
		require.Equal(t, int64(90), count(t, db, no, 1, d), "NEW_ORDER rows of district %d", d)
	}
	scan(t, db, NewOrder, func(r engine.Row) {
		if o := r[NOOID].I; o < 211 || o > 300 {
			t.Fatalf("new order %v", r)
		}
	})
	cids := make(map[int64]map[int64]bool) // district → O_C_IDs
	scan(t, db, Orders, func(r engine.Row) {
		o, d, carrier := r[OID].I, r[ODID].I, r[OCarrierID]
		if o > 300 || (o < 211) == carrier.IsNull() {
			t.Fatalf("order %v", r)
		}
		if cids[d] == nil {
			cids[d] = make(map[int64]bool)
		}
		if c := r[OCID].I; c < 1 || c > 300 || cids[d][c] {
			t.Fatalf("O_C_ID of order %v", r)
		}
		cids[d][r[OCID].I] = true
	})
	require.Len(t, cids, 10)
	scan(t, db, OrderLine, func(r engine.Row) {
		if i := r[OLIID].I; i < 1 || i > 10_000 || (r[OLOID].I < 211) == r[OLDeliveryD].IsNull() {
			t.Fatalf("order line %v", r)
		}
	})
	names := make(map[int64]int) // district → customers named after their number
	scan(t, db, Customer, func(r engine.Row) {
		if c := r[CID].I; c > 300 || string(r[CLast].B) != LastName(int(c-1)) {
			t.Fatalf("customer %v", r)
		}
		names[r[CDID].I]++
	})
	require.Equal(t, map[int64]int{1: 300, 2: 300, 3: 300, 4: 300, 5: 300, 6: 300, 7: 300, 8: 300, 9: 300, 10: 300}, names)
	scan(t, db, History, func(r engine.Row) {
		if r[HID].I != HistoryID(1, 0, uint32((r[HDID].I-1)*300+r[HCID].I)) {
			t.Fatalf("history %v", r)
		}
	})
	scan(t, db, District, func(r engine.Row) {
		if r[DYtd].I != 300_000 || r[DNextOID].I != 301 { // 3,000.00: 300 payments of 10.00
			t.Fatalf("district %v", r)
		}
	})
	scan(t, db, Warehouse, func(r engine.Row) {
		if r[WYtd].I != 3_000_000 { // 30,000.00
			t.Fatalf("warehouse %v", r)
		}
	})

	rep, err := Check(db, CheckConfig{Fresh: true, Scale: SmallScale})
	require.NoError(t, err)
	require.True(t, rep.Passed(), "%s", rep)
	require.Equal(t, int64(210), rep.DeliveredPerDistrict)
	rep, err = Check(db, CheckConfig{Fresh: true}) // full scale's 2,100
	require.NoError(t, err)
	require.Equal(t, []int{11}, rep.Failed())
	require.Contains(t, rep.Condition(11).Differences[0], "= 300 - 90 = 210, expected 2100")

	l, err := ReadLoaded(db)
	require.NoError(t, err)
	require.Equal(t, Loaded{Warehouses: 1, Scale: SmallScale, Seed: testSeed, Constants: stats.Constants, Org: engine.Clustered,
		LoadTime: DefaultLoadTime}, l)

	require.Equal(t, generatedHashes(t, LoadConfig{Warehouses: 1, Scale: SmallScale, Seed: testSeed}), tableHashes(t, db),
		"the loaded tables are the generator's rows")
}

// A smaller scale draws the same values where it draws the same things:
// its items, STOCK rows and customers are the first ones of a full load.
func TestScaleSameFirstRows(t *testing.T) {
	rows := func(sc Scale, table, n int, gen func(w *worker) error) uint64 {
		rh := newRowHasher()
		l := newLoader(nil, LoadConfig{Warehouses: 1, Scale: sc, Seed: testSeed})
		seen := 0
		w := &worker{loader: l, ctx: context.Background(), row: make(engine.Row, 0, CKeyPos+1),
			emit: func(tb int, r engine.Row) {
				require.Equal(t, table, tb)
				if seen++; seen <= n {
					rh.add(r)
				}
			}}
		require.NoError(t, gen(w))
		require.GreaterOrEqual(t, seen, n)
		return rh.h.Sum64()
	}
	for _, c := range []struct {
		table, n int
		gen      func(w *worker) error
	}{
		{tItem, 10_000, func(w *worker) error { return w.items(0) }},
		{tStock, 10_000, func(w *worker) error { return w.stock(1, 0) }},
		{tCustomer, 300, func(w *worker) error { return w.customers(1, 7) }},
	} {
		require.Equal(t, rows(FullScale, c.table, c.n, c.gen), rows(SmallScale, c.table, c.n, c.gen), tableNames[c.table])
	}
}

// BenchmarkLoad loads one warehouse in memory, per organization, with a
// pool that holds it all and commits that do not sync:
//
//	go test -run '^$' -bench BenchmarkLoad -benchtime 1x -count 3 ./tpcc/
//
// Goal: one warehouse in under 5 seconds.
func BenchmarkLoad(b *testing.B) {
	for _, org := range []engine.Org{engine.Clustered, engine.HeapRowPointer, engine.HeapPrimaryKey} {
		b.Run(fmt.Sprintf("org=%s", org), func(b *testing.B) {
			var rows int64
			var secs float64
			for range b.N {
				b.StopTimer()
				db, err := engine.Open(&engine.Options{Options: cache.Options{PoolSize: 1 << 30}, Commit: engine.NoSyncCommit})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				stats, err := Load(context.Background(), db, LoadConfig{Warehouses: 1, Seed: 1, Org: org})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				rows += stats.TotalRows
				secs += stats.Elapsed.Seconds()
				if err := db.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(rows)/secs, "rows/s")
			b.ReportMetric(secs/float64(b.N), "s/load")
		})
	}
}

// TestKitFillFactor: the heap organizations' tables carry the kit's fill
// factors (KitFillFactor, BenchmarkSQL's), the others and the clustered
// organization's fill their pages; a load into a database whose default
// organization is a heap resolves it and sets them too.
func TestKitFillFactor(t *testing.T) {
	want := map[string]int{Warehouse: 50, District: 79, Customer: 90, Stock: 95, Orders: 85, OrderLine: 85,
		History: 0, NewOrder: 0, Item: 0}
	for _, org := range []engine.Org{engine.Clustered, engine.HeapRowPointer, engine.HeapPrimaryKey} {
		for _, def := range Tables(org) {
			if org == engine.Clustered {
				require.Zero(t, def.FillFactor, def.Name)
				continue
			}
			require.Equal(t, want[def.Name], def.FillFactor, "%s %s", org, def.Name)
		}
	}
	db, err := engine.Open(&engine.Options{DefaultOrg: engine.HeapPrimaryKey, Options: cache.Options{PoolSize: 64 << 20},
		Commit: engine.NoSyncCommit})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	_, err = Load(context.Background(), db, LoadConfig{Warehouses: 1, Scale: SmallScale, Seed: testSeed})
	require.NoError(t, err)
	for name, ff := range want {
		h, err := db.Table(name)
		require.NoError(t, err)
		require.Equal(t, engine.HeapPrimaryKey, h.Org())
		if ff == 0 {
			ff = engine.DefaultFillFactor
		}
		require.Equal(t, ff, h.FillFactor(), name)
	}
}

// TestLoadDurable: a load into a directory, in SyncCommit mode, is
// durable when Load returns, though its batches commit without a sync
// (TxOptions.NoSync) and only its last commit, ConfigTable's, syncs: a
// crash right after Load returns leaves the same rows, consistent, and
// the load's ConfigTable. A crash in the middle of the load leaves no
// ConfigTable, which ReadLoaded refuses.
func TestLoadDurable(t *testing.T) {
	skipUnderRace(t)
	fs := vfs.NewCrashableMem()
	opts := &engine.Options{FS: fs, Dir: "db", Options: cache.Options{PoolSize: 64 << 20}, Commit: engine.SyncCommit}
	db, err := engine.Open(opts)
	require.NoError(t, err)
	var mid *vfs.MemFS
	cfg := LoadConfig{Warehouses: 1, Scale: SmallScale, Seed: testSeed, Workers: 1,
		Progress: func(done, total int64) {
			if mid == nil && done >= total/2 {
				mid = fs.CrashClone(vfs.CrashCloneCfg{})
			}
		}}
	stats, err := Load(context.Background(), db, cfg)
	require.NoError(t, err)
	require.Zero(t, stats.Meter.SyncCommits, "the load's batches wait for no sync")
	want := tableHashes(t, db)
	image := fs.CrashClone(vfs.CrashCloneCfg{})
	require.NoError(t, db.Close())
	require.NotNil(t, mid)

	reopen := func(img *vfs.MemFS) *engine.DB {
		o := *opts
		o.FS = img
		db, err := engine.Open(&o)
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	db = reopen(image)
	loaded, err := ReadLoaded(db)
	require.NoError(t, err)
	require.Equal(t, 1, loaded.Warehouses)
	require.Equal(t, want, tableHashes(t, db), "the rows after the crash")
	rep, err := Check(db, CheckConfig{Fresh: true, Scale: loaded.Scale})
	require.NoError(t, err)
	require.True(t, rep.Passed(), "%s", rep)

	_, err = ReadLoaded(reopen(mid))
	require.ErrorIs(t, err, ErrNotLoaded, "a load cut short by a crash")
}

// TestLanePickerAvoidsBusyTables: with enough warehouses a worker, a
// worker gets the first lane whose table no other worker is loading, and
// a lane of a busy table only when every lane left is of a busy table;
// with fewer, and for a lone worker, the lanes go in plan order.
func TestLanePickerAvoidsBusyTables(t *testing.T) {
	lanes := []lane{
		{table: tOrderLine, w: 1}, {table: tOrderLine, w: 2},
		{table: tStock, w: 1}, {table: tStock, w: 2},
		{table: tItem},
		{table: tCustomer, w: 1}, {table: tCustomer, w: 2},
	}
	p := newLanePicker(lanes, 2*avoidBusyWarehouses, 2)
	a := p.next(-1)
	require.Equal(t, 0, a, "A: ORDER_LINE 1")
	b := p.next(-1)
	require.Equal(t, 2, b, "B: STOCK 1, not ORDER_LINE 2 beside A")
	b = p.next(b)
	require.Equal(t, 3, b, "B: STOCK 2 (ORDER_LINE still A's)")
	a = p.next(a)
	require.Equal(t, 1, a, "A: ORDER_LINE 2")
	b = p.next(b)
	require.Equal(t, 4, b, "B: ITEM")
	a = p.next(a)
	require.Equal(t, 5, a, "A: CUSTOMER 1")
	b = p.next(b)
	require.Equal(t, 6, b, "B: CUSTOMER 2 beside A: nothing else is left")
	require.Equal(t, -1, p.next(a))
	require.Equal(t, -1, p.next(b))

	p = newLanePicker(lanes, 2*avoidBusyWarehouses-1, 2)
	require.Equal(t, 0, p.next(-1))
	require.Equal(t, 1, p.next(-1), "fewer warehouses a worker: ORDER_LINE 2 beside ORDER_LINE 1")

	p = newLanePicker(lanes, 2*avoidBusyWarehouses, 1)
	var order []int
	for k := p.next(-1); k >= 0; k = p.next(k) {
		order = append(order, k)
	}
	require.Equal(t, []int{0, 1, 2, 3, 4, 5, 6}, order)
}

// TestLanePickerKeepsTheTail: in a model where a lane takes as long as it
// has rows, the picker's load of the full-scale plan ends at most 8% later
// than plan order's for every warehouse and worker count here (the
// threshold avoidBusyWarehouses is what keeps it so: passing over busy
// tables' lanes at any count ends W2 with four workers 46% later), and at
// W16 with two workers it runs two lanes of one table at once less than a
// quarter as long as plan order, which does so nearly throughout.
func TestLanePickerKeepsTheTail(t *testing.T) {
	// model returns the modelled end of a load in which each worker asks
	// pick for its next lane as soon as its last one ends, and the time
	// two or more workers spent on lanes of one table.
	model := func(lanes []lane, workers int, pick func(done int) int) (end, shared int64) {
		type run struct {
			end  int64
			lane int
		}
		var running []run
		busy := make(map[int]int)
		start := func(now int64, k int) {
			if k >= 0 {
				running = append(running, run{now + lanes[k].rows, k})
				busy[lanes[k].table]++
			}
		}
		for range workers {
			start(0, pick(-1))
		}
		var now int64
		for len(running) > 0 {
			i := 0
			for j := range running {
				if running[j].end < running[i].end || running[j].end == running[i].end && running[j].lane < running[i].lane {
					i = j
				}
			}
			r := running[i]
			running = slices.Delete(running, i, i+1)
			for _, n := range busy {
				shared += int64(max(n-1, 0)) * (r.end - now)
			}
			now = r.end
			busy[lanes[r.lane].table]--
			start(now, pick(r.lane))
		}
		return now, shared
	}
	for _, wh := range []int{1, 2, 3, 4, 6, 8, 12, 16, 32} {
		for _, workers := range []int{2, 3, 4, 8} {
			lanes := newLoader(nil, LoadConfig{Warehouses: wh, Seed: 1}).plan()
			next := 0
			planEnd, planShared := model(lanes, workers, func(int) int {
				if next == len(lanes) {
					return -1
				}
				next++
				return next - 1
			})
			p := newLanePicker(lanes, wh, workers)
			end, shared := model(lanes, workers, p.next)
			require.LessOrEqual(t, float64(end), float64(planEnd)*1.08, "W%d, %d workers", wh, workers)
			t.Logf("W%d, %d workers: end %+.1f%%, two lanes of a table at once %d against %d", wh, workers, 100*(float64(end)/float64(planEnd)-1), shared, planShared)
			require.LessOrEqual(t, shared, planShared, "W%d, %d workers", wh, workers)
			if wh == 16 && workers == 2 {
				require.Less(t, shared*4, planShared, "W16, 2 workers: two lanes of a table at once a quarter as long at most")
			}
		}
	}
}
