package heap

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPruneOptCleanupLock: a prune on access (PruneOpt) takes the page
// only as PostgreSQL's heap_page_prune_opt takes its cleanup lock
// (ConditionalLockBufferForCleanup: the exclusive latch and no other
// pin). While another reader holds the page pinned, it prunes nothing
// and counts the skip (HeapPruneSkipped); once the pin is gone, the same
// call prunes the dead versions.
func TestPruneOptCleanupLock(t *testing.T) {
	_, pool, h := newHeapForTest(t, 4<<10, 32)
	clog := memClog{}
	var m Meter
	root, err := h.InsertVersion(&m, 10, []byte("v0"))
	require.NoError(t, err)
	clog[10] = XidCommitted
	// HOT updates with large images until the page is nearly full: the
	// page's free space must be below pruneMinFree for PruneOpt to act.
	ptr, xid := root, uint64(11)
	for {
		np, hot, err := h.UpdateVersion(&m, ptr, xid, bytes.Repeat([]byte{byte(xid)}, 300), true)
		require.NoError(t, err)
		clog[xid] = XidCommitted
		if !hot {
			break // the page is full: this version went to another page
		}
		ptr, xid = np, xid+1
	}
	require.NotZero(t, h.PruneXid(root.Page), "the page has a prune hint")
	horizon := xid + 1

	// Another reader's pin.
	pg, err := pool.Fetch(nil, h.id(root.Page))
	require.NoError(t, err)
	m = Meter{}
	res, err := h.PruneOpt(&m, root.Page, horizon, clog)
	require.NoError(t, err)
	require.Zero(t, res.Pruned, "a pinned page is not pruned")
	require.Equal(t, int64(1), m.HeapPruneSkipped)
	require.Zero(t, m.HeapPrunes)

	pg.Unpin(false)
	m = Meter{}
	res, err = h.PruneOpt(&m, root.Page, horizon, clog)
	require.NoError(t, err)
	require.Positive(t, res.Pruned, "the pin is gone: the dead versions go")
	require.Zero(t, m.HeapPruneSkipped)
	require.Equal(t, int64(1), m.HeapPrunes)
}
