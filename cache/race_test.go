//go:build race

package cache_test

// raceEnabled reports whether the test binary has the race detector, under
// which sync.Pool drops some of what it is given (so pooled objects are
// allocated again).
const raceEnabled = true
