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
