// Package lock is the engine's row lock manager: strict two-phase locking
// of rows in shared and exclusive mode, with first-come-first-served
// queues, deadlock detection on a wait-for graph, and lock-wait timeouts
// read from a pluggable clock. It knows nothing of pages, tables or logs:
// a row is a Key (a table number and a hash of the row's encoded primary
// key), a transaction an id. Package engine takes a row's lock before a row
// operation touches a page and releases every lock at Commit or Rollback.
//
// # Core types
//
// Manager is the lock table. Mode is Shared or Exclusive: shared locks are
// compatible with each other, an exclusive lock with nothing. Key names a
// row; RowKey makes one. Owner is a transaction as the manager sees it, its
// id and the locks it holds. Wait is a request that has to wait, handed to
// the Parker, which decides how it waits: RealParker blocks the
// goroutine on a real timer; the simulator parks a simulated terminal
// until the grant or until virtual time reaches the deadline. Counters
// count requests, waits, wait time, deadlocks and timeouts; engine.Meter
// embeds them, so a transaction's meter counts its locks.
//
// # Usage
//
//	clock := cache.RealClock{}
//	lm := lock.NewManager(clock, lock.RealParker{Clock: clock}, 50*time.Second)
//	var c lock.Counters
//	o := &lock.Owner{ID: txID}
//	if err := lm.LockAs(&c, o, lock.RowKey(table, pk), lock.Exclusive); err != nil {
//		// errors.Is(err, lock.ErrDeadlock) or errors.Is(err, lock.ErrTimeout):
//		// roll the transaction back, then release what it holds.
//	}
//	// ... read and change the row ...
//	lm.Release(o) // at commit or rollback: every lock at once
//
// A caller that keeps an Owner per transaction (the engine's Tx does) uses
// LockAs and Release, and a request touches no per-transaction map. One
// that names transactions by id uses Lock and ReleaseAll, and the manager
// keeps their Owners until ReleaseAll.
//
// # Rules
//
// A request is granted at once when the transaction already holds the row
// in a mode at least as strong, or when nobody is queued on the row and it
// is compatible with every other holder. Otherwise it queues. The queue is
// served in order: its head is granted as soon as it is compatible with
// the holders, and the first request that is not stops the queue, so a
// stream of sharers cannot starve a writer. A holder of a shared lock that
// asks for exclusive upgrades in place, waiting for the other sharers; two
// sharers that both upgrade deadlock.
//
// When a request starts to wait, the manager walks the wait-for graph: a
// waiting request waits for the holders it conflicts with and for the
// conflicting requests queued ahead of it. If the walk comes back to the
// requester, the request is refused at once with ErrDeadlock: the requester
// that closes the cycle is the victim, and it never waits. Otherwise it
// waits until it is granted or until its Deadline (Start plus the timeout,
// on the manager's clock), when it fails with ErrTimeout. A refused or
// timed-out request leaves the queue, which may let requests behind it go.
// Either error leaves the transaction's earlier locks held: its caller rolls
// it back and releases them.
//
// # Concurrency and lifetimes
//
// A Manager is safe for concurrent use. The lock table is split in 64
// shards by the hash of a row's key, each with its own mutex, as InnoDB
// 8.0.21 split lock_sys's mutex into sharded latches: a request, a grant
// and a release latch only the shards of their rows, so terminals that
// lock different rows rarely meet on a mutex. The walk of the wait-for
// graph, which spans rows, latches every shard (InnoDB takes its global
// latch exclusively for it); it runs once per request that waits, after
// the request has queued: walks run one at a time and a victim leaves the
// graph before the next, so of two requests that close a cycle between
// them exactly one is refused. No shard is held while a request waits,
// so a Parker may run other work (the simulator runs other terminals). The caller must hold no latch or other
// mutex while it asks for a lock, since the request may wait.
//
// Counters and an Owner belong to one transaction, used by one goroutine
// at a time. Counters are updated in place during the request, so a Parker
// sees the request and its wait already counted. A Wait lives from the
// moment it is parked until Park returns; the Parker may move Start and
// Deadline forward by the same amount before it waits (the simulator
// does, to the virtual moment the wait begins) and must not keep it after.
// An Owner whose locks are released may be reused for another transaction
// (Owner.Cap tells a pool which ones grew too big to keep).
//
// Once warm, a granted request and its release allocate nothing (lock
// states are recycled): a TPC-C transaction takes dozens of locks.
//
// # Caveats
//
// There are row locks only: no gap or range locks (a scan can meet rows
// inserted after it began: phantoms), no intention locks, no escalation.
// Keys are 64-bit hashes: two rows of one table whose hashes collide share
// a lock, which can make a transaction wait, or be chosen as a deadlock
// victim, without a real conflict, but never lets a conflict through. The
// victim is always the requester that closes the cycle, whatever the work
// the others have done. Deadlock detection walks the graph with every
// shard latched, so long chains of waiters make every new wait slower.
// RealParker's clock must be the wall clock, since its timer is.
package lock
