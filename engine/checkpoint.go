package engine

import (
	"encoding/binary"
	"fmt"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/redo"
)

// Checkpoint writes every dirty page, makes it durable, records where
// recovery will start, and drops the log before that (transactions keep
// their undo on undo pages, so no transaction holds the log back). Its
// page writes are
// charged to the pool's background meter.
func (db *DB) Checkpoint() error {
	db.ckptMu.Lock()
	defer db.ckptMu.Unlock()
	return db.checkpointLocked()
}

// checkpointLocked takes a checkpoint. REQUIRES: db.ckptMu held.
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
// redo is the log end when the checkpoint began: every change logged
// before it is on a page the store has synced, so recovery redoes pages
// from there. keep is where the log is kept from: redo too, since undo
// lives on undo pages (the field stays for a log that must keep more).
// tx seq is the last transaction id handed out (recovery also raises it to
// the rollback segment's max tx id, so that ids are never reused). With no
// record saved yet (a new database), recovery starts at redo.FirstLSN; a
// record of any other length is redo.ErrCorruptLog.
func (db *DB) checkpointLocked() error {
	redo := db.log.End()
	keep := redo
	// Full-page writes: a page changed from here on, whose LSN is below
	// redo, logs its image first (PostgreSQL's RedoRecPtr).
	db.pool.SetFullPageHorizon(redo)
	before := db.pool.BackgroundMeter()
	if err := db.pool.FlushAll(nil); err != nil {
		return fmt.Errorf("engine: checkpoint: %w", err)
	}
	after := db.pool.BackgroundMeter()
	db.pool.ChargeBackground(&cache.Meter{CheckpointPages: after.PageFlushes - before.PageFlushes})
	if err := db.store.Sync(); err != nil {
		return fmt.Errorf("engine: checkpoint: %w", err)
	}
	var rec [24]byte
	binary.LittleEndian.PutUint64(rec[0:], redo)
	binary.LittleEndian.PutUint64(rec[8:], keep)
	binary.LittleEndian.PutUint64(rec[16:], db.txSeq.Load())
	if err := db.log.SaveCheckpoint(rec[:]); err != nil {
		return fmt.Errorf("engine: checkpoint: %w", err)
	}
	db.checkpoints.Add(1)
	return db.log.Checkpointed(redo, keep)
}

// maybeCheckpoint checkpoints when the log has grown by CheckpointBytes
// since the last one. The transaction that crosses the mark does it (on
// the background meter); others go on.
func (db *DB) maybeCheckpoint() error {
	if db.log.SinceCheckpoint() < uint64(db.opts.CheckpointBytes) {
		return nil
	}
	if !db.ckptMu.TryLock() {
		return nil
	}
	defer db.ckptMu.Unlock()
	if db.log.SinceCheckpoint() < uint64(db.opts.CheckpointBytes) {
		return nil
	}
	return db.checkpointLocked()
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
