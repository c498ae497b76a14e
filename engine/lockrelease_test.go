package engine

import (
	"fmt"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
)

// gateRuntime holds the next log sync at its start until the test opens
// the gate, and tells the test when a commit waits for a sync: the state
// "committed, not yet durable" held still, without sleeps. The page
// cleaner runs nowhere (a Runtime other than RealRuntime), so no sync
// but the commits' happens.
type gateRuntime struct {
	steppedRuntime
	armed   chan struct{} // holds a token while the next sync is to be held
	syncing chan struct{} // gets a value when a held sync starts
	open    chan struct{} // closed to let a held sync go on (let)
	waits   chan struct{} // gets a value when a commit waits for a sync
	once    sync.Once
}

func newGateRuntime() *gateRuntime {
	return &gateRuntime{armed: make(chan struct{}, 1), syncing: make(chan struct{}), open: make(chan struct{}),
		waits: make(chan struct{}, 8)}
}

// hold makes the next sync wait at its start.
func (g *gateRuntime) hold() { g.armed <- struct{}{} }

// let lets the held sync go on (again: nothing).
func (g *gateRuntime) let() { g.once.Do(func() { close(g.open) }) }

func (g *gateRuntime) SyncStart() {
	select {
	case <-g.armed:
		g.syncing <- struct{}{}
		<-g.open
	default:
	}
}

func (g *gateRuntime) Wait(done <-chan struct{}) {
	g.waits <- struct{}{}
	<-done
}

// lockReleaseOpen opens a database in SyncCommit mode on a crashable
// filesystem with release r, a gate runtime and a lock timeout of a
// nanosecond (a request meets a held lock as a timeout at once), with
// table t holding row (1, 0).
func lockReleaseOpen(t *testing.T, r LockRelease, org Org) (*DB, *TableHandle, *gateRuntime, *vfs.MemFS, *Options) {
	t.Helper()
	fs := vfs.NewCrashableMem()
	g := newGateRuntime()
	opts := &Options{FS: fs, Dir: "db", Options: cache.Options{PoolSize: 4 << 20}, Commit: SyncCommit,
		EarlyLockRelease: r, LockTimeout: 1, Runtime: g}
	db, err := Open(opts)
	require.NoError(t, err)
	require.Equal(t, r, db.Options().EarlyLockRelease)
	tb, err := db.CreateTable(mvccTable(org))
	require.NoError(t, err)
	tx := db.Begin(nil)
	require.NoError(t, tx.Insert(tb, Row{Int(1), Int(0)}))
	require.NoError(t, tx.Commit())
	return db, tb, g, fs, opts
}

// recoveredV opens a crash image and returns row 1's v.
func recoveredV(t *testing.T, image vfs.FS, org Org) int64 {
	t.Helper()
	db, err := Open(&Options{FS: image, Dir: "db", Options: cache.Options{PoolSize: 4 << 20}})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	tb, err := db.Table(mvccTable(org).Name)
	require.NoError(t, err)
	tx := db.Begin(nil)
	defer func() { require.NoError(t, tx.Commit()) }()
	row, found, err := tx.Get(tb, []Value{Int(1)}, nil)
	require.NoError(t, err)
	require.True(t, found)
	return row[1].I
}

// TestDefaultLockRelease: the default follows the default organization.
func TestDefaultLockRelease(t *testing.T) {
	for org, want := range map[Org]LockRelease{OrgDefault: EarlyRelease, Clustered: EarlyRelease,
		HeapRowPointer: LateRelease, HeapPrimaryKey: LateRelease} {
		db, err := Open(&Options{DefaultOrg: org, Options: cache.Options{PoolSize: 4 << 20}})
		require.NoError(t, err)
		require.Equal(t, want, db.Options().EarlyLockRelease, "%s", org)
		require.NoError(t, db.Close())
	}
	_, err := Open(&Options{EarlyLockRelease: LateRelease + 1})
	require.ErrorIs(t, err, ErrInvalidOptions)
}

// TestEarlyLockRelease: with InnoDB's order, while a writer's commit
// sync is held at its start, its locks are gone and its commit visible;
// a read-only transaction that read it does not return from Commit
// before the writer's record is durable (a crash image taken while it
// waits has lost the writer: that is what it waits for), and a writer
// that read it commits after it, so no crash keeps one without the
// other.
func TestEarlyLockRelease(t *testing.T) {
	for _, org := range []Org{Clustered, HeapRowPointer} {
		t.Run(org.String(), func(t *testing.T) {
			db, tb, g, fs, _ := lockReleaseOpen(t, EarlyRelease, org)
			defer func() { g.let(); require.NoError(t, db.Close()) }()
			durable := db.log.Durable()
			// Nothing made visible since the last sync: a read-only
			// commit waits for nothing.
			m := &Meter{}
			r0 := db.Begin(m)
			_, _, err := r0.Get(tb, []Value{Int(1)}, nil)
			require.NoError(t, err)
			require.NoError(t, r0.Commit())
			require.Zero(t, m.DurableReadWaits)
			require.Zero(t, m.LogSyncs+m.LogSyncWaits)

			g.hold()
			w := db.Begin(nil)
			require.NoError(t, w.Update(tb, []Value{Int(1)}, []Set{{Column: "v", Value: Int(1)}}))
			wDone := make(chan error)
			go func() { wDone <- w.Commit() }()
			<-g.syncing // w's record is in the log, its sync held
			require.Equal(t, durable, db.log.Durable(), "w's commit is not durable")

			// Its lock is gone: a locking read is granted at once, and
			// sees v = 1; so does a consistent read of a clustered row.
			rm := &Meter{}
			r := db.BeginTx(rm, TxOptions{Isolation: Serializable})
			row, _, err := r.Get(tb, []Value{Int(1)}, nil)
			require.NoError(t, err)
			require.Equal(t, int64(1), row[1].I)
			require.Zero(t, rm.LockWaits)
			if org == Clustered {
				v := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
				row, _, err := v.Get(tb, []Value{Int(1)}, nil)
				require.NoError(t, err)
				require.Equal(t, int64(1), row[1].I, "the commit is visible to a new read view")
				_ = v.Rollback()
			}
			rDone := make(chan error)
			go func() { rDone <- r.Commit() }()
			<-g.waits // r waits for w's sync: it read w's commit
			lost := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})

			// A writer that read w's commit: its record follows w's.
			w2m := &Meter{}
			w2 := db.Begin(w2m)
			row, _, err = w2.GetForUpdate(tb, []Value{Int(1)}, nil)
			require.NoError(t, err)
			require.NoError(t, w2.Update(tb, []Value{Int(1)}, []Set{{Column: "v", Value: Int(row[1].I + 1)}}))
			w2Done := make(chan error)
			go func() { w2Done <- w2.Commit() }()
			<-g.waits // w2 waits for w's sync, then syncs its own

			g.let()
			require.NoError(t, <-wDone)
			require.NoError(t, <-rDone)
			require.NoError(t, <-w2Done)
			require.Equal(t, int64(1), rm.DurableReadWaits)
			require.Equal(t, int64(1), rm.LogSyncWaits, "r joined w's sync")
			require.Zero(t, rm.LogSyncs)
			require.Zero(t, w2m.DurableReadWaits, "a writer waits for its own record")

			require.Equal(t, int64(0), recoveredV(t, lost, org), "the image taken while r waited lost w: r must not return before")
			require.Equal(t, int64(2), recoveredV(t, fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0}), org),
				"once r and w2 returned, w and w2 are durable")
		})
	}
}

// TestLateLockRelease: with PostgreSQL's order, while a writer's commit
// sync is held, it keeps its locks and its commit is invisible; it is
// seen only once durable, and a read-only commit never waits.
func TestLateLockRelease(t *testing.T) {
	for _, org := range []Org{Clustered, HeapRowPointer} {
		t.Run(org.String(), func(t *testing.T) {
			db, tb, g, fs, _ := lockReleaseOpen(t, LateRelease, org)
			defer func() { g.let(); require.NoError(t, db.Close()) }()
			g.hold()
			w := db.Begin(nil)
			require.NoError(t, w.Update(tb, []Value{Int(1)}, []Set{{Column: "v", Value: Int(1)}}))
			wDone := make(chan error)
			go func() { wDone <- w.Commit() }()
			<-g.syncing

			// The lock is held: a locking read times out at once (a
			// nanosecond's timeout).
			r := db.BeginTx(nil, TxOptions{Isolation: Serializable})
			_, _, err := r.Get(tb, []Value{Int(1)}, nil)
			require.ErrorIs(t, err, ErrLockTimeout)
			if org == Clustered {
				m := &Meter{}
				v := db.BeginTx(m, TxOptions{Isolation: RepeatableRead})
				row, _, err := v.Get(tb, []Value{Int(1)}, nil)
				require.NoError(t, err)
				require.Equal(t, int64(0), row[1].I, "the commit is not visible before it is durable")
				require.NoError(t, v.Commit())
				require.Zero(t, m.DurableReadWaits)
				require.Zero(t, m.LogSyncs+m.LogSyncWaits, "a read-only commit does not wait")
			}
			require.Equal(t, int64(0), recoveredV(t, fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0}), org))

			g.let()
			require.NoError(t, <-wDone)
			r2 := db.BeginTx(nil, TxOptions{Isolation: Serializable})
			row, _, err := r2.Get(tb, []Value{Int(1)}, nil)
			require.NoError(t, err)
			require.Equal(t, int64(1), row[1].I)
			require.NoError(t, r2.Commit())
			require.Equal(t, int64(1), recoveredV(t, fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0}), org))
		})
	}
}

// TestLockReleaseNoSync: in NoSyncCommit mode a read-only commit never
// waits, in either order.
func TestLockReleaseNoSync(t *testing.T) {
	for _, r := range []LockRelease{EarlyRelease, LateRelease} {
		t.Run(fmt.Sprint(r), func(t *testing.T) {
			db, err := Open(&Options{Options: cache.Options{PoolSize: 4 << 20}, Commit: NoSyncCommit, EarlyLockRelease: r})
			require.NoError(t, err)
			defer func() { require.NoError(t, db.Close()) }()
			tb, err := db.CreateTable(mvccTable(Clustered))
			require.NoError(t, err)
			w := db.Begin(nil)
			require.NoError(t, w.Insert(tb, Row{Int(1), Int(0)}))
			require.NoError(t, w.Commit())
			m := &Meter{}
			rd := db.Begin(m)
			_, found, err := rd.Get(tb, []Value{Int(1)}, nil)
			require.NoError(t, err)
			require.True(t, found)
			require.NoError(t, rd.Commit())
			require.Zero(t, m.DurableReadWaits)
			require.Zero(t, m.LogSyncs+m.LogSyncWaits)
		})
	}
}
