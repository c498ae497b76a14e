package engine

import (
	"encoding/binary"
	"fmt"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/redo"
)

// testHookCrashPoint, if set, is called at the named points of a
// checkpoint and of a transaction's flush for log space, so that a crash
// test can take its image there.
var testHookCrashPoint func(point string)

func (db *DB) crashPoint(point string) {
	if h := testHookCrashPoint; h != nil {
		h(point)
	}
}

// Checkpoint takes a sharp checkpoint: it writes every dirty page, syncs
// the store, records the log end from before the writes as where recovery
// starts, and drops the log before that (transactions keep their undo on
// undo pages, so no transaction holds the log back). Its page writes are
// charged to the pool's background meter (CheckpointPages). Close and
// Open take one; the automatic checkpoints are fuzzy (maybeCheckpoint).
func (db *DB) Checkpoint() error {
	db.ckptMu.Lock()
	defer db.ckptMu.Unlock()
	return db.checkpointLocked(false)
}

// closeCheckpoint is Close's sharp checkpoint: Checkpoint's, with its
// page writes made durable by flushing the store (cache.Pool.FlushStore:
// pebble's memtables become synced sstables) instead of by syncing the
// store's WAL. The store's Close flushes them in any case, so that a
// closed database needs no WAL; a sync first would write to the disk a
// WAL the flush then makes obsolete (at the end of a W=1 load, most of
// the memtable's 64 MiB).
func (db *DB) closeCheckpoint() error {
	db.ckptMu.Lock()
	defer db.ckptMu.Unlock()
	return db.checkpointLocked(true)
}

// FuzzyCheckpoint takes a fuzzy checkpoint now (see
// fuzzyCheckpointLocked), its store sync on the pool's background meter:
// MySQL 5.1's master thread's log_checkpoint every tenth round
// (cache.MasterPass.Checkpoints), which its owner makes. If a checkpoint
// is under way it does nothing.
func (db *DB) FuzzyCheckpoint() error {
	if !db.ckptMu.TryLock() {
		return nil
	}
	defer db.ckptMu.Unlock()
	return db.fuzzyCheckpointLocked(nil)
}

// checkpointLocked takes a sharp checkpoint. REQUIRES: db.ckptMu held.
//
// The checkpoint record it saves with the log's SaveCheckpoint, which
// recover reads back with LoadCheckpoint, is 24 bytes, little-endian:
//
//	0                8                16               24
//	+----------------+----------------+----------------+
//	|      redo      |      keep      |     tx seq     |
//	|   (8B, LSN)    |   (8B, LSN)    |  (8B, tx id)   |
//	+----------------+----------------+----------------+
//
// redo is the checkpoint LSN: every change logged before it is on a page
// the store has synced, so recovery redoes pages from there. A sharp
// checkpoint names the log end when it began; a fuzzy one the oldest
// modification still dirty (cache.Pool.CheckpointLSN). keep is where the
// log is kept from: redo too, since undo lives on undo pages (the field
// stays for a log that must keep more). tx seq is the last transaction id
// handed out (recovery also raises it to the rollback segment's max tx
// id, so that ids are never reused). With no record saved yet (a new
// database), recovery starts at redo.FirstLSN; a record of any other
// length is redo.ErrCorruptLog.
//
// flush says how the page writes become durable before the record is
// saved: false, a sync of the store (cache.Pool.SyncStore); true, a flush
// of its memtables (cache.Pool.FlushStore, closeCheckpoint). Either is
// counted as one store sync.
func (db *DB) checkpointLocked(flush bool) error {
	redo := db.log.End()
	// With full-page writes, a page changed from here on whose LSN is
	// below redo logs its image first (PostgreSQL's RedoRecPtr): recovery
	// will start at redo and must not trust a page it could find torn.
	db.pool.SetFullPageHorizon(redo)
	var m cache.Meter
	if err := db.pool.FlushAll(&m); err != nil {
		return fmt.Errorf("engine: checkpoint: %w", err)
	}
	m.CheckpointPages = m.PageFlushes
	db.pool.ChargeBackground(&m)
	if flush {
		if err := db.pool.FlushStore(nil); err != nil {
			return fmt.Errorf("engine: checkpoint: %w", err)
		}
		return db.saveCheckpointLocked(redo)
	}
	return db.recordCheckpointLocked(nil, redo)
}

// fuzzyCheckpointLocked takes a fuzzy checkpoint (InnoDB's, log0chkp.cc):
// it writes no page and stops nobody. Its LSN is the oldest modification
// at the flush list's tail, counting writes in flight (or the log end if
// nothing is dirty); the store is synced, so that the writes that took
// pages off the list are durable, before the LSN is recorded, and the log
// before it is released only after that. If the flush list has not moved
// since the last checkpoint there is nothing to record. Its store sync is
// charged to m, the transaction that takes it (nil: the background).
// REQUIRES: db.ckptMu held.
func (db *DB) fuzzyCheckpointLocked(m *cache.Meter) error {
	db.ckptAt.Store(db.log.End())
	db.setLogMark()
	redo := db.pool.CheckpointLSN()
	if redo <= db.ckptLSN.Load() {
		return nil
	}
	db.pool.SetFullPageHorizon(redo) // see checkpointLocked
	return db.recordCheckpointLocked(m, redo)
}

// recordCheckpointLocked makes the page writes before it durable (a store
// sync, counted as StoreSyncs on m, or on the background meter if m is
// nil) and records redo as the checkpoint LSN (see checkpointLocked).
// REQUIRES: db.ckptMu held.
func (db *DB) recordCheckpointLocked(m *cache.Meter, redo uint64) error {
	if err := db.pool.SyncStore(m); err != nil {
		return fmt.Errorf("engine: checkpoint: %w", err)
	}
	return db.saveCheckpointLocked(redo)
}

// saveCheckpointLocked records redo as the checkpoint LSN once the page
// writes before it are durable (see recordCheckpointLocked), and lets the
// log go below it. REQUIRES: db.ckptMu held.
func (db *DB) saveCheckpointLocked(redo uint64) error {
	keep := redo
	db.crashPoint("checkpoint-synced")
	var rec [24]byte
	binary.LittleEndian.PutUint64(rec[0:], redo)
	binary.LittleEndian.PutUint64(rec[8:], keep)
	binary.LittleEndian.PutUint64(rec[16:], db.txSeq.Load())
	if err := db.log.SaveCheckpoint(rec[:]); err != nil {
		return fmt.Errorf("engine: checkpoint: %w", err)
	}
	db.checkpoints.Add(1)
	db.ckptLSN.Store(redo)
	db.ckptAt.Store(max(db.ckptAt.Load(), redo))
	db.setLogMark()
	return db.log.Checkpointed(redo, keep)
}

// setLogMark sets the log's mark (redo.Log.SetMark) to the lowest end at
// which logFreeCheck or maybeCheckpoint has work: the checkpoint age
// reaching asyncPoint, or CheckpointBytes logged since the last
// checkpoint. Below it both return after reading one flag, not the log's
// end, which every append writes. It is called whenever ckptLSN or ckptAt
// changes; a mark left lower by a stale call only makes them test more
// often. REQUIRES: db.ckptMu held, or db not yet shared.
func (db *DB) setLogMark() {
	db.log.SetMark(min(db.ckptLSN.Load()+db.asyncPoint, db.ckptAt.Load()+uint64(db.opts.CheckpointBytes)))
}

// maybeCheckpoint takes a fuzzy checkpoint when the log has grown by
// CheckpointBytes since the last one. The transaction that crosses the
// mark does it (a store sync, charged to m, and a synced write of the
// record, no page writes); others go on.
func (db *DB) maybeCheckpoint(m *cache.Meter) error {
	if !db.log.Crossed() {
		return nil // below setLogMark's mark, so below this test's
	}
	if db.log.End()-db.ckptAt.Load() < uint64(db.opts.CheckpointBytes) {
		return nil
	}
	if !db.ckptMu.TryLock() {
		return nil
	}
	defer db.ckptMu.Unlock()
	if db.log.End()-db.ckptAt.Load() < uint64(db.opts.CheckpointBytes) {
		return nil
	}
	return db.fuzzyCheckpointLocked(m)
}

// CheckpointAge returns the log end less the last checkpoint's LSN: how
// much log recovery would read, and what the log's capacity bounds.
func (db *DB) CheckpointAge() uint64 { return db.log.End() - db.ckptLSN.Load() }

// logFreeCheck is InnoDB's log_free_check (log0log.cc: log_check_margins,
// log_checkpoint_margin), made at the start of every row operation that
// writes, holding no latch or engine mutex, on the transaction's meter:
//
//   - checkpoint age up to the async point (7/8 of the log capacity,
//     cache.LogAsyncPoint): nothing;
//   - past it: the page cleaner is woken (real mode) and a fuzzy
//     checkpoint is taken if nobody is taking one (InnoDB's
//     max_checkpoint_age_async); under MySQL 5.1's flushing
//     (cache.Flushing51) the transaction also runs 5.1's asynchronous
//     preflush first (asyncPreflush51);
//   - past the sync point (15/16, cache.LogSyncPoint): the transaction
//     waits for log space. It flushes, oldest first, every page whose
//     oldest modification keeps the age above the async point (as
//     log_preflush_pool_modified_pages does; the pages are counted on its
//     meter, PageFlushes and StoreWrites), takes a fuzzy checkpoint, and
//     goes on (Meter.LogFreeCheckWaits); under MySQL 5.1's flushing it
//     flushes less, to 5.1's synchronous target (preflushTarget).
//     Transactions past the sync point flush side by side; each takes the
//     checkpoint after its flush.
//
// This is the only place a transaction waits for log space. It is made at
// row operations, not in BeginMtr, because a mini-transaction may begin
// while its caller holds page latches (a nested one, a B+tree split), and
// a thread that flushes must hold none: a page it must write could be one
// it has latched. InnoDB calls log_free_check at the same places (row
// inserts, updates, deletes, purge), for the same reason.
func (db *DB) logFreeCheck(m *Meter) error {
	if !db.log.Crossed() {
		// The log's end is below setLogMark's mark, so the age is
		// below asyncPoint: InnoDB 5.7's log_free_check returns at once
		// unless log_sys->check_flush_or_checkpoint is set.
		return nil
	}
	age := db.CheckpointAge()
	if age <= db.asyncPoint {
		return nil
	}
	if age <= db.syncPoint {
		db.pool.WakeCleaner()
		if db.flushing51 {
			if err := db.asyncPreflush51(m); err != nil {
				return err
			}
		}
		// A checkpoint each 1/32 of the capacity of log at most (InnoDB's
		// LOG_POOL_CHECKPOINT_RATIO_ASYNC), not at every operation.
		if db.log.End()-db.ckptAt.Load() >= uint64(db.pool.LogCapacity()/32) && db.ckptMu.TryLock() {
			defer db.ckptMu.Unlock()
			return db.fuzzyCheckpointLocked(&m.Meter)
		}
		return nil
	}
	m.LogFreeCheckWaits++
	// A few rounds at most: in real mode other transactions log while
	// this one flushes; the next operation checks again. No mutex is held
	// across the sync or the yield (in the simulator another terminal may
	// run there and come here too).
	for range 4 {
		end := db.log.End()
		if end-db.ckptLSN.Load() <= db.syncPoint {
			return nil
		}
		if err := db.flushForLogSpace(m, end, db.preflushTarget(end)); err != nil {
			return err
		}
		db.crashPoint("free-check-flushed")
		db.ckptMu.Lock()
		err := db.fuzzyCheckpointLocked(&m.Meter)
		db.ckptMu.Unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

// preflushTarget is the LSN a transaction past the sync point flushes the
// pool up to, the log's end being end: every page whose oldest change
// keeps the age above the async point (InnoDB 8.0's target), or under
// MySQL 5.1's flushing (cache.Flushing51) what 5.1's
// log_checkpoint_margin asks of its synchronous preflush: the oldest
// modification advanced by twice the age's overshoot past the sync
// point, which brings the age back below the sync point by the
// overshoot. 5.1's is far less at once: a large pool's oldest 1/16 of the
// log can be tens of thousands of pages, all on the caller's meter.
func (db *DB) preflushTarget(end uint64) uint64 {
	if !db.flushing51 {
		return end - db.asyncPoint
	}
	age := db.modifiedAge(end)
	oldest := end - age
	if age > db.syncPoint {
		return oldest + 2*(age-db.syncPoint)
	}
	return oldest
}

// modifiedAge is MySQL 5.1's modified age at the log's end end: end less
// the flush list's oldest modification, 0 if the list is empty.
// CheckpointLSN reads the log's end again, so with an empty list it can
// be past end (the uint64 difference would wrap).
func (db *DB) modifiedAge(end uint64) uint64 {
	oldest := db.pool.CheckpointLSN()
	if oldest >= end {
		return 0
	}
	return end - oldest
}

// asyncPreflush51 is MySQL 5.1's asynchronous preflush
// (log_checkpoint_margin): past the async point the thread writes, from
// the flush list's oldest end, the pages that keep the modified age (the
// log's end less the oldest modification) above it, and goes on without
// waiting for the batch to end. 5.1 has no page cleaner, so this, the
// synchronous preflush past the sync point and the master thread's
// batches are all that write by age. One asynchronous preflush runs at a
// time: a transaction that finds one running goes on (5.1's
// buf_flush_batch returns at once while any flush-list batch runs; here
// only the asynchronous preflushes exclude each other, and one may run
// beside a synchronous preflush or a master batch). Its writes are on
// the transaction's meter (PageFlushes); the simulator prices them as
// any of the transaction's writes.
func (db *DB) asyncPreflush51(m *Meter) error {
	if !db.preflushMu.TryLock() {
		return nil
	}
	defer db.preflushMu.Unlock()
	end := db.log.End()
	if db.modifiedAge(end) <= db.asyncPoint {
		return nil
	}
	return db.flushForLogSpace(m, end, end-db.asyncPoint)
}

// flushForLogSpace writes, on m, every page whose oldest change is below
// target, the log's end being end. One group sync first makes every
// page's log up to end durable, so that the writes need not wait for it
// one by one; then a yield point (the simulator's: another terminal
// whose page write waited for this sync runs on, and lets go of its
// latches, before this one writes pages).
func (db *DB) flushForLogSpace(m *Meter, end, target uint64) error {
	if err := db.log.SyncTo(&m.Counts, end); err != nil {
		return fmt.Errorf("engine: flush for log space: %w", err)
	}
	if h := db.calls; h != nil {
		h.BeforeCall(m)
	}
	if _, err := db.pool.FlushUpTo(&m.Meter, target); err != nil {
		return fmt.Errorf("engine: flush for log space: %w", err)
	}
	return nil
}

// LogStats are the redo log's totals since Open, with the checkpoints
// taken.
type LogStats struct {
	redo.LogStats
	Checkpoints int64
}

// LogStats returns the redo log's totals.
func (db *DB) LogStats() LogStats {
	return LogStats{LogStats: db.log.Stats(), Checkpoints: db.checkpoints.Load()}
}
