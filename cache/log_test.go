package cache_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
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

// storedEnd opens the log stored in db afresh and returns its end: the
// LSN past every record in pebble.
func storedEnd(t testing.TB, db *store.PebbleStore) uint64 {
	t.Helper()
	l, err := redo.Open(db, nil)
	require.NoError(t, err)
	defer l.Close()
	return l.End()
}

// hasRecord reports whether the stored log has a record at exactly lsn.
func hasRecord(t testing.TB, db *store.PebbleStore, lsn uint64) bool {
	t.Helper()
	l, err := redo.Open(db, nil)
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
// FlushPage or by an eviction), the log holding that mtr's record is
// already in its files, synced: the store's write hook opens the stored
// log and finds the record.
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
	l, err := redo.Open(db, nil)
	require.NoError(t, err)
	defer l.Close()
	p := newPoolWith(t, st, 16, cache.Options{Policy: cache.PolicyLRU}, cache.Wiring{Log: l})
	require.NoError(t, p.CreateSpace(nil, 1))
	var ids []page.ID
	for range 20 {
		ids = append(ids, allocRandom(t, p, rng, 1))
	}
	require.NoError(t, p.FlushAll(nil))
	require.Len(t, checked, 21, "every page written was checked")
	checked = nil

	// FlushPage.
	lsn, _ := changeInMtr(t, p, nil, ids[0], func(mt *cache.Mtr, pg *cache.Page) { scatter(rng, mt, pg, 4) })
	require.LessOrEqual(t, storedEnd(t, db), lsn, "the record is only buffered before the write-out")
	require.False(t, hasRecord(t, db, lsn))
	require.Positive(t, l.Buffered())
	require.NoError(t, p.FlushPage(nil, ids[0]))
	require.Equal(t, []string{ids[0].String()}, checked)
	require.Greater(t, storedEnd(t, db), lsn)
	require.True(t, hasRecord(t, db, lsn))
	require.Zero(t, l.Buffered())
	require.Equal(t, l.Durable(), storedEnd(t, db), "Flush syncs: the log's files and the store's are synced apart, so only a sync orders them")
	require.Greater(t, l.Durable(), lsn, "a page write waits until its record is durable (SyncTo), not only written")
	checked = nil

	// An eviction: the LRU victim is a page changed in an mtr.
	lsn, _ = changeInMtr(t, p, nil, ids[1], func(mt *cache.Mtr, pg *cache.Page) { scatter(rng, mt, pg, 4) })
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
	// Body: one note operation: its kind (1 byte), length (1 byte),
	// "hello" (5 bytes).
	require.EqualValues(t, 1, m.LogRecords)
	require.EqualValues(t, 8+1+1+5, m.LogBytes)
	require.Equal(t, start, lsn)
	require.Equal(t, start+uint64(m.LogBytes), e.l.End())

	lsn2, _ := changeInMtr(t, e.p, &m, id, func(mt *cache.Mtr, pg *cache.Page) { scatter(rng, mt, pg, 3) })
	require.EqualValues(t, 2, m.LogRecords)
	require.Equal(t, e.l.End()-start, uint64(m.LogBytes))
	require.Equal(t, lsn2, lsn+8+1+1+5)
	s := e.l.Stats()
	require.Equal(t, s0.Records+2, s.Records)
	require.Equal(t, s0.Bytes+m.LogBytes, s.Bytes)
	require.Equal(t, "log-records=2", fieldOf(m.String(), "log-records"))

	require.NoError(t, e.l.SyncTo(&m.Counts, lsn2+1))
	require.EqualValues(t, 1, m.LogSyncs)
	require.Zero(t, m.LogSyncWaits)
	require.NoError(t, e.l.SyncTo(&m.Counts, lsn2+1))
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
	e := newLogEnv(t, 16, &redo.LogOptions{BufferBytes: 4096})
	require.NoError(t, e.p.CreateSpace(nil, 1))
	for range pages {
		mt := e.p.BeginMtr(nil)
		pg, err := e.p.AllocPage(mt, nil, 1, page.KindHeap)
		require.NoError(t, err)
		writeRandom(rng, mt, pg, page.HeaderSize, len(pg.Data())-page.HeaderSize)
		writeCounter(mt, pg, 0)
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
	recs := scanLog(t, e.l, redo.FirstLSN)
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
			writeCounter(mt, pg, c+1)
			// One more byte, so that records differ in shape.
			d := pg.Data()
			mt.Write(pg, page.HeaderSize+8+rng.IntN(len(d)-page.HeaderSize-16), []byte{byte(rng.Uint32())})
			incs[n]++
			mt.Release(pg, true)
		}
		if rng.IntN(4) == 0 {
			mt.Note([]byte("note"))
		}
		lsn := mt.Commit()
		switch op := rng.IntN(10); {
		case op < 2:
			if err := e.l.SyncTo(&m.Counts, lsn+1); err != nil {
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
// engine uses (engine/checkpoint.go: redo := End(); FlushAll; store Sync;
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
	l, err := redo.Open(st, nil)
	require.NoError(t, err)
	p := newPoolWith(t, st, 16, cache.Options{}, cache.Wiring{Log: l})
	require.NoError(t, p.CreateSpace(nil, 1))
	id := allocRandom(t, p, rng, 1)
	require.NoError(t, p.FlushAll(nil))
	changeInMtr(t, p, nil, id, func(mt *cache.Mtr, pg *cache.Page) { scatter(rng, mt, pg, 2) })
	require.NoError(t, p.FlushPage(nil, id)) // writes the log up to here
	commitNote(p, nil, "commit of an unsynced transaction")
	require.Positive(t, l.Buffered())

	// The engine's checkpoint.
	redoLSN := l.End()
	require.NoError(t, p.FlushAll(nil)) // nothing dirty: the buffer stays
	require.NoError(t, st.Sync())
	var rec [8]byte
	binary.LittleEndian.PutUint64(rec[:], redoLSN)
	require.NoError(t, l.SaveCheckpoint(rec[:]))
	require.NoError(t, l.Checkpointed(redoLSN, redoLSN))

	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	l.Close()
	require.NoError(t, st.Close())
	st2, err := store.OpenPebble(store.PebbleOptions{FS: crashed})
	require.NoError(t, err)
	defer func() { require.NoError(t, st2.Close()) }()
	l2, err := redo.Open(st2, nil)
	require.NoError(t, err)
	defer l2.Close()
	got, err := l2.LoadCheckpoint()
	require.NoError(t, err)
	require.Equal(t, redoLSN, binary.LittleEndian.Uint64(got))
	require.GreaterOrEqual(t, l2.End(), redoLSN,
		"the log reopened after a checkpoint at redo LSN %d ends at %d: LSNs below the checkpoint will be handed out again", redoLSN, l2.End())
}

// A volatile store runs pebble without its WAL: the log still records,
// syncs (as no-ops that count), saves and loads its checkpoint, and scans
// back what it wrote. A volatile store refuses a directory or a filesystem.
func TestLogVolatileStore(t *testing.T) {
	st, err := store.OpenPebble(store.PebbleOptions{Volatile: true})
	require.NoError(t, err)
	defer st.Close()
	require.True(t, st.Volatile())
	l, err := redo.Open(st, &redo.LogOptions{Volatile: true})
	require.NoError(t, err)
	defer l.Close()
	p := newPoolWith(t, st, 16, cache.Options{}, cache.Wiring{Log: l})
	require.NoError(t, p.CreateSpace(nil, 1))

	var m cache.Meter
	lsn := commitNote(p, &m, "hello")
	require.NoError(t, l.SyncTo(&m.Counts, lsn+1))
	require.EqualValues(t, 1, m.LogSyncs)
	require.GreaterOrEqual(t, l.Durable(), lsn+1)
	require.NoError(t, st.Sync())
	require.NoError(t, l.SaveCheckpoint([]byte("ckpt")))
	rec, err := l.LoadCheckpoint()
	require.NoError(t, err)
	require.Equal(t, "ckpt", string(rec))
	var notes []string
	require.NoError(t, l.Scan(redo.FirstLSN, func(lsn uint64, body []byte) error {
		_, note, err := redo.Decode(body, nil)
		if err != nil {
			return err
		}
		notes = append(notes, string(note))
		return nil
	}))
	require.Contains(t, notes, "hello")

	_, err = store.OpenPebble(store.PebbleOptions{Volatile: true, Dir: t.TempDir()})
	require.ErrorIs(t, err, store.ErrInvalidOptions)
	_, err = store.OpenPebble(store.PebbleOptions{Volatile: true, FS: vfs.NewMem()})
	require.ErrorIs(t, err, store.ErrInvalidOptions)
}
