//go:build !linux

package report

import "time"

// MaxRSS returns 0: the peak resident memory is read on Linux only.
func MaxRSS() int64 { return 0 }

// ProcessCPU returns 0: the process's CPU time is read on Linux only.
func ProcessCPU() time.Duration { return 0 }
