package engine

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/btree"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/heap"
)

// Meter is the Account of both layers a transaction drives.
var (
	_ btree.Account = (*Meter)(nil)
	_ heap.Account  = (*Meter)(nil)
)

// meterCounters returns pointers to every counter of m but Index, the
// embedded layers' included, found by reflection so that a counter added
// to any part later is covered without touching this test.
func meterCounters(m *Meter) []*int64 {
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
		case reflect.Slice: // Index, checked by the test itself
		default:
			panic("meter field of kind " + v.Kind().String() + " is not a counter")
		}
	}
	walk(reflect.ValueOf(m).Elem())
	return out
}

// TestMeterCombine checks that Add, Sub and Diff cover every part of the
// composed meter: the page counters, the trees', the heaps', the engine's
// and the per-index ones.
func TestMeterCombine(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 3))
	random := func() Meter {
		var m Meter
		for _, c := range meterCounters(&m) {
			*c = rng.Int64N(1<<40) - 1<<39
		}
		m.Index = []IndexCounters{{NodeVisits: rng.Int64N(100), EntriesWritten: 1}, {EntriesDeleted: rng.Int64N(100)}}
		return m
	}
	for range 100 {
		a, b := random(), random()
		sum := a.Clone()
		sum.Add(&b)
		ca, cb, cs := meterCounters(&a), meterCounters(&b), meterCounters(&sum)
		for i := range cs {
			require.Equal(t, *ca[i]+*cb[i], *cs[i], "counter %d not added", i)
		}
		for i := range sum.Index {
			require.Equal(t, a.Index[i].NodeVisits+b.Index[i].NodeVisits, sum.Index[i].NodeVisits)
			require.Equal(t, a.Index[i].EntriesDeleted+b.Index[i].EntriesDeleted, sum.Index[i].EntriesDeleted)
		}
		require.Equal(t, b, sum.Diff(&a))
		require.Equal(t, a, sum.Diff(&b))
	}

	// Pages, Tree and Heap hand out the parts, and nothing for nil.
	var m Meter
	require.Same(t, &m.Meter, m.Pages())
	require.Same(t, &m.TreeCounts, m.Tree())
	require.Same(t, &m.HeapCounts, m.Heap())
	var nilMeter *Meter
	require.Nil(t, nilMeter.Pages())
	require.Nil(t, nilMeter.Tree())
	require.Nil(t, nilMeter.Heap())
}

func TestMeterString(t *testing.T) {
	var m Meter
	require.Equal(t, "", m.String())

	m.PoolHits = 3
	m.StoreReads = 1
	m.PageRequests[page.KindBTreeLeaf] = 2
	m.NodeVisits[1] = 9
	m.HeapMoves = -2
	require.Equal(t, "req.btree-leaf=2 hits=3 store-reads=1 nodes.d1=9 heap-moves=-2", m.String())
	m.RowsReturned = 4
	require.Equal(t, "req.btree-leaf=2 hits=3 store-reads=1 nodes.d1=9 heap-moves=-2 rows-returned=4", m.String())

	// Every counter, alone, shows up under a distinct name.
	seen := map[string]bool{}
	var z Meter
	for i := range meterCounters(&z) {
		var one Meter
		*meterCounters(&one)[i] = 7
		s := one.String()
		require.True(t, strings.HasSuffix(s, "=7"), "counter %d: %q", i, s)
		require.NotContains(t, s, " ", "counter %d: %q", i, s)
		require.False(t, seen[s], "two counters print as %q", s)
		seen[s] = true
	}
}
