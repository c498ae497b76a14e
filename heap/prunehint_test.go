package heap

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// countClog is memClog counting its lookups.
type countClog struct {
	memClog
	n int
}

func (c *countClog) XidStatus(xid uint64) (XidStatus, error) {
	c.n++
	return c.memClog.XidStatus(xid)
}

// TestPruneSetsHintBits: a prune sets the hint bits it learns from the
// commit log on every version it examines, as PostgreSQL's prune does
// through HeapTupleSatisfiesVacuum's SetHintBits, so that the next prune
// of the page asks the commit log about the versions written since, not
// again about every version on the page.
func TestPruneSetsHintBits(t *testing.T) {
	_, _, h := newHeapForTest(t, 4<<10, 32)
	clog := &countClog{memClog: memClog{}}
	const rows = 20
	var ptrs []RowPtr
	for i := range rows {
		xid := uint64(10 + i)
		p, err := h.InsertVersion(nil, xid, fmt.Appendf(nil, "row %02d", i))
		require.NoError(t, err)
		clog.memClog[xid] = XidCommitted
		ptrs = append(ptrs, p)
	}
	roots := append([]RowPtr(nil), ptrs...)
	page := ptrs[0].Page
	for _, p := range ptrs {
		require.Equal(t, page, p.Page, "every row on one page")
	}
	update := func(i int, xid uint64) {
		t.Helper()
		np, hot, err := h.UpdateVersion(nil, ptrs[i], xid, fmt.Appendf(nil, "row %02d, version %d", i, xid), true)
		require.NoError(t, err)
		require.True(t, hot)
		clog.memClog[xid] = XidCommitted
		ptrs[i] = np
	}

	// One row updated: the prune removes its old version, and asks the
	// commit log about every version's inserter (20, and the new one's)
	// and the updater; it sets hints on the 21 versions (the old one's
	// inserter and updater in one).
	update(3, 100)
	var m Meter
	res, err := h.Prune(&m, page, 1000, clog)
	require.NoError(t, err)
	require.Equal(t, 1, res.Pruned)
	require.GreaterOrEqual(t, clog.n, rows+1)
	require.Equal(t, int64(rows+1), m.HeapHintsSet, "each version's inserter, committed: %s", &m)

	// Another row updated: the second prune knows the 20 surviving
	// versions' inserters from their hints; it asks about the new
	// version's inserter and the update's (the same transaction), and the
	// old version's updater.
	update(7, 101)
	clog.n = 0
	m = Meter{}
	res, err = h.Prune(&m, page, 1000, clog)
	require.NoError(t, err)
	require.Equal(t, 1, res.Pruned)
	require.LessOrEqual(t, clog.n, 2, "lookups after the first prune set the hints")
	require.Equal(t, int64(2), m.HeapHintsSet, "the new version's inserter, the old one's updater: %s", &m)

	// Nothing new: a prune asks nothing and sets nothing.
	clog.n = 0
	m = Meter{}
	res, err = h.Prune(&m, page, 1000, clog)
	require.NoError(t, err)
	require.Zero(t, res.Pruned)
	require.Zero(t, clog.n)
	require.Zero(t, m.HeapHintsSet)

	// Every row still reads as its latest version, through its root.
	for i, root := range roots {
		want := fmt.Sprintf("row %02d", i)
		switch i {
		case 3:
			want = "row 03, version 100"
		case 7:
			want = "row 07, version 101"
		}
		got, at, ok, err := h.FetchVersion(nil, root, &Snapshot{Xmin: 1000, Xmax: 1000}, clog, nil)
		require.NoError(t, err)
		require.True(t, ok, want)
		require.Equal(t, ptrs[i], at)
		require.Equal(t, want, string(got))
	}
}
