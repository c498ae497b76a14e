package cache

import (
	"runtime"
	"strings"
	"testing"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/stretchr/testify/require"
)

// TestLRUBatchGivesUpPinnedPage: an LRU batch (Flushing51's freeMargin,
// run by a caller that may hold page latches and locks) gives up a page
// that was pinned after it was chosen, rather than wait for its latch:
// here the page is pinned and exclusively latched for the whole call.
// A batch that waited is seen blocked in the latch, reported, and let go.
func TestLRUBatchGivesUpPinnedPage(t *testing.T) {
	st, err := store.OpenPebble(store.PebbleOptions{PageSize: 4096})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	id := page.ID{Space: 1, Page: 1}
	buf := make([]byte, st.PageSize())
	page.Init(buf, id, page.KindHeap)
	page.Seal(buf)
	require.NoError(t, st.WritePage(id, buf))
	p, err := NewPool(st, &Options{PoolSize: 16 * 4096, Policy: PolicyLRU}, &Wiring{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })

	pg, err := p.Fetch(nil, id)
	require.NoError(t, err)
	pg.Latch()
	pg.dirty.Store(true) // changed under the latch, which the call never sees released

	var m Meter
	b := p.newBatcher(&m)
	b.unpinnedOnly = true
	done := make(chan error, 1)
	go func() { done <- b.add(pg, id, false, &m.LRUFlushPages) }()
	var addErr error
	waited := false
	for finished := false; !finished; {
		select {
		case addErr = <-done:
			finished = true
		default:
			if stackHas("sync.RWMutex.RLock", "(*batcher).prepare") {
				waited = true
				pg.Unlatch() // let it go
				addErr = <-done
				pg.Latch()
				finished = true
			}
			runtime.Gosched()
		}
	}
	require.False(t, waited, "the LRU batch waited for the latch of a page pinned since it was chosen")
	require.NoError(t, addErr)
	require.NoError(t, b.flush())
	require.Zero(t, m.LRUFlushPages)
	require.Zero(t, m.StoreWrites)
	require.True(t, pg.dirty.Load(), "the page is still to be written")
	pg.Unlatch()
	pg.Unpin(true)
	require.Zero(t, p.Stats().Pinned)
}

// stackHas reports whether some goroutine is in state state with fn in
// its stack.
func stackHas(state, fn string) bool {
	buf := make([]byte, 1<<20)
	dump := string(buf[:runtime.Stack(buf, true)])
	for _, g := range strings.Split(dump, "\n\n") {
		if strings.Contains(g, "["+state) && strings.Contains(g, fn) {
			return true
		}
	}
	return false
}
