package cache_test

import (
	"encoding/binary"
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/stretchr/testify/require"
)

// testPageSize is the page size of every test store: the smallest allowed,
// so that the pools and stores of the tests stay small.
const testPageSize = 4096

// newStore opens an in-memory pebble store with 4 KiB pages, closed when
// the test ends.
func newStore(t testing.TB) *store.PebbleStore {
	t.Helper()
	st, err := store.OpenPebble(store.PebbleOptions{PageSize: testPageSize})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	return st
}

// newPool makes a pool of exactly frames frames over st; o supplies the
// other options.
func newPool(t testing.TB, st store.Store, frames int, o cache.Options) *cache.Pool {
	t.Helper()
	return newPoolWith(t, st, frames, o, cache.Wiring{})
}

// newPoolWith is newPool connected to what w names (a log, a clock).
func newPoolWith(t testing.TB, st store.Store, frames int, o cache.Options, w cache.Wiring) *cache.Pool {
	t.Helper()
	o.PoolSize = int64(frames * st.PageSize())
	p, err := cache.NewPool(st, &o, &w)
	require.NoError(t, err)
	require.Equal(t, frames, p.Frames())
	return p
}

// seedFlag fixes the random choices of every test. The default keeps runs
// identical; pass -seed=N to explore others. Each test logs its own seed and
// the -seed value that reproduces it.
var seedFlag = flag.Uint64("seed", 1, "base seed of the cache tests' random choices")

// seed returns this test's random source, derived from -seed and the test's
// name, and logs the seed so that a failure can be reproduced.
func seed(t testing.TB) *rand.Rand {
	t.Helper()
	h := fnv.New64a()
	h.Write([]byte(t.Name()))
	s := *seedFlag ^ h.Sum64()
	t.Logf("seed %d (-seed=%d)", s, *seedFlag)
	return rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))
}

// putPage writes a sealed page straight into the store: kind k, LSN lsn,
// body copied right after the header.
func putPage(t testing.TB, st store.Store, id page.ID, k page.Kind, lsn uint64, body string) {
	t.Helper()
	buf := make([]byte, st.PageSize())
	page.Init(buf, id, k)
	page.SetLSN(buf, lsn)
	copy(buf[page.HeaderSize:], body)
	page.Seal(buf)
	require.NoError(t, st.WritePage(id, buf))
}

// putPages writes pages first..last of space as heap pages whose body names
// the page.
func putPages(t testing.TB, st store.Store, space, first, last uint32) {
	t.Helper()
	for n := first; n <= last; n++ {
		id := page.ID{Space: space, Page: n}
		putPage(t, st, id, page.KindHeap, 0, "page "+id.String())
	}
}

// body returns the first n bytes after the header as a string.
func body(pg *cache.Page, n int) string {
	return string(pg.Data()[page.HeaderSize : page.HeaderSize+n])
}

// setBody overwrites the start of the page body. The caller holds the
// exclusive latch, outside any mtr (a pool test's raw change).
func setBody(pg *cache.Page, s string) { copy(pg.Data()[page.HeaderSize:], s) }

// writeBody is setBody inside mt: the change is logged (a redo.KindWrite).
func writeBody(mt *cache.Mtr, pg *cache.Page, s string) {
	mt.Write(pg, page.HeaderSize, []byte(s))
}

// storedBody reads page id straight from the store and returns the first n
// body bytes.
func storedBody(t testing.TB, st store.Store, id page.ID, n int) string {
	t.Helper()
	buf := make([]byte, st.PageSize())
	require.NoError(t, st.ReadPage(id, buf))
	return string(buf[page.HeaderSize : page.HeaderSize+n])
}

// touch fetches page id and unpins it at once, failing the test on error.
func touch(t testing.TB, p *cache.Pool, m *cache.Meter, id page.ID) {
	t.Helper()
	pg, err := p.Fetch(m, id)
	require.NoError(t, err, "fetch %s", id)
	pg.Unpin(false)
}

// pid is a short PageID constructor.
func pid(space, no uint32) page.ID { return page.ID{Space: space, Page: no} }

// residentSet lists which of pages lo..hi of space are resident.
func residentSet(p *cache.Pool, space, lo, hi uint32) []uint32 {
	var out []uint32
	for n := lo; n <= hi; n++ {
		if p.Resident(pid(space, n)) {
			out = append(out, n)
		}
	}
	return out
}

// seq returns the page numbers lo..hi.
func seq(lo, hi uint32) []uint32 {
	var out []uint32
	for n := lo; n <= hi; n++ {
		out = append(out, n)
	}
	return out
}

// fakeClock is a Clock whose time only moves when the test says so.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2009, 11, 10, 23, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Loading implements cache.FrameTimer: pages are ready at once, as in
// real mode, so a fakeClock is a whole cache.Runtime.
func (c *fakeClock) Loading(fromTier, background bool) *int64 { return nil }

func (c *fakeClock) PageWriteWait(bool) {}

// Hit implements cache.FrameTimer; it is never called (Loading gives no
// cell).
func (c *fakeClock) Hit(ready *int64) {}

var _ cache.Runtime = (*fakeClock)(nil)

// hookStore wraps a Store and calls hooks before each read and write, so
// that a test can log, fail or block them. Hooks are set before the store
// is shared and not changed afterwards.
type hookStore struct {
	store.Store
	beforeRead  func(id page.ID) error
	beforeWrite func(id page.ID, buf []byte) error
}

var _ store.Store = (*hookStore)(nil)

func (s *hookStore) ReadPage(id page.ID, buf []byte) error {
	if s.beforeRead != nil {
		if err := s.beforeRead(id); err != nil {
			return err
		}
	}
	return s.Store.ReadPage(id, buf)
}

func (s *hookStore) WritePage(id page.ID, buf []byte) error {
	if s.beforeWrite != nil {
		if err := s.beforeWrite(id, buf); err != nil {
			return err
		}
	}
	return s.Store.WritePage(id, buf)
}

// syncHookLog is a cache.RedoLog whose SyncTo calls sync and whose log is
// never durable, for a test of the write-ahead rule. It has no records to
// give: a test that uses it runs no mini-transaction (Append and
// MaybeWrite would call the nil RedoLog it embeds).
type syncHookLog struct {
	cache.RedoLog
	sync func(upto uint64) error
}

func (l syncHookLog) SyncTo(_ *redo.Counts, upto uint64) error { return l.sync(upto) }
func (l syncHookLog) Durable() uint64                          { return 0 }

// eventLog is a goroutine-safe list of events, for asserting call order.
type eventLog struct {
	mu sync.Mutex
	ev []string
}

func (l *eventLog) add(format string, args ...any) {
	l.mu.Lock()
	l.ev = append(l.ev, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

func (l *eventLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	ev := l.ev
	l.ev = nil
	return ev
}

// waitBlocked yields (it never sleeps) until at least n goroutines are
// blocked receiving from a channel with fn as their innermost frame, or
// until stop reports that they never will (a bug the caller then reports).
// It is how a test learns that goroutines have reached a wait inside the
// pool without instrumenting the pool.
func waitBlocked(t testing.TB, fn string, n int, stop func() bool) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for !stop() {
		k := runtime.Stack(buf, true)
		if countBlocked(string(buf[:k]), fn) >= n {
			return
		}
		runtime.Gosched()
	}
}

// countBlocked counts the goroutines of a runtime.Stack dump that are in
// state "chan receive" with fn in their innermost non-runtime frame.
func countBlocked(dump, fn string) int {
	c := 0
	for _, g := range strings.Split(dump, "\n\n") {
		lines := strings.Split(g, "\n")
		if len(lines) < 2 || !strings.Contains(lines[0], "[chan receive") {
			continue
		}
		for _, l := range lines[1:] {
			if strings.HasPrefix(l, "runtime.") || strings.HasPrefix(l, "\t") {
				continue
			}
			if strings.Contains(l, fn) {
				c++
			}
			break
		}
	}
	return c
}

// counter pages: the stress and concurrency tests keep a counter in the body,
// repeated at the end of the page so that a torn image shows.

func getCounter(t testing.TB, pg *cache.Page) uint64 {
	t.Helper()
	d := pg.Data()
	a := binary.LittleEndian.Uint64(d[page.HeaderSize:])
	b := binary.LittleEndian.Uint64(d[len(d)-8:])
	require.Equal(t, a, b, "page %s: torn counter", pg.ID())
	return a
}

// setCounter sets the counter outside any mtr (the pool stress test's raw
// change under the exclusive latch).
func setCounter(pg *cache.Page, v uint64) {
	d := pg.Data()
	binary.LittleEndian.PutUint64(d[page.HeaderSize:], v)
	binary.LittleEndian.PutUint64(d[len(d)-8:], v)
}

// writeCounter sets the counter inside mt: two logged writes of 8 bytes.
// createCounterPages creates space 1 in st with pages heap pages, each
// holding a counter of 0, through a pool of frames frames that it closes.
func createCounterPages(t *testing.T, st store.Store, frames, pages int) {
	t.Helper()
	setup := newPool(t, st, frames, cache.Options{})
	require.NoError(t, setup.CreateSpace(nil, 1))
	for range pages {
		mt := setup.BeginMtr(nil)
		pg, err := setup.AllocPage(mt, nil, 1, page.KindHeap)
		require.NoError(t, err)
		writeCounter(mt, pg, 0)
		mt.Release(pg, true)
		mt.Commit()
	}
	require.NoError(t, setup.Close())
}

func writeCounter(mt *cache.Mtr, pg *cache.Page, v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	mt.Write(pg, page.HeaderSize, b[:])
	mt.Write(pg, len(pg.Data())-8, b[:])
}

// dirtyVictimPool makes a 16-frame LRU pool whose least recently used page
// is victim, dirty with body "new" (the store still has "page 1:1"). The
// store's write of victim announces itself on writing and then waits for
// release to be closed, so a test can act while a write-back is in flight.
func dirtyVictimPool(t *testing.T, victim page.ID) (inner *store.PebbleStore, p *cache.Pool, writing, release chan struct{}) {
	t.Helper()
	inner = newStore(t)
	putPages(t, inner, 1, 1, 20)
	writing = make(chan struct{})
	release = make(chan struct{})
	st := &hookStore{Store: inner, beforeWrite: func(id page.ID, buf []byte) error {
		if id == victim {
			writing <- struct{}{}
			<-release
		}
		return nil
	}}
	p = newPool(t, st, 16, cache.Options{Policy: cache.PolicyLRU})
	pg, err := p.Fetch(nil, victim)
	require.NoError(t, err)
	pg.Latch()
	setBody(pg, "new")
	pg.Unlatch()
	pg.Unpin(true)
	for n := uint32(2); n <= 16; n++ { // the victim is least recently used
		touch(t, p, nil, pid(1, n))
	}
	return inner, p, writing, release
}
