package heap

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

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
	rng := rand.New(rand.NewPCG(17, 2))
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
		hc := a.HeapCounts
		hc.Add(&b.HeapCounts)
		require.Equal(t, sum.HeapCounts, hc)
		require.Equal(t, b.HeapCounts, hc.Diff(&a.HeapCounts))
	}

	// nil on either side is a no-op.
	var nilMeter *Meter
	var nilCounts *HeapCounts
	m := Meter{HeapCounts: HeapCounts{HeapMoves: 2}}
	require.NotPanics(t, func() { nilMeter.Add(&m); nilMeter.Sub(&m); nilCounts.Add(&m.HeapCounts) })
	before := m
	m.Add(nil)
	m.Sub(nil)
	m.HeapCounts.Add(nil)
	require.Equal(t, before, m)

	// A nil *Meter is an Account that counts nothing.
	require.Nil(t, nilMeter.Pages())
	require.Nil(t, nilMeter.Heap())
	require.Same(t, &m.Meter, m.Pages())
	require.Same(t, &m.HeapCounts, m.Heap())
}

func TestMeterString(t *testing.T) {
	var m Meter
	require.Equal(t, "", m.String())
	m.PoolHits = 3
	m.PageRequests[page.KindHeap] = 2
	m.HeapMoves = -2
	require.Equal(t, "req.heap=2 hits=3 heap-moves=-2", m.String())
	require.Equal(t, "heap-moves=-2", m.HeapCounts.String())

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
