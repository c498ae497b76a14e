// Package simerr holds the sentinel error the packages under sim share, so
// that one errors.Is test tells a refused setting from a failed job
// whichever package refused it: sim's job, hw's profiles, replay's
// configuration, calibrate's. Each of those packages exports it under its
// own name (sim.ErrBadConfig, hw.ErrBadConfig, replay.ErrBadConfig); they
// are one value.
package simerr

import "errors"

// ErrBadConfig is wrapped by the errors of a setting that cannot run. They
// come before anything is opened, loaded or replayed.
var ErrBadConfig = errors.New("sim: invalid configuration")
