package cache_test

import (
	"os"
	"testing"

	"github.com/enginelab/enginelab/cache"
)

// TestMain turns cache.VerifyRedo on for every test of the package: each
// mini-transaction's record is replayed on copies of its pages at Commit,
// so a test (or pool code) that changes a page without logging what it did
// panics at the mtr that did it. The benchmarks turn it off for their
// measurement.
func TestMain(m *testing.M) {
	cache.VerifyRedo(true)
	os.Exit(m.Run())
}
