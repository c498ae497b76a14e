package cache_test

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/stretchr/testify/require"
)

// requireSorted checks the flush list's invariant: oldest modifications
// never increase from the head (newest) to the tail.
func requireSorted(t testing.TB, p *cache.Pool) []uint64 {
	t.Helper()
	l := p.FlushListOldest()
	for i := 1; i < len(l); i++ {
		require.GreaterOrEqual(t, l[i-1], l[i], "flush list out of order at %d: %v", i, l)
	}
	return l
}

// TestFlushListSortedConcurrent: mini-transactions on several goroutines
// change pages at random while others write pages out and the cleaner
// runs; the flush list stays sorted by oldest modification, and at the
// end every dirty page is on it and nothing clean is.
func TestFlushListSortedConcurrent(t *testing.T) {
	rng := seed(t)
	e := newLogEnv(t, 64, nil)
	require.NoError(t, e.p.CreateSpace(nil, 1))
	var ids []page.ID
	for range 40 {
		ids = append(ids, allocRandom(t, e.p, rng, 1))
	}
	const workers, ops = 4, 300
	var wg sync.WaitGroup
	errs := make(chan error, workers+2)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ops {
				id := ids[(w*7+i*13)%len(ids)]
				mt := e.p.BeginMtr(nil)
				pg, err := e.p.Fetch(nil, id)
				if err != nil {
					errs <- err
					return
				}
				mt.Latch(pg)
				mt.Write(pg, page.HeaderSize+w, []byte{byte(i)})
				mt.Release(pg, true)
				mt.Commit()
			}
		}()
	}
	stop := make(chan struct{})
	var fl sync.WaitGroup
	fl.Add(2)
	go func() { // explicit flushes
		defer fl.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := e.p.FlushPage(nil, ids[i%len(ids)]); err != nil {
				errs <- err
				return
			}
		}
	}()
	go func() { // the cleaner and the checkpoint LSN, and the order
		defer fl.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := e.p.CleanStep(nil, 8, true); err != nil {
				errs <- err
				return
			}
			l := e.p.FlushListOldest()
			for i := 1; i < len(l); i++ {
				if l[i-1] < l[i] {
					errs <- fmt.Errorf("flush list out of order at %d: %v", i, l)
					return
				}
			}
			_ = e.p.CheckpointLSN()
		}
	}()
	wg.Wait()
	close(stop)
	fl.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	l := requireSorted(t, e.p)
	require.Equal(t, e.p.Stats().Dirty, len(l), "the flush list holds exactly the dirty pages")
	require.NoError(t, e.p.FlushAll(nil))
	require.Empty(t, e.p.FlushListOldest())
	require.Equal(t, e.l.End(), e.p.CheckpointLSN(), "nothing dirty: the checkpoint LSN is the log end")
}

// TestCheckpointLSNOldestDirty: the checkpoint LSN is exactly the oldest
// modification still dirty, a page being written counts until its write
// is done, and a page changed after its write's copy keeps only what came
// after.
func TestCheckpointLSNOldestDirty(t *testing.T) {
	rng := seed(t)
	var inWrite func(id page.ID)
	inner := newStore(t)
	st := &hookStore{Store: inner, beforeWrite: func(id page.ID, _ []byte) error {
		if inWrite != nil {
			inWrite(id)
		}
		return nil
	}}
	l, err := redo.Open(inner, nil)
	require.NoError(t, err)
	t.Cleanup(l.Close)
	p := newPoolWith(t, st, 16, cache.Options{}, cache.Wiring{Log: l})
	require.NoError(t, p.CreateSpace(nil, 1))
	a, b := allocRandom(t, p, rng, 1), allocRandom(t, p, rng, 1)
	require.NoError(t, p.FlushAll(nil))
	require.Equal(t, l.End(), p.CheckpointLSN())

	la, _ := changeInMtr(t, p, nil, a, func(mt *cache.Mtr, pg *cache.Page) { scatter(rng, mt, pg, 2) })
	lb, _ := changeInMtr(t, p, nil, b, func(mt *cache.Mtr, pg *cache.Page) { scatter(rng, mt, pg, 2) })
	la2, _ := changeInMtr(t, p, nil, a, func(mt *cache.Mtr, pg *cache.Page) { scatter(rng, mt, pg, 2) })
	require.Less(t, la, lb)
	require.Less(t, lb, la2)
	require.Equal(t, la, p.CheckpointLSN(), "a's first change is the oldest dirty one")
	require.Equal(t, []uint64{lb, la}, requireSorted(t, p), "a keeps its place: oldest, not newest")

	// While a is being written it still counts.
	inWrite = func(id page.ID) {
		if id == a {
			require.Equal(t, la, p.CheckpointLSN(), "a write in flight is still dirty")
		}
	}
	require.NoError(t, p.FlushPage(nil, a))
	inWrite = nil
	require.Equal(t, lb, p.CheckpointLSN(), "a written: b is the oldest")

	// b changes while it is written: the write's image carries lb, the
	// change after it stays on the list, from lb+1.
	var lb2 uint64
	inWrite = func(id page.ID) {
		if id == b && lb2 == 0 {
			lb2, _ = changeInMtr(t, p, nil, b, func(mt *cache.Mtr, pg *cache.Page) { scatter(rng, mt, pg, 2) })
		}
	}
	require.NoError(t, p.FlushPage(nil, b))
	inWrite = nil
	require.NotZero(t, lb2)
	require.Equal(t, lb+1, p.CheckpointLSN(), "b's change after the copy: everything up to lb is in the store")
	require.NoError(t, p.FlushPage(nil, b))
	require.Equal(t, l.End(), p.CheckpointLSN())
	require.Zero(t, p.FlushListLen())
}

// orderLog wraps the redo log and records, with the store's writes, the
// order of syncs: the write-ahead rule's witness.
type orderLog struct {
	*redo.Log
	ev *eventLog
}

func (l orderLog) SyncTo(c *redo.Counts, upto uint64) error {
	err := l.Log.SyncTo(c, upto)
	l.ev.add("sync %d", upto)
	return err
}

// TestPageWriteAfterLogDurable: every page the pool writes (an explicit
// flush, an eviction, a cleaner pass, a flush for log space) carries an
// LSN below the log's durable point at the moment of the write, and the
// write comes after the sync that made it so.
func TestPageWriteAfterLogDurable(t *testing.T) {
	rng := seed(t)
	inner := newStore(t)
	l, err := redo.Open(inner, nil)
	require.NoError(t, err)
	t.Cleanup(l.Close)
	var ev eventLog
	writes := 0
	st := &hookStore{Store: inner, beforeWrite: func(id page.ID, buf []byte) error {
		if lsn := page.LSN(buf); lsn >= l.Durable() {
			return fmt.Errorf("page %s written with LSN %d, but the log is durable only below %d", id, lsn, l.Durable())
		}
		ev.add("write %s", id)
		writes++
		return nil
	}}
	// A low-water mark, so that a cleaner pass flushes from the flush
	// list (a page whose change is not durable yet) for the pool's sake.
	p := newPoolWith(t, st, 16, cache.Options{Policy: cache.PolicyLRU, MaxDirtyPagesPctLWM: 10}, cache.Wiring{Log: orderLog{l, &ev}})
	require.NoError(t, p.CreateSpace(nil, 1))
	var ids []page.ID
	for range 14 {
		ids = append(ids, allocRandom(t, p, rng, 1))
	}
	change := func(id page.ID) {
		changeInMtr(t, p, nil, id, func(mt *cache.Mtr, pg *cache.Page) { scatter(rng, mt, pg, 2) })
	}
	requireSyncFirst := func(what string) {
		t.Helper()
		got := ev.take()
		require.NotEmpty(t, got, what)
		require.True(t, strings.HasPrefix(got[0], "sync "), "%s: %v", what, got)
		require.True(t, slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "write ") }), "%s: %v", what, got)
	}

	ev.take()
	change(ids[0])
	require.NoError(t, p.FlushPage(nil, ids[0]))
	requireSyncFirst("an explicit flush")

	change(ids[1])
	_, err = p.CleanStep(nil, 100, true)
	require.NoError(t, err)
	requireSyncFirst("a cleaner pass")

	change(ids[2])
	_, err = p.FlushUpTo(nil, l.End())
	require.NoError(t, err)
	requireSyncFirst("a flush for log space")

	// An eviction: fill the pool with changed pages and bring in more.
	for _, id := range ids {
		change(id)
	}
	ev.take()
	var m cache.Meter
	for range 4 {
		mt := p.BeginMtr(&m)
		pg, err := p.AllocPage(mt, nil, 1, page.KindHeap)
		require.NoError(t, err)
		mt.Release(pg, true)
		mt.Commit()
	}
	require.Positive(t, m.DirtyWriteBacks)
	requireSyncFirst("an eviction")
	require.Positive(t, writes)
}

// TestCleanerKeepsCleanVictim: in a small pool full of changed pages, a
// fetch of a new page writes its dirty victim itself (DirtyWriteBacks);
// after one cleaner pass it finds a clean victim at the LRU tail and
// writes nothing.
func TestCleanerKeepsCleanVictim(t *testing.T) {
	for _, clean := range []bool{false, true} {
		t.Run(fmt.Sprintf("cleaner=%v", clean), func(t *testing.T) {
			rng := seed(t)
			e := newLogEnv(t, 16, nil)
			require.NoError(t, e.p.CreateSpace(nil, 1))
			var ids []page.ID
			for range 15 {
				ids = append(ids, allocRandom(t, e.p, rng, 1))
			}
			require.NoError(t, e.p.FlushAll(nil))
			for _, id := range ids {
				changeInMtr(t, e.p, nil, id, func(mt *cache.Mtr, pg *cache.Page) { scatter(rng, mt, pg, 2) })
			}
			require.Equal(t, cache.Stats{Frames: 16, Resident: 16, Dirty: 15}, e.p.Stats(), "the pool is full: 15 pages and the space's meta page")
			if clean {
				// The LRU scan looks at an eighth of the frames at the
				// tail (2): both dirty, both written. A budget of 2
				// leaves nothing for the flush list's share.
				var bg cache.Meter
				n, err := e.p.CleanStep(&bg, 2, true)
				require.NoError(t, err)
				require.Equal(t, 2, n)
				require.EqualValues(t, 2, bg.CleanerLRUPages)
				require.Zero(t, bg.CleanerFlushListPages)
				require.EqualValues(t, 1, bg.CleanerPasses)
				require.EqualValues(t, 2, bg.StoreWrites)
				require.EqualValues(t, 13, e.p.Stats().Dirty)
			}
			var m cache.Meter
			mt := e.p.BeginMtr(&m)
			pg, err := e.p.AllocPage(mt, nil, 1, page.KindHeap)
			require.NoError(t, err)
			mt.Release(pg, true)
			mt.Commit()
			require.EqualValues(t, 1, m.Evictions)
			if clean {
				require.Zero(t, m.DirtyWriteBacks, "the cleaner left a clean victim at the tail")
			} else {
				require.EqualValues(t, 1, m.DirtyWriteBacks, "no cleaner: the fetch writes its victim")
			}
		})
	}
}

// TestFlushTarget checks the adaptive flushing's numbers (InnoDB's
// af_get_pct_for_lsn and af_get_pct_for_dirty) at the defaults: 200 and
// 2000 pages a second, a 96 MiB log.
func TestFlushTarget(t *testing.T) {
	const capacity = cache.DefaultLogCapacity
	async := cache.LogAsyncPoint(capacity)
	require.EqualValues(t, capacity-capacity/8, async)
	require.EqualValues(t, capacity-capacity/16, cache.LogSyncPoint(capacity))
	for _, c := range []struct {
		age          uint64
		dirty, total int
		want         int
	}{
		{0, 0, 1000, 0},
		{capacity/10 - 1, 50, 1000, 0}, // below the low-water mark, 5% dirty
		{0, 100, 1000, 0},              // 10% dirty, no low-water mark: nothing
		{0, 899, 1000, 0},              // 89.9% dirty: nothing yet
		{0, 900, 1000, 200},            // 90% dirty: 100% of 200
		{capacity / 10, 0, 1000, 103},  // at the lwm: f = 11.43, 10·f·√f/7.5 = 51.5%
		{async / 2, 0, 1000, 942},      // f = 50: 471%
		{async, 0, 1000, 2000},         // f = 100: 1333%, capped at 2000
		{cache.LogSyncPoint(capacity), 0, 1000, 2000},
	} {
		got := cache.FlushTargetFor(cache.Options{}, capacity, c.age, c.dirty, c.total)
		require.Equal(t, c.want, got, "age %d, %d of %d dirty", c.age, c.dirty, c.total)
	}
	// With MySQL 8.0's low-water mark of 10%, gradually.
	lwm := cache.Options{MaxDirtyPagesPctLWM: 10}
	for _, c := range []struct {
		dirty, total int
		want         int
	}{
		{99, 1000, 0},    // 9.9% dirty: below the mark
		{100, 1000, 21},  // 10% dirty: 10·100/91 = 10.99% of 200
		{900, 1000, 197}, // 90% dirty: 98.9% of 200
	} {
		got := cache.FlushTargetFor(lwm, capacity, 0, c.dirty, c.total)
		require.Equal(t, c.want, got, "lwm 10, %d of %d dirty", c.dirty, c.total)
	}
}

// TestCleanerGoroutineStops: a pool wired with CleanerGoroutine runs its
// cleaner on one goroutine, and Close stops it and waits for it: none is
// left behind.
func TestCleanerGoroutineStops(t *testing.T) {
	count := func() int {
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		return strings.Count(string(buf[:n]), "cache.(*Pool).runCleaner")
	}
	require.Zero(t, count())
	st := newStore(t)
	l, err := redo.Open(st, nil)
	require.NoError(t, err)
	t.Cleanup(l.Close)
	p := newPoolWith(t, st, 16, cache.Options{}, cache.Wiring{Log: l, Cleaner: cache.CleanerGoroutine})
	settle := func(want int) {
		// A goroutine just started, or just returned, may not show in
		// (or leave) the stacks at once: yield until it does.
		for range 1000 {
			if count() == want {
				break
			}
			runtime.Gosched()
		}
		require.Equal(t, want, count())
	}
	settle(1)
	p.WakeCleaner() // a pass now, never blocking
	p.WakeCleaner()
	require.NoError(t, p.Close())
	// StopCleaner returned after the goroutine closed its done channel,
	// its last act: once it has unwound it is gone.
	settle(0)
	p.StopCleaner() // again: nothing to stop

	// Without a log there is no cleaner to run.
	q := newPoolWith(t, newStore(t), 16, cache.Options{}, cache.Wiring{Cleaner: cache.CleanerGoroutine})
	require.Zero(t, count())
	require.NoError(t, q.Close())
}

// TestCleanerOptions: the cleaner's options are validated.
func TestCleanerOptions(t *testing.T) {
	for _, o := range []cache.Options{
		{IOCapacity: 99},
		{IOCapacity: -1},
		{IOCapacity: 500, IOCapacityMax: 400},
		{LRUScanDepth: -1},
		{MaxDirtyPagesPctLWM: -1},
		{MaxDirtyPagesPctLWM: cache.MaxDirtyPagesPct + 1},
	} {
		err := o.Validate(page.DefaultSize)
		require.True(t, errors.Is(err, cache.ErrInvalidOptions), "%+v: %v", o, err)
	}
	require.NoError(t, cache.Options{IOCapacity: 100}.Validate(page.DefaultSize))
	require.NoError(t, cache.Options{MaxDirtyPagesPctLWM: cache.MaxDirtyPagesPct}.Validate(page.DefaultSize))
	_, err := cache.NewPool(newStore(t), nil, &cache.Wiring{LogCapacity: -1})
	require.ErrorIs(t, err, cache.ErrInvalidOptions)
}
