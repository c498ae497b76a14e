package engine

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/enginelab/enginelab/heap"
)

// SortCursor returns a sort's rows in order. It is used by one goroutine,
// within its transaction; Close removes its temporary files.
type SortCursor struct {
	tx    *Tx
	t     *TableHandle
	p     *sortParam
	stats SortStats
	// avoided is the scan itself, when its index gave the order.
	avoided *Cursor
	// view is the scan's read view when it was a consistent read: the
	// re-fetch of a row reference builds the version the scan saw, as
	// InnoDB's rnd_pos reads through the statement's read view.
	view *ReadView
	// The sorted records in memory (no run was written): buf holds them,
	// recs their offsets in order.
	buf  []byte
	recs []uint32
	// Or the result file of the last merge, read in order.
	out   *tempFile
	rd    tempReader
	files []*tempFile
	n     int64 // results to return
	i     int64
	row   Row
	want  []int
	err   error
	done  bool
}

// Stats describes the sort.
func (s *SortCursor) Stats() SortStats { return s.stats }

// Row returns the current row: its selected columns, the others NULL.
// It is valid until the next call of Next.
func (s *SortCursor) Row() Row {
	if s.avoided != nil {
		return s.avoided.Row()
	}
	return s.row
}

// Err returns the error that stopped the cursor.
func (s *SortCursor) Err() error { return s.err }

// Close ends the sort and removes its temporary files.
func (s *SortCursor) Close() error {
	if s.done {
		return s.err
	}
	s.done = true
	if s.avoided != nil {
		if err := s.avoided.Close(); s.err == nil {
			s.err = err
		}
	}
	for _, f := range s.files {
		if err := f.remove(); s.err == nil {
			s.err = err
		}
	}
	s.files = nil
	// The plan's buffers go back to the transaction for its next sort
	// (the rows this cursor returned are no longer valid).
	if b := s.tx.opBufs; b != nil && !s.tx.done && b.sort == nil {
		b.sort = s.p
	}
	return s.err
}

// Next moves to the next row.
func (s *SortCursor) Next() bool {
	if s.done || s.err != nil {
		return false
	}
	if s.avoided != nil {
		if !s.avoided.Next() {
			s.err = s.avoided.Err()
			return false
		}
		s.stats.RowsReturned++
		return true
	}
	if s.i >= s.n {
		return false
	}
	if s.tx.done {
		s.err = ErrTxDone
		return false
	}
	var res []byte
	if s.out == nil {
		rec := s.buf[s.recs[s.i]:]
		k := s.p.keyLen(rec)
		res = rec[k:]
	} else {
		var err error
		if res, err = s.rd.next(s.p); err != nil {
			s.err = err
			return false
		}
	}
	s.i++
	clear(s.row)
	var err error
	if s.p.useAddons {
		err = s.p.decodeAddon(res, s.row)
	} else {
		err = s.refetch(res[:s.p.refLen])
	}
	if err != nil {
		s.err = fmt.Errorf("engine: table %s: sort: %w", s.t.info.def.Name, err)
		return false
	}
	s.stats.RowsReturned++
	s.tx.m.RowsReturned++
	return true
}

// refetch reads the row a reference names (rr_from_pointers: the
// handler's rnd_pos): by primary key in the clustered tree, or in the
// primary index and then the heap (HeapPrimaryKey), or straight from the
// heap by its pointer (HeapRowPointer). A locking scan locked the row
// already, and a transaction keeps its locks, so the latest version is the
// one it sorted; a consistent scan's row is rebuilt through the same read
// view. Either way the row is there: a missing one is ErrInconsistent.
func (s *SortCursor) refetch(ref []byte) error {
	tx, t, p := s.tx, s.t, s.p
	m := tx.m
	pk, ptr, err := p.decodeRef(ref)
	if err != nil {
		return err
	}
	var img []byte
	m.SortRowsRefetched++
	if t.org == HeapRowPointer {
		m.SortRefetchHeap++
		m.RowFetches++
		m.RowFetchesHeap++
		if t.versioned() {
			img, err = tx.versionFetch(t, ptr)
		} else {
			img, err = t.heap.Fetch(m, ptr, tx.val)
		}
		if err != nil {
			return err
		}
	} else {
		m.SortRefetchPrimary++
		var found bool
		if img, _, found, err = tx.lookup(t, pk, s.view != nil); err != nil {
			return err
		}
		if found && s.view != nil {
			m.ConsistentReads++
			if img, found, err = tx.buildVersion(s.view, tx.recHdr, img); err != nil {
				return err
			}
		}
		if !found {
			return fmt.Errorf("%w: a sorted row is gone from the table", ErrInconsistent)
		}
		if t.org == Clustered { // lookup counted the heap-pk fetch itself
			m.RowFetches++
			m.RowFetchesPrimary++
		}
	}
	tx.val = img
	m.RowsDecoded++
	return decodeColumns(img, t.info.def.Columns, s.want, s.row)
}

// Sort runs an ORDER BY over a scan of t (see SortOptions and the
// comment at the top of sort.go) and returns a cursor over the sorted
// rows. Every row of the scan is read, locked shared and sorted before
// Sort returns. Invalid options are refused before the scan starts, with
// an error matching ErrInvalidOptions, ErrUnknownColumn,
// ErrUnknownCollation or ErrUnknownIndex.
func (tx *Tx) Sort(t *TableHandle, o SortOptions) (*SortCursor, error) {
	tx.enter()
	if err := tx.check(t); err != nil {
		return nil, err
	}
	var spare *sortParam
	if b := tx.opBufs; b != nil {
		spare, b.sort = b.sort, nil
	}
	p, err := planSort(t, &o, spare)
	if err != nil {
		return nil, err
	}
	ix, err := t.index(o.Index)
	if err != nil {
		return nil, err
	}
	s := &SortCursor{tx: tx, t: t, p: p, row: zeroed(p.row, len(t.info.def.Columns)), want: p.cursorWant}
	p.row = s.row
	for c, sel := range p.selected {
		if sel {
			s.want = append(s.want, c)
		}
	}
	p.cursorWant = s.want
	if reverse, ok := p.indexOrder(ix, &o); ok {
		// The index gives the order: the scan is the result.
		so := o.ScanOptions
		so.Reverse = reverse
		so.Limit = o.Limit
		b := tx.cursorBufs()
		b.want = append(b.want[:0], s.want...)
		cur, err := tx.scan(t, ix, so, b)
		if err != nil {
			return nil, err
		}
		tx.m.SortsAvoided++
		s.avoided = cur
		s.stats.Avoided = true
		return s, nil
	}
	s.stats = SortStats{Mode: SortRowRefs, PackedKeys: p.packedKeys, PackedAddons: p.packedAddons, PriorityQueue: p.usingPQ,
		SortLength: p.sortLength, ResLength: p.resLength, RecLength: p.recLength,
		BufferBytes: p.bufferBytes, KeysPerBuffer: p.maxKeysPerBuffer}
	if p.useAddons {
		s.stats.Mode = SortAddonFields
	}
	s.stats.ModeName = s.stats.Mode.String()
	tx.m.Sorts++
	if p.usingPQ {
		tx.m.SortsPQ++
	}
	if p.packedKeys {
		tx.m.SortsPacked++
	}
	if err := s.run(ix, &o); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// indexOrder reports whether scanning ix, forward or in reverse, returns
// the rows in the ORDER BY's order, so that no sort is needed: the sort
// keys, after those fixed by equal bounds, are the index's next columns,
// all in one direction, strings in the binary collation (the order of the
// index's keys).
func (p *sortParam) indexOrder(ix *index, o *SortOptions) (reverse, ok bool) {
	fixed := 0 // leading index columns equal to one value
	if !o.LowerExclusive && !o.UpperExclusive {
		for fixed < len(o.Lower) && fixed < len(o.Upper) && sameValue(o.Lower[fixed], o.Upper[fixed]) && o.Lower[fixed].NotNull {
			fixed++
		}
	}
	next := fixed
	dir := -1
	for _, f := range p.fields {
		if f.variable && f.coll.kind != collBinary {
			return false, false
		}
		if i := slices.Index(ix.cols, f.col); i >= 0 && i < fixed {
			continue // a constant: any order
		}
		if next >= len(ix.cols) || ix.cols[next] != f.col {
			return false, false
		}
		d := 0
		if f.desc {
			d = 1
		}
		if dir >= 0 && d != dir {
			return false, false
		}
		dir = d
		next++
	}
	if dir < 0 {
		return o.Reverse, true // every key is constant
	}
	return dir == 1, true
}

// tempSeq numbers temporary files (in the store's directory, named as
// MariaDB's are in its tmpdir).
var tempSeq atomic.Uint64

// tempFile is a temporary file of the sort on the store's filesystem,
// written through a write cache of tempBlock bytes (IO_CACHE) and metered.
type tempFile struct {
	fs   vfs.FS
	name string
	f    vfs.File
	m    *SortCounts
	buf  []byte
	size int64 // bytes written, the cache's included
}

func (s *SortCursor) newTemp() (*tempFile, error) {
	fs := s.tx.db.store.FS()
	name := fs.PathJoin(s.tx.db.store.Dir(), fmt.Sprintf("MYsort%d.tmp", tempSeq.Add(1)))
	f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
	if err != nil {
		return nil, fmt.Errorf("engine: sort: temporary file: %w", err)
	}
	tf := &tempFile{fs: fs, name: name, f: f, m: &s.tx.m.SortCounts, buf: make([]byte, 0, tempBlock)}
	s.files = append(s.files, tf)
	return tf, nil
}

// reset starts the file over (reinit_io_cache to WRITE_CACHE at 0).
func (f *tempFile) reset() {
	f.buf = f.buf[:0]
	f.size = 0
}

func (f *tempFile) write(b []byte) error {
	for len(b) > 0 {
		n := min(len(b), tempBlock-len(f.buf))
		f.buf = append(f.buf, b[:n]...)
		b = b[n:]
		f.size += int64(n)
		if len(f.buf) == tempBlock {
			if err := f.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *tempFile) flush() error {
	if len(f.buf) == 0 {
		return nil
	}
	off := f.size - int64(len(f.buf))
	if _, err := f.f.WriteAt(f.buf, off); err != nil {
		return fmt.Errorf("engine: sort: write %s: %w", f.name, err)
	}
	f.m.SortTempWrites++
	f.m.SortTempWriteBytes += int64(len(f.buf))
	f.buf = f.buf[:0]
	return nil
}

// readAt reads up to len(b) bytes at off (my_b_pread), counting one read.
func (f *tempFile) readAt(b []byte, off int64) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, err := f.f.ReadAt(b, off)
	if errors.Is(err, io.EOF) && n > 0 {
		err = nil
	}
	if err != nil {
		return n, fmt.Errorf("engine: sort: read %s: %w", f.name, err)
	}
	f.m.SortTempReads++
	f.m.SortTempReadBytes += int64(n)
	return n, nil
}

func (f *tempFile) remove() error {
	if f.f == nil {
		return nil
	}
	err := f.f.Close()
	if rerr := f.fs.Remove(f.name); err == nil {
		err = rerr
	}
	f.f = nil
	return err
}

// tempReader reads the result file in order, a block at a time.
type tempReader struct {
	f   *tempFile
	off int64 // file offset of buf[0]
	buf []byte
	pos int
	end int64
}

// next returns the next result part (its addon columns or reference).
func (r *tempReader) next(p *sortParam) ([]byte, error) {
	need := func(n int) error {
		if r.pos+n <= len(r.buf) {
			return nil
		}
		// Refill from the current position.
		r.off += int64(r.pos)
		rest := len(r.buf) - r.pos
		copy(r.buf[:cap(r.buf)], r.buf[r.pos:])
		size := max(tempBlock, n)
		if cap(r.buf) < size {
			nb := make([]byte, size)
			copy(nb, r.buf[r.pos:])
			r.buf = nb
		}
		r.buf = r.buf[:cap(r.buf)]
		want := min(int64(len(r.buf)-rest), r.end-r.off-int64(rest))
		got, err := r.f.readAt(r.buf[rest:rest+int(want)], r.off+int64(rest))
		if err != nil {
			return err
		}
		r.buf = r.buf[:rest+got]
		r.pos = 0
		if n > len(r.buf) {
			return fmt.Errorf("%w: sort result file ends inside a record", ErrCorrupt)
		}
		return nil
	}
	n := p.resLength
	if p.packedAddons {
		if err := need(addonLenField); err != nil {
			return nil, err
		}
		n = p.resLen(r.buf[r.pos:])
	}
	if err := need(n); err != nil {
		return nil, err
	}
	res := r.buf[r.pos : r.pos+n]
	r.pos += n
	return res, nil
}

// run is filesort() after its plan: find_all_keys, then save_index or the
// merges.
func (s *SortCursor) run(ix *index, o *SortOptions) error {
	tx, p := s.tx, s.p
	m := &tx.m.SortCounts
	b := tx.cursorBufs()
	b.want = append(b.want[:0], p.want...)
	so := o.ScanOptions
	cur, err := tx.scan(s.t, ix, so, b)
	if err != nil {
		return err
	}
	s.view = cur.view
	s.buf = make([]byte, p.bufferBytes)
	var (
		runFile *tempFile
		runs    []chunk
		pq      *boundedQueue
		refBuf  []byte
	)
	if p.usingPQ {
		pq = &boundedQueue{p: p, m: m, heap: make([]uint32, 1, p.maxKeysPerBuffer+1), max: p.maxKeysPerBuffer}
	}
	used := 0 // bytes of records in the buffer
	s.recs = s.recs[:0]
	// build appends row's record to dst: its key, then its addon columns
	// or its reference.
	build := func(dst []byte, row Row) ([]byte, error) {
		start := len(dst)
		if p.packedKeys {
			dst, _ = p.appendPackedKey(dst, row)
		} else {
			dst, _ = p.appendFixedKey(dst, row)
		}
		m.SortKeysBuilt++
		m.SortKeyBytes += int64(len(dst) - start)
		if p.useAddons {
			return p.appendAddon(dst, row), nil
		}
		var err error
		if refBuf, err = s.refOf(refBuf[:0], row, cur.ptr); err != nil {
			return dst, err
		}
		return p.appendRef(dst, refBuf), nil
	}
	var scanned int64
	for cur.Next() {
		row := cur.Row()
		scanned++
		if pq != nil {
			if err := pq.push(s.buf, row, build); err != nil {
				_ = cur.Close()
				return err
			}
			continue
		}
		if s.isFull(used) {
			if runFile == nil {
				if runFile, err = s.newTemp(); err != nil {
					_ = cur.Close()
					return err
				}
			}
			c, err := s.writeRun(runFile, used)
			if err != nil {
				_ = cur.Close()
				return err
			}
			runs = append(runs, c)
			used = 0
			s.recs = s.recs[:0]
		}
		dst, err := build(s.buf[used:used:len(s.buf)], row)
		if err != nil {
			_ = cur.Close()
			return err
		}
		if len(dst) > 0 && &dst[0] != &s.buf[used] {
			_ = cur.Close()
			return fmt.Errorf("engine: sort: a record of %d bytes overran the sort buffer", len(dst))
		}
		s.recs = append(s.recs, uint32(used))
		used += len(dst)
	}
	if err := cur.Close(); err != nil {
		return err
	}
	// The scan's rows went to the sort, not to the caller.
	tx.m.RowsReturned -= scanned
	s.stats.RowsExamined = scanned
	s.stats.RowsSorted = scanned
	if pq != nil {
		s.recs = append(s.recs[:0], pq.heap[1:]...)
		p.sortRecords(m, s.buf, s.recs, &s.stats)
		s.n = min(int64(len(s.recs)), p.limit)
		return nil
	}
	if len(runs) == 0 {
		// save_index: the whole set is in memory.
		p.sortRecords(m, s.buf, s.recs, &s.stats)
		s.n = min(int64(len(s.recs)), p.limit)
		return nil
	}
	if len(s.recs) > 0 {
		c, err := s.writeRun(runFile, used)
		if err != nil {
			return err
		}
		runs = append(runs, c)
	}
	if err := runFile.flush(); err != nil {
		return err
	}
	return s.merge(runFile, runs)
}

// refOf appends row's reference: its primary key's encoding, or in a
// HeapRowPointer table the heap row pointer ptr the scan read it through
// (the cursor's, as the handler's position() hands it over).
func (s *SortCursor) refOf(dst []byte, row Row, ptr heap.RowPtr) ([]byte, error) {
	t := s.t
	if t.org != HeapRowPointer {
		return appendKey(dst, t.info.def.Columns, t.info.pk, row), nil
	}
	if ptr == (heap.RowPtr{}) {
		return nil, fmt.Errorf("%w: table %s: sort: a scanned row has no heap pointer", ErrInconsistent, t.info.def.Name)
	}
	return ptr.Append(dst), nil
}

// isFull is Filesort_buffer::isfull: the buffer was sized for
// maxKeysPerBuffer records of the longest length; packed ones leave room
// for more while a longest record and its pointer still fit.
func (s *SortCursor) isFull(used int) bool {
	p := s.p
	if len(s.recs) < p.maxKeysPerBuffer {
		return false
	}
	left := int64(len(s.buf)) - int64(used) - int64(len(s.recs))*pointerSize
	return left < int64(p.recLength+pointerSize)
}

// chunk is a run in a temporary file (Merge_chunk).
type chunk struct {
	pos  int64
	rows int64
}

// writeRun is write_keys: sort the buffer, write its records (at most
// LIMIT of them) to f as a run.
func (s *SortCursor) writeRun(f *tempFile, used int) (chunk, error) {
	p := s.p
	p.sortRecords(&s.tx.m.SortCounts, s.buf, s.recs, &s.stats)
	c := chunk{pos: f.size}
	n := min(int64(len(s.recs)), p.limit)
	for _, off := range s.recs[:n] {
		rec := s.buf[off:]
		if err := f.write(rec[:p.recLen(rec)]); err != nil {
			return c, err
		}
	}
	c.rows = n
	s.stats.Runs++
	s.tx.m.SortRuns++
	return c, nil
}

// sortRecords is Filesort_buffer::sort_buffer: a radix sort of short
// fixed keys (radixsort_is_applicable: at most 20 bytes, 1,000 to 99,999
// records), else MariaDB's quicksort.
func (p *sortParam) sortRecords(m *SortCounts, buf []byte, recs []uint32, st *SortStats) {
	if len(recs) <= 1 {
		return
	}
	if !p.packedKeys && p.sortLength <= 20 && len(recs) >= 1000 && len(recs) < 100000 {
		st.Radix = true
		radixSort(m, buf, recs, p.sortLength)
		return
	}
	myQsort(recs, func(a, b uint32) int { return p.compare(m, buf[a:], buf[b:]) })
}

// radixSort is radixsort_for_str_ptr (mysys/mf_radix.c): a least
// significant byte first radix sort of the records' first n bytes, which
// skips a byte position where every record has the same byte.
func radixSort(m *SortCounts, buf []byte, recs []uint32, n int) {
	tmp := make([]uint32, len(recs))
	var count [256]int
	for pass := n - 1; pass >= 0; pass-- {
		clear(count[:])
		for _, r := range recs {
			count[buf[int(r)+pass]]++
		}
		m.SortRadixBytes += int64(len(recs))
		skip := false
		for i := 1; i < 256 && !skip; i++ {
			if count[i] == len(recs) {
				skip = true
			}
			count[i] += count[i-1]
		}
		if count[0] == len(recs) || skip {
			m.SortRadixSkipped++
			continue
		}
		m.SortRadixPasses++
		m.SortRadixBytes += int64(len(recs))
		for i := len(recs) - 1; i >= 0; i-- {
			b := buf[int(recs[i])+pass]
			count[b]--
			tmp[count[b]] = recs[i]
		}
		copy(recs, tmp)
	}
}

// myQsort is my_qsort2 (mysys/mf_qsort.c) on record offsets: a quicksort
// that keeps its ranges on a stack, sorts ranges under 10 records by
// insertion, and takes as pivot the median of three, or over 40 records
// the median of three medians of three.
func myQsort(a []uint32, cmp func(x, y uint32) int) {
	const threshold = 10
	if len(a) <= 1 {
		return
	}
	type rng struct{ lo, hi int }
	var stack []rng
	lo, hi := 0, len(a)-1
	median := func(l, mid, h int) {
		if cmp(a[h], a[l]) < 0 {
			a[h], a[l] = a[l], a[h]
		}
		if cmp(a[mid], a[l]) < 0 {
			a[mid], a[l] = a[l], a[mid]
		} else if cmp(a[h], a[mid]) < 0 {
			a[mid], a[h] = a[h], a[mid]
		}
	}
	for {
		count := hi - lo + 1
		if count < threshold {
			for i := lo + 1; i <= hi; i++ {
				for j := i; j > lo && cmp(a[j-1], a[j]) > 0; j-- {
					a[j], a[j-1] = a[j-1], a[j]
				}
			}
			if len(stack) == 0 {
				return
			}
			lo, hi = stack[len(stack)-1].lo, stack[len(stack)-1].hi
			stack = stack[:len(stack)-1]
			continue
		}
		mid := lo + count>>1
		var l, h int
		if count > 40 {
			step := count / 8
			median(lo, lo+step, lo+2*step)
			median(mid-step, mid, mid+step)
			median(hi-2*step, hi-step, hi)
			median(lo+step, mid, hi-step)
			l, h = lo, hi
		} else {
			median(lo, mid, hi)
			l, h = lo+1, hi-1
		}
		pivot := a[mid]
		for {
			for cmp(a[l], pivot) < 0 {
				l++
			}
			for cmp(pivot, a[h]) < 0 {
				h--
			}
			if l < h {
				a[l], a[h] = a[h], a[l]
				l++
				h--
			} else {
				if l == h {
					l++
					h--
				}
				break
			}
			if l > h {
				break
			}
		}
		// Skip parts of one record; push the larger part, sort the
		// smaller first, which keeps the stack small.
		switch {
		case h-lo <= 0 && hi-l <= 0:
			if len(stack) == 0 {
				return
			}
			lo, hi = stack[len(stack)-1].lo, stack[len(stack)-1].hi
			stack = stack[:len(stack)-1]
		case h-lo <= 0:
			lo = l
		case hi-l <= 0:
			hi = h
		case h-lo > hi-l:
			stack = append(stack, rng{lo, h})
			lo = l
		default:
			stack = append(stack, rng{l, hi})
			hi = h
		}
	}
}

// boundedQueue is filesort's Bounded_queue: a heap of LIMIT+1 records
// with the largest key on top (mysys/queues.c, max_at_top). While it is
// not full every key goes in; once full, each new key is made in the top
// record's place and sifted down, so the queue always holds the LIMIT
// smallest keys seen and one more.
type boundedQueue struct {
	p    *sortParam
	m    *SortCounts
	heap []uint32 // heap[1:] are record offsets; heap[1] the largest
	max  int
	next int // bytes of the buffer used
}

func (q *boundedQueue) push(buf []byte, row Row, build func([]byte, Row) ([]byte, error)) error {
	p := q.p
	if len(q.heap)-1 == q.max {
		top := int(q.heap[1])
		if _, err := build(buf[top:top:top+p.recLength], row); err != nil {
			return err
		}
		q.downheap(buf, 1)
		return nil
	}
	off := q.next
	dst, err := build(buf[off:off:off+p.recLength], row)
	if err != nil {
		return err
	}
	q.next += len(dst)
	q.heap = append(q.heap, uint32(off))
	q.insertAt(buf, len(q.heap)-1)
	return nil
}

// insertAt is queues.c's insert_at: the new element at idx moves up
// while it is larger than its parent.
func (q *boundedQueue) insertAt(buf []byte, idx int) {
	e := q.heap[idx]
	for idx>>1 > 0 && q.p.compare(q.m, buf[e:], buf[q.heap[idx>>1]:]) > 0 {
		q.heap[idx] = q.heap[idx>>1]
		idx >>= 1
	}
	q.heap[idx] = e
}

// downheap is queues.c's _downheap with the largest on top.
func (q *boundedQueue) downheap(buf []byte, idx int) {
	e := q.heap[idx]
	n := len(q.heap) - 1
	for idx <= n>>1 {
		next := idx + idx
		if next < n && q.p.compare(q.m, buf[q.heap[next]:], buf[q.heap[next+1]:]) < 0 {
			next++
		}
		if q.p.compare(q.m, buf[q.heap[next]:], buf[e:]) <= 0 {
			break
		}
		q.heap[idx] = q.heap[next]
		idx = next
	}
	q.heap[idx] = e
}
