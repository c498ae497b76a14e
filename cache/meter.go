package cache

import (
	"fmt"
	"strings"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
)

// Meter counts the page-level work of one caller (a transaction, a test, a
// background flusher): the buffer pool's requests, the store's I/O, the
// redo log's records and syncs, the page tier's traffic. It is plain
// integers, passed explicitly, owned by one goroutine at a time, and never
// shared on a hot path; database-wide totals are sums of finished meters
// (Add). A nil *Meter is accepted everywhere and counts nothing.
//
// Every counter here belongs to this package, and only this package
// increments it. A layer built on the pool counts its own events in a type
// of its own; a caller that wants both kinds of counts composes them in
// one struct that embeds Meter, from which the layer takes a pointer to
// the Meter, for the pool, and one to its own counts.
type Meter struct {
	// cache: buffer pool.

	// PageRequests counts every Fetch or Create, by the kind of page
	// returned (the kind after the read, for a miss).
	PageRequests [page.NumKinds]int64
	// PoolHits counts requests served from a frame already in the pool.
	PoolHits int64
	// PoolMisses counts requests that had to bring the page in.
	PoolMisses int64
	// PageCreates counts requests for a page new to the store (AllocPage
	// past the high-water mark): a frame is taken, nothing is read.
	PageCreates int64
	// PoolWaits counts requests that found the page being read by another
	// caller and waited for that read instead of reading it again.
	PoolWaits int64
	// Evictions counts frames this caller took from another page.
	Evictions int64
	// DirtyWriteBacks counts evictions that had to write the old page out
	// first (a cost the caller waited for).
	DirtyWriteBacks int64
	// PageFlushes counts pages written out by an explicit flush.
	PageFlushes int64

	// cache: store.

	StoreReads      int64
	StoreReadBytes  int64
	StoreWrites     int64
	StoreWriteBytes int64
	// StoreWritesMerged counts the in-place writes (of StoreWrites) that
	// went out in the request of the page before them: under Flushing51
	// a batch's pages with consecutive page numbers in one space are one
	// request, as MySQL 5.1's simulated AIO merges them
	// (os_aio_simulated_handle). A device prices such a write as its
	// transfer alone.
	StoreWritesMerged int64
	// StoreSyncs counts syncs of the store that make page writes durable:
	// a checkpoint's before it records its LSN, Close's, and with the
	// doublewrite buffer one after each batch's in-place writes (before
	// its slots are reused). Each is a sync of the store's device,
	// whether or not this process's store has anything to sync (an
	// in-memory store's are no-ops): the simulator prices them.
	StoreSyncs int64

	// The doublewrite buffer (TornPagesDoublewrite, doublewrite.go):
	// the batches written to it (DoublewriteWrites, one sequential write
	// each), the pages and bytes they held, and the syncs of the
	// doublewrite file that made each batch durable before its in-place
	// writes (one a batch). The in-place writes are StoreWrites as
	// without it.
	DoublewriteWrites int64
	DoublewritePages  int64
	DoublewriteBytes  int64
	DoublewriteSyncs  int64

	// redo: the log's counters (LogRecords, LogBytes, LogSyncs,
	// LogSyncWaits), counted by the mini-transactions' appends and the
	// log's SyncTo.
	redo.Counts
	// CheckpointPages counts pages written by sharp checkpoints
	// (background): a fuzzy one writes none.
	CheckpointPages int64

	// The page cleaner's work (CleanStep; background): its passes, and
	// the pages it wrote from the LRU tail and from the flush list (also
	// counted in StoreWrites).
	CleanerPasses         int64
	CleanerLRUPages       int64
	CleanerFlushListPages int64
	// MySQL 5.1's flushing (Flushing51): the master thread's rounds
	// (MasterStep), the tenth rounds' checkpoint marks, and the pages its
	// flush-list batches wrote (background); the LRU batches foreground
	// callers made themselves (buf_flush_free_margin) and the pages they
	// wrote (on the caller's meter). All writes are also StoreWrites.
	MasterRounds         int64
	MasterCheckpoints    int64
	MasterFlushListPages int64
	LRUFlushBatches      int64
	LRUFlushPages        int64
	// LogFreeCheckWaits counts the times a transaction found the
	// checkpoint age past the log's sync point and flushed pages itself
	// (counted in PageFlushes and StoreWrites) before it went on: InnoDB's
	// log_free_check. The only wait for log space.
	LogFreeCheckWaits int64

	// ReadAheads counts pages linear read-ahead brought in, and
	// ReadAheadMisses those of them it had to read (the others were
	// resident by the time it got to them); ReadAheadUnused counts pages
	// read ahead and evicted before any caller used them. All three are
	// background work (Pool.BackgroundMeter).
	ReadAheads      int64
	ReadAheadMisses int64
	ReadAheadUnused int64
	// ReadAheadTriggers counts the times linear read-ahead decided to
	// read an area (whatever it then found to read). The random
	// read-ahead's (Options.RandomReadAhead, background too):
	// RandomReadAheadTriggers counts its decisions, RandomReadAheads the
	// pages it read, RandomReadAheadUnused those evicted before any
	// caller used them.
	ReadAheadTriggers       int64
	RandomReadAheadTriggers int64
	RandomReadAheads        int64
	RandomReadAheadUnused   int64

	// cache: the remote page tier behind the pool (Tier).

	// TierGets counts pool misses that asked the tier; TierHits those it
	// answered with a page the pool used, TierMisses those it had no page
	// for. TierStale counts pages it returned whose LSN was not the newest
	// the pool knows, TierCorrupt pages whose checksum or header failed,
	// TierErrors calls that failed (a timeout, a dead server): each of
	// these three is also a miss for the pool, which reads the store.
	TierGets    int64
	TierHits    int64
	TierMisses  int64
	TierStale   int64
	TierCorrupt int64
	TierErrors  int64
	// TierPuts counts pages pushed to the tier, TierDrops those it
	// refused at once, TierDeletes pages deleted from it (exclusive mode:
	// a page read back).
	TierPuts    int64
	TierDrops   int64
	TierDeletes int64
	// TierBytesIn and TierBytesOut count page bytes read from and pushed
	// to the tier.
	TierBytesIn  int64
	TierBytesOut int64
	// WaffleLRU's asynchronous SETs (Options.WaffleSetQueue):
	// TierSetsQueued counts evicted pages queued for a later SET (the
	// SET itself is a TierPuts of whoever sends it, SendStep's meter),
	// TierSetWaits evictions that found the queue full and waited, sending
	// its oldest SET themselves (QueueFullWait), TierQueueDrops evicted
	// pages not sent because the queue was full (QueueFullDrop), and
	// TierQueueHits misses served from the queue: a page wanted back
	// before its SET went out, with no request to the tier.
	TierSetsQueued int64
	TierSetWaits   int64
	TierQueueDrops int64
	TierQueueHits  int64
}

// PageRequestsTotal sums PageRequests over all kinds.
func (m *Meter) PageRequestsTotal() int64 {
	var n int64
	for _, v := range m.PageRequests {
		n += v
	}
	return n
}

// Add adds o's counters to m.
func (m *Meter) Add(o *Meter) { m.combine(o, 1) }

// Sub subtracts o's counters from m; with a snapshot taken before some work,
// after.Sub(&before) leaves the cost of that work.
func (m *Meter) Sub(o *Meter) { m.combine(o, -1) }

// Diff returns m − o without changing either.
func (m *Meter) Diff(o *Meter) Meter {
	d := *m
	d.Sub(o)
	return d
}

func (m *Meter) combine(o *Meter, sign int64) {
	if m == nil || o == nil {
		return
	}
	for i := range m.PageRequests {
		m.PageRequests[i] += sign * o.PageRequests[i]
	}
	m.PoolHits += sign * o.PoolHits
	m.PoolMisses += sign * o.PoolMisses
	m.PageCreates += sign * o.PageCreates
	m.PoolWaits += sign * o.PoolWaits
	m.Evictions += sign * o.Evictions
	m.DirtyWriteBacks += sign * o.DirtyWriteBacks
	m.PageFlushes += sign * o.PageFlushes
	m.StoreReads += sign * o.StoreReads
	m.StoreReadBytes += sign * o.StoreReadBytes
	m.StoreWrites += sign * o.StoreWrites
	m.StoreWriteBytes += sign * o.StoreWriteBytes
	m.StoreWritesMerged += sign * o.StoreWritesMerged
	m.StoreSyncs += sign * o.StoreSyncs
	m.DoublewriteWrites += sign * o.DoublewriteWrites
	m.DoublewritePages += sign * o.DoublewritePages
	m.DoublewriteBytes += sign * o.DoublewriteBytes
	m.DoublewriteSyncs += sign * o.DoublewriteSyncs
	m.LogRecords += sign * o.LogRecords
	m.LogBytes += sign * o.LogBytes
	m.FullPageImages += sign * o.FullPageImages
	m.FullPageImageBytes += sign * o.FullPageImageBytes
	m.LogSyncs += sign * o.LogSyncs
	m.LogSyncWaits += sign * o.LogSyncWaits
	m.CheckpointPages += sign * o.CheckpointPages
	m.CleanerPasses += sign * o.CleanerPasses
	m.CleanerLRUPages += sign * o.CleanerLRUPages
	m.CleanerFlushListPages += sign * o.CleanerFlushListPages
	m.LogFreeCheckWaits += sign * o.LogFreeCheckWaits
	m.MasterRounds += sign * o.MasterRounds
	m.MasterCheckpoints += sign * o.MasterCheckpoints
	m.MasterFlushListPages += sign * o.MasterFlushListPages
	m.LRUFlushBatches += sign * o.LRUFlushBatches
	m.LRUFlushPages += sign * o.LRUFlushPages
	m.ReadAheads += sign * o.ReadAheads
	m.ReadAheadMisses += sign * o.ReadAheadMisses
	m.ReadAheadUnused += sign * o.ReadAheadUnused
	m.ReadAheadTriggers += sign * o.ReadAheadTriggers
	m.RandomReadAheadTriggers += sign * o.RandomReadAheadTriggers
	m.RandomReadAheads += sign * o.RandomReadAheads
	m.RandomReadAheadUnused += sign * o.RandomReadAheadUnused
	m.TierGets += sign * o.TierGets
	m.TierHits += sign * o.TierHits
	m.TierMisses += sign * o.TierMisses
	m.TierStale += sign * o.TierStale
	m.TierCorrupt += sign * o.TierCorrupt
	m.TierErrors += sign * o.TierErrors
	m.TierPuts += sign * o.TierPuts
	m.TierDrops += sign * o.TierDrops
	m.TierDeletes += sign * o.TierDeletes
	m.TierBytesIn += sign * o.TierBytesIn
	m.TierBytesOut += sign * o.TierBytesOut
	m.TierSetsQueued += sign * o.TierSetsQueued
	m.TierSetWaits += sign * o.TierSetWaits
	m.TierQueueDrops += sign * o.TierQueueDrops
	m.TierQueueHits += sign * o.TierQueueHits
}

// String lists the non-zero counters, for test failures and debugging.
func (m *Meter) String() string {
	var b strings.Builder
	add := func(name string, v int64) {
		if v != 0 {
			fmt.Fprintf(&b, "%s=%d ", name, v)
		}
	}
	for k, v := range m.PageRequests {
		add("req."+page.Kind(k).String(), v)
	}
	add("hits", m.PoolHits)
	add("misses", m.PoolMisses)
	add("creates", m.PageCreates)
	add("waits", m.PoolWaits)
	add("evictions", m.Evictions)
	add("dirty-writebacks", m.DirtyWriteBacks)
	add("flushes", m.PageFlushes)
	add("store-reads", m.StoreReads)
	add("store-read-bytes", m.StoreReadBytes)
	add("store-writes", m.StoreWrites)
	add("store-writes-merged", m.StoreWritesMerged)
	add("store-write-bytes", m.StoreWriteBytes)
	add("store-syncs", m.StoreSyncs)
	add("doublewrite-writes", m.DoublewriteWrites)
	add("doublewrite-pages", m.DoublewritePages)
	add("doublewrite-bytes", m.DoublewriteBytes)
	add("doublewrite-syncs", m.DoublewriteSyncs)
	add("log-records", m.LogRecords)
	add("log-bytes", m.LogBytes)
	add("full-page-images", m.FullPageImages)
	add("full-page-image-bytes", m.FullPageImageBytes)
	add("log-syncs", m.LogSyncs)
	add("log-sync-waits", m.LogSyncWaits)
	add("checkpoint-pages", m.CheckpointPages)
	add("cleaner-passes", m.CleanerPasses)
	add("cleaner-lru-pages", m.CleanerLRUPages)
	add("cleaner-flush-list-pages", m.CleanerFlushListPages)
	add("log-free-check-waits", m.LogFreeCheckWaits)
	add("master-rounds", m.MasterRounds)
	add("master-checkpoints", m.MasterCheckpoints)
	add("master-flush-list-pages", m.MasterFlushListPages)
	add("lru-flush-batches", m.LRUFlushBatches)
	add("lru-flush-pages", m.LRUFlushPages)
	add("read-aheads", m.ReadAheads)
	add("read-ahead-misses", m.ReadAheadMisses)
	add("read-ahead-unused", m.ReadAheadUnused)
	add("read-ahead-triggers", m.ReadAheadTriggers)
	add("random-read-ahead-triggers", m.RandomReadAheadTriggers)
	add("random-read-aheads", m.RandomReadAheads)
	add("random-read-ahead-unused", m.RandomReadAheadUnused)
	add("tier-gets", m.TierGets)
	add("tier-hits", m.TierHits)
	add("tier-misses", m.TierMisses)
	add("tier-stale", m.TierStale)
	add("tier-corrupt", m.TierCorrupt)
	add("tier-errors", m.TierErrors)
	add("tier-puts", m.TierPuts)
	add("tier-drops", m.TierDrops)
	add("tier-deletes", m.TierDeletes)
	add("tier-bytes-in", m.TierBytesIn)
	add("tier-bytes-out", m.TierBytesOut)
	add("tier-sets-queued", m.TierSetsQueued)
	add("tier-set-waits", m.TierSetWaits)
	add("tier-queue-drops", m.TierQueueDrops)
	add("tier-queue-hits", m.TierQueueHits)
	return strings.TrimSpace(b.String())
}
