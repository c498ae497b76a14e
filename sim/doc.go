// Package sim runs jobs on the engine and reports them: TPC-C in either of
// two run modes, side-by-side comparisons, experiments that answer one
// question each, page-trace replay, CPU calibration, and the command line
// (sim/cmd/enginelab).
//
// # Basics
//
//	rep, err := sim.TPCC(ctx, sim.TPCCConfig{
//		Phases:     sim.Phases{Load: true, Run: true, Check: true},
//		Warehouses: 1, Terminals: 4, Duration: 30 * time.Second, Seed: 1,
//	}, sim.Hooks{})
//	_ = rep.WriteTable(os.Stdout) // or json.Marshal(rep)
//
// TPCCConfig is one job (the command's flags map onto it one to one); it
// is validated, and refused with an error wrapping ErrBadConfig, before
// anything is opened. report.Report is what a job measured, as tables or as JSON.
// A report.Comparison holds one report per value of a setting, each job on its
// own load (the command's --compare).
//
// # Run modes
//
// Real mode (ModeReal) runs the terminals as goroutines on this machine's
// cores, in wall time: it measures what the engine costs here.
//
// Simulated mode (ModeSim) runs the same engine code with the terminals as
// coroutines of a Scheduler, one at a time in virtual time. Each engine
// call runs for real; the change in its transaction's meter is then priced
// on modeled hardware (Hardware: a CPUProfile, the store's and the log's
// Device, the Network to the remote tier, a number of cores) and the
// terminal's clock moves on, queueing first come, first served on the
// shared resources. The terminal with the smallest clock runs next, ties to
// the lower number. The same seed and configuration give the same report
// on any machine, outside its host section (wall-clock figures). Only
// deterministic remote tiers (lru, slru) run there.
//
// The scheduler plugs into the seams the lower layers leave for it:
// tpcc.Env (the terminals' time and waits), cache.Clock, engine.Parker
// (lock waits), cache.Waiter and engine.Options.LogSync (group commit),
// engine.Options.Calls (a yield point before every engine call) and
// cache.FrameTimer (frames' virtual ready times). Nothing below sim
// imports it.
//
// # Experiments
//
// Experiments lists the named experiments; RunExperiment runs one: its
// sides in simulated mode with one seed, each on its own in-memory
// database, printed side by side with their ratios, the difference
// explained from the meters (which counters changed per transaction type,
// and how much of the modeled time each accounts for), the direction it
// expects and whether that held, and a published figure where there is
// one (labeled as context; nothing is tuned to match it).
//
// # Traces and calibration
//
// A job with TPCCConfig.Trace records every call the buffer pool makes to
// its remote tier; ReplayTrace feeds such a trace into each tier policy (lru,
// slru, ristretto, and Belady's clairvoyant optimum) at several sizes.
// Calibrate times real-mode transactions on this machine and fits each
// metered event's CPU cost (FitCPU, non-negative least squares), giving a
// CPUProfile that simulated mode can price with.
//
// # Concurrency
//
// A job owns its database for its duration; run jobs one after another or
// on separate databases. Reports are values, safe to share once returned.
package sim
