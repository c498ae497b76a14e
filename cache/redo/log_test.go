package redo_test

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/stretchr/testify/require"
)

// TestLogLSNsGrowAcrossReopen: a log reopened on the same pebble database
// continues where the stored log ends, so the next record's LSN is the old
// End(). Records that were never written to pebble are lost with Close, and
// after a crash only what SyncTo made durable is left.
func TestLogLSNsGrowAcrossReopen(t *testing.T) {
	e := newLogEnv(t, nil)
	db := e.st
	require.Equal(t, uint64(redo.FirstLSN), e.l.End())
	first := appendNote(e.l, nil, "one")
	require.Equal(t, uint64(redo.FirstLSN), first)
	appendNote(e.l, nil, "two")
	last := appendNote(e.l, nil, "three")
	require.NoError(t, e.l.SyncTo(nil, last+1))
	end := e.l.End()
	require.Equal(t, end, e.l.Durable())
	unsynced := appendNote(e.l, nil, "appended, never written")
	e.l.Close()
	require.ErrorIs(t, e.l.Flush(unsynced), redo.ErrClosed)
	require.ErrorIs(t, e.l.SyncTo(nil, unsynced+1), redo.ErrClosed)
	require.NoError(t, e.l.SyncTo(nil, last+1), "already durable")

	for round := range 3 {
		l, err := redo.Open(db, nil)
		require.NoError(t, err)
		require.Equal(t, end, l.End(), "round %d", round)
		require.Equal(t, end, l.Durable())
		require.Zero(t, l.SinceCheckpoint())
		lsn := appendNote(l, nil, fmt.Sprintf("round %d", round))
		require.Equal(t, end, lsn, "round %d: the next record takes the old end", round)
		require.Greater(t, l.End(), end)
		require.NoError(t, l.Flush(lsn))
		end = l.End()
		// A record appended but never written is lost with Close: the
		// next open ends before it.
		lost := appendNote(l, nil, "unwritten")
		require.Equal(t, end, lost)
		l.Close()
	}

	// Every record is there once, in order, LSNs strictly growing.
	l, err := redo.Open(db, nil)
	require.NoError(t, err)
	recs := scanLog(t, l, redo.FirstLSN)
	var notes []string
	for i, r := range recs {
		if i > 0 {
			require.Greater(t, r.lsn, recs[i-1].lsn)
		}
		_, note, err := redo.Decode(r.body, nil)
		require.NoError(t, err)
		notes = append(notes, string(note))
	}
	require.Equal(t, []string{"one", "two", "three", "round 0", "round 1", "round 2"}, notes)
	l.Close()
}

// TestLogSyncSurvivesCrash: on pebble's crashable filesystem, what SyncTo
// covered survives a crash and what was only written (MaybeWrite) may not;
// the reopened log ends at the durable LSN and continues from there. Flush
// syncs (the write-ahead rule needs it, the log's files and the store's
// being synced apart).
func TestLogSyncSurvivesCrash(t *testing.T) {
	fs := vfs.NewCrashableMem()
	st, err := store.OpenPebble(store.PebbleOptions{FS: fs, PageSize: testPageSize})
	require.NoError(t, err)
	l, err := redo.Open(st, &redo.LogOptions{BufferBytes: 1})
	require.NoError(t, err)
	a := appendNote(l, nil, "synced")
	require.NoError(t, l.SyncTo(nil, a+1))
	durable := l.Durable()
	b := appendNote(l, nil, "written only")
	require.NoError(t, l.MaybeWrite())
	require.Zero(t, l.Buffered())
	require.Equal(t, durable, l.Durable(), "MaybeWrite writes without a sync")
	require.Greater(t, storedEnd(t, st), b)

	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	l.Close()
	require.NoError(t, st.Close())

	st2, err := store.OpenPebble(store.PebbleOptions{FS: crashed, PageSize: testPageSize})
	require.NoError(t, err)
	defer func() { require.NoError(t, st2.Close()) }()
	l2, err := redo.Open(st2, nil)
	require.NoError(t, err)
	defer l2.Close()
	require.Equal(t, durable, l2.End())
	recs := scanLog(t, l2, redo.FirstLSN)
	require.Len(t, recs, 1)
	_, note, err := redo.Decode(recs[0].body, nil)
	require.NoError(t, err)
	require.Equal(t, "synced", string(note))
}

// TestLogCheckpointed: Checkpointed(lsn, keep) recycles the segments
// wholly below keep and keeps the one holding keep, so Scan from keep
// still finds every record from keep on, and says so when asked for
// records of a recycled segment.
func TestLogCheckpointed(t *testing.T) {
	e := newLogEnv(t, &redo.LogOptions{Capacity: redo.MinCapacity})
	db := e.st
	// Five segments of three records: each record fills a third of one.
	noteLen := int(e.l.SegmentSize())/3 - 64
	var lsns [][]uint64
	for c := range 5 {
		var group []uint64
		for r := range 3 {
			group = append(group, appendNote(e.l, nil, fmt.Sprintf("c%d r%d %s", c, r, strings.Repeat("x", noteLen))))
		}
		lsns = append(lsns, group)
	}
	require.NoError(t, e.l.Flush(e.l.End()))
	seg := e.l.SegmentSize()
	var starts []uint64
	for c := range 5 {
		starts = append(starts, uint64(c)*seg)
		require.Equal(t, uint64(c)*seg+redo.FirstLSN, lsns[c][0], "segment %d's first record follows its header", c)
	}
	require.Equal(t, starts, logSegments(t, db))
	end := e.l.End()
	require.Equal(t, end-redo.FirstLSN, e.l.SinceCheckpoint())

	notesFrom := func(from uint64) []string {
		var out []string
		for _, r := range scanLog(t, e.l, from) {
			_, note, err := redo.Decode(r.body, nil)
			require.NoError(t, err)
			out = append(out, strings.TrimRight(string(note), "x "))
		}
		return out
	}

	// keep below the first segment's end: nothing goes.
	require.NoError(t, e.l.Checkpointed(lsns[0][1], 0))
	require.Equal(t, starts, logSegments(t, db))
	require.NoError(t, e.l.Checkpointed(lsns[0][1], lsns[0][2]))
	require.Equal(t, starts, logSegments(t, db))
	require.Equal(t, end-lsns[0][1], e.l.SinceCheckpoint())
	require.Zero(t, e.l.Stats().Recycled)

	// keep inside segment 2 (its second record): segments 0 and 1 are
	// renamed to the next two future names, 2 stays.
	keep := lsns[2][1]
	require.NoError(t, e.l.Checkpointed(keep, keep))
	require.Equal(t, append(slices.Clone(starts[2:]), 5*seg, 6*seg), logSegments(t, db))
	require.EqualValues(t, 2, e.l.Stats().Recycled)
	require.Equal(t, []string{"c2 r1", "c2 r2", "c3 r0", "c3 r1", "c3 r2", "c4 r0", "c4 r1", "c4 r2"}, notesFrom(keep))
	require.Equal(t, "c2 r0", notesFrom(starts[2])[0], "the segment holding keep is whole")
	// Records of a recycled segment are gone, and Scan says so rather
	// than start later than asked.
	err := e.l.Scan(lsns[1][2], func(uint64, []byte) error { return nil })
	require.ErrorIs(t, err, redo.ErrCorruptLog)
	require.ErrorIs(t, err, page.ErrCorrupt)
	require.Equal(t, end-keep, e.l.SinceCheckpoint())
	require.Equal(t, e.l.Age(), e.l.SinceCheckpoint())

	// keep at a segment's first record: every segment before it goes.
	require.NoError(t, e.l.Checkpointed(keep, lsns[3][0]))
	require.Equal(t, append(slices.Clone(starts[3:]), 5*seg, 6*seg, 7*seg), logSegments(t, db))
	require.Equal(t, "c3 r0", notesFrom(lsns[3][0])[0])

	// A checkpoint never moves back.
	require.NoError(t, e.l.Checkpointed(lsns[0][0], lsns[0][0]))
	require.Equal(t, end-keep, e.l.SinceCheckpoint())

	// keep at the log's end, with a record only buffered: the segment
	// holding the end stays, or a reopened log would start over.
	lsn := appendNote(e.l, nil, "buffered")
	require.Equal(t, end, lsn)
	require.NoError(t, e.l.Checkpointed(lsn, lsn))
	require.Equal(t, append(slices.Clone(starts[4:]), 5*seg, 6*seg, 7*seg, 8*seg), logSegments(t, db))
	require.Equal(t, e.l.End()-lsn, e.l.SinceCheckpoint())
	require.Equal(t, end, storedEnd(t, db))

	// The log still opens (its first segment is no longer at LSN 0) and
	// ends where it did; the buffered record reaches its segment after
	// the rest.
	require.NoError(t, e.l.Flush(lsn))
	l2, err := redo.Open(db, &redo.LogOptions{Capacity: redo.MinCapacity})
	require.NoError(t, err)
	require.Equal(t, e.l.End(), l2.End())
	l2.Close()
	require.Equal(t, []string{"c4 r0", "c4 r1", "c4 r2", "buffered"}, notesFrom(starts[4]))
	require.EqualValues(t, 5, e.l.Stats().Created, "every file was created once")
}

// TestLogScanFromZero: on a log that never dropped a chunk, nothing was
// ever logged below FirstLSN, so a Scan from any LSN below it (0 included)
// returns every record; it must not claim that records are missing.
func TestLogScanFromZero(t *testing.T) {
	e := newLogEnv(t, nil)
	a := appendNote(e.l, nil, "a")
	b := appendNote(e.l, nil, "b")
	require.NoError(t, e.l.Flush(b))
	require.Equal(t, []uint64{a, b}, lsnsOf(scanLog(t, e.l, redo.FirstLSN)))
	for _, from := range []uint64{0, 1, redo.FirstLSN - 1} {
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
	l, err := redo.Open(st, nil)
	require.NoError(t, err)
	rec, err := l.LoadCheckpoint()
	require.NoError(t, err)
	require.Nil(t, rec)
	lsn := appendNote(l, nil, "before the checkpoint")
	require.NoError(t, l.Flush(lsn))
	require.NoError(t, l.SaveCheckpoint([]byte("first")))
	want := []byte("redo=8 keep=8 \x00\xff")
	require.NoError(t, l.SaveCheckpoint(want))
	l.Close()

	l, err = redo.Open(st, nil)
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
	l2, err := redo.Open(st2, nil)
	require.NoError(t, err)
	defer l2.Close()
	rec, err = l2.LoadCheckpoint()
	require.NoError(t, err)
	require.Equal(t, want, rec, "a saved checkpoint survives a crash")
	recs := scanLog(t, l2, redo.FirstLSN)
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

func (w *fakeWaiter) SyncStart() {}

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
	var l *redo.Log
	e := newLogEnv(t, &redo.LogOptions{
		Waiter: w,
		Sync: func() error {
			syncEnter <- l.Durable()
			return <-syncRelease
		},
	})
	l = e.l

	var meters [4]redo.Counts
	var lsns [4]uint64
	var errs [4]error
	var done [4]chan struct{}
	for i := range done {
		done[i] = make(chan struct{})
	}
	returned := make(chan int, 4) // which commit's SyncTo returned
	commit := func(i int) {
		defer close(done[i])
		lsns[i] = appendNote(e.l, &meters[i], string(rune('A'+i)))
		errs[i] = l.SyncTo(&meters[i], lsns[i]+1)
		returned <- i
	}

	go commit(0)
	require.Equal(t, uint64(redo.FirstLSN), <-syncEnter, "A leads the first sync")
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
	require.Equal(t, uint64(redo.FirstLSN), l.Durable())
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
	var m redo.Counts
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
	e := newLogEnv(t, &redo.LogOptions{Sync: func() error {
		if fail.Load() {
			return errDevice
		}
		return nil
	}})
	lsn := appendNote(e.l, nil, "x")
	var m redo.Counts
	err := e.l.SyncTo(&m, lsn+1)
	require.ErrorIs(t, err, errDevice)
	require.Equal(t, uint64(redo.FirstLSN), e.l.Durable())
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
	e := newLogEnv(t, &redo.LogOptions{Sync: func() error {
		if syncs.Add(1) > 2 {
			return errTooMany
		}
		return nil
	}})
	appendNote(e.l, nil, "x")
	end := e.l.End()
	require.NoError(t, e.l.SyncTo(nil, end+100))
	require.Equal(t, end, e.l.Durable())
	require.EqualValues(t, 1, syncs.Load())
}

// logSegments lists the first LSN of every segment file in st's log
// directory, ascending.
func logSegments(t testing.TB, st *store.PebbleStore) []uint64 {
	t.Helper()
	names, err := st.FS().List(st.FS().PathJoin(st.Dir(), "redo"))
	require.NoError(t, err)
	var out []uint64
	for _, n := range names {
		if n == "checkpoint" {
			continue
		}
		require.Len(t, n, 16, "file %q", n)
		v, err := strconv.ParseUint(n, 16, 64)
		require.NoError(t, err)
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// TestLogBuffered: Buffered is the bytes appended since the buffer was
// last written, segment switches included (their padding and headers are
// in the buffer too), and zero once a flush wrote it.
func TestLogBuffered(t *testing.T) {
	e := newLogEnv(t, &redo.LogOptions{Capacity: redo.MinCapacity, BufferBytes: 64 << 20})
	require.NoError(t, e.l.Flush(appendNote(e.l, nil, "first")))
	require.Zero(t, e.l.Buffered())
	from, seg := e.l.End(), e.l.SegmentSize()
	note := strings.Repeat("x", 1000)
	var switched bool
	for i := 0; !switched || i < 10; i++ {
		lsn := appendNote(e.l, nil, note)
		switched = switched || lsn/seg != from/seg
		require.EqualValues(t, e.l.End()-from, e.l.Buffered(), "after %d appends", i+1)
	}
	require.NoError(t, e.l.MaybeWrite(), "below BufferBytes: nothing to write")
	require.EqualValues(t, e.l.End()-from, e.l.Buffered())
	require.NoError(t, e.l.Flush(e.l.End()-1))
	require.Zero(t, e.l.Buffered())
}

// TestLogCrossed: Crossed is true exactly when the log's end has reached
// SetMark's LSN or the buffer holds BufferBytes (MaybeWrite's point), and
// it follows both as appends, writes and new marks move them.
func TestLogCrossed(t *testing.T) {
	const bufBytes = 64 << 10
	e := newLogEnv(t, &redo.LogOptions{Capacity: redo.MinCapacity, BufferBytes: bufBytes})
	require.True(t, e.l.Crossed(), "no mark set yet: every caller tests")
	require.NoError(t, e.l.Flush(e.l.Append(nil, redo.NoteRecord([]byte("first")), nil)))
	note := []byte(strings.Repeat("x", 1000))

	mark := e.l.End() + 5000
	e.l.SetMark(mark)
	require.False(t, e.l.Crossed(), "end %d below the mark %d", e.l.End(), mark)
	for e.l.End() < mark+3000 {
		e.l.Append(nil, redo.NoteRecord(note), nil)
		require.Equal(t, e.l.End() >= mark, e.l.Crossed(), "end %d, mark %d", e.l.End(), mark)
	}
	require.True(t, e.l.Crossed())

	e.l.SetMark(e.l.End() + 1<<30)
	require.False(t, e.l.Crossed(), "a higher mark clears the flag")
	var crossings int
	for e.l.Buffered() < bufBytes+3000 {
		was := e.l.Crossed()
		e.l.Append(nil, redo.NoteRecord(note), nil)
		require.Equal(t, e.l.Buffered() >= bufBytes, e.l.Crossed(), "buffered %d", e.l.Buffered())
		if !was && e.l.Crossed() {
			crossings++
		}
	}
	require.Equal(t, 1, crossings)
	require.NoError(t, e.l.MaybeWrite())
	require.Zero(t, e.l.Buffered(), "MaybeWrite wrote the buffer out")
	require.False(t, e.l.Crossed(), "an empty buffer below the mark")

	e.l.SetMark(0)
	require.True(t, e.l.Crossed())
}
