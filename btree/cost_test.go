package btree

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
)

// fillTo inserts keys key000000, key000001, ... until the tree has the
// given height, and returns how many it inserted.
func fillTo(t *testing.T, tr *Tree, height int, val []byte) int {
	t.Helper()
	for i := 0; ; i++ {
		require.NoError(t, tr.Insert(nil, fmt.Appendf(nil, "key%06d", i), val))
		if i%100 == 99 {
			s, err := tr.Check(nil)
			require.NoError(t, err)
			if s.Height == height {
				return i + 1
			}
		}
	}
}

func TestCostPointGet(t *testing.T) {
	// A tree of height 3 in 4 KiB pages, in a pool that holds all of it.
	e := newEnv(t, 4096, 4096, cache.PolicyLRU)
	n := fillTo(t, e.tree, 3, make([]byte, 100))
	key := fmt.Appendf(nil, "key%06d", n/2)

	var warm Meter
	v, found, err := e.tree.Get(&warm, key, nil)
	require.NoError(t, err)
	require.True(t, found)
	require.Len(t, v, 100)
	// One node per level, each a pool hit.
	require.Equal(t, [MaxLevels]int64{1, 1, 1}, warm.NodeVisits)
	require.Equal(t, int64(3), warm.PageRequestsTotal())
	require.Equal(t, int64(2), warm.PageRequests[page.KindBTreeInner])
	require.Equal(t, int64(1), warm.PageRequests[page.KindBTreeLeaf])
	require.Equal(t, int64(3), warm.PoolHits)
	require.Zero(t, warm.StoreReads)

	// Cold: a new pool over the same store reads each level once. (Open
	// reads the root to check it; a tree handle made without Open leaves
	// the pool truly cold.)
	require.NoError(t, e.pool.Close())
	pool, err := cache.NewPool(e.store, &cache.Options{PoolSize: 4096 * 4096}, nil)
	require.NoError(t, err)
	e.pool, e.tree = pool, newTree(pool, e.tree.Root(), 3)
	require.Zero(t, pool.Stats().Resident)
	var cold Meter
	_, found, err = e.tree.Get(&cold, key, nil)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, int64(3), cold.StoreReads)
	require.Equal(t, int64(3*4096), cold.StoreReadBytes)
	require.Equal(t, int64(3), cold.PoolMisses)
	require.Zero(t, cold.PoolHits)
	require.Equal(t, int64(3), cold.NodeVisitsTotal())

	// Warm repeat: no store reads.
	var again Meter
	_, _, err = e.tree.Get(&again, key, nil)
	require.NoError(t, err)
	require.Zero(t, again.StoreReads)
	require.Equal(t, int64(3), again.PoolHits)

	// A missing key costs the same descent.
	var miss Meter
	_, found, err = e.tree.Get(&miss, []byte("key999999x"), nil)
	require.NoError(t, err)
	require.False(t, found)
	require.Equal(t, int64(3), miss.NodeVisitsTotal())
}

func TestCostWritesAndScans(t *testing.T) {
	e := newEnv(t, 4096, 4096, cache.PolicyLRU)
	n := fillTo(t, e.tree, 2, make([]byte, 100))
	shape, err := e.tree.Check(nil)
	require.NoError(t, err)
	require.Equal(t, 2, shape.Height)

	// An update in place: shared latch on the root, exclusive on the leaf.
	var m Meter
	require.NoError(t, e.tree.Update(&m, []byte("key000005"), make([]byte, 100)))
	require.Equal(t, [MaxLevels]int64{1, 1}, m.NodeVisits)
	require.Zero(t, m.Splits)

	// A scan of every entry: one descent (2 nodes), then each further
	// leaf once.
	m = Meter{}
	it := e.tree.NewIter(&m, nil)
	count := 0
	for ok := it.First(); ok; ok = it.Next() {
		count++
	}
	require.NoError(t, it.Close())
	require.Equal(t, n, count)
	require.Equal(t, int64(1), m.NodeVisits[0])
	require.Equal(t, int64(shape.Leaves), m.NodeVisits[1])

	// The same scan backwards costs the same.
	m = Meter{}
	it = e.tree.NewIter(&m, nil)
	count = 0
	for ok := it.Last(); ok; ok = it.Prev() {
		count++
	}
	require.NoError(t, it.Close())
	require.Equal(t, n, count)
	require.Equal(t, int64(1), m.NodeVisits[0])
	require.Equal(t, int64(shape.Leaves), m.NodeVisits[1])

	// "Largest key below X" is one descent when X is not the first key
	// of its leaf.
	m = Meter{}
	it = e.tree.NewIter(&m, &IterOptions{Upper: Excl([]byte("key000011"))})
	require.True(t, it.Last())
	require.Equal(t, "key000010", string(it.Key()))
	require.NoError(t, it.Close())
	require.Equal(t, int64(2), m.NodeVisitsTotal())
}

// TestSplitRefusedBeforeItStarts fills a leaf while the pool has exactly
// one frame fewer than a split reserves: every insert that needs a split is
// refused with ErrPoolExhausted and leaves the tree as it was; with one more
// frame the same insert completes.
func TestSplitRefusedBeforeItStarts(t *testing.T) {
	const frames = 32
	e := newEnv(t, 4096, frames, cache.PolicyLRU)
	require.NoError(t, e.pool.CreateSpace(nil, 2))
	var filler []page.ID
	for i := 0; i < frames; i++ {
		mt := e.pool.BeginMtr(nil)
		pg, err := e.pool.AllocPage(mt, nil, 2, page.KindHeap)
		require.NoError(t, err)
		filler = append(filler, pg.ID())
		mt.Release(pg, true)
		mt.Commit()
	}
	var pinned []*cache.Page
	// setAvailable pins filler pages until exactly avail frames are free.
	setAvailable := func(avail int) {
		for _, pg := range pinned {
			pg.Unpin(false)
		}
		pinned = pinned[:0]
		for _, id := range filler {
			st := e.pool.Stats()
			if st.Frames-st.Pinned-st.Reserved <= avail {
				break
			}
			pg, err := e.pool.Fetch(nil, id)
			require.NoError(t, err)
			pinned = append(pinned, pg)
		}
		st := e.pool.Stats()
		require.Equal(t, avail, st.Frames-st.Pinned-st.Reserved)
	}

	refused := 0
	val := make([]byte, 200)
	for i := 0; i < 200; i++ {
		key := fmt.Appendf(nil, "key%06d", i)
		need := reserveFor(int(e.tree.height.Load()))
		before, err := e.tree.Check(nil)
		require.NoError(t, err)
		setAvailable(need - 1)
		err = e.tree.Insert(nil, key, val)
		if err != nil {
			require.ErrorIs(t, err, cache.ErrPoolExhausted)
			require.Contains(t, err.Error(), "refused before it started")
			refused++
			after, cerr := e.tree.Check(nil)
			require.NoError(t, cerr)
			require.Equal(t, before, after, "a refused split changed the tree")
			found, herr := e.tree.Has(nil, key)
			require.NoError(t, herr)
			require.False(t, found)
			setAvailable(need)
			require.NoError(t, e.tree.Insert(nil, key, val))
		}
		found, herr := e.tree.Has(nil, key)
		require.NoError(t, herr)
		require.True(t, found)
	}
	setAvailable(frames)
	shape, err := e.tree.Check(nil)
	require.NoError(t, err)
	require.Equal(t, 200, shape.Entries)
	require.GreaterOrEqual(t, refused, 10, "the test never reached a split")
	// Every split adds one page, and each root split one more (the old
	// root's contents move down): every split was refused once first.
	require.Equal(t, shape.Leaves+shape.Inner-shape.Height, refused)
}

// TestAscendingInsertsFillPages: a tree loaded in key order, or in several
// interleaved ascending streams (TPC-C's districts), splits at the
// insertion point and fills its pages; random order leaves them about 70%
// full, as any B+tree.
func TestAscendingInsertsFillPages(t *testing.T) {
	const n = 20000
	fill := func(keys [][]byte) float64 {
		e := newEnv(t, 4096, 1024, cache.PolicyLRU)
		for _, k := range keys {
			require.NoError(t, e.tree.Insert(nil, k, make([]byte, 50)))
		}
		s, err := e.tree.Check(nil)
		require.NoError(t, err)
		require.Equal(t, n, s.Entries)
		return float64(s.Bytes) / float64((s.Leaves+s.Inner)*(4096-nodeHeader))
	}
	var asc, streams, random [][]byte
	for i := 0; i < n; i++ {
		asc = append(asc, fmt.Appendf(nil, "k%08d", i))
		streams = append(streams, fmt.Appendf(nil, "d%02d-%08d", i%10, i/10))
	}
	r := rand.New(rand.NewPCG(5, 5))
	for _, i := range r.Perm(n) {
		random = append(random, asc[i])
	}
	fa, fs, fr := fill(asc), fill(streams), fill(random)
	t.Logf("fill: ascending %.2f, 10 streams %.2f, random %.2f", fa, fs, fr)
	require.Greater(t, fa, 0.95)
	require.Greater(t, fs, 0.90)
	require.Less(t, fr, 0.85)
}
