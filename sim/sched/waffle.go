package sched

import (
	"time"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/engine"
)

// Waffle Grid's setting as the scheduler prices it (the waffle
// experiment's reproduction): three background actors and one server beside the
// page cleaner of sched.go.
//
//   - The tier server's worker threads (SetTierServer): memcached serves
//     each request on one of its threads (-t: one for 1.2.5 as Waffle
//     Grid ran it, four by default from 1.3), holding it for the
//     network profile's ServerRequest. A request that finds every thread
//     busy waits (queueing share); on an idle server the time is inside
//     the round trip. Every request pays it: a terminal's GETs, SETs and
//     DELETEs, the background SETs of inclusive mode and of the sender,
//     the tier reads of read-ahead.
//   - MySQL 5.1's master thread (cache.Flushing51), instead of the page
//     cleaner: cache.Pool.MasterStep once a second of virtual time; after
//     a round that flushed for the dirty share (MasterPass.Next 0) the
//     next starts as soon as that batch's writes are done, and a round
//     due before its last batch's writes are done waits for them. 5.1's
//     buf_flush_batch returns at once while a batch of its type is still
//     in flight (n_flush[BUF_FLUSH_LIST] > 0), and skip_sleep sends the
//     thread round its loop again without sleeping, so the thread in
//     effect waits for its own batch; the device's background queue is
//     first in, first out, so the batch is done once the requests queued
//     up to its last are served. Requests queued after it (read-ahead's
//     reads, a checkpoint's writes) do not hold the master thread.
//     Purge is the master thread's too (5.1 has no purge thread):
//     every tenth round, after its flush-list batch and before its
//     checkpoint, "a full purge every 10 seconds, even if the server were
//     active" (srv_master_thread: trx_purge until it purges nothing),
//     its reads in the purge queue (storeSlot: one synchronous
//     requester's share) and its LRU batches' writes with the
//     asynchronous writers' (actorStep). The purge is a sequence of
//     steps in time (fullPurgeStep): the thread takes its next step once
//     its last one's reads are served, and, with the doublewrite buffer,
//     its batches' writes (without it, once the AIO write array has a
//     free slot), so undo logs committed while it purges are picked up
//     by its later steps, as 5.1's loop picks them up. No round runs
//     until it ends; the next is due the round's interval after. The
//     purge actor of maintain does not run. Each
//     MasterPass.Checkpoints is a fuzzy checkpoint
//     (engine.DB.FuzzyCheckpoint: a store sync, no page writes). It runs
//     with no terminal current, like a cleaner pass, and never while a
//     page write waits for a log sync (urgent) or a terminal leads one: a
//     batch may sync the log itself, which it cannot wait for then.
//   - The asynchronous SET sender of Waffle Grid's LRU mode with a queue
//     (cache.Options.WaffleSetQueue): one sender, a SET at a time, each
//     holding it for a round trip and the page's transfer, so by virtual
//     time t it has sent what fits since it was last idle
//     (cache.Pool.SendStep, one SET per step; they go on the background
//     meter, whose tier puts queueBackground books on the link and the
//     server).
type waffleState struct {
	db         *engine.DB
	flushing51 bool
	// doublewrite: the pool writes through a doublewrite buffer, so a
	// terminal's LRU batch is not posted (postLRUWrites).
	doublewrite bool
	setQueue    bool
	// postedBatches counts the terminals' LRU batches whose writes were
	// posted to the asynchronous writers, and postWaits the writes whose
	// posting waited for a free slot (AIOWriteSlots).
	postedBatches, postWaits int64

	nextMaster int64 // when the master thread's next round is due
	masterLast int64 // the virtual time of its last MasterStep
	afterBatch bool  // the next round waits for the last batch's writes
	// batchEnd is the background queue's count of requests added
	// (reqQueue.added) once the master's last round had queued its
	// own: that round's writes are done when the queue has served as
	// many.
	batchEnd int64
	// masterWaits counts rounds that found the last batch's writes still
	// queued on the store device and waited for them.
	masterWaits int64
	// purgeCkpts is how many checkpoints wait for the full purge in
	// progress (0: none in progress), and purgeNext the round's
	// MasterPass.Next, the next round's delay once the purge ends.
	purgeCkpts int
	purgeNext  time.Duration

	sendFree int64 // when the sender is free for its next SET
	sendSeen int64 // the last time senderWork looked
	sent     int64
	served   int64 // tier requests priced (tierServe)
}

// SetTierServer makes the tier's server a resource of threads worker
// threads, each request holding one for the network profile's
// ServerRequest (no effect if that is 0). Call it before Run.
func (s *Scheduler) SetTierServer(threads int) {
	occ := int64(s.machine.Network.ServerRequest)
	if threads < 1 || occ == 0 {
		s.tierThreads, s.tierServerOcc = nil, 0
		return
	}
	s.tierThreads = make([]int64, threads)
	s.tierServerOcc = occ
}

// tierServe books the tier server's first free thread for one request
// arriving at t, and returns when the server starts it (t on an idle
// server).
func (s *Scheduler) tierServe(t int64) int64 {
	s.wl.served++
	if len(s.tierThreads) == 0 {
		return t
	}
	c := 0
	for i := range s.tierThreads {
		if s.tierThreads[i] < s.tierThreads[c] {
			c = i
		}
	}
	start := max(t, s.tierThreads[c])
	s.tierThreads[c] = start + s.tierServerOcc
	return start
}

// attachWaffle reads the pool's flushing policy and SET queue.
func (s *Scheduler) attachWaffle(db *engine.DB) {
	o := s.pool.Options()
	s.wl.db = db
	s.wl.flushing51 = o.Flushing == cache.Flushing51
	s.wl.doublewrite = o.TornPages == cache.TornPagesDoublewrite
	s.wl.setQueue = o.Waffle == cache.WaffleLRU && o.WaffleSetQueue > 0
}

// startWaffle sets the background actors' clocks at the start of a run:
// the master thread's first round one interval on.
func (s *Scheduler) startWaffle() {
	s.wl.nextMaster = s.base + int64(cache.MasterInterval)
	s.wl.masterLast = s.base
	s.wl.afterBatch = false
	s.wl.batchEnd = s.bg.added
	// A full purge a previous run left unfinished is not carried over:
	// its requests belong to that run's queues.
	s.wl.purgeCkpts, s.wl.purgeNext = 0, 0
	s.wl.sendFree, s.wl.sendSeen = s.base, s.base
}

// masterWork runs the master thread's rounds due by t, the earliest
// clock (see waffleState).
func (s *Scheduler) masterWork(t int64) {
	w := &s.wl
	if s.urgent != nil || s.syncLeader != nil {
		return
	}
	for {
		if w.purgeCkpts > 0 {
			// A full purge in progress: the thread's next step once its
			// last one's requests are done, the checkpoints once a step
			// purges nothing.
			s.drainBg(t)
			if s.actorBusy(&s.purgeQ) {
				return
			}
			s.fullPurgeStep(t)
			if w.purgeCkpts > 0 {
				continue // a step that queued nothing: the next at once
			}
		}
		if t < w.nextMaster {
			return
		}
		s.drainBg(t)
		if s.masterBusy() {
			if !w.afterBatch {
				w.masterWaits++
				w.afterBatch = true
			}
			return
		}
		at := w.nextMaster
		if w.afterBatch {
			at = max(at, min(t, s.store.free)) // its batch's writes done
		}
		cur := s.cur
		s.cur = nil
		var m cache.Meter
		// A failed write leaves its page dirty for a later round or an
		// eviction to write and report.
		pass, _ := s.pool.MasterStep(&m, time.Duration(at-w.masterLast))
		s.cur = cur
		w.masterLast = at
		s.pool.ChargeBackground(&m)
		for range m.LogSyncs {
			lat := int64(s.machine.Log.SyncLatency)
			start := max(at, s.log.free)
			s.log.free = start + lat
			s.log.busy += lat
		}
		s.queueBackground(t)
		w.batchEnd = s.bg.added
		w.afterBatch = pass.Next == 0
		w.nextMaster = at + int64(pass.Next)
		if pass.Checkpoints > 0 {
			// The ten-second work's full purge, before its checkpoint:
			// its first step now, the rest as the thread is free.
			w.purgeCkpts, w.purgeNext = pass.Checkpoints, pass.Next
			s.fullPurgeStep(at)
			continue
		}
		if w.afterBatch {
			return // due again once this batch's writes are done: a later yield point
		}
	}
}

// fullPurgeStep takes one step of the master thread's full purge at t
// (trx_purge until it purges nothing). After the step that purges
// nothing it makes the round's checkpoints (engine.DB.FuzzyCheckpoint:
// a store sync on the background meter) and lets the master's rounds go
// on from t: the thread was purging, not sleeping, so the next round is
// due the round's own interval after the purge ends.
func (s *Scheduler) fullPurgeStep(t int64) {
	w := &s.wl
	cur := s.cur
	s.cur = nil
	defer func() { s.cur = cur }()
	n := s.purgeStep(t)
	if n > 0 {
		return
	}
	if w.db != nil {
		for range w.purgeCkpts {
			_ = w.db.FuzzyCheckpoint()
		}
		s.queueBackground(t)
		w.batchEnd = s.bg.added
	}
	w.purgeCkpts = 0
	w.masterLast = max(w.masterLast, t)
	w.nextMaster = max(w.nextMaster, t+int64(w.purgeNext))
}

// masterBusy says whether the master thread is still waiting for its
// own requests: its last batch's writes (the background queue has not
// yet served as many requests as it held after that batch) or its full
// purge's reads and writes.
func (s *Scheduler) masterBusy() bool {
	return s.bg.served < s.wl.batchEnd || s.actorBusy(&s.purgeQ)
}

// senderWork sends the queued SETs the sender had time for by t (see
// waffleState).
func (s *Scheduler) senderWork(t int64) {
	w := &s.wl
	if !w.setQueue {
		return
	}
	for s.pool.QueuedSets() > 0 {
		start := max(w.sendFree, w.sendSeen)
		if start > t {
			break
		}
		if s.pool.SendStep(nil, 1) == 0 {
			break
		}
		w.sent++
		w.sendFree = start + s.netPage
	}
	w.sendSeen = t
}

// MasterWaits is how many of MySQL 5.1's master thread rounds found the
// last batch's writes still queued on the store device and waited for
// them.
func (s *Scheduler) MasterWaits() int64 { return s.wl.masterWaits }

// PostedLRUBatches is how many of the terminals' LRU batches (MySQL
// 5.1's flushing without a doublewrite buffer) had their writes posted to
// the asynchronous writers rather than waited for.
func (s *Scheduler) PostedLRUBatches() int64 { return s.wl.postedBatches }

// PostWaits is how many of the posted writes waited for a free slot of
// the simulated AIO's write array (AIOWriteSlots).
func (s *Scheduler) PostWaits() int64 { return s.wl.postWaits }

// SenderSETs is how many queued SETs the asynchronous sender sent.
func (s *Scheduler) SenderSETs() int64 { return s.wl.sent }

// TierRequests is how many requests to the tier were priced: a
// terminal's GETs, SETs and DELETEs, and the background SETs and reads.
func (s *Scheduler) TierRequests() int64 { return s.wl.served }
