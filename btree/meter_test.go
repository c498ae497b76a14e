package btree

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
)

// counters returns pointers to every counter of the struct p points to,
// array elements and embedded structs included, found by reflection so
// that a counter added later is covered without touching this test.
func counters(p any) []*int64 {
	var out []*int64
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Int64:
			out = append(out, v.Addr().Interface().(*int64))
		case reflect.Array:
			for j := range v.Len() {
				walk(v.Index(j))
			}
		case reflect.Struct:
			for i := range v.NumField() {
				walk(v.Field(i))
			}
		default:
			panic("meter field of kind " + v.Kind().String() + " is not a counter")
		}
	}
	walk(reflect.ValueOf(p).Elem())
	return out
}

func TestMeterAddSubDiff(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 1))
	random := func() Meter {
		var m Meter
		for _, c := range counters(&m) {
			*c = rng.Int64N(1<<40) - 1<<39
		}
		return m
	}
	for range 100 {
		a, b := random(), random()
		sum := a
		sum.Add(&b)
		ca, cb, cs := counters(&a), counters(&b), counters(&sum)
		for i := range cs {
			require.Equal(t, *ca[i]+*cb[i], *cs[i], "counter %d not added", i)
		}
		require.Equal(t, b, sum.Diff(&a))
		require.Equal(t, a, sum.Diff(&b))
		back := sum
		back.Sub(&b)
		require.Equal(t, a, back)
		saved := sum
		_ = sum.Diff(&a)
		require.Equal(t, saved, sum)

		// The counts alone combine the same way.
		tc := a.TreeCounts
		tc.Add(&b.TreeCounts)
		require.Equal(t, sum.TreeCounts, tc)
		require.Equal(t, b.TreeCounts, tc.Diff(&a.TreeCounts))
	}

	// Totals.
	var c TreeCounts
	c.NodeVisits[0] = 5
	c.NodeVisits[MaxLevels-1] = 6
	require.EqualValues(t, 11, c.NodeVisitsTotal())

	// nil on either side is a no-op.
	var nilMeter *Meter
	var nilCounts *TreeCounts
	m := Meter{TreeCounts: c}
	require.NotPanics(t, func() { nilMeter.Add(&m); nilMeter.Sub(&m); nilCounts.Add(&c) })
	before := m
	m.Add(nil)
	m.Sub(nil)
	m.TreeCounts.Add(nil)
	require.Equal(t, before, m)

	// A nil *Meter is an Account that counts nothing.
	require.Nil(t, nilMeter.Pages())
	require.Nil(t, nilMeter.Tree())
	require.Same(t, &m.Meter, m.Pages())
	require.Same(t, &m.TreeCounts, m.Tree())
}

func TestMeterString(t *testing.T) {
	var m Meter
	require.Equal(t, "", m.String())
	m.PoolHits = 3
	m.PageRequests[page.KindBTreeLeaf] = 2
	m.NodeVisits[1] = 9
	m.Splits = -1
	require.Equal(t, "req.btree-leaf=2 hits=3 nodes.d1=9 splits=-1", m.String())
	require.Equal(t, "nodes.d1=9 splits=-1", m.TreeCounts.String())

	// Every counter, alone, shows up under a distinct name.
	seen := map[string]bool{}
	var z Meter
	for i := range counters(&z) {
		var one Meter
		*counters(&one)[i] = 7
		s := one.String()
		require.True(t, strings.HasSuffix(s, "=7"), "counter %d: %q", i, s)
		require.NotContains(t, s, " ", "counter %d: %q", i, s)
		require.False(t, seen[s], "two counters print as %q", s)
		seen[s] = true
	}
}

// TestMeterAccountAllocs checks that handing a *Meter to the tree as its
// Account allocates nothing: a point get on a warm pool allocates nothing
// with a meter, as without one.
func TestMeterAccountAllocs(t *testing.T) {
	e := newEnv(t, 4096, 256, cache.PolicyLRU)
	fillTo(t, e.tree, 2, make([]byte, 100))
	key := []byte("key000005")
	dst := make([]byte, 0, 128)
	var m Meter
	allocs := testing.AllocsPerRun(100, func() {
		_, _, _ = e.tree.Get(&m, key, dst)
	})
	require.Zero(t, allocs)
	require.Positive(t, m.NodeVisitsTotal())
	require.Positive(t, m.PoolHits)
}

// TestInitIterReuse checks that an Iter initialized again and again, over
// other bounds and from any position, walks what a new iterator walks, and
// that initializing one that holds a pin releases it.
func TestInitIterReuse(t *testing.T) {
	e := newEnv(t, 4096, 256, cache.PolicyLRU)
	n := fillTo(t, e.tree, 2, make([]byte, 100))
	key := func(i int) []byte { return fmt.Appendf(nil, "key%06d", i) }
	walk := func(it *Iter) []string {
		var got []string
		for ok := it.First(); ok; ok = it.Next() {
			got = append(got, string(it.Key()))
		}
		require.NoError(t, it.Err())
		return got
	}
	bounds := []IterOptions{
		{Lower: Incl(key(3)), Upper: Excl(key(80))},
		{},
		{Lower: Excl(key(n - 5))},
		{Upper: Incl(key(7))},
		{Lower: Incl(nil), Upper: Excl([]byte{})},
		{Lower: Incl(key(40)), Upper: Incl(key(40))},
	}
	var it Iter
	for round := range 3 {
		for i := range bounds {
			o := bounds[i]
			e.tree.InitIter(&it, nil, &o)
			got := walk(&it)
			fresh := e.tree.NewIter(nil, &o)
			require.Equal(t, walk(fresh), got, "round %d, bounds %d", round, i)
			require.NoError(t, fresh.Close())
			// Leave the iterator positioned, holding a pin: the next
			// InitIter must let it go.
			require.True(t, it.First() || len(got) == 0)
		}
	}
	e.tree.InitIter(&it, nil, nil)
	require.Zero(t, e.pool.Stats().Pinned, "InitIter left a pin")
}

// TestInitIterAllocs keeps a range scan through a reused iterator free of
// allocations once its buffers have grown.
func TestInitIterAllocs(t *testing.T) {
	e := newEnv(t, 4096, 256, cache.PolicyLRU)
	fillTo(t, e.tree, 2, make([]byte, 100))
	o := IterOptions{Lower: Incl([]byte("key000010")), Upper: Excl([]byte("key000090"))}
	var m Meter
	var it Iter
	var n int
	allocs := testing.AllocsPerRun(100, func() {
		e.tree.InitIter(&it, &m, &o)
		n = 0
		for ok := it.First(); ok; ok = it.Next() {
			n++
		}
		if err := it.Close(); err != nil {
			panic(err)
		}
	})
	require.Zero(t, allocs)
	require.Equal(t, 80, n)
}
