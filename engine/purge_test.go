package engine

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
)

// marks counts the delete-marked records of tb's clustered tree and the
// delete-marked entries of its secondary index, and all entries of both.
func marks(t *testing.T, tb *TableHandle) (clust, sec, clustAll, secAll int) {
	t.Helper()
	for i, ix := range tb.ixs {
		it := ix.tree.NewIter(nil, nil)
		for ok := it.First(); ok; ok = it.Next() {
			if i == 0 {
				clustAll++
				if clustDeleted(it.Value()) {
					clust++
				}
			} else {
				secAll++
				if secDeleted(it.Value()) {
					sec++
				}
			}
		}
		require.NoError(t, it.Close())
	}
	return
}

func purgeAll(t *testing.T, db *DB) (int, Meter) {
	t.Helper()
	var m Meter
	n, err := db.PurgeStep(&m, 0)
	require.NoError(t, err)
	return n, m
}

// TestPurgeDelete: a transaction that deletes k rows leaves one log on
// the history list; purge keeps it while a view from before the delete is
// open (the view still reads the rows), then removes the k records and
// their k secondary entries, reading 2k undo records, and frees the log.
func TestPurgeDelete(t *testing.T) {
	const n, k = 10, 4
	db := mvccOpenManual(t)
	tb := mvccLoad(t, db, n)
	rr := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
	require.Equal(t, int64(n), mvccCount(t, rr, tb, ""))
	d := db.Begin(nil)
	for i := 1; i <= k; i++ {
		require.NoError(t, d.Delete(tb, []Value{Int(int64(2 * i))}))
	}
	require.NoError(t, d.Commit())
	require.Equal(t, int64(1), db.PurgeLag())

	got, m := purgeAll(t, db)
	require.Zero(t, got, "the view needs the log")
	require.Zero(t, m.PurgeUndoRecords)
	require.Equal(t, int64(n), mvccCount(t, rr, tb, "by_v"))
	require.NoError(t, rr.Commit())

	c, s, ca, sa := marks(t, tb)
	require.Equal(t, [4]int{k, k, n, n}, [4]int{c, s, ca, sa})
	got, m = purgeAll(t, db)
	require.Equal(t, 1, got)
	require.Equal(t, int64(1), m.UndoLogsPurged)
	require.Equal(t, int64(2*k), m.PurgeUndoRecords)
	require.Equal(t, int64(k), m.PurgeRecords)
	require.Equal(t, int64(k), m.PurgeSecondaryRemoved)
	require.Zero(t, m.PurgeSecondaryKept)
	require.Zero(t, m.PurgeVersionsRead)
	require.Zero(t, db.PurgeLag())
	c, s, ca, sa = marks(t, tb)
	require.Equal(t, [4]int{0, 0, n - k, n - k}, [4]int{c, s, ca, sa})
	mvccCheck(t, db, tb)
	st := db.Purge()
	require.Equal(t, PurgeStats{Purged: 1, Records: k, SecondaryRemoved: k}, st)
}

// TestPurgeUpdate: an update of an indexed column leaves the old entry
// delete-marked; purge removes it (one per row) and no clustered record.
func TestPurgeUpdate(t *testing.T) {
	const n, k = 10, 3
	db := mvccOpenManual(t)
	tb := mvccLoad(t, db, n)
	u := db.Begin(nil)
	for i := 1; i <= k; i++ {
		require.NoError(t, u.Update(tb, []Value{Int(int64(i))}, []Set{{Column: "v", Value: Int(int64(1000 + i))}}))
	}
	require.NoError(t, u.Commit())
	c, s, ca, sa := marks(t, tb)
	require.Equal(t, [4]int{0, k, n, n + k}, [4]int{c, s, ca, sa})
	got, m := purgeAll(t, db)
	require.Equal(t, 1, got)
	require.Equal(t, int64(3*k), m.PurgeUndoRecords, "the update, the mark, the insert")
	require.Zero(t, m.PurgeRecords)
	require.Equal(t, int64(k), m.PurgeSecondaryRemoved)
	c, s, ca, sa = marks(t, tb)
	require.Equal(t, [4]int{0, 0, n, n}, [4]int{c, s, ca, sa})
	mvccCheck(t, db, tb)
}

// TestPurgeKeepsNeededEntry: row 2's v goes 20 → 35 (T1), 35 → 20 (T2),
// 20 → 35 (T3), with a view opened between T2 and T3. Purge may then
// free T1's and T2's logs, but the entry (20, 2) that T1 marked (and T3
// marked again) is kept: the view reads T2's version, which has it (one
// version built to find out). Once the view closes, T3's log goes and
// the entry with it.
func TestPurgeKeepsNeededEntry(t *testing.T) {
	db := mvccOpenManual(t)
	tb := mvccLoad(t, db, 3)
	mvccSet(t, db, tb, 2, 35)
	mvccSet(t, db, tb, 2, 20)
	v := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
	_, _ = mvccGet(t, v, tb, 1)
	mvccSet(t, db, tb, 2, 35)

	got, m := purgeAll(t, db)
	require.Equal(t, 2, got, "T1 and T2")
	require.Equal(t, int64(1), m.PurgeSecondaryKept, "(20, 2): the view's version has it")
	require.Equal(t, int64(1), m.PurgeVersionsRead, "from T3's version back to T2's")
	require.Zero(t, m.PurgeSecondaryRemoved, "(35, 2) is T3's live entry")
	by20 := mvccScan(t, v, tb, ScanOptions{Index: "by_v", Lower: []Value{Int(20)}, Upper: []Value{Int(20)}})
	require.Equal(t, []int64{2}, by20, "the view reads row 2 through the kept entry")
	require.NoError(t, v.Commit())

	got, m = purgeAll(t, db)
	require.Equal(t, 1, got)
	require.Equal(t, int64(1), m.PurgeSecondaryRemoved)
	require.Zero(t, m.PurgeVersionsRead)
	_, s, _, sa := marks(t, tb)
	require.Zero(t, s)
	require.Equal(t, 3, sa)
	mvccCheck(t, db, tb)
}

// TestPurgeInsertOverDelete: a record deleted and then inserted again
// (updated in place over its delete-mark) is not the delete's to remove:
// purge leaves it; the deleted row's entry goes if the new row's values
// differ, and stays (live) if they are the same.
func TestPurgeInsertOverDelete(t *testing.T) {
	for _, same := range []bool{true, false} {
		db := mvccOpenManual(t)
		tb := mvccLoad(t, db, 3)
		mvccDelete(t, db, tb, 2)
		nv := int64(20)
		if !same {
			nv = 25
		}
		tx := db.Begin(nil)
		require.NoError(t, tx.Insert(tb, Row{Int(2), Int(nv)}))
		require.NoError(t, tx.Commit())
		got, m := purgeAll(t, db)
		require.Equal(t, 2, got)
		require.Zero(t, m.PurgeRecords, "the record was inserted again")
		want := int64(1)
		if same {
			want = 0
		}
		require.Equal(t, want, m.PurgeSecondaryRemoved, "same=%v", same)
		c, s, ca, sa := marks(t, tb)
		require.Equal(t, [4]int{0, 0, 3, 3}, [4]int{c, s, ca, sa})
		mvccCheck(t, db, tb)
		r := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
		got2, ok := mvccGet(t, r, tb, 2)
		require.True(t, ok)
		require.Equal(t, nv, got2)
		require.NoError(t, r.Commit())
	}
}

// TestPurgeAfterCommit: with PurgeAfterCommit, purge runs after each
// commit that put a log on the history list: no view open, the deleted
// record is gone when Commit returns.
func TestPurgeAfterCommit(t *testing.T) {
	db, err := Open(&Options{Options: cache.Options{PoolSize: 8 << 20}, Purge: PurgeAfterCommit})
	require.NoError(t, err)
	defer db.Close()
	tb := mvccLoad(t, db, 3)
	mvccDelete(t, db, tb, 2)
	require.Zero(t, db.PurgeLag())
	c, s, ca, sa := marks(t, tb)
	require.Equal(t, [4]int{0, 0, 2, 2}, [4]int{c, s, ca, sa})
	require.Equal(t, PurgeStats{Purged: 1, Records: 1, SecondaryRemoved: 1}, db.Purge())
}

// TestRollbackAfterPurge: a row deleted, then inserted again by a
// transaction that is still active when purge frees the delete's log
// (the record and the entry are the insert's then, not the delete's to
// remove), then rolled back: the rollback restores the delete-marked
// record and entry, and removes both, as no view can need them
// (row_undo_mod_remove_clust_low, row_undo_mod_del_mark_or_remove_sec).
// With a view from before the delete open, they stay.
func TestRollbackAfterPurge(t *testing.T) {
	for _, view := range []bool{false, true} {
		db := mvccOpenManual(t)
		tb := mvccLoad(t, db, 3)
		var v *Tx
		if view {
			v = db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			_, _ = mvccGet(t, v, tb, 1)
		}
		mvccDelete(t, db, tb, 2)
		ins := db.Begin(nil)
		require.NoError(t, ins.Insert(tb, Row{Int(2), Int(20)}))
		got, m := purgeAll(t, db)
		if view {
			require.Zero(t, got)
		} else {
			require.Equal(t, 1, got)
			require.Zero(t, m.PurgeRecords+m.PurgeSecondaryRemoved, "the insert's record and entry now")
		}
		require.NoError(t, ins.Rollback())
		c, s, ca, sa := marks(t, tb)
		if view {
			require.Equal(t, [4]int{1, 1, 3, 3}, [4]int{c, s, ca, sa})
			got, ok := mvccGet(t, v, tb, 2)
			require.True(t, ok)
			require.Equal(t, int64(20), got)
			require.NoError(t, v.Commit())
			n, m := purgeAll(t, db)
			require.Equal(t, 1, n)
			require.Equal(t, int64(1), m.PurgeRecords)
			require.Equal(t, int64(1), m.PurgeSecondaryRemoved)
			c, s, ca, sa = marks(t, tb)
		}
		require.Equal(t, [4]int{0, 0, 2, 2}, [4]int{c, s, ca, sa}, "view=%v", view)
		mvccCheck(t, db, tb)
	}
}

// TestHistoryFreesSlots: a commit that puts its log on the history list
// frees the log's undo slot (trx_purge_add_undo_to_history), so the
// history can outgrow the rollback segment's slots while a view holds
// purge back: 1100 committed updates with 4 KiB pages (1008 slots).
// Purge then frees them all, each first page cached in a free slot for
// the next transactions.
func TestHistoryFreesSlots(t *testing.T) {
	db, err := Open(&Options{PageSize: 4096, Options: cache.Options{PoolSize: 8 << 20}, Purge: PurgeManual})
	require.NoError(t, err)
	defer db.Close()
	require.Equal(t, 1008, db.undo.nslots)
	tb := mvccLoad(t, db, 3)
	v := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
	_, _ = mvccGet(t, v, tb, 1)
	const n = 1100
	for i := range n {
		mvccSet(t, db, tb, 2, int64(100+i))
	}
	require.Equal(t, int64(n), db.PurgeLag())
	got, _ := mvccGet(t, v, tb, 2)
	require.Equal(t, int64(20), got)
	require.NoError(t, v.Commit())
	purged, m := purgeAll(t, db)
	require.Equal(t, n, purged)
	require.Equal(t, int64(n), m.PurgeSecondaryRemoved)
	require.Zero(t, db.PurgeLag())
	require.Len(t, db.undo.cached, 1008, "every slot holds a cached log")
	mvccCheck(t, db, tb)
}

// TestPurgeBackground: a real-mode database purges on a goroutine of its
// own by default, at InnoDB's pace: a commit below the wake threshold
// does not wake it; its suspension's timeout does (shortened here), and
// it then finds the history list held back by a view until the view's
// transaction ends; its work goes to the database's purge meter. Close
// stops it.
func TestPurgeBackground(t *testing.T) {
	defer func(s, m time.Duration) { purgeSuspendTimeout, purgeMasterInterval = s, m }(purgeSuspendTimeout, purgeMasterInterval)
	purgeSuspendTimeout, purgeMasterInterval = time.Millisecond, time.Millisecond
	rounds := make(chan int64, 16)
	testHookPurgeRound = func(db *DB) {
		select {
		case rounds <- db.PurgeLag():
		default: // the test reads the lag after the rounds it waits for
		}
	}
	// Cleared in a cleanup registered before mvccOpen's, so after Close
	// has stopped the goroutine: with these timeouts it runs a round (and
	// reads the hook) every millisecond until then, and a deferred reset
	// raced with it whenever a round fell between the test's end and
	// Close.
	t.Cleanup(func() { testHookPurgeRound = nil })
	db := mvccOpen(t)
	require.Equal(t, PurgeBackground, db.Options().Purge)
	tb := mvccLoad(t, db, 3)
	// waitLag receives rounds until one leaves the history list lag long.
	waitLag := func(lag int64) {
		for <-rounds != lag {
		}
	}
	v := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
	_, _ = mvccGet(t, v, tb, 1)
	mvccDelete(t, db, tb, 2)
	waitLag(1)
	// Rounds keep coming (the timeouts) and purge nothing: the view
	// holds the log back.
	for range 3 {
		waitLag(1)
	}
	require.Zero(t, db.PurgeMeter().UndoLogsPurged)
	require.NoError(t, v.Commit())
	waitLag(0)
	c, s, ca, sa := marks(t, tb)
	require.Equal(t, [4]int{0, 0, 2, 2}, [4]int{c, s, ca, sa})
	pm := db.PurgeMeter()
	require.Equal(t, int64(1), pm.UndoLogsPurged)
	require.Equal(t, int64(1), pm.PurgeRecords)
	require.Equal(t, int64(1), pm.PurgeSecondaryRemoved)
	require.NoError(t, db.PurgeErr())
}

// TestPurgeBackgroundWake: with timeouts that never expire in a test, a
// suspended purge is woken by the commit that makes the history list
// longer than purgeWakeHistory (InnoDB's innodb_purge_threads x
// innodb_purge_batch_size), and only by it; it then purges in batches of
// purgeBatchSize until the list is empty.
func TestPurgeBackgroundWake(t *testing.T) {
	defer func(s, m time.Duration) { purgeSuspendTimeout, purgeMasterInterval = s, m }(purgeSuspendTimeout, purgeMasterInterval)
	purgeSuspendTimeout, purgeMasterInterval = time.Hour, time.Hour
	type round struct{ lag, purged int64 }
	rounds := make(chan round, 64)
	testHookPurgeRound = func(db *DB) { rounds <- round{db.PurgeLag(), db.Purge().Purged} }
	defer func() { testHookPurgeRound = nil }()
	db := mvccOpen(t)
	const n = purgeWakeHistory + 1
	tb := mvccLoad(t, db, n)
	// The goroutine's first batch, at its start, found nothing.
	require.Equal(t, round{0, 0}, <-rounds)
	// It suspends after the hook has run, and a commit wakes only a
	// suspended purge: were the goroutine descheduled in between while
	// all the deletes below ran, the last one would wake nothing and the
	// test would wait an hour for the first batch. So wait until it is
	// suspended (a wake sent then stays in its channel until it selects).
	for !db.purger.suspended.Load() {
		runtime.Gosched()
	}
	for id := int64(1); id < n; id++ {
		mvccDelete(t, db, tb, id)
	}
	require.Equal(t, int64(n-1), db.PurgeLag())
	require.Empty(t, rounds, "no commit at or below the threshold woke purge")
	mvccDelete(t, db, tb, n)
	require.Equal(t, round{n - purgeBatchSize, purgeBatchSize}, <-rounds, "the first batch")
	require.Equal(t, round{0, n}, <-rounds, "the second batch")
	require.Equal(t, round{0, n}, <-rounds, "the batch that found nothing, before the suspension")
	require.NoError(t, db.PurgeErr())
}

// TestPurgeViewMergesViews: two read views made with no transaction id
// handed out between them share their low limit, and the later one lacks
// the writers that committed in between. The purge view must keep what
// the earlier one cannot see: it merges every open view (MariaDB's
// clone_oldest_view), so it sees neither writer, and purge keeps both
// logs until the earlier view closes. Taking the one view with the
// smallest low limit would pick either at random (a map's order) and,
// half the time, free the undo the earlier view still reads: the
// simulator's stock-level once failed on exactly that.
func TestPurgeViewMergesViews(t *testing.T) {
	db, err := Open(&Options{Options: cache.Options{PoolSize: 8 << 20}, Purge: PurgeManual})
	require.NoError(t, err)
	defer db.Close()
	tb, err := db.CreateTable(mvccTable(Clustered))
	require.NoError(t, err)
	load := db.Begin(nil)
	require.NoError(t, load.Insert(tb, Row{Int(1), Int(10)}))
	require.NoError(t, load.Insert(tb, Row{Int(2), Int(20)}))
	require.NoError(t, load.Commit())

	a, b := db.Begin(nil), db.Begin(nil)
	require.NoError(t, a.Update(tb, []Value{Int(1)}, []Set{{Column: "v", Value: Int(11)}}))
	require.NoError(t, b.Update(tb, []Value{Int(2)}, []Set{{Column: "v", Value: Int(21)}}))
	early := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
	early.openView()
	require.NoError(t, a.Commit())
	require.NoError(t, b.Commit())
	// Several late views, so that a wrong choice among equal low limits
	// cannot pass by luck.
	var late []*Tx
	for range 8 {
		tx := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
		v := tx.openView()
		require.Equal(t, early.view.lowLimit, v.lowLimit)
		require.Empty(t, v.ids)
		late = append(late, tx)
	}
	pv := db.purgeView()
	require.Equal(t, early.view.lowLimit, pv.lowLimit)
	require.Equal(t, []uint64{a.trxID, b.trxID}, pv.ids)
	require.False(t, pv.changesVisible(a.trxID))

	n, _ := purgeAll(t, db)
	require.Zero(t, n, "purge keeps the logs the early view needs")
	row, found, err := early.Get(tb, []Value{Int(1)}, nil)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, int64(10), row[1].I, "the early view reads the version before a's update")
	require.NoError(t, early.Commit())
	for _, tx := range late {
		require.NoError(t, tx.Commit())
	}
	n, _ = purgeAll(t, db)
	require.Equal(t, 2, n)
}
