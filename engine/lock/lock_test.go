package lock

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// fakeParker is the simulator's seam, driven by the test: every parked
// request is announced on parked, and stays parked until it is granted or
// the test expires it (the scheduler deciding virtual time passed its
// deadline).
type fakeParker struct {
	parked  chan *Wait
	mu      sync.Mutex
	expires map[uint64]chan struct{}
}

func newFakeParker() *fakeParker {
	return &fakeParker{parked: make(chan *Wait, 16), expires: map[uint64]chan struct{}{}}
}

func (p *fakeParker) Park(w *Wait) bool {
	ch := make(chan struct{})
	p.mu.Lock()
	p.expires[w.Tx] = ch
	p.mu.Unlock()
	p.parked <- w
	select {
	case <-w.Ready():
		return true
	case <-ch:
		return false
	}
}

func (p *fakeParker) expire(tx uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.expires[tx])
}

type lockEnv struct {
	lm     *Manager
	clock  *fakeClock
	parker *fakeParker
}

func newLockEnv() *lockEnv {
	c := &fakeClock{now: time.Unix(1000, 0)}
	p := newFakeParker()
	return &lockEnv{lm: NewManager(c, p, 50*time.Second), clock: c, parker: p}
}

func key(k string) Key { return RowKey(1, []byte(k)) }

// lockAsync requests a lock on another goroutine; the result arrives on the
// returned channel.
func (e *lockEnv) lockAsync(m *Counters, tx uint64, k string, mode Mode) chan error {
	done := make(chan error, 1)
	go func() { done <- e.lm.Lock(m, tx, key(k), mode) }()
	return done
}

func TestLockSharedAndExclusive(t *testing.T) {
	e := newLockEnv()
	var m Counters
	require.NoError(t, e.lm.Lock(&m, 1, key("a"), Shared))
	require.NoError(t, e.lm.Lock(&m, 2, key("a"), Shared))
	require.NoError(t, e.lm.Lock(&m, 1, key("a"), Shared)) // already held
	require.Equal(t, Counters{LockRequests: 3}, m)

	// An exclusive request waits for both sharers, for exactly the time
	// the clock moved.
	var mx Counters
	done := e.lockAsync(&mx, 3, "a", Exclusive)
	w := <-e.parker.parked
	require.Equal(t, uint64(3), w.Tx)
	require.Equal(t, time.Unix(1050, 0), w.Deadline)
	e.clock.advance(7 * time.Millisecond)
	e.lm.ReleaseAll(1)
	select {
	case err := <-done:
		t.Fatalf("granted while transaction 2 still shares the row: %v", err)
	default:
	}
	e.lm.ReleaseAll(2)
	require.NoError(t, <-done)
	require.Equal(t, Counters{LockRequests: 1, LockWaits: 1, LockWaitNanos: int64(7 * time.Millisecond)}, mx)
	require.Equal(t, 1, e.lm.Held(3))
}

// A request waits behind an earlier incompatible one even when it is
// compatible with the holders: a stream of sharers cannot starve a writer.
func TestLockFirstComeFirstServed(t *testing.T) {
	e := newLockEnv()
	require.NoError(t, e.lm.Lock(nil, 1, key("a"), Shared))
	x := e.lockAsync(nil, 2, "a", Exclusive)
	<-e.parker.parked
	s := e.lockAsync(nil, 3, "a", Shared)
	<-e.parker.parked
	e.lm.ReleaseAll(1)
	require.NoError(t, <-x)
	select {
	case err := <-s:
		t.Fatalf("a sharer passed a waiting writer: %v", err)
	default:
	}
	e.lm.ReleaseAll(2)
	require.NoError(t, <-s)
}

func TestLockUpgrade(t *testing.T) {
	e := newLockEnv()
	require.NoError(t, e.lm.Lock(nil, 1, key("a"), Shared))
	require.NoError(t, e.lm.Lock(nil, 2, key("a"), Shared))
	up := e.lockAsync(nil, 1, "a", Exclusive)
	<-e.parker.parked
	e.lm.ReleaseAll(2)
	require.NoError(t, <-up)
	require.Equal(t, 1, e.lm.Held(1), "an upgrade is still one row")
	// Once exclusive, any request of the holder is granted at once.
	require.NoError(t, e.lm.Lock(nil, 1, key("a"), Shared))
}

func TestLockDeadlocks(t *testing.T) {
	t.Run("two transactions", func(t *testing.T) {
		e := newLockEnv()
		require.NoError(t, e.lm.Lock(nil, 1, key("a"), Exclusive))
		require.NoError(t, e.lm.Lock(nil, 2, key("b"), Exclusive))
		w1 := e.lockAsync(nil, 1, "b", Exclusive)
		<-e.parker.parked
		var m Counters
		err := e.lm.Lock(&m, 2, key("a"), Exclusive)
		require.ErrorIs(t, err, ErrDeadlock)
		require.Equal(t, int64(1), m.Deadlocks)
		require.Zero(t, m.LockWaits, "the victim never waited")
		e.lm.ReleaseAll(2) // the victim rolls back
		require.NoError(t, <-w1)
	})
	t.Run("three transactions", func(t *testing.T) {
		e := newLockEnv()
		for tx, k := range map[uint64]string{1: "a", 2: "b", 3: "c"} {
			require.NoError(t, e.lm.Lock(nil, tx, key(k), Exclusive))
		}
		w1 := e.lockAsync(nil, 1, "b", Exclusive)
		<-e.parker.parked
		w2 := e.lockAsync(nil, 2, "c", Shared)
		<-e.parker.parked
		require.ErrorIs(t, e.lm.Lock(nil, 3, key("a"), Shared), ErrDeadlock)
		e.lm.ReleaseAll(3)
		require.NoError(t, <-w2)
		e.lm.ReleaseAll(2)
		require.NoError(t, <-w1)
	})
	t.Run("two upgrades", func(t *testing.T) {
		e := newLockEnv()
		require.NoError(t, e.lm.Lock(nil, 1, key("a"), Shared))
		require.NoError(t, e.lm.Lock(nil, 2, key("a"), Shared))
		up := e.lockAsync(nil, 1, "a", Exclusive)
		<-e.parker.parked
		require.ErrorIs(t, e.lm.Lock(nil, 2, key("a"), Exclusive), ErrDeadlock)
		e.lm.ReleaseAll(2)
		require.NoError(t, <-up)
	})
	t.Run("no false deadlock", func(t *testing.T) {
		// 1 waits for 2, 3 waits for 2: no cycle.
		e := newLockEnv()
		require.NoError(t, e.lm.Lock(nil, 2, key("a"), Exclusive))
		w1 := e.lockAsync(nil, 1, "a", Shared)
		<-e.parker.parked
		w3 := e.lockAsync(nil, 3, "a", Shared)
		<-e.parker.parked
		e.lm.ReleaseAll(2)
		require.NoError(t, <-w1)
		require.NoError(t, <-w3)
	})
}

func TestLockTimeout(t *testing.T) {
	e := newLockEnv()
	require.NoError(t, e.lm.Lock(nil, 1, key("a"), Exclusive))
	var m Counters
	done := e.lockAsync(&m, 2, "a", Exclusive)
	w := <-e.parker.parked
	behind := e.lockAsync(nil, 3, "a", Shared)
	<-e.parker.parked
	e.clock.advance(w.Deadline.Sub(e.clock.Now()))
	e.parker.expire(2)
	err := <-done
	require.ErrorIs(t, err, ErrTimeout)
	require.Equal(t, Counters{LockRequests: 1, LockWaits: 1, LockWaitNanos: int64(50 * time.Second), LockTimeouts: 1}, m)
	require.Zero(t, e.lm.Held(2))
	// The request behind the timed-out one is served when the row frees.
	e.lm.ReleaseAll(1)
	require.NoError(t, <-behind)
	e.lm.ReleaseAll(3)
	e.lm.mu.Lock()
	require.Empty(t, e.lm.locks, "the lock table keeps nothing once every lock is gone")
	require.Empty(t, e.lm.waiting)
	e.lm.mu.Unlock()
}

// TestLockConcurrent runs transactions that each lock a few random rows
// exclusively (and read others shared), with the real blocking parker,
// under -race. A row's exclusive holder is alone: a counter per row checks
// it. Deadlock victims release everything and retry.
func TestLockConcurrent(t *testing.T) {
	lm := NewManager(wallClock{}, BlockingParker{Clock: wallClock{}}, 10*time.Second)
	const rows, workers, txs = 8, 6, 200
	var inside [rows]atomic.Int32
	var deadlocks atomic.Int64
	var txSeq atomic.Uint64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for g := 0; g < workers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(11, uint64(g)))
			for done := 0; done < txs; {
				tx := txSeq.Add(1)
				var mine []int
				ok := true
				for i := 0; i < 3; i++ {
					row := r.IntN(rows)
					mode := Exclusive
					if r.IntN(3) == 0 {
						mode = Shared
					}
					err := lm.Lock(nil, tx, key(fmt.Sprint(row)), mode)
					if errors.Is(err, ErrDeadlock) {
						deadlocks.Add(1)
						ok = false
						break
					}
					if err != nil {
						errs <- err
						lm.ReleaseAll(tx)
						return
					}
					if mode == Exclusive {
						mine = append(mine, row)
					}
				}
				if ok {
					seen := map[int]bool{}
					for _, row := range mine {
						if seen[row] {
							continue
						}
						seen[row] = true
						if n := inside[row].Add(1); n != 1 {
							errs <- fmt.Errorf("row %d has %d exclusive holders", row, n)
						}
					}
					for row := range seen {
						inside[row].Add(-1)
					}
					done++
				}
				lm.ReleaseAll(tx)
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	t.Logf("deadlocks resolved: %d", deadlocks.Load())
	lm.mu.Lock()
	defer lm.mu.Unlock()
	require.Empty(t, lm.locks)
	require.Empty(t, lm.owners)
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// A granted request and its release make no allocation once the manager
// has warmed up (a TPC-C transaction takes dozens of locks).
func TestLockNoAllocations(t *testing.T) {
	e := newLockEnv()
	var m Counters
	keys := []Key{key("a"), key("b"), key("c")}
	o := Owner{ID: 7} // as a Tx carries it
	run := func() {
		for _, k := range keys {
			if err := e.lm.LockAs(&m, &o, k, Exclusive); err != nil {
				t.Fatal(err)
			}
		}
		e.lm.Release(&o)
	}
	run()
	require.Zero(t, testing.AllocsPerRun(100, run))
}
