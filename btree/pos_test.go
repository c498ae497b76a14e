package btree

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
)

// updateAt runs UpdateAtIn in a mini-transaction of its own on a fresh
// meter and returns the meter.
func updateAt(t *testing.T, e *env, key, val []byte, pos Pos) *Meter {
	t.Helper()
	var m Meter
	mt := e.pool.BeginMtr(&m.Meter)
	require.NoError(t, e.tree.UpdateAtIn(&m, mt, key, val, pos))
	mt.Commit()
	return &m
}

// leafHolds reports the kind of pos's page and whether it holds key.
func leafHolds(t *testing.T, e *env, pos Pos, key []byte) (page.Kind, bool) {
	t.Helper()
	pg, err := e.pool.Fetch(nil, e.tree.id(pos.leaf))
	require.NoError(t, err)
	pg.RLatch()
	defer func() { pg.RUnlatch(); pg.Unpin(false) }()
	k := page.KindOf(pg.Data())
	if k != page.KindBTreeLeaf {
		return k, false
	}
	_, found := node(pg.Data()).search(key)
	return k, found
}

// TestCostUpdateAt: an update that starts from the leaf where a read found
// the key visits that leaf alone; when the key has left that leaf (a
// split) or the leaf is gone (a merge freed it), the update pays the
// failed visit and a whole descent, and lands on the right record.
func TestCostUpdateAt(t *testing.T) {
	e := newEnv(t, 4096, 4096, cache.PolicyLRU)
	n := fillTo(t, e.tree, 3, make([]byte, 100))
	mdl := model{}
	for i := 0; i < n; i++ {
		mdl[fmt.Sprintf("key%06d", i)] = string(make([]byte, 100))
	}
	check := func() {
		t.Helper()
		_, err := e.tree.Check(nil)
		require.NoError(t, err)
		for k, v := range mdl {
			got, found, err := e.tree.Get(nil, []byte(k), nil)
			require.NoError(t, err)
			require.True(t, found, k)
			require.Equal(t, v, string(got), k)
		}
	}

	// The position holds: one node at the leaf's depth, one page request.
	key := fmt.Appendf(nil, "key%06d", n/2)
	var pos Pos
	var rm Meter
	_, found, err := e.tree.GetPos(&rm, key, nil, &pos)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, [MaxLevels]int64{1, 1, 1}, rm.NodeVisits)
	require.NotZero(t, pos.leaf)
	val := bytes.Repeat([]byte{'a'}, 100)
	m := updateAt(t, e, key, val, pos)
	require.Equal(t, [MaxLevels]int64{0, 0, 1}, m.NodeVisits)
	require.Equal(t, int64(1), m.PageRequestsTotal())
	require.Equal(t, int64(1), m.PageRequests[page.KindBTreeLeaf])
	mdl[string(key)] = string(val)
	check()

	// A missing key has no position, and UpdateAtIn of the zero Pos is
	// UpdateIn: a descent.
	_, found, err = e.tree.GetPos(nil, []byte("key-absent"), nil, &pos)
	require.NoError(t, err)
	require.False(t, found)
	require.Equal(t, Pos{}, pos)
	val = bytes.Repeat([]byte{'b'}, 100)
	m = updateAt(t, e, key, val, Pos{})
	require.Equal(t, [MaxLevels]int64{1, 1, 1}, m.NodeVisits)
	mdl[string(key)] = string(val)

	// The key leaves its leaf: keys inserted just below it split the leaf
	// until the key is on another page.
	_, _, err = e.tree.GetPos(nil, key, nil, &pos)
	require.NoError(t, err)
	for i := 0; ; i++ {
		if _, holds := leafHolds(t, e, pos, key); !holds {
			break
		}
		require.Less(t, i, 1000, "the key never left its leaf")
		k := fmt.Appendf(nil, "key%06d-%04d", n/2-1, i)
		require.NoError(t, e.tree.Insert(nil, k, make([]byte, 100)))
		mdl[string(k)] = string(make([]byte, 100))
	}
	kind, _ := leafHolds(t, e, pos, key)
	require.Equal(t, page.KindBTreeLeaf, kind)
	// staleUpdate updates key from pos, which no longer holds it: the
	// visit of pos's page, then a descent of the tree (still 3 high).
	staleUpdate := func(what string, c byte) {
		t.Helper()
		s, err := e.tree.Check(nil)
		require.NoError(t, err)
		require.Equal(t, 3, s.Height)
		val := bytes.Repeat([]byte{c}, 100)
		m := updateAt(t, e, key, val, pos)
		require.Equal(t, [MaxLevels]int64{1, 1, 2}, m.NodeVisits, what)
		mdl[string(key)] = string(val)
		check()
	}
	staleUpdate("the stale leaf, then a descent", 'c')

	// The leaf is freed: deleting every other key of it and of the leaves
	// around makes merges until its page is on the free list.
	_, _, err = e.tree.GetPos(nil, key, nil, &pos)
	require.NoError(t, err)
	freed := false
	for i := 1; i < 400 && !freed; i++ {
		for _, j := range []int{n/2 - i, n/2 + i} {
			k := fmt.Sprintf("key%06d", j)
			if _, ok := mdl[k]; !ok {
				continue
			}
			require.NoError(t, e.tree.Delete(nil, []byte(k)))
			delete(mdl, k)
			if kind, _ := leafHolds(t, e, pos, key); kind == page.KindFree {
				freed = true
				break
			}
		}
	}
	require.True(t, freed, "no merge freed the key's leaf")
	staleUpdate("the freed page, then a descent", 'd')

	// A position whose key is absent by now: the update reports it, as
	// UpdateIn does.
	_, _, err = e.tree.GetPos(nil, key, nil, &pos)
	require.NoError(t, err)
	require.NoError(t, e.tree.Delete(nil, key))
	delete(mdl, string(key))
	mt := e.pool.BeginMtr(nil)
	err = e.tree.UpdateAtIn(nil, mt, key, val, pos)
	mt.Commit()
	require.ErrorIs(t, err, ErrKeyNotFound)
	check()
}

// TestUpdateAtAfterFailedCollapse: a root collapse copies the root's only
// child into the root and frees the child. When the free fails (here by
// the test hook, as a failed read of the space's meta page would), the
// child must not be left holding its keys: a position stored before the
// collapse would otherwise find the key there, and the update would go to
// a page outside the tree and be lost.
func TestUpdateAtAfterFailedCollapse(t *testing.T) {
	e := newEnv(t, 4096, 4096, cache.PolicyLRU)
	n := fillTo(t, e.tree, 2, make([]byte, 100))
	key := []byte("key000000")
	var pos Pos
	_, found, err := e.tree.GetPos(nil, key, nil, &pos)
	require.NoError(t, err)
	require.True(t, found)
	require.NotEqual(t, e.tree.Root().Page, pos.leaf)

	errFree := errors.New("free refused by the test")
	fail := func() error { return errFree }
	failed := false
	for i := n - 1; i >= 1 && !failed; i-- {
		s, err := e.tree.Check(nil)
		require.NoError(t, err)
		if s.Height == 2 && s.Leaves == 2 {
			// The next delete that merges the two leaves collapses the
			// root into a leaf.
			freeMergedHook.Store(&fail)
		}
		err = e.tree.Delete(nil, fmt.Appendf(nil, "key%06d", i))
		freeMergedHook.Store(nil)
		if err != nil {
			require.ErrorIs(t, err, errFree)
			failed = true
		}
	}
	require.True(t, failed, "no delete collapsed the root")
	s, err := e.tree.Check(nil)
	require.NoError(t, err)
	require.Equal(t, 1, s.Height)
	kind, holds := leafHolds(t, e, pos, key)
	require.False(t, holds, "the page that left the tree (kind %s) still holds the key", kind)

	val := []byte("new value")
	m := updateAt(t, e, key, val, pos)
	require.Equal(t, [MaxLevels]int64{2}, m.NodeVisits, "the old leaf (now at depth 0 of a tree of height 1), then the root")
	got, found, err := e.tree.Get(nil, key, nil)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, val, got)
}
