// Package memlimit reads how much memory this process may use: the memory
// limit of its cgroup (v2 memory.max, v1 memory.limit_in_bytes), and the
// machine's MemAvailable (/proc/meminfo). engine.Open and the TPC-C job
// runner compare their memory estimates with it, so that work which cannot
// fit is refused before it starts rather than killed by the kernel halfway.
//
//	lim, err := memlimit.System()
//	if err == nil && lim.Known() {
//		fmt.Println(lim.Bytes, "bytes, from", lim.Source)
//	}
//
// # Which limit
//
// The limit is the smaller of the two when both are known: a cgroup limit
// above what the machine has free does not make the memory exist, and
// MemAvailable alone misses a container's limit. A cgroup's limit is the
// smallest along its path up to the hierarchy's root, as the kernel
// enforces it; "max" (v2), or v1's page-rounded largest value, means that
// level sets none. Where neither can be read (not Linux), Limit.Known is
// false and callers skip their check.
//
// Read takes a filesystem (fs.FS rooted at "/"), so tests feed it made-up
// /proc and /sys trees; System reads the real one. The package keeps no
// state and is safe for concurrent use.
package memlimit
