package btree

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
)

// TestTreeConcurrent runs writers on disjoint key sets (so each can keep an
// exact model of its own keys) beside readers doing gets and scans in both
// directions over the whole tree, and Check over and over, in a pool
// small enough to evict. Run it with -race. Check beside the writers must
// find nothing wrong (splits and merges meet it half way). At the end the
// tree must hold exactly the union of the writers' models and pass Check.
func TestTreeConcurrent(t *testing.T) {
	const (
		writers = 4
		readers = 3
		opsEach = 1500
		space   = 600 // keys per writer
	)
	seed := uint64(7)
	t.Logf("seed %d", seed)
	e := newEnv(t, 4096, 128, cache.PolicyMidpoint)
	// Keys interleave across writers ("w<n>" suffix) so that writers share
	// leaves and contend for latches, splits and merges.
	key := func(w, i int) []byte { return fmt.Appendf(nil, "k%05d-w%d", i, w) }
	// A permanent key per writer that readers can always find.
	for w := 0; w < writers; w++ {
		require.NoError(t, e.tree.Insert(nil, key(w, space), []byte("fixed")))
	}

	models := make([]model, writers)
	var wg sync.WaitGroup
	errs := make(chan error, writers+readers+1)
	done := make(chan struct{})
	for w := 0; w < writers; w++ {
		models[w] = model{}
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(w)))
			md := models[w]
			var m Meter
			for op := 0; op < opsEach; op++ {
				k := key(w, r.IntN(space))
				_, present := md[string(k)]
				var err error
				switch p := r.IntN(10); {
				case p < 5 && !present:
					v := randVal(r, 300)
					err = e.tree.Insert(&m, k, v)
					md[string(k)] = string(v)
				case p < 7 && present:
					v := randVal(r, 300)
					err = e.tree.Update(&m, k, v)
					md[string(k)] = string(v)
				case present:
					err = e.tree.Delete(&m, k)
					delete(md, string(k))
				}
				if err != nil {
					errs <- fmt.Errorf("writer %d op %d on %q: %w", w, op, k, err)
					return
				}
			}
		}(w)
	}
	var rg sync.WaitGroup
	for rd := 0; rd < readers; rd++ {
		rg.Add(1)
		go func(rd int) {
			defer rg.Done()
			r := rand.New(rand.NewPCG(seed, 100+uint64(rd)))
			var buf []byte
			for {
				select {
				case <-done:
					return
				default:
				}
				// The fixed keys are always there.
				w := r.IntN(writers)
				v, found, err := e.tree.Get(nil, key(w, space), buf)
				if err != nil || !found || string(v) != "fixed" {
					errs <- fmt.Errorf("reader %d: fixed key of writer %d: found=%v err=%v", rd, w, found, err)
					return
				}
				buf = v
				// A bounded scan, forward or backward, must see strictly
				// ordered keys within its bounds.
				lo := key(0, r.IntN(space))
				hi := key(0, r.IntN(space))
				if bytes.Compare(lo, hi) > 0 {
					lo, hi = hi, lo
				}
				it := e.tree.NewIter(nil, &IterOptions{Lower: Incl(lo), Upper: Excl(hi)})
				var last []byte
				fwd := r.IntN(2) == 0
				ok, step := it.First(), it.Next
				if !fwd {
					ok, step = it.Last(), it.Prev
				}
				for ; ok; ok = step() {
					k := it.Key()
					if bytes.Compare(k, lo) < 0 || bytes.Compare(k, hi) >= 0 {
						errs <- fmt.Errorf("reader %d: key %q outside [%q, %q)", rd, k, lo, hi)
						return
					}
					if last != nil && (fwd && bytes.Compare(last, k) >= 0 || !fwd && bytes.Compare(last, k) <= 0) {
						errs <- fmt.Errorf("reader %d: %q after %q (forward %v)", rd, k, last, fwd)
						return
					}
					last = append(last[:0], k...)
				}
				if err := it.Close(); err != nil {
					errs <- fmt.Errorf("reader %d: scan: %w", rd, err)
					return
				}
			}
		}(rd)
	}
	rg.Add(1)
	checks := 0
	go func() {
		defer rg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := e.tree.Check(nil); err != nil {
				errs <- fmt.Errorf("check %d beside the writers: %w", checks, err)
				return
			}
			checks++
		}
	}()
	wg.Wait()
	close(done)
	rg.Wait()
	t.Logf("%d checks beside the writers", checks)
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	all := model{}
	for w, md := range models {
		for k, v := range md {
			all[k] = v
		}
		all[string(key(w, space))] = "fixed"
	}
	shape, err := e.tree.Check(nil)
	require.NoError(t, err)
	require.Equal(t, len(all), shape.Entries)
	checkScan(t, e.tree, all, IterOptions{})
}

// TestCheckLeafLinks: Check follows each leaf's next link and requires
// the neighbour's prev link to name the leaf, and the first leaf's prev
// link to be 0; a broken link in either direction is reported.
func TestCheckLeafLinks(t *testing.T) {
	e := newEnv(t, 4096, 64, cache.PolicyMidpoint)
	for i := range 200 {
		require.NoError(t, e.tree.Insert(nil, fmt.Appendf(nil, "k%05d", i), bytes.Repeat([]byte{'v'}, 100)))
	}
	shape, err := e.tree.Check(nil)
	require.NoError(t, err)
	require.Greater(t, shape.Leaves, 2)
	// The leaves in order, from the first leaf along the next links.
	first := e.tree.root.Page
	for {
		pg, err := e.tree.pool.Fetch(nil, e.tree.id(first))
		require.NoError(t, err)
		n := node(pg.Data())
		pg.Unpin(false)
		if n.isLeaf() {
			break
		}
		first = n.child(-1)
	}
	pg, err := e.tree.pool.Fetch(nil, e.tree.id(first))
	require.NoError(t, err)
	second := node(pg.Data()).next()
	pg.Unpin(false)
	for _, c := range []struct {
		name string
		page uint32
		set  func(node)
		want string
	}{
		{"second leaf's prev", second, func(n node) { n.setPrev(second) }, fmt.Sprintf("leaf %d has prev %d, want %d", second, second, first)},
		{"first leaf's prev", first, func(n node) { n.setPrev(second) }, fmt.Sprintf("leaf %d has prev %d, want 0", first, second)},
	} {
		pg, err := e.tree.pool.Fetch(nil, e.tree.id(c.page))
		require.NoError(t, err)
		pg.Latch()
		n := node(pg.Data())
		old := n.prev()
		c.set(n)
		pg.Unlatch()
		_, err = e.tree.Check(nil)
		require.ErrorIs(t, err, ErrCorruptTree, c.name)
		require.ErrorContains(t, err, c.want, c.name)
		pg.Latch()
		n.setPrev(old)
		pg.Unlatch()
		pg.Unpin(false)
		_, err = e.tree.Check(nil)
		require.NoError(t, err, c.name)
	}
}
