package engine

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/engine/lock"
	"github.com/stretchr/testify/require"
)

// The transaction model: seeded random transactions of inserts, updates
// (some growing a note far enough to move a heap row, some shrinking it)
// and deletes on metaTable, each ending in a commit, a rollback, or as the
// victim of a deadlock built on purpose; an in-memory model applies only
// what committed. The same generator drives the crash tests.

// txModel is the committed state: rows by primary key (k1, k2).
type txModel struct {
	rows map[[2]int64]Row
	u    int64 // the next unique value for column u
}

func newTxModel() *txModel { return &txModel{rows: make(map[[2]int64]Row), u: 1} }

func (m *txModel) clone() *txModel {
	c := &txModel{rows: make(map[[2]int64]Row, len(m.rows)), u: m.u}
	for k, r := range m.rows {
		c.rows[k] = r
	}
	return c
}

// render lists the rows in primary-key order as scanAllRows does.
func (m *txModel) render() []string {
	keys := make([][2]int64, 0, len(m.rows))
	for k := range m.rows {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]int64) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	})
	var out []string
	for _, k := range keys {
		out = append(out, fmt.Sprint(m.rows[k]))
	}
	return out
}

// txOp is one operation of a generated transaction.
type txOp struct {
	kind int // opInsert, opUpdate, opDelete
	key  [2]int64
	row  Row   // insert
	set  []Set // update
}

// genTx draws a transaction of 1 to 6 operations valid against the state
// view (the model plus the transaction's own earlier operations), and
// applies them to view.
func genTx(r *rand.Rand, view *txModel) []txOp {
	n := 1 + r.IntN(6)
	var ops []txOp
	for range n {
		k := [2]int64{int64(r.IntN(60)), int64(r.IntN(4))}
		_, exists := view.rows[k]
		note := func() Value {
			if r.IntN(4) == 0 {
				return Null
			}
			b := make([]byte, r.IntN(700))
			for i := range b {
				b[i] = byte('a' + r.IntN(26))
			}
			return Bytes(b)
		}
		switch {
		case !exists:
			u := Null
			if r.IntN(2) == 0 {
				u = Int(view.u)
				view.u++
			}
			row := Row{Str(fmt.Sprintf("name%02d", r.IntN(12))), Int(k[0]), Dec(int64(r.IntN(100000))), u, Int(k[1]), note()}
			ops = append(ops, txOp{kind: opInsert, key: k, row: row})
			view.rows[k] = row
		case r.IntN(3) == 0:
			ops = append(ops, txOp{kind: opDelete, key: k})
			delete(view.rows, k)
		default:
			row := slices.Clone(view.rows[k])
			var set []Set
			if r.IntN(2) == 0 {
				row[mAmount] = Dec(int64(r.IntN(100000)))
				set = append(set, Set{Column: "amount", Value: row[mAmount]})
			}
			if r.IntN(3) == 0 {
				row[mName] = Str(fmt.Sprintf("name%02d", r.IntN(12)))
				set = append(set, Set{Column: "name", Value: row[mName]})
			}
			if r.IntN(4) == 0 {
				row[mU] = Int(view.u)
				view.u++
				set = append(set, Set{Column: "u", Value: row[mU]})
			}
			if len(set) == 0 || r.IntN(2) == 0 {
				row[mNote] = note()
				set = append(set, Set{Column: "note", Value: row[mNote]})
			}
			ops = append(ops, txOp{kind: opUpdate, key: k, set: set})
			view.rows[k] = row
		}
	}
	return ops
}

func applyOp(tx *Tx, tb *TableHandle, op txOp) error {
	pk := []Value{Int(op.key[0]), Int(op.key[1])}
	switch op.kind {
	case opInsert:
		return tx.Insert(tb, op.row)
	case opUpdate:
		return tx.Update(tb, pk, op.set)
	default:
		return tx.Delete(tb, pk)
	}
}

// signalParker parks a lock wait by telling the test, then blocking until
// the lock is granted: the fake scheduler the deadlock construction needs.
// Everything else is real.
type signalParker struct {
	RealRuntime
	parked chan *lock.Wait
}

func (p signalParker) Park(w *lock.Wait) bool {
	p.parked <- w
	<-w.Ready()
	return true
}

// makeVictim turns tx, which holds the exclusive lock of key a, into a
// deadlock victim: another transaction reads an unrelated row b, then waits
// for a (parked); tx then asks for b, closing the cycle, and being the
// requester it is the victim. The other transaction is granted a once tx's
// rollback releases it, and commits.
func makeVictim(t *testing.T, db *DB, tb *TableHandle, tx *Tx, parked chan *lock.Wait, a, b [2]int64) {
	t.Helper()
	other := db.Begin(nil)
	_, _, err := other.GetForUpdate(tb, []Value{Int(b[0]), Int(b[1])}, nil)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, _, err := other.GetForUpdate(tb, []Value{Int(a[0]), Int(a[1])}, nil)
		done <- err
	}()
	w := <-parked
	require.Equal(t, other.id, w.Tx)
	err = tx.Update(tb, []Value{Int(b[0]), Int(b[1])}, []Set{{Column: "amount", Value: Dec(1)}})
	require.ErrorIs(t, err, ErrDeadlock)
	require.Zero(t, db.locks.HeldBy(&tx.owner), "a victim keeps no lock")
	require.NoError(t, <-done)
	require.NoError(t, other.Commit())
}

// checkAgainst requires tb to hold exactly want and to pass Check.
func checkAgainst(t *testing.T, db *DB, tb *TableHandle, want []string, what string) {
	t.Helper()
	require.Equal(t, want, scanAllRows(t, db, tb), what)
	tx := db.Begin(nil)
	require.NoError(t, tb.Check(tx), what)
	require.NoError(t, tx.Commit())
}

func TestTxModel(t *testing.T) {
	const txs = 300
	for _, org := range []Org{Clustered, HeapRowPointer, HeapPrimaryKey} {
		for _, mode := range []HeapUpdate{InPlace, NewVersion} {
			if org == Clustered && mode == NewVersion {
				continue
			}
			t.Run(fmt.Sprintf("%s/update=%d", org, mode), func(t *testing.T) {
				seed := uint64(20261130)
				t.Logf("seed %d", seed)
				r := rand.New(rand.NewPCG(seed, uint64(org)))
				parked := make(chan *lock.Wait)
				// A pool of 48 4 KiB frames: pages are evicted and written
				// all the time, uncommitted changes included.
				db, err := Open(&Options{PageSize: 4096, Options: cache.Options{PoolSize: 48 * 4096}, HeapUpdate: mode,
					Runtime: signalParker{parked: parked}, CheckpointBytes: 256 << 10})
				require.NoError(t, err)
				tb, err := db.CreateTable(metaTable(org))
				require.NoError(t, err)
				model := newTxModel()
				var commits, rollbacks, victims int
				for i := range txs {
					view := model.clone()
					ops := genTx(r, view)
					tx := db.Begin(nil)
					for _, op := range ops {
						require.NoError(t, applyOp(tx, tb, op), "tx %d op %+v", i, op)
					}
					switch c := r.IntN(10); {
					case c < 6:
						require.NoError(t, tx.Commit())
						model = view
						commits++
					case c < 8:
						require.NoError(t, tx.Rollback())
						rollbacks++
					default:
						var b [2]int64
						found := false
						for k := range model.rows {
							if !slices.ContainsFunc(ops, func(o txOp) bool { return o.key == k }) &&
								(!found || k[0] < b[0] || (k[0] == b[0] && k[1] < b[1])) {
								b, found = k, true
							}
						}
						if !found {
							require.NoError(t, tx.Rollback())
							rollbacks++
							break
						}
						makeVictim(t, db, tb, tx, parked, ops[0].key, b)
						victims++
					}
					if i%50 == 49 {
						checkAgainst(t, db, tb, model.render(), fmt.Sprintf("after transaction %d", i))
					}
				}
				t.Logf("%d commits, %d rollbacks, %d deadlock victims, %d rows, %d checkpoints",
					commits, rollbacks, victims, len(model.rows), db.LogStats().Checkpoints)
				require.NotZero(t, victims)
				checkAgainst(t, db, tb, model.render(), "at the end")
				require.NoError(t, db.Close())
			})
		}
	}
}

// TestRollbackOfShrinkFitsInPlace: an update that shrinks a heap row in
// place keeps its length (padded), so rolling it back after another
// transaction filled the page still fits in place, and the row keeps its
// pointer.
func TestRollbackOfShrinkFitsInPlace(t *testing.T) {
	for _, org := range []Org{HeapRowPointer, HeapPrimaryKey} {
		t.Run(org.String(), func(t *testing.T) {
			db, err := Open(&Options{PageSize: 4096, Options: cache.Options{PoolSize: 1 << 20}})
			require.NoError(t, err)
			defer db.Close()
			tb, err := db.CreateTable(metaTable(org))
			require.NoError(t, err)
			long := make([]byte, 600)
			for i := range long {
				long[i] = 'l'
			}
			tx := db.Begin(nil)
			require.NoError(t, tx.Insert(tb, Row{Str("a"), Int(1), Dec(1), Null, Int(1), Bytes(long)}))
			require.NoError(t, tx.Commit())
			before := scanAllRows(t, db, tb)

			shrink := db.Begin(nil)
			require.NoError(t, shrink.Update(tb, []Value{Int(1), Int(1)}, []Set{{Column: "note", Value: Str("s")}}))
			// Another transaction fills the page's free space.
			fill := db.Begin(nil)
			for k := int64(2); k < 16; k++ {
				require.NoError(t, fill.Insert(tb, Row{Str("f"), Int(k), Dec(1), Null, Int(1), Bytes(long[:300])}))
			}
			require.NoError(t, fill.Commit())
			require.NoError(t, shrink.Rollback())
			rows := scanAllRows(t, db, tb)
			require.Equal(t, before[0], rows[0])
			check := db.Begin(nil)
			require.NoError(t, tb.Check(check))
			require.NoError(t, check.Commit())
		})
	}
}
