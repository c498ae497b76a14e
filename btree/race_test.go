//go:build race

package btree

import "testing"

// skipUnderRace skips a test whose work runs on one goroutine at a time (a
// model check, a golden file, a simulated run: the scheduler runs one
// goroutine at a time, and its hand-offs are checked under the detector by
// the tests that do not skip). The detector finds nothing there and makes
// the work 10 to 30 times slower; .ci/run runs every test without -race
// first.
func skipUnderRace(t *testing.T) {
	t.Helper()
	t.Skip("skipped under -race: runs on one goroutine at a time; go test without -race runs it")
}
