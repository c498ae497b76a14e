package tiertest

import (
	"math/rand/v2"
	"testing"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/tier"
)

// The tier benchmarks' working set: 1,000 pages of 16 KiB, the default
// page size.
const (
	tierBenchPages    = 1000
	tierBenchPageSize = 16 << 10
)

// openTierBench opens a tier with room for pages pages of the benchmark's
// size (and a generous per-page overhead), closed when the benchmark ends.
func openTierBench(b *testing.B, open func(*testing.B, int64) tier.Tier, pages int) tier.Tier {
	tr := open(b, int64(pages)*(tierBenchPageSize+MaxOverhead))
	b.Cleanup(func() {
		if err := tr.Close(); err != nil {
			b.Error(err)
		}
	})
	return tr
}

// tierBenchKey is the key of page n in the tier benchmarks.
func tierBenchKey(n int) tier.Key {
	return tier.Key{DB: 1, Epoch: 1, ID: page.ID{Space: 1, Page: uint32(n)}}
}

// BenchGet is a pool miss that the tier serves: a warm tier (made by open,
// with room for every page) holding every page, read in a random order.
// Every Get must hit.
func BenchGet(b *testing.B, open func(b *testing.B, capacity int64) tier.Tier) {
	tr := openTierBench(b, open, tierBenchPages)
	for n := range tierBenchPages {
		k := tierBenchKey(n)
		if _, err := tr.Put(k, 1, ModelPage(k, 1, tierBenchPageSize)); err != nil {
			b.Fatal(err)
		}
	}
	if w, ok := tr.(interface{ Wait() }); ok {
		w.Wait()
	}
	dst := make([]byte, tierBenchPageSize)
	for n := range tierBenchPages { // warm: every page read once
		if found, err := tr.Get(tierBenchKey(n), 1, dst); err != nil || !found {
			b.Fatalf("warm-up: page %d not found (%v)", n, err)
		}
	}
	r := Seed(b)
	keys := make([]tier.Key, 4096) // drawn before the clock starts
	for i := range keys {
		keys[i] = tierBenchKey(r.IntN(tierBenchPages))
	}
	b.SetBytes(tierBenchPageSize)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		found, err := tr.Get(keys[i%len(keys)], 1, dst)
		if err != nil || !found {
			b.Fatalf("get %v: found %v, %v", keys[i%len(keys)], found, err)
		}
	}
}

// BenchPut is the exclusive mode's write path at its worst: every Put is
// of a page the tier (made by open) does not hold, into a full tier, so
// each one evicts. Puts cycle over twice as many pages as fit.
func BenchPut(b *testing.B, open func(b *testing.B, capacity int64) tier.Tier) {
	tr := openTierBench(b, open, tierBenchPages)
	const distinct = 2 * tierBenchPages
	buf := ModelPage(tierBenchKey(0), 1, tierBenchPageSize)
	for n := range distinct { // fill, so that every timed Put evicts
		if _, err := tr.Put(tierBenchKey(n), 1, buf); err != nil {
			b.Fatal(err)
		}
	}
	before := tr.Stats()
	b.SetBytes(tierBenchPageSize)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := tr.Put(tierBenchKey(i%distinct), 1, buf); err != nil {
			b.Fatal(err)
		}
	}
	after := tr.Stats()
	b.ReportMetric(float64(after.Evictions-before.Evictions)/float64(b.N), "evictions/op")
}

// BenchGetWarm warms tier with 1,000 pages of 16 KiB and
// measures Get of random present pages. Every Get must hit: a backend that
// applies puts asynchronously is waited for (Wait) before the clock starts.
func BenchGetWarm(b *testing.B, tr tier.Tier) {
	keys := make([]tier.Key, tierBenchPages)
	for i := range keys {
		keys[i] = Key(1, 1, 1, uint32(i))
		if _, err := tr.Put(keys[i], 1, Page(tierBenchPageSize, keys[i], 1)); err != nil {
			b.Fatal(err)
		}
	}
	Wait(tr)
	dst := make([]byte, tierBenchPageSize)
	for _, k := range keys {
		if found, err := tr.Get(k, 1, dst); err != nil || !found {
			b.Fatalf("warm-up: page %v not found (%v)", k, err)
		}
	}
	// A fixed random order, drawn before the clock starts.
	rng := rand.New(rand.NewPCG(1, 2))
	order := make([]int, 1<<12)
	for i := range order {
		order[i] = rng.IntN(tierBenchPages)
	}
	b.SetBytes(tierBenchPageSize)
	b.ReportAllocs()
	misses := 0
	for i := 0; b.Loop(); i++ {
		found, err := tr.Get(keys[order[i%len(order)]], 1, dst)
		if err != nil {
			b.Fatal(err)
		}
		if !found {
			misses++
		}
	}
	if misses > 0 {
		b.Fatalf("%d of %d gets missed a present page", misses, b.N)
	}
}
