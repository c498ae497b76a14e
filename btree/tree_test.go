package btree

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/store"
)

// env is a tree on a fresh in-memory store.
type env struct {
	store *store.PebbleStore
	pool  *cache.Pool
	tree  *Tree
}

func newEnv(t testing.TB, pageSize, frames int, policy cache.PolicyKind) *env {
	t.Helper()
	st, err := store.OpenPebble(store.PebbleOptions{PageSize: pageSize})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	pool, err := cache.NewPool(st, &cache.Options{PoolSize: int64(frames * pageSize), Policy: policy}, nil)
	require.NoError(t, err)
	tree, err := Create(nil, pool, 1)
	require.NoError(t, err)
	return &env{store: st, pool: pool, tree: tree}
}

// reopen flushes the pool, drops it, and opens the tree through a new, cold
// pool over the same store.
func (e *env) reopen(t testing.TB, frames int) {
	t.Helper()
	require.NoError(t, e.pool.Close())
	pool, err := cache.NewPool(e.store, &cache.Options{PoolSize: int64(frames * e.store.PageSize())}, nil)
	require.NoError(t, err)
	tree, err := Open(nil, pool, e.tree.Space())
	require.NoError(t, err)
	e.pool, e.tree = pool, tree
}

// model is the reference: a map, sorted on demand.
type model map[string]string

func (md model) sorted() []string {
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// inRange reports whether k lies within the bounds.
func inRange(k string, o IterOptions) bool {
	if o.Lower.Kind != Unbounded {
		c := bytes.Compare([]byte(k), o.Lower.Key)
		if c < 0 || (c == 0 && o.Lower.Kind == Exclusive) {
			return false
		}
	}
	if o.Upper.Kind != Unbounded {
		c := bytes.Compare([]byte(k), o.Upper.Key)
		if c > 0 || (c == 0 && o.Upper.Kind == Exclusive) {
			return false
		}
	}
	return true
}

// keyPad scales the zero padding of random keys (0, 1 or 2 times it).
var keyPad = 20

func randKey(r *rand.Rand, space int) []byte {
	// Zero padding of varying length makes keys of many sizes that still
	// collide often enough for updates and duplicates.
	n := r.IntN(space)
	pad := r.IntN(3) * keyPad
	return fmt.Appendf(nil, "k%0*d", 6+pad, n)
}

func randVal(r *rand.Rand, maxLen int) []byte {
	v := make([]byte, 1+r.IntN(maxLen))
	for i := range v {
		v[i] = byte('a' + r.IntN(26))
	}
	return v
}

func randBound(r *rand.Rand, space int) Bound {
	switch r.IntN(3) {
	case 0:
		return Bound{}
	case 1:
		return Incl(randKey(r, space))
	default:
		return Excl(randKey(r, space))
	}
}

// checkScan compares a bounded scan in both directions with the model.
func checkScan(t *testing.T, tr *Tree, md model, o IterOptions) {
	t.Helper()
	var want []string
	for _, k := range md.sorted() {
		if inRange(k, o) {
			want = append(want, k)
		}
	}
	it := tr.NewIter(nil, &o)
	var got []string
	for ok := it.First(); ok; ok = it.Next() {
		got = append(got, string(it.Key()))
		require.Equal(t, md[string(it.Key())], string(it.Value()), "value of %q", it.Key())
	}
	require.NoError(t, it.Err())
	require.Equal(t, want, got, "forward scan %s", describe(o))
	got = got[:0]
	for ok := it.Last(); ok; ok = it.Prev() {
		got = append(got, string(it.Key()))
	}
	require.NoError(t, it.Close())
	slices.Reverse(got)
	require.Equal(t, want, got, "reverse scan %s", describe(o))
}

func describe(o IterOptions) string {
	b := func(x Bound) string {
		switch x.Kind {
		case Inclusive:
			return "incl " + string(x.Key)
		case Exclusive:
			return "excl " + string(x.Key)
		}
		return "none"
	}
	return "[" + b(o.Lower) + ", " + b(o.Upper) + "]"
}

func TestTreeModel(t *testing.T) {
	skipUnderRace(t)
	for _, tc := range []struct {
		name     string
		pageSize int
		frames   int
		ops      int
		space    int
		maxVal   int
		policy   cache.PolicyKind
		keyPad   int
		height   int // the least height the run must reach
	}{
		// A pool far smaller than the tree: pages are evicted and re-read.
		{"4KiB/small-pool/lru", 4096, 24, 6000, 3000, 300, cache.PolicyLRU, 20, 2},
		{"4KiB/small-pool/midpoint", 4096, 24, 6000, 3000, 300, cache.PolicyMidpoint, 20, 2},
		// Large values: few entries a page, many merges.
		{"4KiB/big-values", 4096, 40, 3000, 800, 970, cache.PolicyLRU, 20, 2},
		// Long keys: small fan-out, so inner nodes split and merge too.
		{"4KiB/long-keys", 4096, 24, 8000, 3000, 200, cache.PolicyLRU, 150, 3},
		{"16KiB", 16384, 16, 8000, 4000, 400, cache.PolicyMidpoint, 20, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keyPad = tc.keyPad
			defer func() { keyPad = 20 }()
			seed := uint64(20261129)
			t.Logf("seed %d", seed)
			r := rand.New(rand.NewPCG(seed, uint64(tc.pageSize)))
			e := newEnv(t, tc.pageSize, tc.frames, tc.policy)
			md := model{}
			var buf []byte
			var m Meter
			for op := 0; op < tc.ops; op++ {
				k := randKey(r, tc.space)
				p := r.IntN(100)
				if op >= tc.ops/2 && p >= 10 && p < 45 {
					// Second half: mostly deletes, so that leaves empty
					// and merge while scans and gets go on.
					p = 60
				}
				switch {
				case p < 35:
					v := randVal(r, tc.maxVal)
					err := e.tree.Insert(&m, k, v)
					if _, ok := md[string(k)]; ok {
						require.ErrorIs(t, err, ErrDuplicateKey)
					} else {
						require.NoError(t, err, "op %d insert %q", op, k)
						md[string(k)] = string(v)
					}
				case p < 45:
					v := randVal(r, tc.maxVal)
					require.NoError(t, e.tree.Put(&m, k, v))
					md[string(k)] = string(v)
				case p < 55:
					v := randVal(r, tc.maxVal)
					err := e.tree.Update(&m, k, v)
					if _, ok := md[string(k)]; ok {
						require.NoError(t, err)
						md[string(k)] = string(v)
					} else {
						require.ErrorIs(t, err, ErrKeyNotFound)
					}
				case p < 80:
					err := e.tree.Delete(&m, k)
					if _, ok := md[string(k)]; ok {
						require.NoError(t, err, "op %d delete %q", op, k)
						delete(md, string(k))
					} else {
						require.ErrorIs(t, err, ErrKeyNotFound)
					}
				case p < 95:
					v, found, err := e.tree.Get(&m, k, buf)
					require.NoError(t, err)
					want, ok := md[string(k)]
					require.Equal(t, ok, found, "get %q", k)
					if ok {
						require.Equal(t, want, string(v))
					}
					buf = v
				default:
					checkScan(t, e.tree, md, IterOptions{Lower: randBound(r, tc.space), Upper: randBound(r, tc.space)})
				}
				if op%1000 == 999 {
					shape, err := e.tree.Check(nil)
					require.NoError(t, err, "after op %d", op)
					require.Equal(t, len(md), shape.Entries)
				}
			}
			checkScan(t, e.tree, md, IterOptions{})
			shape, err := e.tree.Check(nil)
			require.NoError(t, err)
			t.Logf("shape %+v; %s", shape, &m)
			// The run must have exercised what it claims to test.
			require.Positive(t, m.Splits)
			require.Positive(t, m.Merges)
			require.Positive(t, m.StoreReads)
			require.Positive(t, m.DirtyWriteBacks)
			require.GreaterOrEqual(t, shape.Height, tc.height)
			e.reopen(t, tc.frames)
			shape, err = e.tree.Check(nil)
			require.NoError(t, err)
			require.Equal(t, len(md), shape.Entries)
			checkScan(t, e.tree, md, IterOptions{})
			// Delete everything: merges all the way back to a lone root.
			for _, k := range md.sorted() {
				require.NoError(t, e.tree.Delete(nil, []byte(k)))
			}
			shape, err = e.tree.Check(nil)
			require.NoError(t, err)
			require.Equal(t, Shape{Height: 1, Leaves: 1}, shape)
		})
	}
}

func TestTreeKeyTooLarge(t *testing.T) {
	e := newEnv(t, 4096, 16, cache.PolicyLRU)
	require.Equal(t, 1024, e.tree.MaxEntry())
	err := e.tree.Insert(nil, make([]byte, 1000), make([]byte, 25))
	require.ErrorIs(t, err, ErrKeyTooLarge)
	require.Contains(t, err.Error(), "1025")
	require.NoError(t, e.tree.Insert(nil, make([]byte, 1000), make([]byte, 24)))
	require.ErrorIs(t, e.tree.Put(nil, []byte("x"), make([]byte, 5000)), ErrKeyTooLarge)
}

func TestTreeErrors(t *testing.T) {
	e := newEnv(t, 4096, 16, cache.PolicyLRU)
	require.NoError(t, e.tree.Insert(nil, []byte("a"), []byte("1")))
	require.ErrorIs(t, e.tree.Insert(nil, []byte("a"), []byte("2")), ErrDuplicateKey)
	require.ErrorIs(t, e.tree.Update(nil, []byte("b"), []byte("2")), ErrKeyNotFound)
	require.ErrorIs(t, e.tree.Delete(nil, []byte("b")), ErrKeyNotFound)
	_, err := Open(nil, e.pool, 99)
	require.ErrorIs(t, err, cache.ErrSpaceNotFound)
	_, err = Create(nil, e.pool, 1)
	require.ErrorIs(t, err, cache.ErrSpaceExists)
	require.True(t, errors.Is(err, cache.ErrSpaceExists))
}

// TestDeleteInOrderVariableSizes deletes, in key order, keys whose entries
// range from a few bytes to a quarter page: inner nodes empty of keys next
// to siblings too full to merge with, and must borrow instead, or leaves
// below them would end up empty.
func TestDeleteInOrderVariableSizes(t *testing.T) {
	skipUnderRace(t)
	for seed := uint64(1); seed <= 10; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 99))
			e := newEnv(t, 4096, 64, cache.PolicyLRU)
			md := model{}
			for len(md) < 1500 {
				k := fmt.Appendf(nil, "%08d", r.IntN(1_000_000))
				v := make([]byte, r.IntN(1000-len(k)))
				if _, ok := md[string(k)]; ok {
					continue
				}
				require.NoError(t, e.tree.Insert(nil, k, v))
				md[string(k)] = string(v)
			}
			var m Meter
			for i, k := range md.sorted() {
				require.NoError(t, e.tree.Delete(&m, []byte(k)))
				delete(md, k)
				if i%100 == 0 {
					shape, err := e.tree.Check(nil)
					require.NoError(t, err, "after %d deletes", i+1)
					require.Equal(t, len(md), shape.Entries)
				}
			}
			shape, err := e.tree.Check(nil)
			require.NoError(t, err)
			require.Equal(t, Shape{Height: 1, Leaves: 1}, shape)
			require.Positive(t, m.Merges)
		})
	}
}

// TestIterEmptyKeyBounds: the empty key is a key like any other, as a bound
// and as an entry.
func TestIterEmptyKeyBounds(t *testing.T) {
	e := newEnv(t, 4096, 64, cache.PolicyLRU)
	md := model{"": "empty"}
	require.NoError(t, e.tree.Insert(nil, []byte{}, []byte("empty")))
	for i := 0; i < 300; i++ {
		k := fmt.Sprintf("k%04d", i)
		require.NoError(t, e.tree.Insert(nil, []byte(k), []byte("v")))
		md[k] = "v"
	}
	for _, o := range []IterOptions{
		{Upper: Incl(nil)},
		{Upper: Excl([]byte{})},
		{Lower: Excl(nil)},
		{Lower: Incl([]byte{})},
		{Lower: Incl(nil), Upper: Incl(nil)},
		{Lower: Excl(nil), Upper: Excl([]byte("k0100"))},
	} {
		checkScan(t, e.tree, md, o)
	}
	it := e.tree.NewIter(nil, nil)
	require.False(t, it.SeekLT([]byte{}))
	require.False(t, it.SeekLT(nil))
	require.True(t, it.SeekGE(nil))
	require.Equal(t, "", string(it.Key()))
	require.Equal(t, "empty", string(it.Value()))
	require.True(t, it.Next())
	require.Equal(t, "k0000", string(it.Key()))
	require.True(t, it.Prev())
	require.Equal(t, "", string(it.Key()))
	require.False(t, it.Prev())
	require.NoError(t, it.Close())
}

// TestOpenNotATree: opening a space that holds something else is an
// error, not a panic.
func TestOpenNotATree(t *testing.T) {
	e := newEnv(t, 4096, 64, cache.PolicyLRU)
	require.NoError(t, e.pool.CreateSpace(nil, 2))
	mt := e.pool.BeginMtr(nil)
	pg, err := e.pool.AllocPage(mt, nil, 2, page.KindHeap)
	require.NoError(t, err)
	mt.Write(pg, page.HeaderSize, bytes.Repeat([]byte{0xff}, 64))
	mt.Release(pg, true)
	require.NoError(t, e.pool.SetRoot(mt, 2, pg.ID().Page))
	mt.Commit()
	_, err = Open(nil, e.pool, 2)
	require.ErrorIs(t, err, ErrCorruptTree)
	require.Contains(t, err.Error(), "2:1")
	// A handle that skipped Open's check fails on use, also without a
	// panic, and leaves no page pinned.
	tr := newTree(e.pool, pg.ID(), 1)
	_, _, err = tr.Get(nil, []byte("k"), nil)
	require.ErrorIs(t, err, ErrCorruptTree)
	require.ErrorIs(t, tr.Insert(nil, []byte("k"), []byte("v")), ErrCorruptTree)
	require.Zero(t, e.pool.Stats().Pinned)
}

// TestDeleteIf: DeleteIfIn deletes exactly the keys whose value passes
// the condition, on the optimistic path and on the pessimistic one (the
// deletes empty leaves and merge them), and reports a missing key as not
// deleted, without an error.
func TestDeleteIf(t *testing.T) {
	e := newEnv(t, page.MinSize, 256, cache.PolicyLRU)
	md := model{}
	for i := range 2000 {
		k := fmt.Sprintf("key%05d", i)
		v := "live"
		if i%3 != 0 {
			v = "dead"
		}
		require.NoError(t, e.tree.Insert(nil, []byte(k), []byte(v)))
		md[k] = v
	}
	dead := func(v []byte) bool { return string(v) == "dead" }
	for i := range 2001 {
		k := fmt.Sprintf("key%05d", i)
		mt := e.pool.BeginMtr(nil)
		ok, err := e.tree.DeleteIfIn(nil, mt, []byte(k), dead)
		mt.Commit()
		require.NoError(t, err)
		require.Equal(t, md[k] == "dead", ok, k)
		if ok {
			delete(md, k)
		}
	}
	_, err := e.tree.Check(nil)
	require.NoError(t, err)
	it := e.tree.NewIter(nil, nil)
	var got []string
	for ok := it.First(); ok; ok = it.Next() {
		require.Equal(t, "live", string(it.Value()))
		got = append(got, string(it.Key()))
	}
	require.NoError(t, it.Close())
	require.Equal(t, md.sorted(), got)
}

// TestPageMaxTrx: InsertTrxIn and UpdateTrxIn raise their leaf's max trx
// id (InnoDB's PAGE_MAX_TRX_ID); plain writes leave it; a split gives both
// halves the leaf's, a merge the larger of the two; the iterator reports
// the current entry's leaf's.
func TestPageMaxTrx(t *testing.T) {
	e := newEnv(t, page.MinSize, 256, cache.PolicyLRU)
	const n = 1000
	key := func(p string, i int) []byte { return []byte(fmt.Sprintf("%s%05d", p, i)) }
	val := bytes.Repeat([]byte("v"), 40)
	for i := range n {
		require.NoError(t, e.tree.Insert(nil, key("a", i), val))
	}
	write := func(f func(mt *cache.Mtr) error) {
		mt := e.pool.BeginMtr(nil)
		require.NoError(t, f(mt))
		mt.Commit()
	}
	for i := range n {
		write(func(mt *cache.Mtr) error { return e.tree.InsertTrxIn(nil, mt, key("b", i), val, uint64(5+i%3)) })
	}
	// maxTrx maps each key to its leaf's max trx id, and counts leaves.
	maxTrx := func() (map[string]uint64, int) {
		got := map[string]uint64{}
		leaves := map[uint64]bool{}
		it := e.tree.NewIter(nil, nil)
		for ok := it.First(); ok; ok = it.Next() {
			got[string(it.Key())] = it.PageMaxTrx()
			leaves[uint64(it.pg.ID().Page)] = true
		}
		require.NoError(t, it.Close())
		return got, len(leaves)
	}
	got, leaves := maxTrx()
	require.Greater(t, leaves, 20)
	require.Zero(t, got[string(key("a", 0))], "plain inserts leave it 0")
	for i := range n {
		require.GreaterOrEqual(t, got[string(key("b", i))], uint64(5+i%3), "b%d", i)
		require.LessOrEqual(t, got[string(key("b", i))], uint64(7))
	}
	write(func(mt *cache.Mtr) error { return e.tree.UpdateTrxIn(nil, mt, key("a", 0), val, 9) })
	got, _ = maxTrx()
	require.Equal(t, uint64(9), got[string(key("a", 0))])
	require.Zero(t, got[string(key("a", n/2))])

	// Deletes merge the b leaves into each other and into the last a
	// leaves: every survivor next to a b key carries at least 5.
	for i := range n - 1 {
		require.NoError(t, e.tree.Delete(nil, key("b", i)))
	}
	for i := n / 2; i < n; i++ {
		require.NoError(t, e.tree.Delete(nil, key("a", i)))
	}
	_, err := e.tree.Check(nil)
	require.NoError(t, err)
	got, _ = maxTrx()
	require.GreaterOrEqual(t, got[string(key("b", n-1))], uint64(5))
	require.Equal(t, uint64(9), got[string(key("a", 0))])
}
