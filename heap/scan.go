package heap

import (
	"fmt"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
)

// Scan is a sequential scan of a heap in physical order: pages 1 ..
// HighWater-1 in page number order, skipping pages that are not heap pages
// (FSM pages are skipped without being read), and on each page its live
// rows in slot order, so pointers come out sorted by RowPtr.Compare.
//
// Each page's live rows are copied out under the page's shared latch, one
// page at a time; no latch or pin is held between calls to Next. A page is
// seen as it was at that moment: rows inserted, updated or deleted on a
// page the scan has passed are not seen, those on pages ahead are. Pages
// allocated during the scan are scanned if they exist when the scan gets
// there.
//
// A Scan is used by one goroutine. Typical use:
//
//	s := h.NewScan(m)
//	defer s.Close()
//	for s.Next() {
//		use(s.Ptr(), s.Row())
//	}
//	if err := s.Err(); err != nil { ... }
type Scan struct {
	h    *Heap
	m    *cache.Meter // the pages' half of the Account NewScan was given
	hc   *HeapCounts  // and the heap's
	next uint32       // next page to read

	page uint32
	buf  []byte    // the current page's live rows, back to back
	rows []scanRow // where each row is in buf
	i    int       // index in rows of the current row

	err    error
	closed bool
}

type scanRow struct {
	slot     uint16
	off, end int32
}

// NewScan starts a scan. Its page requests are charged to m.Pages(), and
// m.Heap().HeapRowsScanned is incremented for every row Next returns.
func (h *Heap) NewScan(m Account) *Scan {
	pm, hc := accounts(m)
	return &Scan{h: h, m: pm, hc: hc, next: 1}
}

// scanInitialRows is the initial capacity of a scan's row index; it grows
// to the most live rows a page of the heap has held.
const scanInitialRows = 128

// Next advances to the next row and reports whether there is one. It
// returns false at the end of the heap, after an error (see Err) and after
// Close.
func (s *Scan) Next() bool {
	if s.closed || s.err != nil {
		return false
	}
	s.i++
	for s.i >= len(s.rows) {
		if !s.loadNextPage() {
			return false
		}
	}
	if s.hc != nil {
		s.hc.HeapRowsScanned++
	}
	return true
}

// loadNextPage copies the live rows of the next heap page into s. It
// reports false at the end of the heap or on an error.
func (s *Scan) loadNextPage() bool {
	h := s.h
	if s.buf == nil {
		// A page's rows never exceed a page.
		s.buf = make([]byte, 0, h.pageSize)
		s.rows = make([]scanRow, 0, scanInitialRows)
	}
	s.rows, s.buf, s.i = s.rows[:0], s.buf[:0], 0
	for ; s.next < h.highWater.Load(); s.next++ {
		no := s.next
		if h.isFSMPage(no) || h.isVMPage(no) {
			continue
		}
		pg, err := h.pool.Fetch(s.m, h.id(no))
		if err != nil {
			s.err = fmt.Errorf("heap: scan of space %d at page %d: %w", h.space, no, err)
			return false
		}
		pg.RLatch()
		err = s.copyPage(hpage(pg.Data()), no)
		pg.RUnlatch()
		pg.Unpin(false)
		if err != nil {
			s.err = err
			return false
		}
		if len(s.rows) > 0 {
			s.page = no
			s.next++
			return true
		}
	}
	return false
}

// copyPage copies b's live rows into s. REQUIRES: b's shared latch.
func (s *Scan) copyPage(b hpage, no uint32) error {
	if page.KindOf(b) != page.KindHeap {
		return nil // meta, FSM or free page: no rows
	}
	if !b.headerOK() {
		return s.h.badHeader(no, b)
	}
	for i := range b.nslots() {
		row, live, ok := b.row(i)
		if !ok {
			off, n := b.slot(i)
			return s.h.corrupt(no, "slot %d points at [%d,%d), outside the cell area", i, off, off+n)
		}
		if !live {
			continue
		}
		off := int32(len(s.buf))
		s.buf = append(s.buf, row...)
		s.rows = append(s.rows, scanRow{slot: uint16(i), off: off, end: int32(len(s.buf))})
	}
	return nil
}

// Ptr returns the current row's pointer. Valid after Next returned true.
func (s *Scan) Ptr() RowPtr {
	if s.i >= len(s.rows) {
		return RowPtr{}
	}
	return RowPtr{Page: s.page, Slot: s.rows[s.i].slot}
}

// Row returns the current row. The slice belongs to the scan and is valid
// until the next call to Next or Close; copy it to keep it.
func (s *Scan) Row() []byte {
	if s.i >= len(s.rows) {
		return nil
	}
	r := s.rows[s.i]
	return s.buf[r.off:r.end:r.end]
}

// Err returns the error that ended the scan, if any.
func (s *Scan) Err() error { return s.err }

// Close ends the scan and releases its buffers. The scan holds no pins or
// latches between calls, so Close is optional, but Next returns false
// afterwards. It returns Err().
func (s *Scan) Close() error {
	s.closed = true
	s.buf, s.rows, s.i = nil, nil, 0
	return s.err
}
