// The lock manager's tests are data-driven (github.com/cockroachdb/datadriven,
// as in pebble): each file under testdata is a script of commands, each
// followed by the output it must produce. Run with -rewrite to write the
// actual outputs into the files, then read the diff.
//
// The manager runs on a fake clock and a fake Parker, so every wait, grant,
// deadlock and timeout happens at a moment the script chooses. A request
// that must wait runs on its own goroutine, parked in the fake Parker; the
// harness learns that it parked before the command returns, and after every
// command it reports, in arrival order, each parked request the command
// granted (a grant happens inside the manager's mutex, before the releasing
// call returns, so the report is deterministic).
//
// Commands (keys are names: key=a is RowKey(1, "a"); modes are s and x;
// durations are Go durations; times are printed as the time since the
// manager was made):
//
//	new [timeout=<duration>]
//	    A fresh manager (lock timeout 50s unless given), its clock at 0.
//	    Every file starts with it.
//	acquire tx=<n> key=<k> mode=s|x [meter=<name>]
//	    Lock: prints "granted", or "deadlock victim: <error>", or
//	    "waits until <deadline>" when the request parks. meter names the
//	    Counters the request charges (made on first use); without it the
//	    request charges none (a nil meter).
//	release tx=<n>
//	    ReleaseAll: prints what it granted, or "ok".
//	advance by=<duration>
//	    Moves the clock; prints the time. Nothing times out by itself.
//	expire tx=<n>
//	    The Parker gives up tx's wait, as the simulator does once virtual
//	    time reaches the deadline (the clock must have reached it): prints
//	    the request's error and what its withdrawal granted.
//	held tx=<n>
//	    Held: the number of rows tx holds locks on.
//	meter name=<name>
//	    The named Counters.
//	show
//	    The lock table: each key's holders (in grant order) and queue (in
//	    arrival order), the transactions waiting, and the owners the
//	    manager tracks by transaction id.
//
// A granted wait is reported as "tx=<n> granted <key> <mode> after
// <duration>", the duration measured from the wait's Start on the fake
// clock (what Counters.LockWaitNanos adds).
package lock

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"
)

// epoch is the fake clock's start.
var epoch = time.Unix(1000, 0)

// fakeClock is a settable clock.
type fakeClock struct {
	mu  sync.Mutex // guards now: parked requests' goroutines read it
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
// the test expires it (the scheduler deciding virtual time reached its
// deadline).
type fakeParker struct {
	parked  chan *Wait
	mu      sync.Mutex // guards expires: parking goroutines add to it
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
	delete(p.expires, tx)
}

// request is a lock request the harness started: while it waits, w is its
// Wait and done will carry Lock's result.
type request struct {
	tx   uint64
	key  string
	mode Mode
	w    *Wait
	done chan error
}

// harness runs one testdata file.
type harness struct {
	lm      *Manager
	clock   *fakeClock
	parker  *fakeParker
	names   map[Key]string
	meters  map[string]*Counters
	pending []*request // parked, in arrival order
}

func newHarness(timeout time.Duration) *harness {
	c := &fakeClock{now: epoch}
	p := newFakeParker()
	return &harness{lm: NewManager(c, p, timeout), clock: c, parker: p,
		names: map[Key]string{}, meters: map[string]*Counters{}}
}

func (h *harness) key(name string) Key {
	k := RowKey(1, []byte(name))
	h.names[k] = name
	return k
}

func parseMode(t testing.TB, s string) Mode {
	switch s {
	case "s":
		return Shared
	case "x":
		return Exclusive
	}
	t.Fatalf("mode %q: want s or x", s)
	return 0
}

func since(t time.Time) time.Duration { return t.Sub(epoch) }

// settle reports, in arrival order, the parked requests that are granted
// now, and waits for their Lock calls to return.
func (h *harness) settle(t testing.TB, b *strings.Builder) {
	h.pending = slices.DeleteFunc(h.pending, func(r *request) bool {
		select {
		case <-r.w.Ready():
		default:
			return false
		}
		if err := <-r.done; err != nil {
			t.Fatalf("tx %d: granted, yet Lock returned %v", r.tx, err)
		}
		fmt.Fprintf(b, "tx=%d granted %s %s after %v\n", r.tx, r.key, r.mode, h.clock.Now().Sub(r.w.Start))
		return true
	})
}

func (h *harness) run(t testing.TB, d *datadriven.TestData) string {
	var b strings.Builder
	var tx uint64
	if d.Cmd != "new" && h == nil {
		t.Fatalf("%s: the file must start with new", d.Pos)
	}
	switch d.Cmd {
	case "acquire":
		var k, mode, meter string
		d.ScanArgs(t, "tx", &tx)
		d.ScanArgs(t, "key", &k)
		d.ScanArgs(t, "mode", &mode)
		var m *Counters
		if d.MaybeScanArgs(t, "meter", &meter) {
			if m = h.meters[meter]; m == nil {
				m = &Counters{}
				h.meters[meter] = m
			}
		}
		r := &request{tx: tx, key: k, mode: parseMode(t, mode), done: make(chan error, 1)}
		key := h.key(k)
		go func() { r.done <- h.lm.Lock(m, r.tx, key, r.mode) }()
		select {
		case err := <-r.done:
			switch {
			case err == nil:
				b.WriteString("granted\n")
			case errors.Is(err, ErrDeadlock):
				fmt.Fprintf(&b, "deadlock victim: %v\n", err)
			default:
				t.Fatalf("tx %d: %v", tx, err)
			}
		case r.w = <-h.parker.parked:
			if r.w.Tx != tx || r.w.Key != key || r.w.Mode != r.mode {
				t.Fatalf("parked %+v, want tx %d key %s mode %s", r.w, tx, k, r.mode)
			}
			h.pending = append(h.pending, r)
			fmt.Fprintf(&b, "waits until %v\n", since(r.w.Deadline))
		}
	case "release":
		d.ScanArgs(t, "tx", &tx)
		h.lm.ReleaseAll(tx)
	case "advance":
		var by time.Duration
		d.ScanArgs(t, "by", &by)
		h.clock.advance(by)
		fmt.Fprintf(&b, "now %v\n", since(h.clock.Now()))
	case "expire":
		d.ScanArgs(t, "tx", &tx)
		i := slices.IndexFunc(h.pending, func(r *request) bool { return r.tx == tx })
		if i < 0 {
			t.Fatalf("%s: tx %d is not waiting", d.Pos, tx)
		}
		r := h.pending[i]
		if h.clock.Now().Before(r.w.Deadline) {
			t.Fatalf("%s: tx %d's wait ends at %v, the clock is at %v", d.Pos, tx, since(r.w.Deadline), since(h.clock.Now()))
		}
		h.pending = slices.Delete(h.pending, i, i+1)
		h.parker.expire(tx)
		err := <-r.done
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("tx %d expired: Lock returned %v, want ErrTimeout", tx, err)
		}
		fmt.Fprintf(&b, "tx=%d timed out after %v: %v\n", tx, h.clock.Now().Sub(r.w.Start), err)
	case "held":
		d.ScanArgs(t, "tx", &tx)
		fmt.Fprintf(&b, "%d\n", h.lm.Held(tx))
	case "meter":
		var name string
		d.ScanArgs(t, "name", &name)
		m := h.meters[name]
		if m == nil {
			t.Fatalf("%s: no meter %q", d.Pos, name)
		}
		fmt.Fprintf(&b, "requests=%d waits=%d wait=%v deadlocks=%d timeouts=%d\n",
			m.LockRequests, m.LockWaits, time.Duration(m.LockWaitNanos), m.Deadlocks, m.LockTimeouts)
	case "show":
		h.show(&b)
	default:
		t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	}
	h.settle(t, &b)
	if b.Len() == 0 {
		return "ok\n"
	}
	return b.String()
}

// show prints the lock table.
func (h *harness) show(b *strings.Builder) {
	h.lm.latchAll()
	defer h.lm.unlatchAll()
	locks := h.lm.allLocksLocked()
	name := func(k Key) string {
		if n, ok := h.names[k]; ok {
			return n
		}
		return fmt.Sprintf("%d/%x", k.Table, k.Hash)
	}
	keys := make([]Key, 0, len(locks))
	for k := range locks {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return name(keys[i]) < name(keys[j]) })
	if len(keys) == 0 {
		b.WriteString("locks: none\n")
	}
	for _, k := range keys {
		st := locks[k]
		fmt.Fprintf(b, "%s: held by", name(k))
		for _, x := range st.holders {
			fmt.Fprintf(b, " tx=%d:%s", x.tx, x.mode)
		}
		if len(st.queue) > 0 {
			b.WriteString("; queue")
			for _, w := range st.queue {
				fmt.Fprintf(b, " tx=%d:%s", w.Tx, w.Mode)
			}
		}
		b.WriteString("\n")
	}
	ids := func(m map[uint64]bool) string {
		if len(m) == 0 {
			return " none"
		}
		var s []uint64
		for id := range m {
			s = append(s, id)
		}
		slices.Sort(s)
		var out strings.Builder
		for _, id := range s {
			fmt.Fprintf(&out, " %d", id)
		}
		return out.String()
	}
	waiting := map[uint64]bool{}
	for tx := range h.lm.waiting {
		waiting[tx] = true
	}
	owners := map[uint64]bool{}
	h.lm.ownersMu.Lock()
	for tx := range h.lm.owners {
		owners[tx] = true
	}
	h.lm.ownersMu.Unlock()
	fmt.Fprintf(b, "waiting:%s\nowners:%s\n", ids(waiting), ids(owners))
}

func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var h *harness
		defer func() {
			// Leave no goroutine parked: grant what still waits.
			if h != nil {
				for _, r := range h.pending {
					h.parker.expire(r.tx)
					<-r.done
				}
			}
		}()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd == "new" {
				timeout := 50 * time.Second
				d.MaybeScanArgs(t, "timeout", &timeout)
				h = newHarness(timeout)
				return "ok\n"
			}
			return h.run(t, d)
		})
	})
}

// TestLockConcurrent runs transactions that each lock a few random rows
// exclusively (and read others shared), with the real blocking parker,
// under -race. A row's exclusive holder is alone: a counter per row checks
// it. Deadlock victims release everything and retry.
func TestLockConcurrent(t *testing.T) {
	lm := NewManager(wallClock{}, RealParker{Clock: wallClock{}}, 10*time.Second)
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
	lm.latchAll()
	defer lm.unlatchAll()
	require.Empty(t, lm.allLocksLocked())
	require.Empty(t, lm.waiting)
	require.Empty(t, lm.owners)
}

// allLocksLocked returns the lock table of every shard as one map.
// REQUIRES: every shard latched.
func (lm *Manager) allLocksLocked() map[Key]*lockState {
	all := map[Key]*lockState{}
	for i := range lm.shards {
		lm.shards[i].eachLocked(func(st *lockState) { all[st.key] = st })
	}
	return all
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func key(k string) Key { return RowKey(1, []byte(k)) }

// A granted request and its release make no allocation once the manager
// has warmed up (a TPC-C transaction takes dozens of locks).
func TestLockNoAllocations(t *testing.T) {
	lm := NewManager(&fakeClock{now: epoch}, newFakeParker(), 50*time.Second)
	var m Counters
	keys := []Key{key("a"), key("b"), key("c")}
	o := Owner{ID: 7} // as a Tx carries it
	run := func() {
		for _, k := range keys {
			if err := lm.LockAs(&m, &o, k, Exclusive); err != nil {
				t.Fatal(err)
			}
		}
		lm.Release(&o)
	}
	run()
	require.Zero(t, testing.AllocsPerRun(100, run))
}

// handoffParker is fakeParker that counts the releases that granted a
// waiting request (Handoff).
type handoffParker struct {
	*fakeParker
	handoffs atomic.Int64
}

func (p *handoffParker) Handoff() { p.handoffs.Add(1) }

// A release calls the parker's Handoff once when it granted at least one
// waiting request, and not when nobody waited or the waiter still cannot
// be granted.
func TestReleaseHandoff(t *testing.T) {
	p := &handoffParker{fakeParker: newFakeParker()}
	lm := NewManager(&fakeClock{now: epoch}, p, 50*time.Second)
	a, b, c := RowKey(1, []byte("a")), RowKey(1, []byte("b")), RowKey(1, []byte("c"))
	require.NoError(t, lm.Lock(nil, 1, a, Exclusive))
	require.NoError(t, lm.Lock(nil, 1, b, Exclusive))
	lm.ReleaseAll(1)
	require.Zero(t, p.handoffs.Load(), "nobody waited")

	// Transaction 3 waits on a (held by 2); 4 waits on c behind 2 and 5.
	require.NoError(t, lm.Lock(nil, 2, a, Exclusive))
	require.NoError(t, lm.Lock(nil, 2, c, Shared))
	require.NoError(t, lm.Lock(nil, 5, c, Shared))
	done3, done4 := make(chan error, 1), make(chan error, 1)
	go func() { done3 <- lm.Lock(nil, 3, a, Exclusive) }()
	<-p.parked
	go func() { done4 <- lm.Lock(nil, 4, c, Exclusive) }()
	<-p.parked
	lm.ReleaseAll(2) // grants 3 on a; 4 still waits for 5 on c
	require.NoError(t, <-done3)
	require.Equal(t, int64(1), p.handoffs.Load(), "one release, one hand-off, however many it granted")
	lm.ReleaseAll(3)
	require.Equal(t, int64(1), p.handoffs.Load(), "nobody waited on a any more")
	lm.ReleaseAll(5)
	require.NoError(t, <-done4)
	require.Equal(t, int64(2), p.handoffs.Load())
	lm.ReleaseAll(4)
}

// TestDeadlockAcrossShards: a cycle whose rows live in different shards of
// the lock table is found (the walk latches every shard), its closer is
// the one victim, and a walk that finds no cycle leaves the requester
// waiting until the holder releases.
func TestDeadlockAcrossShards(t *testing.T) {
	p := newFakeParker()
	lm := NewManager(&fakeClock{now: epoch}, p, 50*time.Second)
	a := RowKey(1, []byte("a"))
	var b Key
	for i := 0; ; i++ {
		if b = RowKey(2, fmt.Appendf(nil, "b%d", i)); lm.shardOf(b) != lm.shardOf(a) {
			break
		}
	}
	var m1, m2 Counters
	require.NoError(t, lm.Lock(&m1, 1, a, Exclusive))
	require.NoError(t, lm.Lock(&m2, 2, b, Exclusive))
	done1 := make(chan error, 1)
	go func() { done1 <- lm.Lock(&m1, 1, b, Exclusive) }()
	<-p.parked
	err := lm.Lock(&m2, 2, a, Exclusive)
	require.ErrorIs(t, err, ErrDeadlock)
	require.Equal(t, Counters{LockRequests: 2, Deadlocks: 1}, m2, "the victim never waited")
	lm.ReleaseAll(2)
	require.NoError(t, <-done1)
	require.Equal(t, int64(1), m1.LockWaits)
	require.Equal(t, int64(0), m1.Deadlocks)
	require.Equal(t, 2, lm.Held(1))
	lm.ReleaseAll(1)
	lm.latchAll()
	defer lm.unlatchAll()
	require.Empty(t, lm.allLocksLocked())
	require.Empty(t, lm.waiting)
}

// TestLockTableGrows: a transaction holding many more rows than a shard
// has buckets finds each again (a second request is granted from its
// own holding, not counted as a new state), another transaction's
// exclusive request on one of them waits its turn, and the release
// empties every shard's table (states, counts and chains).
func TestLockTableGrows(t *testing.T) {
	lm := NewManager(wallClock{}, RealParker{Clock: wallClock{}}, time.Minute)
	const rows = 20 * lockShards * minBuckets // every shard grows at least twice
	o := &Owner{ID: 1}
	var m Counters
	keyOf := func(i int) Key { return RowKey(uint32(1+i%3), []byte(strconv.Itoa(i))) }
	for i := range rows {
		require.NoError(t, lm.LockAs(&m, o, keyOf(i), Exclusive))
	}
	for i := range rows {
		require.NoError(t, lm.LockAs(&m, o, keyOf(i), Shared), "row %d: held already", i)
	}
	require.Equal(t, rows, lm.HeldBy(o))
	lm.latchAll()
	require.Len(t, lm.allLocksLocked(), rows)
	for i := range lm.shards {
		sh := &lm.shards[i]
		require.Greater(t, len(sh.buckets), minBuckets, "shard %d", i)
		var n int
		sh.eachLocked(func(st *lockState) {
			n++
			require.Same(t, st, sh.lookupLocked(st.key))
		})
		require.Equal(t, sh.n, n, "shard %d", i)
	}
	lm.unlatchAll()

	granted := make(chan error, 1)
	o2 := &Owner{ID: 2}
	go func() { granted <- lm.LockAs(&Counters{}, o2, keyOf(rows/2), Exclusive) }()
	// The second transaction's request queues on the row's state; wait
	// for that, not for time.
	for {
		lm.waitMu.Lock()
		_, queued := lm.waiting[2]
		lm.waitMu.Unlock()
		if queued {
			break
		}
		runtime.Gosched()
	}
	lm.Release(o)
	require.NoError(t, <-granted)
	require.Equal(t, 1, lm.HeldBy(o2))
	lm.Release(o2)
	lm.latchAll()
	defer lm.unlatchAll()
	require.Empty(t, lm.allLocksLocked())
	for i := range lm.shards {
		require.Zero(t, lm.shards[i].n, "shard %d", i)
	}
	require.Equal(t, int64(2*rows), m.LockRequests)
	require.Zero(t, m.LockWaits)
}
