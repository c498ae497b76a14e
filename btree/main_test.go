package btree

import (
	"os"
	"testing"

	"github.com/enginelab/enginelab/cache"
)

// TestMain turns on the pool's redo check for every test of the package
// (one mini-transaction in four in a race build: cache.VerifyRedoInTests):
// each mini-transaction's record is replayed on copies of its pages and
// must rebuild them byte for byte, so a node change that is not logged, or
// logged wrong, fails the first test that makes it.
func TestMain(m *testing.M) {
	cache.VerifyRedoInTests()
	os.Exit(m.Run())
}

// noVerifyRedo turns cache.VerifyRedo off until tb ends: a benchmark
// measures the engine, not the check (which copies and replays every
// changed page at each mini-transaction's commit).
func noVerifyRedo(tb testing.TB) {
	cache.VerifyRedo(false)
	tb.Cleanup(cache.VerifyRedoInTests)
}
