//go:build !race

package client_test

import "testing"

// skipUnderRace skips only under the race detector: see race_test.go.
func skipUnderRace(*testing.T) {}
