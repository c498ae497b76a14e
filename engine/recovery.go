package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/heap"
)

// loser is a transaction recovery found unfinished: its undo log, its
// steps (oldest first), and which of them a rollback already undid (and
// where it put each row back).
type loser struct {
	id     uint64
	undo   txUndo
	steps  []step
	undone []int
	moved  []heap.RowPtr
}

// recover redoes the log from the last checkpoint: pages only. The
// transactions to roll back are found afterwards, on their undo pages
// (openUndo). The checkpoint record is drawn beside checkpointLocked.
func (db *DB) recover() error {
	from := uint64(redo.FirstLSN)
	rec, err := db.log.LoadCheckpoint()
	if err != nil {
		return err
	}
	if rec != nil {
		if len(rec) != 24 {
			return fmt.Errorf("%w: checkpoint record of %d bytes", redo.ErrCorruptLog, len(rec))
		}
		from = binary.LittleEndian.Uint64(rec[0:])
		db.txSeq.Store(binary.LittleEndian.Uint64(rec[16:]))
	}
	var pages []redo.PageRedo
	bg := &cache.Meter{}
	rs := &db.recovered
	err = db.log.Scan(from, func(lsn uint64, body []byte) error {
		var err error
		pages, _, err = redo.Decode(body, pages)
		if err != nil {
			return fmt.Errorf("record at LSN %d: %w", lsn, err)
		}
		for i := range pages {
			applied, err := db.pool.Redo(bg, lsn, &pages[i])
			if err != nil {
				return fmt.Errorf("redo of record at LSN %d: %w", lsn, err)
			}
			if applied {
				rs.PagesApplied++
			} else {
				rs.PagesSkipped++
			}
		}
		rs.Pages += int64(len(pages))
		rs.Records++
		return nil
	})
	db.pool.ChargeBackground(bg)
	if err != nil {
		return fmt.Errorf("engine: recovery: %w", err)
	}
	// The log's end is where the scan stopped: the first frame that did
	// not verify (redo.Open found it, and the log continues there).
	rs.CheckpointLSN, rs.EndLSN = from, db.log.End()
	if rs.EndLSN > from {
		rs.Bytes = int64(rs.EndLSN - from)
	}
	rs.PagesRead = bg.StoreReads
	// Redo changed pages without mini-transactions: put them on the flush
	// list, so that no fuzzy checkpoint passes them before they are
	// written (Open's sharp checkpoint writes them anyway).
	db.pool.ListRecovered(from)
	db.ckptLSN.Store(from)
	db.ckptAt.Store(db.log.End())
	db.setLogMark()
	return nil
}

// rollBackLosers undoes every unfinished transaction recovery found on the
// undo pages, each from where its own rollback (if any) stopped, newest
// transaction first, and empties its undo log.
func (db *DB) rollBackLosers() error {
	var errs []error
	losers := db.undo.losers
	db.undo.losers = nil
	sortLosers(losers)
	// The losers are active until rolled back (InnoDB's recovered
	// transactions are in trx_sys as active): purge views and rollback's
	// own checks (a version of theirs is no committed one) must see them
	// so.
	db.trx.mu.Lock()
	for _, l := range losers {
		db.trx.rw = append(db.trx.rw, l.id)
	}
	slices.Sort(db.trx.rw)
	db.trx.mu.Unlock()
	defer func() {
		db.trx.mu.Lock()
		db.trx.rw = db.trx.rw[:0]
		db.trx.mu.Unlock()
	}()
	for _, l := range losers {
		u := &undoer{db: db, tx: l.id, steps: l.steps, done: make([]bool, len(l.steps)),
			remap: make(map[heap.RowPtr]heap.RowPtr)}
		for j, n := range l.undone {
			u.done[n] = true
			if k := l.steps[n].kind; k == stepHeapDelete || k == stepHeapUpdate {
				u.remap[l.steps[n].ptr] = l.moved[j]
			}
		}
		if err := u.run(); err != nil {
			errs = append(errs, err)
			continue
		}
		mt := db.pool.BeginMtr(nil)
		err := db.undoEnd(mt, l.undo)
		mt.Commit()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		db.cacheUndo(l.undo)
		db.recovered.RolledBack++
	}
	return errors.Join(errs...)
}

// RecoveryStats says what opening the database had to do: the redo from
// the last checkpoint to the log's end, the rollback of the transactions
// whose undo logs were still active, and the sharp checkpoint Open takes
// after them. A database closed by Close recovers nothing (Recovered is
// false): its last checkpoint is the log's end. One closed by CloseFast
// redoes the log from its last checkpoint, as after a crash (Recovered is
// true).
type RecoveryStats struct {
	Records int64 // log records redone (at or after the checkpoint)
	// Pages counts the page changes in those records: PagesApplied were
	// redone, PagesSkipped were found already on their page (its LSN at
	// or past the record's: the page was written after the change).
	// Pages = PagesApplied + PagesSkipped.
	Pages, PagesApplied, PagesSkipped int64
	// PagesRead counts the pages redo read from the store to apply or
	// skip the changes (the buffer pool's misses during redo).
	PagesRead  int64
	RolledBack int64 // transactions rolled back
	// HistoryLogs counts the committed undo logs found on the history
	// list (undolog.go): purge had not freed them. Open purges them once
	// the rollback is done (no read view survives a crash).
	HistoryLogs int64
	// CheckpointLSN is where redo began (the last checkpoint's LSN) and
	// EndLSN where the log ended; Bytes = EndLSN − CheckpointLSN, the log
	// scanned (frames, and a segment's header and tail where redo crossed
	// into the next one).
	CheckpointLSN, EndLSN uint64
	Bytes                 int64
	// The wall time of each phase: Redo (the scan and the page changes),
	// Rollback (finding the unfinished transactions on the rollback
	// segment and undoing them), Checkpoint (the sharp checkpoint that
	// writes every page recovery dirtied).
	Redo, Rollback, Checkpoint time.Duration
}

// Recovered says whether Open had anything to recover: a record to redo
// or a transaction to roll back.
func (s RecoveryStats) Recovered() bool { return s.Records > 0 || s.RolledBack > 0 }

// DoublewriteRecovery returns what the last Open found in the doublewrite
// file (cache.TornPagesDoublewrite), before redo: the last batch, its
// torn slots (ignored) and the pages it restored. Zero if there was no
// file.
func (db *DB) DoublewriteRecovery() cache.DoublewriteRecovery { return db.dwRecovery }

// Recovery returns what the last Open recovered.
func (db *DB) Recovery() RecoveryStats { return db.recovered }
