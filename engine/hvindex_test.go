package engine

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/engine/lock"
	"github.com/enginelab/enginelab/heap"
)

// hv2Table has two secondary indexes, by_v (unique) and by_u, and a
// column w no index covers.
func hv2Table(org Org) Table {
	return Table{
		Name: "hv2_" + org.String(),
		Columns: []Column{{Name: "id", Type: TypeInt}, {Name: "v", Type: TypeInt}, {Name: "u", Type: TypeInt},
			{Name: "w", Type: TypeInt}, {Name: "pad", Type: TypeVarchar, Length: 2000, Nullable: true}},
		PrimaryKey: []string{"id"},
		Indexes: []Index{{Name: "by_v", Columns: []string{"v"}, Unique: true},
			{Name: "by_u", Columns: []string{"u"}}},
		Org: org,
	}
}

// hvEntries counts the entries of each index of tb (primary first).
func hvEntries(t *testing.T, tb *TableHandle) []int {
	t.Helper()
	var n []int
	for _, ix := range tb.ixs {
		it := ix.tree.NewIter(nil, nil)
		k := 0
		for ok := it.First(); ok; ok = it.Next() {
			k++
		}
		require.NoError(t, it.Close())
		n = append(n, k)
	}
	return n
}

// hvWrite runs f in a transaction of its own and returns its meter.
func hvWrite(t *testing.T, db *DB, f func(tx *Tx) error) Meter {
	t.Helper()
	var m Meter
	tx := db.BeginTx(&m, TxOptions{Isolation: ReadCommitted})
	require.NoError(t, f(tx))
	require.NoError(t, tx.Commit())
	return m
}

func hvCheck(t *testing.T, db *DB, tb *TableHandle) {
	t.Helper()
	tx := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
	require.NoError(t, tb.Check(tx))
	require.NoError(t, tx.Commit())
}

// TestHeapVersionsIndexPerVersion: a HOT update writes no index entry; a
// non-HOT update writes one in the primary index and one in every
// secondary that carries row pointers (heap-rowptr: 3 with two
// secondaries, whether or not their columns changed), and in those that
// carry the primary key only when their columns changed; the old entries
// stay. An old snapshot finds the row by its old values, a new one by its
// new values only. Vacuum then removes exactly the entries naming the
// dead line pointers and frees those pointers. Exact counts.
func TestHeapVersionsIndexPerVersion(t *testing.T) {
	for _, org := range hvOrgs {
		t.Run(org.String(), func(t *testing.T) {
			db := hvOpen(t)
			tb, err := db.CreateTable(hv2Table(org))
			require.NoError(t, err)
			hvWrite(t, db, func(tx *Tx) error { return tx.Insert(tb, Row{Int(1), Int(10), Int(100), Int(0), Null}) })
			require.Equal(t, []int{1, 1, 1}, hvEntries(t, tb))

			m := hvWrite(t, db, func(tx *Tx) error {
				return tx.Update(tb, []Value{Int(1)}, []Set{{Column: "w", Value: Int(1)}})
			})
			require.EqualValues(t, 1, m.HeapHOTUpdates)
			require.EqualValues(t, 0, m.IndexEntriesWritten, "a HOT update touches no index")
			require.Equal(t, []int{1, 1, 1}, hvEntries(t, tb))

			old := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			hvGet(t, old, tb, 1)
			m = hvWrite(t, db, func(tx *Tx) error {
				return tx.Update(tb, []Value{Int(1)}, []Set{{Column: "v", Value: Int(11)}})
			})
			require.EqualValues(t, 1, m.HeapNonHOTUpdates)
			require.EqualValues(t, 0, m.IndexEntriesDeleted)
			want := []int{2, 2, 2}
			if org == HeapPrimaryKey {
				// by_u carries the primary key and its column did not
				// change: its entry names the row already.
				want = []int{2, 2, 1}
			}
			require.EqualValues(t, want[0]+want[1]+want[2]-3, m.IndexEntriesWritten)
			require.Equal(t, want, hvEntries(t, tb))

			// A non-HOT update because the new version does not fit on
			// the page (no indexed column changed).
			// the page (no indexed column changed): the updates before
			// it are HOT. old keeps every version from being pruned.
			big := make([]byte, 2000)
			per := int64(3)
			if org == HeapPrimaryKey {
				per = 1
			}
			for i := 0; ; i++ {
				require.Less(t, i, 100)
				m = hvWrite(t, db, func(tx *Tx) error {
					return tx.Update(tb, []Value{Int(1)}, []Set{{Column: "pad", Value: Bytes(big[:2000-i%2])}})
				})
				if m.HeapNonHOTUpdates == 0 {
					require.EqualValues(t, 1, m.HeapHOTUpdates)
					require.EqualValues(t, 0, m.IndexEntriesWritten)
					continue
				}
				require.EqualValues(t, 1, m.HeapNonHOTUpdates, "a version that does not fit goes to another page")
				require.EqualValues(t, per, m.IndexEntriesWritten)
				break
			}
			want[0]++
			if org == HeapRowPointer {
				want[1]++
				want[2]++
			}
			require.Equal(t, want, hvEntries(t, tb))
			hvCheck(t, db, tb)

			scanV := func(tx *Tx, v int64) int {
				c, err := tx.Scan(tb, ScanOptions{Index: "by_v", Lower: []Value{Int(v)}, Upper: []Value{Int(v)}})
				require.NoError(t, err)
				n := 0
				for c.Next() {
					require.EqualValues(t, v, c.Row()[1].I)
					n++
				}
				require.NoError(t, c.Close())
				return n
			}
			require.Equal(t, 1, scanV(old, 10), "the old snapshot finds the row by its old value")
			require.Equal(t, 0, scanV(old, 11))
			r := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
			require.Equal(t, 0, scanV(r, 10))
			require.Equal(t, 1, scanV(r, 11))
			require.NoError(t, r.Commit())
			require.NoError(t, old.Commit())

			before := hvEntries(t, tb)
			var vm Meter
			st, err := db.Vacuum(&vm, tb)
			require.NoError(t, err)
			after := hvEntries(t, tb)
			removed := 0
			for i := range before {
				removed += before[i] - after[i]
			}
			require.Equal(t, removed, st.IndexEntriesRemoved)
			require.EqualValues(t, removed, vm.VacuumIndexEntriesRemoved)
			require.Equal(t, st.DeadItems, st.LinePointersFreed)
			require.Equal(t, []int{1, 1, 1}, after, "the old values' entries are gone")
			// Every dead version chain had its root in the primary
			// index: one primary entry per dead pointer.
			require.Equal(t, before[0]-1, st.DeadItems)
			for no := uint32(1); no < tb.heap.HighWater(); no++ {
				lps, _, err := tb.heap.PageVersions(nil, no)
				if err != nil {
					continue
				}
				require.Zero(t, lpStates(lps)["dead"], "page %d", no)
			}
			hvCheck(t, db, tb)
			r = db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
			require.Equal(t, 1, scanV(r, 11))
			require.NoError(t, r.Commit())
		})
	}
}

// TestHeapVersionsUniqueReinsert: a primary key or unique value whose row
// was deleted may be inserted again, as in PostgreSQL: before vacuum the
// dead row's entries stay beside the new row's (the check skips them:
// their versions are dead), after vacuum they are gone; Check agrees.
func TestHeapVersionsUniqueReinsert(t *testing.T) {
	for _, org := range hvOrgs {
		t.Run(org.String(), func(t *testing.T) {
			db := hvOpen(t)
			tb, err := db.CreateTable(hv2Table(org))
			require.NoError(t, err)
			hvWrite(t, db, func(tx *Tx) error { return tx.Insert(tb, Row{Int(1), Int(10), Int(100), Int(0), Null}) })
			hvWrite(t, db, func(tx *Tx) error { return tx.Delete(tb, []Value{Int(1)}) })
			// The same primary key again, without vacuum.
			m := hvWrite(t, db, func(tx *Tx) error { return tx.Insert(tb, Row{Int(1), Int(10), Int(100), Int(0), Null}) })
			if org == HeapRowPointer {
				require.EqualValues(t, 3, m.IndexEntriesWritten)
				require.Equal(t, []int{2, 2, 2}, hvEntries(t, tb))
			} else {
				// The secondaries' entries (values, primary key) are
				// the dead row's own: they serve the new row.
				require.EqualValues(t, 1, m.IndexEntriesWritten)
				require.Equal(t, []int{2, 1, 1}, hvEntries(t, tb))
			}
			hvCheck(t, db, tb)
			tx := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
			require.ErrorIs(t, tx.Insert(tb, Row{Int(1), Int(12), Int(0), Int(0), Null}), ErrDuplicateKey, "a live row's key")
			require.ErrorIs(t, tx.Insert(tb, Row{Int(2), Int(10), Int(0), Int(0), Null}), ErrDuplicateKey, "a live row's unique value")
			require.NoError(t, tx.Rollback())

			// A unique value under another primary key, after vacuum.
			hvWrite(t, db, func(tx *Tx) error { return tx.Delete(tb, []Value{Int(1)}) })
			st, err := db.Vacuum(nil, tb)
			require.NoError(t, err)
			if org == HeapRowPointer {
				require.Equal(t, 6, st.IndexEntriesRemoved)
			} else {
				// Two primary entries, and the one entry of each
				// secondary the two incarnations shared.
				require.Equal(t, 4, st.IndexEntriesRemoved)
			}
			require.Equal(t, []int{0, 0, 0}, hvEntries(t, tb))
			require.Equal(t, 2, st.LinePointersFreed)
			hvWrite(t, db, func(tx *Tx) error { return tx.Insert(tb, Row{Int(2), Int(10), Int(100), Int(0), Null}) })
			hvCheck(t, db, tb)
			r := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
			_, found := hvGet(t, r, tb, 1)
			require.False(t, found)
			row, found := hvGet(t, r, tb, 2)
			require.True(t, found)
			require.EqualValues(t, 10, row[1].I)
			require.NoError(t, r.Commit())
		})
	}
}

// TestHeapVersionsRollbackNonHOT: a rolled-back non-HOT update leaves a
// dead version whose entries the undo log took back; readers and Check
// see the row as before.
func TestHeapVersionsRollbackNonHOT(t *testing.T) {
	for _, org := range hvOrgs {
		t.Run(org.String(), func(t *testing.T) {
			db := hvOpen(t)
			tb, err := db.CreateTable(hv2Table(org))
			require.NoError(t, err)
			hvWrite(t, db, func(tx *Tx) error { return tx.Insert(tb, Row{Int(1), Int(10), Int(100), Int(0), Null}) })
			tx := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
			require.NoError(t, tx.Update(tb, []Value{Int(1)}, []Set{{Column: "v", Value: Int(11)}, {Column: "u", Value: Int(101)}}))
			require.Equal(t, []int{2, 2, 2}, hvEntries(t, tb))
			require.NoError(t, tx.Rollback())
			require.Equal(t, []int{1, 1, 1}, hvEntries(t, tb))
			hvCheck(t, db, tb)
			st, err := db.Vacuum(nil, tb)
			require.NoError(t, err)
			require.Equal(t, 1, st.DeadItems, "the aborted version's root")
			require.Equal(t, 0, st.IndexEntriesRemoved, "the undo log removed its entries")
			require.Equal(t, 1, st.LinePointersFreed)
			hvCheck(t, db, tb)
		})
	}
}

// TestHeapVersionsIndexOnlyPerVersion: an index-only scan trusts an entry
// only on an all-visible page; otherwise it visits the heap and skips an
// entry whose version the scan does not see (the old entry a non-HOT
// update left). Exact counts (heap-rowptr, whose entries carry pointers).
func TestHeapVersionsIndexOnlyPerVersion(t *testing.T) {
	db := hvOpen(t)
	tb, err := db.CreateTable(hv2Table(HeapRowPointer))
	require.NoError(t, err)
	hvWrite(t, db, func(tx *Tx) error { return tx.Insert(tb, Row{Int(1), Int(10), Int(100), Int(0), Null}) })
	hvWrite(t, db, func(tx *Tx) error { return tx.Update(tb, []Value{Int(1)}, []Set{{Column: "w", Value: Int(7)}}) })
	hvWrite(t, db, func(tx *Tx) error { return tx.Update(tb, []Value{Int(1)}, []Set{{Column: "v", Value: Int(11)}}) })
	scan := func() (Meter, []int64) {
		var m Meter
		tx := db.BeginTx(&m, TxOptions{Isolation: RepeatableRead})
		c, err := tx.Scan(tb, ScanOptions{Index: "by_u", Columns: []string{"u"}})
		require.NoError(t, err)
		require.True(t, c.Path().IndexOnly)
		var got []int64
		for c.Next() {
			got = append(got, c.Row()[2].I)
		}
		require.NoError(t, c.Close())
		require.NoError(t, tx.Commit())
		return m, got
	}
	m, got := scan()
	require.Equal(t, []int64{100}, got, "the old entry is skipped")
	require.EqualValues(t, 2, m.IndexOnlyVMChecks)
	require.EqualValues(t, 2, m.IndexOnlyHeapFetches)
	_, err = db.Vacuum(nil, tb)
	require.NoError(t, err)
	m, got = scan()
	require.Equal(t, []int64{100}, got)
	require.EqualValues(t, 1, m.IndexOnlyVMChecks)
	require.EqualValues(t, 0, m.IndexOnlyHeapFetches, "one entry left, on an all-visible page")
}

// TestHeapVersionsVacuumCrash: vacuum's index pass and second heap pass
// are logged: after a crash the removed entries stay removed and the
// freed line pointers stay unused; Check passes and the row reads back.
func TestHeapVersionsVacuumCrash(t *testing.T) {
	fs := vfs.NewCrashableMem()
	opts := &Options{FS: fs, Dir: "db", HeapVersions: HeapVersionsOn, Vacuum: VacuumManual, Options: cache.Options{PoolSize: 4 << 20}}
	db, err := Open(opts)
	require.NoError(t, err)
	tb, err := db.CreateTable(hv2Table(HeapRowPointer))
	require.NoError(t, err)
	hvWrite(t, db, func(tx *Tx) error { return tx.Insert(tb, Row{Int(1), Int(10), Int(100), Int(0), Null}) })
	for v := int64(11); v <= 13; v++ {
		hvWrite(t, db, func(tx *Tx) error { return tx.Update(tb, []Value{Int(1)}, []Set{{Column: "v", Value: Int(v)}}) })
	}
	require.Equal(t, []int{4, 4, 4}, hvEntries(t, tb))
	st, err := db.Vacuum(nil, tb)
	require.NoError(t, err)
	require.Equal(t, 9, st.IndexEntriesRemoved)
	require.Equal(t, 3, st.LinePointersFreed)
	no, before, _ := hvPage(t, tb)
	require.Equal(t, []int{1, 1, 1}, hvEntries(t, tb))
	require.NoError(t, db.log.SyncTo(nil, db.log.End()))
	db, tb = crashReopen(t, fs, opts, db, tb.Name())
	require.Equal(t, []int{1, 1, 1}, hvEntries(t, tb))
	after, _, err := tb.heap.PageVersions(nil, no)
	require.NoError(t, err)
	require.Equal(t, before, after)
	require.Zero(t, lpStates(after)["dead"])
	hvCheck(t, db, tb)
	r := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
	row, found := hvGet(t, r, tb, 1)
	require.True(t, found)
	require.EqualValues(t, 13, row[1].I)
	require.NoError(t, r.Commit())
}

var _ = heap.RowPtrSize

// TestHeapVersionsVacuumRace: readers, Check and writers run beside the
// background vacuum (VacuumBackground) and the prune on access. Each HOT
// chain is read under one latch of its page, so no prune changes it under
// a reader; vacuum frees a line pointer only after its index pass, and
// Check holds the table's vacuum off (an entry read before the index pass
// would name a freed pointer). Every snapshot read sees every row exactly
// once with its values consistent, every Check passes, and the vacuum
// met no error. Run it with -race.
func TestHeapVersionsVacuumRace(t *testing.T) {
	for _, org := range hvOrgs {
		t.Run(org.String(), func(t *testing.T) {
			db, err := Open(&Options{HeapVersions: HeapVersionsOn, Vacuum: VacuumBackground, Options: cache.Options{PoolSize: 8 << 20}})
			require.NoError(t, err)
			defer func() { require.NoError(t, db.Close()) }()
			tb, err := db.CreateTable(hv2Table(org))
			require.NoError(t, err)
			const rows, writers, txs = 16, 2, 250
			hvWrite(t, db, func(tx *Tx) error {
				for id := int64(0); id < rows; id++ {
					if err := tx.Insert(tb, Row{Int(id), Int(id), Int(id % 3), Int(0), Null}); err != nil {
						return err
					}
				}
				return nil
			})
			errs := make(chan error, writers+2)
			done := make(chan struct{})
			var wgW, wgR sync.WaitGroup
			for g := range writers {
				wgW.Add(1)
				go func() {
					defer wgW.Done()
					rng := rand.New(rand.NewPCG(uint64(g), 7))
					// At least txs transactions, and on until a background
					// round has removed index entries: whether the rounds that
					// ran during the first txs met a horizon that let them
					// remove any depends on how the goroutines were scheduled,
					// and the test must not.
					for i := 0; i < txs || db.VacuumMeter().VacuumIndexEntriesRemoved == 0; i++ {
						if i == 200*txs {
							errs <- fmt.Errorf("writer %d: no background vacuum round removed an index entry in %d transactions", g, i)
							return
						}
						id := rng.Int64N(rows)
						tx := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
						var err error
						switch rng.IntN(4) {
						case 0: // HOT
							err = tx.Update(tb, []Value{Int(id)}, []Set{{Column: "w", Value: Int(int64(i))}})
						case 1: // an indexed column: not HOT
							err = tx.Update(tb, []Value{Int(id)}, []Set{{Column: "u", Value: Int(rng.Int64N(5))}})
						case 2: // a long row: soon not on the page
							err = tx.Update(tb, []Value{Int(id)}, []Set{{Column: "pad", Value: Bytes(make([]byte, rng.IntN(1500)))}})
						default: // deleted and inserted again
							var row Row
							var found bool
							if row, found, err = tx.GetForUpdate(tb, []Value{Int(id)}, nil); err == nil && found {
								row = append(Row(nil), row...)
								row[4].B = append([]byte(nil), row[4].B...) // row shares tx's buffer
								if err = tx.Delete(tb, []Value{Int(id)}); err == nil {
									err = tx.Insert(tb, row)
								}
							}
						}
						if err == nil {
							err = tx.Commit()
						} else if !Retryable(err) {
							errs <- err
							_ = tx.Rollback()
							return
						}
					}
				}()
			}
			reader := func(f func() error) {
				defer wgR.Done()
				for {
					select {
					case <-done:
						return
					default:
					}
					if err := f(); err != nil {
						errs <- err
						return
					}
				}
			}
			wgR.Add(1)
			scan := func() error {
				tx := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
				defer func() { _ = tx.Commit() }()
				for _, ix := range []string{"", "by_v", "by_u"} {
					c, err := tx.Scan(tb, ScanOptions{Index: ix})
					if err != nil {
						return err
					}
					seen := map[int64]bool{}
					for c.Next() {
						id := c.Row()[0].I
						if seen[id] || c.Row()[1].I != id {
							_ = c.Close()
							return fmt.Errorf("scan of %q: row %d twice or with v %d", ix, id, c.Row()[1].I)
						}
						seen[id] = true
					}
					if err := c.Close(); err != nil {
						return err
					}
					if len(seen) != rows {
						return fmt.Errorf("scan of %q: %d rows, want %d", ix, len(seen), rows)
					}
				}
				return nil
			}
			go reader(scan)
			// The writers finish once a round of the background vacuum
			// has removed index entries; the readers stop after them.
			wgW.Wait()
			close(done)
			wgR.Wait()
			for len(errs) > 0 {
				require.NoError(t, <-errs)
			}
			require.NoError(t, db.VacuumErr())
			vm := db.VacuumMeter()
			require.Positive(t, vm.VacuumRuns)
			require.Positive(t, vm.VacuumIndexEntriesRemoved)

			// Check beside vacuum: non-HOT updates made while a snapshot
			// holds every version, then the snapshot gone, Check and
			// vacuum at once. No writer nor reader runs: the heap's own
			// check (heap.Heap.Check) compares each page with its FSM
			// byte and visibility-map bit, which a write or a prune on
			// access sets after releasing the page's latch.
			hold := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			hvGet(t, hold, tb, 0)
			for id := int64(0); id < rows; id++ {
				hvWrite(t, db, func(tx *Tx) error {
					return tx.Update(tb, []Value{Int(id)}, []Set{{Column: "u", Value: Int(10 + id)}})
				})
			}
			require.NoError(t, hold.Commit())
			done = make(chan struct{})
			wgR.Add(1)
			go reader(func() error {
				tx := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
				defer func() { _ = tx.Commit() }()
				return tb.Check(tx)
			})
			for range 3 {
				_, err := db.Vacuum(nil, tb)
				require.NoError(t, err)
			}
			close(done)
			wgR.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			_, err = db.Vacuum(nil, tb)
			require.NoError(t, err)
			n := hvEntries(t, tb)
			require.Equal(t, rows, n[0], "one primary entry per row once vacuumed")
			if org == HeapRowPointer {
				require.Equal(t, []int{rows, rows, rows}, n)
			}
			hvCheck(t, db, tb)
		})
	}
}

// TestHeapVersionsUniqueWait: a unique check that meets a version being
// written by a transaction in progress waits for it, as PostgreSQL's
// _bt_check_unique: an insert of the same value is a duplicate if that
// transaction commits and not if it rolls back; a delete of the value's
// row, the reverse.
func TestHeapVersionsUniqueWait(t *testing.T) {
	for _, org := range hvOrgs {
		for _, c := range []struct {
			name          string
			deleteFirst   bool // the writer deletes the value's row, else inserts it
			commit        bool
			wantDuplicate bool
		}{
			{"insert-commit", false, true, true},
			{"insert-rollback", false, false, false},
			{"delete-commit", true, true, false},
			{"delete-rollback", true, false, true},
		} {
			t.Run(org.String()+"/"+c.name, func(t *testing.T) {
				parked := make(chan *lock.Wait)
				db, err := Open(&Options{HeapVersions: HeapVersionsOn, Vacuum: VacuumManual, Runtime: signalParker{parked: parked},
					Options: cache.Options{PoolSize: 8 << 20}})
				require.NoError(t, err)
				defer func() { require.NoError(t, db.Close()) }()
				tb, err := db.CreateTable(hv2Table(org))
				require.NoError(t, err)
				if c.deleteFirst {
					hvWrite(t, db, func(tx *Tx) error { return tx.Insert(tb, Row{Int(1), Int(5), Int(0), Int(0), Null}) })
				}
				w := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
				if c.deleteFirst {
					require.NoError(t, w.Delete(tb, []Value{Int(1)}))
				} else {
					require.NoError(t, w.Insert(tb, Row{Int(1), Int(5), Int(0), Int(0), Null}))
				}
				var m Meter
				r := db.BeginTx(&m, TxOptions{Isolation: ReadCommitted})
				done := make(chan error)
				go func() { done <- r.Insert(tb, Row{Int(2), Int(5), Int(0), Int(0), Null}) }()
				select {
				case wait := <-parked:
					require.Equal(t, r.id, wait.Tx)
				case err := <-done:
					t.Fatalf("the unique check did not wait for the writer: %v", err)
				}
				if c.commit {
					require.NoError(t, w.Commit())
				} else {
					require.NoError(t, w.Rollback())
				}
				err = <-done
				require.EqualValues(t, 1, m.LockWaits)
				if c.wantDuplicate {
					require.ErrorIs(t, err, ErrDuplicateKey)
					require.NoError(t, r.Rollback())
				} else {
					require.NoError(t, err)
					require.NoError(t, r.Commit())
				}
				hvCheck(t, db, tb)
			})
		}
	}
}

// TestHeapVersionsCheckInvariants: Check finds a primary or row-pointer
// entry naming an unused line pointer, a primary entry naming another
// row's version, two live versions of one primary key, a secondary entry
// its chain does not give back, and a live row's missing entry.
func TestHeapVersionsCheckInvariants(t *testing.T) {
	for _, org := range hvOrgs {
		t.Run(org.String(), func(t *testing.T) {
			db := hvOpen(t)
			tb, err := db.CreateTable(hv2Table(org))
			require.NoError(t, err)
			hvWrite(t, db, func(tx *Tx) error { return tx.Insert(tb, Row{Int(1), Int(10), Int(100), Int(0), Null}) })
			hvWrite(t, db, func(tx *Tx) error { return tx.Insert(tb, Row{Int(2), Int(20), Int(200), Int(0), Null}) })
			hvCheck(t, db, tb)
			check := func() error {
				tx := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
				defer func() { require.NoError(t, tx.Commit()) }()
				return tb.Check(tx)
			}
			tx := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
			row, _ := hvGet(t, tx, tb, 1)
			pk := appendKey(nil, tb.info.def.Columns, tb.info.pk, row)
			_, root, _, _, found, err := tx.versionedFind(tb, pk, tx.latestSnap(), true)
			require.NoError(t, err)
			require.True(t, found)
			require.NoError(t, tx.Commit())
			unused := heap.RowPtr{Page: root.Page, Slot: 300} // past the page's slots
			other := heap.RowPtr{Page: root.Page, Slot: root.Slot + 1}
			_, img, err := tb.heap.ReadVersion(nil, other, nil)
			require.NoError(t, err)
			r2, err := decodeRow(img, tb.info.def.Columns, nil)
			require.NoError(t, err)
			require.EqualValues(t, 2, r2[0].I, "row 2's version is next to row 1's")
			// A second live version of row 1, written by row 1's own
			// (committed) inserter.
			_, vs, err := tb.heap.HotChain(nil, root)
			require.NoError(t, err)
			require.Len(t, vs, 1)
			twin, err := tb.heap.InsertVersion(nil, vs[0].Header.Xmin, vs[0].Row)
			require.NoError(t, err)

			for _, c := range []struct {
				name string
				key  []byte
			}{
				{"primary entry naming an unused pointer", primVersionKey(nil, pk, unused)},
				{"primary entry naming another row's chain", primVersionKey(nil, pk, other)},
				{"two live versions of one primary key", primVersionKey(nil, pk, twin)},
			} {
				require.NoError(t, tb.ixs[0].tree.Insert(nil, c.key, nil), c.name)
				require.ErrorIs(t, check(), ErrInconsistent, c.name)
				require.NoError(t, tb.ixs[0].tree.Delete(nil, c.key))
				require.NoError(t, check())
			}
			byU := tb.ixs[2]
			if byU.carry == carryPtr {
				// A by_u entry naming row 1's chain with a value no
				// version of it has.
				r2 := append(Row(nil), row...)
				r2[2] = Int(999)
				key := tb.entryKey(nil, byU, r2, pk, root)
				require.NoError(t, byU.tree.Insert(nil, key, nil))
				require.ErrorIs(t, check(), ErrInconsistent, "an entry its chain does not give back")
				require.NoError(t, byU.tree.Delete(nil, key))
				key = tb.entryKey(nil, byU, row, pk, unused)
				require.NoError(t, byU.tree.Insert(nil, key, nil))
				require.ErrorIs(t, check(), ErrInconsistent, "an entry naming an unused pointer")
				require.NoError(t, byU.tree.Delete(nil, key))
			} else {
				// A live row's entry taken away (an entry that carries
				// the primary key names no line pointer).
				key := tb.entryKey(nil, byU, row, pk, root)
				require.NoError(t, byU.tree.Delete(nil, key))
				require.ErrorIs(t, check(), ErrInconsistent, "a live row's missing entry")
				require.NoError(t, byU.tree.Insert(nil, key, nil))
			}
			hvCheck(t, db, tb)
		})
	}
}

// TestHeapVersionsUniqueRecheck: two transactions insert one unique value
// under different primary keys, the second entirely while the first is
// between its unique check and its writes, so neither check saw the
// other. The first's check after its writes meets the second's entry,
// waits for it, and once it commits fails with ErrDuplicateKey (and
// ErrSerialization: the first is rolled back). One row has the value.
func TestHeapVersionsUniqueRecheck(t *testing.T) {
	for _, org := range hvOrgs {
		t.Run(org.String(), func(t *testing.T) {
			parked := make(chan *lock.Wait)
			db, err := Open(&Options{HeapVersions: HeapVersionsOn, Vacuum: VacuumManual, Runtime: signalParker{parked: parked},
				Options: cache.Options{PoolSize: 8 << 20}})
			require.NoError(t, err)
			defer func() { require.NoError(t, db.Close()) }()
			tb, err := db.CreateTable(hv2Table(org))
			require.NoError(t, err)
			checked, resume := make(chan struct{}), make(chan struct{})
			first := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
			testHookUniqueChecked = func(tx *Tx) {
				if tx == first {
					checked <- struct{}{}
					<-resume
				}
			}
			defer func() { testHookUniqueChecked = nil }()
			done := make(chan error)
			go func() { done <- first.Insert(tb, Row{Int(1), Int(5), Int(0), Int(0), Null}) }()
			<-checked
			second := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
			require.NoError(t, second.Insert(tb, Row{Int(2), Int(5), Int(0), Int(0), Null}))
			close(resume)
			select {
			case wait := <-parked:
				require.Equal(t, first.id, wait.Tx)
			case err := <-done:
				t.Fatalf("the recheck did not wait for the second insert: %v", err)
			}
			require.NoError(t, second.Commit())
			err = <-done
			require.ErrorIs(t, err, ErrDuplicateKey)
			require.ErrorIs(t, err, ErrSerialization)
			require.ErrorIs(t, first.Commit(), ErrTxDone, "rolled back")
			hvCheck(t, db, tb)
			r := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
			_, found := hvGet(t, r, tb, 1)
			require.False(t, found)
			_, found = hvGet(t, r, tb, 2)
			require.True(t, found)
			require.NoError(t, r.Commit())
		})
	}
}

// TestHeapVersionsVacuumKeyEntrySkipped: in heap-pk, vacuum removes a
// secondary entry of a row's old values only under the row's lock, taken
// without waiting: while a transaction holds the row, the entry stays.
func TestHeapVersionsVacuumKeyEntrySkipped(t *testing.T) {
	db := hvOpen(t)
	tb, err := db.CreateTable(hv2Table(HeapPrimaryKey))
	require.NoError(t, err)
	hvWrite(t, db, func(tx *Tx) error { return tx.Insert(tb, Row{Int(1), Int(10), Int(100), Int(0), Null}) })
	hvWrite(t, db, func(tx *Tx) error { return tx.Update(tb, []Value{Int(1)}, []Set{{Column: "v", Value: Int(11)}}) })
	require.Equal(t, []int{2, 2, 1}, hvEntries(t, tb))
	holder := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
	_, found, err := holder.GetForUpdate(tb, []Value{Int(1)}, nil)
	require.NoError(t, err)
	require.True(t, found)
	st, err := db.Vacuum(nil, tb)
	require.NoError(t, err)
	require.Equal(t, 1, st.IndexEntriesRemoved, "the primary entry only")
	require.Equal(t, []int{1, 2, 1}, hvEntries(t, tb))
	require.NoError(t, holder.Commit())
	hvCheck(t, db, tb)
	r := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
	c, err := r.Scan(tb, ScanOptions{Index: "by_v"})
	require.NoError(t, err)
	n := 0
	for c.Next() {
		require.EqualValues(t, 11, c.Row()[1].I)
		n++
	}
	require.NoError(t, c.Close())
	require.Equal(t, 1, n, "the old value's entry is skipped")
	require.NoError(t, r.Commit())
}
