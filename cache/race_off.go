//go:build !race

package cache

// raceEnabled says the race detector is on (see VerifyRedoInTests).
const raceEnabled = false
