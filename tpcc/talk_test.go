package tpcc

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/engine"
)

// The talk's findings, as counts on the meters. The file sorts after
// load_test.go on purpose: Delivery's rollbacks below leave pages split
// differently, and the population tests compare the shared load's shape. They measure the by-name
// lookup (the step the profiles phrase differently) on the shared W = 1
// databases of organization 1 (clustered) and 2 (heap, secondaries
// carrying row pointers), for a few last names of district 1.

// matches counts the customers of (1, d) named last, with count(*).
func matches(t *testing.T, db *engine.DB, d int64, last string) int64 {
	t.Helper()
	h, err := db.Table(Customer)
	require.NoError(t, err)
	tx := db.Begin(nil)
	defer func() { require.NoError(t, tx.Commit()) }()
	key := []engine.Value{engine.Int(1), engine.Int(d), engine.Str(last)}
	n, _, err := tx.Count(h, engine.CountOptions{ScanOptions: engine.ScanOptions{Index: CustomerByName, Lower: key, Upper: key}})
	require.NoError(t, err)
	return n
}

// lookupFetches runs one by-name lookup of profile p reading cols, and
// returns its row fetches and the customer it chose.
func lookupFetches(t *testing.T, db *engine.DB, p Profile, d int64, last string, cols []string) (int64, int64) {
	t.Helper()
	h, err := OpenTables(db)
	require.NoError(t, err)
	x := &Executor{T: h, Profile: p}
	var m engine.Meter
	tx := db.Begin(&m)
	cid, err := x.customerByName(tx, 1, d, last, cols, PByNameCount, PByNameScan)
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
	return m.RowFetches, cid
}

// findingNames are last names with one to several customers in district 1
// of the test load.
var findingNames = []string{"BARBARBAR", "OUGHTABLEPRI", "ESEESECALLY", "PRESANTIATION"}

// With sysbench, the count(c_id) fetches every match's row in organization
// 2 (the index holds no c_id) and none in organization 1; the count
// rewrite takes exactly those fetches away. What sysbench reads after the
// count decides the rest:
//   - Order-Status reads the matching rows (c_balance, c_first, c_middle,
//     c_id): one fetch per match in both organizations, so with the
//     rewrite the two are equal;
//   - Payment reads the c_id list: index-only in organization 1, a heap
//     fetch per match in 2, so even with the rewrite organization 2 pays
//     one fetch per match more.
func TestFindingSysbenchByName(t *testing.T) {
	skipUnderRace(t)
	c, r := loadOrg(t, engine.Clustered), loadOrg(t, engine.HeapRowPointer)
	defer c.SetCountRewrite(false)
	defer r.SetCountRewrite(false)
	for _, last := range findingNames {
		n := matches(t, c, 1, last)
		require.Equal(t, n, matches(t, r, 1, last), "the same population")
		require.Positive(t, n, last)
		for _, rewrite := range []bool{false, true} {
			c.SetCountRewrite(rewrite)
			r.SetCountRewrite(rewrite)
			count := n // the count's fetches in organization 2
			if rewrite {
				count = 0
			}
			// Payment: count(c_id), then the c_id list.
			fc, idc := lookupFetches(t, c, Sysbench, 1, last, byNameIDs)
			fr, idr := lookupFetches(t, r, Sysbench, 1, last, byNameIDs)
			require.Equal(t, idc, idr, "%s: the same customer", last)
			require.EqualValues(t, 0, fc, "%s rewrite=%v: Payment, organization 1", last, rewrite)
			require.Equal(t, count+n, fr, "%s rewrite=%v: Payment, organization 2", last, rewrite)

			// Order-Status: count(c_id), then the rows.
			fc, _ = lookupFetches(t, c, Sysbench, 1, last, byNameRows)
			fr, _ = lookupFetches(t, r, Sysbench, 1, last, byNameRows)
			require.Equal(t, n, fc, "%s rewrite=%v: Order-Status, organization 1", last, rewrite)
			require.Equal(t, count+n, fr, "%s rewrite=%v: Order-Status, organization 2", last, rewrite)
			if rewrite {
				require.Equal(t, fc, fr, "%s: with the rewrite, Order-Status by name costs the same", last)
			} else {
				require.Greater(t, fr, fc, "%s: without it, organization 2 pays more", last)
			}
		}
	}
}

// With benchmarksql, the c_id list is index-only in organization 1 and a
// heap fetch per match in organization 2: one fetch per matching customer
// more, with or without the rewrite (it counts nothing).
func TestFindingBenchmarkSQLByName(t *testing.T) {
	skipUnderRace(t)
	c, r := loadOrg(t, engine.Clustered), loadOrg(t, engine.HeapRowPointer)
	for _, last := range findingNames {
		n := matches(t, c, 1, last)
		fc, idc := lookupFetches(t, c, BenchmarkSQL, 1, last, byNameIDs)
		fr, idr := lookupFetches(t, r, BenchmarkSQL, 1, last, byNameIDs)
		require.Equal(t, idc, idr, "%s: the same customer", last)
		require.EqualValues(t, 0, fc, last)
		require.Equal(t, n, fr-fc, "%s: one row fetch per matching customer more", last)
		// The optimized profile reads the ids only up to the chosen one.
		fo, ido := lookupFetches(t, r, Optimized, 1, last, byNameIDs)
		require.Equal(t, idc, ido, "%s: the same customer", last)
		require.Equal(t, (n+1)/2, fo, "%s: optimized stops at position ceil(n/2)", last)
	}
}

// Delivery: benchmarksql reads every undelivered order of each district
// and uses the first; with LIMIT 1 the others read one. Both deliver the
// same orders; the transactions are rolled back, so both see one state.
func TestFindingDeliveryReadsMore(t *testing.T) {
	for _, org := range []engine.Org{engine.Clustered, engine.HeapRowPointer} {
		t.Run(org.String(), func(t *testing.T) {
			db := loadOrg(t, org)
			h, err := OpenTables(db)
			require.NoError(t, err)
			var pending int64 // undelivered orders of the warehouse
			for d := int64(1); d <= DistrictsPerWarehouse; d++ {
				pending += count(t, db, h.NewOrder, 1, d)
			}
			require.Greater(t, pending, int64(DistrictsPerWarehouse), "undelivered orders to read")
			returned := map[Profile]int64{}
			for _, p := range []Profile{Optimized, Sysbench, BenchmarkSQL} {
				x := &Executor{T: h, Profile: p}
				var m engine.Meter
				tx := db.Begin(&m)
				skipped, err := x.Delivery(tx, &DeliveryInput{WID: 1, CarrierID: 3, Date: time.Unix(1_800_000_000, 0)})
				require.NoError(t, err)
				require.Zero(t, skipped)
				require.NoError(t, tx.Rollback())
				returned[p] = m.RowsReturned
				t.Logf("%s: %s", p, m.String())
			}
			require.Equal(t, returned[Optimized], returned[Sysbench], "both use LIMIT 1")
			// Each district's scan returns all its new orders instead of one.
			require.Equal(t, pending-DistrictsPerWarehouse, returned[BenchmarkSQL]-returned[Optimized])
		})
	}
}
