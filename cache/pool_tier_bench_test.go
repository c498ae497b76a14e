package cache_test

import (
	"fmt"
	"testing"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/tier"
	"github.com/enginelab/enginelab/cache/tier/lru"
	"github.com/enginelab/enginelab/cache/tier/memcached"
	"github.com/enginelab/enginelab/cache/tier/memcached/memcachedtest"
	"github.com/enginelab/enginelab/cache/tier/ristretto"
	"github.com/enginelab/enginelab/cache/tier/slru"
)

// BenchmarkPoolMissFromTier is a pool miss the tier serves, end to end: a
// 16-page pool over 512 pages of 16 KiB, a tier holding every page, pages
// fetched in a cycle so that every fetch misses the pool. In inclusive
// mode the miss is the tier's Get, the checksum and LSN checks and the
// frame's reuse; in exclusive mode it also deletes the page from the tier
// and pushes the page it evicts.
//
//	go test -run '^$' -bench BenchmarkPoolMissFromTier -count 5 ./cache/
func BenchmarkPoolMissFromTier(b *testing.B) {
	const pages, frames = 512, 16
	backends := []struct {
		name string
		open func(b *testing.B) tier.Tier
	}{
		{"lru", func(b *testing.B) tier.Tier { t, err := lru.New(64 << 20); must(b, err); return t }},
		{"slru", func(b *testing.B) tier.Tier { t, err := slru.New(64<<20, nil); must(b, err); return t }},
		{"ristretto", func(b *testing.B) tier.Tier { t, err := ristretto.New(64 << 20); must(b, err); return t }},
		{"memcached", func(b *testing.B) tier.Tier {
			addr, _ := memcachedtest.Start(b)
			t, err := memcached.New([]string{addr}, &memcached.Options{PageSize: testPageSize})
			must(b, err)
			return t
		}},
	}
	for _, be := range backends {
		for _, mode := range []tier.Mode{tier.Inclusive, tier.Exclusive} {
			b.Run(fmt.Sprintf("tier=%s/mode=%s", be.name, mode), func(b *testing.B) {
				st := newStore(b)
				putPages(b, st, 1, 0, pages-1)
				tr := be.open(b)
				defer tr.Close()
				p := newPoolWith(b, st, frames, cache.Options{Policy: cache.PolicyLRU, Tier: tr, TierMode: mode}, cache.Wiring{TierDB: 1, TierEpoch: 1})
				fetch := func(m *cache.Meter, n int) {
					pg, err := p.Fetch(m, page.ID{Space: 1, Page: uint32(n % pages)})
					must(b, err)
					pg.Unpin(false)
				}
				for n := range 2 * pages { // warm: every page through the pool, so into the tier
					fetch(nil, n)
				}
				if w, ok := tr.(interface{ Wait() }); ok {
					w.Wait() // ristretto applies puts asynchronously
				}
				var m cache.Meter
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					fetch(&m, i)
				}
				b.StopTimer()
				b.ReportMetric(float64(m.TierHits)/float64(b.N), "tr-hits/op")
				b.ReportMetric(float64(m.StoreReads)/float64(b.N), "store-reads/op")
			})
		}
	}
}

func must(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}
