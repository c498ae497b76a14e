//go:build race

package engine

// raceEnabled reports whether the test binary has the race detector, under
// which sync.Pool drops some of what it is given (so pooled buffers are
// allocated again).
const raceEnabled = true
