// Package sim runs jobs on the engine and reports them: TPC-C in either of
// the two run modes of ../shared/DESIGN.md, side-by-side comparisons, and
// the command line (sim/cmd/enginelab).
//
// Real mode (ModeReal) runs the terminals as goroutines on this machine's
// cores, in wall time: it measures what the engine costs here.
//
// Simulated mode (ModeSim) runs the same engine code with the terminals as
// coroutines of a Scheduler, one at a time in virtual time. Each engine
// call runs for real; the change in its transaction's meter is then priced
// on modeled hardware (Hardware: a CPU profile, the store's and the log's
// Device, the Network to the remote tier, a number of cores) and the
// terminal's clock moves on, queueing first come, first served on the
// shared resources. The same seed and configuration give the same report
// on any machine, outside its host section (wall-clock figures). Only
// deterministic remote tiers (lru, slru) run there.
//
// The scheduler plugs into the seams the lower layers leave for it:
// tpcc.Env (the terminals' time and waits), cache.Clock, engine.Parker
// (lock waits), cache.Waiter and engine.Options.LogSync (group commit),
// engine.Options.Calls (a yield point before every engine call) and
// cache.FrameTimer (frames' virtual ready times). Nothing below sim
// imports it.
package sim
