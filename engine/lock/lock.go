package lock

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/enginelab/enginelab/cache"
)

// Lock errors. Either leaves the transaction to be rolled back by its
// caller; the lock manager has already dropped the failed request. Package
// engine exports the same values as engine.ErrDeadlock and
// engine.ErrLockTimeout.
var (
	// ErrDeadlock means the request would have closed a cycle of waiting
	// transactions; the requester is the victim.
	ErrDeadlock = errors.New("lock: deadlock: transaction chosen as victim")
	// ErrTimeout means the request waited longer than the lock
	// timeout.
	ErrTimeout = errors.New("lock: lock wait timeout")
)

// Counters count one caller's lock work. Like the project's meters they
// are plain integers owned by one goroutine, and they are live: a Parker
// sees the request and the wait already counted (the simulator prices them
// there). engine.Meter embeds Counters, which is why the fields carry the
// Lock prefix: a transaction's meter reads m.LockRequests.
type Counters struct {
	// LockRequests counts requests, granted at once or not.
	LockRequests int64
	// LockWaits counts requests that waited, and LockWaitNanos their
	// waits, on the manager's clock (virtual in simulated mode).
	LockWaits     int64
	LockWaitNanos int64
	// Deadlocks counts requests refused as deadlock victims, LockTimeouts
	// requests that timed out.
	Deadlocks    int64
	LockTimeouts int64
}

// Mode is a row lock's mode.
type Mode uint8

// Lock modes. Shared locks are compatible with each other; an exclusive
// lock with nothing.
const (
	Shared Mode = iota + 1
	Exclusive
)

func (m Mode) String() string {
	switch m {
	case Shared:
		return "S"
	case Exclusive:
		return "X"
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
}

func compatible(a, b Mode) bool { return a == Shared && b == Shared }

// Key names a locked row: its table's number and a 64-bit hash of its
// encoded primary key. A row that moves keeps its lock, since the key does
// not change. Hashing keeps a lock request free of allocations; two keys of
// one table whose hashes collide (odds about n²/2^65 for n locked rows)
// share a lock, which can only make a transaction wait, never miss a
// conflict.
type Key struct {
	Table uint32
	Hash  uint64
}

// RowKey returns the lock key of the row of table whose encoded primary
// key is key (FNV-1a).
func RowKey(table uint32, key []byte) Key {
	h := uint64(14695981039346656037)
	for _, c := range key {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return Key{Table: table, Hash: h}
}

// Wait is one waiting request, handed to the Parker.
type Wait struct {
	Tx   uint64
	Key  Key
	Mode Mode
	// Start is when the wait began and Deadline when it times out, on
	// the lock manager's clock. A Parker may move both forward by the
	// same amount before it waits: the simulator does, to the virtual
	// moment the wait really begins, once the work that led to it is
	// priced. Counters.LockWaitNanos counts from Start.
	Start    time.Time
	Deadline time.Time

	ready   chan struct{} // closed when the lock is granted
	granted bool          // guarded by the lock manager's mu
	owner   *Owner
}

// Owner is a transaction as the lock manager sees it: its id and the
// locks it holds, in order of first grant. A transaction (the engine's Tx)
// carries its own, so a grant and a release touch no per-transaction map.
// Guarded by the manager's mutex.
//
// An Owner whose locks are released (Release) may be copied and reused for
// another transaction with a new ID: the copy keeps the held-lock buffer,
// so the next transaction's grants allocate nothing. Never copy one that
// holds locks or has a request in flight.
type Owner struct {
	ID   uint64
	held []heldLock
}

// Cap returns how many held locks o's buffer holds without growing: a
// caller that recycles owners drops the ones that grew large. Call it only
// while o has no request in flight.
func (o *Owner) Cap() int { return cap(o.held) }

// heldLock names a held row and its lock state (which cannot be recycled
// while it has a holder).
type heldLock struct {
	key Key
	st  *lockState
}

// Ready is closed when the request is granted.
func (w *Wait) Ready() <-chan struct{} { return w.ready }

// Parker decides how a waiting lock request waits: real mode blocks the
// goroutine; the simulator parks the simulated transaction and resumes it
// when the lock is granted or virtual time passes the deadline. No page
// latch is held while a request is parked.
type Parker interface {
	// Park returns when w.Ready() is closed (it reports true) or when the
	// clock has passed w.Deadline (false). A request granted at the same
	// moment it timed out is granted.
	Park(w *Wait) bool
}

// RealParker waits on a real timer: real mode. Its Clock (nil:
// cache.RealClock) must advance with the wall clock, since the timer does;
// the simulator uses one on its own clock before its run starts, when
// nothing waits.
type RealParker struct{ Clock cache.Clock }

// Park implements Parker.
func (p RealParker) Park(w *Wait) bool {
	var clock cache.Clock = cache.RealClock{}
	if p.Clock != nil {
		clock = p.Clock
	}
	d := w.Deadline.Sub(clock.Now())
	if d <= 0 {
		select {
		case <-w.ready:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.ready:
		return true
	case <-t.C:
		return false
	}
}

// Handoff is what a Parker may do after a release granted a waiting
// request (the releaser's side of the hand-off): a Parker with a Handoff
// method has it called, outside the manager's mutex.
type Handoff interface{ Handoff() }

// Handoff yields the releaser's processor. A request granted on release
// (as InnoDB's lock_grant grants the next waiter) belongs to a goroutine
// that is parked: it holds the lock but runs only once scheduled, and
// Go's scheduler queues it behind the releaser, which goes on to its next
// transaction and may run a long while before it blocks. With more
// terminals than cores, every other request for that row then queues
// behind an owner that is not running, a convoy (one terminal on the
// warehouse row of one warehouse at four terminals on two cores: 0.72
// lock waits a Payment). Yielding runs the grantee next, as an operating
// system's wake-up preemption would run a woken thread (0.23 waits a
// Payment). The simulator's parker does not yield: its terminals run one
// at a time in virtual time.
func (RealParker) Handoff() { runtime.Gosched() }

type holder struct {
	tx   uint64
	mode Mode
}

// find returns the index of tx among the holders, or -1.
func (st *lockState) find(tx uint64) int {
	for i := range st.holders {
		if st.holders[i].tx == tx {
			return i
		}
	}
	return -1
}

// lockState is the lock table entry of one row: the granted locks and the
// queue of waiting requests, served first come first served.
type lockState struct {
	holders []holder // a row rarely has more than a few
	queue   []*Wait
}

// maxFreeStates bounds the recycled lock states: enough for the locks of
// many concurrent transactions, without hoarding the states of one huge
// transaction.
const maxFreeStates = 4096

// Manager grants strict two-phase row locks: a transaction keeps every
// lock until Release or ReleaseAll (at commit or rollback). It finds deadlocks with a
// wait-for graph when a request starts to wait, and times waits out on its
// Clock. Safe for concurrent use.
type Manager struct {
	clock   cache.Clock
	parker  Parker
	handoff Handoff // parker's, if it has one (nil: none)
	timeout time.Duration

	// mu guards the maps and free list below, every lockState in locks,
	// every Owner's held list and every Wait's granted flag. It is a leaf:
	// nothing else is locked under it (the Clock is read), and it is never
	// held while a request parks.
	mu      sync.Mutex
	locks   map[Key]*lockState
	waiting map[uint64]*Wait // the request each blocked transaction waits on
	// owners holds the owners of callers that name transactions by id
	// (Lock, ReleaseAll); a caller that keeps its own Owner (the engine's
	// Tx) uses LockAs and Release, and is not in this map.
	owners map[uint64]*Owner
	// Recycled lock states: a lock request makes no allocation once the
	// manager has warmed up.
	freeStates []*lockState
}

// NewManager returns a lock manager that waits through parker and
// times waits out after timeout on clock.
func NewManager(clock cache.Clock, parker Parker, timeout time.Duration) *Manager {
	h, _ := parker.(Handoff)
	return &Manager{
		clock: clock, parker: parker, handoff: h, timeout: timeout,
		locks:   make(map[Key]*lockState),
		waiting: make(map[uint64]*Wait),
		owners:  make(map[uint64]*Owner),
	}
}

// ownerLocked returns the owner for transaction id tx. REQUIRES: lm.mu.
func (lm *Manager) ownerLocked(tx uint64) *Owner {
	o := lm.owners[tx]
	if o == nil {
		o = &Owner{ID: tx}
		lm.owners[tx] = o
	}
	return o
}

// Lock is LockAs for a transaction named by its id.
func (lm *Manager) Lock(m *Counters, tx uint64, key Key, mode Mode) error {
	lm.mu.Lock()
	o := lm.ownerLocked(tx)
	lm.mu.Unlock()
	return lm.LockAs(m, o, key, mode)
}

// LockAs acquires key in mode for transaction o, waiting if it must. A
// transaction that holds the row in a mode at least as strong gets it at
// once; one that holds it shared and asks for exclusive upgrades (waiting
// for the other sharers). m is charged the request, any wait and its
// virtual or real duration, deadlocks and timeouts.
func (lm *Manager) LockAs(m *Counters, o *Owner, key Key, mode Mode) error {
	tx := o.ID
	if m != nil {
		m.LockRequests++
	}
	lm.mu.Lock()
	st := lm.stateLocked(key)
	if i := st.find(tx); i >= 0 && (st.holders[i].mode == Exclusive || mode == Shared) {
		lm.mu.Unlock()
		return nil
	}
	if len(st.queue) == 0 && lm.grantableLocked(st, tx, mode) {
		lm.grantLocked(st, o, key, mode)
		lm.mu.Unlock()
		return nil
	}
	w := &Wait{Tx: tx, Key: key, Mode: mode, ready: make(chan struct{}), owner: o}
	st.queue = append(st.queue, w)
	lm.waiting[tx] = w
	if lm.closesCycleLocked(tx) {
		lm.dropWaitLocked(st, w)
		lm.mu.Unlock()
		if m != nil {
			m.Deadlocks++
		}
		return fmt.Errorf("%w: transaction %d asking %s on a row of table #%d", ErrDeadlock, tx, mode, key.Table)
	}
	w.Start = lm.clock.Now()
	w.Deadline = w.Start.Add(lm.timeout)
	lm.mu.Unlock()

	if m != nil {
		m.LockWaits++
	}
	lm.parker.Park(w)

	lm.mu.Lock()
	granted := w.granted
	if !granted {
		lm.dropWaitLocked(st, w)
	}
	lm.mu.Unlock()
	if m != nil {
		m.LockWaitNanos += int64(lm.clock.Now().Sub(w.Start))
	}
	if !granted {
		if m != nil {
			m.LockTimeouts++
		}
		return fmt.Errorf("%w: transaction %d waited %v for %s on a row of table #%d", ErrTimeout, tx, lm.timeout, mode, key.Table)
	}
	return nil
}

// stateLocked returns key's lock state, made (from the free list when it
// can) if key has none. lm.mu is held.
func (lm *Manager) stateLocked(key Key) *lockState {
	st := lm.locks[key]
	if st == nil {
		if n := len(lm.freeStates); n > 0 {
			st = lm.freeStates[n-1]
			lm.freeStates = lm.freeStates[:n-1]
		} else {
			st = &lockState{}
		}
		lm.locks[key] = st
	}
	return st
}

// TryLockAs takes key in mode for o only if it can be granted at once
// (no holder in a conflicting mode, no request queued), as a conditional
// lock never waits, and reports whether o holds it. It counts nothing.
func (lm *Manager) TryLockAs(o *Owner, key Key, mode Mode) bool {
	lm.mu.Lock()
	defer lm.mu.Unlock()
	st := lm.stateLocked(key)
	if i := st.find(o.ID); i >= 0 && (st.holders[i].mode == Exclusive || mode == Shared) {
		return true
	}
	if len(st.queue) == 0 && lm.grantableLocked(st, o.ID, mode) {
		lm.grantLocked(st, o, key, mode)
		return true
	}
	return false
}

// grantableLocked reports whether tx may hold key in mode next to the
// current holders. REQUIRES: lm.mu held.
func (lm *Manager) grantableLocked(st *lockState, tx uint64, mode Mode) bool {
	for _, h := range st.holders {
		if h.tx != tx && !compatible(h.mode, mode) {
			return false
		}
	}
	return true
}

// grantLocked records the grant. REQUIRES: lm.mu held.
func (lm *Manager) grantLocked(st *lockState, o *Owner, key Key, mode Mode) {
	i := st.find(o.ID)
	if i < 0 {
		o.held = append(o.held, heldLock{key: key, st: st})
		st.holders = append(st.holders, holder{o.ID, mode})
	} else if st.holders[i].mode < mode {
		st.holders[i].mode = mode
	}
}

// dropWaitLocked removes a request that will not be granted (timed out,
// or a deadlock victim) and lets the requests behind it go if they can.
// REQUIRES: lm.mu held.
func (lm *Manager) dropWaitLocked(st *lockState, w *Wait) {
	for i, q := range st.queue {
		if q == w {
			st.queue = append(st.queue[:i], st.queue[i+1:]...)
			break
		}
	}
	if lm.waiting[w.Tx] == w {
		delete(lm.waiting, w.Tx)
	}
	lm.wakeLocked(st, w.Key)
}

// wakeLocked grants queued requests in order while they are compatible
// with the holders; the first that is not stops the queue (first come,
// first served, so a stream of sharers cannot starve a writer).
// It reports whether it granted any. REQUIRES: lm.mu held.
func (lm *Manager) wakeLocked(st *lockState, key Key) (granted bool) {
	for len(st.queue) > 0 {
		w := st.queue[0]
		if !lm.grantableLocked(st, w.Tx, w.Mode) {
			break
		}
		st.queue = st.queue[1:]
		lm.grantLocked(st, w.owner, key, w.Mode)
		w.granted = true
		granted = true
		delete(lm.waiting, w.Tx)
		close(w.ready)
	}
	if len(st.holders) == 0 && len(st.queue) == 0 {
		delete(lm.locks, key)
		if len(lm.freeStates) < maxFreeStates {
			st.queue = st.queue[:0]
			lm.freeStates = append(lm.freeStates, st)
		}
	}
	return granted
}

// blockersLocked lists the transactions w waits for: holders it conflicts
// with, and requests ahead of it in the queue that it conflicts with.
// REQUIRES: lm.mu held.
func (lm *Manager) blockersLocked(w *Wait, visit func(uint64) bool) bool {
	st := lm.locks[w.Key]
	for _, h := range st.holders {
		if h.tx != w.Tx && !compatible(h.mode, w.Mode) && visit(h.tx) {
			return true
		}
	}
	for _, q := range st.queue {
		if q == w {
			break
		}
		if q.Tx != w.Tx && !(compatible(q.Mode, w.Mode)) && visit(q.Tx) {
			return true
		}
	}
	return false
}

// closesCycleLocked reports whether tx, which just started to wait, now
// waits (through the wait-for graph) for itself. REQUIRES: lm.mu held.
func (lm *Manager) closesCycleLocked(tx uint64) bool {
	seen := map[uint64]bool{}
	var reaches func(t uint64) bool
	reaches = func(t uint64) bool {
		if t == tx {
			return true
		}
		if seen[t] {
			return false
		}
		seen[t] = true
		w := lm.waiting[t]
		return w != nil && lm.blockersLocked(w, reaches)
	}
	return lm.blockersLocked(lm.waiting[tx], reaches)
}

// ReleaseAll is Release for a transaction named by its id.
func (lm *Manager) ReleaseAll(tx uint64) {
	lm.mu.Lock()
	o := lm.owners[tx]
	delete(lm.owners, tx)
	lm.mu.Unlock()
	if o != nil {
		lm.Release(o)
	}
}

// Release releases every lock o holds (commit or rollback) and grants what
// it can to the waiters.
func (lm *Manager) Release(o *Owner) {
	lm.mu.Lock()
	granted := false
	for _, h := range o.held {
		if i := h.st.find(o.ID); i >= 0 {
			h.st.holders = append(h.st.holders[:i], h.st.holders[i+1:]...)
		}
		if lm.wakeLocked(h.st, h.key) {
			granted = true
		}
	}
	clear(o.held)
	o.held = o.held[:0]
	lm.mu.Unlock()
	if granted && lm.handoff != nil {
		lm.handoff.Handoff()
	}
}

// Held returns the number of rows tx holds locks on.
func (lm *Manager) Held(tx uint64) int {
	lm.mu.Lock()
	defer lm.mu.Unlock()
	if o := lm.owners[tx]; o != nil {
		return len(o.held)
	}
	return 0
}

// HeldBy returns the number of rows o holds locks on.
func (lm *Manager) HeldBy(o *Owner) int {
	lm.mu.Lock()
	defer lm.mu.Unlock()
	return len(o.held)
}
