package hw

import (
	"math"
	"time"

	"github.com/enginelab/enginelab/engine"
)

// Event is one metered event that a CPU profile prices per occurrence, or
// that a device prices: an index into a Vector. The CPU events come first,
// in the order of CPUProfile's fields (and of Costs); the device events
// after them (EventStoreWrite and on) are counted so that a scheduler can
// diff them with the rest, but a CPU profile gives them no cost. The
// store device's events are its page writes, its syncs (a checkpoint's,
// and a doublewrite batch's after its in-place writes), and the
// doublewrite buffer's batches: one sequential write each, of
// EventDoublewriteByte bytes in all, and a sync each.
type Event int

// The events, in the order of CPUProfile.Costs.
const (
	EventPageRequest Event = iota
	EventPoolMiss
	EventPageCreate
	EventNodeVisit
	EventSplit
	EventMerge
	EventHeapFetch
	EventHeapRowScanned
	EventHeapMove
	EventRowExamined
	EventRowDecoded
	EventRowReturned
	EventIndexEntryWritten
	EventIndexEntryDeleted
	EventLogRecord
	EventLogByte
	EventLockRequest
	EventCommit
	EventRollback
	// Not CPU-priced by Costs (their devices price them).
	EventStoreWrite
	EventTierPut
	EventTierDelete
	EventStoreSync
	EventDoublewriteWrite
	EventDoublewriteByte
	EventDoublewriteSync
	// EventStoreWriteMerged counts the page writes (of EventStoreWrite)
	// that went out in the request before them (cache's
	// StoreWritesMerged): a device prices their transfer alone.
	EventStoreWriteMerged
	NumEvents
)

// NumCPUEvents is the number of events a CPU profile prices per
// occurrence: EventPageRequest to EventRollback.
const NumCPUEvents = int(EventStoreWrite)

// NumCosts is the number of costs of a CPU profile: one per CPU event, and
// the I/O paths' own (StoreRequest, TierRequest).
const NumCosts = NumCPUEvents + 2

// CostNames are the CPU profile's JSON names, in Costs order: the CPU
// events', then the I/O paths'.
var CostNames = [NumCosts]string{
	"page_request", "pool_miss", "page_create", "node_visit", "split", "merge",
	"heap_fetch", "heap_row_scanned", "heap_move", "row_examined", "row_decoded", "row_returned",
	"index_entry_written", "index_entry_deleted", "log_record", "log_byte", "lock_request", "commit", "rollback",
	"store_request", "tier_request",
}

// Vector counts each event: a meter's (VectorOf), or the difference of two.
type Vector [NumEvents]int64

// VectorOf extracts the priced counters from a meter.
func VectorOf(m *engine.Meter) Vector {
	return Vector{
		EventPageRequest: m.PageRequestsTotal(), EventPoolMiss: m.PoolMisses, EventPageCreate: m.PageCreates,
		EventNodeVisit: m.NodeVisitsTotal(), EventSplit: m.Splits, EventMerge: m.Merges,
		EventHeapFetch: m.HeapFetches, EventHeapRowScanned: m.HeapRowsScanned, EventHeapMove: m.HeapMoves,
		EventRowExamined: m.RowsExamined, EventRowDecoded: m.RowsDecoded, EventRowReturned: m.RowsReturned,
		EventIndexEntryWritten: m.IndexEntriesWritten, EventIndexEntryDeleted: m.IndexEntriesDeleted,
		EventLogRecord: m.LogRecords, EventLogByte: m.LogBytes, EventLockRequest: m.LockRequests,
		EventCommit: m.Commits, EventRollback: m.Rollbacks,
		EventStoreWrite: m.StoreWrites, EventTierPut: m.TierPuts, EventTierDelete: m.TierDeletes,
		EventStoreSync: m.StoreSyncs, EventDoublewriteWrite: m.DoublewriteWrites, EventDoublewriteByte: m.DoublewriteBytes,
		EventDoublewriteSync: m.DoublewriteSyncs, EventStoreWriteMerged: m.StoreWritesMerged,
	}
}

// Costs lists the profile's costs in event order (EventRollback and
// before), then StoreRequest and TierRequest: NumCosts of them, named by
// CostNames.
func (c *CPUProfile) Costs() []float64 {
	return []float64{c.PageRequest, c.PoolMiss, c.PageCreate, c.NodeVisit, c.Split, c.Merge,
		c.HeapFetch, c.HeapRowScanned, c.HeapMove, c.RowExamined, c.RowDecoded, c.RowReturned,
		c.IndexEntryWritten, c.IndexEntryDeleted, c.LogRecord, c.LogByte, c.LockRequest, c.Commit, c.Rollback,
		c.StoreRequest, c.TierRequest}
}

// ProfileOf builds a profile from NumCosts costs in Costs order (its
// inverse); the Source is empty.
func ProfileOf(c []float64) CPUProfile {
	return CPUProfile{
		PageRequest: c[0], PoolMiss: c[1], PageCreate: c[2], NodeVisit: c[3], Split: c[4], Merge: c[5],
		HeapFetch: c[6], HeapRowScanned: c[7], HeapMove: c[8], RowExamined: c[9], RowDecoded: c[10], RowReturned: c[11],
		IndexEntryWritten: c[12], IndexEntryDeleted: c[13], LogRecord: c[14], LogByte: c[15], LockRequest: c[16],
		Commit: c[17], Rollback: c[18], StoreRequest: c[19], TierRequest: c[20],
	}
}

// Picos converts the profile to integer picoseconds per CPU event (the
// device events' entries are 0), plus the I/O paths' costs: a scheduler
// sums integers, so that no floating point decides a simulated result.
func (c *CPUProfile) Picos() (ev [NumEvents]int64, store, tier int64) {
	cs := c.Costs()
	for i := range NumCPUEvents {
		ev[i] = int64(math.Round(cs[i] * 1000))
	}
	return ev, int64(math.Round(c.StoreRequest * 1000)), int64(math.Round(c.TierRequest * 1000))
}

// TransferNanos is the time in nanoseconds that bytes take at bandwidth
// bytes a second (rounded down).
func TransferNanos(bytes, bandwidth int64) int64 { return bytes * int64(time.Second) / bandwidth }
