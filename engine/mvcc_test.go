package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
)

// mvccTable is a small clustered table: id, v, and an index on v.
func mvccTable(org Org) Table {
	return Table{
		Name:       "mvcc_" + org.String(),
		Columns:    []Column{{Name: "id", Type: TypeInt}, {Name: "v", Type: TypeInt}},
		PrimaryKey: []string{"id"},
		Indexes:    []Index{{Name: "by_v", Columns: []string{"v"}}},
		Org:        org,
	}
}

func mvccOpen(t *testing.T) *DB {
	t.Helper()
	db, err := Open(&Options{Options: cache.Options{PoolSize: 8 << 20}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	return db
}

// TestReadViewVisibility checks ReadView.changesVisible against InnoDB's
// rules: below the up limit visible, at or past the low limit invisible,
// in between invisible exactly when active, the creator's own visible.
func TestReadViewVisibility(t *testing.T) {
	v := &ReadView{lowLimit: 20, upLimit: 10, ids: []uint64{10, 14, 17}, creator: 17}
	for id, want := range map[uint64]bool{1: true, 9: true, 10: false, 11: true, 14: false, 15: true, 17: true, 19: true, 20: false, 25: false} {
		require.Equal(t, want, v.changesVisible(id), "id %d", id)
	}
}

// TestTrxIDAtFirstWrite: a transaction gets its transaction id, and
// enters the active list, at its first write, not at Begin; a read view
// lists exactly the active writers; commit and rollback leave the list.
func TestTrxIDAtFirstWrite(t *testing.T) {
	db := mvccOpen(t)
	tb, err := db.CreateTable(mvccTable(Clustered))
	require.NoError(t, err)
	require.Equal(t, Serializable, db.Options().Isolation)

	a := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
	require.Equal(t, RepeatableRead, a.iso)
	require.Zero(t, a.trxID)
	rw, views := db.ActiveTransactions()
	require.Zero(t, rw)
	require.Zero(t, views)

	require.NoError(t, a.Insert(tb, Row{Int(1), Int(1)}))
	require.NotZero(t, a.trxID)
	require.Greater(t, a.trxID, a.id)
	rw, _ = db.ActiveTransactions()
	require.Equal(t, 1, rw)

	b := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
	v := b.openView()
	require.Equal(t, []uint64{a.trxID}, v.ids)
	require.Equal(t, a.trxID, v.upLimit)
	require.False(t, v.changesVisible(a.trxID))
	require.NoError(t, a.Commit())
	rw, views = db.ActiveTransactions()
	require.Zero(t, rw)
	require.Equal(t, 1, views)
	require.False(t, v.changesVisible(a.trxID), "a view made before the commit does not see it")
	require.True(t, b.openView().changesVisible(a.trxID), "a view made after it does")
	require.NoError(t, b.Rollback())
	rw, views = db.ActiveTransactions()
	require.Zero(t, rw)
	require.Zero(t, views)

	// Begin keeps the database's level.
	c := db.Begin(nil)
	require.Equal(t, Serializable, c.iso)
	require.NoError(t, c.Commit())
}
