package cache_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/stretchr/testify/require"
)

// counters returns pointers to every counter of m, array elements and the
// counters of embedded structs (redo.Counts) included, found by reflection
// so that a counter added to Meter later is covered without touching this
// test.
func counters(m *cache.Meter) []*int64 {
	return fieldCounters(reflect.ValueOf(m).Elem(), nil)
}

func fieldCounters(v reflect.Value, out []*int64) []*int64 {
	for i := range v.NumField() {
		f := v.Field(i)
		switch {
		case f.Kind() == reflect.Int64:
			out = append(out, f.Addr().Interface().(*int64))
		case f.Kind() == reflect.Array:
			for j := range f.Len() {
				out = append(out, f.Index(j).Addr().Interface().(*int64))
			}
		case f.Kind() == reflect.Struct && v.Type().Field(i).Anonymous:
			out = fieldCounters(f, out)
		default:
			panic("meter field " + v.Type().Field(i).Name + " is not a counter")
		}
	}
	return out
}

func randomMeter(rng interface{ Int64N(int64) int64 }) cache.Meter {
	var m cache.Meter
	for _, c := range counters(&m) {
		*c = rng.Int64N(1<<40) - 1<<39
	}
	return m
}

func TestMeterAddSubDiff(t *testing.T) {
	rng := seed(t)
	for range 100 {
		a, b := randomMeter(rng), randomMeter(rng)
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
		// Diff leaves both operands alone.
		saved := sum
		_ = sum.Diff(&a)
		require.Equal(t, saved, sum)
	}

	// Totals.
	var m cache.Meter
	m.PageRequests[page.KindHeap] = 3
	m.PageRequests[page.KindMeta] = 4
	require.EqualValues(t, 7, m.PageRequestsTotal())

	// A nil meter on either side is a no-op.
	var nilMeter *cache.Meter
	require.NotPanics(t, func() { nilMeter.Add(&m); nilMeter.Sub(&m) })
	before := m
	m.Add(nil)
	m.Sub(nil)
	require.Equal(t, before, m)
}

func TestMeterString(t *testing.T) {
	var m cache.Meter
	require.Equal(t, "", m.String())

	m.PoolHits = 3
	m.StoreReads = 1
	m.PageRequests[page.KindBTreeLeaf] = 2
	// engine's TestMeterString checks the same counters with a B+tree's
	// and a heap's composed after them.
	require.Equal(t, "req.btree-leaf=2 hits=3 store-reads=1", m.String())

	// Every counter, alone, shows up under a distinct name.
	seen := map[string]bool{}
	var z cache.Meter
	for i := range counters(&z) {
		var one cache.Meter
		*counters(&one)[i] = 7
		s := one.String()
		require.True(t, strings.HasSuffix(s, "=7"), "counter %d: %q", i, s)
		require.NotContains(t, s, " ", "counter %d: %q", i, s)
		require.False(t, seen[s], "two counters print as %q", s)
		seen[s] = true
	}
}
