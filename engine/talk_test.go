package engine

import (
	"fmt"
	"testing"

	"github.com/enginelab/enginelab/cache"
	"github.com/stretchr/testify/require"
)

// loadCustomers fills a customer table: 3 districts of 100 customers; in
// district 1, customers 1..30 share the last name BARBARBAR.
func loadCustomers(t testing.TB, db *DB, org Org) *TableHandle {
	t.Helper()
	def := customerTable()
	def.Name = "customer_" + org.String()
	def.Org = org
	tb, err := db.CreateTable(def)
	require.NoError(t, err)
	tx := db.Begin(nil)
	for d := int64(1); d <= 3; d++ {
		for id := int64(1); id <= 100; id++ {
			last := fmt.Sprintf("LAST%03d", id)
			if d == 1 && id <= 30 {
				last = "BARBARBAR"
			}
			row := Row{Int(1), Int(d), Int(id), Str(fmt.Sprintf("FIRST%03d", id)), Str(last), Dec(-1000), Str("data")}
			require.NoError(t, tx.Insert(tb, row))
		}
	}
	require.NoError(t, tx.Commit())
	return tb
}

// TestTalkCountByLastName is the case behind the project: count(c_id) over
// a last name through the (w, d, last, first) index.
func TestTalkCountByLastName(t *testing.T) {
	for _, rewrite := range []bool{false, true} {
		db, err := Open(&Options{Options: cache.Options{PoolSize: 8 << 20}, CountRewrite: rewrite})
		require.NoError(t, err)
		for _, tc := range []struct {
			org     Org
			fetches int64
		}{
			{Clustered, 0},
			{HeapRowPointer, 30},
			{HeapPrimaryKey, 0},
		} {
			t.Run(fmt.Sprintf("%s/rewrite=%v", tc.org, rewrite), func(t *testing.T) {
				tb := loadCustomers(t, db, tc.org)
				want := tc.fetches
				if rewrite {
					want = 0
				}
				by := ScanOptions{Index: "idx_customer_name",
					Lower: []Value{Int(1), Int(1), Str("BARBARBAR")},
					Upper: []Value{Int(1), Int(1), Str("BARBARBAR")}}
				var m Meter
				tx := db.Begin(&m)
				n, path, err := tx.Count(tb, CountOptions{ScanOptions: by, Column: "c_id"})
				require.NoError(t, err)
				require.EqualValues(t, 30, n)
				require.Equal(t, want, m.RowFetches, m.String())
				require.Equal(t, want == 0, path.IndexOnly)

				// count(*) never fetches.
				m = Meter{}
				n, path, err = tx.Count(tb, CountOptions{ScanOptions: by})
				require.NoError(t, err)
				require.EqualValues(t, 30, n)
				require.Zero(t, m.RowFetches)
				require.True(t, path.IndexOnly)

				// A scan that wants only c_id.
				m = Meter{}
				by.Columns = []string{"c_id"}
				cur, err := tx.Scan(tb, by)
				require.NoError(t, err)
				var ids []int64
				for cur.Next() {
					ids = append(ids, cur.Row()[2].I)
				}
				require.NoError(t, cur.Close())
				require.Len(t, ids, 30)
				require.Equal(t, tc.fetches, m.RowFetches, m.String())
				require.Equal(t, tc.fetches == 0, cur.Path().IndexOnly)
				require.NoError(t, tx.Commit())
			})
		}
		require.NoError(t, db.Close())
	}
}

// SetCountRewrite switches the rewrite on an open database: the next count
// of the row-pointer heap fetches no row, and switching it back fetches
// them again.
func TestSetCountRewrite(t *testing.T) {
	db, err := Open(&Options{Options: cache.Options{PoolSize: 8 << 20}})
	require.NoError(t, err)
	defer db.Close()
	tb := loadCustomers(t, db, HeapRowPointer)
	key := []Value{Int(1), Int(1), Str("BARBARBAR")}
	count := func() int64 {
		var m Meter
		tx := db.Begin(&m)
		n, _, err := tx.Count(tb, CountOptions{ScanOptions: ScanOptions{Index: "idx_customer_name", Lower: key, Upper: key}, Column: "c_id"})
		require.NoError(t, err)
		require.EqualValues(t, 30, n)
		require.NoError(t, tx.Commit())
		return m.RowFetches
	}
	require.False(t, db.CountRewrite())
	require.EqualValues(t, 30, count())
	db.SetCountRewrite(true)
	require.True(t, db.CountRewrite())
	require.EqualValues(t, 0, count())
	db.SetCountRewrite(false)
	require.EqualValues(t, 30, count())
}
