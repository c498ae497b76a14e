// Package tiertest is the conformance suite of tier.Tier: the checks every
// backend runs from its own tests, so that lru, slru, ristretto and
// memcached are held to one contract, and the page images and keys those
// checks use.
//
// # The checks
//
//   - Model runs a tier against a reference model: Get, Put, Delete,
//     replacing Puts, the counters, the byte budget, a page too large for
//     it, and concurrent use. exact says whether the backend is held to an
//     exact LRU-like tier's promises (lru, slru) or only to the Tier
//     contract (ristretto's admission may refuse a page; a memcached's
//     budget is the server's).
//   - Basics and Concurrent are shorter runs for backends with room for
//     every page: exact answers and counters, then goroutines at once (for
//     the race detector).
//   - Edges checks the in-process tiers' byte budget at its edge, a dst of
//     the wrong length, and a closed tier.
//   - BenchGet, BenchPut and BenchGetWarm are the backends' benchmarks.
//
// A backend's test makes its tiers through a Factory:
//
//	func TestModel(t *testing.T) {
//		tiertest.Model(t, func(t testing.TB, capacity int64) tier.Tier {
//			tr, err := lru.New(capacity)
//			require.NoError(t, err)
//			return tr
//		}, true)
//	}
//
// # Pages and keys
//
// ModelPage and Page make page images that describe their own key and
// version, so that a page returned for another key, an older version, or
// torn by the backend shows (CheckModelPage, IsPageOf). Key, NumKey and
// PageNumbers make and read keys.
//
// # Seeds, concurrency, caveats
//
// The random choices follow -seed (a flag this package registers: a test
// binary that imports it must not define its own) and the test's name, and
// each test logs its seed (Seed). The checks call t's methods from the
// test's goroutine only, as testing requires; a Factory that cannot make a
// tier (no memcached binary) skips or fails the t it is given, which is
// the test running it. A backend that applies Puts asynchronously and has
// a Wait method is waited for after each Put and Delete by Model (Wait).
package tiertest

import (
	"flag"
	"hash/fnv"
	"math/rand/v2"
	"testing"
)

// seedFlag fixes the random choices of every check. The default keeps runs
// identical; pass -seed=N to explore others.
var seedFlag = flag.Uint64("seed", 1, "base seed of the tier checks' random choices")

// Seed returns this test's random source, derived from -seed and the
// test's name, and logs the seed so that a failure can be reproduced.
func Seed(t testing.TB) *rand.Rand {
	t.Helper()
	h := fnv.New64a()
	h.Write([]byte(t.Name()))
	s := *seedFlag ^ h.Sum64()
	t.Logf("seed %d (-seed=%d)", s, *seedFlag)
	return rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))
}
