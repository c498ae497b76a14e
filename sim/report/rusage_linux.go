package report

import (
	"syscall"
	"time"
)

// MaxRSS returns the process's peak resident memory so far, in bytes
// (getrusage's ru_maxrss, which Linux gives in KiB); 0 if it cannot be
// read.
func MaxRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return int64(ru.Maxrss) << 10
}

// ProcessCPU returns the CPU time the process has used so far, user and
// system (getrusage's ru_utime and ru_stime), every thread counted; 0 if
// it cannot be read.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
