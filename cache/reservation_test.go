package cache_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
)

// TestReservationFrameComesBackWhoeverUnpinsLast: a frame taken through a
// reservation returns to it when the page's last pin goes, even when that
// pin is someone else's; so a structural change never finds its promised
// frames short.
func TestReservationFrameComesBackWhoeverUnpinsLast(t *testing.T) {
	st := newStore(t)
	putPages(t, st, 1, 1, 40)
	p := newPool(t, st, 16, cache.Options{Policy: cache.PolicyLRU})

	r, err := p.Reserve(3)
	require.NoError(t, err)
	a, err := r.Fetch(nil, page.ID{Space: 1, Page: 1})
	require.NoError(t, err)
	require.Equal(t, 2, r.Left())

	// Another caller pins the same page, and the reservation holder lets
	// go first: the frame is still in use, so nothing comes back yet.
	other, err := p.Fetch(nil, page.ID{Space: 1, Page: 1})
	require.NoError(t, err)
	r.Unpin(a, false)
	require.Equal(t, 2, r.Left())

	// The other caller's unpin is the last: the frame returns to r.
	other.Unpin(false)
	require.Equal(t, 3, r.Left())

	// With every unreserved frame pinned, r still gets all three.
	var pinned []*cache.Page
	for n := uint32(10); ; n++ {
		pg, err := p.Fetch(nil, page.ID{Space: 1, Page: n})
		if err != nil {
			require.ErrorIs(t, err, cache.ErrPoolExhausted)
			break
		}
		pinned = append(pinned, pg)
	}
	require.Len(t, pinned, 16-3)
	for n := uint32(1); n <= 3; n++ {
		pg, err := r.Fetch(nil, page.ID{Space: 1, Page: n})
		require.NoError(t, err, "reserved fetch %d", n)
		defer pg.Unpin(false)
	}
	require.Zero(t, r.Left())
	r.Release()
	for _, pg := range pinned {
		pg.Unpin(false)
	}
	st2 := p.Stats()
	require.Equal(t, 3, st2.Pinned)
	require.Zero(t, st2.Reserved)
}

// TestReservationReleasedBeforeLastUnpin: once released, a reservation
// takes nothing back; the frame returns to the pool.
func TestReservationReleasedBeforeLastUnpin(t *testing.T) {
	st := newStore(t)
	putPages(t, st, 1, 1, 4)
	p := newPool(t, st, 16, cache.Options{})
	r, err := p.Reserve(2)
	require.NoError(t, err)
	a, err := r.Fetch(nil, page.ID{Space: 1, Page: 1})
	require.NoError(t, err)
	r.Release()
	require.Zero(t, r.Left())
	a.Unpin(false)
	require.Zero(t, r.Left())
	s := p.Stats()
	require.Zero(t, s.Reserved)
	require.Zero(t, s.Pinned)
}

// TestWriteOutRefusesForeignHeader: a frame whose header was overwritten
// with another page's id is not written over that other page.
func TestWriteOutRefusesForeignHeader(t *testing.T) {
	st := newStore(t)
	putPages(t, st, 1, 1, 2)
	p := newPool(t, st, 16, cache.Options{})
	pg, err := p.Fetch(nil, page.ID{Space: 1, Page: 1})
	require.NoError(t, err)
	pg.Latch()
	page.Init(pg.Data(), page.ID{Space: 1, Page: 2}, page.KindHeap)
	pg.Unlatch()
	pg.Unpin(true)
	err = p.FlushAll(nil)
	require.ErrorIs(t, err, page.ErrCorruptPage)
	require.Contains(t, err.Error(), "1:1")
	require.Equal(t, "page 1:2", storedBody(t, st, page.ID{Space: 1, Page: 2}, 8))
}

// TestFlushWaitsForWriteInFlight: FlushPage of a page that an eviction is
// writing returns only after that write has landed, so a flush followed by
// a sync never misses it.
func TestFlushWaitsForWriteInFlight(t *testing.T) {
	victim := pid(1, 1)
	inner, p, writing, release := dirtyVictimPool(t, victim)
	evicted := make(chan error, 1)
	go func() {
		pg, err := p.Fetch(nil, pid(1, 17))
		if err == nil {
			pg.Unpin(false)
		}
		evicted <- err
	}()
	<-writing // the eviction is writing the victim out

	flushed := make(chan string, 1)
	go func() {
		err := p.FlushPage(nil, victim)
		if err != nil {
			flushed <- err.Error()
			return
		}
		// What the store holds the moment FlushPage returns.
		flushed <- storedBody(t, inner, victim, 3)
	}()
	// Let the write go only once the flush waits for it.
	for !flushWaiting() && len(flushed) == 0 {
		runtime.Gosched()
	}
	close(release)
	require.Equal(t, "new", <-flushed)
	require.NoError(t, <-evicted)
}

// flushWaiting reports whether a goroutine is waiting inside a flush for
// another write of its page to finish.
func flushWaiting() bool {
	buf := make([]byte, 1<<20)
	dump := string(buf[:runtime.Stack(buf, true)])
	for _, g := range strings.Split(dump, "\n\n") {
		if strings.Contains(g, "[sync.Cond.Wait") && strings.Contains(g, "(*Pool).flushLocked") {
			return true
		}
	}
	return false
}
