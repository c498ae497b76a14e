package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/heap"
)

// loser is a transaction recovery found unfinished.
type loser struct {
	steps []step
	clrs  []txNote
}

// recover redoes the log from the last checkpoint and returns the
// transactions that never finished, to be rolled back once the catalog is
// open. The checkpoint record is drawn beside checkpointLocked, the
// transaction notes beside noteStep and encodeStep.
func (db *DB) recover() (map[uint64]*loser, error) {
	from, keep := uint64(redo.FirstLSN), uint64(redo.FirstLSN)
	rec, err := db.log.LoadCheckpoint()
	if err != nil {
		return nil, err
	}
	if rec != nil {
		if len(rec) != 24 {
			return nil, fmt.Errorf("%w: checkpoint record of %d bytes", redo.ErrCorruptLog, len(rec))
		}
		from = binary.LittleEndian.Uint64(rec[0:])
		keep = binary.LittleEndian.Uint64(rec[8:])
		db.txSeq.Store(binary.LittleEndian.Uint64(rec[16:]))
	}
	losers := make(map[uint64]*loser)
	var pages []redo.PageRedo
	bg := &cache.Meter{}
	err = db.log.Scan(min(from, keep), func(lsn uint64, body []byte) error {
		var note []byte
		var err error
		pages, note, err = redo.Decode(body, pages)
		if err != nil {
			return fmt.Errorf("record at LSN %d: %w", lsn, err)
		}
		if lsn >= from {
			for i := range pages {
				if _, err := db.pool.Redo(bg, lsn, &pages[i]); err != nil {
					return fmt.Errorf("redo of record at LSN %d: %w", lsn, err)
				}
			}
			db.recovered.pages += int64(len(pages))
			db.recovered.records++
		}
		if len(note) == 0 {
			return nil
		}
		n, err := decodeNote(note)
		if err != nil {
			return fmt.Errorf("record at LSN %d: %w", lsn, err)
		}
		if n.tx > db.txSeq.Load() {
			db.txSeq.Store(n.tx)
		}
		// Records of a transaction that began before the scan start
		// (it had finished when the checkpoint was taken) may follow:
		// its end record is among them, so it is dropped before the end.
		l := losers[n.tx]
		if l == nil && (n.kind == noteStep || n.kind == noteCLR) {
			l = &loser{}
			losers[n.tx] = l
		}
		switch n.kind {
		case noteStep:
			s := n.step
			s.key = append([]byte(nil), s.key...)
			s.val = append([]byte(nil), s.val...)
			l.steps = append(l.steps, s)
		case noteCLR:
			n.lsn = lsn
			l.clrs = append(l.clrs, n)
		case noteCommit, noteEnd:
			delete(losers, n.tx)
		}
		return nil
	})
	db.pool.ChargeBackground(bg)
	if err != nil {
		return nil, fmt.Errorf("engine: recovery: %w", err)
	}
	// Redo changed pages without mini-transactions: put them on the flush
	// list, so that no fuzzy checkpoint passes them before they are
	// written (Open's sharp checkpoint writes them anyway).
	db.pool.ListRecovered(from)
	db.ckptLSN.Store(from)
	db.ckptAt.Store(db.log.End())
	return losers, nil
}

// rollBackLosers undoes every unfinished transaction recovery found, each
// from where its own rollback (if any) stopped.
func (db *DB) rollBackLosers(losers map[uint64]*loser) error {
	var errs []error
	// Newest transaction first, so that the order (and the pages the
	// undo writes) is the same on every run.
	ids := slices.Sorted(maps.Keys(losers))
	slices.Reverse(ids)
	for _, id := range ids {
		l := losers[id]
		u := &undoer{db: db, tx: id, steps: l.steps, done: make([]bool, len(l.steps)),
			remap: make(map[heap.RowPtr]heap.RowPtr)}
		var bad error
		for _, c := range l.clrs {
			if c.n >= len(l.steps) {
				bad = fmt.Errorf("%w: compensation at LSN %d for step %d of unfinished transaction %d, which logged %d steps since the checkpoint",
					redo.ErrCorruptLog, c.lsn, c.n, id, len(l.steps))
				break
			}
			u.done[c.n] = true
			if k := l.steps[c.n].kind; k == stepHeapDelete || k == stepHeapUpdate {
				u.remap[l.steps[c.n].ptr] = c.ptr
			}
		}
		if bad != nil {
			errs = append(errs, bad)
			continue
		}
		if err := u.run(); err != nil {
			errs = append(errs, err)
			continue
		}
		db.writeNote(nil, endNote(id))
		db.recovered.rolledBack++
	}
	return errors.Join(errs...)
}

// RecoveryStats says what opening the database had to do.
type RecoveryStats struct {
	Records    int64 // log records redone (at or after the checkpoint)
	Pages      int64 // page changes in them (applied or found already on the page)
	RolledBack int64 // transactions rolled back
}

// Recovery returns what the last Open recovered.
func (db *DB) Recovery() RecoveryStats {
	return RecoveryStats{Records: db.recovered.records, Pages: db.recovered.pages, RolledBack: db.recovered.rolledBack}
}
