//go:build !linux

package report

// MaxRSS returns 0: the peak resident memory is read on Linux only.
func MaxRSS() int64 { return 0 }
