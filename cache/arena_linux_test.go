package cache_test

import (
	"runtime"
	"testing"

	"github.com/enginelab/enginelab/cache"
	"github.com/stretchr/testify/require"
)

// On Linux a pool's frames are outside Go's heap: a 64 MiB pool, populated
// or not, adds to the heap only its frames' overhead (FrameOverhead each),
// and its pages work as any others. Dropping the pool unmaps them (a
// cleanup) without disturbing the next pool.
func TestPoolArenaOutsideHeap(t *testing.T) {
	const frames = 16384 // 64 MiB of 4 KiB pages
	// The heap is measured over an empty store, which pebble does no
	// background work for.
	quiet := newStore(t)
	st := newStore(t)
	putPages(t, st, 7, 0, frames-1)
	for _, populate := range []bool{false, true} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		q := newPool(t, quiet, frames, cache.Options{PoolPopulate: populate})
		runtime.ReadMemStats(&after)
		grew := int64(after.TotalAlloc - before.TotalAlloc)
		require.Less(t, grew, int64(frames)*2*cache.FrameOverhead, "populate %v: the heap holds the frames' overhead, not their pages", populate)
		runtime.KeepAlive(q)

		p := newPool(t, st, frames, cache.Options{PoolPopulate: populate})

		// Every frame takes a page, read back as it was stored.
		for n := range uint32(frames) {
			id := pid(7, n)
			pg, err := p.Fetch(nil, id)
			require.NoError(t, err)
			require.Equal(t, "page "+id.String(), body(pg, len("page "+id.String())))
			pg.Unpin(false)
		}
		require.Equal(t, frames, p.Stats().Resident)
		runtime.KeepAlive(p)
	}
	// The pools above are unreachable: their cleanups unmap them.
	runtime.GC()
	runtime.GC()
}
