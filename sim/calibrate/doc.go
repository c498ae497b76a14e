// Package calibrate fits a CPU profile (hw.CPUProfile) to this machine:
// it times real-mode TPC-C transactions and finds the cost of each metered
// event that best explains their times, a profile simulated mode can then
// price with (the command's calibrate, and --profiles with --cpu).
//
// # The model
//
// Real mode runs transactions for real; each transaction's meter counts
// the events simulated mode prices (hw.VectorOf), and its response time is
// measured. If the machine spends a fixed time per event, a transaction's
// time is Σ cost_i × events_i, and the costs are the solution of a least
// squares problem over many transactions: one row per transaction, one
// column per event. FitCPU solves it with the costs kept non-negative
// (Lawson and Hanson's active-set method, on a QR-reduced system, each
// subproblem by a truncated SVD), and says in a Fit how well the costs
// explain the times: R², the residuals per transaction type, the events
// no sample counted, and the groups of events that moved together.
//
// The fit is only as good as the mix of events varies across
// transactions, so Run measures the workload under settings that move the
// mix: the three client profiles, with and without the count rewrite and
// Stock-Level's missing lower bound, in the clustered organization, then
// in heap-rowptr (to observe heap fetches and scans). One terminal runs,
// in memory, with no sync at commit, so that a transaction's time is its
// own CPU. The first transactions of each run are dropped, and the fit
// leaves out the transactions far slower than their events explain (a
// collection pause, a descheduled thread), refitting until none is.
//
// # Usage
//
//	res, err := calibrate.Run(ctx, calibrate.Config{Duration: 5 * time.Second, Seed: 1})
//	if err != nil {
//		return err
//	}
//	_ = res.WriteTable(os.Stdout) // fitted beside the shipped costs; the fit per type
//	f, _ := os.Create("cpu.json")
//	_ = res.WriteProfile(f, "this-box") // then: hw.Spec{ProfilesFile: "cpu.json", CPU: "this-box"}
//
// FitCPU can be called on samples gathered otherwise (a Sample is a
// transaction type, its event vector and its time in nanoseconds).
//
// # Caveats
//
// What it cannot see: the I/O paths' CPU (StoreRequest, TierRequest),
// since the runs are in memory and the priced vector holds no store
// reads, so the profile Run writes keeps the shipped costs (hw.DefaultCPU)
// for them and for any event no sample counted; the cost of events that
// move together in every transaction, of which it can only give the sum
// (reported as collinear); and anything the meters do not count, which
// lands on the events that correlate with it (a transaction's fixed
// overhead lands on Commit and Rollback, one of which every transaction
// has).
//
// Run takes the machine's cores for about 15 × Config.Duration after two
// loads: run it on a quiet machine, one at a time. Its configuration
// errors wrap ErrInvalidConfig and come before any work; a fit that cannot
// be computed wraps ErrFailed.
package calibrate
