package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/enginelab/enginelab/heap"
)

// Undo logs live on undo pages in space 0, the system space (InnoDB kept
// its rollback segments in the system tablespace, space 0, too). Page 1 of
// the space is the rollback segment header: the history list's base node
// (InnoDB's TRX_RSEG_HISTORY), a slot per undo log in use by a
// transaction, as InnoDB's rseg header (TRX_RSEG_UNDO_SLOTS, 1024 slots on
// 16 KiB pages), and the transaction id high-water mark:
//
//	0          32       36       38       40             48         52         56         60       64
//	+----------+--------+--------+--------+--------------+----------+----------+----------+--------+--------+--------+-----
//	| page hdr | magic  | nslots | unused |  max tx id   | hist len | hist     | hist     | unused | slot 0 | slot 1 | ...
//	|  (32B)   | "ELRH" |  (2B)  |  (2B)  |    (8B)      |   (4B)   | first(4B)| last (4B)|  (4B)  |  (4B)  |  (4B)  |
//	+----------+--------+--------+--------+--------------+----------+----------+----------+--------+--------+--------+-----
//
// A slot holds the first page of an undo log (active, or cached for the
// next transaction), or 0. "max tx id" is above every transaction id that
// ever wrote: it is raised by txIDMargin at a time, in the
// mini-transaction of the first write of a transaction whose id reaches
// it, as InnoDB writes its max trx id every TRX_SYS_TRX_ID_WRITE_MARGIN
// (256) ids; recovery starts the ids there, so an id is never handed out
// twice.
//
// An undo log is a chain of undo pages. Its first page's header says
// whether the transaction is active, which transaction, where records end
// on this page, the next page, (first page) the last one, and the next
// log on the history list:
//
//	0          32      33       34      36      40             48       52       56          60
//	+----------+-------+--------+-------+-------+--------------+--------+--------+-----------+---------
//	| page hdr | state | unused | slot  | free  |    tx id     |  next  |  last  | hist next | records
//	|  (32B)   | (1B)  |  (1B)  | (2B)  | (4B)  |     (8B)     |  (4B)  |  (4B)  |   (4B)    | ...
//	+----------+-------+--------+-------+-------+--------------+--------+--------+-----------+---------
//
//	state: 0 cached (free for the next transaction), 1 active,
//	       2 to purge (committed, on the history list)
//	free:  where the next record goes on this page
//
// A record, appended at "free" by one redo operation (undo-append: its
// bytes, a few more than the record) in the same mini-transaction as the
// change it undoes:
//
//	+-----------+-------+--------------------------------+-----------------+
//	|  length   | flags | body: the step (encodeStep)    | moved (row ptr) |
//	|  (2B)     | (1B)  | length bytes                   | (6B, heap 'D'   |
//	|           |       |                                |  and 'U' only)  |
//	+-----------+-------+--------------------------------+-----------------+
//	flags bit 0: undone (a rollback took the step back; for a heap delete
//	or update, moved says where the undo put the row), written with the
//	undo's own change
//
// At commit, in the commit's mini-transaction, a log without records that
// build older versions of clustered records (inserts, and every heap
// step) is emptied (state cached, free back to the first record, the
// pages after the first freed) and kept in its slot for the next
// transaction, as InnoDB frees an insert undo log at commit and caches
// undo logs of one page (TRX_UNDO_CACHED). A log with such records
// (updates, delete-marks) goes to the history list instead
// (trx_purge_add_undo_to_history): its state becomes "to purge", it is
// linked at the list's tail (the previous tail's "hist next", or the base
// node's first, and the base node's last and length), and its slot is
// freed for another transaction. Purge (purge.go) takes the logs from the
// list's head, in commit order; freeing one unlinks it in one
// mini-transaction (the base node's first and length) and puts its first
// page, emptied, back in a free slot as a cached log (the pages after it,
// and the first if no slot is free, go back to the free list).
//
// The history list is on the pages, logged like any change, so it survives
// a crash: recovery walks it from the base node and purge resumes where it
// stopped (a log it was purging is purged again; each removal finds what
// it already did done). After redo, every slot whose log is active is a
// transaction a crash interrupted: its records are read back and rolled
// back (the undone ones skipped), and its log emptied.
//
// Latch order: the rollback segment page before any undo log page (a
// commit that links its log latches the rseg page, then its own first
// page, then the previous tail's; purge the rseg page, then the head's).
//
// The redo log therefore never has to keep a transaction's records: a
// checkpoint may drop everything before its LSN, however old the oldest
// active transaction.
const (
	undoSpace = 0
	rsegPage  = 1
	rsegMagic = 0x48524c45 // "ELRH" little-endian (the layout with the history list)

	offRsegMagic     = page.HeaderSize
	offRsegNSlots    = page.HeaderSize + 4
	offRsegMaxTx     = page.HeaderSize + 8
	offRsegHistLen   = page.HeaderSize + 16
	offRsegHistFirst = page.HeaderSize + 20
	offRsegHistLast  = page.HeaderSize + 24
	offRsegSlots     = page.HeaderSize + 32
	maxRsegSlots     = 1024

	offUndoState    = page.HeaderSize
	offUndoSlot     = page.HeaderSize + 2
	offUndoFree     = page.HeaderSize + 4
	offUndoTx       = page.HeaderSize + 8
	offUndoNext     = page.HeaderSize + 16
	offUndoLast     = page.HeaderSize + 20
	offUndoHistNext = page.HeaderSize + 24
	undoRecStart    = page.HeaderSize + 28

	undoRecHeader = 3 // length, flags
	undoMoved     = 6 // the moved row pointer after a heap step's body

	undoCached  = 0
	undoActive  = 1
	undoToPurge = 2 // committed, kept for older read views (TRX_UNDO_TO_PURGE)

	txIDMargin = 256

	// kindUndoAppend is the redo operation that appends a record to an
	// undo page: its payload is the record's bytes.
	kindUndoAppend redo.Kind = 96
)

func init() {
	redo.Register(kindUndoAppend, "undo-append", applyUndoAppend)
}

func applyUndoAppend(_ page.ID, buf, payload []byte) error {
	if len(buf) < undoRecStart || page.KindOf(buf) != page.KindUndo {
		return fmt.Errorf("undo append on a page of kind %s", page.KindOf(buf))
	}
	free := int(binary.LittleEndian.Uint32(buf[offUndoFree:]))
	if free < undoRecStart || free > len(buf) || len(payload) > len(buf)-free {
		return fmt.Errorf("undo record of %d bytes at %d does not fit", len(payload), free)
	}
	copy(buf[free:], payload)
	binary.LittleEndian.PutUint32(buf[offUndoFree:], uint32(free+len(payload)))
	return nil
}

// undoPos is where an undo record sits, and (heap steps) where its moved
// row pointer does.
type undoPos struct {
	page  uint32
	off   uint32
	moved uint32
}

// hasMoved says whether a step kind's record carries a moved row pointer.
func hasMoved(kind byte) bool { return kind == stepHeapDelete || kind == stepHeapUpdate }

// txUndo is a transaction's undo log.
type txUndo struct {
	first, last uint32 // pages (0: none yet)
	free        uint32 // where the next record goes on last (active logs)
	slot        int
}

// undoSys is the DB's view of the rollback segment.
type undoSys struct {
	mu        sync.Mutex
	nslots    int
	freeSlots []int    // free slots, highest first (taken from the end)
	cached    []txUndo // emptied undo logs ready for reuse
	maxTx     uint64   // the rseg's max tx id
	losers    []*loser // found at recovery
	// history mirrors the history list on the pages: the committed undo
	// logs kept for read views, in commit order; purged from the front.
	// A commit appends under the rseg page's latch, so the order is the
	// pages' order.
	history []histLog
	// histLen is len(history), stored under mu at every change and
	// read without it (historyLen): committing transactions look at the
	// purge lag (wakePurge) without taking mu, as InnoDB's
	// trx_sys->rseg_history_len is an atomic counter.
	histLen atomic.Int64
	purgeMu sync.Mutex // one purge at a time (guards purgeBuf)
	// purgeBuf holds the copy of the undo page purge works on, kept from
	// one log to the next (a log's records are copied page by page).
	purgeBuf []byte
}

// histLog is a committed undo log on the history list.
type histLog struct {
	l     txUndo
	trxID uint64
}

// openUndo opens the rollback segment, creating the system space on a new
// database, and finds the undo logs recovery must roll back.
func (db *DB) openUndo() error {
	u := &db.undo
	pg, err := db.pool.Fetch(nil, page.ID{Space: undoSpace, Page: rsegPage})
	if errors.Is(err, store.ErrPageNotFound) {
		return db.createUndo()
	}
	if err != nil {
		return fmt.Errorf("engine: open undo: %w", err)
	}
	pg.RLatch()
	b := pg.Data()
	var slots []uint32
	var histLen, histFirst, histLast uint32
	if page.KindOf(b) != page.KindUndo || binary.LittleEndian.Uint32(b[offRsegMagic:]) != rsegMagic {
		err = fmt.Errorf("%w: rollback segment page %s: kind %s, magic %08x", cache.ErrBadFormat, pg.ID(), page.KindOf(b), binary.LittleEndian.Uint32(b[offRsegMagic:]))
	} else {
		u.nslots = int(binary.LittleEndian.Uint16(b[offRsegNSlots:]))
		u.maxTx = binary.LittleEndian.Uint64(b[offRsegMaxTx:])
		histLen = binary.LittleEndian.Uint32(b[offRsegHistLen:])
		histFirst = binary.LittleEndian.Uint32(b[offRsegHistFirst:])
		histLast = binary.LittleEndian.Uint32(b[offRsegHistLast:])
		if u.nslots > (len(b)-offRsegSlots)/4 {
			err = fmt.Errorf("%w: rollback segment has %d slots", cache.ErrBadFormat, u.nslots)
		} else {
			for i := range u.nslots {
				slots = append(slots, binary.LittleEndian.Uint32(b[offRsegSlots+4*i:]))
			}
		}
	}
	pg.RUnlatch()
	pg.Unpin(false)
	if err != nil {
		return err
	}
	if u.maxTx > db.txSeq.Load() {
		db.txSeq.Store(u.maxTx)
	}
	for i := len(slots) - 1; i >= 0; i-- {
		if slots[i] == 0 {
			u.freeSlots = append(u.freeSlots, i)
		}
	}
	for i, first := range slots {
		if first == 0 {
			continue
		}
		l, state, err := db.readUndo(first, i)
		if err != nil {
			return err
		}
		if state == undoToPurge {
			return fmt.Errorf("%w: undo slot %d holds a committed log (page %d), which belongs on the history list", cache.ErrBadFormat, i, first)
		}
		if l == nil {
			u.cached = append(u.cached, txUndo{first: first, last: first, slot: i})
			continue
		}
		u.losers = append(u.losers, l)
	}
	return db.readHistory(histLen, histFirst, histLast)
}

// readHistory reads the history list from its base node (length, first
// and last log) by following each log's "hist next": the committed logs a
// crash left for purge, resumed once recovery is done.
func (db *DB) readHistory(n, first, last uint32) error {
	u := &db.undo
	prev := uint32(0)
	for no := first; no != 0; {
		if len(u.history) >= int(n) {
			return fmt.Errorf("%w: the history list runs past its length %d", cache.ErrBadFormat, n)
		}
		id := page.ID{Space: undoSpace, Page: no}
		pg, err := db.pool.Fetch(nil, id)
		if err != nil {
			return fmt.Errorf("engine: read the history list: %w", err)
		}
		pg.RLatch()
		b := pg.Data()
		kind, state := page.KindOf(b), b[offUndoState]
		tx := binary.LittleEndian.Uint64(b[offUndoTx:])
		next := binary.LittleEndian.Uint32(b[offUndoHistNext:])
		pg.RUnlatch()
		pg.Unpin(false)
		if kind != page.KindUndo || state != undoToPurge {
			return fmt.Errorf("%w: history list entry %s has kind %s, state %d", cache.ErrBadFormat, id, kind, state)
		}
		u.history = append(u.history, histLog{l: txUndo{first: no, last: no, slot: -1}, trxID: tx})
		prev, no = no, next
	}
	if len(u.history) != int(n) || prev != last {
		return fmt.Errorf("%w: the history list has %d logs ending at page %d, its base node says %d ending at %d", cache.ErrBadFormat, len(u.history), prev, n, last)
	}
	u.histLen.Store(int64(n))
	db.recovered.HistoryLogs = int64(n)
	return nil
}

// createUndo creates the system space and its rollback segment header.
func (db *DB) createUndo() error {
	if err := db.pool.CreateSpace(nil, undoSpace); err != nil {
		return fmt.Errorf("engine: create undo space: %w", err)
	}
	mt := db.pool.BeginMtr(nil)
	pg, err := db.pool.AllocPage(mt, nil, undoSpace, page.KindUndo)
	if err != nil {
		mt.Commit()
		return fmt.Errorf("engine: create rollback segment: %w", err)
	}
	if pg.ID().Page != rsegPage {
		mt.Release(pg, true)
		mt.Commit()
		return fmt.Errorf("%w: the rollback segment got page %s", cache.ErrBadFormat, pg.ID())
	}
	n := min(maxRsegSlots, (db.pool.PageSize()-offRsegSlots)/4)
	var hdr [16]byte
	binary.LittleEndian.PutUint32(hdr[0:], rsegMagic)
	binary.LittleEndian.PutUint16(hdr[4:], uint16(n))
	binary.LittleEndian.PutUint64(hdr[8:], db.txSeq.Load())
	mt.Write(pg, offRsegMagic, hdr[:])
	mt.Release(pg, true)
	mt.Commit()
	u := &db.undo
	u.nslots = n
	u.maxTx = db.txSeq.Load()
	for i := n - 1; i >= 0; i-- {
		u.freeSlots = append(u.freeSlots, i)
	}
	return nil
}

// readUndo reads the undo log that starts at page first (slot slot) and
// returns its state; if it is active, the interrupted transaction with
// its steps, the undone ones marked.
func (db *DB) readUndo(first uint32, slot int) (*loser, byte, error) {
	var l *loser
	var state byte
	for no, hops := first, 0; no != 0; hops++ {
		id := page.ID{Space: undoSpace, Page: no}
		pg, err := db.pool.Fetch(nil, id)
		if err != nil {
			return nil, 0, fmt.Errorf("engine: read undo log of slot %d: %w", slot, err)
		}
		pg.RLatch()
		b := pg.Data()
		err = func() error {
			if page.KindOf(b) != page.KindUndo {
				return fmt.Errorf("%w: undo page %s has kind %s", cache.ErrBadFormat, id, page.KindOf(b))
			}
			if no == first {
				state = b[offUndoState]
				if state != undoActive {
					if state != undoCached && state != undoToPurge {
						return fmt.Errorf("%w: undo page %s has state %d", cache.ErrBadFormat, id, state)
					}
					return nil
				}
				l = &loser{id: binary.LittleEndian.Uint64(b[offUndoTx:]),
					undo: txUndo{first: first, last: binary.LittleEndian.Uint32(b[offUndoLast:]), slot: slot}}
			}
			free := int(binary.LittleEndian.Uint32(b[offUndoFree:]))
			if free < undoRecStart || free > len(b) || hops > 1<<20 {
				return fmt.Errorf("%w: undo page %s: records end at %d", cache.ErrBadFormat, id, free)
			}
			for off := undoRecStart; off < free; {
				if free-off < undoRecHeader {
					return fmt.Errorf("%w: undo page %s: record header at %d runs past %d", cache.ErrBadFormat, id, off, free)
				}
				n := int(binary.LittleEndian.Uint16(b[off:]))
				end := off + undoRecHeader + n
				if end > free {
					return fmt.Errorf("%w: undo page %s: record at %d runs past %d", cache.ErrBadFormat, id, off, free)
				}
				s, err := decodeStep(b[off+undoRecHeader : end])
				if err != nil {
					return fmt.Errorf("undo page %s, record at %d: %w", id, off, err)
				}
				s.at = undoPos{page: no, off: uint32(off), moved: uint32(end)}
				var moved heap.RowPtr
				if hasMoved(s.kind) {
					if end+undoMoved > free {
						return fmt.Errorf("%w: undo page %s: record at %d runs past %d", cache.ErrBadFormat, id, off, free)
					}
					if b[off+2]&1 != 0 {
						if moved, err = heap.DecodeRowPtr(b[end : end+undoMoved]); err != nil {
							return fmt.Errorf("%w: undo page %s, record at %d: %w", cache.ErrBadFormat, id, off, err)
						}
					}
					end += undoMoved
				}
				if b[off+2]&1 != 0 {
					l.undone = append(l.undone, len(l.steps))
					l.moved = append(l.moved, moved)
				}
				l.steps = append(l.steps, s)
				off = end
			}
			return nil
		}()
		next := binary.LittleEndian.Uint32(b[offUndoNext:])
		pg.RUnlatch()
		pg.Unpin(false)
		if err != nil || l == nil {
			return nil, state, err
		}
		no = next
	}
	return l, state, nil
}

// undoHeader writes an undo page's header fields after its page header.
func undoHeader(mt *cache.Mtr, pg *cache.Page, state byte, slot int, tx uint64, last uint32) {
	var h [undoRecStart - page.HeaderSize]byte
	h[0] = state
	binary.LittleEndian.PutUint16(h[offUndoSlot-page.HeaderSize:], uint16(slot))
	binary.LittleEndian.PutUint32(h[offUndoFree-page.HeaderSize:], undoRecStart)
	binary.LittleEndian.PutUint64(h[offUndoTx-page.HeaderSize:], tx)
	binary.LittleEndian.PutUint32(h[offUndoLast-page.HeaderSize:], last)
	mt.Write(pg, page.HeaderSize, h[:])
}

// undoBegin gives tx an undo log, in mt (the mini-transaction of its first
// change): a cached one when there is one, else a new page in a free slot.
func (tx *Tx) undoBegin(mt *cache.Mtr) error {
	l, raise, maxTx, err := tx.undoTake()
	if err != nil {
		return err
	}
	return tx.undoStart(mt, l, raise, maxTx)
}

// undoTake takes an undo log for tx from the rollback segment's memory
// (a cached log, else a free slot with no page yet: l.first == 0), and
// says whether its start must raise the max tx id, to what. The pages are
// written by undoStart.
func (tx *Tx) undoTake() (l txUndo, raise bool, maxTx uint64, err error) {
	tx.assignTrxID()
	u := &tx.db.undo
	u.mu.Lock()
	defer u.mu.Unlock()
	if n := len(u.cached); n > 0 {
		l = u.cached[n-1]
		u.cached = u.cached[:n-1]
	} else if n := len(u.freeSlots); n > 0 {
		l.slot = u.freeSlots[n-1]
		u.freeSlots = u.freeSlots[:n-1]
	} else {
		return l, false, 0, fmt.Errorf("%w: all %d undo slots are in use by active transactions", ErrTooManyTransactions, u.nslots)
	}
	raise = tx.trxID >= u.maxTx
	if raise {
		u.maxTx = tx.trxID + txIDMargin
	}
	return l, raise, u.maxTx, nil
}

// undoStart writes, in mt, the start of undo log l for tx (undoTake):
// its first page's header (allocating the page for a new slot) and, if
// raise, the rollback segment's new max tx id.
func (tx *Tx) undoStart(mt *cache.Mtr, l txUndo, raise bool, maxTx uint64) error {
	db := tx.db
	m := mt.Meter()
	var rseg *cache.Page
	if raise || l.first == 0 {
		var err error
		if rseg, err = db.pool.Fetch(m, page.ID{Space: undoSpace, Page: rsegPage}); err != nil {
			return tx.undoBeginFailed(l, err)
		}
		mt.Latch(rseg)
	}
	if l.first == 0 {
		pg, err := db.pool.AllocPage(mt, nil, undoSpace, page.KindUndo)
		if err != nil {
			mt.Release(rseg, false)
			return tx.undoBeginFailed(l, err)
		}
		l.first, l.last = pg.ID().Page, pg.ID().Page
		mt.Write32(rseg, offRsegSlots+4*l.slot, l.first)
		undoHeader(mt, pg, undoActive, l.slot, tx.trxID, l.first)
		mt.Release(pg, true)
	} else {
		pg, err := db.pool.Fetch(m, page.ID{Space: undoSpace, Page: l.first})
		if err != nil {
			if rseg != nil {
				mt.Release(rseg, false)
			}
			return tx.undoBeginFailed(l, err)
		}
		mt.Latch(pg)
		undoHeader(mt, pg, undoActive, l.slot, tx.trxID, l.first)
		mt.Release(pg, true)
	}
	if rseg != nil {
		// The mark never goes down: a concurrent raise may have
		// reached the page first (logMaxTx).
		if raise && binary.LittleEndian.Uint64(rseg.Data()[offRsegMaxTx:]) < maxTx {
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], maxTx)
			mt.Write(rseg, offRsegMaxTx, b[:])
		}
		mt.Release(rseg, true)
	}
	l.free = undoRecStart
	tx.undo = l
	tx.logged = true
	return nil
}

func (tx *Tx) undoBeginFailed(l txUndo, err error) error {
	u := &tx.db.undo
	u.mu.Lock()
	if l.first != 0 {
		u.cached = append(u.cached, l)
	} else {
		u.freeSlots = append(u.freeSlots, l.slot)
	}
	u.mu.Unlock()
	return fmt.Errorf("engine: undo log of transaction %d: %w", tx.id, err)
}

// undoAppend appends a step's record (body: encodeStep) to tx's undo log
// in mt and returns where it went. A full page gets a successor.
func (tx *Tx) undoAppend(mt *cache.Mtr, body []byte, moved bool) (undoPos, error) {
	db := tx.db
	m := mt.Meter()
	ps := db.pool.PageSize()
	need := undoRecSize(body, moved)
	if need > ps-undoRecStart {
		return undoPos{}, fmt.Errorf("%w: undo record of %d bytes does not fit an undo page", ErrInconsistent, len(body))
	}
	pg, err := db.pool.Fetch(m, page.ID{Space: undoSpace, Page: tx.undo.last})
	if err != nil {
		return undoPos{}, err
	}
	mt.Latch(pg)
	free := int(binary.LittleEndian.Uint32(pg.Data()[offUndoFree:]))
	if free+need > ps {
		npg, err := tx.undoExtend(mt, pg)
		if err != nil {
			return undoPos{}, err
		}
		pg, free = npg, undoRecStart
	}
	rec := mt.Payload()
	rec = binary.LittleEndian.AppendUint16(rec, uint16(len(body)))
	rec = append(rec, 0)
	rec = append(rec, body...)
	if moved {
		rec = append(rec, 0, 0, 0, 0, 0, 0)
	}
	d := pg.Data()
	copy(d[free:], rec)
	binary.LittleEndian.PutUint32(d[offUndoFree:], uint32(free+len(rec)))
	mt.Log(pg, kindUndoAppend, rec)
	mt.Release(pg, true)
	tx.undo.free = uint32(free + len(rec))
	tx.m.UndoRecords++
	tx.m.UndoBytes += int64(len(rec))
	return undoPos{page: pg.ID().Page, off: uint32(free), moved: uint32(free + undoRecHeader + len(body))}, nil
}

// undoRecSize is the bytes a record of body takes on its undo page.
func undoRecSize(body []byte, moved bool) int {
	n := undoRecHeader + len(body)
	if moved {
		n += undoMoved
	}
	return n
}

// undoExtend gives tx's undo log a new last page, in mt, which holds pg
// (the old last page, latched; released here), and returns it latched.
func (tx *Tx) undoExtend(mt *cache.Mtr, pg *cache.Page) (*cache.Page, error) {
	db := tx.db
	m := mt.Meter()
	npg, err := db.pool.AllocPage(mt, nil, undoSpace, page.KindUndo)
	if err != nil {
		mt.Release(pg, false)
		return nil, err
	}
	undoHeader(mt, npg, undoActive, tx.undo.slot, tx.trxID, 0)
	mt.Write32(pg, offUndoNext, npg.ID().Page)
	mt.Release(pg, true)
	if tx.undo.last != tx.undo.first {
		fpg, err := db.pool.Fetch(m, page.ID{Space: undoSpace, Page: tx.undo.first})
		if err != nil {
			mt.Release(npg, true)
			return nil, err
		}
		mt.Latch(fpg)
		mt.Write32(fpg, offUndoLast, npg.ID().Page)
		mt.Release(fpg, true)
	} else {
		mt.Write32(pg, offUndoLast, npg.ID().Page)
	}
	tx.undo.last = npg.ID().Page
	tx.undo.free = undoRecStart
	return npg, nil
}

// undoReserve makes room in tx's undo log for a record of need bytes
// (undoRecSize) and returns where it will go, so that a clustered record
// can carry its roll pointer before the record is appended (clustWrite).
// What needs a page latch beyond tx's own last undo page (taking a new
// slot's first page, growing the log by a page) it does in a
// mini-transaction of its own, before the change's: the change's
// mini-transaction then latches the tree's pages and that one undo page,
// which no other transaction writes. A transaction with no undo log yet
// that finds a cached one gets it back as pending (started, with the
// max tx id raised if due, in the change's own mini-transaction by
// undoStart), so that its first change is still one log record.
func (tx *Tx) undoReserve(need int) (pos undoPos, pending *txUndoPending, err error) {
	ps := tx.db.pool.PageSize()
	if need > ps-undoRecStart {
		return undoPos{}, nil, fmt.Errorf("%w: undo record of %d bytes does not fit an undo page", ErrInconsistent, need)
	}
	if !tx.logged {
		l, raise, maxTx, err := tx.undoTake()
		if err != nil {
			return undoPos{}, nil, err
		}
		if l.first != 0 {
			return undoPos{page: l.first, off: undoRecStart}, &txUndoPending{l: l, raise: raise, maxTx: maxTx}, nil
		}
		mt := tx.mtr()
		err = tx.undoStart(mt, l, raise, maxTx)
		mt.Commit()
		if err != nil {
			return undoPos{}, nil, err
		}
	}
	if int(tx.undo.free)+need > ps {
		mt := tx.mtr()
		pg, err := tx.db.pool.Fetch(mt.Meter(), page.ID{Space: undoSpace, Page: tx.undo.last})
		if err != nil {
			mt.Commit()
			return undoPos{}, nil, err
		}
		mt.Latch(pg)
		npg, err := tx.undoExtend(mt, pg)
		if err == nil {
			mt.Release(npg, true)
		}
		mt.Commit()
		if err != nil {
			return undoPos{}, nil, err
		}
	}
	return undoPos{page: tx.undo.last, off: tx.undo.free}, nil, nil
}

// txUndoPending is an undo log undoReserve took for a transaction's first
// change, to be started in that change's mini-transaction.
type txUndoPending struct {
	l     txUndo
	raise bool
	maxTx uint64
}

// markUndone marks the record at pos undone (moved: where a heap undo put
// the row), in mt, the undo's own mini-transaction.
func (db *DB) markUndone(mt *cache.Mtr, pos undoPos, heapStep bool, moved heap.RowPtr) error {
	pg, err := db.pool.Fetch(mt.Meter(), page.ID{Space: undoSpace, Page: pos.page})
	if err != nil {
		return err
	}
	mt.Latch(pg)
	mt.Write(pg, int(pos.off)+2, []byte{1})
	if heapStep {
		enc := moved.Encode()
		mt.Write(pg, int(pos.moved), enc[:])
	}
	mt.Release(pg, true)
	return nil
}

// undoEnd empties undo log l in mt (a commit's, or the end of a
// rollback's): the pages after the first go to the free list, and the
// first is left cached. The caller hands l to cacheUndo once mt commits.
func (db *DB) undoEnd(mt *cache.Mtr, l txUndo) error {
	m := mt.Meter()
	pg, err := db.pool.Fetch(m, page.ID{Space: undoSpace, Page: l.first})
	if err != nil {
		return err
	}
	mt.Latch(pg)
	for no := binary.LittleEndian.Uint32(pg.Data()[offUndoNext:]); no != 0; {
		npg, err := db.pool.Fetch(m, page.ID{Space: undoSpace, Page: no})
		if err != nil {
			mt.Release(pg, false)
			return err
		}
		mt.Latch(npg)
		next := binary.LittleEndian.Uint32(npg.Data()[offUndoNext:])
		if err := db.pool.FreePage(mt, nil, npg); err != nil {
			mt.Release(npg, false)
			mt.Release(pg, false)
			return err
		}
		mt.Release(npg, true)
		no = next
	}
	undoHeader(mt, pg, undoCached, l.slot, 0, l.first)
	mt.Release(pg, true)
	return nil
}

// cacheUndo makes an emptied undo log available to the next transaction.
func (db *DB) cacheUndo(l txUndo) {
	l.last = l.first
	db.undo.mu.Lock()
	db.undo.cached = append(db.undo.cached, l)
	db.undo.mu.Unlock()
}

// sortLosers orders the transactions recovery found newest first, so
// that the order (and the pages their undo writes) is the same on every
// run.
func sortLosers(ls []*loser) {
	slices.SortFunc(ls, func(a, b *loser) int {
		switch {
		case a.id > b.id:
			return -1
		case a.id < b.id:
			return 1
		}
		return 0
	})
}

// undoCommit ends tx's undo log at its commit, in mt (the commit's
// mini-transaction). A log with records that build older versions of
// clustered records (tx.versions) goes to the history list
// (trx_purge_add_undo_to_history, see the top of this file): linked at
// the tail, on the pages and in memory, under the rseg page's latch, its
// slot freed (cleared on the rseg page here, handed to the next
// transaction by historyAdded once mt commits). Any other is emptied and
// cached at once (undoEnd), as InnoDB frees an insert undo log at commit.
// It reports whether the log went to the history list.
func (tx *Tx) undoCommit(mt *cache.Mtr) (bool, error) {
	db := tx.db
	if !tx.versions {
		return false, db.undoEnd(mt, tx.undo)
	}
	m := mt.Meter()
	rseg, err := db.pool.Fetch(m, page.ID{Space: undoSpace, Page: rsegPage})
	if err != nil {
		return false, err
	}
	mt.Latch(rseg)
	pg, err := db.pool.Fetch(m, page.ID{Space: undoSpace, Page: tx.undo.first})
	if err != nil {
		mt.Release(rseg, false)
		return false, err
	}
	mt.Latch(pg)
	rb := rseg.Data()
	n := binary.LittleEndian.Uint32(rb[offRsegHistLen:])
	last := binary.LittleEndian.Uint32(rb[offRsegHistLast:])
	mt.Write(pg, offUndoState, []byte{undoToPurge})
	mt.Write32(pg, offUndoHistNext, 0)
	mt.Release(pg, true)
	if last != 0 {
		tail, err := db.pool.Fetch(m, page.ID{Space: undoSpace, Page: last})
		if err != nil {
			mt.Release(rseg, true)
			return false, err
		}
		mt.Latch(tail)
		mt.Write32(tail, offUndoHistNext, tx.undo.first)
		mt.Release(tail, true)
	} else {
		mt.Write32(rseg, offRsegHistFirst, tx.undo.first)
	}
	mt.Write32(rseg, offRsegHistLast, tx.undo.first)
	mt.Write32(rseg, offRsegHistLen, n+1)
	mt.Write32(rseg, offRsegSlots+4*tx.undo.slot, 0)
	u := &db.undo
	u.mu.Lock()
	u.history = append(u.history, histLog{l: txUndo{first: tx.undo.first, last: tx.undo.first, slot: -1}, trxID: tx.trxID})
	u.histLen.Store(int64(len(u.history)))
	u.mu.Unlock()
	mt.Release(rseg, true)
	return true, nil
}

// historyAdded frees the slot of tx's log, which its committed
// mini-transaction put on the history list.
func (tx *Tx) historyAdded() {
	u := &tx.db.undo
	u.mu.Lock()
	u.freeSlots = append(u.freeSlots, tx.undo.slot)
	u.mu.Unlock()
}

// historyRemove takes log h, purged, off the head of the history list in
// one mini-transaction charged to m: the base node's first (and last, if
// it was the only one) and length; its pages after the first go to the
// free list, and its first page, emptied, to a free slot as a cached log
// (to the free list too if no slot is free).
func (db *DB) historyRemove(m *cache.Meter, h histLog) error {
	u := &db.undo
	slot := -1
	u.mu.Lock()
	if n := len(u.freeSlots); n > 0 {
		slot = u.freeSlots[n-1]
		u.freeSlots = u.freeSlots[:n-1]
	}
	u.mu.Unlock()
	err := db.historyUnlink(m, h, slot)
	u.mu.Lock()
	defer u.mu.Unlock()
	if err != nil {
		if slot >= 0 {
			u.freeSlots = append(u.freeSlots, slot)
		}
		return err
	}
	u.history = u.history[1:]
	u.histLen.Store(int64(len(u.history)))
	if slot >= 0 {
		u.cached = append(u.cached, txUndo{first: h.l.first, last: h.l.first, slot: slot})
	}
	return nil
}

func (db *DB) historyUnlink(m *cache.Meter, h histLog, slot int) error {
	mt := db.pool.BeginMtr(m)
	defer mt.Commit()
	rseg, err := db.pool.Fetch(m, page.ID{Space: undoSpace, Page: rsegPage})
	if err != nil {
		return err
	}
	mt.Latch(rseg)
	rb := rseg.Data()
	n := binary.LittleEndian.Uint32(rb[offRsegHistLen:])
	if first := binary.LittleEndian.Uint32(rb[offRsegHistFirst:]); first != h.l.first || n == 0 {
		mt.Release(rseg, false)
		return fmt.Errorf("%w: the history list starts at page %d (length %d), purge freed page %d", ErrCorrupt, first, n, h.l.first)
	}
	pg, err := db.pool.Fetch(m, page.ID{Space: undoSpace, Page: h.l.first})
	if err != nil {
		mt.Release(rseg, false)
		return err
	}
	mt.Latch(pg)
	next := binary.LittleEndian.Uint32(pg.Data()[offUndoHistNext:])
	mt.Write32(rseg, offRsegHistFirst, next)
	if next == 0 {
		mt.Write32(rseg, offRsegHistLast, 0)
	}
	mt.Write32(rseg, offRsegHistLen, n-1)
	for no := binary.LittleEndian.Uint32(pg.Data()[offUndoNext:]); no != 0; {
		npg, err := db.pool.Fetch(m, page.ID{Space: undoSpace, Page: no})
		if err != nil {
			mt.Release(pg, true)
			mt.Release(rseg, true)
			return err
		}
		mt.Latch(npg)
		next := binary.LittleEndian.Uint32(npg.Data()[offUndoNext:])
		if err := db.pool.FreePage(mt, nil, npg); err != nil {
			mt.Release(npg, false)
			mt.Release(pg, true)
			mt.Release(rseg, true)
			return err
		}
		mt.Release(npg, true)
		no = next
	}
	if slot >= 0 {
		undoHeader(mt, pg, undoCached, slot, 0, h.l.first)
		mt.Write32(rseg, offRsegSlots+4*slot, h.l.first)
		mt.Release(pg, true)
	} else {
		err = db.pool.FreePage(mt, nil, pg)
		mt.Release(pg, err == nil)
	}
	mt.Release(rseg, true)
	return err
}

// historyLen returns the history list's length (histLen) without taking mu.
func (u *undoSys) historyLen() int { return int(u.histLen.Load()) }

// versionedWriter readies tx for a versioned heap write: it gives tx its
// id, marks it as one the commit log must record, and, when the id
// reaches the rollback segment's max tx id, raises and logs that mark
// before the write. A transaction whose writes are all undo-less versions
// (HOT updates, deletes) never reaches undoTake, so without this its id
// could pass the logged mark; recovery would then hand the id of a
// transaction running at the crash to a new one, which would read the
// crashed one's versions as its own.
//
// The mark goes in a mini-transaction committed just before the write's:
// redo is appended in order, so whenever the write is durable the raise
// is too (a crash between them only skips ids).
func (tx *Tx) versionedWriter() error {
	tx.assignTrxID()
	tx.hv = true
	u := &tx.db.undo
	u.mu.Lock()
	raise := tx.trxID >= u.maxTx
	if raise {
		u.maxTx = tx.trxID + txIDMargin
	}
	maxTx := u.maxTx
	u.mu.Unlock()
	if !raise {
		return nil
	}
	return tx.db.logMaxTx(tx.cm(), maxTx)
}

// logMaxTx writes maxTx as the rollback segment's max tx id, in a
// mini-transaction of its own, unless the page already holds a higher
// one: raises by concurrent transactions may reach the page out of order,
// and the mark never goes down.
func (db *DB) logMaxTx(m *cache.Meter, maxTx uint64) error {
	mt := db.pool.BeginMtr(m)
	defer mt.Commit()
	rseg, err := db.pool.Fetch(m, page.ID{Space: undoSpace, Page: rsegPage})
	if err != nil {
		return fmt.Errorf("engine: raise max tx id to %d: %w", maxTx, err)
	}
	mt.Latch(rseg)
	if binary.LittleEndian.Uint64(rseg.Data()[offRsegMaxTx:]) >= maxTx {
		mt.Release(rseg, false)
		return nil
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], maxTx)
	mt.Write(rseg, offRsegMaxTx, b[:])
	mt.Release(rseg, true)
	return nil
}
