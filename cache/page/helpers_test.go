package page_test

import (
	"flag"
	"hash/fnv"
	"math/rand/v2"
	"testing"
)

// testPageSize is the page size of the tests: the smallest allowed.
const testPageSize = 4096

// seedFlag fixes the random choices of every test. The default keeps runs
// identical; pass -seed=N to explore others. Each test logs its own seed and
// the -seed value that reproduces it.
var seedFlag = flag.Uint64("seed", 1, "base seed of the page tests' random choices")

// seed returns this test's random source, derived from -seed and the test's
// name, and logs the seed so that a failure can be reproduced.
func seed(t testing.TB) *rand.Rand {
	t.Helper()
	h := fnv.New64a()
	h.Write([]byte(t.Name()))
	s := *seedFlag ^ h.Sum64()
	t.Logf("seed %d (-seed=%d)", s, *seedFlag)
	return rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))
}
