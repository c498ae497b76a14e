//go:build !race

package sim

// raceEnabled reports whether the test binary has the race detector, which
// makes a load several times slower.
const raceEnabled = false
