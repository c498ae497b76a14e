//go:build !race

package engine

import "testing"

// raceEnabled reports whether the test binary has the race detector, under
// which sync.Pool drops some of what it is given (so pooled buffers are
// allocated again).
const raceEnabled = false

// skipUnderRace skips only under the race detector: see race_test.go.
func skipUnderRace(*testing.T) {}
