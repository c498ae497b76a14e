package engine

import (
	"time"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/engine/lock"
)

// Runtime is the world a database runs in: its time and every way it
// waits or yields. It is the one seam between the engine and the
// simulator: real mode is RealRuntime; the simulator's scheduler
// implements it on virtual time, so that terminals run one at a time and
// every wait is priced rather than slept.
//
// It is composed of what each lower layer declares for itself, so that
// none of them imports anything above it:
//
//   - cache.Runtime: Now (the pool's midpoint policy and the lock
//     manager's timeouts), the frames' virtual ready times (Loading,
//     Hit; see cache.FrameTimer), and PageWriteWait, which brackets a
//     page write's wait for the log's durability (its writer may hold
//     page latches);
//   - redo.Waiter: Wait, how a commit waits for a group sync another
//     commit leads, and SyncStart, called by the leader, holding no lock,
//     at the start of every log sync;
//   - lock.Parker: Park, how a row lock request waits;
//   - BeforeCall, the engine's own: every transaction operation (Get,
//     Insert, Update, Delete, Scan, Count, Commit, Rollback) calls it just
//     before it runs, with the transaction's meter, holding no latch or
//     engine mutex. The simulator prices the work done since the last
//     call there and may run other terminals first. A cursor's Next is
//     part of its Scan's call.
//
// The Runtime also decides who runs the page cleaner: with RealRuntime
// the pool runs it on a goroutine of its own (cache.CleanerGoroutine);
// with any other Runtime nobody does unless the Runtime's owner calls
// DB.Pool().CleanStep (the simulator's scheduler does, as a background
// actor at virtual-time intervals; tests do, step by step).
//
// The methods are called from the database's goroutines, concurrently in
// real mode; Now, Loading and Hit may be called under the pool's or the
// lock manager's mutex and must not wait. A Runtime is fixed for the life
// of the DB it opened.
type Runtime interface {
	cache.Runtime
	redo.Waiter
	lock.Parker
	BeforeCall(m *Meter)
}

// RealRuntime is real mode: the wall clock (cache.RealClock), blocking
// waits (redo.RealWaiter, lock.RealParker on the wall clock), nothing at
// a call boundary or a sync's start, and no frame ready times. Its Loading
// returns nil, so the pool keeps no cell and a hit does no timing work:
// real mode pays nothing for the simulator's seam but a call per miss.
type RealRuntime struct{}

var _ Runtime = RealRuntime{}

// Now implements cache.Clock: the wall clock.
func (RealRuntime) Now() time.Time { return time.Now() }

// Loading implements cache.FrameTimer: a page read in is ready at once.
func (RealRuntime) Loading(fromTier, background bool) *int64 { return nil }

// Hit implements cache.FrameTimer; the pool never calls it, since Loading
// gives no cell.
func (RealRuntime) Hit(ready *int64) {}

// PageWriteWait implements cache.Runtime; the pool never calls it, since
// real mode gives the pool no Runtime.
func (RealRuntime) PageWriteWait(begin bool) {}

// Wait implements redo.Waiter: block until the sync ends.
func (RealRuntime) Wait(done <-chan struct{}) { redo.RealWaiter{}.Wait(done) }

// SyncStart implements redo.Waiter: nothing to do.
func (RealRuntime) SyncStart() {}

// Park implements lock.Parker: block on a wall-clock timer.
func (RealRuntime) Park(w *lock.Wait) bool { return lock.RealParker{}.Park(w) }

// Handoff implements lock.Handoff: real mode yields to a grantee.
func (RealRuntime) Handoff() { lock.RealParker{}.Handoff() }

// BeforeCall does nothing: real operations need no pricing.
func (RealRuntime) BeforeCall(m *Meter) {}
