//go:build !race

package main

import "testing"

// raceEnabled reports whether the test binary has the race detector, which
// makes a load several times slower.
const raceEnabled = false

// skipUnderRace skips only under the race detector: see race_test.go.
func skipUnderRace(*testing.T) {}
