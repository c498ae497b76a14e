// Package hw holds the hardware models of simulated mode: what a metered
// event costs on a modeled CPU, and what a page costs on a modeled device
// or network. It is data and arithmetic only: the scheduler (package
// sched) books the devices and cores these models describe.
//
// # Core types
//
// A Device is a block device (the store's or the redo log's): read and
// write latencies, the latency of a sync, the requests it starts a second
// (IOPS) and its bandwidth. A request of b bytes that starts at s
// completes at s + latency + b/bandwidth and keeps the device from
// starting another until s + 1/IOPS + b/bandwidth, so a rotational disk
// (IOPS = 1/latency) serves one request at a time and a solid-state one
// overlaps them. A Network is the link to the remote page tier: a round
// trip and a bandwidth. A CPUProfile is the CPU cost, in nanoseconds, of
// each event the engine meters (engine.Meter), plus the I/O paths' own
// CPU.
//
// A Spec names the profiles of a run (the command's --cores, --cpu,
// --store-device, --log-device, --network and --profiles); Resolve looks
// the names up and checks the values, giving a Machine: the profiles
// themselves, with their names. The shipped profiles are Devices
// (disk-2009, sata-ssd, nvme-ssd, nvme-plp, ram), Networks (gigabit,
// 10-gigabit) and CPUs (default: DefaultCPU); each says in Source where
// its numbers come from. A profiles file (ProfilesFile's JSON form) adds
// profiles or replaces shipped ones by name.
//
// Events connect the CPU profile to the engine's meter: VectorOf reads the
// priced counters of an engine.Meter into a Vector, indexed by Event in
// the order of CPUProfile.Costs (CostNames gives the JSON names in that
// order). A scheduler prices the difference of two vectors; a calibration
// fits the costs to vectors and measured times.
//
// # Usage
//
//	m, err := hw.Spec{Store: "disk-2009", Network: "gigabit", Cores: 2}.Resolve()
//	if err != nil {
//		return err // wraps ErrUnknownProfile or ErrInvalidConfig
//	}
//	read := int64(m.Store.ReadLatency) + hw.TransferNanos(16384, m.Store.ReadBandwidth)
//	fmt.Println(time.Duration(read)) // one 16 KiB page from the store, on an idle disk
//
// # Determinism
//
// Every price a scheduler derives from these models is an integer number
// of nanoseconds: durations are integers, transfers round down
// (TransferNanos), and CPU costs, which may be fractions of a nanosecond,
// are taken in integer picoseconds (CPUProfile.Picos) and summed before
// they are rounded. So a simulated run gives the same times on every
// machine. The bounds Resolve enforces (a latency of at most an hour, a
// bandwidth of at most 10^15 bytes a second, a CPU cost of at most
// MaxCPUCost) keep every price of a run within 64 bits.
//
// # Concurrency and caveats
//
// The types are plain values, safe to share once built. Devices, Networks,
// CPUs and DefaultCPU are package variables for reading: change a profile
// through a profiles file, not by writing to them. A Duration writes JSON as
// a Go duration string ("4.16ms") and reads that or nanoseconds. The
// shipped numbers and their sources are in the README ("Simulated mode");
// the models leave things out on purpose (a device has no cache beyond its
// sync latency, the log device prices syncs and not the bytes written),
// and the scheduler's documentation names what it does not model.
package hw
