// Package replay replays a page trace into remote-tier policies at several
// sizes and counts their hits: the eviction-policy experiment, and the
// command's tier-replay.
//
// A run records once what reached its remote tier (tier.TraceTier writes
// every get, put and delete the buffer pool made; with no tier, the calls
// it would have made to a tier that keeps nothing). Each policy then sees
// exactly that demand at each size, and the clairvoyant cache (belady)
// says how far from the best possible each one is. Ristretto, whose
// admission and eviction sample and depend on its goroutines, is measured
// here, averaged over runs, and never inside a simulated run, whose
// report must not depend on timing.
//
// # Core types
//
// Config says which Policies to replay (lru, slru, ristretto, belady), at
// which sizes in bytes, and how many times to replay ristretto. Run
// replays a tier.Trace and returns a Report: the trace's counts and a
// Result per policy and size, with its hits and hit ratio (for ristretto
// the mean, min and max over its runs). Report.WriteTable prints a row per
// policy and a column per size.
//
// The lru and slru policies are the engine's own tiers (lru.New,
// slru.New), so a replay measures the code a run uses; ristretto
// is ristretto.New; belady is Belady's MIN with bypass, optimal
// for the number of hits when every page has one size and a copy serves
// at most one get (beladyTier's comment has the proof and its limits).
//
// # Usage
//
//	f, _ := os.Open("run.trace") // enginelab tpcc --trace run.trace
//	t, err := tier.ReadTrace(f)
//	if err != nil {
//		return err
//	}
//	rep, err := replay.Run(t, replay.Config{Sizes: []int64{16 << 20, 64 << 20}})
//	if err != nil {
//		return err // a bad configuration wraps ErrInvalidConfig
//	}
//	_ = rep.WriteTable(os.Stdout)
//	fmt.Println(rep.Result("belady", 16<<20).HitRatio)
//
// # Rules and caveats
//
// A replay calls the tier as the pool would have, event by event, with the
// pool's rules for the trace's mode applied to the tier's own answers: in
// exclusive mode a hit is followed by a delete of the page; in inclusive
// mode a hit cancels the push that follows it. Over a trace recorded with
// a tier.NullTier these rules give exactly the calls the pool would have
// made with each policy; a trace recorded over a real tier carries that
// tier's answers (see Run).
//
// Run copies the configuration's slices, only reads the trace, and makes
// (and closes) its own tiers for each replay: calls share nothing, and may
// run concurrently on one trace. Configuration errors wrap ErrInvalidConfig,
// which is one value with sim.ErrInvalidConfig, and come before any replay.
package replay
