package engine

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
)

// TestGetAllocatesNothing: a warm primary-key Get allocates nothing, in
// every organization, at the default isolation level (a consistent read)
// and under Serializable (a shared row lock). BenchmarkGet's B/op is not
// zero because it begins a transaction every ten gets, and Begin
// allocates the transaction's handle; this test holds the gets alone to
// zero, as the benchmark's allocs/op column cannot (it rounds 0.1 down).
func TestGetAllocatesNothing(t *testing.T) {
	db, err := Open(&Options{Options: cache.Options{PoolSize: 16 << 20}, Commit: NoSyncCommit})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	const rows = 1000
	for _, org := range costOrgs {
		tb, err := db.CreateTable(benchTable("alloc_"+org.String(), org))
		require.NoError(t, err)
		tx := db.Begin(nil)
		for id := range int64(rows) {
			require.NoError(t, tx.Insert(tb, benchRow(id, benchData)))
		}
		require.NoError(t, tx.Commit())
		for _, iso := range []Isolation{RepeatableRead, Serializable} {
			var m Meter
			tx := db.BeginTx(&m, TxOptions{Isolation: iso})
			pk, row := make([]Value, 1), make(Row, len(tb.info.def.Columns))
			id := int64(0)
			get := func() {
				pk[0] = Int(id)
				got, found, err := tx.Get(tb, pk, row)
				if err != nil || !found || got[0].I != id {
					panic(fmt.Sprintf("get %d: found %v, %v", id, found, err))
				}
				id = (id + 7) % rows
			}
			for range rows { // every row once: warm pages, locks and buffers
				get()
			}
			require.Zero(t, testing.AllocsPerRun(500, get), "%s %s", org, iso)
			require.NoError(t, tx.Commit())
			// The warm-up, AllocsPerRun's own run and its 500: a
			// consistent read or a shared lock each.
			gets := int64(rows + 1 + 500)
			if iso == Serializable {
				require.Equal(t, gets, m.LockRequests, "%s %s", org, iso)
				require.Zero(t, m.ConsistentReads, "%s %s", org, iso)
			} else {
				require.Equal(t, gets, m.ConsistentReads, "%s %s", org, iso)
				require.Zero(t, m.LockRequests, "%s %s", org, iso)
			}
		}
	}
}
