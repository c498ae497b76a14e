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
	granted bool          // guarded by the shard of Key
	owner   *Owner
}

// Owner is a transaction as the lock manager sees it: its id and the
// locks it holds, in order of first grant. A transaction (the engine's Tx)
// carries its own, so a grant and a release touch no per-transaction map.
// Its held list grows under the shard of the row granted (by the
// releaser whose release granted a waiting request, or by the owner);
// Release reads it on the owner's goroutine, with no request in flight.
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
// queue of waiting requests, served first come first served. Guarded by
// its shard's mu.
type lockState struct {
	key     Key
	next    *lockState // the next state in its shard's bucket
	holders []holder   // a row rarely has more than a few
	queue   []*Wait
}

// maxFreeStates bounds the recycled lock states of one shard: with
// lockShards shards, enough for the locks of many concurrent
// transactions, without hoarding the states of one huge transaction.
const maxFreeStates = 64

// lockShards is the number of shards of the lock table (a power of two).
// InnoDB 8.0.21 split lock_sys's one mutex the same way (lock_sys->latches:
// 512 page shards and 512 table shards, a row's lock found in the shard of
// its page); here a row's shard is chosen by its key's hash, since a lock
// names a row, not a page.
const (
	lockShardBits = 6
	lockShards    = 1 << lockShardBits
)

// shard is one part of the lock table: the lock states of the keys that
// hash to it, and its recycled states. Its mu guards them, every
// lockState in its table and the granted flag of every Wait queued there.
// It is padded to cache lines of its own, so that two terminals locking
// rows of different shards write no line in common.
//
// The table is a hash table chained through lockState.next, as InnoDB's
// lock_sys->rec_hash chains lock_t through hash: buckets is a power of two
// long, indexed by bits of the same mixed hash that chose the shard, and
// doubles when the shard holds more states than it has buckets. Not a Go
// map: a map's header, a small object, sits beside other shards' headers
// in memory, so two cores inserting and deleting in two shards wrote one
// cache line (the header's count), and hashing a Key again cost what the
// row's hash had already paid for. The bucket arrays are 512 bytes or
// more, so none shares a line with another's.
type shard struct {
	mu         sync.Mutex
	buckets    []*lockState
	n          int // states in buckets
	freeStates []*lockState
	_          [128 - 8 - 24 - 8 - 24]byte
}

// minBuckets is a shard's initial table size: 512 bytes of pointers.
const minBuckets = 64

// mix is the hash of key that shardOf and the shard's table share: its top
// lockShardBits bits choose the shard, the bits below them the bucket.
func mix(key Key) uint64 {
	return (key.Hash ^ uint64(key.Table)<<32) * 0x9e3779b97f4a7c15
}

// bucket returns the index of h's bucket in a table of n buckets (a power
// of two).
func bucket(h uint64, n int) int {
	return int(h<<lockShardBits>>32) & (n - 1)
}

// lookupLocked returns key's lock state, or nil. REQUIRES: sh.mu held,
// key in sh.
func (sh *shard) lookupLocked(key Key) *lockState {
	if len(sh.buckets) == 0 {
		return nil
	}
	for st := sh.buckets[bucket(mix(key), len(sh.buckets))]; st != nil; st = st.next {
		if st.key == key {
			return st
		}
	}
	return nil
}

// insertLocked adds st, whose key has no state in sh, to the table.
// REQUIRES: sh.mu held.
func (sh *shard) insertLocked(st *lockState) {
	if sh.n >= len(sh.buckets) {
		sh.growLocked()
	}
	i := bucket(mix(st.key), len(sh.buckets))
	st.next = sh.buckets[i]
	sh.buckets[i] = st
	sh.n++
}

// growLocked doubles the table (or makes its first) and rehashes it.
// REQUIRES: sh.mu held.
func (sh *shard) growLocked() {
	nb := make([]*lockState, max(minBuckets, 2*len(sh.buckets)))
	for _, st := range sh.buckets {
		for st != nil {
			next := st.next
			i := bucket(mix(st.key), len(nb))
			st.next = nb[i]
			nb[i] = st
			st = next
		}
	}
	sh.buckets = nb
}

// removeLocked takes st out of the table. REQUIRES: sh.mu held, st in it.
func (sh *shard) removeLocked(st *lockState) {
	for p := &sh.buckets[bucket(mix(st.key), len(sh.buckets))]; *p != nil; p = &(*p).next {
		if *p == st {
			*p = st.next
			st.next = nil
			sh.n--
			return
		}
	}
	panic("lock: a lock state missing from its shard's table")
}

// eachLocked calls f for every lock state of sh. REQUIRES: sh.mu held.
func (sh *shard) eachLocked(f func(*lockState)) {
	for _, st := range sh.buckets {
		for ; st != nil; st = st.next {
			f(st)
		}
	}
}

// Manager grants strict two-phase row locks: a transaction keeps every
// lock until Release or ReleaseAll (at commit or rollback). It finds deadlocks with a
// wait-for graph when a request starts to wait, and times waits out on its
// Clock. Safe for concurrent use.
//
// Latching, as InnoDB 8.0.21's lock_sys: a request, a grant and a
// release of one row latch only that row's shard; what spans shards (the
// walk of the wait-for graph when a request starts to wait, and the
// diagnostics Held and HeldBy) latches every shard, in shard order, as
// InnoDB takes its global latch exclusively for the same work. A release
// latches its rows' shards one at a time, never two at once, so no
// order between shards is needed beyond the ascending one of latchAll.
type Manager struct {
	clock   cache.Clock
	parker  Parker
	handoff Handoff // parker's, if it has one (nil: none)
	timeout time.Duration

	shards [lockShards]shard

	// waitMu guards waiting. It is a leaf, taken only while holding a
	// shard (a request starts or stops waiting, a grant ends a wait),
	// for a map operation; the walk of the wait-for graph, which holds
	// every shard, reads waiting without it, since every change to it is
	// made holding some shard.
	waitMu  sync.Mutex
	waiting map[uint64]*Wait // the request each blocked transaction waits on

	// ownersMu guards owners: the owners of callers that name
	// transactions by id (Lock, ReleaseAll); a caller that keeps its own
	// Owner (the engine's Tx) uses LockAs and Release, and is not in
	// this map. A leaf, never held with a shard.
	ownersMu sync.Mutex
	owners   map[uint64]*Owner
}

// NewManager returns a lock manager that waits through parker and
// times waits out after timeout on clock.
func NewManager(clock cache.Clock, parker Parker, timeout time.Duration) *Manager {
	h, _ := parker.(Handoff)
	lm := &Manager{
		clock: clock, parker: parker, handoff: h, timeout: timeout,
		waiting: make(map[uint64]*Wait),
		owners:  make(map[uint64]*Owner),
	}
	return lm
}

// shardOf returns the shard of key: the top bits of a multiplicative
// hash of the key's hash and its table, so that the rows of one table
// spread over every shard.
func (lm *Manager) shardOf(key Key) *shard {
	return &lm.shards[mix(key)>>(64-lockShardBits)]
}

// latchAll latches every shard, in order: nothing in the lock table,
// the waiting map included, changes until unlatchAll.
func (lm *Manager) latchAll() {
	for i := range lm.shards {
		lm.shards[i].mu.Lock()
	}
}

// unlatchAll undoes latchAll.
func (lm *Manager) unlatchAll() {
	for i := len(lm.shards) - 1; i >= 0; i-- {
		lm.shards[i].mu.Unlock()
	}
}

// owner returns the owner for transaction id tx.
func (lm *Manager) owner(tx uint64) *Owner {
	lm.ownersMu.Lock()
	defer lm.ownersMu.Unlock()
	o := lm.owners[tx]
	if o == nil {
		o = &Owner{ID: tx}
		lm.owners[tx] = o
	}
	return o
}

// Lock is LockAs for a transaction named by its id.
func (lm *Manager) Lock(m *Counters, tx uint64, key Key, mode Mode) error {
	return lm.LockAs(m, lm.owner(tx), key, mode)
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
	sh := lm.shardOf(key)
	sh.mu.Lock()
	st := sh.stateLocked(key)
	if i := st.find(tx); i >= 0 && (st.holders[i].mode == Exclusive || mode == Shared) {
		sh.mu.Unlock()
		return nil
	}
	if len(st.queue) == 0 && grantable(st, tx, mode) {
		grantLocked(st, o, key, mode)
		sh.mu.Unlock()
		return nil
	}
	w := &Wait{Tx: tx, Key: key, Mode: mode, ready: make(chan struct{}), owner: o}
	st.queue = append(st.queue, w)
	lm.waitMu.Lock()
	lm.waiting[tx] = w
	lm.waitMu.Unlock()
	sh.mu.Unlock()

	// The walk of the wait-for graph sees every shard at one instant. The
	// request may have been granted since it queued (a holder released
	// the row): then it closes no cycle. Walks run one at a time, and a
	// victim leaves the graph before the next walk, so of two requests
	// that close one cycle between them only the one walking second is
	// refused, as when it had queued second.
	lm.latchAll()
	if !w.granted && lm.closesCycleLocked(tx) {
		lm.dropWaitLocked(sh, st, w)
		lm.unlatchAll()
		if m != nil {
			m.Deadlocks++
		}
		return fmt.Errorf("%w: transaction %d asking %s on a row of table #%d", ErrDeadlock, tx, mode, key.Table)
	}
	w.Start = lm.clock.Now()
	w.Deadline = w.Start.Add(lm.timeout)
	lm.unlatchAll()

	if m != nil {
		m.LockWaits++
	}
	lm.parker.Park(w)

	sh.mu.Lock()
	granted := w.granted
	if !granted {
		lm.dropWaitLocked(sh, st, w)
	}
	sh.mu.Unlock()
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
// can) if key has none. REQUIRES: sh.mu held, key in sh.
func (sh *shard) stateLocked(key Key) *lockState {
	st := sh.lookupLocked(key)
	if st == nil {
		if n := len(sh.freeStates); n > 0 {
			st = sh.freeStates[n-1]
			sh.freeStates = sh.freeStates[:n-1]
		} else {
			st = &lockState{}
		}
		st.key = key
		sh.insertLocked(st)
	}
	return st
}

// TryLockAs takes key in mode for o only if it can be granted at once
// (no holder in a conflicting mode, no request queued), as a conditional
// lock never waits, and reports whether o holds it. It counts nothing.
func (lm *Manager) TryLockAs(o *Owner, key Key, mode Mode) bool {
	sh := lm.shardOf(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	st := sh.stateLocked(key)
	if i := st.find(o.ID); i >= 0 && (st.holders[i].mode == Exclusive || mode == Shared) {
		return true
	}
	if len(st.queue) == 0 && grantable(st, o.ID, mode) {
		grantLocked(st, o, key, mode)
		return true
	}
	return false
}

// grantable reports whether tx may hold key in mode next to the current
// holders. REQUIRES: the key's shard latched.
func grantable(st *lockState, tx uint64, mode Mode) bool {
	for _, h := range st.holders {
		if h.tx != tx && !compatible(h.mode, mode) {
			return false
		}
	}
	return true
}

// grantLocked records the grant. REQUIRES: the key's shard latched.
func grantLocked(st *lockState, o *Owner, key Key, mode Mode) {
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
// REQUIRES: sh.mu held, key in sh.
func (lm *Manager) dropWaitLocked(sh *shard, st *lockState, w *Wait) {
	for i, q := range st.queue {
		if q == w {
			st.queue = append(st.queue[:i], st.queue[i+1:]...)
			break
		}
	}
	lm.waitingDelete(w)
	lm.wakeLocked(sh, st, w.Key)
}

// waitingDelete removes w from the waiting map if it is there.
// REQUIRES: a shard latched (see Manager.waitMu).
func (lm *Manager) waitingDelete(w *Wait) {
	lm.waitMu.Lock()
	if lm.waiting[w.Tx] == w {
		delete(lm.waiting, w.Tx)
	}
	lm.waitMu.Unlock()
}

// wakeLocked grants queued requests in order while they are compatible
// with the holders; the first that is not stops the queue (first come,
// first served, so a stream of sharers cannot starve a writer).
// It reports whether it granted any. REQUIRES: sh.mu held, key in sh.
func (lm *Manager) wakeLocked(sh *shard, st *lockState, key Key) (granted bool) {
	for len(st.queue) > 0 {
		w := st.queue[0]
		if !grantable(st, w.Tx, w.Mode) {
			break
		}
		st.queue = st.queue[1:]
		grantLocked(st, w.owner, key, w.Mode)
		w.granted = true
		granted = true
		lm.waitingDelete(w)
		close(w.ready)
	}
	if len(st.holders) == 0 && len(st.queue) == 0 {
		sh.removeLocked(st)
		if len(sh.freeStates) < maxFreeStates {
			st.queue = st.queue[:0]
			sh.freeStates = append(sh.freeStates, st)
		}
	}
	return granted
}

// blockersLocked lists the transactions w waits for: holders it conflicts
// with, and requests ahead of it in the queue that it conflicts with.
// REQUIRES: every shard latched (latchAll).
func (lm *Manager) blockersLocked(w *Wait, visit func(uint64) bool) bool {
	st := lm.shardOf(w.Key).lookupLocked(w.Key)
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
// waits (through the wait-for graph) for itself. It reads waiting without
// waitMu: every change to it is made holding a shard. REQUIRES: every
// shard latched (latchAll), tx waiting.
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
	lm.ownersMu.Lock()
	o := lm.owners[tx]
	delete(lm.owners, tx)
	lm.ownersMu.Unlock()
	if o != nil {
		lm.Release(o)
	}
}

// Release releases every lock o holds (commit or rollback) and grants what
// it can to the waiters. It latches the shard of each held row in turn,
// keeping it across consecutive rows of one shard.
func (lm *Manager) Release(o *Owner) {
	granted := false
	var sh *shard
	for _, h := range o.held {
		if s := lm.shardOf(h.key); s != sh {
			if sh != nil {
				sh.mu.Unlock()
			}
			sh = s
			sh.mu.Lock()
		}
		if i := h.st.find(o.ID); i >= 0 {
			h.st.holders = append(h.st.holders[:i], h.st.holders[i+1:]...)
		}
		if lm.wakeLocked(sh, h.st, h.key) {
			granted = true
		}
	}
	if sh != nil {
		sh.mu.Unlock()
	}
	clear(o.held)
	o.held = o.held[:0]
	if granted && lm.handoff != nil {
		lm.handoff.Handoff()
	}
}

// Held returns the number of rows tx holds locks on.
func (lm *Manager) Held(tx uint64) int {
	lm.ownersMu.Lock()
	o := lm.owners[tx]
	lm.ownersMu.Unlock()
	if o == nil {
		return 0
	}
	return lm.HeldBy(o)
}

// HeldBy returns the number of rows o holds locks on. A grant to o
// appends to its list under the shard of the row granted, so this
// latches every shard.
func (lm *Manager) HeldBy(o *Owner) int {
	lm.latchAll()
	defer lm.unlatchAll()
	return len(o.held)
}
