package cache_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/enginelab/enginelab/cache"
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
}
