package sched

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/engine/lock"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/tpcc"
)

// Simulated mode's scheduler (the README's "Two ways to run the same
// code").
//
// Terminals are coroutines: each has a goroutine, but exactly one of them
// runs at any moment, and it hands the turn on explicitly. Every engine
// call runs for real and at once. The work it did is priced when the
// terminal next reaches a yield point, from the change in its
// transaction's meter, and the terminal's virtual clock moves on by that
// price. Then the terminal with the smallest clock runs next (ties go to
// the lower terminal number), which may be the same one.
//
// Yield points: the start of every engine operation (BeforeCall), a
// terminal reading the time or sleeping (tpcc.Env), the end of a
// transaction (tpcc.TxObserver), a lock wait (Park), a wait for another
// commit's log sync (Wait), and the start of a log sync (SyncStart). All
// but tpcc's are methods of engine.Runtime, which the scheduler
// implements. None of them is reached while the terminal holds a page
// latch, so the terminal that holds the turn never blocks on a real lock
// held by one that does not. One wait may come with latches held: a page
// write's wait for the log's durability (a fetch that evicts a dirty page
// inside a mini-transaction), which the pool brackets with PageWriteWait.
// A sync it leads is priced at once, without a yield; a sync another
// terminal leads lets only that leader run until it is done, and then the
// writer first (urgentNext): the leader, a commit, takes no latch between
// its sync and its next yield point.
//
// Pricing one interval (the work since the last yield point) replays it
// step by step, in order:
//
//  1. pages the work found in the pool that were still being read, for
//     another terminal or by read-ahead: the terminal waits until they are
//     ready (buffer pool share); if the other terminal has not booked that
//     read yet, the terminal waits for it to;
//  2. its page reads, one after the other in the order they happened: a
//     remote-tier get if there is a tier (a round trip, plus the page's
//     transfer on a hit), then a store read on a miss; each read's
//     completion is written into its frame's ready cell (cache.FrameTimer);
//  3. the writes and syncs it had to wait for (a dirty page written out
//     to free a frame; with the doublewrite buffer, its batch's
//     sequential write and sync first and a store sync after; a fuzzy
//     checkpoint's store sync: storeOps), then tier pushes and deletes,
//     each a request of its own;
//  4. its CPU: the priced events, on the core that frees first;
//  5. the background work it caused (read-ahead) and the background work
//     due by its clock: the page cleaner's passes, a pass every
//     cache.CleanerInterval of virtual time (cache.Pool.CleanStep, with no
//     terminal current: its log sync and its writes, with their
//     doublewrite batches and store syncs, hold the devices and nobody
//     waits for them); then a wait for the pages of its own read-ahead
//     it went on to use.
//
// The terminal's clock is the arrival time of each step, and a step that
// needs a shared resource (the cores, the store device, the log device,
// the network) is booked only once no other terminal's clock is earlier:
// the terminal yields before it, and earlier terminals run (and book)
// first. So every queue is first come, first served by virtual arrival
// time, and time spent waiting for a busy resource is the queueing share.
// Background work holds the devices like any request, but no terminal's
// clock waits for it except through the ready times of the pages it reads.
//
// Waiting rules:
//
//   - A lock released inside a call is granted to its waiter at the end of
//     that call's priced interval: the waiter's clock moves to the
//     releaser's clock after the releaser's pricing (lock wait share),
//     even if its deadline fell inside that interval (the lock was
//     granted; the overrun is at most one interval).
//   - A commit that finds a log sync in progress waits until the sync
//     completes: its clock moves to the leader's clock at the end of the
//     sync (log share). The commits that arrived during one sync are
//     served by one more sync, led by the first of them to run again.
//   - A lock wait that reaches its deadline before a grant ends at the
//     deadline (lock wait share); the engine reports a timeout.
//   - Keying and think times move the terminal's clock and are no share
//     of any response time.
type Scheduler struct {
	// clients makes each terminal's client model (SetClients); nil: none.
	clients     func(num int) ClientTerminal
	clientTypes [tpcc.NumTxTypes]ClientTime
	machine     hw.Machine
	epoch       time.Time
	pageSize    int64
	tier        bool

	ev                      [hw.NumEvents]int64 // CPU picoseconds per event
	storeCPUps, tierCPUps   int64
	storeOcc, storeResp     [2]int64 // device occupancy and response of one page: read, write
	netPage, netOcc         int64    // tier: response and link time of a page transfer
	netRTT                  int64
	readLat, readXfer, iops int64
	storeSyncLat            int64 // the store device's sync

	pool   *cache.Pool
	lastBg cache.Meter

	terms []*vterm
	cur   *vterm
	base  int64 // the clock when no terminal runs

	cores []int64 // when each core is next free
	store resource
	log   resource
	net   resource

	left int
	done chan struct{}

	// bg is the asynchronous background requests queued for the store
	// device (storeSlot): the cleaner's and the master thread's writes, a
	// sharp checkpoint's, their doublewrite batches and syncs. purgeQ and
	// vacuumQ are the requests of the purge and vacuum actors, each one
	// synchronous requester (see storeSlot).
	bg, purgeQ, vacuumQ reqQueue
	// storeUse is the store device's busy time by who held it
	// (StoreUse; their sum is Busy's store, so store.busy stays 0).
	storeUse        [NumStoreUses]int64
	checkpointWaits int64 // always zero since checkpoints are fuzzy (CheckpointWaits)

	// The page cleaner, a background actor: a pass (cache.Pool.CleanStep)
	// every cache.CleanerInterval of virtual time, run at the first yield
	// point at or after its time.
	nextClean int64
	// cleanerSkips counts cleaner passes that fell due while the store
	// still had background writes queued (skipped: see background).
	cleanerSkips int64

	// Purge and vacuum, background actors after the cleaner (see
	// maintain): a step each every PurgeInterval of virtual time, at the
	// first yield point at or after nextMaint. purge is DB.PurgeStep
	// (Attach); vacuum the hook for PostgreSQL's vacuum (SetVacuum), nil
	// until the engine has one. Each charges a meter of its own.
	purge, vacuum BackgroundStep
	nextMaint     int64
	purgeWork     Maintenance
	vacuumWork    Maintenance
	// history reads the purge lag (DB.Purge().Lag).
	history func() int64

	// syncLeader is the terminal leading the log sync in progress while
	// it yields inside SyncStart; urgent is a terminal whose page write
	// waits for that sync while it may hold page latches (PageWriteWait):
	// until the sync is done only the leader runs, and then the writer
	// runs first.
	syncLeader *vterm
	urgent     *vterm

	// The tier server's worker threads (SetTierServer): when each is
	// next free; nil: the server is not a resource.
	tierThreads   []int64
	tierServerOcc int64
	// MySQL 5.1's master thread (cache.Flushing51), driven instead of the
	// page cleaner (masterWork), and the asynchronous SET sender of
	// Waffle Grid's LRU mode (senderWork).
	wl waffleState

	types   [tpcc.NumTxTypes]TypeTime
	stalls  int64
	cpuBusy int64
	// progress is the running terminal's clock, for a progress bar on
	// another goroutine.
	progress atomic.Int64
}

// bgRun is n background requests of the store device, each holding it
// for occ.
type bgRun struct{ occ, n int64 }

// Who held the store device (Scheduler.StoreUse).
const (
	// StoreReads is the terminals' page reads.
	StoreReads = iota
	// StoreWrites is the terminals' own writes and syncs: dirty victims
	// written to free a frame, 5.1's LRU flushes, flushes for log space,
	// a checkpoint's sync, a sort's temporary files.
	StoreWrites
	// StoreReadAhead is read-ahead's background reads.
	StoreReadAhead
	// StoreBackground is the asynchronous writers' queue: the page
	// cleaner's or the master thread's writes, a sharp checkpoint's,
	// their doublewrite batches and syncs.
	StoreBackground
	// StorePurge and StoreVacuum are the maintenance actors' reads,
	// writes and syncs.
	StorePurge
	StoreVacuum
	NumStoreUses
)

// StoreUse returns the store device's busy time so far by who held it
// (StoreReads...): they sum to Busy's store.
func (s *Scheduler) StoreUse() [NumStoreUses]int64 { return s.storeUse }

// reqQueue is one background requester's requests queued for the store
// device, in order, as runs of equal requests.
type reqQueue struct {
	runs []bgRun
	// added and served count the requests ever queued and served (their
	// difference is pending's): the queue is first in, first out, so a
	// request is done once served reaches added's value when it was
	// queued.
	added, served int64
	// asyncEnd is, for an actor's queue, the asynchronous writers' queue
	// (bg) count of requests added once the actor's last step had queued
	// the writes of its LRU batches there: the step's writes are done
	// when bg has served as many.
	asyncEnd int64
	// turn counts the terminals' requests the device served while this
	// queue waited, since its last turn (a synchronous requester's share:
	// see storeSlot).
	turn int
}

// add queues a request holding the device for occ.
func (q *reqQueue) add(occ int64) {
	if k := len(q.runs); k > 0 && q.runs[k-1].occ == occ {
		q.runs[k-1].n++
	} else {
		q.runs = append(q.runs, bgRun{occ: occ, n: 1})
	}
	q.added++
}

// pending is the requests queued and not yet served (in runs).
func (q *reqQueue) pending() int64 { return q.added - q.served }

// storeOp is one request to the store device: how long it holds the
// device, how long it takes to complete once started, and whether it is
// priced with the I/O path's CPU (a read or a write; a sync is not, as a
// log sync is not).
type storeOp struct {
	occ, resp int64
	cpu       bool
}

// resource is a first-come-first-served server in virtual time.
type resource struct {
	free int64 // when it can start the next request
	busy int64 // total time it was held
}

// Time shares of a response time, in the order of the breakdown.
const (
	TimeCPU = iota
	TimePool
	TimeTier
	TimeStore
	TimeLog
	TimeLock
	TimeQueue
	NumTimeKinds
)

// TimeKindNames names the shares as reports do.
var TimeKindNames = [NumTimeKinds]string{"cpu", "buffer_pool", "remote_tier", "store", "log", "lock_wait", "queueing"}

// TypeTime is where one transaction type's measured response time went,
// summed over its transactions, in virtual nanoseconds.
type TypeTime struct {
	Count    int64
	Response int64
	Spent    [NumTimeKinds]int64
}

// firstCPUShare is the first event priced as engine CPU; the ones before
// it are the buffer pool's.
const firstCPUShare = int(hw.EventNodeVisit)

// Terminal states.
const (
	runnable    = iota
	parkedLock  // waiting for a row lock (or its deadline)
	parkedGrant // granted a lock inside another terminal's call: waits for that call's priced end
	parkedLog   // waiting for a log sync another terminal leads
	parkedCell  // waiting for another terminal's replay to book a read this one found in the pool
	finished
)

// vterm is one terminal's coroutine.
type vterm struct {
	s      *Scheduler
	num    int
	now    int64 // virtual nanoseconds since the epoch
	state  int
	resume chan struct{}

	wait      *lock.Wait // parkedLock, parkedGrant
	deadline  int64
	grantedBy *vterm          // the terminal whose call granted wait
	grantAt   int64           // the end of that call's priced interval; -1 until known
	logDone   <-chan struct{} // parkedLog
	waitCell  *int64          // parkedCell
	parkAt    int64

	meter *engine.Meter // the transaction's, while one runs
	last  hw.Vector     // its counters at the last pricing
	// lastSort is its sort counters at the last pricing: an ORDER BY's
	// CPU and temporary-file I/O are priced by hw.SortTime, not by the
	// event vector.
	lastSort engine.SortCounts
	// lastLRU is its meter's LRU batches and their pages at the last
	// pricing (MySQL 5.1's flushing: see postLRUWrites).
	lastLRU [2]int64
	loads   []load   // page reads since the last pricing
	bgLoads []load   // read-ahead since the last pricing
	readyAt int64    // the latest ready time of a frame hit since the last pricing
	hits    []*int64 // frames hit whose read another terminal had not yet booked
	ownHits []*int64 // frames hit that this terminal's own read-ahead brought in
	carry   [2]int64 // CPU picoseconds not yet a whole nanosecond: pool, engine
	unsafe  int      // page writes under way that may wait for the log (PageWriteWait)

	spent   [NumTimeKinds]int64
	txSpent [NumTimeKinds]int64
	txBegin int64

	// client is the terminal's client model (Scheduler.SetClients; nil:
	// none); clientSpent its time so far, txClient at the transaction's
	// start.
	client      ClientTerminal
	clientSpent ClientTime
	txClient    ClientTime
}

type load struct {
	cell     *int64
	fromTier bool
}

// Epoch is virtual time zero: the wall-clock date simulated runs
// report (a fixed date, so that dates written by transactions repeat).
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// New returns a scheduler for machine, pages of pageSize bytes,
// with or without a remote tier. Its hooks go into the engine's options
// (Install); Attach gives it the opened database.
func New(machine hw.Machine, pageSize int, tier bool) *Scheduler {
	s := &Scheduler{machine: machine, epoch: Epoch, pageSize: int64(pageSize), tier: tier}
	s.ev, s.storeCPUps, s.tierCPUps = machine.CPU.Picos()
	s.cores = make([]int64, machine.Cores)
	ps := int64(pageSize)
	store := &machine.Store
	xr, xw := hw.TransferNanos(ps, store.ReadBandwidth), hw.TransferNanos(ps, store.WriteBandwidth)
	var gap int64
	if store.IOPS > 0 {
		gap = int64(time.Second) / store.IOPS
	}
	s.storeOcc = [2]int64{gap + xr, gap + xw}
	s.storeResp = [2]int64{int64(store.ReadLatency) + xr, int64(store.WriteLatency) + xw}
	s.readLat, s.readXfer, s.iops = int64(store.ReadLatency), xr, gap
	s.storeSyncLat = int64(store.SyncLatency)
	s.netOcc = hw.TransferNanos(ps, machine.Network.Bandwidth)
	s.netRTT = int64(machine.Network.RoundTrip)
	s.netPage = s.netRTT + s.netOcc
	return s
}

// The scheduler is the database's Runtime in simulated mode.
var _ engine.Runtime = (*Scheduler)(nil)

// Install makes the scheduler o's Runtime: the database's clock, lock and
// log waits, sync starts, call boundaries and frame ready times. Purge
// at its default becomes engine.PurgeManual: the scheduler runs it as a
// background actor (Attach), at virtual times of its own, rather than on
// the committing terminal after every commit.
func (s *Scheduler) Install(o *engine.Options) {
	o.Runtime = s
	if o.Purge == engine.PurgeDefault {
		o.Purge = engine.PurgeManual
	}
	if o.Vacuum == engine.VacuumDefault {
		o.Vacuum = engine.VacuumManual
	}
}

// Attach gives the scheduler the database: its pool, whose background
// meter it prices and whose page cleaner it runs, and its purge, which it
// runs as a background actor (DB.PurgeStep, PurgeBatch logs a step).
func (s *Scheduler) Attach(db *engine.DB) {
	s.pool = db.Pool()
	s.lastBg = s.pool.BackgroundMeter()
	s.purge = func(m *engine.Meter) (int, error) { return db.PurgeStep(m, PurgeBatch) }
	s.history = func() int64 { return db.Purge().Lag }
	// Autovacuum of versioned heap tables (Options.HeapVersions), after
	// purge, in the same deterministic order (SetVacuum replaces it): for
	// a database that has such tables or may create them (a job loads
	// its tables after Attach); a step with nothing due does no work.
	if db.Options().HeapVersions.Keep() || db.HasVersionedTables() {
		s.vacuum = func(m *engine.Meter) (int, error) { return db.VacuumStep(m, VacuumBatch) }
	}
	s.attachWaffle(db)
}

// BackgroundStep is one step of a background actor: bounded work charged
// to m, returning how many units (undo logs purged, pages vacuumed) it
// did.
type BackgroundStep func(m *engine.Meter) (int, error)

// PurgeInterval is how often, in virtual time, the purge actor (and the
// vacuum actor, if any) takes a step: InnoDB's purge coordinator works in
// batches while the history list has work and sleeps between them
// (srv_purge_coordinator_thread); PurgeBatch is its batch, in undo logs
// here (innodb_purge_batch_size is 300 undo pages).
const (
	PurgeInterval = 10 * time.Millisecond
	PurgeBatch    = 300
	// VacuumBatch is the most tables one vacuum step vacuums (an
	// autovacuum worker takes one table at a time).
	VacuumBatch = 1
)

// Maintenance is a background actor's work so far (Purge, Vacuum).
type Maintenance struct {
	// Steps counts the steps taken, Done the units they did (undo logs
	// purged, pages vacuumed).
	Steps, Done int64
	// Meter is the actor's own meter, every step's work summed.
	Meter engine.Meter
	// MaxHistory and History are the purge lag (the history list's
	// length, DB.Purge().Lag) at its longest when a step began, and after
	// the last step (purge only).
	MaxHistory, History int64
	// Waits counts steps that fell due while the actor's last step's
	// store requests were still queued: it is one thread, and takes its
	// next step only once they are served.
	Waits int64
	// Err is the first error a step returned (the actor then stops).
	Err error
}

// SetVacuum installs the vacuum actor's step, run after purge's at the
// same points (see Attach's HOOK); nil: none.
func (s *Scheduler) SetVacuum(step BackgroundStep) { s.vacuum = step }

// Purge returns the purge actor's work so far.
func (s *Scheduler) Purge() Maintenance { return s.purgeWork }

// Vacuum returns the vacuum actor's work so far (none without SetVacuum).
func (s *Scheduler) Vacuum() Maintenance { return s.vacuumWork }

// Now is the virtual time: the running terminal's clock, or the
// scheduler's own between runs. It never yields (the pool reads it under
// its lock): cache.Clock (engine.Runtime), and tpcc.Env for the run's start.
func (s *Scheduler) Now() time.Time {
	if v := s.cur; v != nil {
		return s.epoch.Add(time.Duration(v.now))
	}
	return s.epoch.Add(time.Duration(s.base))
}

// Sleep moves the scheduler's own clock (tpcc.Env; terminals sleep
// through their own Env).
func (s *Scheduler) Sleep(d time.Duration) { s.base += int64(d) }

// Elapsed is the virtual time since the epoch.
func (s *Scheduler) Elapsed() time.Duration { return time.Duration(s.base) }

// ForTerminal implements tpcc.TerminalEnvs: terminal num's coroutine.
func (s *Scheduler) ForTerminal(num int) tpcc.Env {
	v := &vterm{s: s, num: num, now: s.base, resume: make(chan struct{}, 1)}
	if s.clients != nil {
		v.client = s.clients(num)
	}
	s.terms = append(s.terms, v)
	return v
}

// RunTPCC runs the terminals NewTerminals prepared with this scheduler as
// their Env; errs[i] is what terms[i].Run returned.
func (s *Scheduler) RunTPCC(ctx context.Context, terms []*tpcc.Terminal) []error {
	fs := make([]func() error, len(terms))
	for i, t := range terms {
		fs[i] = func() error { return t.Run(ctx) }
	}
	return s.Run(fs)
}

// Run runs fs[i] as the coroutine of terminal i (the one ForTerminal(i)
// made; every terminal needs a function), one at a time in virtual time,
// until every one has returned; errs[i] is what fs[i] returned. A
// function must do its waiting through the scheduler: its Env, the
// engine's hooks.
func (s *Scheduler) Run(fs []func() error) []error {
	errs := make([]error, len(fs))
	if len(fs) == 0 {
		return errs
	}
	if len(fs) != len(s.terms) {
		panic("sched: Scheduler.Run needs one function per terminal ForTerminal made")
	}
	s.left = len(fs)
	s.done = make(chan struct{})
	if s.pool != nil {
		// Background work before the run (the load's checkpoints) is
		// not the run's.
		s.lastBg = s.pool.BackgroundMeter()
		s.nextClean = s.base + int64(cache.CleanerInterval)
		s.nextMaint = s.base + int64(PurgeInterval)
		s.startWaffle()
	}
	for i, f := range fs {
		v := s.terms[i]
		go func() {
			<-v.resume
			errs[i] = f()
			s.finish(v)
		}()
	}
	first, _ := s.pick()
	s.cur = first
	first.resume <- struct{}{}
	<-s.done
	for _, v := range s.terms {
		s.base = max(s.base, v.now)
	}
	s.cur, s.terms = nil, nil
	return errs
}

// finish ends v's coroutine and hands the turn on.
func (s *Scheduler) finish(v *vterm) {
	s.settle(v)
	v.state = finished
	s.left--
	if s.left == 0 {
		close(s.done)
		return
	}
	s.switchFrom(v)
}

// pick returns the next event: the runnable terminal with the smallest
// clock, or a parked lock wait whose deadline comes first (timeout says
// which). Ties go to the lower terminal number.
func (s *Scheduler) pick() (next *vterm, timeout bool) {
	var at int64
	for _, v := range s.terms {
		var t int64
		switch v.state {
		case runnable:
			t = v.now
		case parkedLock:
			t = v.deadline
		default:
			continue
		}
		if next == nil || t < at {
			next, at, timeout = v, t, v.state == parkedLock
		}
	}
	return next, timeout
}

// switchFrom hands the turn from v (the running terminal, settled) to the
// next event's terminal, and returns when v has the turn again (at once
// if v is next).
func (s *Scheduler) switchFrom(v *vterm) {
	s.wakeCells()
	next, timeout := s.urgentNext(v), false
	if next == nil {
		next, timeout = s.pick()
	}
	if next == nil {
		// Everyone left waits for a log sync that nobody leads: cannot
		// happen while the log's leader is runnable, but a stalled
		// simulation must not hang. Wake the lowest-numbered one.
		for _, t := range s.terms {
			if t.state == parkedLog {
				s.stalls++
				t.state = runnable
				next = t
				break
			}
		}
		if next == nil {
			return
		}
	}
	if timeout {
		next.state = runnable
		next.spent[TimeLock] += max(0, next.deadline-next.parkAt)
		next.now = max(next.now, next.deadline)
	}
	s.progress.Store(next.now)
	if next == v {
		return
	}
	// Read v's state before the hand-off: from then on the next terminal
	// owns the scheduler, v's fields included.
	wait := v.state != finished
	s.cur = next
	next.resume <- struct{}{}
	if wait {
		<-v.resume
	}
}

// urgentNext is the terminal that must run next while a page write waits
// for a log sync (see Wait): the writer once the sync is done (at the
// clock of the terminal that yields, the leader's), else the sync's
// leader, if it is runnable. Nil: no such wait, or the leader itself waits
// for another terminal's read (then the order is the usual one).
func (s *Scheduler) urgentNext(v *vterm) *vterm {
	u := s.urgent
	if u == nil {
		return nil
	}
	if u.state == parkedLog {
		select {
		case <-u.logDone:
			s.wakeLog(v.now)
		default:
		}
	}
	if u.state == runnable {
		s.urgent = nil
		return u
	}
	if l := s.syncLeader; l != nil && l.state == runnable {
		return l
	}
	return nil
}

// Progress is the virtual time the run has reached (the clock of the
// terminal that runs); safe to read from any goroutine.
func (s *Scheduler) Progress() time.Duration { return time.Duration(s.progress.Load()) }

// settle prices v's pending work and wakes the waiters it released. Only
// v has run since its last yield point, so every sync completed and every
// lock granted since then was v's doing.
func (s *Scheduler) settle(v *vterm) {
	s.wakeLog(v.now) // a sync v led completed at its clock before pricing
	s.claimGrants(v)
	s.price(v) // other terminals may run between its steps
	for _, t := range s.terms {
		// Locks v released: granted at the end of its priced interval.
		if t.grantedBy != v {
			continue
		}
		if t.state != parkedGrant {
			t.grantAt = v.now // still pricing its own work: Park applies it
			continue
		}
		g := max(v.now, t.parkAt)
		t.spent[TimeLock] += g - t.parkAt
		t.now = max(t.now, g)
		t.state, t.grantedBy = runnable, nil
	}
}

// claimGrants marks the lock waiters v's work has granted: they wait for
// the end of v's priced interval, whatever their deadlines. A waiter may
// still be pricing the work before its wait (Park settles first, and
// other terminals run between the steps of its pricing); its wait began
// all the same when it asked.
func (s *Scheduler) claimGrants(v *vterm) {
	for _, t := range s.terms {
		if t == v || t.wait == nil || t.grantedBy != nil {
			continue
		}
		select {
		case <-t.wait.Ready():
			t.grantedBy = v
			if t.state == parkedLock {
				t.state = parkedGrant
			}
		default:
		}
	}
}

// wakeLog makes runnable, at time at, the terminals parked for a log
// sync that has completed.
func (s *Scheduler) wakeLog(at int64) {
	for _, t := range s.terms {
		if t.state != parkedLog {
			continue
		}
		select {
		case <-t.logDone:
		default:
			continue
		}
		g := max(at, t.parkAt)
		t.spent[TimeLog] += g - t.parkAt
		t.now = max(t.now, g)
		t.state = runnable
	}
}

// wakeCells makes runnable the terminals whose awaited read has been
// booked: at its completion (buffer pool share).
func (s *Scheduler) wakeCells() {
	for _, t := range s.terms {
		if t.state != parkedCell || *t.waitCell < 0 {
			continue
		}
		g := max(*t.waitCell, t.parkAt)
		t.spent[TimePool] += g - t.parkAt
		t.now = max(t.now, g)
		t.state, t.waitCell = runnable, nil
	}
}

// pending is the value of a ready cell whose read t has not booked yet.
func pending(t *vterm) int64 { return -int64(t.num) - 1 }

// step lets every terminal whose clock is earlier than v's run first, so
// that what v books next on a shared resource is booked in order of
// arrival: every queue is first come, first served.
func (s *Scheduler) step(v *vterm) { s.switchFrom(v) }

// price turns v's work since the last pricing into virtual time, step by
// step (see the Scheduler's comment); v's clock is the arrival time of
// each step, and each step that needs a shared resource is booked only
// when no other terminal's clock is earlier.
func (s *Scheduler) price(v *vterm) {
	var d hw.Vector
	var sortCPU, sortIO time.Duration
	if v.meter != nil {
		cur := hw.VectorOf(v.meter)
		for i := range d {
			d[i] = cur[i] - v.last[i]
		}
		v.last = cur
		if sc := &v.meter.SortCounts; *sc != v.lastSort {
			delta := *sc
			delta.Sub(&v.lastSort)
			v.lastSort = *sc
			sortCPU, sortIO = hw.SortTime(&s.machine, &hw.DefaultSortCosts, &delta)
		}
	}
	// 1. Pages the work found in the pool that others were still reading.
	if v.readyAt > v.now {
		v.spent[TimePool] += v.readyAt - v.now
		v.now = v.readyAt
	}
	v.readyAt = 0
	for _, c := range v.hits {
		if *c < 0 {
			v.state, v.waitCell, v.parkAt = parkedCell, c, v.now
			s.switchFrom(v) // wakeCells moves the clock
		}
		if *c > v.now {
			v.spent[TimePool] += *c - v.now
			v.now = *c
		}
	}
	clear(v.hits)
	v.hits = v.hits[:0]
	// 2. Its reads, in order.
	for _, l := range v.loads {
		if s.tier {
			bytes := int64(0)
			if l.fromTier {
				bytes = s.pageSize
			}
			s.step(v)
			v.now = s.netRequest(v, v.now, bytes)
		}
		if !l.fromTier {
			s.step(v)
			v.now = s.storeRequest(v, v.now, 0)
		}
		*l.cell = v.now
	}
	clear(v.loads)
	v.loads = v.loads[:0]
	// 3. The writes and syncs it waited for (a dirty page written back:
	// through the doublewrite buffer, if there is one, then in place; a
	// checkpoint's store sync), then tier requests. Under MySQL 5.1's
	// flushing without a doublewrite buffer, its LRU batches' writes are
	// posted instead (postLRUWrites).
	s.postLRUWrites(v, &d)
	s.storeOps(&d, func(op storeOp) {
		s.step(v)
		v.now = s.storeBooked(v, v.now, op, StoreWrites)
	})
	if sortIO > 0 {
		// A sort's temporary files: its run writes and merge reads
		// (hw.SortTime, each request's latency and transfer) hold the
		// store device as one booking.
		s.step(v)
		v.now = s.storeBooked(v, v.now, storeOp{occ: int64(sortIO), resp: int64(sortIO)}, StoreWrites)
	}
	if s.tier { // a trace's null tier is free
		for range d[hw.EventTierPut] {
			s.step(v)
			v.now = s.netRequest(v, v.now, s.pageSize)
		}
		for range d[hw.EventTierDelete] {
			s.step(v)
			v.now = s.netRequest(v, v.now, 0)
		}
	}
	// 4. Its CPU.
	var ps [2]int64
	for i := range hw.NumCPUEvents {
		share := 1
		if i < firstCPUShare {
			share = 0
		}
		ps[share] += d[i] * s.ev[i]
	}
	ps[1] += sortCPU.Nanoseconds() * 1000 // ps: the events' costs are in ps
	var ns [2]int64
	for i := range ps {
		ps[i] += v.carry[i]
		ns[i], v.carry[i] = ps[i]/1000, ps[i]%1000
	}
	if busy := ns[0] + ns[1]; busy > 0 {
		s.step(v)
		c := 0
		for i := range s.cores {
			if s.cores[i] < s.cores[c] {
				c = i
			}
		}
		start := max(v.now, s.cores[c])
		v.spent[TimeQueue] += start - v.now
		v.spent[TimePool] += ns[0]
		v.spent[TimeCPU] += ns[1]
		s.cores[c] = start + busy
		s.cpuBusy += busy
		v.now = start + busy
	}
	// 5. The background work it caused, and the pages of its own
	// read-ahead it went on to use.
	if len(v.bgLoads) > 0 || s.pool != nil {
		s.step(v)
		s.background(v)
	}
	for _, c := range v.ownHits {
		if *c > v.now {
			v.spent[TimePool] += *c - v.now
			v.now = *c
		}
	}
	clear(v.ownHits)
	v.ownHits = v.ownHits[:0]
}

// postLRUWrites takes the writes of v's LRU batches since the last
// pricing out of d and queues them with the asynchronous writers, under
// MySQL 5.1's flushing without a doublewrite buffer: there
// buf_flush_batch hands its pages to the I/O threads and
// buf_flush_buffered_writes only wakes them, so the thread that needed
// frames goes on once its writes are posted. Posting waits only for room:
// 5.1's simulated AIO posts a write into an array of AIOWriteSlots slots
// and waits for a free one when it is full (os_aio_array_reserve_slot),
// so v waits until the queue has served enough of what it holds
// (serveBgThrough). With the buffer, buf_flush_buffered_writes writes and
// syncs the buffer, waits for every in-place write and syncs the data
// files before it returns: the caller waits for all of it, and d keeps
// the writes (storeOps prices them on v's clock).
//
// The writes of an interval that are not its LRU batches' (a flush for
// log space, a page written back by a fetch that found no replaceable
// frame) stay in d; a batch's merged writes are taken in proportion to
// its share of the writes. What is not modelled: while its pages are
// being written they are io-fixed in 5.1, so a thread that needs a frame
// evicts a clean page further up the list (and one whose free margin
// falls short waits for the running batch to end); the pool writes them
// at once and evicts them first. Whether the disk or the OS's page cache
// takes a write (5.1 opens its data files without O_DIRECT by default)
// is not modelled either: the queue holds the disk for every write, and
// the cache's merging of repeated writes of a page between syncs is not
// counted.
func (s *Scheduler) postLRUWrites(v *vterm, d *hw.Vector) {
	if v.meter == nil || !s.wl.flushing51 {
		return
	}
	batches := v.meter.LRUFlushBatches - v.lastLRU[0]
	pages := v.meter.LRUFlushPages - v.lastLRU[1]
	v.lastLRU = [2]int64{v.meter.LRUFlushBatches, v.meter.LRUFlushPages}
	writes := d[hw.EventStoreWrite]
	if batches == 0 || s.wl.doublewrite || writes == 0 {
		return
	}
	var lru hw.Vector
	lru[hw.EventStoreWrite] = min(pages, writes)
	lru[hw.EventStoreWriteMerged] = min(d[hw.EventStoreWriteMerged], writes) * lru[hw.EventStoreWrite] / writes
	d[hw.EventStoreWrite] -= lru[hw.EventStoreWrite]
	d[hw.EventStoreWriteMerged] -= lru[hw.EventStoreWriteMerged]
	s.wl.postedBatches += batches
	s.step(v)
	s.storeOps(&lru, func(op storeOp) {
		if s.bg.pending() >= AIOWriteSlots {
			// The array is full: wait for its oldest write.
			t := s.serveBgThrough(s.bg.served+1, v.now)
			s.wl.postWaits++
			v.spent[TimeStore] += t - v.now
			v.now = t
		}
		s.queueOn(&s.bg, v.now, op.occ)
	})
}

// AIOWriteSlots is the writes MySQL 5.1's simulated AIO holds posted at
// once: os_aio_init's 8 × SRV_N_PENDING_IOS_PER_THREAD (32) × 4 threads
// slots, divided among its four arrays (insert buffer, log, read,
// write), 256 for the one write thread (srv0start.c, os0file.c).
const AIOWriteSlots = 8 * 32 * 4 / 4

// serveBgThrough serves the asynchronous writers' queue until it has
// served end requests, from t (the earliest clock), and returns when the
// last of them is done: a thread waiting for a posted write. The idle
// time before t serves the background queues first, as drainBg; then
// the queue's requests hold the device back to back, as requests posted
// before any a later arrival makes.
func (s *Scheduler) serveBgThrough(end, t int64) int64 {
	s.drainBg(t)
	done := t
	for s.bg.served < end && s.bg.pending() > 0 {
		start := max(s.store.free, t)
		s.store.free = start + s.takeBg(&s.bg, min(s.bg.runs[0].n, end-s.bg.served), StoreBackground)
		done = s.store.free
	}
	return done
}

// storeRequest prices one page read (rw 0) or write (1) on the store
// device for v, arriving at t, and returns when it completes.
func (s *Scheduler) storeRequest(v *vterm, t int64, rw int) int64 {
	use := StoreReads
	if rw == 1 {
		use = StoreWrites
	}
	return s.storeBooked(v, t, storeOp{occ: s.storeOcc[rw], resp: s.storeResp[rw], cpu: true}, use)
}

// storeBooked prices op on the store device for v, arriving at t, and
// returns when it completes.
func (s *Scheduler) storeBooked(v *vterm, t int64, op storeOp, use int) int64 {
	start := s.storeSlot(t, op.occ, use)
	done := start + op.resp
	if op.cpu {
		done += s.storeCPUps / 1000
	}
	v.spent[TimeQueue] += start - t
	v.spent[TimeStore] += done - start
	return done
}

// storeOps calls fn with the store device's writes and syncs that d
// counts, in the order the engine makes them. A doublewrite batch (InnoDB's
// buf_dblwr_t::flush_buffered_writes) is one sequential write of its pages
// (the device's write latency once, a request's IOPS gap once, the pages'
// transfer) and a sync of the device, then its pages' in-place writes, one
// request each, then a sync of the store before the area is reused. The
// batches' pages are spread evenly over them (a meter says how many
// batches and pages, not which pages went in which batch). Page writes and
// store syncs beyond the batches' (without the buffer: all of them; a
// checkpoint's sync) come after. An in-place write merged into the
// request before it (EventStoreWriteMerged: MySQL 5.1's simulated AIO)
// holds the device for its transfer alone; the merged writes are spread
// evenly over the in-place writes.
func (s *Scheduler) storeOps(d *hw.Vector, fn func(op storeOp)) {
	dev := &s.machine.Store
	sync := storeOp{occ: s.storeSyncLat, resp: s.storeSyncLat}
	writes, syncs := d[hw.EventStoreWrite], d[hw.EventStoreSync]
	dwSyncs := d[hw.EventDoublewriteSync]
	allWrites, merged, done := writes, min(d[hw.EventStoreWriteMerged], writes), int64(0)
	var xfer int64 // a page's transfer, when a merged write or a doublewrite batch needs it
	if merged > 0 || d[hw.EventDoublewriteWrite] > 0 {
		xfer = hw.TransferNanos(s.pageSize, dev.WriteBandwidth)
	}
	write := func() {
		// Write done+1 is merged if the even spread of the merged
		// writes puts one on it.
		if merged > 0 && merged*(done+1)/allWrites > merged*done/allWrites {
			fn(storeOp{occ: xfer, resp: xfer})
		} else {
			fn(storeOp{occ: s.storeOcc[1], resp: s.storeResp[1], cpu: true})
		}
		done++
	}
	if n := d[hw.EventDoublewriteWrite]; n > 0 {
		bytes := d[hw.EventDoublewriteByte]
		gap := s.storeOcc[1] - xfer // the IOPS gap
		for i := range n {
			// Batch i's share of the bytes, in whole pages.
			pages := bytes/s.pageSize*(i+1)/n - bytes/s.pageSize*i/n
			x := hw.TransferNanos(pages*s.pageSize, dev.WriteBandwidth)
			fn(storeOp{occ: gap + x, resp: int64(dev.WriteLatency) + x, cpu: true})
			if dwSyncs > 0 {
				dwSyncs--
				fn(sync)
			}
			for range min(pages, writes) {
				write()
			}
			writes -= min(pages, writes)
			if syncs > 0 {
				syncs--
				fn(sync)
			}
		}
	}
	for range dwSyncs {
		fn(sync)
	}
	for range writes {
		write()
	}
	for range syncs {
		fn(sync)
	}
}

// storeSlot books the store device for occ from the first moment at or
// after t it can start a request, and returns that moment; use says who
// holds it (StoreReads...).
//
// Background requests wait in queues of their own: they run back to back
// while the device would be idle, and while it is busy they take turns
// with the requests terminals wait for.
//
//   - The asynchronous writers' queue (bg: the page cleaner's writes, the
//     master thread's, a sharp checkpoint's, their doublewrite batches and
//     store syncs) has one turn before each terminal request. These
//     writers issue their batch at once, many requests outstanding, as
//     InnoDB's do through asynchronous I/O. A sharp checkpoint of a large
//     pool on a slow disk is minutes of writes; queued ahead of everything
//     it would stop every read for that long, which no IO scheduler does.
//   - The purge and vacuum actors are each one thread that reads a page,
//     works on it and reads the next (InnoDB's purge, PostgreSQL's
//     autovacuum worker): one request outstanding, like a terminal. Each
//     gets one turn per round of the running terminals' requests, the
//     share a synchronous requester gets among as many others on a busy
//     device served in arrival order.
func (s *Scheduler) storeSlot(t, occ int64, use int) int64 {
	free := s.store.free
	if t > free {
		free = s.serveIdle(free, t)
	} else {
		// Busy: the background queues' turns go before this request.
		if s.bg.pending() > 0 {
			free += s.takeBg(&s.bg, 1, StoreBackground)
		}
		free += s.actorTurn(&s.purgeQ, StorePurge)
		free += s.actorTurn(&s.vacuumQ, StoreVacuum)
	}
	start := max(t, free)
	s.store.free = start + occ
	s.storeUse[use] += occ
	return start
}

// actorTurn counts a terminal request against q's share and serves q's
// next request when its turn has come (once per s.left terminal
// requests), returning how long that holds the device.
func (s *Scheduler) actorTurn(q *reqQueue, use int) int64 {
	if q.pending() == 0 {
		q.turn = 0
		return 0
	}
	if q.turn++; q.turn < max(s.left, 1) {
		return 0
	}
	q.turn = 0
	return s.takeBg(q, 1, use)
}

// serveIdle serves the background requests that start while the store
// device is idle from free to t (the last may run past t), and returns
// when the device is free again: the asynchronous writers' first, then
// purge's, then vacuum's.
func (s *Scheduler) serveIdle(free, t int64) int64 {
	queues := [...]struct {
		q   *reqQueue
		use int
	}{{&s.bg, StoreBackground}, {&s.purgeQ, StorePurge}, {&s.vacuumQ, StoreVacuum}}
	for _, e := range queues {
		q, use := e.q, e.use
		for q.pending() > 0 && free < t {
			r := &q.runs[0]
			n := r.n
			if r.occ > 0 {
				n = min(n, (t-free+r.occ-1)/r.occ)
			}
			free += s.takeBg(q, n, use)
		}
	}
	return free
}

// bgQueued is whether any background request waits for the store device.
func (s *Scheduler) bgQueued() bool {
	return s.bg.pending()+s.purgeQ.pending()+s.vacuumQ.pending() > 0
}

// drainBg serves the background requests the store device had time for
// before t, when no request of a terminal's came to take turns with
// them. t is the earliest clock: no request can arrive before it.
func (s *Scheduler) drainBg(t int64) {
	if s.bgQueued() && s.store.free < t {
		s.store.free = s.serveIdle(s.store.free, t)
	}
}

// takeBg serves n requests of q's first run (at most its count): they
// hold the store device for use. It returns how long.
func (s *Scheduler) takeBg(q *reqQueue, n int64, use int) int64 {
	r := &q.runs[0]
	occ := n * r.occ
	s.storeUse[use] += occ
	q.served += n
	if r.n -= n; r.n == 0 {
		q.runs = q.runs[1:]
	}
	return occ
}

// queueOn adds a request holding the store device for occ to q, the
// device's idle time starting at t if nothing was queued (no request can
// arrive before t, the earliest clock).
func (s *Scheduler) queueOn(q *reqQueue, t, occ int64) {
	if !s.bgQueued() {
		s.store.free = max(s.store.free, t)
	}
	q.add(occ)
}

// netRequest prices one request to the remote tier carrying bytes of page
// (0: a miss, a delete) for v, arriving at t.
func (s *Scheduler) netRequest(v *vterm, t int64, bytes int64) int64 {
	occ := int64(0)
	if bytes > 0 {
		occ = s.netOcc
	}
	start := max(t, s.net.free)
	s.net.free = start + occ
	s.net.busy += occ
	start = s.tierServe(start)
	done := start + s.netRTT + occ + s.tierCPUps/1000
	v.spent[TimeQueue] += start - t
	v.spent[TimeTier] += done - start
	return done
}

// background runs the page cleaner's passes that are due and prices the
// pool's background work since the last look, at v's clock: read-ahead
// (one sequential request per priced interval, each page ready as its
// transfer ends) and page writes (the cleaner's, a sharp checkpoint's).
// Nobody's clock waits for it; it holds the devices. A transaction waits
// for page writes only when it flushes for log space itself
// (engine's log free check), and those writes are its own.
func (s *Scheduler) background(v *vterm) {
	t := v.now
	if n := len(v.bgLoads); n > 0 {
		var store []load
		for _, l := range v.bgLoads {
			if l.fromTier {
				start := max(t, s.net.free)
				s.net.free = start + s.netOcc
				s.net.busy += s.netOcc
				start = s.tierServe(start)
				*l.cell = start + s.netPage
				continue
			}
			store = append(store, l)
		}
		if len(store) > 0 {
			start := s.storeSlot(t, s.iops+int64(len(store))*s.readXfer, StoreReadAhead)
			for i, l := range store {
				*l.cell = start + s.readLat + int64(i+1)*s.readXfer
			}
		}
		clear(v.bgLoads)
		v.bgLoads = v.bgLoads[:0]
	}
	if s.pool == nil {
		return
	}
	// The page cleaner's passes that fall due by now. Not while a page
	// write waits for a log sync holding latches (urgent): a pass could
	// need a page that writer holds; it runs at a later yield point.
	//
	// Nor while the store device still has background writes queued:
	// InnoDB's page cleaner waits for its batch to end before it starts
	// the next (buf_flush_page_cleaner_coordinator waits for its workers,
	// buf_flush_wait_batch_end), so a pass that falls due then is skipped.
	// A cleaner that cannot keep up therefore leaves dirty pages to the
	// transactions: dirty victims they write themselves
	// (Meter.DirtyWriteBacks) and the log free check's flushes, priced on
	// their own clocks. Without this, a device slower than the cleaner's
	// rate would let writes pile up unpriced while the pool counted their
	// pages clean.
	s.senderWork(t)
	s.queueBackground(t)
	if s.wl.flushing51 {
		s.masterWork(t) // MySQL 5.1 has no page cleaner
	}
	if s.urgent == nil {
		for !s.wl.flushing51 && t >= s.nextClean {
			s.nextClean += int64(cache.CleanerInterval)
			// What the device did of the last batch by the pass's time,
			// requests of terminals or not.
			s.drainBg(s.nextClean - int64(cache.CleanerInterval))
			if s.bg.pending() > 0 {
				s.cleanerSkips++
				continue
			}
			s.cleanerPass(t)
			s.queueBackground(t)
		}
		// Nor while a terminal leads a log sync (parked in SyncStart, the
		// log's sync in flight): a step that writes a dirty victim to
		// free a frame must wait for that sync (the WAL rule), and with
		// no terminal current that wait would block the scheduler itself.
		// The step runs at the first yield point after the sync.
		if t >= s.nextMaint && s.syncLeader == nil {
			s.nextMaint = t + int64(PurgeInterval)
			s.maintain(t)
		}
	}
}

// maintain takes a step of each maintenance actor due at t, in a fixed
// order (purge, then vacuum), with no terminal current: their work is
// background work. Each is one synchronous requester: its page reads, and
// the writes and syncs it made (a dirty victim written to free a frame),
// queue on the store device in its own queue (storeSlot), and a step that
// falls due while the last one's requests are still queued waits for them
// (Maintenance.Waits). The writes of MySQL 5.1's LRU batches are the
// exception: they join the asynchronous writers' queue (actorStep). No
// terminal's clock waits for them (the pages they dirty are the
// cleaner's to write). Their CPU is not priced, as no background work's
// is. Under MySQL 5.1's flushing, purge is the master thread's
// (masterWork), not an actor of its own.
func (s *Scheduler) maintain(t int64) {
	s.drainBg(t)
	if !s.wl.flushing51 {
		if s.actorBusy(&s.purgeQ) {
			s.purgeWork.Waits++
		} else {
			s.purgeStep(t)
		}
	}
	if s.vacuum != nil && s.vacuumWork.Err == nil {
		if s.actorBusy(&s.vacuumQ) {
			s.vacuumWork.Waits++
		} else {
			s.actorStep(&s.vacuumWork, s.vacuum, &s.vacuumQ, t)
		}
	}
}

// purgeStep takes one step of the purge actor at t, recording the history
// list's length before and after it, and returns how many undo logs it
// purged.
func (s *Scheduler) purgeStep(t int64) int {
	if s.history != nil {
		s.purgeWork.MaxHistory = max(s.purgeWork.MaxHistory, s.history())
	}
	n := s.actorStep(&s.purgeWork, s.purge, &s.purgeQ, t)
	if s.history != nil {
		s.purgeWork.History = s.history()
	}
	return n
}

// actorStep runs one step of f with no terminal current, on w's meter,
// and queues the store requests it made on q from t. It returns the units
// the step did (0 if f is nil or has failed before).
func (s *Scheduler) actorStep(w *Maintenance, f BackgroundStep, q *reqQueue, t int64) int {
	if f == nil || w.Err != nil {
		return 0
	}
	cur := s.cur
	s.cur = nil
	before, readsBefore, batchesBefore := hw.VectorOf(&w.Meter), w.Meter.StoreReads, w.Meter.LRUFlushBatches
	n, err := f(&w.Meter)
	s.cur = cur
	w.Steps++
	w.Done += int64(n)
	if err != nil {
		w.Err = err
	}
	d := hw.VectorOf(&w.Meter)
	for i := range d {
		d[i] -= before[i]
	}
	for range w.Meter.StoreReads - readsBefore {
		s.queueOn(q, t, s.storeOcc[0])
	}
	if w.Meter.LRUFlushBatches == batchesBefore {
		s.storeOps(&d, func(op storeOp) { s.queueOn(q, t, op.occ) })
		return n
	}
	// The step freed frames with MySQL 5.1's LRU batches (it has no
	// single-page flush): a batch posts its writes at once to the
	// asynchronous I/O threads, so they queue with the other
	// asynchronous writers' rather than one at a time in the actor's
	// share. With the doublewrite buffer, buf_flush_buffered_writes then
	// waits until no write is pending (os_aio_wait_until_no_pending_writes)
	// and syncs the data files, so the actor's next step waits for every
	// write queued so far. Without it the batch only wakes the I/O
	// threads, and the thread waits for nothing but a free slot of the
	// AIO write array (AIOWriteSlots, as postLRUWrites): its next step
	// waits until no more than that many writes are pending.
	s.storeOps(&d, func(op storeOp) { s.queueOn(&s.bg, t, op.occ) })
	q.asyncEnd = s.bg.added
	if s.wl.flushing51 && !s.wl.doublewrite {
		q.asyncEnd -= AIOWriteSlots
	}
	return n
}

// actorBusy says whether an actor's last step still has requests queued:
// its reads (and single-page writes) in q, or its LRU batches' writes in
// the asynchronous writers' queue.
func (s *Scheduler) actorBusy(q *reqQueue) bool {
	return q.pending() > 0 || s.bg.served < q.asyncEnd
}

// queueBackground queues the pool's background page writes and tier puts
// since the last look on their devices, from t.
func (s *Scheduler) queueBackground(t int64) {
	bg := s.pool.BackgroundMeter()
	prev := hw.VectorOf(&engine.Meter{Meter: s.lastBg})
	d := hw.VectorOf(&engine.Meter{Meter: bg})
	for i := range d {
		d[i] -= prev[i]
	}
	puts := bg.TierPuts - s.lastBg.TierPuts
	s.lastBg = bg
	s.storeOps(&d, func(op storeOp) { s.queueOn(&s.bg, t, op.occ) })
	if !s.tier {
		puts = 0
	}
	for range puts {
		start := max(t, s.net.free)
		s.net.free = start + s.netOcc
		s.net.busy += s.netOcc
		s.tierServe(start)
	}
}

// cleanerPass runs one pass of the page cleaner, due at t, as background
// work. It runs with no terminal current, so that a log sync it makes
// before its writes (CleanStep's sync) is neither priced on a terminal
// nor a yield; it is priced here, on the log device. If a terminal's sync is under
// way (its leader yields inside SyncStart), the pass may not sync, since
// waiting for that one would block: it writes only what is durable.
func (s *Scheduler) cleanerPass(t int64) {
	cur := s.cur
	s.cur = nil
	var m cache.Meter
	// A failed write leaves its page dirty for a later pass or an
	// eviction to write and report.
	_, _ = s.pool.CleanStep(&m, s.pool.Options().IOCapacityMax, s.syncLeader == nil)
	s.cur = cur
	s.pool.ChargeBackground(&m) // its writes are priced with the others'
	for range m.LogSyncs {
		// Its log sync holds the log device from t; nobody waits.
		lat := int64(s.machine.Log.SyncLatency)
		start := max(t, s.log.free)
		s.log.free = start + lat
		s.log.busy += lat
	}
}

// BeforeCall implements engine.Runtime: a yield point, where the
// previous call's work is priced.
func (s *Scheduler) BeforeCall(m *engine.Meter) {
	v := s.cur
	if v == nil {
		return
	}
	s.settle(v)
	if m != v.meter {
		// Counts already on a meter the scheduler did not watch are not
		// this terminal's to pay.
		v.meter, v.last, v.lastSort = m, hw.VectorOf(m), m.SortCounts
		v.lastLRU = [2]int64{m.LRUFlushBatches, m.LRUFlushPages}
	}
	s.switchFrom(v)
}

// Loading implements cache.FrameTimer.
func (s *Scheduler) Loading(fromTier, background bool) *int64 {
	v := s.cur
	if v == nil {
		return nil
	}
	c := new(int64)
	*c = pending(v)
	if background {
		v.bgLoads = append(v.bgLoads, load{c, fromTier})
	} else {
		v.loads = append(v.loads, load{c, fromTier})
	}
	return c
}

// Hit implements cache.FrameTimer.
func (s *Scheduler) Hit(ready *int64) {
	v := s.cur
	if v == nil {
		return
	}
	switch c := *ready; {
	case c >= 0:
		v.readyAt = max(v.readyAt, c)
	case c == pending(v):
		v.ownHits = append(v.ownHits, ready) // its own read-ahead, booked at the end of this interval
	default:
		v.hits = append(v.hits, ready) // another terminal's, still in its replay
	}
}

// Park implements lock.Parker: the terminal sleeps until the lock is
// granted (see the waiting rules) or virtual time reaches the deadline.
func (s *Scheduler) Park(w *lock.Wait) bool {
	v := s.cur
	if v == nil {
		return lock.RealParker{Clock: s}.Park(w)
	}
	v.wait, v.grantedBy, v.grantAt = w, nil, -1
	defer func() { v.wait, v.grantedBy, v.grantAt = nil, nil, -1 }()
	s.settle(v)
	// The wait begins now that the work before it is priced: move the
	// lock manager's start and deadline (set at the clock before) along.
	shift := s.epoch.Add(time.Duration(v.now)).Sub(w.Start)
	w.Start, w.Deadline = w.Start.Add(shift), w.Deadline.Add(shift)
	select {
	case <-w.Ready():
		// Granted inside another terminal's call while this terminal's
		// work was being priced: at the end of that call's interval.
		if v.grantedBy == nil {
			return true // cannot happen: every grant is claimed by its releaser
		}
		if v.grantAt < 0 { // the releaser's pricing is not done yet
			v.state, v.parkAt = parkedGrant, v.now
			s.switchFrom(v)
			return true
		}
		if v.grantAt > v.now {
			v.spent[TimeLock] += v.grantAt - v.now
			v.now = v.grantAt
		}
		return true
	default:
	}
	v.state, v.parkAt = parkedLock, v.now
	v.deadline = int64(w.Deadline.Sub(s.epoch))
	s.switchFrom(v)
	select {
	case <-w.Ready():
		return true
	default:
		return false
	}
}

// Wait implements redo.Waiter: a commit waits for the sync in progress.
func (s *Scheduler) Wait(done <-chan struct{}) {
	v := s.cur
	if v == nil {
		<-done
		return
	}
	if v.unsafe > 0 {
		// A page write waits for the sync another terminal leads, and
		// its terminal may hold page latches: it parks without pricing
		// (pricing yields), only the leader runs until the sync is done,
		// and then this terminal runs first (urgentNext).
		select {
		case <-done:
			return
		default:
		}
		v.state, v.logDone, v.parkAt = parkedLog, done, v.now
		s.urgent = v
		s.switchFrom(v)
		v.logDone = nil
		return
	}
	s.settle(v)
	select {
	case <-done:
		return // the sync completed while this terminal's work was priced
	default:
	}
	v.state, v.logDone, v.parkAt = parkedLog, done, v.now
	s.switchFrom(v)
	v.logDone = nil
}

// SyncStart implements redo.Waiter: it prices a log sync led by the
// running terminal: it holds the log device for the sync's latency, and
// other terminals run meanwhile.
func (s *Scheduler) SyncStart() {
	v := s.cur
	if v == nil {
		return
	}
	if v.unsafe == 0 {
		s.syncLeader = v
		defer func() { s.syncLeader = nil }()
		s.settle(v)
		s.step(v)
	}
	lat := int64(s.machine.Log.SyncLatency)
	start := max(v.now, s.log.free)
	s.log.free = start + lat
	s.log.busy += lat
	v.spent[TimeQueue] += start - v.now
	v.spent[TimeLog] += lat
	v.now = start + lat
	if v.unsafe == 0 {
		s.switchFrom(v)
	}
}

// PageWriteWait implements cache.Runtime: a page write of the running
// terminal may wait for the log between begin and end, possibly holding
// page latches. A sync it leads is priced at once without a yield (before
// the work of its interval that preceded it: a caveat), and a sync it
// waits for lets only the sync's leader run (Wait).
func (s *Scheduler) PageWriteWait(begin bool) {
	v := s.cur
	if v == nil {
		return
	}
	if begin {
		v.unsafe++
	} else {
		v.unsafe--
	}
}

// Now implements tpcc.Env for a terminal: a yield point.
func (v *vterm) Now() time.Time {
	v.s.settle(v)
	v.s.switchFrom(v)
	return v.s.epoch.Add(time.Duration(v.now))
}

// Sleep implements tpcc.Env: keying and think times pass in virtual time.
func (v *vterm) Sleep(d time.Duration) {
	v.s.settle(v)
	v.now += int64(d)
	v.s.switchFrom(v)
}

// Backoff implements tpcc.Backoffer: a retry's backoff passes in virtual
// time and counts as lock wait (the conflict that made the retry).
func (v *vterm) Backoff(d time.Duration) {
	v.s.settle(v)
	v.spent[TimeLock] += int64(d)
	v.now += int64(d)
	v.s.switchFrom(v)
}

// TxBegin implements tpcc.TxObserver.
func (v *vterm) TxBegin(tpcc.TxType) {
	v.txSpent, v.txBegin, v.txClient = v.spent, v.now, v.clientSpent
}

// TxEnd implements tpcc.TxObserver: the transaction's shares go to its
// type's if it was measured.
func (v *vterm) TxEnd(kind tpcc.TxType, measured bool, m *engine.Meter) {
	s := v.s
	if v.client != nil {
		v.charge(v.client.End(m))
	}
	s.settle(v)
	if measured {
		ct := &s.clientTypes[kind]
		ct.Server += v.clientSpent.Server - v.txClient.Server
		ct.Queue += v.clientSpent.Queue - v.txClient.Queue
		ct.Client += v.clientSpent.Client - v.txClient.Client
		ct.Wire += v.clientSpent.Wire - v.txClient.Wire
		tt := &s.types[kind]
		tt.Count++
		tt.Response += v.now - v.txBegin
		for k := range tt.Spent {
			tt.Spent[k] += v.spent[k] - v.txSpent[k]
		}
	}
	v.meter, v.last, v.lastSort, v.lastLRU = nil, hw.Vector{}, engine.SortCounts{}, [2]int64{}
}

// Types returns the measured response times' breakdown by type.
func (s *Scheduler) Types() [tpcc.NumTxTypes]TypeTime { return s.types }

// Busy returns how long each shared resource was held so far: the cores
// summed, the store device, the log device and the network.
func (s *Scheduler) Busy() (cores, store, log, net int64) {
	for _, u := range s.storeUse {
		store += u
	}
	return s.cpuBusy, store, s.log.busy, s.net.busy
}

// CheckpointWaits counted the sharp checkpoints that began before the last
// one's writes were done and made their transaction wait for them. The
// automatic checkpoints are fuzzy now and write nothing, and a
// transaction waits for log space only in the engine's log free check
// (its meter's LogFreeCheckWaits), so it is always zero.
func (s *Scheduler) CheckpointWaits() int64 { return s.checkpointWaits }

// PendingBackgroundWrites is how many background requests (page writes;
// doublewrite batches' writes and syncs, store syncs) the store device
// had not served when the terminals stopped.
func (s *Scheduler) PendingBackgroundWrites() int64 { return s.bg.pending() }

// CleanerSkips is how many page cleaner passes fell due while the store
// device still had background writes queued, and were skipped (InnoDB's
// page cleaner waits for its batch to end before the next).
func (s *Scheduler) CleanerSkips() int64 { return s.cleanerSkips }

// Stalls counts the times every remaining terminal waited for a log sync
// nobody led (see switchFrom): zero in a sound simulation.
func (s *Scheduler) Stalls() int64 { return s.stalls }
