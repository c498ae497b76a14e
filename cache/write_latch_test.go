package cache_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/enginelab/enginelab/cache"
	"github.com/stretchr/testify/require"
)

// TestWriteUnpinnedLatchedFirst: a page chosen unpinned for a write-out
// (an eviction's dirty victim, a flush's page) is share-latched before the
// pool's lock is released. Another caller can pin it once the lock is
// free and latch it exclusively; if the writer only latched it then, it
// could wait for that caller, and that caller may wait for a lock the
// writer holds (the heap's allocation lock, held across the eviction that
// a new heap page needs): a deadlock, seen as a hung concurrent heap test.
//
// The hook runs while the pool's lock is still held, the write chosen: it
// requires the page's latch to be taken already (the writer's). Only then
// does it start a second goroutine, which pins the page once the lock is
// free, latches it and takes mu, a lock the writer holds across its fetch
// or flush: its latch waits for the writer's copy, so both finish. A
// writer that latches late fails the test rather than hanging it.
func TestWriteUnpinnedLatchedFirst(t *testing.T) {
	const frames = 16 // the smallest pool
	for _, tc := range []struct {
		name  string
		write func(p *cache.Pool, m *cache.Meter) error
	}{
		{"eviction", func(p *cache.Pool, m *cache.Meter) error {
			// Page 17 misses: every frame is resident, and page 1
			// (dirty) is the least recently used, so its write makes
			// the frame.
			pg, err := p.Fetch(m, pid(1, frames+1))
			if err == nil {
				pg.Unpin(false)
			}
			return err
		}},
		{"flush", func(p *cache.Pool, m *cache.Meter) error {
			return p.FlushPage(m, pid(1, 1))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newStore(t)
			putPages(t, st, 1, 1, frames+1)
			p := newPool(t, st, frames, cache.Options{Policy: cache.PolicyLRU})
			// Page 1 dirty and unpinned, then pages 2 to 16 touched
			// after it.
			pg, err := p.Fetch(nil, pid(1, 1))
			require.NoError(t, err)
			pg.Latch()
			setBody(pg, "changed 1")
			pg.Unlatch()
			pg.Unpin(true)
			for n := uint32(2); n <= frames; n++ {
				touch(t, p, nil, pid(1, n))
			}

			var mu sync.Mutex
			var hooked int
			var hookErr error
			other := make(chan error, 1)
			cache.SetWriteUnpinnedHook(func(v *cache.Page) {
				hooked++
				if v.TryLatch() {
					v.Unlatch()
					hookErr = errors.New("the page chosen for a write is not latched while the pool's lock is held")
					return
				}
				id := v.ID() // the frame may hold another page by the time the goroutine runs
				go func() {
					pg, err := p.Fetch(nil, id)
					if err != nil {
						other <- err
						return
					}
					pg.Latch() // waits for the writer's copy
					mu.Lock()  // the writer's lock
					setBody(pg, "changed 2")
					mu.Unlock()
					pg.Unlatch()
					pg.Unpin(true)
					other <- nil
				}()
			})
			t.Cleanup(func() { cache.SetWriteUnpinnedHook(nil) })

			var m cache.Meter
			mu.Lock()
			err = tc.write(p, &m)
			mu.Unlock()
			require.NoError(t, err)
			require.Equal(t, 1, hooked)
			require.NoError(t, hookErr)
			require.NoError(t, <-other)
			cache.SetWriteUnpinnedHook(nil)

			// The write took page 1 as it was before the second change,
			// which stays in the pool, dirty.
			require.EqualValues(t, 1, m.StoreWrites)
			require.Equal(t, "changed 1", storedBody(t, st, pid(1, 1), 9))
			pg, err = p.Fetch(nil, pid(1, 1))
			require.NoError(t, err)
			require.Equal(t, "changed 2", body(pg, 9))
			pg.Unpin(false)
			require.NoError(t, p.FlushPage(nil, pid(1, 1)))
			require.Equal(t, "changed 2", storedBody(t, st, pid(1, 1), 9))
		})
	}
}
