package engine

import (
	"os"
	"testing"

	"github.com/enginelab/enginelab/cache"
)

// TestMain turns on the pool's redo check for every test of the package
// (one mini-transaction in four in a race build: cache.VerifyRedoInTests):
// each mini-transaction's record (B+tree, heap and undo page operations
// alike) is replayed on copies of its pages at commit and must rebuild
// them byte for byte.
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
