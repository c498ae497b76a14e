package engine

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestShareSnapshotClustered: a transaction begun with ShareSnapshot
// reads its source's snapshot on another goroutine, after the source has
// ended and after three commits the snapshot does not see (an update, a
// delete, an insert); its view is its own for purge, which keeps the
// undo it reads until it ends; and it is not a new read view.
func TestShareSnapshotClustered(t *testing.T) {
	db := mvccOpenManual(t)
	tb := mvccLoad(t, db, 10)
	var sm Meter
	src := db.BeginTx(&sm, TxOptions{Isolation: RepeatableRead})
	v, found := mvccGet(t, src, tb, 1)
	require.True(t, found)
	require.Equal(t, int64(10), v)

	mvccSet(t, db, tb, 1, 11)
	w := db.Begin(nil)
	require.NoError(t, w.Delete(tb, []Value{Int(2)}))
	require.NoError(t, w.Insert(tb, Row{Int(11), Int(110)}))
	require.NoError(t, w.Commit())

	var cm Meter
	c, err := src.ShareSnapshot(&cm)
	require.NoError(t, err)
	require.NoError(t, src.Commit())
	require.Equal(t, int64(1), sm.ReadViews)

	n, _ := purgeAll(t, db)
	require.Zero(t, n, "the shared snapshot needs both logs")

	type read struct {
		v1          int64
		has2, has11 bool
		count       int64
	}
	got := make(chan read)
	go func() {
		var r read
		r.v1, _ = mvccGet(t, c, tb, 1)
		_, r.has2 = mvccGet(t, c, tb, 2)
		_, r.has11 = mvccGet(t, c, tb, 11)
		r.count = mvccCount(t, c, tb, "by_v")
		got <- r
	}()
	require.Equal(t, read{v1: 10, has2: true, has11: false, count: 10}, <-got)
	require.Zero(t, cm.ReadViews, "a shared snapshot is not a new read view")
	require.Positive(t, cm.UndoVersionsRead)
	require.Zero(t, cm.LockRequests)
	require.NoError(t, c.Commit())

	n, _ = purgeAll(t, db)
	require.Equal(t, 2, n, "the snapshot's end frees the update's and the delete's logs")
	now := db.Begin(nil)
	v, _ = mvccGet(t, now, tb, 1)
	require.Equal(t, int64(11), v)
	require.Equal(t, int64(10), mvccCount(t, now, tb, ""))
	require.NoError(t, now.Commit())
}

// TestShareSnapshotHeap: on the heap organizations with versions, a
// shared snapshot holds vacuum's horizon as its own: vacuum run after its
// source ended removes no version it reads, and removes the old version
// once it ends.
func TestShareSnapshotHeap(t *testing.T) {
	for _, org := range hvOrgs {
		t.Run(org.String(), func(t *testing.T) {
			db := hvOpen(t)
			tb, err := db.CreateTable(hvTable(org))
			require.NoError(t, err)
			ins := db.Begin(nil)
			require.NoError(t, ins.Insert(tb, Row{Int(1), Int(10), Int(100)}))
			require.NoError(t, ins.Commit())

			src := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			c, err := src.ShareSnapshot(nil) // the view is opened for it
			require.NoError(t, err)
			require.NoError(t, src.Rollback())
			up := db.Begin(nil)
			require.NoError(t, up.Update(tb, []Value{Int(1)}, []Set{{Column: "w", Value: Int(101)}}))
			require.NoError(t, up.Commit())

			st, err := db.Vacuum(nil, tb)
			require.NoError(t, err)
			require.Zero(t, st.TuplesRemoved, "the shared snapshot still reads the old version")
			row, found := hvGet(t, c, tb, 1)
			require.True(t, found)
			require.Equal(t, int64(100), row[2].I)
			require.NoError(t, c.Commit())

			st, err = db.Vacuum(nil, tb)
			require.NoError(t, err)
			require.Equal(t, 1, st.TuplesRemoved)
		})
	}
}

// TestShareSnapshotRefused: only a RepeatableRead transaction that has
// not written has one snapshot to share.
func TestShareSnapshotRefused(t *testing.T) {
	db := mvccOpenManual(t)
	tb := mvccLoad(t, db, 2)
	for _, iso := range []Isolation{ReadCommitted, Serializable} {
		tx := db.BeginTx(nil, TxOptions{Isolation: iso})
		_, err := tx.ShareSnapshot(nil)
		require.ErrorIs(t, err, ErrNoSnapshot, "%s", iso)
		require.ErrorContains(t, err, iso.String())
		require.NoError(t, tx.Commit())
	}
	w := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
	require.NoError(t, w.Update(tb, []Value{Int(1)}, []Set{{Column: "v", Value: Int(1)}}))
	_, err := w.ShareSnapshot(nil)
	require.ErrorIs(t, err, ErrNoSnapshot)
	require.ErrorContains(t, err, "written")
	require.NoError(t, w.Commit())
	_, err = w.ShareSnapshot(nil)
	require.True(t, errors.Is(err, ErrTxDone), "%v", err)
	rw, views := db.ActiveTransactions()
	require.Zero(t, rw)
	require.Zero(t, views, "a refused share leaves no view open")
}

// TestShareSnapshotActive: the source's view was opened while a writer
// was active; the writer commits before the share. The shared snapshot,
// like its source, does not see that commit (the active ids are copied,
// not only the limits), and purge keeps the writer's undo for it.
func TestShareSnapshotActive(t *testing.T) {
	db := mvccOpenManual(t)
	tb := mvccLoad(t, db, 4)
	act := db.Begin(nil)
	require.NoError(t, act.Update(tb, []Value{Int(3)}, []Set{{Column: "v", Value: Int(33)}}))
	mvccSet(t, db, tb, 4, 44) // committed before the snapshot, its id past the active writer's (the view's up limit)
	src := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
	v, _ := mvccGet(t, src, tb, 3)
	require.Equal(t, int64(30), v)
	require.NoError(t, act.Commit())

	c, err := src.ShareSnapshot(nil)
	require.NoError(t, err)
	require.NoError(t, src.Commit())
	n, _ := purgeAll(t, db)
	require.Equal(t, 1, n, "the log committed before the snapshot goes; the shared snapshot needs the active writer's")
	v, _ = mvccGet(t, c, tb, 3)
	require.Equal(t, int64(30), v, "active when the snapshot was taken: not visible")
	v, _ = mvccGet(t, c, tb, 4)
	require.Equal(t, int64(44), v, "committed before: visible")
	require.NoError(t, c.Commit())
	n, _ = purgeAll(t, db)
	require.Equal(t, 1, n, "the writer's log, once the snapshot ends")
}
