package engine

import (
	"fmt"
	"strings"

	"github.com/enginelab/enginelab/btree"
	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/engine/lock"
	"github.com/enginelab/enginelab/heap"
)

// Meter counts the work of one transaction (or any caller). Each layer
// counts its own events in its own type, and Meter embeds them all, so
// their fields read as Meter's own (m.PoolHits, m.NodeVisits,
// m.HeapFetches): cache.Meter, the page-level counters the pool, the store,
// the redo log and the page tier keep; btree.TreeCounts, the B+trees' node
// visits, splits and merges; heap.HeapCounts, the heaps' row fetches,
// scanned rows and moves; and, below, what the engine adds. Like
// cache.Meter it is plain integers owned by one goroutine; totals are sums
// of finished meters (Add).
//
// *Meter is a btree.Account and a heap.Account (Pages, Tree, Heap): the
// engine hands a transaction's meter to the trees and heaps as it is, and
// to the pool and the log as Pages().
//
// Each count is kept in one place: a cost model prices these fields and
// nothing else.
type Meter struct {
	cache.Meter
	btree.TreeCounts
	heap.HeapCounts

	// RowFetches (a total of the two fields after it, which a cost model
	// prices instead) counts rows read through a pointer from an index entry
	// that did not hold every wanted column: a heap fetch by row pointer
	// (organization HeapRowPointer, and the primary key's own lookup in
	// both heap organizations), or a primary-key lookup for a row
	// (Clustered and HeapPrimaryKey secondaries). The fields below split
	// it by path.
	RowFetches int64
	// RowFetchesHeap counts fetches that read the heap by row pointer
	// straight from an index entry.
	RowFetchesHeap int64
	// RowFetchesPrimary counts fetches that looked the primary key up in
	// the clustered tree (Clustered) or in the primary index and then the
	// heap (HeapPrimaryKey).
	RowFetchesPrimary int64

	// RowsExamined counts index entries or rows looked at.
	RowsExamined int64
	// RowsReturned counts rows handed to the caller (or counted by Count).
	RowsReturned int64
	// RowsDecoded counts row images decoded (whole or in part).
	RowsDecoded int64

	// IndexEntriesWritten and IndexEntriesDeleted count index entries, the
	// primary index's included, over all indexes; Index splits them (and
	// node visits) by index. The totals are sums of Index, kept for
	// reading; price one or the other.
	//
	// A heap fetch is also counted as HeapCounts.HeapFetches (the heap's
	// own count of the page-level event); RowFetchesHeap says why it
	// happened. Price the page-level counters for I/O and CPU per page,
	// the row counters for per-row CPU.
	IndexEntriesWritten int64
	IndexEntriesDeleted int64

	// UndoRecords and UndoBytes count the undo records written to undo
	// pages (one per structure change) and their bytes, headers included.
	UndoRecords int64
	UndoBytes   int64

	// Multi-versioning (Isolation ReadCommitted and RepeatableRead on
	// clustered tables): ReadViews counts the read views opened (a
	// snapshot shared with Tx.ShareSnapshot is not a new one);
	// ConsistentReads the rows read without a lock through one;
	// UndoVersionsRead the older versions built from undo records for
	// them, one per undo record applied (InnoDB's
	// row_vers_build_for_consistent_read, one trx_undo_prev_version_build
	// per step); SecondaryClusterChecks the secondary entries a
	// consistent read had to confirm in the clustered record because
	// their leaf's max transaction id (PAGE_MAX_TRX_ID) was not below the
	// view's up limit. Each is also a row fetch (RowFetchesPrimary): for
	// an index-only read, one the entry alone would otherwise have
	// answered.
	ReadViews              int64
	ConsistentReads        int64
	UndoVersionsRead       int64
	SecondaryClusterChecks int64
	// SerializationFailures counts the statements of versioned heap
	// tables that failed with ErrSerialization (heapmvcc.go).
	SerializationFailures int64
	// IndexOnlyHeapFetches counts the entries an index-only scan of a
	// versioned heap table had to confirm in the heap because the
	// visibility map did not say their page all-visible (PostgreSQL's
	// "Heap Fetches" in EXPLAIN ANALYZE); IndexOnlyVMChecks the map
	// lookups it made.
	IndexOnlyHeapFetches int64
	IndexOnlyVMChecks    int64
	// IndexEntriesKilled counts the index entries of versioned heap
	// tables a scan marked killed after its heap visit found every
	// version they name dead to every snapshot (PostgreSQL's
	// kill_prior_tuple and _bt_killitems): later scans step over them
	// without a heap visit until vacuum removes them.
	IndexEntriesKilled int64
	// Vacuum of versioned heap tables (vacuum.go), on the meter
	// DB.Vacuum or DB.VacuumStep charges: VacuumRuns counts table
	// passes, VacuumPages the heap pages they scanned,
	// VacuumPagesPruned those a prune changed, VacuumTuplesRemoved the
	// versions those prunes freed, VacuumDeadTuples the dead versions
	// left on the pages (pg_stat's n_dead_tup after the pass: those no
	// prune could reach), VacuumIndexEntriesRemoved the index entries removed.
	// Prunes on access count in HeapPrunes and HeapTuplesPruned only.
	VacuumRuns                int64
	VacuumPages               int64
	VacuumPagesPruned         int64
	VacuumTuplesRemoved       int64
	VacuumDeadTuples          int64
	VacuumIndexEntriesRemoved int64

	// Purge (purge.go), on the meter DB.PurgeStep charges:
	// UndoLogsPurged counts the committed undo logs it freed,
	// PurgeUndoRecords the undo records it read from them,
	// PurgeVersionsRead the older versions it built to decide whether a
	// secondary entry is still needed (row_vers_old_has_index_entry),
	// PurgeRecords the delete-marked clustered records it removed
	// (row_purge_remove_clust_if_poss), PurgeSecondaryRemoved the
	// delete-marked secondary entries it removed, and PurgeSecondaryKept
	// those it left because a version some view may read still has them.
	UndoLogsPurged        int64
	PurgeUndoRecords      int64
	PurgeVersionsRead     int64
	PurgeRecords          int64
	PurgeSecondaryRemoved int64
	PurgeSecondaryKept    int64

	// Row locks: requests, requests that waited, the time they waited (on
	// the lock manager's clock: virtual in simulated mode), deadlocks
	// (this meter's transaction the victim) and timeouts: LockRequests,
	// LockWaits, LockWaitNanos, Deadlocks and LockTimeouts. The lock
	// manager counts them in place, through this embedded field.
	lock.Counters

	// Transactions ended: commits, those that waited for a log sync
	// (SyncCommit mode; the syncs themselves are LogSyncs and
	// LogSyncWaits), and rollbacks (deadlock and timeout victims
	// included).
	Commits     int64
	SyncCommits int64
	Rollbacks   int64
	// DurableReadWaits counts read-only commits that waited for the log
	// to be durable up to the commits made visible before them
	// (EarlyRelease in SyncCommit mode: see LockRelease).
	DurableReadWaits int64

	// Index holds per-index counters, by the index's number in its
	// database (DB.IndexName names it).
	Index []IndexCounters

	// SortCounts are the sorts' counters (sort_meter.go).
	SortCounts
}

// IndexCounters are the counters of one index.
type IndexCounters struct {
	NodeVisits     int64
	EntriesWritten int64
	EntriesDeleted int64
}

// Pages returns the page-level counters, for the pool and the log; nil for
// a nil m.
func (m *Meter) Pages() *cache.Meter {
	if m == nil {
		return nil
	}
	return &m.Meter
}

// Tree returns the B+trees' counters; nil for a nil m. With Pages it makes
// *Meter a btree.Account.
func (m *Meter) Tree() *btree.TreeCounts {
	if m == nil {
		return nil
	}
	return &m.TreeCounts
}

// Heap returns the heaps' counters; nil for a nil m. With Pages it makes
// *Meter a heap.Account.
func (m *Meter) Heap() *heap.HeapCounts {
	if m == nil {
		return nil
	}
	return &m.HeapCounts
}

// ix returns the counters of index id, growing Index as needed.
func (m *Meter) ix(id int) *IndexCounters {
	for len(m.Index) <= id {
		m.Index = append(m.Index, IndexCounters{})
	}
	return &m.Index[id]
}

// Add adds o's counters to m.
func (m *Meter) Add(o *Meter) { m.combine(o, 1) }

// Sub subtracts o's counters from m.
func (m *Meter) Sub(o *Meter) { m.combine(o, -1) }

// Diff returns m − o without changing either.
func (m *Meter) Diff(o *Meter) Meter {
	d := m.Clone()
	d.Sub(o)
	return d
}

// Clone returns a copy that shares nothing with m.
func (m *Meter) Clone() Meter {
	c := *m
	c.Index = append([]IndexCounters(nil), m.Index...)
	return c
}

func (m *Meter) combine(o *Meter, sign int64) {
	if sign > 0 {
		m.Meter.Add(&o.Meter)
		m.TreeCounts.Add(&o.TreeCounts)
		m.HeapCounts.Add(&o.HeapCounts)
	} else {
		m.Meter.Sub(&o.Meter)
		m.TreeCounts.Sub(&o.TreeCounts)
		m.HeapCounts.Sub(&o.HeapCounts)
	}
	m.RowFetches += sign * o.RowFetches
	m.RowFetchesHeap += sign * o.RowFetchesHeap
	m.RowFetchesPrimary += sign * o.RowFetchesPrimary
	m.RowsExamined += sign * o.RowsExamined
	m.RowsReturned += sign * o.RowsReturned
	m.RowsDecoded += sign * o.RowsDecoded
	m.IndexEntriesWritten += sign * o.IndexEntriesWritten
	m.IndexEntriesDeleted += sign * o.IndexEntriesDeleted
	m.UndoRecords += sign * o.UndoRecords
	m.UndoBytes += sign * o.UndoBytes
	m.ReadViews += sign * o.ReadViews
	m.UndoLogsPurged += sign * o.UndoLogsPurged
	m.PurgeUndoRecords += sign * o.PurgeUndoRecords
	m.PurgeVersionsRead += sign * o.PurgeVersionsRead
	m.PurgeRecords += sign * o.PurgeRecords
	m.PurgeSecondaryRemoved += sign * o.PurgeSecondaryRemoved
	m.PurgeSecondaryKept += sign * o.PurgeSecondaryKept
	m.ConsistentReads += sign * o.ConsistentReads
	m.UndoVersionsRead += sign * o.UndoVersionsRead
	m.SecondaryClusterChecks += sign * o.SecondaryClusterChecks
	m.SerializationFailures += sign * o.SerializationFailures
	m.IndexOnlyHeapFetches += sign * o.IndexOnlyHeapFetches
	m.IndexOnlyVMChecks += sign * o.IndexOnlyVMChecks
	m.IndexEntriesKilled += sign * o.IndexEntriesKilled
	m.VacuumRuns += sign * o.VacuumRuns
	m.VacuumPages += sign * o.VacuumPages
	m.VacuumPagesPruned += sign * o.VacuumPagesPruned
	m.VacuumTuplesRemoved += sign * o.VacuumTuplesRemoved
	m.VacuumDeadTuples += sign * o.VacuumDeadTuples
	m.VacuumIndexEntriesRemoved += sign * o.VacuumIndexEntriesRemoved
	m.LockRequests += sign * o.LockRequests
	m.LockWaits += sign * o.LockWaits
	m.LockWaitNanos += sign * o.LockWaitNanos
	m.Deadlocks += sign * o.Deadlocks
	m.LockTimeouts += sign * o.LockTimeouts
	m.Commits += sign * o.Commits
	m.SyncCommits += sign * o.SyncCommits
	m.Rollbacks += sign * o.Rollbacks
	m.SortCounts.combine(&o.SortCounts, sign)
	m.DurableReadWaits += sign * o.DurableReadWaits
	for i := range o.Index {
		x := m.ix(i)
		x.NodeVisits += sign * o.Index[i].NodeVisits
		x.EntriesWritten += sign * o.Index[i].EntriesWritten
		x.EntriesDeleted += sign * o.Index[i].EntriesDeleted
	}
}

// String lists the non-zero counters.
func (m *Meter) String() string {
	var b strings.Builder
	for _, s := range [...]string{m.Meter.String(), m.TreeCounts.String(), m.HeapCounts.String()} {
		if s != "" {
			b.WriteString(" ")
			b.WriteString(s)
		}
	}
	add := func(name string, v int64) {
		if v != 0 {
			fmt.Fprintf(&b, " %s=%d", name, v)
		}
	}
	add("row-fetches", m.RowFetches)
	add("row-fetches.heap", m.RowFetchesHeap)
	add("row-fetches.primary", m.RowFetchesPrimary)
	add("rows-examined", m.RowsExamined)
	add("rows-returned", m.RowsReturned)
	add("rows-decoded", m.RowsDecoded)
	add("index-entries-written", m.IndexEntriesWritten)
	add("index-entries-deleted", m.IndexEntriesDeleted)
	add("undo-records", m.UndoRecords)
	add("undo-bytes", m.UndoBytes)
	add("read-views", m.ReadViews)
	add("undo-logs-purged", m.UndoLogsPurged)
	add("purge-undo-records", m.PurgeUndoRecords)
	add("purge-versions-read", m.PurgeVersionsRead)
	add("purge-records", m.PurgeRecords)
	add("purge-secondary-removed", m.PurgeSecondaryRemoved)
	add("purge-secondary-kept", m.PurgeSecondaryKept)
	add("consistent-reads", m.ConsistentReads)
	add("undo-versions-read", m.UndoVersionsRead)
	add("secondary-cluster-checks", m.SecondaryClusterChecks)
	add("serialization-failures", m.SerializationFailures)
	add("index-only-heap-fetches", m.IndexOnlyHeapFetches)
	add("index-only-vm-checks", m.IndexOnlyVMChecks)
	add("index-entries-killed", m.IndexEntriesKilled)
	add("vacuum-runs", m.VacuumRuns)
	add("vacuum-pages", m.VacuumPages)
	add("vacuum-pages-pruned", m.VacuumPagesPruned)
	add("vacuum-tuples-removed", m.VacuumTuplesRemoved)
	add("vacuum-dead-tuples", m.VacuumDeadTuples)
	add("vacuum-index-entries-removed", m.VacuumIndexEntriesRemoved)
	add("lock-requests", m.LockRequests)
	add("lock-waits", m.LockWaits)
	add("lock-wait-ns", m.LockWaitNanos)
	add("deadlocks", m.Deadlocks)
	add("lock-timeouts", m.LockTimeouts)
	add("commits", m.Commits)
	add("sync-commits", m.SyncCommits)
	add("rollbacks", m.Rollbacks)
	if s := m.SortCounts.String(); s != "" {
		b.WriteString(" " + s)
	}
	add("durable-read-waits", m.DurableReadWaits)
	for i, x := range m.Index {
		add(fmt.Sprintf("ix%d.nodes", i), x.NodeVisits)
		add(fmt.Sprintf("ix%d.written", i), x.EntriesWritten)
		add(fmt.Sprintf("ix%d.deleted", i), x.EntriesDeleted)
	}
	return strings.TrimSpace(b.String())
}
