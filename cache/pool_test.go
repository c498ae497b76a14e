package cache_test

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/stretchr/testify/require"
)

// fixedSizeStore is a Store that claims a page size and holds nothing; it
// lets NewPool's page size check be reached with sizes a real store refuses.
type fixedSizeStore struct {
	store.Store
	size int
}

func (s fixedSizeStore) PageSize() int { return s.size }

func TestPoolOptionsValidation(t *testing.T) {
	st := newStore(t)
	const ps = testPageSize
	cases := []struct {
		name  string
		store store.Store
		o     cache.Options
		want  string // a piece of the message that names the option
	}{
		{"page size not a power of two", fixedSizeStore{size: 6144}, cache.Options{}, "page size 6144"},
		{"page size too small", fixedSizeStore{size: 2048}, cache.Options{}, "page size 2048"},
		{"page size too large", fixedSizeStore{size: 128 << 10}, cache.Options{}, "page size 131072"},
		{"page size zero", fixedSizeStore{size: 0}, cache.Options{}, "page size 0"},
		{"capacity negative", st, cache.Options{PoolSize: -1}, "capacity"},
		{"capacity one page short", st, cache.Options{PoolSize: (cache.MinFrames - 1) * ps}, "capacity"},
		{"capacity a byte short", st, cache.Options{PoolSize: cache.MinFrames*ps - 1}, "capacity"},
		{"capacity one page", st, cache.Options{PoolSize: ps}, "capacity"},
		{"unknown policy", st, cache.Options{Policy: "clock"}, `policy "clock"`},
		{"policy case", st, cache.Options{Policy: "LRU"}, `policy "LRU"`},
		{"old percent too small", st, cache.Options{OldPercent: 4}, "old sublist percent 4"},
		{"old percent too large", st, cache.Options{OldPercent: 96}, "old sublist percent 96"},
		{"old percent negative", st, cache.Options{OldPercent: -37}, "old sublist percent -37"},
		{"old blocks time negative", st, cache.Options{OldBlocksTime: -time.Millisecond}, "old blocks time"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := c.o
			p, err := cache.NewPool(c.store, &o, nil)
			require.ErrorIs(t, err, cache.ErrInvalidOptions)
			require.Contains(t, err.Error(), c.want)
			require.Nil(t, p)
			// Validate says the same thing without building a pool.
			err = c.o.Validate(c.store.PageSize())
			require.ErrorIs(t, err, cache.ErrInvalidOptions)
			require.Contains(t, err.Error(), c.want)
		})
	}

	_, err := cache.NewPool(nil, nil, nil)
	require.ErrorIs(t, err, cache.ErrInvalidOptions)
	require.Contains(t, err.Error(), "store")

	// The edges of every range are accepted.
	for _, o := range []cache.Options{
		{PoolSize: cache.MinFrames * ps},
		{PoolSize: cache.MinFrames*ps + ps - 1},
		{PoolSize: 1 << 20, Policy: cache.PolicyLRU},
		{PoolSize: 1 << 20, Policy: cache.PolicyMidpoint, OldPercent: 5},
		{PoolSize: 1 << 20, OldPercent: 95, OldBlocksTime: time.Nanosecond},
	} {
		require.NoError(t, o.Validate(ps))
		p, err := cache.NewPool(st, &o, nil)
		require.NoError(t, err, "%+v", o)
		require.Equal(t, int(o.PoolSize/ps), p.Frames())
		require.Equal(t, ps, p.PageSize())
		require.Same(t, st, p.Store())
	}
	// nil options take the defaults: 64 MiB.
	p, err := cache.NewPool(st, nil, nil)
	require.NoError(t, err)
	require.Equal(t, 64<<20/ps, p.Frames())
	require.NoError(t, cache.Options{}.Validate(ps))
}

// TestPoolExactCounts pins down what one fetch costs, counter by counter.
func TestPoolExactCounts(t *testing.T) {
	st := newStore(t)
	putPage(t, st, pid(1, 1), page.KindBTreeLeaf, 0, "leaf")
	putPage(t, st, pid(1, 2), page.KindHeap, 0, "heap")

	for _, policy := range []cache.PolicyKind{cache.PolicyLRU, cache.PolicyMidpoint} {
		t.Run(string(policy), func(t *testing.T) {
			p := newPool(t, st, 32, cache.Options{Policy: policy})

			var m cache.Meter
			pg, err := p.Fetch(&m, pid(1, 1))
			require.NoError(t, err)
			require.Equal(t, "leaf", body(pg, 4))
			require.Equal(t, pid(1, 1), pg.ID())
			pg.Unpin(false)
			var want cache.Meter
			want.PageRequests[page.KindBTreeLeaf] = 1
			want.PoolMisses = 1
			want.StoreReads = 1
			want.StoreReadBytes = testPageSize
			require.Equal(t, want, m, "first fetch: %s", m.String())

			m = cache.Meter{}
			pg, err = p.Fetch(&m, pid(1, 1))
			require.NoError(t, err)
			pg.Unpin(false)
			want = cache.Meter{PoolHits: 1}
			want.PageRequests[page.KindBTreeLeaf] = 1
			require.Equal(t, want, m, "second fetch: %s", m.String())

			// Another kind is counted under its own kind.
			m = cache.Meter{}
			touch(t, p, &m, pid(1, 2))
			touch(t, p, &m, pid(1, 2))
			require.EqualValues(t, 2, m.PageRequests[page.KindHeap])
			require.EqualValues(t, 1, m.PoolHits)
			require.EqualValues(t, 1, m.PoolMisses)

			// A nil meter counts nothing and breaks nothing.
			touch(t, p, nil, pid(1, 1))
			require.Equal(t, cache.Stats{Frames: 32, Resident: 2}, p.Stats())
			require.Equal(t, cache.Meter{}, p.BackgroundMeter())
		})
	}
}

// TestPoolDirtyEvictionChargesCaller fills a pool whose least recently used
// page is dirty; the fetch that evicts it pays for its write-back.
func TestPoolDirtyEvictionChargesCaller(t *testing.T) {
	st := newStore(t)
	putPages(t, st, 1, 1, 17)
	p := newPool(t, st, 16, cache.Options{Policy: cache.PolicyLRU})

	pg, err := p.Fetch(nil, pid(1, 1))
	require.NoError(t, err)
	pg.Latch()
	setBody(pg, "changed")
	pg.Unlatch()
	pg.Unpin(true)
	for n := uint32(2); n <= 16; n++ {
		touch(t, p, nil, pid(1, n))
	}
	require.Equal(t, cache.Stats{Frames: 16, Resident: 16, Dirty: 1}, p.Stats())

	var m cache.Meter
	touch(t, p, &m, pid(1, 17))
	var want cache.Meter
	want.PageRequests[page.KindHeap] = 1
	want.PoolMisses = 1
	want.StoreReads = 1
	want.StoreReadBytes = testPageSize
	want.Evictions = 1
	want.DirtyWriteBacks = 1
	want.StoreWrites = 1
	want.StoreWriteBytes = testPageSize
	require.Equal(t, want, m, "%s", m.String())
	require.False(t, p.Resident(pid(1, 1)))
	require.Equal(t, "changed", storedBody(t, st, pid(1, 1), 7))
	require.Equal(t, cache.Meter{}, p.BackgroundMeter(), "the caller's write-back leaked to the background meter")

	// A clean eviction costs an eviction and nothing else.
	m = cache.Meter{}
	touch(t, p, &m, pid(1, 1))
	require.EqualValues(t, 1, m.Evictions)
	require.Zero(t, m.DirtyWriteBacks)
	require.Zero(t, m.StoreWrites)
	require.False(t, p.Resident(pid(1, 2)))
}

func TestPoolFlushAllChargesBackground(t *testing.T) {
	st := newStore(t)
	putPages(t, st, 1, 1, 5)
	p := newPool(t, st, 16, cache.Options{})
	var m cache.Meter
	for n := uint32(1); n <= 5; n++ {
		pg, err := p.Fetch(&m, pid(1, n))
		require.NoError(t, err)
		pg.Latch()
		setBody(pg, "v2")
		pg.Unlatch()
		pg.Unpin(n%2 == 1) // pages 1, 3, 5 dirty
	}
	before := m
	require.Equal(t, 3, p.Stats().Dirty)

	require.NoError(t, p.FlushAll(nil))
	require.Equal(t, before, m, "FlushAll(nil) charged a caller's meter")
	bg := p.BackgroundMeter()
	require.Equal(t, cache.Meter{PageFlushes: 3, StoreWrites: 3, StoreWriteBytes: 3 * testPageSize}, bg, "%s", bg.String())
	require.Zero(t, p.Stats().Dirty)
	require.Equal(t, "v2", storedBody(t, st, pid(1, 3), 2))
	require.Equal(t, "pa", storedBody(t, st, pid(1, 2), 2), "a clean page was written")

	// Nothing dirty: nothing written.
	require.NoError(t, p.FlushAll(nil))
	require.Equal(t, bg, p.BackgroundMeter())

	// An explicit meter is charged instead of the background one.
	pg, err := p.Fetch(nil, pid(1, 2))
	require.NoError(t, err)
	pg.Unpin(true)
	var mine cache.Meter
	require.NoError(t, p.FlushAll(&mine))
	require.Equal(t, cache.Meter{PageFlushes: 1, StoreWrites: 1, StoreWriteBytes: testPageSize}, mine)
	require.Equal(t, bg, p.BackgroundMeter())

	// FlushPage: dirty pages only, non-resident pages are a no-op.
	pg, err = p.Fetch(nil, pid(1, 4))
	require.NoError(t, err)
	pg.Unpin(true)
	require.NoError(t, p.FlushPage(nil, pid(1, 99)))
	require.NoError(t, p.FlushPage(nil, pid(1, 3)))
	require.Equal(t, bg, p.BackgroundMeter())
	require.NoError(t, p.FlushPage(nil, pid(1, 4)))
	require.EqualValues(t, bg.PageFlushes+1, p.BackgroundMeter().PageFlushes)
	require.Zero(t, p.Stats().Dirty)
}

// TestPoolFlushPinnedPage flushes a page another caller holds pinned: its
// image is taken under the shared latch and the pin survives.
func TestPoolFlushPinnedPage(t *testing.T) {
	st := newStore(t)
	putPages(t, st, 1, 1, 1)
	p := newPool(t, st, 16, cache.Options{})
	pg, err := p.Fetch(nil, pid(1, 1))
	require.NoError(t, err)
	pg.Latch()
	setBody(pg, "pinned")
	pg.Unlatch()
	pg.Unpin(true)
	pg, err = p.Fetch(nil, pid(1, 1))
	require.NoError(t, err)
	require.NoError(t, p.FlushAll(nil))
	require.Equal(t, "pinned", storedBody(t, st, pid(1, 1), 6))
	require.Equal(t, cache.Stats{Frames: 16, Resident: 1, Pinned: 1}, p.Stats())
	pg.Unpin(false)
	require.Equal(t, cache.Stats{Frames: 16, Resident: 1}, p.Stats())
}

func TestPoolPinnedPagesAreNeverEvicted(t *testing.T) {
	rng := seed(t)
	st := newStore(t)
	putPages(t, st, 1, 1, 200)
	for _, policy := range []cache.PolicyKind{cache.PolicyLRU, cache.PolicyMidpoint} {
		t.Run(string(policy), func(t *testing.T) {
			p := newPoolWith(t, st, 16, cache.Options{Policy: policy}, cache.Wiring{Runtime: newFakeClock()})

			// Pin 10 pages and change them, so that a wrong eviction
			// would also lose data.
			pinned := map[uint32]*cache.Page{}
			for len(pinned) < 10 {
				n := uint32(rng.IntN(200) + 1)
				if pinned[n] != nil {
					continue
				}
				pg, err := p.Fetch(nil, pid(1, n))
				require.NoError(t, err)
				pg.Latch()
				setBody(pg, fmt.Sprintf("pinned %03d", n))
				pg.Unlatch()
				pinned[n] = pg
			}
			// Churn through the other pages on the 6 frames left.
			var m cache.Meter
			for range 1000 {
				n := uint32(rng.IntN(200) + 1)
				if pinned[n] != nil {
					continue
				}
				touch(t, p, &m, pid(1, n))
			}
			require.Positive(t, m.Evictions)
			for n, pg := range pinned {
				require.True(t, p.Resident(pid(1, n)), "pinned page %d evicted", n)
				require.Equal(t, pid(1, n), pg.ID())
				pg.RLatch()
				require.Equal(t, fmt.Sprintf("pinned %03d", n), body(pg, 10))
				pg.RUnlatch()
				pg.Unpin(true)
			}
			require.Equal(t, 0, p.Stats().Pinned)
			require.NoError(t, p.FlushAll(nil))
		})
	}
}

func TestPoolExhausted(t *testing.T) {
	st := newStore(t)
	putPages(t, st, 1, 1, 17)
	p := newPool(t, st, 16, cache.Options{})
	var pages []*cache.Page
	for n := uint32(1); n <= 16; n++ {
		pg, err := p.Fetch(nil, pid(1, n))
		require.NoError(t, err)
		pages = append(pages, pg)
	}
	require.Equal(t, cache.Stats{Frames: 16, Resident: 16, Pinned: 16}, p.Stats())

	var m cache.Meter
	_, err := p.Fetch(&m, pid(1, 17))
	require.ErrorIs(t, err, cache.ErrPoolExhausted)
	require.Contains(t, err.Error(), "1:17")
	require.Zero(t, m.StoreReads, "an exhausted fetch must fail before any I/O")
	_, err = p.Reserve(1)
	require.ErrorIs(t, err, cache.ErrPoolExhausted)
	// A resident page can always be pinned again.
	pg, err := p.Fetch(&m, pid(1, 3))
	require.NoError(t, err)
	pg.Unpin(false)

	// One unpin frees exactly one frame.
	pages[0].Unpin(false)
	pages[0], err = p.Fetch(nil, pid(1, 17))
	require.NoError(t, err)
	require.False(t, p.Resident(pid(1, 1)))
	_, err = p.Fetch(nil, pid(1, 1))
	require.ErrorIs(t, err, cache.ErrPoolExhausted)
	for _, pg := range pages {
		pg.Unpin(false)
	}
	require.Equal(t, cache.Stats{Frames: 16, Resident: 16}, p.Stats())
	touch(t, p, nil, pid(1, 1))
}

func TestPoolUnpinTooOftenPanics(t *testing.T) {
	st := newStore(t)
	putPages(t, st, 1, 1, 1)
	p := newPool(t, st, 16, cache.Options{})
	pg, err := p.Fetch(nil, pid(1, 1))
	require.NoError(t, err)
	pg.Unpin(false)
	require.PanicsWithValue(t, "cache: page 1:1 unpinned more often than pinned", func() { pg.Unpin(false) })
}

func TestPoolReservations(t *testing.T) {
	st := newStore(t)
	putPages(t, st, 1, 1, 40)
	p := newPool(t, st, 16, cache.Options{Policy: cache.PolicyLRU})

	// Pages 30..35 resident and unpinned, 1..10 pinned: 6 frames available.
	for n := uint32(30); n <= 35; n++ {
		touch(t, p, nil, pid(1, n))
	}
	var held []*cache.Page
	for n := uint32(1); n <= 10; n++ {
		pg, err := p.Fetch(nil, pid(1, n))
		require.NoError(t, err)
		held = append(held, pg)
	}
	_, err := p.Reserve(7)
	require.ErrorIs(t, err, cache.ErrPoolExhausted)
	require.Contains(t, err.Error(), "7 frames")
	require.Equal(t, 0, p.Stats().Reserved)

	r, err := p.Reserve(6)
	require.NoError(t, err)
	require.Equal(t, 6, r.Left())
	require.Equal(t, cache.Stats{Frames: 16, Resident: 16, Pinned: 10, Reserved: 6}, p.Stats())
	_, err = p.Reserve(1)
	require.ErrorIs(t, err, cache.ErrPoolExhausted)

	// Unreserved fetches cannot eat the reserved frames, whether the
	// page needs a new frame or is resident but unpinned.
	_, err = p.Fetch(nil, pid(1, 11))
	require.ErrorIs(t, err, cache.ErrPoolExhausted)
	require.Contains(t, err.Error(), "1:11")
	_, err = p.Fetch(nil, pid(1, 30))
	require.ErrorIs(t, err, cache.ErrPoolExhausted)
	require.Contains(t, err.Error(), "1:30")
	// A page pinned already costs nothing.
	touch(t, p, nil, pid(1, 3))

	// The reservation's holder gets its 6 frames.
	var got []*cache.Page
	for n := uint32(11); n <= 16; n++ {
		pg, err := r.Fetch(nil, pid(1, n))
		require.NoError(t, err, "reserved fetch of page %d", n)
		got = append(got, pg)
		require.Equal(t, int(16-n), r.Left())
	}
	require.Equal(t, []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, residentSet(p, 1, 1, 40))
	_, err = r.Fetch(nil, pid(1, 17))
	require.ErrorIs(t, err, cache.ErrPoolExhausted, "a spent reservation must not give more")
	// A pinned page costs a reservation nothing.
	pg, err := r.Fetch(nil, pid(1, 3))
	require.NoError(t, err)
	pg.Unpin(false)
	r.Release()
	r.Release() // idempotent
	(*cache.Reservation)(nil).Release()
	for _, pg := range got {
		pg.Unpin(false)
	}
	require.Equal(t, cache.Stats{Frames: 16, Resident: 16, Pinned: 10}, p.Stats())

	// Release returns unused frames.
	r, err = p.Reserve(6)
	require.NoError(t, err)
	pg, err = r.Fetch(nil, pid(1, 20))
	require.NoError(t, err)
	require.Equal(t, 5, r.Left())
	_, err = p.Fetch(nil, pid(1, 21))
	require.ErrorIs(t, err, cache.ErrPoolExhausted)
	r.Release()
	require.Zero(t, r.Left())
	require.Equal(t, cache.Stats{Frames: 16, Resident: 16, Pinned: 11}, p.Stats())
	var more []*cache.Page
	for n := uint32(21); n <= 25; n++ {
		q, err := p.Fetch(nil, pid(1, n))
		require.NoError(t, err, "page %d after Release", n)
		more = append(more, q)
	}
	_, err = p.Fetch(nil, pid(1, 26))
	require.ErrorIs(t, err, cache.ErrPoolExhausted)
	pg.Unpin(false)
	for _, pg := range append(held, more...) {
		pg.Unpin(false)
	}
	require.Equal(t, cache.Stats{Frames: 16, Resident: 16}, p.Stats())

	// ReserveInto fills a caller-owned reservation.
	var rr cache.Reservation
	require.NoError(t, p.ReserveInto(&rr, 3))
	require.Equal(t, 3, rr.Left())
	require.Equal(t, 3, p.Stats().Reserved)
	rr.Release()
	require.Equal(t, 0, p.Stats().Reserved)
	require.NoError(t, p.ReserveInto(&rr, 16))
	_, err = p.Fetch(nil, pid(1, 1))
	require.ErrorIs(t, err, cache.ErrPoolExhausted)
	rr.Release()
	touch(t, p, nil, pid(1, 1))
}

func TestPoolReserveNegative(t *testing.T) {
	st := newStore(t)
	putPages(t, st, 1, 1, 17)
	p := newPool(t, st, 16, cache.Options{})
	_, err := p.Reserve(-4)
	require.Error(t, err)
	require.Equal(t, 0, p.Stats().Reserved)
	// The pool still holds 16 pages, not 20.
	var held []*cache.Page
	for n := uint32(1); n <= 16; n++ {
		pg, err := p.Fetch(nil, pid(1, n))
		require.NoError(t, err)
		held = append(held, pg)
	}
	_, err = p.Fetch(nil, pid(1, 17))
	require.ErrorIs(t, err, cache.ErrPoolExhausted)
	for _, pg := range held {
		pg.Unpin(false)
	}
	r, err := p.Reserve(0)
	require.NoError(t, err)
	require.Zero(t, r.Left())
	r.Release()
}

// TestPoolSingleReadUnderConcurrency starts 16 fetches of one cold page
// together and holds the store read until the 15 others are waiting for it:
// exactly one store read, one miss, 15 waits.
func TestPoolSingleReadUnderConcurrency(t *testing.T) {
	const workers = 16
	inner := newStore(t)
	putPage(t, inner, pid(2, 5), page.KindBTreeLeaf, 0, "shared")
	// The first read waits at the gate; a second read (the bug this test
	// is after) goes straight through, so that the test ends and fails
	// instead of hanging.
	gate := make(chan struct{})
	var reads atomic.Int32
	st := &hookStore{Store: inner, beforeRead: func(id page.ID) error {
		if reads.Add(1) == 1 {
			<-gate
		}
		return nil
	}}
	p := newPool(t, st, 32, cache.Options{})

	var start, done sync.WaitGroup
	release := make(chan struct{})
	meters := make([]cache.Meter, workers)
	errs := make([]error, workers)
	bodies := make([]string, workers)
	start.Add(workers)
	done.Add(workers)
	for i := range workers {
		go func() {
			defer done.Done()
			start.Done()
			<-release
			pg, err := p.Fetch(&meters[i], pid(2, 5))
			errs[i] = err
			if err == nil {
				pg.RLatch()
				bodies[i] = body(pg, 6)
				pg.RUnlatch()
				pg.Unpin(false)
			}
		}()
	}
	start.Wait()
	close(release)
	// One goroutine reads (blocked in the store on gate); the others must
	// all be blocked in the pool waiting for its read.
	waitBlocked(t, "cache.(*Pool).load(", workers-1, func() bool { return reads.Load() > 1 })
	close(gate)
	done.Wait()
	require.EqualValues(t, 1, reads.Load(), "store reads of one page")

	var sum cache.Meter
	for i := range workers {
		require.NoError(t, errs[i])
		require.Equal(t, "shared", bodies[i])
		sum.Add(&meters[i])
	}
	var want cache.Meter
	want.PageRequests[page.KindBTreeLeaf] = workers
	want.StoreReads = 1
	want.StoreReadBytes = testPageSize
	want.PoolMisses = 1
	want.PoolWaits = workers - 1
	want.PoolHits = workers - 1
	require.Equal(t, want, sum, "%s", sum.String())
	require.Equal(t, cache.Stats{Frames: 32, Resident: 1}, p.Stats())
}

// TestPoolConcurrentFetchSameColdPage is the weaker form of the test above
// that holds whatever the interleaving: many rounds of concurrent fetches
// of a cold page, one store read each.
func TestPoolConcurrentFetchSameColdPage(t *testing.T) {
	const workers, rounds = 8, 20
	st := newStore(t)
	putPages(t, st, 1, 1, rounds)
	p := newPool(t, st, 16, cache.Options{})
	for round := uint32(1); round <= rounds; round++ {
		var wg sync.WaitGroup
		meters := make([]cache.Meter, workers)
		release := make(chan struct{})
		for i := range workers {
			wg.Go(func() {
				<-release
				pg, err := p.Fetch(&meters[i], pid(1, round))
				if err != nil {
					t.Error(err)
					return
				}
				pg.Unpin(false)
			})
		}
		close(release)
		wg.Wait()
		var sum cache.Meter
		for i := range meters {
			sum.Add(&meters[i])
		}
		require.EqualValues(t, 1, sum.StoreReads, "round %d: %s", round, sum.String())
		require.EqualValues(t, 1, sum.PoolMisses)
		require.EqualValues(t, workers-1, sum.PoolHits)
		require.LessOrEqual(t, sum.PoolWaits, int64(workers-1))
	}
}

// TestPoolWriteBackNeverStale blocks the write-back of an evicted dirty page
// and fetches that page meanwhile: it is served from its frame (never read
// back stale from the store), and everything agrees once the write is done.
func TestPoolWriteBackNeverStale(t *testing.T) {
	victim := pid(1, 1)
	setup := func(t *testing.T) (*store.PebbleStore, *cache.Pool, chan struct{}, chan struct{}) {
		return dirtyVictimPool(t, victim)
	}
	evictor := func(p *cache.Pool, m *cache.Meter) chan error {
		done := make(chan error, 1)
		go func() {
			pg, err := p.Fetch(m, pid(1, 17))
			if err == nil {
				pg.Unpin(false)
			}
			done <- err
		}()
		return done
	}

	t.Run("changed again during write-back", func(t *testing.T) {
		inner, p, writing, release := setup(t)
		var me cache.Meter
		done := evictor(p, &me)
		<-writing // the evictor is writing the victim out

		var m cache.Meter
		pg, err := p.Fetch(&m, victim)
		require.NoError(t, err)
		require.Zero(t, m.StoreReads, "a page being written back was read from the store")
		require.EqualValues(t, 1, m.PoolHits)
		pg.Latch()
		require.Equal(t, "new", body(pg, 3))
		setBody(pg, "newer")
		pg.Unlatch()
		pg.Unpin(true)

		close(release)
		require.NoError(t, <-done)
		require.EqualValues(t, 1, me.DirtyWriteBacks)
		require.EqualValues(t, 1, me.StoreWrites)
		require.EqualValues(t, 1, me.Evictions, "the evictor must take one frame, not the victim's")
		require.True(t, p.Resident(victim), "a page changed during its write-back was evicted")
		require.False(t, p.Resident(pid(1, 2)), "the next victim in LRU order")
		require.Equal(t, "new", storedBody(t, inner, victim, 3))
		require.Equal(t, 1, p.Stats().Dirty)

		pg, err = p.Fetch(nil, victim)
		require.NoError(t, err)
		require.Equal(t, "newer", body(pg, 5))
		pg.Unpin(false)
		go func() { <-writing }() // release is closed: the flush goes through
		require.NoError(t, p.FlushAll(nil))
		require.Equal(t, "newer", storedBody(t, inner, victim, 5))
		fresh := newPool(t, inner, 16, cache.Options{})
		pg, err = fresh.Fetch(nil, victim)
		require.NoError(t, err)
		require.Equal(t, "newer", body(pg, 5))
		pg.Unpin(false)
	})

	t.Run("read during write-back then evicted", func(t *testing.T) {
		inner, p, writing, release := setup(t)
		var me cache.Meter
		done := evictor(p, &me)
		<-writing

		var m cache.Meter
		pg, err := p.Fetch(&m, victim)
		require.NoError(t, err)
		require.Zero(t, m.StoreReads)
		pg.RLatch()
		require.Equal(t, "new", body(pg, 3))
		pg.RUnlatch()
		pg.Unpin(false)

		close(release)
		require.NoError(t, <-done)
		require.False(t, p.Resident(victim))
		require.EqualValues(t, 1, me.Evictions)
		require.Equal(t, "new", storedBody(t, inner, victim, 3))

		m = cache.Meter{}
		pg, err = p.Fetch(&m, victim)
		require.NoError(t, err)
		require.EqualValues(t, 1, m.StoreReads)
		require.Equal(t, "new", body(pg, 3))
		pg.Unpin(false)
	})

	t.Run("changed during a flush", func(t *testing.T) {
		inner, p, writing, release := setup(t)
		done := make(chan error, 1)
		go func() { done <- p.FlushPage(nil, victim) }()
		<-writing // the flush has its image and is writing it

		pg, err := p.Fetch(nil, victim)
		require.NoError(t, err)
		pg.Latch()
		setBody(pg, "newest")
		pg.Unlatch()
		pg.Unpin(true)

		close(release)
		require.NoError(t, <-done)
		require.Equal(t, "new", storedBody(t, inner, victim, 3))
		require.Equal(t, 1, p.Stats().Dirty, "a change made during a flush was marked clean")
		go func() { <-writing }()
		require.NoError(t, p.FlushPage(nil, victim))
		require.Equal(t, "newest", storedBody(t, inner, victim, 6))
		require.Zero(t, p.Stats().Dirty)
		require.EqualValues(t, 2, p.BackgroundMeter().PageFlushes)
	})

	t.Run("pinned during write-back", func(t *testing.T) {
		_, p, writing, release := setup(t)
		var me cache.Meter
		done := evictor(p, &me)
		<-writing
		pg, err := p.Fetch(nil, victim)
		require.NoError(t, err)
		close(release)
		require.NoError(t, <-done)
		require.True(t, p.Resident(victim), "a pinned page was evicted")
		require.Equal(t, "new", body(pg, 3))
		require.Zero(t, p.Stats().Dirty, "the write-back cleaned it")
		pg.Unpin(false)
	})
}

// TestPoolWriteAheadHook checks the write-ahead rule: Wiring.Log's
// SyncTo(lsn+1) strictly before the page's store write (the log must be
// durable past the page's LSN), and no write when it fails.
func TestPoolWriteAheadHook(t *testing.T) {
	inner := newStore(t)
	putPages(t, inner, 1, 1, 17)
	var log eventLog
	errLog := errors.New("log device on fire")
	var failLog bool
	var mu sync.Mutex
	st := &hookStore{Store: inner, beforeWrite: func(id page.ID, buf []byte) error {
		log.add("write %s lsn %d", id, page.LSN(buf))
		return nil
	}}
	p := newPoolWith(t, st, 16, cache.Options{Policy: cache.PolicyLRU}, cache.Wiring{Log: syncHookLog{sync: func(upto uint64) error {
		mu.Lock()
		defer mu.Unlock()
		if failLog {
			log.add("synclog %d failed", upto)
			return errLog
		}
		log.add("synclog %d", upto)
		return nil
	}}})
	setFail := func(v bool) { mu.Lock(); failLog = v; mu.Unlock() }
	change := func(id page.ID, lsn uint64) {
		pg, err := p.Fetch(nil, id)
		require.NoError(t, err)
		pg.Latch()
		page.SetLSN(pg.Data(), lsn)
		setBody(pg, fmt.Sprintf("lsn %d", lsn))
		pg.Unlatch()
		pg.Unpin(true)
	}

	require.Zero(t, p.KnownLSN(pid(1, 1)))
	change(pid(1, 1), 42)
	require.Zero(t, p.KnownLSN(pid(1, 1)), "not written or noted yet")
	require.NoError(t, p.FlushPage(nil, pid(1, 1)))
	require.Equal(t, []string{"synclog 43", "write 1:1 lsn 42"}, log.take())
	require.EqualValues(t, 42, p.KnownLSN(pid(1, 1)))

	// A failing log flush: no write, the page stays dirty, the error
	// comes back wrapped.
	change(pid(1, 1), 50)
	setFail(true)
	err := p.FlushPage(nil, pid(1, 1))
	require.ErrorIs(t, err, errLog)
	require.Contains(t, err.Error(), "1:1")
	require.Equal(t, []string{"synclog 51 failed"}, log.take())
	require.Equal(t, 1, p.Stats().Dirty)
	require.EqualValues(t, 42, p.KnownLSN(pid(1, 1)))
	require.Equal(t, "lsn 42", storedBody(t, inner, pid(1, 1), 6))
	require.ErrorIs(t, p.FlushAll(nil), errLog)
	require.Equal(t, []string{"synclog 51 failed"}, log.take())
	require.EqualValues(t, 1, p.BackgroundMeter().StoreWrites, "only the first flush wrote")

	// The same through an eviction: the fetch that would evict fails, the
	// victim stays resident and dirty, and no frame is lost.
	for n := uint32(2); n <= 16; n++ {
		touch(t, p, nil, pid(1, n))
	}
	var m cache.Meter
	_, err = p.Fetch(&m, pid(1, 17))
	require.ErrorIs(t, err, errLog)
	require.Equal(t, []string{"synclog 51 failed"}, log.take())
	require.True(t, p.Resident(pid(1, 1)))
	require.False(t, p.Resident(pid(1, 17)))
	require.Equal(t, cache.Stats{Frames: 16, Resident: 16, Dirty: 1}, p.Stats())
	require.Zero(t, m.StoreReads)
	require.Zero(t, m.Evictions)

	// The log recovers: the eviction goes through, log first.
	setFail(false)
	m = cache.Meter{}
	touch(t, p, &m, pid(1, 17))
	require.Equal(t, []string{"synclog 51", "write 1:1 lsn 50"}, log.take())
	require.EqualValues(t, 1, m.DirtyWriteBacks)
	require.EqualValues(t, 50, p.KnownLSN(pid(1, 1)))

	// A page read in tells the pool its LSN.
	fresh := newPool(t, inner, 16, cache.Options{})
	require.Zero(t, fresh.KnownLSN(pid(1, 1)))
	touch(t, fresh, nil, pid(1, 1))
	require.EqualValues(t, 50, fresh.KnownLSN(pid(1, 1)))
	// NoteLSN only moves forward; other pages and spaces are unaffected.
	fresh.NoteLSN(pid(1, 1), 49)
	require.EqualValues(t, 50, fresh.KnownLSN(pid(1, 1)))
	fresh.NoteLSN(pid(1, 1), 60)
	require.EqualValues(t, 60, fresh.KnownLSN(pid(1, 1)))
	fresh.NoteLSN(pid(9, 100000), 7)
	require.EqualValues(t, 7, fresh.KnownLSN(pid(9, 100000)))
	require.Zero(t, fresh.KnownLSN(pid(9, 99999)))
	require.Zero(t, fresh.KnownLSN(pid(1, 2)))
	require.Zero(t, fresh.KnownLSN(pid(3, 1)))
}

func TestPoolClose(t *testing.T) {
	inner := newStore(t)
	putPages(t, inner, 1, 1, 2)
	var log eventLog
	st := &hookStore{Store: inner, beforeWrite: func(id page.ID, _ []byte) error {
		log.add("write %s", id)
		return nil
	}}
	p := newPool(t, st, 16, cache.Options{})
	pg, err := p.Fetch(nil, pid(1, 1))
	require.NoError(t, err)
	pg.Latch()
	setBody(pg, "closing")
	pg.Unlatch()
	pg.Unpin(true)
	touch(t, p, nil, pid(1, 2))

	require.NoError(t, p.Close())
	require.Equal(t, []string{"write 1:1"}, log.take())
	require.Equal(t, "closing", storedBody(t, inner, pid(1, 1), 7))
	_, err = p.Fetch(nil, pid(1, 2))
	require.ErrorIs(t, err, cache.ErrClosed)
	require.ErrorIs(t, p.CreateSpace(nil, 3), cache.ErrClosed)
}

// TestPoolFetchHitDoesNotAllocate keeps the hot path allocation-free (the
// benchmark shows the same; this fails the ordinary test run).
func TestPoolFetchHitDoesNotAllocate(t *testing.T) {
	st := newStore(t)
	putPages(t, st, 1, 1, 1)
	for _, policy := range []cache.PolicyKind{cache.PolicyLRU, cache.PolicyMidpoint} {
		p := newPool(t, st, 16, cache.Options{Policy: policy})
		touch(t, p, nil, pid(1, 1))
		var m cache.Meter
		allocs := testing.AllocsPerRun(100, func() {
			pg, err := p.Fetch(&m, pid(1, 1))
			if err != nil {
				panic(err)
			}
			pg.Unpin(false)
		})
		require.Zero(t, allocs, "policy %s", policy)
	}
}

// TestReservationUnpin: a reservation's last unpin of a page gives the frame
// back to the reservation, so a holder that pins and unpins page after page
// needs only as many frames as it holds at once.
func TestReservationUnpin(t *testing.T) {
	st := newStore(t)
	putPages(t, st, 1, 1, 40)
	p := newPool(t, st, 16, cache.Options{})
	// 14 pages pinned by others: two frames left, both reserved.
	var held []*cache.Page
	for n := uint32(1); n <= 14; n++ {
		pg, err := p.Fetch(nil, pid(1, n))
		require.NoError(t, err)
		held = append(held, pg)
	}
	r, err := p.Reserve(2)
	require.NoError(t, err)
	// Walk 20 pages holding at most two at once.
	var prev *cache.Page
	for n := uint32(20); n < 40; n++ {
		pg, err := r.Fetch(nil, pid(1, n))
		require.NoError(t, err, "page %d", n)
		if prev != nil {
			r.Unpin(prev, n%2 == 0)
		}
		prev = pg
		require.Equal(t, 1, r.Left())
	}
	r.Unpin(prev, false)
	require.Equal(t, 2, r.Left())
	require.Equal(t, cache.Stats{Frames: 16, Resident: 16, Pinned: 14, Reserved: 2}, p.Stats())
	// The frames stayed promised: others still cannot have them.
	_, err = p.Fetch(nil, pid(1, 15))
	require.ErrorIs(t, err, cache.ErrPoolExhausted)

	// A page pinned twice goes back to r only on its last unpin.
	pg, err := r.Fetch(nil, pid(1, 30))
	require.NoError(t, err)
	again, err := p.Fetch(nil, pid(1, 30))
	require.NoError(t, err)
	r.Unpin(pg, false)
	require.Equal(t, 1, r.Left())
	require.Equal(t, 15, p.Stats().Pinned)
	r.Unpin(again, false)
	require.Equal(t, 2, r.Left())
	require.Panics(t, func() { r.Unpin(again, false) })

	r.Release()
	require.Equal(t, cache.Stats{Frames: 16, Resident: 16, Pinned: 14}, p.Stats())
	// A released (or nil) reservation unpins to the pool.
	pg, err = p.Fetch(nil, pid(1, 15))
	require.NoError(t, err)
	r.Unpin(pg, false)
	(*cache.Reservation)(nil).Unpin(held[0], false)
	require.Equal(t, cache.Stats{Frames: 16, Resident: 16, Pinned: 13}, p.Stats())
	for _, pg := range held[1:] {
		pg.Unpin(false)
	}
}

func TestPageLatchesAndKind(t *testing.T) {
	st := newStore(t)
	putPage(t, st, pid(1, 1), page.KindBTreeLeaf, 0, "")
	p := newPool(t, st, 16, cache.Options{})
	pg, err := p.Fetch(nil, pid(1, 1))
	require.NoError(t, err)

	require.Zero(t, pg.ModCount())
	pg.Latch()
	require.False(t, pg.TryRLatch(), "shared latch taken past a writer")
	pg.SetKind(page.KindBTreeInner)
	pg.Unlatch()
	pg.RLatch()
	require.EqualValues(t, 1, pg.ModCount())
	require.True(t, pg.TryRLatch(), "shared latches must share")
	pg.RUnlatch()
	pg.RUnlatch()
	require.Equal(t, page.KindBTreeInner, page.KindOf(pg.Data()))
	pg.Unpin(true)

	// The new kind is what page requests are counted under.
	var m cache.Meter
	touch(t, p, &m, pid(1, 1))
	require.EqualValues(t, 1, m.PageRequests[page.KindBTreeInner])
	require.NoError(t, p.FlushAll(nil))
	fresh := newPool(t, st, 16, cache.Options{})
	m = cache.Meter{}
	pg, err = fresh.Fetch(&m, pid(1, 1))
	require.NoError(t, err)
	require.EqualValues(t, 1, m.PageRequests[page.KindBTreeInner])
	require.Zero(t, pg.ModCount(), "a frame's modification count restarts with each page")
	pg.Unpin(false)
}

// TestUnpinKeepsSlotUntilReserve fills a 2,048-frame pool with 1,700 pages,
// each fetched and unpinned once: every one of them keeps its slot, since
// an unpin keeps its slot while more than a reserve of 256 slots
// (keepReserve) is free besides the one it holds, not a quarter of the
// frames (512: the last 165 pages touched, the newest, would then pay
// the shared free count at every pin and unpin). The last page's pin and
// unpin leave the free count as it was. Past the reserve an unpin gives
// its slot back.
func TestUnpinKeepsSlotUntilReserve(t *testing.T) {
	const frames, pages, reserve = 2048, 1700, 256
	st := newStore(t)
	putPages(t, st, 1, 1, frames)
	p := newPool(t, st, frames, cache.Options{})
	touch := func(no uint32) {
		t.Helper()
		pg, err := p.Fetch(nil, pid(1, no))
		require.NoError(t, err)
		pg.Unpin(false)
	}
	for n := uint32(1); n <= pages; n++ {
		touch(n)
	}
	require.Equal(t, pages, p.KeptSlots())
	require.EqualValues(t, frames-pages, p.FreeSlots())
	pg, err := p.Fetch(nil, pid(1, pages))
	require.NoError(t, err)
	require.EqualValues(t, frames-pages, p.FreeSlots(), "a pin of a frame that kept its slot takes no free one")
	pg.Unpin(false)
	require.EqualValues(t, frames-pages, p.FreeSlots())

	// The most frames that keep a slot: all but the reserve and the slot
	// of the pin being dropped.
	most := uint32(frames - reserve - 1)
	for n := uint32(pages + 1); n <= most; n++ {
		touch(n)
	}
	require.EqualValues(t, most, p.KeptSlots())
	require.EqualValues(t, reserve+1, p.FreeSlots())
	touch(most + 1)
	require.EqualValues(t, most, p.KeptSlots(), "past the reserve an unpin gives its slot back")
	require.EqualValues(t, reserve+1, p.FreeSlots())
	require.Equal(t, 0, p.Stats().Pinned)
}

// TestPoolSpaceIDs: the page table and the LSN table index small space ids
// by slice and the rest by map (spaceIndex). Pages of ids on both sides of
// that bound, and of the largest id, are found under the ids they were
// written with, in partitions that hold several spaces (page n of space s
// is in partition (n+s) mod 64: page 1 of space 0 and page 2 of space 1023
// share one, so the dense index grows while it holds an entry; so do page
// 1 of space 1024 and page 2 of space 2^32-1 in the map), while another
// goroutine hits a page of space 0 without the partition latch (run with
// -race: a published index changed in place is a race).
func TestPoolSpaceIDs(t *testing.T) {
	spaces := []uint32{0, 5, 1023, 1024, 70_000, math.MaxUint32}
	st := newStore(t)
	for _, sp := range spaces {
		putPages(t, st, sp, 1, 6)
	}
	p := newPool(t, st, 64, cache.Options{})
	touch(t, p, nil, pid(0, 1))
	hot, err := p.Fetch(nil, pid(0, 1)) // pinned: later hits take pinHot
	require.NoError(t, err)
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		var err error
		for err == nil {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			var pg *cache.Page
			if pg, err = p.Fetch(nil, pid(0, 1)); err == nil {
				pg.Unpin(false)
			}
		}
		done <- err
	}()
	var m cache.Meter
	for round := range 2 {
		for _, sp := range spaces {
			for n := uint32(1); n <= 6; n++ {
				id := pid(sp, n)
				pg, err := p.Fetch(&m, id)
				require.NoError(t, err)
				want := "page " + id.String()
				require.Equal(t, want, body(pg, len(want)), "round %d", round)
				pg.Unpin(false)
			}
		}
		if round == 0 {
			// 36 pages read once each (page 1 of space 0 was resident).
			require.EqualValues(t, 35, m.PoolMisses)
			require.EqualValues(t, 1, m.PoolHits)
		}
	}
	close(stop)
	require.NoError(t, <-done)
	hot.Unpin(false)
	// The second round found every page resident, under its own id.
	require.EqualValues(t, 35, m.PoolMisses)
	require.EqualValues(t, 37, m.PoolHits)

	lsn := uint64(100)
	for _, sp := range spaces {
		for n := uint32(1); n <= 6; n++ {
			p.NoteLSN(pid(sp, n), lsn)
			lsn++
		}
	}
	lsn = 100
	for _, sp := range spaces {
		for n := uint32(1); n <= 6; n++ {
			require.Equal(t, lsn, p.KnownLSN(pid(sp, n)), "%s", pid(sp, n))
			lsn++
		}
		require.Zero(t, p.KnownLSN(pid(sp, 7)), "space %d", sp)
	}
	require.Zero(t, p.KnownLSN(pid(1022, 2)))
	require.Zero(t, p.KnownLSN(pid(70_001, 2)))
}
