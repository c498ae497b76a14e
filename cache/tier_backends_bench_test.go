package cache_test

import (
	"math/rand/v2"
	"testing"

	"github.com/enginelab/enginelab/internal/memcachedtest"

	"github.com/enginelab/enginelab/cache"
)

// The Tier backends' read path: a pool miss served by the tier. Each
// benchmark warms its tier with benchTierPages pages of 16 KiB and then
// reads present pages in a random order.
const (
	benchTierPages    = 1000
	benchTierPageSize = 16 << 10
)

// benchTierGet warms tier and measures Get of random present pages.
func benchTierGet(b *testing.B, tier cache.Tier) {
	keys := make([]cache.TierKey, benchTierPages)
	for i := range keys {
		keys[i] = tkey(1, 1, 1, uint32(i))
		if _, err := tier.Put(keys[i], 1, tierPage(benchTierPageSize, keys[i], 1)); err != nil {
			b.Fatal(err)
		}
	}
	waitTier(tier)
	dst := make([]byte, benchTierPageSize)
	for _, k := range keys {
		if found, err := tier.Get(k, 1, dst); err != nil || !found {
			b.Fatalf("warm-up: page %v not found (%v)", k, err)
		}
	}
	// A fixed random order, drawn before the clock starts.
	rng := rand.New(rand.NewPCG(1, 2))
	order := make([]int, 1<<12)
	for i := range order {
		order[i] = rng.IntN(benchTierPages)
	}
	b.SetBytes(benchTierPageSize)
	b.ReportAllocs()
	misses := 0
	for i := 0; b.Loop(); i++ {
		found, err := tier.Get(keys[order[i%len(order)]], 1, dst)
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

// BenchmarkTierGetRistretto: goal, a page within 3 µs.
func BenchmarkTierGetRistretto(b *testing.B) {
	tier, err := cache.NewRistrettoTier(2 * benchTierPages * benchTierPageSize)
	if err != nil {
		b.Fatal(err)
	}
	defer tier.Close()
	benchTierGet(b, tier)
}

// BenchmarkTierGetMemcached reads from a memcached on loopback: one round
// trip per page.
func BenchmarkTierGetMemcached(b *testing.B) {
	addr, _ := memcachedtest.Start(b)
	tier, err := cache.NewMemcachedTier([]string{addr}, &cache.MemcachedOptions{PageSize: benchTierPageSize})
	if err != nil {
		b.Fatal(err)
	}
	defer tier.Close()
	benchTierGet(b, tier)
}

// BenchmarkTierPutRistretto is the price of RistrettoTier.Put returning
// before ristretto applies the page (wait=false, what Put does) against
// waiting for it after every Put (wait=true: Put followed by Wait), over
// pages that are mostly present already (overwrites, as in inclusive
// mode) and new ones.
func BenchmarkTierPutRistretto(b *testing.B) {
	for _, wait := range []bool{false, true} {
		name := "wait=false"
		if wait {
			name = "wait=true"
		}
		b.Run(name, func(b *testing.B) {
			tier, err := cache.NewRistrettoTier(2 * benchTierPages * benchTierPageSize)
			if err != nil {
				b.Fatal(err)
			}
			defer tier.Close()
			page := make([]byte, benchTierPageSize)
			b.SetBytes(benchTierPageSize)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := tier.Put(tkey(1, 1, 1, uint32(i%benchTierPages)), 1, page); err != nil {
					b.Fatal(err)
				}
				if wait {
					tier.Wait()
				}
			}
			tier.Wait()
		})
	}
}
