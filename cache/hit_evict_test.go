package cache_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/stretchr/testify/require"
)

// TestHitChangeNotLostToEviction: a hit pins a page without the pool's
// lock, so between an eviction's choice of a clean victim and its removal
// from the page table a hit can pin the page, change it and unpin it. The
// eviction must then give the page up (it is dirty now), not drop the
// change. Two modifiers count up on hot pages of their own through hits, a
// flusher keeps those pages clean so that they are evicted clean, and two
// churners miss on cold pages so that pages are evicted all the time; a
// modifier that reads a counter lower than it wrote saw a change lost.
func TestHitChangeNotLostToEviction(t *testing.T) {
	const frames, pages, hot, rounds = 16, 90, 4, 20000
	st := newStore(t)
	createCounterPages(t, st, frames, pages)
	p := newPool(t, st, frames, cache.Options{Policy: cache.PolicyMidpoint})
	var stop atomic.Bool
	var modifiers, others sync.WaitGroup
	errc := make(chan error, 8)
	for w := range 2 {
		modifiers.Go(func() {
			var seen [pages + 1]uint64
			for i := range rounds * hot {
				id := pid(1, uint32(1+w*hot+i%hot))
				pg, err := p.Fetch(nil, id)
				if err != nil {
					errc <- err
					return
				}
				pg.Latch()
				a, _ := counterOf(pg.Data())
				if a != seen[id.Page] && seen[id.Page] != 0 {
					pg.Unlatch()
					pg.Unpin(false)
					errc <- fmt.Errorf("page %s: counter %d, this modifier wrote %d: a change was lost", id, a, seen[id.Page])
					return
				}
				setCounter(pg, a+1)
				seen[id.Page] = a + 1
				pg.Unlatch()
				pg.Unpin(true)
			}
		})
	}
	others.Go(func() {
		for i := 0; !stop.Load(); i++ {
			if err := p.FlushPage(nil, pid(1, uint32(1+i%(2*hot)))); err != nil {
				errc <- err
				return
			}
		}
	})
	for c := range 2 {
		others.Go(func() {
			for i := c; !stop.Load(); i++ {
				pg, err := p.Fetch(nil, pid(1, uint32(2*hot+1+i%(pages-2*hot))))
				if err != nil {
					errc <- err
					return
				}
				pg.Unpin(false)
			}
		})
	}
	modifiers.Wait()
	stop.Store(true)
	others.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	for n := uint32(1); n <= 2*hot; n++ {
		pg, err := p.Fetch(nil, pid(1, n))
		require.NoError(t, err)
		pg.RLatch()
		a, _ := counterOf(pg.Data())
		pg.RUnlatch()
		pg.Unpin(false)
		require.Equal(t, uint64(rounds), a, "page %d: every increment kept", n)
	}
	// Every slot is back: a flush that found its page pinned after all
	// (shareUnpinnedLocked) refunded the one it took.
	require.Zero(t, p.Stats().Pinned, "frames pinned with nothing pinned")
}

// TestPinHotRightPage: the page table's optimistic pin (no partition
// latch; see pageTable) must never hand back a frame that holds another
// page than the one asked for, however evictions reuse frames around it.
// A 16-frame pool over 120 pages: two churners miss on the cold pages, so
// frames change pages all the time, and once both are under way two
// readers fetch a hot set of pages, keeping the last one pinned while
// they fetch the next (so the hot frames are often pinned or keep a slot,
// when the optimistic pin applies). Each reader also pins optimistically
// the page it holds (which it must get, unless a writer of its partition
// ran meanwhile) and a cold page the churners may be evicting. Every
// frame anyone gets, by Fetch or PinHot, must carry the asked page's id
// in its header. The optimistic pin of a held page must have succeeded,
// or the test tested nothing.
func TestPinHotRightPage(t *testing.T) {
	const frames, pages, hot, rounds = 16, 120, 6, 20000
	st := newStore(t)
	createCounterPages(t, st, frames, pages)
	p := newPool(t, st, frames, cache.Options{Policy: cache.PolicyMidpoint, OldBlocksTime: 1})
	var stop atomic.Bool
	var heldPins, coldPins, coldRefused atomic.Int64
	errc := make(chan error, 4)
	check := func(pg *cache.Page, id page.ID) error {
		pg.RLatch()
		got := page.IDOf(pg.Data())
		pg.RUnlatch()
		if got != id || pg.ID() != id {
			return fmt.Errorf("asked for page %s, got a frame holding %s (header %s)", id, pg.ID(), got)
		}
		return nil
	}
	var readers, churners, started sync.WaitGroup
	started.Add(2)
	for c := range 2 {
		churners.Go(func() {
			signaled := false
			signal := func() {
				if !signaled {
					signaled = true
					started.Done()
				}
			}
			defer signal() // on an early error too
			for i := 0; !stop.Load(); i++ {
				if i == 200 {
					signal()
				}
				id := pid(1, uint32(hot+1+(i*13+c*5)%(pages-hot)))
				pg, err := p.Fetch(nil, id)
				if err == nil {
					err = check(pg, id)
					pg.Unpin(false)
				}
				if err != nil {
					errc <- err
					return
				}
			}
		})
	}
	started.Wait()
	for r := range 2 {
		readers.Go(func() {
			var held *cache.Page
			defer func() {
				if held != nil {
					held.Unpin(false)
				}
			}()
			pinned := func(id page.ID, f *cache.Page, n *atomic.Int64) error {
				if f == nil {
					return nil
				}
				n.Add(1)
				err := check(f, id)
				f.Unpin(false)
				return err
			}
			for i := range rounds {
				id := pid(1, uint32(1+(i+r)%hot))
				pg, err := p.Fetch(nil, id)
				if err != nil {
					errc <- err
					return
				}
				if err := check(pg, id); err != nil {
					pg.Unpin(false)
					errc <- err
					return
				}
				if held != nil {
					held.Unpin(false)
				}
				held = pg
				if err := pinned(id, p.PinHot(id), &heldPins); err != nil {
					errc <- err
					return
				}
				cold := pid(1, uint32(hot+1+(i*7+r)%(pages-hot)))
				f := p.PinHot(cold)
				if f == nil {
					coldRefused.Add(1)
				}
				if err := pinned(cold, f, &coldPins); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	readers.Wait()
	stop.Store(true)
	churners.Wait()
	close(errc)
	for err := range errc {
		require.NoError(t, err)
	}
	t.Logf("optimistic pins: %d of %d held pages; cold pages: %d taken, %d refused",
		heldPins.Load(), 2*rounds, coldPins.Load(), coldRefused.Load())
	require.Positive(t, heldPins.Load(), "the optimistic pin never applied: the test tested nothing")
}

// TestPinHotFrameTakenMeanwhile: between the optimistic pin's lookup and
// its pin, the frame it found is evicted and takes another page (the hook
// does that, on a 16-frame pool whose only unpinned frame holds the page
// asked for). The pin must then be let go and nil returned, not the frame
// with the other page, and the frame's pins be its own holder's again.
// Then the cases where it applies and where it does not: a frame pinned
// already (pinned once more), a frame with neither a pin nor a kept slot,
// a page that is not resident (nil both).
func TestPinHotFrameTakenMeanwhile(t *testing.T) {
	const frames = 16
	st := newStore(t)
	createCounterPages(t, st, frames, frames+4)
	p := newPool(t, st, frames, cache.Options{Policy: cache.PolicyMidpoint})
	var held []*cache.Page
	for n := uint32(1); n < frames; n++ {
		pg, err := p.Fetch(nil, pid(1, n))
		require.NoError(t, err)
		held = append(held, pg)
	}
	x := pid(1, frames)
	pg, err := p.Fetch(nil, x)
	require.NoError(t, err)
	pg.Unpin(false)
	require.Equal(t, 0, pg.Pins(), "a pool this small keeps no slot for an unpinned frame")
	require.Nil(t, p.PinHot(x), "neither a pin nor a kept slot: the latched path's")

	var y *cache.Page
	t.Cleanup(func() { cache.SetPinHotHook(nil) })
	cache.SetPinHotHook(func() {
		cache.SetPinHotHook(nil)
		var err error
		y, err = p.Fetch(nil, pid(1, frames+1)) // the only frame it can take is x's
		require.NoError(t, err)
	})
	if f := p.PinHot(x); f != nil {
		t.Fatalf("asked for page %s, got its old frame, which holds page %s now", x, f.ID())
	}
	require.NotNil(t, y, "the hook ran")
	require.Same(t, pg, y, "the new page took x's frame")
	require.False(t, p.Resident(x))
	require.Equal(t, 1, y.Pins(), "the optimistic pin was let go")
	require.Equal(t, pid(1, frames+1), page.IDOf(y.Data()))

	got := p.PinHot(pid(1, frames+1))
	require.Same(t, y, got, "a pinned frame: pinned once more")
	require.Equal(t, 2, y.Pins())
	got.Unpin(false)
	y.Unpin(false)
	require.Nil(t, p.PinHot(pid(1, frames+2)), "not resident")
	for _, h := range held {
		h.Unpin(false)
	}
}
