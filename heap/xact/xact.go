// Package xact is a durable commit log: PostgreSQL's pg_xact
// (access/transam/clog.c). It keeps two status bits per transaction id,
// with clog.h's values (heap.XidInProgress 0, heap.XidCommitted 1,
// heap.XidAborted 2; 3, sub-committed, unused: there are no
// subtransactions), on pages of its own in a space of its own, and
// implements heap.CommitStatus for the heap's visibility tests.
//
// It lives under heap because it answers the heap's question with the
// heap's types (heap.XidStatus, heap.CommitStatus) and its redo kinds sit
// in the heap's range (81, 82); package cache stays below both and knows
// nothing of transactions.
//
// Every status change is logged in the caller's mini-transaction
// (SetStatus), so a commit's status is durable exactly when that
// mini-transaction's redo is: the engine sets the status in the
// mini-transaction of its commit record, and redo after a crash restores
// every status whose record reached the log. A transaction that was
// running at the crash has no status, so it reads as in progress; see
// AbortInProgress for how recovery turns that into aborted.
//
// Pages. Commit log page k covers transaction ids k·X to (k+1)·X-1,
// X = 4·(pageSize-48) (16192 ids on 4 KiB pages, 65344 on 16 KiB), and is
// page k+1 of the space (the log is the space's only allocator, so pages
// are handed out in order; PostgreSQL's SLRU likewise finds a page by
// arithmetic, pageno = xid / CLOG_XACTS_PER_PAGE). Page 1 is the space's
// root, which Open checks.
//
//	0        32       36        38       40                48        49
//	+--------+--------+---------+--------+-----------------+---------+----
//	| cache  | magic  | version | unused |    first xid    | xids    | ...
//	| header | "ELXA" |  (2B)   |  (2B)  |      (8B)       | f..f+3  |
//	+--------+--------+---------+--------+-----------------+---------+----
//
//	a byte:  bits 7 6 | 5 4 | 3 2 | 1 0
//	         xid f+3  | f+2 | f+1 | f
//
// A new page is made (xact-init, PostgreSQL's CLOG_ZEROPAGE) in a
// mini-transaction of its own, committed before the status that needed it
// is set.
//
// Version history: 1 — this layout.
package xact

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/heap"
)

const (
	magic   = 0x41584c45 // "ELXA" little-endian
	version = 1

	offMagic   = page.HeaderSize
	offVersion = page.HeaderSize + 4
	offFirst   = page.HeaderSize + 8
	bodyStart  = page.HeaderSize + 16

	kindInit redo.Kind = 81
	kindSet  redo.Kind = 82
)

// ErrNotLog means a space holds no commit log (or a damaged one).
var ErrNotLog = errors.New("xact: not a commit log")

// ErrBadStatus means a status that cannot be set: not committed or
// aborted, or a transaction whose status was already set otherwise.
var ErrBadStatus = errors.New("xact: bad status change")

func init() {
	redo.Register(kindInit, "xact-init", redoInit)
	redo.Register(kindSet, "xact-set", redoSet)
}

// Log is a commit log in one space of a pool. It is safe for concurrent
// use.
type Log struct {
	pool  *cache.Pool
	space uint32
	per   uint64 // xids per page

	mu    sync.Mutex // serialises extension
	pages atomic.Uint32

	lookups, sets atomic.Int64
}

// Stats are a Log's counts since it was opened.
type Stats struct {
	Lookups int64 // XidStatus calls that read a page
	Sets    int64 // statuses set (xact-set operations)
	Pages   uint32
}

func newLog(pool *cache.Pool, space uint32) *Log {
	return &Log{pool: pool, space: space, per: uint64(4 * (pool.PageSize() - bodyStart))}
}

// Create makes an empty commit log in space, which must not exist or be
// empty, with its first page (xids 0 to X-1) as the space's root, in one
// mini-transaction.
func Create(m *cache.Meter, pool *cache.Pool, space uint32) (*Log, error) {
	err := pool.CreateSpace(m, space)
	if errors.Is(err, cache.ErrSpaceExists) {
		info, serr := pool.Space(m, space)
		if serr != nil {
			return nil, fmt.Errorf("xact: create in space %d: %w", space, serr)
		}
		if info.HighWater != 1 || info.Root != 0 {
			return nil, fmt.Errorf("%w: create in space %d: it already has %d pages", ErrNotLog, space, info.HighWater-1)
		}
	} else if err != nil {
		return nil, fmt.Errorf("xact: create in space %d: %w", space, err)
	}
	l := newLog(pool, space)
	mt := pool.BeginMtr(m)
	pg, err := pool.AllocPage(mt, nil, space, page.KindXact)
	if err != nil {
		mt.Commit()
		return nil, fmt.Errorf("xact: create in space %d: %w", space, err)
	}
	if pg.ID().Page != 1 {
		mt.Release(pg, true)
		mt.Commit()
		return nil, fmt.Errorf("%w: create in space %d: first page is %d", ErrNotLog, space, pg.ID().Page)
	}
	logInit(mt, pg, 0)
	mt.Release(pg, true)
	err = pool.SetRoot(mt, space, 1)
	mt.Commit()
	if err != nil {
		return nil, fmt.Errorf("xact: create in space %d: %w", space, err)
	}
	l.pages.Store(1)
	return l, nil
}

// Open returns the commit log Create made in space, after redo: it checks
// the root and the last page's header.
func Open(m *cache.Meter, pool *cache.Pool, space uint32) (*Log, error) {
	info, err := pool.Space(m, space)
	if err != nil {
		return nil, fmt.Errorf("xact: open space %d: %w", space, err)
	}
	if info.Root != 1 || info.HighWater < 2 {
		return nil, fmt.Errorf("%w: space %d has root %d and high water %d", ErrNotLog, space, info.Root, info.HighWater)
	}
	l := newLog(pool, space)
	n := info.HighWater - 1
	for _, no := range []uint32{1, n} {
		pg, err := pool.Fetch(m, page.ID{Space: space, Page: no})
		if err != nil {
			return nil, fmt.Errorf("xact: open space %d: page %d: %w", space, no, err)
		}
		pg.RLatch()
		cerr := checkPage(pg.Data(), uint64(no-1)*l.per)
		pg.RUnlatch()
		pg.Unpin(false)
		if cerr != nil {
			return nil, fmt.Errorf("%w: space %d: page %d: %v", ErrNotLog, space, no, cerr)
		}
	}
	l.pages.Store(n)
	return l, nil
}

// Stats returns the log's counts.
func (l *Log) Stats() Stats {
	return Stats{Lookups: l.lookups.Load(), Sets: l.sets.Load(), Pages: l.pages.Load()}
}

func (l *Log) locate(xid uint64) (uint32, int, error) {
	k := xid / l.per
	if k >= math.MaxUint32-1 {
		return 0, 0, fmt.Errorf("xact: transaction id %d beyond the log's reach", xid)
	}
	return uint32(k) + 1, int(xid % l.per), nil
}

func get(b []byte, idx int) heap.XidStatus {
	return heap.XidStatus(b[bodyStart+idx/4] >> (2 * (idx % 4)) & 3)
}

// XidStatus returns xid's status (heap.CommitStatus): in progress for an
// id never set (a running transaction, one never used, or one that was
// running at a crash and that recovery has not aborted yet). Cost: one
// page request of the log's space, under its shared latch; a heap page
// latch may be held (log pages come after heap pages).
func (l *Log) XidStatus(xid uint64) (heap.XidStatus, error) {
	no, idx, err := l.locate(xid)
	if err != nil {
		return 0, err
	}
	if no > l.pages.Load() {
		return heap.XidInProgress, nil
	}
	pg, err := l.pool.Fetch(nil, page.ID{Space: l.space, Page: no})
	if err != nil {
		return 0, fmt.Errorf("xact: status of %d: %w", xid, err)
	}
	l.lookups.Add(1)
	pg.RLatch()
	b := pg.Data()
	var st heap.XidStatus
	if page.KindOf(b) != page.KindXact {
		err = fmt.Errorf("xact: space %d page %d has kind %s: %w", l.space, no, page.KindOf(b), page.ErrCorruptPage)
	} else {
		st = get(b, idx)
	}
	pg.RUnlatch()
	pg.Unpin(false)
	return st, err
}

// extend makes the log's pages up to no, each in a mini-transaction of
// its own.
func (l *Log) extend(m *cache.Meter, no uint32) error {
	if no <= l.pages.Load() {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for n := l.pages.Load(); n < no; n = l.pages.Load() {
		mt := l.pool.BeginMtr(m)
		pg, err := l.pool.AllocPage(mt, nil, l.space, page.KindXact)
		if err != nil {
			mt.Commit()
			return fmt.Errorf("xact: extend space %d: %w", l.space, err)
		}
		if got := pg.ID().Page; got != n+1 {
			mt.Release(pg, true)
			mt.Commit()
			return fmt.Errorf("%w: space %d: allocated page %d, expected %d (another allocator in the space?)", ErrNotLog, l.space, got, n+1)
		}
		logInit(mt, pg, uint64(n)*l.per)
		mt.Release(pg, true)
		mt.Commit()
		l.pages.Store(n + 1)
	}
	return nil
}

// SetStatus records xid's status, committed or aborted, as part of mt
// (PostgreSQL's TransactionIdSetTreeStatus): the log page stays latched
// until mt commits, and the status is durable when mt's record is. A page
// the id needs is made first in a mini-transaction of its own. Setting
// the status an id already has does nothing; changing a final status, or
// setting in progress, is ErrBadStatus. The caller charges mt's meter.
func (l *Log) SetStatus(mt *cache.Mtr, xid uint64, st heap.XidStatus) error {
	if st != heap.XidCommitted && st != heap.XidAborted {
		return fmt.Errorf("%w: %d to %s", ErrBadStatus, xid, st)
	}
	no, idx, err := l.locate(xid)
	if err != nil {
		return err
	}
	if err := l.extend(mt.Meter(), no); err != nil {
		return err
	}
	pg, err := l.pool.Fetch(mt.Meter(), page.ID{Space: l.space, Page: no})
	if err != nil {
		return fmt.Errorf("xact: set status of %d: %w", xid, err)
	}
	mt.Latch(pg)
	b := pg.Data()
	if page.KindOf(b) != page.KindXact {
		mt.Release(pg, false)
		return fmt.Errorf("xact: space %d page %d has kind %s: %w", l.space, no, page.KindOf(b), page.ErrCorruptPage)
	}
	switch cur := get(b, idx); cur {
	case st:
		mt.Release(pg, false)
		return nil
	case heap.XidInProgress:
	default:
		mt.Release(pg, false)
		return fmt.Errorf("%w: %d is %s, cannot become %s", ErrBadStatus, xid, cur, st)
	}
	b[bodyStart+idx/4] |= byte(st) << (2 * (idx % 4))
	mt.Log(pg, kindSet, append(binary.AppendUvarint(mt.Payload(), uint64(idx)), byte(st)))
	mt.Release(pg, true)
	l.sets.Add(1)
	return nil
}

// AbortInProgress is recovery's last step: every transaction id in
// [from, below) still in progress is set aborted, in one mini-transaction
// per log page, where below is the recovered next transaction id and from
// the oldest id that may lack a status (0 if unknown). A transaction that
// was running at the crash then reads as aborted, and its versions as
// dead, as PostgreSQL infers for an xid that is neither running nor
// committed (it writes no abort for it; here the status is made durable
// so that the heap's hint bits and vacuum can rely on the log alone). No
// transaction may run meanwhile. It returns how many ids it aborted.
func (l *Log) AbortInProgress(m *cache.Meter, from, below uint64) (int, error) {
	if below <= from {
		return 0, nil
	}
	n := 0
	for x := from; x < below; {
		no, _, err := l.locate(x)
		if err != nil {
			return n, err
		}
		end := min(below, uint64(no)*l.per)
		mt := l.pool.BeginMtr(m)
		for ; x < end; x++ {
			st, err := l.XidStatusIn(mt, x)
			if err != nil {
				mt.Commit()
				return n, err
			}
			if st == heap.XidInProgress {
				if err := l.SetStatus(mt, x, heap.XidAborted); err != nil {
					mt.Commit()
					return n, err
				}
				n++
			}
		}
		mt.Commit()
	}
	return n, nil
}

// XidStatusIn is XidStatus for a caller whose mt may hold the id's page.
func (l *Log) XidStatusIn(mt *cache.Mtr, xid uint64) (heap.XidStatus, error) {
	no, idx, err := l.locate(xid)
	if err != nil {
		return 0, err
	}
	if no > l.pages.Load() {
		return heap.XidInProgress, nil
	}
	pg, err := l.pool.Fetch(mt.Meter(), page.ID{Space: l.space, Page: no})
	if err != nil {
		return 0, fmt.Errorf("xact: status of %d: %w", xid, err)
	}
	mt.RLatch(pg)
	st := get(pg.Data(), idx)
	mt.RUnlatch(pg)
	pg.Unpin(false)
	return st, nil
}

func logInit(mt *cache.Mtr, pg *cache.Page, first uint64) {
	initPage(pg.Data(), first)
	mt.Log(pg, kindInit, binary.AppendUvarint(mt.Payload(), first))
}

func initPage(b []byte, first uint64) {
	binary.LittleEndian.PutUint32(b[offMagic:], magic)
	binary.LittleEndian.PutUint16(b[offVersion:], version)
	binary.LittleEndian.PutUint16(b[offVersion+2:], 0)
	binary.LittleEndian.PutUint64(b[offFirst:], first)
	clear(b[bodyStart:])
}

func checkPage(b []byte, first uint64) error {
	switch {
	case page.KindOf(b) != page.KindXact:
		return fmt.Errorf("kind %s, want %s", page.KindOf(b), page.KindXact)
	case binary.LittleEndian.Uint32(b[offMagic:]) != magic:
		return fmt.Errorf("magic %08x, want %08x", binary.LittleEndian.Uint32(b[offMagic:]), uint32(magic))
	case binary.LittleEndian.Uint16(b[offVersion:]) != version:
		return fmt.Errorf("format version %d, want %d", binary.LittleEndian.Uint16(b[offVersion:]), version)
	case binary.LittleEndian.Uint64(b[offFirst:]) != first:
		return fmt.Errorf("first xid %d, want %d", binary.LittleEndian.Uint64(b[offFirst:]), first)
	}
	return nil
}

func redoInit(_ page.ID, buf, payload []byte) error {
	if !page.ValidSize(len(buf)) || page.KindOf(buf) != page.KindXact {
		return fmt.Errorf("xact-init on a %d-byte page of kind %s", len(buf), page.KindOf(buf))
	}
	r := redo.NewReader(payload)
	first := r.Uvarint()
	if err := r.Err(); err != nil {
		return err
	}
	initPage(buf, first)
	return nil
}

func redoSet(_ page.ID, buf, payload []byte) error {
	if !page.ValidSize(len(buf)) || page.KindOf(buf) != page.KindXact {
		return fmt.Errorf("xact-set on a %d-byte page of kind %s", len(buf), page.KindOf(buf))
	}
	r := redo.NewReader(payload)
	idx := r.Int(4*(len(buf)-bodyStart) - 1)
	st := r.Byte()
	if err := r.Err(); err != nil {
		return err
	}
	if st != byte(heap.XidCommitted) && st != byte(heap.XidAborted) {
		return fmt.Errorf("status %d", st)
	}
	if cur := byte(get(buf, idx)); cur != 0 && cur != st {
		return fmt.Errorf("xid index %d is %s, record sets %s", idx, heap.XidStatus(cur), heap.XidStatus(st))
	}
	buf[bodyStart+idx/4] |= st << (2 * (idx % 4))
	return nil
}

// Highest returns the highest transaction id the log has a status for
// (committed or aborted), 0 if none: recovery's floor for the next
// transaction id, since a transaction that wrote only versions, with no
// undo record, leaves its id nowhere else. Cost: a read of the log's
// pages from the last one back to the first holding a status.
func (l *Log) Highest(m *cache.Meter) (uint64, error) {
	for no := l.pages.Load(); no >= 1; no-- {
		pg, err := l.pool.Fetch(m, page.ID{Space: l.space, Page: no})
		if err != nil {
			return 0, fmt.Errorf("xact: highest id: %w", err)
		}
		pg.RLatch()
		b := pg.Data()
		hi := -1
		if page.KindOf(b) != page.KindXact {
			err = fmt.Errorf("xact: space %d page %d has kind %s: %w", l.space, no, page.KindOf(b), page.ErrCorruptPage)
		} else {
			for idx := int(l.per) - 1; idx >= 0; idx-- {
				if get(b, idx) != heap.XidInProgress {
					hi = idx
					break
				}
			}
		}
		pg.RUnlatch()
		pg.Unpin(false)
		if err != nil {
			return 0, err
		}
		if hi >= 0 {
			return uint64(no-1)*l.per + uint64(hi), nil
		}
	}
	return 0, nil
}
