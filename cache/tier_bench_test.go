package cache_test

import (
	"testing"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
)

// The tier benchmarks' working set: 1,000 pages of 16 KiB, the default
// page size.
const (
	tierBenchPages    = 1000
	tierBenchPageSize = 16 << 10
)

// tierBenchBackends are the backends the tier benchmarks run, each a
// sub-benchmark: a name and a constructor of a tier of capacity bytes. To
// add a backend, add a row; a constructor that cannot run here (no server)
// calls b.Skip.
var tierBenchBackends = []struct {
	name string
	open func(b *testing.B, capacity int64) cache.Tier
}{
	{"lru", func(b *testing.B, capacity int64) cache.Tier {
		tier, err := cache.NewLRUTier(capacity)
		if err != nil {
			b.Fatal(err)
		}
		return tier
	}},
	{"slru", func(b *testing.B, capacity int64) cache.Tier {
		tier, err := cache.NewSLRUTier(capacity, nil)
		if err != nil {
			b.Fatal(err)
		}
		return tier
	}},
}

// openTierBench opens a tier with room for pages pages of the benchmark's
// size (and a generous per-page overhead), closed when the benchmark ends.
func openTierBench(b *testing.B, open func(*testing.B, int64) cache.Tier, pages int) cache.Tier {
	tier := open(b, int64(pages)*(tierBenchPageSize+modelMaxOverhead))
	b.Cleanup(func() {
		if err := tier.Close(); err != nil {
			b.Error(err)
		}
	})
	return tier
}

// tierBenchKey is the key of page n in the tier benchmarks.
func tierBenchKey(n int) cache.TierKey {
	return cache.TierKey{DB: 1, Epoch: 1, ID: page.ID{Space: 1, Page: uint32(n)}}
}

// BenchmarkTierGet is a pool miss that the tier serves: a warm tier holding
// every page, read in a random order. Every Get must hit.
func BenchmarkTierGet(b *testing.B) {
	for _, be := range tierBenchBackends {
		b.Run(be.name, func(b *testing.B) {
			tier := openTierBench(b, be.open, tierBenchPages)
			for n := range tierBenchPages {
				k := tierBenchKey(n)
				if _, err := tier.Put(k, 1, modelPage(k, 1, tierBenchPageSize)); err != nil {
					b.Fatal(err)
				}
			}
			if w, ok := tier.(interface{ Wait() }); ok {
				w.Wait()
			}
			dst := make([]byte, tierBenchPageSize)
			for n := range tierBenchPages { // warm: every page read once
				if found, err := tier.Get(tierBenchKey(n), 1, dst); err != nil || !found {
					b.Fatalf("warm-up: page %d not found (%v)", n, err)
				}
			}
			r := seed(b)
			keys := make([]cache.TierKey, 4096) // drawn before the clock starts
			for i := range keys {
				keys[i] = tierBenchKey(r.IntN(tierBenchPages))
			}
			b.SetBytes(tierBenchPageSize)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				found, err := tier.Get(keys[i%len(keys)], 1, dst)
				if err != nil || !found {
					b.Fatalf("get %v: found %v, %v", keys[i%len(keys)], found, err)
				}
			}
		})
	}
}

// BenchmarkTierPut is the exclusive mode's write path at its worst: every
// Put is of a page the tier does not hold, into a full tier, so each one
// evicts. Puts cycle over twice as many pages as fit.
func BenchmarkTierPut(b *testing.B) {
	for _, be := range tierBenchBackends {
		b.Run(be.name, func(b *testing.B) {
			tier := openTierBench(b, be.open, tierBenchPages)
			const distinct = 2 * tierBenchPages
			page := modelPage(tierBenchKey(0), 1, tierBenchPageSize)
			for n := range distinct { // fill, so that every timed Put evicts
				if _, err := tier.Put(tierBenchKey(n), 1, page); err != nil {
					b.Fatal(err)
				}
			}
			before := tier.Stats()
			b.SetBytes(tierBenchPageSize)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := tier.Put(tierBenchKey(i%distinct), 1, page); err != nil {
					b.Fatal(err)
				}
			}
			after := tier.Stats()
			b.ReportMetric(float64(after.Evictions-before.Evictions)/float64(b.N), "evictions/op")
		})
	}
}
