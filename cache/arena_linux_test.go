package cache_test

import (
	"runtime"
	"syscall"
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
		// The live heap after a collection, with the pool alive: what
		// the pool holds, not the garbage other goroutines (pebble's,
		// the race detector's) made meanwhile, which a count of all
		// allocations took in too (a run under -race once counted 10.2
		// MB against the bound's 8.4).
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		q := newPool(t, quiet, frames, cache.Options{PoolPopulate: populate})
		runtime.GC()
		runtime.ReadMemStats(&after)
		grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
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

// A populated pool's arena becomes resident in the background, while the
// pool works: the populator backs pages without writing them, so a page
// written before it gets there keeps its bytes. Close stops it.
func TestPoolPopulateBackground(t *testing.T) {
	// populateStep itself, on a mapping half written: every page becomes
	// resident and none changes.
	const size = 8 << 20
	m, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	require.NoError(t, err)
	defer func() { require.NoError(t, syscall.Munmap(m)) }()
	for i := 0; i < size/2; i += 4096 {
		m[i] = byte(i/4096) | 1
	}
	if !cache.PopulateStep(m) {
		t.Skip("the kernel has no MADV_POPULATE_WRITE (Linux 5.14): the pool populates its arena by writing it, in NewPool")
	}
	resident, pages := cache.Residency(m)
	require.Equal(t, size/4096, pages)
	require.Equal(t, pages, resident)
	for i := 0; i < size; i += 4096 {
		want := byte(0)
		if i < size/2 {
			want = byte(i/4096) | 1
		}
		require.Equal(t, want, m[i], "page %d", i/4096)
	}

	const frames = 4096 // 16 MiB of 4 KiB pages: eight chunks of the populator's
	st := newStore(t)
	putPages(t, st, 7, 0, 255)
	p := newPool(t, st, frames, cache.Options{PoolPopulate: true})
	read := func() {
		for n := range uint32(256) {
			id := pid(7, n)
			pg, err := p.Fetch(nil, id)
			require.NoError(t, err)
			require.Equal(t, "page "+id.String(), body(pg, len("page "+id.String())))
			pg.Unpin(false)
		}
	}
	read()
	p.WaitPopulated()
	resident, pages = p.ArenaResidency()
	require.Equal(t, frames, pages)
	require.Equal(t, pages, resident, "every frame resident")
	read()
	require.NoError(t, p.Close())

	// Close stops a populator still at work, and waits for it.
	q := newPool(t, st, frames, cache.Options{PoolPopulate: true})
	require.NoError(t, q.Close())
	q.WaitPopulated()
}

// Close gives the frames' memory back to the system at once, not when the
// collector next finds the pool unreachable: an experiment opens pool
// after pool in one process, and each held its whole arena until then
// (an experiment of 5 GB pools was killed for memory).
func TestPoolCloseReleasesArena(t *testing.T) {
	const frames = 4096 // 16 MiB of 4 KiB pages: a mapping of its own
	st := newStore(t)
	putPages(t, st, 7, 0, 255)
	p := newPool(t, st, frames, cache.Options{PoolPopulate: true})
	p.WaitPopulated()
	resident, pages := p.ArenaResidency()
	require.Equal(t, frames, pages)
	require.Equal(t, pages, resident, "every frame resident")
	require.NoError(t, p.Close())
	resident, _ = p.ArenaResidency()
	require.Zero(t, resident, "no frame resident after Close")
	_, err := p.Fetch(nil, pid(7, 0))
	require.Error(t, err, "a closed pool fetches nothing")
}
