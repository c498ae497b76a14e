package engine

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/enginelab/enginelab/cache"
)

// Lock errors. Either leaves the transaction to be rolled back by its
// caller; the lock manager has already dropped the failed request.
var (
	// ErrDeadlock means the request would have closed a cycle of waiting
	// transactions; the requester is the victim.
	ErrDeadlock = errors.New("engine: deadlock: transaction chosen as victim")
	// ErrLockTimeout means the request waited longer than the lock
	// timeout.
	ErrLockTimeout = errors.New("engine: lock wait timeout")
)

// LockMode is a row lock's mode.
type LockMode uint8

// Lock modes. Shared locks are compatible with each other; an exclusive
// lock with nothing.
const (
	Shared LockMode = iota + 1
	Exclusive
)

func (m LockMode) String() string {
	switch m {
	case Shared:
		return "S"
	case Exclusive:
		return "X"
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
}

func compatible(a, b LockMode) bool { return a == Shared && b == Shared }

// LockKey names a locked row: its table's number and a 64-bit hash of its
// encoded primary key. A row that moves keeps its lock, since the key does
// not change. Hashing keeps a lock request free of allocations; two keys of
// one table whose hashes collide (odds about n²/2^65 for n locked rows)
// share a lock, which can only make a transaction wait, never miss a
// conflict.
type LockKey struct {
	Table uint32
	Hash  uint64
}

// RowKey returns the lock key of the row of table whose encoded primary
// key is key (FNV-1a).
func RowKey(table uint32, key []byte) LockKey {
	h := uint64(14695981039346656037)
	for _, c := range key {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return LockKey{Table: table, Hash: h}
}

// LockWait is one waiting request, handed to the Parker.
type LockWait struct {
	Tx   uint64
	Key  LockKey
	Mode LockMode
	// Start is when the wait began and Deadline when it times out, on
	// the lock manager's clock. A Parker may move both forward by the
	// same amount before it waits: the simulator does, to the virtual
	// moment the wait really begins, once the work that led to it is
	// priced. LockWaitNanos counts from Start.
	Start    time.Time
	Deadline time.Time

	ready   chan struct{} // closed when the lock is granted
	granted bool          // guarded by the lock manager's mu
	owner   *LockOwner
}

// LockOwner is a transaction as the lock manager sees it: its id and the
// locks it holds, in order of first grant. A Tx carries its own, so a
// grant and a release touch no per-transaction map. Guarded by the
// manager's mutex.
type LockOwner struct {
	ID   uint64
	held []heldLock
}

// heldLock names a held row and its lock state (which cannot be recycled
// while it has a holder).
type heldLock struct {
	key LockKey
	st  *lockState
}

// Ready is closed when the request is granted.
func (w *LockWait) Ready() <-chan struct{} { return w.ready }

// Parker decides how a waiting lock request waits: real mode blocks the
// goroutine; the simulator parks the simulated transaction and resumes it
// when the lock is granted or virtual time passes the deadline. No page
// latch is held while a request is parked.
type Parker interface {
	// Park returns when w.Ready() is closed (it reports true) or when the
	// clock has passed w.Deadline (false). A request granted at the same
	// moment it timed out is granted.
	Park(w *LockWait) bool
}

// BlockingParker waits on a real timer: real mode. Its clock must be the
// wall clock, since the timer is.
type BlockingParker struct{ Clock cache.Clock }

// Park implements Parker.
func (p BlockingParker) Park(w *LockWait) bool {
	d := w.Deadline.Sub(p.Clock.Now())
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

type holder struct {
	tx   uint64
	mode LockMode
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
	queue   []*LockWait
}

// maxFreeStates bounds the recycled lock states: enough for the locks of
// many concurrent transactions, without hoarding the states of one huge
// transaction.
const maxFreeStates = 4096

// LockManager grants strict two-phase row locks: a transaction keeps every
// lock until ReleaseAll (at commit or rollback). It finds deadlocks with a
// wait-for graph when a request starts to wait, and times waits out on its
// Clock. Safe for concurrent use.
type LockManager struct {
	clock   cache.Clock
	parker  Parker
	timeout time.Duration

	mu      sync.Mutex
	locks   map[LockKey]*lockState
	waiting map[uint64]*LockWait // the request each blocked transaction waits on
	// owners holds the owners of callers that name transactions by id
	// (Lock, ReleaseAll); a Tx brings its own (LockAs, Release).
	owners map[uint64]*LockOwner
	// Recycled lock states: a lock request makes no allocation once the
	// manager has warmed up.
	freeStates []*lockState
}

// NewLockManager returns a lock manager that waits through parker and
// times waits out after timeout on clock.
func NewLockManager(clock cache.Clock, parker Parker, timeout time.Duration) *LockManager {
	return &LockManager{
		clock: clock, parker: parker, timeout: timeout,
		locks:   make(map[LockKey]*lockState),
		waiting: make(map[uint64]*LockWait),
		owners:  make(map[uint64]*LockOwner),
	}
}

// ownerLocked returns the owner for transaction id tx. REQUIRES: lm.mu.
func (lm *LockManager) ownerLocked(tx uint64) *LockOwner {
	o := lm.owners[tx]
	if o == nil {
		o = &LockOwner{ID: tx}
		lm.owners[tx] = o
	}
	return o
}

// Lock is LockAs for a transaction named by its id.
func (lm *LockManager) Lock(m *Meter, tx uint64, key LockKey, mode LockMode) error {
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
func (lm *LockManager) LockAs(m *Meter, o *LockOwner, key LockKey, mode LockMode) error {
	tx := o.ID
	if m != nil {
		m.LockRequests++
	}
	lm.mu.Lock()
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
	if i := st.find(tx); i >= 0 && (st.holders[i].mode == Exclusive || mode == Shared) {
		lm.mu.Unlock()
		return nil
	}
	if len(st.queue) == 0 && lm.grantableLocked(st, tx, mode) {
		lm.grantLocked(st, o, key, mode)
		lm.mu.Unlock()
		return nil
	}
	w := &LockWait{Tx: tx, Key: key, Mode: mode, ready: make(chan struct{}), owner: o}
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
		return fmt.Errorf("%w: transaction %d waited %v for %s on a row of table #%d", ErrLockTimeout, tx, lm.timeout, mode, key.Table)
	}
	return nil
}

// grantableLocked reports whether tx may hold key in mode next to the
// current holders. REQUIRES: lm.mu held.
func (lm *LockManager) grantableLocked(st *lockState, tx uint64, mode LockMode) bool {
	for _, h := range st.holders {
		if h.tx != tx && !compatible(h.mode, mode) {
			return false
		}
	}
	return true
}

// grantLocked records the grant. REQUIRES: lm.mu held.
func (lm *LockManager) grantLocked(st *lockState, o *LockOwner, key LockKey, mode LockMode) {
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
func (lm *LockManager) dropWaitLocked(st *lockState, w *LockWait) {
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
// REQUIRES: lm.mu held.
func (lm *LockManager) wakeLocked(st *lockState, key LockKey) {
	for len(st.queue) > 0 {
		w := st.queue[0]
		if !lm.grantableLocked(st, w.Tx, w.Mode) {
			break
		}
		st.queue = st.queue[1:]
		lm.grantLocked(st, w.owner, key, w.Mode)
		w.granted = true
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
}

// blockersLocked lists the transactions w waits for: holders it conflicts
// with, and requests ahead of it in the queue that it conflicts with.
// REQUIRES: lm.mu held.
func (lm *LockManager) blockersLocked(w *LockWait, visit func(uint64) bool) bool {
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
func (lm *LockManager) closesCycleLocked(tx uint64) bool {
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
func (lm *LockManager) ReleaseAll(tx uint64) {
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
func (lm *LockManager) Release(o *LockOwner) {
	lm.mu.Lock()
	defer lm.mu.Unlock()
	for _, h := range o.held {
		if i := h.st.find(o.ID); i >= 0 {
			h.st.holders = append(h.st.holders[:i], h.st.holders[i+1:]...)
		}
		lm.wakeLocked(h.st, h.key)
	}
	clear(o.held)
	o.held = o.held[:0]
}

// Held returns the number of rows tx holds locks on.
func (lm *LockManager) Held(tx uint64) int {
	lm.mu.Lock()
	defer lm.mu.Unlock()
	if o := lm.owners[tx]; o != nil {
		return len(o.held)
	}
	return 0
}

// HeldBy returns the number of rows o holds locks on.
func (lm *LockManager) HeldBy(o *LockOwner) int {
	lm.mu.Lock()
	defer lm.mu.Unlock()
	return len(o.held)
}
