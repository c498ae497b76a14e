package engine

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/btree"
	"github.com/enginelab/enginelab/cache"
)

// hvEntriesAll counts the entries of each index of tb (primary first),
// killed ones included.
func hvEntriesAll(t *testing.T, tb *TableHandle) []int {
	t.Helper()
	var n []int
	for _, ix := range tb.ixs {
		it := ix.tree.NewIter(nil, &btree.IterOptions{Killed: true})
		k := 0
		for ok := it.First(); ok; ok = it.Next() {
			k++
		}
		require.NoError(t, it.Close())
		n = append(n, k)
	}
	return n
}

// killScan scans index (the primary when "") of tb index-only for column
// col in a transaction of its own (locking: FOR UPDATE, as Delivery's
// scan of new_order; else a plain snapshot read) and returns its meter
// and the rows it returned.
func killScan(t *testing.T, db *DB, tb *TableHandle, index, col string, locking bool) (Meter, int) {
	t.Helper()
	var m Meter
	tx := db.BeginTx(&m, TxOptions{Isolation: RepeatableRead})
	c, err := tx.Scan(tb, ScanOptions{Index: index, Columns: []string{col}, ForUpdate: locking})
	require.NoError(t, err)
	rows := 0
	for c.Next() {
		rows++
	}
	require.NoError(t, c.Err())
	require.NoError(t, c.Close())
	require.NoError(t, tx.Commit())
	return m, rows
}

// killSetup makes tb (hvTable) with rows 1..5 and deletes rows 1..3, each
// write committed.
func killSetup(t *testing.T, db *DB, org Org) *TableHandle {
	t.Helper()
	tb, err := db.CreateTable(hvTable(org))
	require.NoError(t, err)
	for i := int64(1); i <= 5; i++ {
		hvWrite(t, db, func(tx *Tx) error { return tx.Insert(tb, Row{Int(i), Int(10 * i), Int(0)}) })
	}
	for i := int64(1); i <= 3; i++ {
		hvWrite(t, db, func(tx *Tx) error { return tx.Delete(tb, []Value{Int(i)}) })
	}
	return tb
}

// TestHeapVersionsKillDeadEntries: rows deleted and committed with no
// snapshot left that sees them. The first index-only scan of the primary
// index visits the heap once per entry (5: two live rows, three dead),
// finds the three dead chains dead to every snapshot and kills their
// entries (IndexEntriesKilled 3); the second visits the heap for the live
// rows only (2), as does a point read of a dead key (none). A scan of the
// secondary kills its dead entries too when they carry row pointers; in
// heap-pk its entries carry the primary key and are never killed, but
// the heap visit they make through the primary index skips the killed
// primary entries. The entries stay until vacuum, which removes them as
// before (6 entries) and leaves nothing killed. Exact counts, for a
// locking scan (Delivery's) and a snapshot scan.
func TestHeapVersionsKillDeadEntries(t *testing.T) {
	for _, org := range hvOrgs {
		for _, locking := range []bool{true, false} {
			name := org.String() + "/snapshot"
			if locking {
				name = org.String() + "/locking"
			}
			t.Run(name, func(t *testing.T) {
				db := hvOpen(t)
				tb := killSetup(t, db, org)
				require.Equal(t, []int{5, 5}, hvEntries(t, tb))

				m, rows := killScan(t, db, tb, "", "id", locking)
				require.Equal(t, 2, rows)
				require.EqualValues(t, 5, m.IndexOnlyHeapFetches)
				require.EqualValues(t, 5, m.HeapFetches)
				require.EqualValues(t, 3, m.IndexEntriesKilled)
				require.Equal(t, []int{2, 5}, hvEntries(t, tb), "killed entries are skipped")
				require.Equal(t, []int{5, 5}, hvEntriesAll(t, tb), "and still there")

				m, rows = killScan(t, db, tb, "", "id", locking)
				require.Equal(t, 2, rows)
				require.EqualValues(t, 2, m.IndexOnlyHeapFetches, "the dead entries visit the heap no more")
				require.EqualValues(t, 2, m.HeapFetches)
				require.Zero(t, m.IndexEntriesKilled)

				var gm Meter
				r := db.BeginTx(&gm, TxOptions{Isolation: RepeatableRead})
				_, found := hvGet(t, r, tb, 2)
				require.False(t, found)
				require.NoError(t, r.Commit())
				require.Zero(t, gm.HeapFetches, "a point read skips the killed entry")

				// The secondary.
				m, rows = killScan(t, db, tb, "by_v", "v", locking)
				require.Equal(t, 2, rows)
				require.EqualValues(t, 5, m.IndexOnlyHeapFetches)
				if org == HeapRowPointer {
					require.EqualValues(t, 5, m.HeapFetches)
					require.EqualValues(t, 3, m.IndexEntriesKilled)
				} else {
					require.EqualValues(t, 2, m.HeapFetches, "the dead rows' primary entries are killed")
					require.Zero(t, m.IndexEntriesKilled, "entries that carry the primary key are not killed")
				}
				m, _ = killScan(t, db, tb, "by_v", "v", locking)
				if org == HeapRowPointer {
					require.EqualValues(t, 2, m.IndexOnlyHeapFetches)
					require.Equal(t, []int{2, 2}, hvEntries(t, tb))
				} else {
					require.EqualValues(t, 5, m.IndexOnlyHeapFetches)
					require.Equal(t, []int{2, 5}, hvEntries(t, tb))
				}
				require.EqualValues(t, 2, m.HeapFetches)
				require.Zero(t, m.IndexEntriesKilled)
				hvCheck(t, db, tb)

				st, err := db.Vacuum(nil, tb)
				require.NoError(t, err)
				require.Equal(t, 6, st.IndexEntriesRemoved)
				require.Equal(t, []int{2, 2}, hvEntriesAll(t, tb))
				require.Equal(t, []int{2, 2}, hvEntries(t, tb))
				hvCheck(t, db, tb)
			})
		}
	}
}

// TestHeapVersionsKillHeldBySnapshot: while a snapshot taken before the
// deletes still sees the deleted rows, no scan kills their entries (their
// versions are recently dead, not dead: HEAPTUPLE_RECENTLY_DEAD), and the
// old snapshot still finds the rows through them; once it ends, the next
// scan kills them.
func TestHeapVersionsKillHeldBySnapshot(t *testing.T) {
	for _, org := range hvOrgs {
		t.Run(org.String(), func(t *testing.T) {
			db := hvOpen(t)
			tb, err := db.CreateTable(hvTable(org))
			require.NoError(t, err)
			for i := int64(1); i <= 5; i++ {
				hvWrite(t, db, func(tx *Tx) error { return tx.Insert(tb, Row{Int(i), Int(10 * i), Int(0)}) })
			}
			old := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			_, found := hvGet(t, old, tb, 1)
			require.True(t, found)
			for i := int64(1); i <= 3; i++ {
				hvWrite(t, db, func(tx *Tx) error { return tx.Delete(tb, []Value{Int(i)}) })
			}
			for range 2 {
				m, rows := killScan(t, db, tb, "", "id", true)
				require.Equal(t, 2, rows)
				require.EqualValues(t, 5, m.IndexOnlyHeapFetches)
				require.Zero(t, m.IndexEntriesKilled, "the old snapshot sees the deleted rows")
			}
			c, err := old.Scan(tb, ScanOptions{Columns: []string{"id"}})
			require.NoError(t, err)
			rows := 0
			for c.Next() {
				rows++
			}
			require.NoError(t, c.Close())
			require.Equal(t, 5, rows, "the old snapshot still reads every row")
			require.NoError(t, old.Commit())

			m, rows := killScan(t, db, tb, "", "id", true)
			require.Equal(t, 2, rows)
			require.EqualValues(t, 5, m.IndexOnlyHeapFetches)
			require.EqualValues(t, 3, m.IndexEntriesKilled)
			m, _ = killScan(t, db, tb, "", "id", true)
			require.EqualValues(t, 2, m.IndexOnlyHeapFetches)
		})
	}
}

// TestHeapVersionsKillCrash: a kill is a logged page change. With its
// record durable (the log synced after the scan) the marks survive a
// crash: after recovery the scan visits the heap for the live rows only
// and kills nothing. With the log left as it is, the record may be lost
// with its leaf's change (nothing else depends on it): then the first
// scan after recovery visits every entry and kills the dead ones again.
// Either way every entry not killed costs one heap visit, the rows read
// are the same, and Check passes.
func TestHeapVersionsKillCrash(t *testing.T) {
	for _, synced := range []bool{true, false} {
		name := "unsynced"
		if synced {
			name = "synced"
		}
		t.Run(name, func(t *testing.T) {
			fs := vfs.NewCrashableMem()
			opts := &Options{FS: fs, Dir: "db", HeapVersions: HeapVersionsOn, Vacuum: VacuumManual, Options: cache.Options{PoolSize: 4 << 20}}
			db, err := Open(opts)
			require.NoError(t, err)
			tb := killSetup(t, db, HeapRowPointer)
			require.NoError(t, db.log.SyncTo(nil, db.log.End()))
			m, _ := killScan(t, db, tb, "", "id", true)
			require.EqualValues(t, 3, m.IndexEntriesKilled)
			if synced {
				require.NoError(t, db.log.SyncTo(nil, db.log.End()))
			}
			db, tb = crashReopen(t, fs, opts, db, tb.Name())
			require.Equal(t, []int{5, 5}, hvEntriesAll(t, tb))
			m, rows := killScan(t, db, tb, "", "id", true)
			require.Equal(t, 2, rows)
			if synced {
				require.Zero(t, m.IndexEntriesKilled, "the marks survived")
				require.EqualValues(t, 2, m.IndexOnlyHeapFetches)
			} else {
				t.Logf("entries killed again after recovery: %d", m.IndexEntriesKilled)
				require.Contains(t, []int64{0, 3}, m.IndexEntriesKilled)
				require.EqualValues(t, 2+m.IndexEntriesKilled, m.IndexOnlyHeapFetches)
			}
			m, _ = killScan(t, db, tb, "", "id", true)
			require.EqualValues(t, 2, m.IndexOnlyHeapFetches)
			hvCheck(t, db, tb)
		})
	}
}

// TestHeapVersionsKillRace: Delivery's pattern beside itself, New-Order's
// and the background vacuum: per district, an inserter adds rows with
// ascending ids and two deliverers each take the oldest row by a locking
// index-only scan of the primary index (LIMIT 1) and delete it, so that
// the scans pass, kill and skip the entries of rows deleted before them
// while vacuum removes entries and frees line pointers, and a snapshot
// reader scans every index meanwhile. Every row is delivered exactly
// once, none is lost, the snapshot scans see each row once, and Check
// passes at the end. Run it with -race.
func TestHeapVersionsKillRace(t *testing.T) {
	db, err := Open(&Options{HeapVersions: HeapVersionsOn, Vacuum: VacuumBackground, Options: cache.Options{PoolSize: 8 << 20}})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	tb, err := db.CreateTable(hv2Table(HeapRowPointer))
	require.NoError(t, err)
	const districts, perDistrict, span = 2, 150, 1_000_000
	var mu sync.Mutex
	delivered := map[int64]int{}
	var killed atomic.Int64
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for d := range districts {
		wg.Add(1)
		go func() { // New-Order
			defer wg.Done()
			for i := range int64(perDistrict) {
				id := int64(d)*span + i
				tx := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
				if err := tx.Insert(tb, Row{Int(id), Int(id), Int(0), Int(0), Null}); err != nil {
					errs <- err
					_ = tx.Rollback()
					return
				}
				if err := tx.Commit(); err != nil {
					errs <- err
					return
				}
			}
		}()
		for range 2 {
			wg.Add(1)
			go func() { // Delivery
				defer wg.Done()
				for {
					mu.Lock()
					n := 0
					for id := range delivered {
						if id/span == int64(d) {
							n++
						}
					}
					mu.Unlock()
					if n == perDistrict {
						return
					}
					var m Meter
					tx := db.BeginTx(&m, TxOptions{Isolation: ReadCommitted})
					c, err := tx.Scan(tb, ScanOptions{Columns: []string{"id"}, ForUpdate: true, Limit: 1,
						Lower: []Value{Int(int64(d) * span)}, Upper: []Value{Int(int64(d)*span + span - 1)}})
					if err != nil {
						errs <- err
						_ = tx.Rollback()
						return
					}
					var id int64 = -1
					if c.Next() {
						id = c.Row()[0].I
					}
					err = c.Close()
					if err == nil && id >= 0 {
						err = tx.Delete(tb, []Value{Int(id)})
					}
					if err == nil {
						err = tx.Commit()
					} else {
						_ = tx.Rollback()
					}
					if err != nil {
						if !Retryable(err) {
							errs <- err
							return
						}
						continue
					}
					killed.Add(m.IndexEntriesKilled)
					if id >= 0 {
						mu.Lock()
						delivered[id]++
						mu.Unlock()
					}
				}
			}()
		}
	}
	done := make(chan struct{})
	var wgR sync.WaitGroup
	wgR.Add(1)
	go func() { // a snapshot reader
		defer wgR.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			tx := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			for _, ix := range []string{"", "by_v", "by_u"} {
				c, err := tx.Scan(tb, ScanOptions{Index: ix, Columns: []string{"id"}})
				if err != nil {
					errs <- err
					_ = tx.Rollback()
					return
				}
				seen := map[int64]bool{}
				for c.Next() {
					if id := c.Row()[0].I; seen[id] {
						errs <- fmt.Errorf("scan of %q: row %d twice", ix, id)
					} else {
						seen[id] = true
					}
				}
				if err := c.Close(); err != nil {
					errs <- err
				}
			}
			_ = tx.Commit()
		}
	}()
	wg.Wait()
	close(done)
	wgR.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, delivered, districts*perDistrict)
	for id, n := range delivered {
		require.Equal(t, 1, n, "row %d delivered %d times", id, n)
	}
	t.Logf("entries killed by the deliveries: %d", killed.Load())
	tx := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
	n, _, err := tx.Count(tb, CountOptions{})
	require.NoError(t, err)
	require.Zero(t, n)
	require.NoError(t, tx.Commit())
	hvCheck(t, db, tb)
}

// TestHeapVersionsCheckKilledLive: Check reads killed entries too, and a
// killed entry whose chain has a version its snapshot sees (a kill no
// scan may make) is reported, in the primary index and in a secondary
// that carries row pointers.
func TestHeapVersionsCheckKilledLive(t *testing.T) {
	for _, index := range []int{0, 1} {
		t.Run(fmt.Sprintf("index-%d", index), func(t *testing.T) {
			db := hvOpen(t)
			tb, err := db.CreateTable(hvTable(HeapRowPointer))
			require.NoError(t, err)
			for i := int64(1); i <= 2; i++ {
				hvWrite(t, db, func(tx *Tx) error { return tx.Insert(tb, Row{Int(i), Int(10 * i), Int(0)}) })
			}
			hvCheck(t, db, tb)
			it := tb.ixs[index].tree.NewIter(nil, nil)
			require.True(t, it.First())
			set, err := it.Kill()
			require.NoError(t, err)
			require.True(t, set)
			require.NoError(t, it.Close())
			tx := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
			require.ErrorContains(t, tb.Check(tx), "killed entry names a live version")
			require.NoError(t, tx.Commit())
		})
	}
}
