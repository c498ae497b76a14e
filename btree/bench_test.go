package btree

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/store"
)

const benchKeys = 1_000_000

// benchTree loads benchKeys 8-byte big-endian keys with 16-byte values, in
// random order, into a 16 KiB-page tree whose pool holds all of it.
func benchTree(b *testing.B) *Tree {
	b.Helper()
	st, err := store.OpenPebble(store.PebbleOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	pool, err := cache.NewPool(st, &cache.Options{PoolSize: 512 << 20}, nil)
	if err != nil {
		b.Fatal(err)
	}
	tr, err := Create(nil, pool, 1)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	val := make([]byte, 16)
	var key [8]byte
	for _, i := range r.Perm(benchKeys) {
		binary.BigEndian.PutUint64(key[:], uint64(i)*2) // even keys; odd ones are free for inserts
		if err := tr.Insert(nil, key[:], val); err != nil {
			b.Fatal(err)
		}
	}
	return tr
}

var benchTreeCache *Tree

func sharedBenchTree(b *testing.B) *Tree {
	if benchTreeCache == nil {
		benchTreeCache = benchTree(b)
	}
	return benchTreeCache
}

// BenchmarkTreeGet gets random keys of the 1,000,000-key tree: about 60 MiB
// of leaves, twice this machine's L3 cache, so most leaf accesses miss the
// CPU caches. hot=10000 gets keys from a 10,000-key range only (a working
// set of a few dozen leaves), which measures the CPU cost of a get without
// the memory latency.
func BenchmarkTreeGet(b *testing.B) {
	noVerifyRedo(b)
	for _, span := range []int{benchKeys, 10_000} {
		name := "keys=1000000"
		if span != benchKeys {
			name = fmt.Sprintf("hot=%d", span)
		}
		b.Run(name, func(b *testing.B) { benchGet(b, span) })
	}
}

func benchGet(b *testing.B, span int) {
	tr := sharedBenchTree(b)
	r := rand.New(rand.NewPCG(3, 4))
	var m Meter
	var key [8]byte
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		binary.BigEndian.PutUint64(key[:], uint64(r.IntN(span))*2)
		v, found, err := tr.Get(&m, key[:], buf)
		if err != nil || !found {
			b.Fatal("missing key", err)
		}
		buf = v
	}
	b.ReportMetric(float64(m.NodeVisitsTotal())/float64(b.N), "nodes/op")
	b.ReportMetric(float64(m.StoreReads)/float64(b.N), "store-reads/op")
}

// BenchmarkTreeInsert inserts b.N fresh odd keys at random places of the
// 1,000,000-key tree, then (untimed) deletes them again, so that every run
// measures inserts into a tree of the same size.
func BenchmarkTreeInsert(b *testing.B) {
	noVerifyRedo(b)
	tr := sharedBenchTree(b)
	r := rand.New(rand.NewPCG(5, 6))
	var m Meter
	keys := make([][8]byte, b.N)
	for i := range keys {
		binary.BigEndian.PutUint64(keys[i][:], uint64(r.IntN(benchKeys))*2+1)
	}
	val := make([]byte, 16)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := tr.Put(&m, keys[i][:], val); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(m.NodeVisitsTotal())/float64(b.N), "nodes/op")
	b.ReportMetric(float64(m.Splits)/float64(b.N), "splits/op")
	for i := range keys {
		if err := tr.Delete(nil, keys[i][:]); err != nil && !errors.Is(err, ErrKeyNotFound) {
			b.Fatal(err)
		}
	}
}

func BenchmarkTreeScan100(b *testing.B) {
	noVerifyRedo(b)
	tr := sharedBenchTree(b)
	r := rand.New(rand.NewPCG(7, 8))
	var m Meter
	var lo [8]byte
	it := tr.NewIter(&m, nil)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		binary.BigEndian.PutUint64(lo[:], uint64(r.IntN(benchKeys-200))*2)
		n := 0
		for ok := it.SeekGE(lo[:]); ok && n < 100; ok = it.Next() {
			n++
		}
		if n != 100 {
			b.Fatal(fmt.Sprint("scanned ", n))
		}
	}
	_ = it.Close()
	b.ReportMetric(float64(m.NodeVisitsTotal())/float64(b.N), "nodes/op")
}

// BenchmarkTreeGetParallel runs random gets from GOMAXPROCS goroutines: the
// pool's lock and the root's shared latch are the shared state.
func BenchmarkTreeGetParallel(b *testing.B) {
	noVerifyRedo(b)
	tr := sharedBenchTree(b)
	var seq atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		r := rand.New(rand.NewPCG(9, seq.Add(1)))
		var key [8]byte
		buf := make([]byte, 0, 64)
		for pb.Next() {
			binary.BigEndian.PutUint64(key[:], uint64(r.IntN(benchKeys))*2)
			v, found, err := tr.Get(nil, key[:], buf)
			if err != nil || !found {
				b.Fatal("missing key", err)
			}
			buf = v
		}
	})
}

// BenchmarkMemoryLatency measures this machine, not the tree: the time
// of one load whose address comes from the load before it (a pointer
// chase through a random cycle of cache lines), in a working set the
// size of BenchmarkTreeGet's leaves (64 MiB) and in one that stays in the
// CPU caches (1 MiB). A get on the large tree pays a few such loads in
// its leaf, one after another: the slot array's line its search lands
// on, then the cell that holds the key and the value, each known only
// once the load before it is done. So keys=1000000 is about hot=10000
// plus two or three of the 64 MiB figure, and it moves with the machine
// as that figure does; compare them on the machine at hand.
func BenchmarkMemoryLatency(b *testing.B) {
	for _, mib := range []int{64, 1} {
		b.Run(fmt.Sprintf("set=%dMiB", mib), func(b *testing.B) {
			const line = 64 / 8 // uint64s to a cache line
			lines := mib << 20 / 64
			next := make([]uint64, lines*line)
			// One cycle through every line in a random order: the
			// hardware prefetchers cannot guess the next address.
			order := rand.New(rand.NewPCG(11, 12)).Perm(lines)
			for i, l := range order {
				next[l*line] = uint64(order[(i+1)%lines] * line)
			}
			p := uint64(0)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				p = next[p]
			}
			chaseEnd = p // keeps the loads: the loop's result is used
		})
	}
}

var chaseEnd uint64
