// Package sim runs TPC-C jobs on the engine: it opens a database (in
// memory, or in a directory), loads the TPC-C tables, runs the terminals,
// checks the consistency conditions and reports what each phase measured.
// A job runs in either of two modes, on this machine's cores in wall time
// or on modeled hardware in virtual time, and its report has the same
// form in both.
//
// # Basics
//
//	rep, err := sim.TPCC(ctx, sim.TPCCConfig{
//		Phases:     sim.Phases{Load: true, Run: true, Check: true},
//		Warehouses: 1, Terminals: 4, Duration: 30 * time.Second, Seed: 1,
//	}, sim.Hooks{})
//	if err != nil {
//		return err // rep, if not nil, holds what was done
//	}
//	_ = rep.WriteTable(os.Stdout) // or json.Marshal(rep)
//
// A TPCCConfig is one job: the engine's settings (organization, page
// size, pool, heap update, commit mode, remote page tier, read-ahead) and
// the workload's (warehouses, scale, terminals, duration and warm-up,
// client profile, seed). The command's flags (sim/cmd/enginelab) map onto
// it one to one. Validate checks it before anything is opened: a setting
// out of range, hardware profiles that cannot be resolved, a --dir that
// holds a database when a load is asked (ErrAlreadyLoaded) or none when it
// is not (tpcc.ErrNotLoaded), and last a memory estimate larger than the
// process may use (CheckMemory; ErrInsufficientMemory). Its errors wrap
// ErrInvalidConfig, but for a profile name not known (hw.ErrUnknownProfile)
// and the two about the directory.
//
// TPCC runs the job's phases in order, each a function of its own: open
// (the remote tier, the page trace if asked, the scheduler in simulated
// mode, the database), load, run, check, and the report's last sections
// (space, background work, redo log). A job without a load runs on the
// stored database in Dir and takes its warehouses and scale. The report
// is a report.Report; Hooks let a caller draw progress bars.
//
// # Run modes
//
// Real mode (ModeReal) runs the terminals as goroutines on this machine's
// cores, in wall time: it measures what the engine costs here.
//
// Simulated mode (ModeSim) runs the same engine code with the terminals as
// coroutines of a sched.Scheduler, one at a time in virtual time: the
// scheduler is the database's engine.Runtime (its clock, its waits, its
// call boundaries and its frames' ready times). Each engine call runs for
// real; the change in its transaction's meter is
// then priced on the modeled machine (TPCCConfig.Hardware, an hw.Spec: a
// CPU profile, the store's and the log's devices, the network to the
// remote tier, a number of cores) and the terminal's clock moves on,
// queueing first come, first served on the shared resources. The same
// seed and configuration give the same report on any machine, outside its
// host section, where every wall-clock figure goes. The load runs with one
// loader, so that the pages every row lands in depend on the seed alone.
// Only deterministic remote tiers (lru, slru) run there.
//
// What the store device is charged for: page reads, page writes (a write
// a transaction waited for, a dirty victim written back, on its clock;
// the page cleaner's and a sharp checkpoint's in the background), and
// the syncs that make page writes durable: a checkpoint's store sync
// (the fuzzy one on the clock of the transaction that takes it, which
// waits for it in the engine too; a sharp one in the background), and
// with --torn-pages doublewrite (cache.TornPagesDoublewrite, InnoDB's
// doublewrite buffer) each batch of page writes as InnoDB pays it: one
// sequential write of the batch's pages to the doublewrite file and a
// sync, before the batch's in-place writes, and a store sync after them
// (Meter.DoublewriteWrites, DoublewriteBytes, DoublewriteSyncs,
// StoreSyncs). A foreground write-back's batch is on the caller's clock;
// background batches queue with the other background writes. Every sync
// costs the device's SyncLatency, whether or not the run's store is in
// memory (its syncs are then no-ops here): the modeled device is not.
//
// # Memory
//
// MemoryEstimate says what a job needs at its peak, part by part (the
// store in memory, the pool, an in-process tier, the collector's
// headroom), from figures measured per warehouse; CheckMemory refuses a
// job whose estimate is more than the memory limit (MemoryLimit, or the
// process's cgroup limit and available memory), naming the flags to
// change: --dir, --pool or --warehouses. IgnoreMemoryLimit skips it.
//
// # The packages beside it
//
// The scheduler is package sched, the hardware models package hw, the
// report's types and tables package report (with report.Comparison: the
// command's --compare, one job per value of a setting, each on its own
// load). The experiments (package experiment), CPU
// calibration (package calibrate) and page-trace replay (package replay)
// build on jobs; a job's TPCCConfig.Trace records the page trace replay
// reads.
//
// Package client is simulated mode's client and server cost layer
// (TPCCConfig.Client, the command's --client, off by default): each
// statement the profile's kit sends, priced as a named driver sends it
// (round trips on the modeled network, parse and plan CPU on the modeled
// cores, the driver's and the system calls' time), beside the engine's
// work, which it does not change; the report's sim section gets its
// counts and its share of each response time.
//
// # Concurrency and lifetimes
//
// A job owns its database for its duration: run jobs one after another,
// or on separate databases (an in-memory job has its own). A directory
// holds one database: load it once, then run and check it as often as
// needed; a run changes it. Reports are values, safe to share once TPCC
// has returned.
package sim
