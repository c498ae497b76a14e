package cache_test

import (
	"testing"

	"github.com/enginelab/enginelab/cache"
)

// BenchmarkPoolFetchHit is the buffer pool's hot path: a resident page
// pinned and unpinned. It must not allocate.
func BenchmarkPoolFetchHit(b *testing.B) {
	for _, policy := range []cache.PolicyKind{cache.PolicyMidpoint, cache.PolicyLRU} {
		b.Run("policy="+string(policy), func(b *testing.B) {
			st := newStore(b)
			putPages(b, st, 1, 1, 8)
			p := newPool(b, st, 16, cache.Options{Policy: policy})
			for n := uint32(1); n <= 8; n++ {
				touch(b, p, nil, pid(1, n))
			}
			var m cache.Meter
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				pg, err := p.Fetch(&m, pid(1, uint32(i%8)+1))
				if err != nil {
					b.Fatal(err)
				}
				pg.Unpin(false)
			}
			if m.PoolMisses != 0 {
				b.Fatalf("hit benchmark missed: %s", m.String())
			}
			b.ReportMetric(float64(m.PoolHits)/float64(b.N), "hits/op")
		})
	}
}

// BenchmarkPoolFetchMiss cycles through four times more pages than the pool
// holds, so that every fetch reads a page from the (in-memory) store and
// evicts a clean one.
func BenchmarkPoolFetchMiss(b *testing.B) {
	const frames, pages = 16, 64
	st := newStore(b)
	putPages(b, st, 1, 1, pages)
	p := newPool(b, st, frames, cache.Options{Policy: cache.PolicyLRU})
	var m cache.Meter
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		pg, err := p.Fetch(&m, pid(1, uint32(i%pages)+1))
		if err != nil {
			b.Fatal(err)
		}
		pg.Unpin(false)
	}
	if m.PoolHits != 0 {
		b.Fatalf("miss benchmark hit: %s", m.String())
	}
	b.ReportMetric(float64(m.StoreReads)/float64(b.N), "store-reads/op")
	b.ReportMetric(float64(m.Evictions)/float64(b.N), "evictions/op")
}
