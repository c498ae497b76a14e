package engine

import (
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/heap"
)

// hvPage returns the first heap page of tb's heap (its only one in these
// tests), its line pointers and free bytes.
func hvPage(t *testing.T, tb *TableHandle) (uint32, []heap.LinePointer, int) {
	t.Helper()
	for no := uint32(1); no < tb.heap.HighWater(); no++ {
		lps, free, err := tb.heap.PageVersions(nil, no)
		if errors.Is(err, heap.ErrRowNotFound) {
			continue
		}
		require.NoError(t, err)
		return no, lps, free
	}
	t.Fatal("no heap page")
	return 0, nil, 0
}

// lpStates counts line pointers by state.
func lpStates(lps []heap.LinePointer) map[string]int {
	n := map[string]int{}
	for _, lp := range lps {
		n[lp.State]++
	}
	return n
}

// hvUpdateW updates row 1's w in a transaction of its own.
func hvUpdateW(t *testing.T, db *DB, m *Meter, tb *TableHandle, w int64) {
	t.Helper()
	tx := db.BeginTx(m, TxOptions{Isolation: ReadCommitted})
	require.NoError(t, tx.Update(tb, []Value{Int(1)}, []Set{{Column: "w", Value: Int(w)}}))
	require.NoError(t, tx.Commit())
}

// hvFillHOT inserts row 1 and HOT-updates it (w = 1, 2, ...) until its
// page has less than a tenth of the page free, and returns the last w.
// Nothing is pruned meanwhile: hold, an open snapshot taken after the
// insert, keeps every version recently dead.
func hvFillHOT(t *testing.T, db *DB, tb *TableHandle) int64 {
	t.Helper()
	tx := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
	require.NoError(t, tx.Insert(tb, Row{Int(1), Int(10), Int(0)}))
	require.NoError(t, tx.Commit())
	hold := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
	row, found := hvGet(t, hold, tb, 1)
	require.True(t, found)
	require.EqualValues(t, 0, row[2].I)
	var m Meter
	w := int64(0)
	for {
		_, _, free := hvPage(t, tb)
		if free < db.pool.PageSize()/10 {
			break
		}
		w++
		hvUpdateW(t, db, &m, tb, w)
	}
	require.EqualValues(t, w, m.HeapHOTUpdates, "every update HOT")
	require.EqualValues(t, 0, m.HeapNonHOTUpdates)
	require.EqualValues(t, 0, m.HeapPrunes, "the open snapshot holds the horizon")
	row, _ = hvGet(t, hold, tb, 1)
	require.EqualValues(t, 0, row[2].I, "the first version, at the chain's head")
	require.NoError(t, hold.Commit())
	return w
}

// TestHeapVersionsPrune: a full page's HOT chain is pruned on access
// (heap_page_prune_opt) once nothing needs its old versions: the root
// becomes a redirect to the first version a snapshot may still see, the
// versions between become unused, and reads follow the redirect, an old
// snapshot to its version and a new one to the latest. Exact counts.
func TestHeapVersionsPrune(t *testing.T) {
	for _, org := range hvOrgs {
		t.Run(org.String(), func(t *testing.T) {
			db := hvOpen(t)
			tb, err := db.CreateTable(hvTable(org))
			require.NoError(t, err)
			n := hvFillHOT(t, db, tb)
			require.Greater(t, n, int64(10))
			no, lps, _ := hvPage(t, tb)
			require.Equal(t, map[string]int{"normal": int(n) + 1}, lpStates(lps), "nothing pruned yet")

			// The first reader once the snapshot is gone prunes:
			// versions 0 .. n-1 are dead, n is live.
			var m Meter
			mid := db.BeginTx(&m, TxOptions{Isolation: RepeatableRead})
			row, found := hvGet(t, mid, tb, 1)
			require.True(t, found)
			require.EqualValues(t, n, row[2].I)
			require.EqualValues(t, 1, m.HeapPrunes)
			require.EqualValues(t, n, m.HeapTuplesPruned, "the root's tuple and the n-1 versions after it")
			require.EqualValues(t, 1, m.HeapVersionsRead, "the redirect leads to version n")
			_, lps, _ = hvPage(t, tb)
			require.Equal(t, map[string]int{"redirect": 1, "unused": int(n) - 1, "normal": 1}, lpStates(lps))
			require.Equal(t, "redirect", lps[0].State)
			require.EqualValues(t, n, lps[0].To, "the root redirects to version n")
			require.Zero(t, tb.heap.PruneXid(no), "nothing on the page is deleted")

			// Version n+1 goes, HOT, into the lowest freed slot.
			m = Meter{}
			hvUpdateW(t, db, &m, tb, n+1)
			require.EqualValues(t, 1, m.HeapHOTUpdates)
			require.EqualValues(t, 0, m.HeapPrunes, "the page has room now")
			_, lps, _ = hvPage(t, tb)
			require.Equal(t, "normal", lps[1].State)
			require.Equal(t, lps[n].Header.Xmax, lps[1].Header.Xmin)

			// A new snapshot reads version n+1, the old one version n,
			// both through the redirect.
			m = Meter{}
			r := db.BeginTx(&m, TxOptions{Isolation: ReadCommitted})
			row, _ = hvGet(t, r, tb, 1)
			require.EqualValues(t, n+1, row[2].I)
			require.EqualValues(t, 2, m.HeapVersionsRead, "version n, then n+1")
			require.NoError(t, r.Commit())
			m = Meter{}
			mid.m = &m
			row, _ = hvGet(t, mid, tb, 1)
			require.EqualValues(t, n, row[2].I)
			require.EqualValues(t, 1, m.HeapVersionsRead)
			require.NoError(t, mid.Commit())

			// Updates go on as HOT on the pruned page, into the
			// freed slots.
			m = Meter{}
			hvUpdateW(t, db, &m, tb, n+2)
			require.EqualValues(t, 1, m.HeapHOTUpdates)
			r = db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
			row, _ = hvGet(t, r, tb, 1)
			require.EqualValues(t, n+2, row[2].I)
			require.NoError(t, r.Commit())
		})
	}
}

// TestHeapVersionsPruneCrash: a prune is logged with the page change, so
// a crash after it recovers the same page, and reads through the
// redirect see the latest version.
func TestHeapVersionsPruneCrash(t *testing.T) {
	fs := vfs.NewCrashableMem()
	opts := &Options{FS: fs, Dir: "db", HeapVersions: HeapVersionsOn, Vacuum: VacuumManual, Options: cache.Options{PoolSize: 4 << 20}}
	db, err := Open(opts)
	require.NoError(t, err)
	tb, err := db.CreateTable(hvTable(HeapRowPointer))
	require.NoError(t, err)
	n := hvFillHOT(t, db, tb)
	var m Meter
	r := db.BeginTx(&m, TxOptions{Isolation: ReadCommitted})
	row, _ := hvGet(t, r, tb, 1)
	require.EqualValues(t, n, row[2].I)
	require.NoError(t, r.Commit())
	require.EqualValues(t, 1, m.HeapPrunes)
	_, before, freeBefore := hvPage(t, tb)
	require.Equal(t, map[string]int{"redirect": 1, "unused": int(n) - 1, "normal": 1}, lpStates(before))
	require.NoError(t, db.log.SyncTo(nil, db.log.End()))
	db, tb = crashReopen(t, fs, opts, db, tb.Name())
	_, after, freeAfter := hvPage(t, tb)
	require.Equal(t, before, after, "the same line pointers and tuples")
	require.Equal(t, freeBefore, freeAfter)
	r = db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
	row, found := hvGet(t, r, tb, 1)
	require.True(t, found)
	require.EqualValues(t, n, row[2].I)
	require.NoError(t, r.Commit())
}

// TestHeapVersionsVacuum: a vacuum pass prunes what no snapshot needs
// (nothing while a snapshot holds the horizon), removes the index entries
// naming the dead line pointers pruning left and then frees the pointers,
// counts dead and live versions and sets the visibility map. Exact
// counts.
func TestHeapVersionsVacuum(t *testing.T) {
	for _, org := range hvOrgs {
		t.Run(org.String(), func(t *testing.T) {
			db := hvOpen(t)
			tb, err := db.CreateTable(hvTable(org))
			require.NoError(t, err)
			tx := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			require.NoError(t, tx.Insert(tb, Row{Int(1), Int(10), Int(0)}))
			require.NoError(t, tx.Commit())
			hold := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			hvGet(t, hold, tb, 1)
			for w := int64(1); w <= 5; w++ {
				hvUpdateW(t, db, nil, tb, w)
			}
			var m Meter
			st, err := db.Vacuum(&m, tb)
			require.NoError(t, err)
			require.Equal(t, VacuumStats{PagesScanned: 1, LiveTuples: 1}, st, "all recently dead: nothing pruned")
			require.NoError(t, hold.Commit())

			m = Meter{}
			st, err = db.Vacuum(&m, tb)
			require.NoError(t, err)
			require.Equal(t, VacuumStats{PagesScanned: 1, PagesAllVisible: 1, PagesPruned: 1, TuplesRemoved: 5, LiveTuples: 1}, st)
			require.EqualValues(t, 1, m.VacuumRuns)
			require.EqualValues(t, 1, m.VacuumPages)
			require.EqualValues(t, 1, m.VacuumPagesPruned)
			require.EqualValues(t, 5, m.VacuumTuplesRemoved)
			require.EqualValues(t, 0, m.VacuumDeadTuples)
			require.Contains(t, m.String(), "vacuum-pages-pruned=1")
			require.Contains(t, m.String(), "vacuum-tuples-removed=5")
			_, lps, _ := hvPage(t, tb)
			require.Equal(t, map[string]int{"redirect": 1, "unused": 4, "normal": 1}, lpStates(lps))

			// An update of an indexed column is not HOT: the new version
			// gets an entry in the primary index and in by_v (in
			// heap-rowptr, where by_v carries row pointers, it would get
			// one even if v had not changed). Vacuum prunes the old HOT
			// chain, dead to its end: the root becomes a dead line
			// pointer, the heap-only version's slot unused; the index
			// pass removes the entries naming the root (the primary's and
			// by_v's; in heap-pk, where by_v's entries carry the primary
			// key, the entry of the value no version has any more) and
			// the second heap pass sets the root unused; the page is
			// all-visible again.
			m = Meter{}
			tx = db.BeginTx(&m, TxOptions{Isolation: RepeatableRead})
			require.NoError(t, tx.Update(tb, []Value{Int(1)}, []Set{{Column: "v", Value: Int(11)}}))
			require.NoError(t, tx.Commit())
			require.EqualValues(t, 2, m.IndexEntriesWritten)
			require.EqualValues(t, 0, m.IndexEntriesDeleted)
			entries := func(ix *index) int {
				it := ix.tree.NewIter(nil, nil)
				defer it.Close()
				n := 0
				for ok := it.First(); ok; ok = it.Next() {
					n++
				}
				return n
			}
			require.Equal(t, 2, entries(tb.ixs[0]), "one primary entry per non-HOT version")
			require.Equal(t, 2, entries(tb.ixs[1]), "by_v's old and new entries")
			m = Meter{}
			st, err = db.Vacuum(&m, tb)
			require.NoError(t, err)
			removed := 2
			require.Equal(t, VacuumStats{PagesScanned: 1, PagesAllVisible: 1, PagesPruned: 1, TuplesRemoved: 1, LiveTuples: 1,
				DeadItems: 1, IndexEntriesRemoved: removed, LinePointersFreed: 1}, st)
			require.EqualValues(t, removed, m.VacuumIndexEntriesRemoved)
			require.EqualValues(t, 0, m.VacuumDeadTuples)
			require.Equal(t, 1, entries(tb.ixs[0]))
			require.Equal(t, 1, entries(tb.ixs[1]))
			_, lps, _ = hvPage(t, tb)
			require.Zero(t, lpStates(lps)["dead"])
			require.Equal(t, 1, lpStates(lps)["normal"])
			r := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
			row, found := hvGet(t, r, tb, 1)
			require.True(t, found)
			require.Equal(t, Row{Int(1), Int(11), Int(5)}, row)
			require.NoError(t, r.Commit())
		})
	}
}

// TestHeapVersionsAutovacuum: a table is due when its updates and
// deletes since the last vacuum reach 50 + 0.2 × reltuples
// (autovacuum_vacuum_threshold, autovacuum_vacuum_scale_factor);
// VacuumStep, the simulator's vacuum actor, vacuums only due tables.
func TestHeapVersionsAutovacuum(t *testing.T) {
	db := hvOpen(t)
	tb, err := db.CreateTable(hvTable(HeapRowPointer))
	require.NoError(t, err)
	tx := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
	for id := int64(1); id <= 10; id++ {
		require.NoError(t, tx.Insert(tb, Row{Int(id), Int(id), Int(0)}))
	}
	require.NoError(t, tx.Commit())
	update := func(n int) {
		for i := range n {
			hvUpdateW2(t, db, tb, int64(i%10)+1, int64(i))
		}
	}
	update(AutovacuumThreshold - 1)
	var m Meter
	n, err := db.VacuumStep(&m, 0)
	require.NoError(t, err)
	require.Zero(t, n, "49 dead versions: not due")
	update(1)
	n, err = db.VacuumStep(&m, 0)
	require.NoError(t, err)
	require.Equal(t, 1, n, "50: due, its one page vacuumed")
	require.EqualValues(t, 1, m.VacuumRuns)
	// reltuples is 10 now: due again at 50 + 2 = 52.
	update(51)
	n, err = db.VacuumStep(&m, 0)
	require.NoError(t, err)
	require.Zero(t, n)
	update(1)
	n, err = db.VacuumStep(nil, 0)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.EqualValues(t, 1, db.VacuumMeter().VacuumRuns, "a step given no meter charges the database's")
}

// hvUpdateW2 updates row id's w in a transaction of its own.
func hvUpdateW2(t *testing.T, db *DB, tb *TableHandle, id, w int64) {
	t.Helper()
	tx := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
	require.NoError(t, tx.Update(tb, []Value{Int(id)}, []Set{{Column: "w", Value: Int(w)}}))
	require.NoError(t, tx.Commit())
}

// TestHeapVersionsAutovacuumBackground: with VacuumBackground the update
// that makes a table due wakes the vacuum goroutine, which vacuums it on
// the database's vacuum meter; Close stops it.
func TestHeapVersionsAutovacuumBackground(t *testing.T) {
	rounds := make(chan struct{}, 16)
	testHookVacuumRound = func(*DB) { rounds <- struct{}{} }
	defer func() { testHookVacuumRound = nil }()
	db, err := Open(&Options{HeapVersions: HeapVersionsOn, Vacuum: VacuumBackground, Options: cache.Options{PoolSize: 8 << 20}})
	require.NoError(t, err)
	tb, err := db.CreateTable(hvTable(HeapPrimaryKey))
	require.NoError(t, err)
	tx := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
	require.NoError(t, tx.Insert(tb, Row{Int(1), Int(1), Int(0)}))
	require.NoError(t, tx.Commit())
	for i := range AutovacuumThreshold {
		hvUpdateW2(t, db, tb, 1, int64(i))
	}
	<-rounds
	require.NoError(t, db.VacuumErr())
	vm := db.VacuumMeter()
	require.EqualValues(t, 1, vm.VacuumRuns)
	require.EqualValues(t, 1, vm.VacuumPages)
	require.NoError(t, db.Close())
}

// TestHeapVersionsCheck: Check reads a versioned table through its
// chains: after inserts, HOT and indexed updates, a rolled-back update, a
// delete with the key inserted again, a delete that stays, a prune and a
// vacuum, the indexes agree with the rows; a missing secondary entry is
// ErrInconsistent.
func TestHeapVersionsCheck(t *testing.T) {
	for _, org := range hvOrgs {
		t.Run(org.String(), func(t *testing.T) {
			db := hvOpen(t)
			tb, err := db.CreateTable(hvTable(org))
			require.NoError(t, err)
			check := func() error {
				tx := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
				defer func() { require.NoError(t, tx.Commit()) }()
				return tb.Check(tx)
			}
			tx := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			for id := int64(1); id <= 5; id++ {
				require.NoError(t, tx.Insert(tb, Row{Int(id), Int(10 * id), Int(0)}))
			}
			require.NoError(t, tx.Commit())
			require.NoError(t, check())
			hvUpdateW2(t, db, tb, 1, 7)
			tx = db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			require.NoError(t, tx.Update(tb, []Value{Int(2)}, []Set{{Column: "v", Value: Int(21)}}))
			require.NoError(t, tx.Commit())
			tx = db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			require.NoError(t, tx.Update(tb, []Value{Int(3)}, []Set{{Column: "v", Value: Int(31)}}))
			require.NoError(t, tx.Rollback())
			tx = db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			require.NoError(t, tx.Delete(tb, []Value{Int(4)}))
			require.NoError(t, tx.Commit())
			tx = db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			require.NoError(t, tx.Insert(tb, Row{Int(4), Int(44), Int(1)}))
			require.NoError(t, tx.Delete(tb, []Value{Int(5)}))
			require.NoError(t, tx.Commit())
			require.NoError(t, check())
			_, err = db.Vacuum(nil, tb)
			require.NoError(t, err)
			require.NoError(t, check())

			// A live row's secondary entry taken away.
			var key []byte
			tx = db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
			row, _ := hvGet(t, tx, tb, 1)
			ix := tb.ixs[1]
			pk := appendKey(nil, tb.info.def.Columns, tb.info.pk, row)
			_, root, _, _, found, err := tx.versionedFind(tb, pk, tx.latestSnap(), true)
			require.NoError(t, err)
			require.True(t, found)
			key = tb.entryKey(key, ix, row, pk, root)
			require.NoError(t, tx.Commit())
			require.NoError(t, ix.tree.Delete(nil, key))
			require.ErrorIs(t, check(), ErrInconsistent)
		})
	}
}
