// Package experiment holds the named experiments: each answers one of the
// questions of the README's design ("The questions the experiments
// answer") by running TPC-C jobs side by side in simulated mode and
// explaining the difference.
//
// # What an experiment does
//
// The sides of a question (two to six sim.TPCCConfig jobs that differ in
// one setting: the organization, a client profile, an index, the remote
// tier...; hot-index compares pairs, without and with its index, in three
// organizations) run one after another in simulated mode with one seed,
// each on its own in-memory database loaded from that seed, so every side
// starts from the same pages. They are printed side by side with their
// ratios (report.Comparison), and their difference is explained from the
// meters: for each transaction type, how each share of the modeled mean
// response time moved, and which counters changed most per transaction,
// with the time each accounts for at its unqueued price on the side's
// hardware.
// Each experiment states the direction it expects and says whether it
// held; where a published figure exists for the same question (Waffle
// Grid's, for io-bound), it is printed as context, labeled, and nothing is
// tuned to match it. The tier-policy experiment records the page trace of
// its one side and replays it into every tier policy (package replay)
// instead.
//
// The waffle experiment (waffle.go) is of another kind: it runs Waffle
// Grid's published configurations (MySQL 5.1's InnoDB with memcached
// behind its buffer pool, 2008-2009) at the published scale, one side per
// distinct configuration, and judges each published row by its ratio
// against its post's baseline, with one parameter set for every row, each
// parameter printed with its source and the set's hash (WaffleTable).
//
// The experiments, in the README's order: count-rewrite, delivery-limit,
// stocklevel-bound, io-bound, tier-policy, hot-index, wide-key, waffle
// (All lists them, Lookup finds one by name). The talk ladder (ladder.go,
// Ladder; enginelab experiment talk-ladder) is of a third kind: the
// talk's steps in order for two client personalities with the client and
// server cost layer on (package client), each step's tpmC against the
// step before and the talk's figure.
//
// # Usage
//
//	e, err := experiment.Lookup("delivery-limit")
//	if err != nil {
//		return err // wraps ErrUnknown, naming the experiments
//	}
//	res, err := experiment.Run(ctx, e, experiment.Params{Scale: tpcc.SmallScale}, nil)
//	if err != nil {
//		return err // a side refused (ErrInvalidConfig, sim.ErrInsufficientMemory) or failed
//	}
//	_ = res.WriteTable(os.Stdout)
//	fmt.Println(res.Held, res.Headline.Ratio)
//
// Params scale an experiment: warehouses, scale, terminals, virtual
// duration and warm-up, seed, pool and tier sizes, the modeled hardware.
// Zero fields take the experiment's Defaults (its SmallDefaults at
// tpcc.SmallScale, where a pool or tier sized against the data must
// shrink with it), then the general defaults (4 terminals, 5 s after 1 s
// of warm-up, seed 1). Sides gives the jobs Run would run.
//
// # Caveats
//
// Run checks every side's job (its memory estimate included) before the
// first one loads. A side at its defaults loads one warehouse in memory
// and runs for seconds to minutes of virtual time: a whole experiment
// takes from seconds (small scale) to minutes of wall time. Experiments
// are package data: read them, do not change them. Each call of Run opens
// its own databases and shares nothing with another, but each side's
// memory check counts on having the memory to itself: run experiments one
// at a time.
package experiment
