// Package sched is simulated mode's deterministic scheduler: it runs
// terminals as coroutines in virtual time and prices the work the engine
// did on modeled hardware (a hw.Machine), so that the same seed and
// configuration give the same times on any machine.
//
// # How it works
//
// Each terminal has a goroutine, but exactly one of them runs at a time
// and hands the turn on explicitly. Every engine call runs for real and at
// once; at the terminal's next yield point the change in its
// transaction's meter (hw.VectorOf) is priced, step by step, and the
// terminal's virtual clock moves on. Then the terminal with the smallest
// clock runs next, ties going to the lower terminal number. A step that
// needs a shared resource (the cores, the store device, the log device,
// the network) is booked only once no other terminal's clock is earlier,
// so every queue is first come, first served by virtual arrival time.
// Scheduler's documentation gives the pricing steps and the waiting rules
// (lock grants, group commit, timeouts, pages in flight, background
// writes, a page write's wait for the log).
//
// The page cleaner is a background actor of the scheduler's: the engine
// starts no cleaner goroutine under a Runtime other than its real one, and
// the scheduler runs a pass (cache.Pool.CleanStep) every second of virtual
// time, at the first yield point at or after it. Its writes queue on the
// store device as background writes and its log sync holds the log
// device; no terminal's clock waits for them. A transaction that flushes
// for log space (the engine's log free check) does so on its own meter,
// priced as its own writes. Purge and vacuum are actors too (maintain),
// each one synchronous requester of the store device with a queue of its
// own (storeSlot); under MySQL 5.1's flushing purge is the master
// thread's (waffle.go). Scheduler.StoreUse says who held the device.
//
// The scheduler plugs into the seams the lower layers leave for it, and
// nothing below sim imports it. There are two: tpcc's, and the engine's
// one Runtime, which the scheduler implements whole:
//
//   - tpcc.Env and tpcc.TxObserver (ForTerminal): the terminals' clock,
//     keying and think times, and the start and end of each transaction;
//   - engine.Runtime, composed of the lower layers' own interfaces:
//     Now (cache.Clock), the pool's and the lock manager's time;
//     BeforeCall, a yield point before every engine call; Park
//     (lock.Parker), lock waits, granted or timed out in virtual time;
//     Wait and SyncStart (redo.Waiter), group commit and the pricing of
//     each log sync; Loading and Hit (cache.FrameTimer), each frame's
//     virtual ready time, so that a page still being read is ready for
//     others only when its read completes; PageWriteWait (cache.Runtime),
//     which marks a page write's wait for the log, made perhaps with
//     latches held.
//
// Install makes the scheduler an engine.Options' Runtime.
//
// # Usage
//
//	m, _ := hw.Spec{Store: "disk-2009"}.Resolve()
//	s := sched.New(m, page.DefaultSize, false)
//	opts := &engine.Options{Options: cache.Options{PoolSize: 64 << 20}}
//	s.Install(opts)
//	db, _ := engine.Open(opts)
//	s.Attach(db) // the pool: its background meter, the page cleaner
//	_, _ = tpcc.Load(ctx, db, tpcc.LoadConfig{Warehouses: 1, Seed: 1, Workers: 1})
//	loaded, _ := tpcc.ReadLoaded(db)
//	terms, _ := tpcc.NewTerminals(db, tpcc.RunConfig{Warehouses: 1, Terminals: 4,
//		Duration: time.Minute, Seed: 1, LoadConstants: loaded.Constants, Env: s})
//	stats, _ := tpcc.Collect(ctx, terms, s.RunTPCC(ctx, terms))
//	fmt.Println(stats.TpmC(), s.Elapsed(), s.Types()[tpcc.NewOrderTx].Spent)
//
// Run is the general form: a function per terminal (each made by
// ForTerminal), which must do all its waiting through the scheduler (its
// Env and the engine's Runtime). Types gives each transaction type's
// response time split into shares (TimeCPU, TimePool, TimeTier,
// TimeStore, TimeLog, TimeLock, TimeQueue); Busy, how long each shared
// resource was held.
//
// # Concurrency and lifetimes
//
// A Scheduler serves one database. Run and RunTPCC block until every
// terminal has returned; they may be called again, one after another,
// each with terminals newly made by ForTerminal, and virtual time goes on
// from where the last run ended. Outside a run the Runtime does nothing the
// engine must wait for (a lock wait blocks on the wall clock, as
// lock.RealParker), so loading before the run costs no virtual
// time. Progress is the only method safe to call from another goroutine
// during a run (a progress bar); the rest belong to the goroutine that
// calls Run, or to the terminal that holds the turn.
//
// # Caveats
//
// The scheduler is exact only as far as its model goes: a call's reads,
// writes and CPU do not overlap each other; a wait for a page in flight is
// paid at the start of the interval that found it; the CPU of background
// work is not priced; the log device prices syncs, not the bandwidth of
// the log bytes; a lock granted inside another terminal's interval is
// granted at that interval's end even if the waiter's deadline fell inside
// it; a page write's log sync made with latches held is priced before the
// work of its interval that preceded it. Stalls counts the waits the
// scheduler had to break (everyone waiting for a log sync nobody leads):
// zero in a sound simulation.
package sched
