//go:build !race

package experiment

// raceEnabled reports whether the test binary has the race detector, which
// makes a load several times slower.
const raceEnabled = false
