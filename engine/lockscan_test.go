package engine

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHeapVersionsLockingScan: a locking scan (ScanOptions.ForUpdate) of
// a versioned heap table under RepeatableRead behaves as PostgreSQL's
// SELECT ... FOR UPDATE: rows unchanged since the snapshot are returned
// and locked; a row updated (in place of its unindexed column, or of the
// indexed one) or deleted by a transaction that committed after the
// snapshot fails the scan with ErrSerialization, retryable, with the
// transaction rolled back; a row inserted since is not the snapshot's
// and is not returned. Under ReadCommitted the scan returns the latest
// versions without an error. Through the primary index and through a
// secondary one, in both heap organizations.
func TestHeapVersionsLockingScan(t *testing.T) {
	for _, org := range hvOrgs {
		for _, v := range []struct{ index, col string }{{"", ""}, {"by_v", ""}, {"", "id"}, {"by_v", "v"}} {
			index := v.index
			var cols []string // the whole row: a row fetch
			name := org.String() + "/" + map[string]string{"": "primary", "by_v": "by_v"}[index]
			if v.col != "" {
				cols = []string{v.col} // index-only
				name += "/index-only"
			}
			t.Run(name, func(t *testing.T) {
				db := hvOpen(t)
				tb, err := db.CreateTable(hvTable(org))
				require.NoError(t, err)
				tx := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
				for id := int64(1); id <= 3; id++ {
					require.NoError(t, tx.Insert(tb, Row{Int(id), Int(10 * id), Int(100 * id)}))
				}
				require.NoError(t, tx.Commit())
				scan := func(x *Tx) ([]int64, error) {
					c, err := x.Scan(tb, ScanOptions{Index: index, Columns: cols, ForUpdate: true})
					if err != nil {
						return nil, err
					}
					var ids []int64
					for c.Next() {
						ids = append(ids, rowID(c.Row(), v.col))
					}
					err = c.Err()
					c.Close()
					return ids, err
				}

				for _, c := range []struct {
					name   string
					change func(b *Tx) error
					fails  bool
				}{
					{"update w", func(b *Tx) error {
						return b.Update(tb, []Value{Int(2)}, []Set{{Column: "w", Value: Int(201)}})
					}, true},
					{"update v", func(b *Tx) error {
						return b.Update(tb, []Value{Int(2)}, []Set{{Column: "v", Value: Int(21)}})
					}, true},
					{"delete", func(b *Tx) error { return b.Delete(tb, []Value{Int(3)}) }, true},
					{"insert", func(b *Tx) error { return b.Insert(tb, Row{Int(9), Int(90), Int(900)}) }, false},
					{"nothing", func(*Tx) error { return nil }, false},
				} {
					var m Meter
					a := db.BeginTx(&m, TxOptions{Isolation: RepeatableRead})
					// The snapshot, and the rows a plain scan reads in it.
					snapIDs := plainIDs(t, a, tb, index)
					b := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
					require.NoError(t, c.change(b), c.name)
					require.NoError(t, b.Commit(), c.name)
					ids, err := scan(a)
					if c.fails {
						require.ErrorIs(t, err, ErrSerialization, c.name)
						require.True(t, Retryable(err), c.name)
						require.EqualValues(t, 1, m.SerializationFailures, c.name)
						require.ErrorIs(t, a.Commit(), ErrTxDone, "%s: rolled back", c.name)
					} else {
						require.NoError(t, err, c.name)
						require.Zero(t, m.SerializationFailures, c.name)
						require.ElementsMatch(t, snapIDs, ids, "%s: the snapshot's rows, locked", c.name)
						if c.name == "insert" {
							require.NotContains(t, ids, int64(9), "a row inserted after the snapshot is not the scan's")
						}
						require.NoError(t, a.Commit(), c.name)
					}
				}

				// ReadCommitted: the latest committed versions, no error.
				a := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
				hvGet(t, a, tb, 1)
				b := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
				require.NoError(t, b.Update(tb, []Value{Int(1)}, []Set{{Column: "w", Value: Int(101)}}))
				require.NoError(t, b.Commit())
				ids, err := scan(a)
				require.NoError(t, err)
				require.ElementsMatch(t, []int64{1, 2, 9}, ids, "the latest rows: 3 deleted, 9 inserted")
				require.NoError(t, a.Commit())
			})
		}
	}
}

// rowID is the row's id, or for an index-only scan of v its v / 10
// (every row's v is ten times its id, or 21 after "update v").
func rowID(r Row, col string) int64 {
	if col == "v" {
		return r[1].I / 10
	}
	return r[0].I
}

// plainIDs is the ids a plain (consistent) scan of the index returns.
func plainIDs(t *testing.T, x *Tx, tb *TableHandle, index string) []int64 {
	t.Helper()
	c, err := x.Scan(tb, ScanOptions{Index: index})
	require.NoError(t, err)
	defer c.Close()
	var ids []int64
	for c.Next() {
		ids = append(ids, c.Row()[0].I)
	}
	require.NoError(t, c.Err())
	return ids
}
