package cache_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/stretchr/testify/require"
)

// commitNote commits an mtr that changes no page and carries note, and
// returns its LSN.
func commitNote(p *cache.Pool, m *cache.Meter, note string) uint64 {
	mt := p.BeginMtr(m)
	mt.Note([]byte(note))
	return mt.Commit()
}

// logChunks lists the first LSN of every log chunk stored in st.
func logChunks(t testing.TB, st *store.PebbleStore) []uint64 {
	t.Helper()
	it, err := st.DB().NewIter(&pebble.IterOptions{LowerBound: []byte{store.PrefixLog}, UpperBound: []byte{store.PrefixLog + 1}})
	require.NoError(t, err)
	var out []uint64
	for ok := it.First(); ok; ok = it.Next() {
		require.Len(t, it.Key(), 9)
		out = append(out, binary.BigEndian.Uint64(it.Key()[1:]))
	}
	require.NoError(t, it.Error())
	require.NoError(t, it.Close())
	return out
}

// storedEnd opens the log stored in db afresh and returns its end: the
// LSN past every record in pebble.
func storedEnd(t testing.TB, db *store.PebbleStore) uint64 {
	t.Helper()
	l, err := cache.OpenLog(db, nil)
	require.NoError(t, err)
	defer l.Close()
	return l.End()
}

// hasRecord reports whether the stored log has a record at exactly lsn.
func hasRecord(t testing.TB, db *store.PebbleStore, lsn uint64) bool {
	t.Helper()
	l, err := cache.OpenLog(db, nil)
	require.NoError(t, err)
	defer l.Close()
	found := false
	errStop := errors.New("stop")
	err = l.Scan(lsn, func(got uint64, _ []byte) error {
		found = got == lsn
		return errStop
	})
	if !errors.Is(err, errStop) {
		require.NoError(t, err)
	}
	return found
}

// TestLogWriteAhead: when the pool writes a page changed in an mtr (by
// FlushPage or by an eviction), the log chunk holding that mtr's record is
// already in pebble: the store's write hook opens the stored log and finds
// the record.
func TestLogWriteAhead(t *testing.T) {
	rng := seed(t)
	inner := newStore(t)
	db := inner
	var checked []string
	st := &hookStore{Store: inner, beforeWrite: func(id page.ID, buf []byte) error {
		lsn := page.LSN(buf)
		end := storedEnd(t, db)
		if lsn >= end || !hasRecord(t, db, lsn) {
			return fmt.Errorf("page %s written with LSN %d, but the stored log ends at %d without it", id, lsn, end)
		}
		checked = append(checked, id.String())
		return nil
	}}
	l, err := cache.OpenLog(db, nil)
	require.NoError(t, err)
	defer l.Close()
	p := newPool(t, st, 16, cache.Options{Policy: cache.PolicyLRU})
	p.AttachLog(l)
	require.NoError(t, p.CreateSpace(nil, 1))
	var ids []page.ID
	for range 20 {
		ids = append(ids, allocRandom(t, p, rng, 1))
	}
	require.NoError(t, p.FlushAll(nil))
	require.Len(t, checked, 21, "every page written was checked")
	checked = nil

	// FlushPage.
	lsn, _ := changeInMtr(t, p, nil, ids[0], func(pg *cache.Page) { scatter(rng, pg.Data(), 4) })
	require.LessOrEqual(t, storedEnd(t, db), lsn, "the record is only buffered before the write-out")
	require.False(t, hasRecord(t, db, lsn))
	require.Positive(t, l.Buffered())
	require.NoError(t, p.FlushPage(nil, ids[0]))
	require.Equal(t, []string{ids[0].String()}, checked)
	require.Greater(t, storedEnd(t, db), lsn)
	require.True(t, hasRecord(t, db, lsn))
	require.Zero(t, l.Buffered())
	require.Less(t, l.Durable(), storedEnd(t, db), "written, not synced: Flush does not sync")
	checked = nil

	// An eviction: the LRU victim is a page changed in an mtr.
	lsn, _ = changeInMtr(t, p, nil, ids[1], func(pg *cache.Page) { scatter(rng, pg.Data(), 4) })
	require.False(t, hasRecord(t, db, lsn))
	for _, id := range ids[2:17] {
		touch(t, p, nil, id)
	}
	require.True(t, p.Resident(ids[1]))
	var m cache.Meter
	touch(t, p, &m, ids[17])
	require.False(t, p.Resident(ids[1]), "the changed page was the victim")
	require.EqualValues(t, 1, m.DirtyWriteBacks)
	require.Equal(t, []string{ids[1].String()}, checked)
	require.True(t, hasRecord(t, db, lsn))
}

// TestLogLSNsGrowAcrossReopen: a log reopened on the same pebble database
// continues where the stored log ends, so the next record's LSN is the old
// End(). Records that were never written to pebble are lost with Close, and
// after a crash only what SyncTo made durable is left.
func TestLogLSNsGrowAcrossReopen(t *testing.T) {
	e := newLogEnv(t, 16, nil)
	db := e.st
	require.Equal(t, uint64(cache.FirstLSN), e.l.End())
	first := commitNote(e.p, nil, "one")
	require.Equal(t, uint64(cache.FirstLSN), first)
	commitNote(e.p, nil, "two")
	last := commitNote(e.p, nil, "three")
	require.NoError(t, e.l.SyncTo(nil, last+1))
	end := e.l.End()
	require.Equal(t, end, e.l.Durable())
	unsynced := commitNote(e.p, nil, "appended, never written")
	e.l.Close()
	require.ErrorIs(t, e.l.Flush(unsynced), cache.ErrLogClosed)
	require.ErrorIs(t, e.l.SyncTo(nil, unsynced+1), cache.ErrLogClosed)
	require.NoError(t, e.l.SyncTo(nil, last+1), "already durable")

	for round := range 3 {
		l, err := cache.OpenLog(db, nil)
		require.NoError(t, err)
		require.Equal(t, end, l.End(), "round %d", round)
		require.Equal(t, end, l.Durable())
		require.Zero(t, l.SinceCheckpoint())
		p := newPool(t, e.st, 16, cache.Options{})
		p.AttachLog(l)
		lsn := commitNote(p, nil, fmt.Sprintf("round %d", round))
		require.Equal(t, end, lsn, "round %d: the next record takes the old end", round)
		require.Greater(t, l.End(), end)
		require.NoError(t, l.Flush(lsn))
		end = l.End()
		// A record appended but never written is lost with Close: the
		// next open ends before it.
		lost := commitNote(p, nil, "unwritten")
		require.Equal(t, end, lost)
		l.Close()
	}

	// Every record is there once, in order, LSNs strictly growing.
	l, err := cache.OpenLog(db, nil)
	require.NoError(t, err)
	recs := scanLog(t, l, cache.FirstLSN)
	var notes []string
	for i, r := range recs {
		if i > 0 {
			require.Greater(t, r.lsn, recs[i-1].lsn)
		}
		_, note, err := cache.DecodeMtr(r.body, nil)
		require.NoError(t, err)
		notes = append(notes, string(note))
	}
	require.Equal(t, []string{"one", "two", "three", "round 0", "round 1", "round 2"}, notes)
	l.Close()
}

// TestLogSyncSurvivesCrash: on pebble's crashable filesystem, what SyncTo
// covered survives a crash and what was only written (Flush) may not; the
// reopened log ends at the durable LSN and continues from there.
func TestLogSyncSurvivesCrash(t *testing.T) {
	fs := vfs.NewCrashableMem()
	st, err := store.OpenPebble(store.PebbleOptions{FS: fs, PageSize: testPageSize})
	require.NoError(t, err)
	l, err := cache.OpenLog(st, nil)
	require.NoError(t, err)
	p := newPool(t, st, 16, cache.Options{})
	p.AttachLog(l)
	a := commitNote(p, nil, "synced")
	require.NoError(t, l.SyncTo(nil, a+1))
	durable := l.Durable()
	b := commitNote(p, nil, "written only")
	require.NoError(t, l.Flush(b))
	require.Greater(t, storedEnd(t, st), durable)

	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	l.Close()
	require.NoError(t, st.Close())

	st2, err := store.OpenPebble(store.PebbleOptions{FS: crashed, PageSize: testPageSize})
	require.NoError(t, err)
	defer func() { require.NoError(t, st2.Close()) }()
	l2, err := cache.OpenLog(st2, nil)
	require.NoError(t, err)
	defer l2.Close()
	require.Equal(t, durable, l2.End())
	recs := scanLog(t, l2, cache.FirstLSN)
	require.Len(t, recs, 1)
	_, note, err := cache.DecodeMtr(recs[0].body, nil)
	require.NoError(t, err)
	require.Equal(t, "synced", string(note))
}

// TestLogCheckpointed: Checkpointed(lsn, keep) deletes the chunks wholly
// below keep and keeps the one holding keep, so Scan from keep still finds
// every record from keep on.
func TestLogCheckpointed(t *testing.T) {
	e := newLogEnv(t, 16, nil)
	db := e.st
	// Five chunks of three records: each Flush writes one chunk.
	var lsns [][]uint64
	for c := range 5 {
		var group []uint64
		for r := range 3 {
			group = append(group, commitNote(e.p, nil, fmt.Sprintf("c%d r%d", c, r)))
		}
		require.NoError(t, e.l.Flush(group[2]))
		lsns = append(lsns, group)
	}
	starts := []uint64{lsns[0][0], lsns[1][0], lsns[2][0], lsns[3][0], lsns[4][0]}
	require.Equal(t, starts, logChunks(t, db))
	end := e.l.End()
	require.Equal(t, end-cache.FirstLSN, e.l.SinceCheckpoint())

	notesFrom := func(from uint64) []string {
		var out []string
		for _, r := range scanLog(t, e.l, from) {
			_, note, err := cache.DecodeMtr(r.body, nil)
			require.NoError(t, err)
			out = append(out, string(note))
		}
		return out
	}

	// keep below the first chunk, or inside it: nothing goes.
	require.NoError(t, e.l.Checkpointed(lsns[0][1], 0))
	require.Equal(t, starts, logChunks(t, db))
	require.NoError(t, e.l.Checkpointed(lsns[0][1], lsns[0][2]))
	require.Equal(t, starts, logChunks(t, db))
	require.Equal(t, end-lsns[0][1], e.l.SinceCheckpoint())

	// keep inside chunk 2 (its second record): chunks 0 and 1 go, 2 stays.
	keep := lsns[2][1]
	require.NoError(t, e.l.Checkpointed(keep, keep))
	require.Equal(t, starts[2:], logChunks(t, db))
	require.Equal(t, []string{"c2 r1", "c2 r2", "c3 r0", "c3 r1", "c3 r2", "c4 r0", "c4 r1", "c4 r2"}, notesFrom(keep))
	require.Equal(t, "c2 r0", notesFrom(starts[2])[0], "the chunk holding keep is whole")
	// Records below the first kept chunk are gone, and Scan says so
	// rather than start later than asked.
	err := e.l.Scan(lsns[1][2], func(uint64, []byte) error { return nil })
	require.ErrorIs(t, err, cache.ErrCorruptLog)
	require.Equal(t, end-keep, e.l.SinceCheckpoint())

	// keep at a chunk's first record: every chunk before it goes.
	require.NoError(t, e.l.Checkpointed(keep, lsns[3][0]))
	require.Equal(t, starts[3:], logChunks(t, db))
	require.Equal(t, "c3 r0", notesFrom(lsns[3][0])[0])

	// A checkpoint never moves back.
	require.NoError(t, e.l.Checkpointed(lsns[0][0], lsns[0][0]))
	require.Equal(t, end-keep, e.l.SinceCheckpoint())
	require.Equal(t, starts[3:], logChunks(t, db))

	// keep at the stored log's end (the next record is only buffered):
	// the last chunk stays, or a reopened log would start over at
	// FirstLSN and LSNs would go back.
	lsn := commitNote(e.p, nil, "buffered")
	require.Equal(t, end, lsn)
	require.NoError(t, e.l.Checkpointed(lsn, lsn))
	require.Equal(t, starts[4:], logChunks(t, db))
	require.Equal(t, e.l.End()-lsn, e.l.SinceCheckpoint())
	require.Equal(t, end, storedEnd(t, db))

	// The log still opens (its first chunk is no longer at FirstLSN) and
	// ends where it did; the buffered record reaches pebble after the rest.
	require.NoError(t, e.l.Flush(lsn))
	l2, err := cache.OpenLog(db, nil)
	require.NoError(t, err)
	require.Equal(t, e.l.End(), l2.End())
	l2.Close()
	require.Equal(t, []string{"c4 r0", "c4 r1", "c4 r2", "buffered"}, notesFrom(starts[4]))
}

// TestLogScanFromZero: on a log that never dropped a chunk, nothing was
// ever logged below FirstLSN, so a Scan from any LSN below it (0 included)
// returns every record; it must not claim that records are missing.
func TestLogScanFromZero(t *testing.T) {
	e := newLogEnv(t, 16, nil)
	a := commitNote(e.p, nil, "a")
	b := commitNote(e.p, nil, "b")
	require.NoError(t, e.l.Flush(b))
	require.Equal(t, []uint64{a, b}, lsnsOf(scanLog(t, e.l, cache.FirstLSN)))
	for _, from := range []uint64{0, 1, cache.FirstLSN - 1} {
		var got []uint64
		err := e.l.Scan(from, func(lsn uint64, _ []byte) error { got = append(got, lsn); return nil })
		require.NoError(t, err, "Scan(%d) of a log that starts at FirstLSN", from)
		require.Equal(t, []uint64{a, b}, got)
	}
}

func lsnsOf(recs []record) []uint64 {
	var out []uint64
	for _, r := range recs {
		out = append(out, r.lsn)
	}
	return out
}

// TestLogCheckpointRecord: the layer above's checkpoint record is absent
// at first, then whatever was saved last, through a reopen of the log and
// a crash (SaveCheckpoint is a synced write). It does not disturb the page
// size record or the log.
func TestLogCheckpointRecord(t *testing.T) {
	fs := vfs.NewCrashableMem()
	st, err := store.OpenPebble(store.PebbleOptions{FS: fs, PageSize: testPageSize})
	require.NoError(t, err)
	l, err := cache.OpenLog(st, nil)
	require.NoError(t, err)
	rec, err := l.LoadCheckpoint()
	require.NoError(t, err)
	require.Nil(t, rec)
	p := newPool(t, st, 16, cache.Options{})
	p.AttachLog(l)
	lsn := commitNote(p, nil, "before the checkpoint")
	require.NoError(t, l.Flush(lsn))
	require.NoError(t, l.SaveCheckpoint([]byte("first")))
	want := []byte("redo=8 keep=8 \x00\xff")
	require.NoError(t, l.SaveCheckpoint(want))
	l.Close()

	l, err = cache.OpenLog(st, nil)
	require.NoError(t, err)
	rec, err = l.LoadCheckpoint()
	require.NoError(t, err)
	require.Equal(t, want, rec)
	l.Close()

	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	require.NoError(t, st.Close())
	st2, err := store.OpenPebble(store.PebbleOptions{FS: crashed})
	require.NoError(t, err)
	defer func() { require.NoError(t, st2.Close()) }()
	require.Equal(t, testPageSize, st2.PageSize(), "the page size record is intact")
	l2, err := cache.OpenLog(st2, nil)
	require.NoError(t, err)
	defer l2.Close()
	rec, err = l2.LoadCheckpoint()
	require.NoError(t, err)
	require.Equal(t, want, rec, "a saved checkpoint survives a crash")
	recs := scanLog(t, l2, cache.FirstLSN)
	require.Len(t, recs, 1, "the synced checkpoint write made the earlier log chunk durable too")
	require.Equal(t, lsn, recs[0].lsn)
}

// fakeWaiter is a Waiter that tells the test about each wait (on waits)
// before it blocks on the sync's done channel.
type fakeWaiter struct {
	n     atomic.Int64
	waits chan struct{}
}

func (w *fakeWaiter) Wait(done <-chan struct{}) {
	w.n.Add(1)
	w.waits <- struct{}{}
	<-done
}

// TestLogGroupCommit drives group commit with a fake sync and a fake
// waiter, ordered by channels only. A leads a sync and is held inside it;
// B, C and D append records and call SyncTo meanwhile: all three wait (3
// waits) and none syncs. When A's sync ends, exactly one of them leads the
// next sync, which covers all three records; the other two wait for it
// (2 more waits). Two syncs serve four commits.
func TestLogGroupCommit(t *testing.T) {
	syncEnter := make(chan uint64) // the log's durable LSN when a sync starts
	syncRelease := make(chan error)
	w := &fakeWaiter{waits: make(chan struct{}, 16)}
	var l *cache.Log
	e := newLogEnv(t, 16, &cache.LogOptions{
		Waiter: w,
		Sync: func() error {
			syncEnter <- l.Durable()
			return <-syncRelease
		},
	})
	l = e.l

	var meters [4]cache.Meter
	var lsns [4]uint64
	var errs [4]error
	var done [4]chan struct{}
	for i := range done {
		done[i] = make(chan struct{})
	}
	returned := make(chan int, 4) // which commit's SyncTo returned
	commit := func(i int) {
		defer close(done[i])
		lsns[i] = commitNote(e.p, &meters[i], string(rune('A'+i)))
		errs[i] = l.SyncTo(&meters[i], lsns[i]+1)
		returned <- i
	}

	go commit(0)
	require.Equal(t, uint64(cache.FirstLSN), <-syncEnter, "A leads the first sync")
	for i := 1; i <= 3; i++ {
		go commit(i)
	}
	// Whatever happens first tells: a wait (right), a sync or a return
	// (wrong: the sync of A is still in progress).
	for range 3 {
		select {
		case <-w.waits:
		case <-syncEnter:
			t.Fatal("a second sync started while A's was in progress")
		case i := <-returned:
			t.Fatalf("commit %c returned while A's sync was in progress", 'A'+i)
		}
	}
	require.EqualValues(t, 3, w.n.Load(), "B, C and D wait for A's sync")
	s := l.Stats()
	require.Zero(t, s.Syncs)
	require.EqualValues(t, 4, s.Records)
	require.EqualValues(t, 4, s.SyncedCommits)
	require.Equal(t, uint64(cache.FirstLSN), l.Durable())
	endAll := l.End() // every record of the test is below

	syncRelease <- nil
	<-done[0]
	require.Equal(t, 0, <-returned)
	require.NoError(t, errs[0])
	require.Greater(t, l.Durable(), lsns[0], "A's record is durable")
	require.Less(t, l.Durable(), endAll, "A's sync did not cover B, C, D")

	// One of B, C, D leads the next sync; the other two wait for it, in
	// either order.
	entered, waited := 0, 0
	for entered < 1 || waited < 2 {
		select {
		case d := <-syncEnter:
			require.Zero(t, entered, "a third sync started")
			require.Equal(t, lsns[0]+uint64(8+3), d, "the second sync starts after A's")
			entered++
		case <-w.waits:
			waited++
		case i := <-returned:
			t.Fatalf("commit %c returned before the second sync ended", 'A'+i)
		}
	}
	require.EqualValues(t, 5, w.n.Load())
	syncRelease <- nil
	for i := 1; i <= 3; i++ {
		<-done[i]
		require.NoError(t, errs[i])
	}

	s = l.Stats()
	require.EqualValues(t, 2, s.Syncs)
	require.EqualValues(t, 4, s.SyncedCommits)
	require.Equal(t, endAll, l.Durable(), "the second sync covered all three")
	for i, lsn := range lsns {
		require.Less(t, lsn, l.Durable(), "record %c", 'A'+i)
	}
	require.EqualValues(t, 1, meters[0].LogSyncs)
	require.Zero(t, meters[0].LogSyncWaits)
	leaders := 0
	for i := 1; i <= 3; i++ {
		m := meters[i]
		require.EqualValues(t, 1, m.LogRecords)
		switch m.LogSyncs {
		case 1:
			leaders++
			require.EqualValues(t, 1, m.LogSyncWaits, "the leader waited for A only")
		case 0:
			require.EqualValues(t, 2, m.LogSyncWaits, "a follower waited for both syncs")
		default:
			t.Fatalf("commit %c synced %d times", 'A'+i, m.LogSyncs)
		}
	}
	require.Equal(t, 1, leaders, "exactly one of B, C, D leads the second sync")

	// Already durable: no sync, no wait.
	var m cache.Meter
	require.NoError(t, l.SyncTo(&m, lsns[3]+1))
	require.Zero(t, m.LogSyncs)
	require.Zero(t, m.LogSyncWaits)
	require.EqualValues(t, 2, l.Stats().Syncs)
	require.EqualValues(t, 5, l.Stats().SyncedCommits)
	require.Len(t, w.waits, 0)
}

// TestLogSyncFailure: a failed sync is reported to its leader, leaves the
// durable LSN where it was, and the next SyncTo tries again.
func TestLogSyncFailure(t *testing.T) {
	errDevice := errors.New("fsync failed")
	var fail atomic.Bool
	fail.Store(true)
	e := newLogEnv(t, 16, &cache.LogOptions{Sync: func() error {
		if fail.Load() {
			return errDevice
		}
		return nil
	}})
	lsn := commitNote(e.p, nil, "x")
	var m cache.Meter
	err := e.l.SyncTo(&m, lsn+1)
	require.ErrorIs(t, err, errDevice)
	require.Equal(t, uint64(cache.FirstLSN), e.l.Durable())
	require.Zero(t, m.LogSyncs)
	require.Zero(t, e.l.Stats().Syncs)
	fail.Store(false)
	require.NoError(t, e.l.SyncTo(&m, lsn+1))
	require.Equal(t, e.l.End(), e.l.Durable())
	require.EqualValues(t, 1, m.LogSyncs)
}

// TestLogSyncToBeyondEnd: SyncTo(upto) with upto past the log's end has
// nothing more to make durable once every record is synced, and must
// return. The fake sync refuses a third call, so a SyncTo that keeps
// syncing fails instead of hanging.
func TestLogSyncToBeyondEnd(t *testing.T) {
	var syncs atomic.Int64
	errTooMany := errors.New("SyncTo keeps syncing")
	e := newLogEnv(t, 16, &cache.LogOptions{Sync: func() error {
		if syncs.Add(1) > 2 {
			return errTooMany
		}
		return nil
	}})
	commitNote(e.p, nil, "x")
	end := e.l.End()
	require.NoError(t, e.l.SyncTo(nil, end+100))
	require.Equal(t, end, e.l.Durable())
	require.EqualValues(t, 1, syncs.Load())
}

// TestLogMeterCounters: an mtr's record is counted on its meter (records,
// bytes with the 8-byte frame header) and on the log's stats; syncs and
// sync waits are counted on the caller's meter (waits: see
// TestLogGroupCommit).
func TestLogMeterCounters(t *testing.T) {
	rng := seed(t)
	e := newLogEnv(t, 16, nil)
	require.NoError(t, e.p.CreateSpace(nil, 1))
	id := allocRandom(t, e.p, rng, 1)
	start, s0 := e.l.End(), e.l.Stats()

	var m cache.Meter
	lsn := commitNote(e.p, &m, "hello")
	// Body: 0 pages (1 byte), note length (1 byte), "hello" (5 bytes).
	require.EqualValues(t, 1, m.LogRecords)
	require.EqualValues(t, 8+1+1+5, m.LogBytes)
	require.Equal(t, start, lsn)
	require.Equal(t, start+uint64(m.LogBytes), e.l.End())

	lsn2, _ := changeInMtr(t, e.p, &m, id, func(pg *cache.Page) { scatter(rng, pg.Data(), 3) })
	require.EqualValues(t, 2, m.LogRecords)
	require.Equal(t, e.l.End()-start, uint64(m.LogBytes))
	require.Equal(t, lsn2, lsn+8+1+1+5)
	s := e.l.Stats()
	require.Equal(t, s0.Records+2, s.Records)
	require.Equal(t, s0.Bytes+m.LogBytes, s.Bytes)
	require.Equal(t, "log-records=2", fieldOf(m.String(), "log-records"))

	require.NoError(t, e.l.SyncTo(&m, lsn2+1))
	require.EqualValues(t, 1, m.LogSyncs)
	require.Zero(t, m.LogSyncWaits)
	require.NoError(t, e.l.SyncTo(&m, lsn2+1))
	require.EqualValues(t, 1, m.LogSyncs, "already durable")
	require.Equal(t, "log-syncs=1", fieldOf(m.String(), "log-syncs"))

	// A nil meter is allowed everywhere.
	commitNote(e.p, nil, "x")
	require.NoError(t, e.l.SyncTo(nil, e.l.End()))
	require.EqualValues(t, 2, m.LogRecords)

	// Meters add up.
	var sum cache.Meter
	sum.Add(&m)
	sum.Add(&m)
	require.EqualValues(t, 4, sum.LogRecords)
	require.Equal(t, 2*m.LogBytes, sum.LogBytes)
	require.EqualValues(t, 2, sum.LogSyncs)
}

// fieldOf returns the "name=value" field of a Meter.String.
func fieldOf(s, name string) string {
	for _, f := range bytes.Fields([]byte(s)) {
		if bytes.HasPrefix(f, []byte(name+"=")) {
			return string(f)
		}
	}
	return ""
}

// TestLogConcurrentMtrsReplay runs goroutines that change one or two pages
// per mtr (latched in page order), sometimes with a note, sometimes
// syncing, through a pool small enough that pages are evicted (so written
// under the write-ahead rule) all the time. Afterwards the log alone,
// replayed onto an empty store, rebuilds every page byte for byte, and
// replayed onto the store after a final flush changes nothing.
func TestLogConcurrentMtrsReplay(t *testing.T) {
	const (
		pages   = replayPages
		workers = 4
		ops     = 300
	)
	rng := seed(t)
	e := newLogEnv(t, 16, &cache.LogOptions{BufferBytes: 4096})
	require.NoError(t, e.p.CreateSpace(nil, 1))
	for range pages {
		mt := e.p.BeginMtr(nil)
		pg, err := e.p.AllocPage(mt, nil, 1, page.KindHeap)
		require.NoError(t, err)
		fillRandom(rng, pg.Data()[page.HeaderSize:])
		setCounter(pg, 0)
		mt.Release(pg, true)
		mt.Commit()
	}

	var wg sync.WaitGroup
	errs := make([]error, workers)
	meters := make([]cache.Meter, workers)
	incs := make([][pages + 1]uint64, workers)
	for w := range workers {
		wr := rand.New(rand.NewPCG(rng.Uint64(), uint64(w)))
		wg.Go(func() {
			errs[w] = replayWorker(e, wr, &meters[w], &incs[w], pages, ops)
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	var sum cache.Meter
	for i := range meters {
		sum.Add(&meters[i])
	}
	t.Logf("workers: %s", sum.String())
	require.Positive(t, sum.DirtyWriteBacks, "no page was written under the write-ahead rule")
	require.Positive(t, sum.LogSyncs)

	final := make(map[page.ID][]byte)
	for n := uint32(0); n <= pages; n++ {
		img := image(t, e.p, pid(1, n))
		final[pid(1, n)] = img
		if n > 0 {
			var want uint64
			for w := range workers {
				want += incs[w][n]
			}
			a, b := counterOf(img)
			require.Equal(t, a, b)
			require.Equal(t, want, a, "page %d", n)
		}
	}

	require.NoError(t, e.l.Flush(e.l.End()))
	recs := scanLog(t, e.l, cache.FirstLSN)
	for i := 1; i < len(recs); i++ {
		require.Greater(t, recs[i].lsn, recs[i-1].lsn)
	}
	require.EqualValues(t, e.l.Stats().Records, len(recs))

	// From nothing: CreateSpace and AllocPage are fresh records.
	p2 := newPool(t, newStore(t), 64, cache.Options{})
	require.Positive(t, redoAll(t, p2, recs))
	for id, want := range final {
		requireRedone(t, want, image(t, p2, id), page.LSN(want), "replay from nothing: page "+id.String())
	}

	// Onto the flushed store: every page is up to date already.
	require.NoError(t, e.p.FlushAll(nil))
	p3 := newPool(t, e.st, 64, cache.Options{})
	require.Zero(t, redoAll(t, p3, recs))
}

const replayPages = 48

// replayWorker is one goroutine of TestLogConcurrentMtrsReplay.
func replayWorker(e *logEnv, rng *rand.Rand, m *cache.Meter, incs *[replayPages + 1]uint64, pages, ops int) error {
	for range ops {
		a := uint32(1 + rng.IntN(pages))
		ids := []uint32{a}
		if b := uint32(1 + rng.IntN(pages)); rng.IntN(3) == 0 && b != a {
			ids = append(ids, b)
			if b < a {
				ids[0], ids[1] = b, a
			}
		}
		mt := e.p.BeginMtr(m)
		for _, n := range ids {
			pg, err := e.p.Fetch(m, pid(1, n))
			if err != nil {
				mt.Commit()
				return err
			}
			mt.Latch(pg)
			c, c2 := counterOf(pg.Data())
			if c != c2 {
				mt.Release(pg, false)
				mt.Commit()
				return fmt.Errorf("page %d: torn counter %d/%d", n, c, c2)
			}
			setCounter(pg, c+1)
			// Some more bytes, so that records differ in shape.
			d := pg.Data()
			d[page.HeaderSize+8+rng.IntN(len(d)-page.HeaderSize-16)] = byte(rng.Uint32())
			incs[n]++
			mt.Release(pg, true)
		}
		if rng.IntN(4) == 0 {
			mt.Note([]byte("note"))
		}
		lsn := mt.Commit()
		switch op := rng.IntN(10); {
		case op < 2:
			if err := e.l.SyncTo(m, lsn+1); err != nil {
				return err
			}
		case op < 3:
			if err := e.p.FlushPage(m, pid(1, uint32(1+rng.IntN(pages)))); err != nil {
				return err
			}
		}
	}
	return nil
}

// TestLogCheckpointAheadOfStoredLog follows the checkpoint sequence the
// engine uses (engine/wal.go: redo := End(); FlushAll; store Sync;
// SaveCheckpoint(redo); Checkpointed(redo, keep)) when the log's tail is
// only buffered: the last page write-out wrote the log up to its own LSN,
// and a later note-only record (a commit note, say) was never written.
// SaveCheckpoint is a synced write, but the buffered records are not in
// pebble, so a crash right after the checkpoint leaves a log that ends
// below the checkpoint's redo LSN. The reopened log then hands out LSNs
// below redo again, and the next recovery (which redoes only from redo
// on) skips them. After a saved checkpoint, a crash must leave the log
// ending at or past every LSN handed out before it.
func TestLogCheckpointAheadOfStoredLog(t *testing.T) {
	rng := seed(t)
	fs := vfs.NewCrashableMem()
	st, err := store.OpenPebble(store.PebbleOptions{FS: fs, PageSize: testPageSize})
	require.NoError(t, err)
	l, err := cache.OpenLog(st, nil)
	require.NoError(t, err)
	p := newPool(t, st, 16, cache.Options{})
	p.AttachLog(l)
	require.NoError(t, p.CreateSpace(nil, 1))
	id := allocRandom(t, p, rng, 1)
	require.NoError(t, p.FlushAll(nil))
	changeInMtr(t, p, nil, id, func(pg *cache.Page) { scatter(rng, pg.Data(), 2) })
	require.NoError(t, p.FlushPage(nil, id)) // writes the log up to here
	commitNote(p, nil, "commit of an unsynced transaction")
	require.Positive(t, l.Buffered())

	// The engine's checkpoint.
	redo := l.End()
	require.NoError(t, p.FlushAll(nil)) // nothing dirty: the buffer stays
	require.NoError(t, st.Sync())
	var rec [8]byte
	binary.LittleEndian.PutUint64(rec[:], redo)
	require.NoError(t, l.SaveCheckpoint(rec[:]))
	require.NoError(t, l.Checkpointed(redo, redo))

	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	l.Close()
	require.NoError(t, st.Close())
	st2, err := store.OpenPebble(store.PebbleOptions{FS: crashed})
	require.NoError(t, err)
	defer func() { require.NoError(t, st2.Close()) }()
	l2, err := cache.OpenLog(st2, nil)
	require.NoError(t, err)
	defer l2.Close()
	got, err := l2.LoadCheckpoint()
	require.NoError(t, err)
	require.Equal(t, redo, binary.LittleEndian.Uint64(got))
	require.GreaterOrEqual(t, l2.End(), redo,
		"the log reopened after a checkpoint at redo LSN %d ends at %d: LSNs below the checkpoint will be handed out again", redo, l2.End())
}

// A volatile store runs pebble without its WAL: the log still records,
// syncs (as no-ops that count), saves and loads its checkpoint, and scans
// back what it wrote. A volatile store refuses a directory or a filesystem.
func TestLogVolatileStore(t *testing.T) {
	st, err := store.OpenPebble(store.PebbleOptions{Volatile: true})
	require.NoError(t, err)
	defer st.Close()
	require.True(t, st.Volatile())
	l, err := cache.OpenLog(st, &cache.LogOptions{Volatile: true})
	require.NoError(t, err)
	defer l.Close()
	p := newPool(t, st, 16, cache.Options{})
	p.AttachLog(l)
	require.NoError(t, p.CreateSpace(nil, 1))

	var m cache.Meter
	lsn := commitNote(p, &m, "hello")
	require.NoError(t, l.SyncTo(&m, lsn+1))
	require.EqualValues(t, 1, m.LogSyncs)
	require.GreaterOrEqual(t, l.Durable(), lsn+1)
	require.NoError(t, st.Sync())
	require.NoError(t, l.SaveCheckpoint([]byte("ckpt")))
	rec, err := l.LoadCheckpoint()
	require.NoError(t, err)
	require.Equal(t, "ckpt", string(rec))
	var notes []string
	require.NoError(t, l.Scan(cache.FirstLSN, func(lsn uint64, body []byte) error {
		_, note, err := cache.DecodeMtr(body, nil)
		if err != nil {
			return err
		}
		notes = append(notes, string(note))
		return nil
	}))
	require.Contains(t, notes, "hello")

	_, err = store.OpenPebble(store.PebbleOptions{Volatile: true, Dir: t.TempDir()})
	require.ErrorIs(t, err, store.ErrInvalidConfig)
	_, err = store.OpenPebble(store.PebbleOptions{Volatile: true, FS: vfs.NewMem()})
	require.ErrorIs(t, err, store.ErrInvalidConfig)
}
