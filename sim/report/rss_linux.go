package report

import "syscall"

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
