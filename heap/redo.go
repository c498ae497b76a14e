package heap

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
)

// The heap's redo operations. Every change the heap makes to a heap or
// FSM page is one of these, logged through the mini-transaction that
// holds the page (cache.Mtr.Log) and redone by the same hpage or FSM code
// that did it, in the style of MySQL 5.7's page records (MLOG_REC_INSERT,
// MLOG_REC_UPDATE_IN_PLACE, MLOG_REC_DELETE, MLOG_PAGE_REORGANIZE,
// MLOG_PAGE_CREATE): a record says what was done to the page, in a few
// bytes plus the row, not which bytes changed. doc.go explains the choice.
//
// Each operation's redo depends only on the page as it was before the
// operation and on the payload, and rebuilds the page byte for byte, free
// space and leftover bytes included: the code is deterministic, and
// compaction copies through a scratch buffer, so it leaves below the new
// cell start exactly what the page held there before.
//
// The payloads, after the record's kind and page (redo.Builder). uvarint
// is an unsigned LEB128 varint (encoding/binary); the row is the rest of
// the payload, its length implied by the payload's.
//
//	kind              payload                               redo
//	----------------  ------------------------------------  -----------------------------
//	64 heap-init      (none)                                initHeapPage, on a page that
//	                                                        redo.KindInit made a heap page
//	65 heap-insert    +-------------+-----+                 hpage.insert(row); the row
//	                  | slot uvarint| row |                 must land in slot (the lowest
//	                  +-------------+-----+                 deleted slot, else a new one)
//	66 heap-update    +-------------+------+                hpage.update(slot, row), in
//	                  | slot uvarint| edit |                place, row = the edit applied
//	                  +-------------+------+                to the slot's row (its length
//	                                                        may change; redo.AppendEdit)
//	72 heap-patch     +-------------+-------------------+   each range's bytes copied into
//	                  | slot uvarint| ranges ...        |   the slot's row, whose length
//	                  +-------------+-------------------+   stays: a range is gap uvarint
//	                                                        (from the previous range's end),
//	                                                        length uvarint, bytes
//	67 heap-delete    +-------------+                       hpage.del(slot), trimming
//	                  | slot uvarint|                       deleted slots off the end
//	                  +-------------+
//	68 heap-compact   (none)                                hpage.compact: live cells
//	                                                        packed against the page end
//	69 fsm-init       +-------------------+                 initFSMPage: magic, version,
//	                  | first page uvarint|                 no next page, first page,
//	                  +-------------------+                 every category 0
//	70 fsm-set        +--------------+-----+                the category byte at index
//	                  | index uvarint| cat |                in the FSM page's body
//	                  +--------------+-----+
//	71 fsm-link       +------------------+                  the page's "next FSM"
//	                  | next page uvarint|
//	                  +------------------+
//	73 heap-xmax      +------+------+-----------+-----------+-----+----+
//	                  | slot | xmax | ctid page | ctid slot | im2 | im |
//	                  +------+------+-----------+-----------+-----+----+
//	                  uvarints, then infomask2 and infomask (2B each, LE):
//	                  the fields a delete, lock or update writes into the
//	                  versioned tuple in slot (tuple.setXmaxFields)
//	74 heap-hint      +-------------+------------+          the hint bits ORed into
//	                  | slot uvarint| bits (2B)  |          the tuple's infomask
//	                  +-------------+------------+
//	75 heap-prune     +------+---------------+------+-------+---------+--------+
//	                  | nred | (from, to) ...| ndead| slot..| nunused | slot.. |
//	                  +------+---------------+------+-------+---------+--------+
//	                  all uvarints; hpage.pruneExecute: redirects, dead
//	                  and unused line pointers set, trailing unused
//	                  slots trimmed, the page compacted
//
// The versioned tuples' records follow PostgreSQL's heap WAL records: a
// new version is a heap-insert of its cell (XLOG_HEAP_INSERT, and the new
// half of XLOG_HEAP_HOT_UPDATE / XLOG_HEAP_UPDATE), heap-xmax is the
// old half of an update, a delete (XLOG_HEAP_DELETE) or a row lock
// (XLOG_HEAP_LOCK), heap-hint is what wal_log_hints makes PostgreSQL log
// (as a full-page image there; a few bytes here), and heap-prune is
// XLOG_HEAP2_PRUNE, replayed by heap_page_prune_execute.
//
// An update in place that keeps the row's length (a counter column, a
// status flag) logs only the byte ranges that changed, as heap-patch:
// MLOG_REC_UPDATE_IN_PLACE likewise logs only the updated fields, not the
// record. One that changes the length logs an edit from the old row
// (redo.AppendEdit), so a column whose varint grew costs about its bytes. The update and its redo both
// write those bytes into the row's cell, which is all hpage.update does
// for a row of the same length: the row stays in its cell, and nothing
// else on the page changes.
//
// A heap insert or update that needs the room frag holds logs the
// compaction as its own operation before it, as InnoDB logs a page
// reorganisation (MLOG_PAGE_REORGANIZE) before the insert that needed
// it, so that each operation's redo is one step; an update that
// compacts is logged as InnoDB logs an optimistic update that changes a
// record's size (btr_cur_optimistic_update: delete, reorganise, insert),
// except that the row keeps its slot: heap-update to an empty row (its
// old cell given back), heap-compact, heap-update to the new row. The
// nested compaction inside hpage.insert and hpage.update then never runs
// on these paths, so nothing is logged twice and the record says every
// step that was taken.
//
// Each applier checks its payload against the page before it changes
// anything (the kind of page, the slot in range and live, the row no
// longer than MaxRowSize and fitting, and the page's own consistency,
// hpage.cellsOK, which the hpage code relies on to stay inside the page)
// and returns an error, never panics, on a payload or a page that does
// not fit: a damaged log or page is reported, as ErrCorruptLog by
// redo.PageRedo.Apply.
const (
	kindHeapInit    redo.Kind = 64
	kindHeapInsert  redo.Kind = 65
	kindHeapUpdate  redo.Kind = 66
	kindHeapDelete  redo.Kind = 67
	kindHeapCompact redo.Kind = 68
	kindFSMInit     redo.Kind = 69
	kindFSMSet      redo.Kind = 70
	kindFSMLink     redo.Kind = 71
	kindHeapPatch   redo.Kind = 72
	kindHeapXmax    redo.Kind = 73
	kindHeapHint    redo.Kind = 74
	kindHeapPrune   redo.Kind = 75
	kindHeapFlags   redo.Kind = 76
	kindVMInit      redo.Kind = 77
	kindVMSet       redo.Kind = 78
	kindVMClear     redo.Kind = 79
	kindVMLink      redo.Kind = 80
)

// heapKinds lists the heap's kinds with their names and appliers.
var heapKinds = []struct {
	k     redo.Kind
	name  string
	apply redo.ApplyFunc
}{
	{kindHeapInit, "heap-init", redoHeapInit},
	{kindHeapInsert, "heap-insert", redoHeapInsert},
	{kindHeapUpdate, "heap-update", redoHeapUpdate},
	{kindHeapPatch, "heap-patch", redoHeapPatch},
	{kindHeapDelete, "heap-delete", redoHeapDelete},
	{kindHeapCompact, "heap-compact", redoHeapCompact},
	{kindFSMInit, "fsm-init", redoFSMInit},
	{kindFSMSet, "fsm-set", redoFSMSet},
	{kindFSMLink, "fsm-link", redoFSMLink},
	{kindHeapXmax, "heap-xmax", redoHeapXmax},
	{kindHeapHint, "heap-hint", redoHeapHint},
	{kindHeapPrune, "heap-prune", redoHeapPrune},
	{kindHeapFlags, "heap-flags", redoHeapFlags},
	{kindVMInit, "vm-init", redoVMInit},
	{kindVMSet, "vm-set", redoVMSet},
	{kindVMClear, "vm-clear", redoVMClear},
	{kindVMLink, "vm-link", redoVMLink},
}

func init() {
	for _, k := range heapKinds {
		redo.Register(k.k, k.name, k.apply)
	}
}

// The logged operations: each changes a page latched by mt and logs what
// it did. Without a log (mt.Logging false) the payload is not built; the
// page still counts as changed.

// logSlotRow logs an operation of kind k whose payload is slot s and row.
func logSlotRow(mt *cache.Mtr, pg *cache.Page, k redo.Kind, s int, row []byte) {
	if !mt.Logging() {
		mt.Log(pg, k, nil)
		return
	}
	p := binary.AppendUvarint(mt.Payload(), uint64(s))
	mt.Log(pg, k, append(p, row...))
}

// logUvarint logs an operation of kind k whose payload is v, then the
// bytes of tail.
func logUvarint(mt *cache.Mtr, pg *cache.Page, k redo.Kind, v uint64, tail ...byte) {
	if !mt.Logging() {
		mt.Log(pg, k, nil)
		return
	}
	p := binary.AppendUvarint(mt.Payload(), v)
	mt.Log(pg, k, append(p, tail...))
}

// heapInit writes an empty heap header into pg, which AllocPage has just
// formatted as a heap page (and logged as redo.KindInit).
func heapInit(mt *cache.Mtr, pg *cache.Page) {
	initHeapPage(pg.Data())
	mt.Log(pg, kindHeapInit, nil)
}

// heapCompact compacts pg and logs it.
func heapCompact(mt *cache.Mtr, pg *cache.Page) {
	hpage(pg.Data()).compact()
	mt.Log(pg, kindHeapCompact, nil)
}

// heapInsert inserts row into heap page pg and logs it (a compaction it
// needs first as an operation of its own). It reports false, changing
// nothing, if the row does not fit. REQUIRES: pg exclusively latched by
// mt, headerOK.
func heapInsert(mt *cache.Mtr, pg *cache.Page, row []byte) (int, bool) {
	b := hpage(pg.Data())
	if !b.fits(len(row)) {
		return 0, false
	}
	if b.insertCompacts(len(row)) {
		heapCompact(mt, pg)
	}
	s, _ := b.insert(row)
	logSlotRow(mt, pg, kindHeapInsert, s, row)
	return s, true
}

// heapUpdate replaces live slot s's row of heap page pg with row in place
// and logs it; see the comment at the top of the file for an update that
// compacts. It reports false, changing nothing, if the row does not fit.
// REQUIRES: pg exclusively latched by mt, headerOK, slot s live and
// valid.
func heapUpdate(mt *cache.Mtr, pg *cache.Page, s int, row []byte) bool {
	b := hpage(pg.Data())
	if !b.fitsInPlace(s, row) {
		return false
	}
	if off, n := b.slot(s); n > 0 && len(row) == n {
		// Same length: the row stays in its cell; log the byte ranges
		// that changed.
		old := b[off : off+n]
		var p []byte
		if mt.Logging() {
			p = redo.AppendPatch(binary.AppendUvarint(mt.Payload(), uint64(s)), old, row)
		}
		copy(old, row)
		mt.Log(pg, kindHeapPatch, p)
		return true
	}
	if b.updateCompacts(s, row) {
		logSlotEdit(mt, pg, s, nil)
		b.update(s, nil)
		heapCompact(mt, pg)
	}
	logSlotEdit(mt, pg, s, row)
	b.update(s, row)
	return true
}

// logSlotEdit logs an update of live slot s of heap page pg to row as a
// heap-update whose payload is the edit from the row the slot holds now
// (redo.AppendEdit): a row whose varint column grew by a byte costs about
// that column. The caller updates the page after.
func logSlotEdit(mt *cache.Mtr, pg *cache.Page, s int, row []byte) {
	if !mt.Logging() {
		mt.Log(pg, kindHeapUpdate, nil)
		return
	}
	old, _, _ := hpage(pg.Data()).row(s)
	p := binary.AppendUvarint(mt.Payload(), uint64(s))
	mt.Log(pg, kindHeapUpdate, redo.AppendEdit(p, old, row))
}

// heapDelete deletes live slot s of heap page pg and logs it. REQUIRES:
// pg exclusively latched by mt, headerOK, slot s live and valid.
func heapDelete(mt *cache.Mtr, pg *cache.Page, s int) {
	hpage(pg.Data()).del(s)
	logUvarint(mt, pg, kindHeapDelete, uint64(s))
}

// fsmInit formats the header and body of FSM page pg, which AllocPage has
// just formatted as an FSM page, for the FSM page covering pages from
// first on, and logs it.
func fsmInit(mt *cache.Mtr, pg *cache.Page, first uint32) {
	initFSMPage(pg.Data(), first)
	logUvarint(mt, pg, kindFSMInit, uint64(first))
}

// fsmSetByte stores cat at index idx of FSM page pg's body and logs it.
func fsmSetByte(mt *cache.Mtr, pg *cache.Page, idx int, cat uint8) {
	pg.Data()[fsmBodyStart+idx] = cat
	logUvarint(mt, pg, kindFSMSet, uint64(idx), cat)
}

// fsmLink makes next the page after FSM page pg in the chain and logs
// it.
func fsmLink(mt *cache.Mtr, pg *cache.Page, next uint32) {
	binary.LittleEndian.PutUint32(pg.Data()[offFSMNext:], next)
	logUvarint(mt, pg, kindFSMLink, uint64(next))
}

// The appliers.

// redoPage checks that buf is a page of a valid size and of kind k.
func redoPage(buf []byte, k page.Kind) error {
	if !page.ValidSize(len(buf)) {
		return fmt.Errorf("a %d-byte page", len(buf))
	}
	if got := page.KindOf(buf); got != k {
		return fmt.Errorf("the page has kind %s, not %s", got, k)
	}
	return nil
}

// redoHeapPage checks that buf is a heap page the hpage code can work on.
func redoHeapPage(buf []byte) (hpage, error) {
	if err := redoPage(buf, page.KindHeap); err != nil {
		return nil, err
	}
	b := hpage(buf)
	if err := b.cellsOK(); err != nil {
		return nil, fmt.Errorf("heap page: %w", err)
	}
	return b, nil
}

// readSlotRow reads a slot-and-row payload and checks the row's length.
func readSlotRow(b hpage, payload []byte) (int, []byte, error) {
	r := redo.NewReader(payload)
	s := r.Int(math.MaxUint16)
	row := r.Rest()
	if err := r.Err(); err != nil {
		return 0, nil, err
	}
	if mx := MaxRowSize(len(b)); len(row) > mx {
		return 0, nil, fmt.Errorf("a %d-byte row, at most %d", len(row), mx)
	}
	return s, row, nil
}

// liveSlotForRedo checks that slot s of b is live.
func liveSlotForRedo(b hpage, s int) error {
	if s >= b.nslots() {
		return fmt.Errorf("slot %d of %d", s, b.nslots())
	}
	if off, _ := b.slot(s); off == 0 {
		return fmt.Errorf("slot %d is deleted", s)
	}
	return nil
}

// readPageNo reads a whole payload that is one uvarint page number.
func readPageNo(r *redo.Reader) (uint32, error) {
	v := r.Uvarint()
	if err := r.Err(); err != nil {
		return 0, err
	}
	if v > math.MaxUint32 {
		return 0, fmt.Errorf("page number %d", v)
	}
	return uint32(v), nil
}

func redoHeapInit(_ page.ID, buf, payload []byte) error {
	if len(payload) != 0 {
		return fmt.Errorf("%d bytes of payload, want none", len(payload))
	}
	if err := redoPage(buf, page.KindHeap); err != nil {
		return err
	}
	initHeapPage(buf)
	return nil
}

func redoHeapInsert(_ page.ID, buf, payload []byte) error {
	b, err := redoHeapPage(buf)
	if err != nil {
		return err
	}
	s, row, err := readSlotRow(b, payload)
	if err != nil {
		return err
	}
	if !b.fits(len(row)) {
		return fmt.Errorf("a %d-byte row does not fit (%d bytes free, %d deleted slots)", len(row), b.free(), b.ndead())
	}
	if want := b.insertSlot(); s != want {
		return fmt.Errorf("the row goes to slot %d, the record says %d", want, s)
	}
	b.insert(row)
	return nil
}

func redoHeapUpdate(_ page.ID, buf, payload []byte) error {
	b, err := redoHeapPage(buf)
	if err != nil {
		return err
	}
	r := redo.NewReader(payload)
	s := r.Int(math.MaxUint16)
	edit := r.Rest()
	if err := r.Err(); err != nil {
		return err
	}
	if err := liveSlotForRedo(b, s); err != nil {
		return err
	}
	old, _, ok := b.row(s)
	if !ok {
		return fmt.Errorf("slot %d points outside the page", s)
	}
	var stack [1024]byte
	row, err := redo.ApplyEdit(stack[:0], old, edit, MaxRowSize(len(b)))
	if err != nil {
		return err
	}
	if !b.fitsInPlace(s, row) {
		_, n := b.slot(s)
		return fmt.Errorf("a %d-byte row does not fit in place of %d bytes (%d bytes free)", len(row), n, b.free())
	}
	b.update(s, row)
	return nil
}

func redoHeapPatch(_ page.ID, buf, payload []byte) error {
	b, err := redoHeapPage(buf)
	if err != nil {
		return err
	}
	r := redo.NewReader(payload)
	s := r.Int(math.MaxUint16)
	patch := r.Rest()
	if err := r.Failed(); err != nil {
		return err
	}
	if err := liveSlotForRedo(b, s); err != nil {
		return err
	}
	off, n := b.slot(s)
	if n == 0 || off+n > len(b) {
		return fmt.Errorf("patch of the %d-byte row in slot %d", n, s)
	}
	return redo.ApplyPatch(b[off:off+n], patch)
}

func redoHeapDelete(_ page.ID, buf, payload []byte) error {
	b, err := redoHeapPage(buf)
	if err != nil {
		return err
	}
	r := redo.NewReader(payload)
	s := r.Int(math.MaxUint16)
	if err := r.Err(); err != nil {
		return err
	}
	if err := liveSlotForRedo(b, s); err != nil {
		return err
	}
	b.del(s)
	return nil
}

func redoHeapCompact(_ page.ID, buf, payload []byte) error {
	if len(payload) != 0 {
		return fmt.Errorf("%d bytes of payload, want none", len(payload))
	}
	b, err := redoHeapPage(buf)
	if err != nil {
		return err
	}
	b.compact()
	return nil
}

func redoFSMInit(_ page.ID, buf, payload []byte) error {
	if err := redoPage(buf, page.KindFSM); err != nil {
		return err
	}
	r := redo.NewReader(payload)
	first, err := readPageNo(&r)
	if err != nil {
		return err
	}
	initFSMPage(buf, first)
	return nil
}

func redoFSMSet(_ page.ID, buf, payload []byte) error {
	if err := redoPage(buf, page.KindFSM); err != nil {
		return err
	}
	r := redo.NewReader(payload)
	idx := r.Int(len(buf) - fsmBodyStart - 1)
	cat := r.Byte()
	if err := r.Err(); err != nil {
		return err
	}
	buf[fsmBodyStart+idx] = cat
	return nil
}

func redoFSMLink(id page.ID, buf, payload []byte) error {
	return redoLink(id, buf, payload, page.KindFSM, "FSM", offFSMNext)
}

// redoLink applies a link record of a chained page of kind k (free-space
// map, visibility map): the next page's number, at offset off.
func redoLink(id page.ID, buf, payload []byte, k page.Kind, what string, off int) error {
	if err := redoPage(buf, k); err != nil {
		return err
	}
	r := redo.NewReader(payload)
	next, err := readPageNo(&r)
	if err != nil {
		return err
	}
	if next == 0 || next == id.Page {
		return fmt.Errorf("link to page %d from %s page %d", next, what, id.Page)
	}
	binary.LittleEndian.PutUint32(buf[off:], next)
	return nil
}

// heapXmax writes the xmax fields of the versioned tuple in slot s of pg
// and logs them. REQUIRES: pg exclusively latched by mt, slot s a
// versioned tuple.
func heapXmax(mt *cache.Mtr, pg *cache.Page, s int, xmax uint64, ctid RowPtr, im2, im uint16) {
	hpage(pg.Data()).tupleAt(s).setXmaxFields(xmax, ctid, im2, im)
	if !mt.Logging() {
		mt.Log(pg, kindHeapXmax, nil)
		return
	}
	p := binary.AppendUvarint(mt.Payload(), uint64(s))
	p = binary.AppendUvarint(p, xmax)
	p = binary.AppendUvarint(p, uint64(ctid.Page))
	p = binary.AppendUvarint(p, uint64(ctid.Slot))
	p = binary.LittleEndian.AppendUint16(p, im2)
	mt.Log(pg, kindHeapXmax, binary.LittleEndian.AppendUint16(p, im))
}

// heapHint ORs hint bits into the infomask of the versioned tuple in slot
// s of pg and logs it.
func heapHint(mt *cache.Mtr, pg *cache.Page, s int, bits uint16) {
	t := hpage(pg.Data()).tupleAt(s)
	t.setInfomask(t.infomask() | bits)
	logUvarint(mt, pg, kindHeapHint, uint64(s), byte(bits), byte(bits>>8))
}

// redoVersionSlot checks that slot s of b holds a versioned tuple.
func redoVersionSlot(b hpage, s int) (tuple, error) {
	if err := liveSlotForRedo(b, s); err != nil {
		return nil, err
	}
	t := b.tupleAt(s)
	if t == nil {
		return nil, fmt.Errorf("slot %d holds no versioned tuple", s)
	}
	return t, nil
}

func redoHeapXmax(_ page.ID, buf, payload []byte) error {
	b, err := redoHeapPage(buf)
	if err != nil {
		return err
	}
	r := redo.NewReader(payload)
	s := r.Int(math.MaxUint16)
	xmax := r.Uvarint()
	cp := r.Uvarint()
	cs := r.Int(math.MaxUint16)
	var im [4]byte
	for i := range im {
		im[i] = r.Byte()
	}
	if err := r.Err(); err != nil {
		return err
	}
	if cp > math.MaxUint32 {
		return fmt.Errorf("ctid page %d", cp)
	}
	t, err := redoVersionSlot(b, s)
	if err != nil {
		return err
	}
	t.setXmaxFields(xmax, RowPtr{Page: uint32(cp), Slot: uint16(cs)},
		binary.LittleEndian.Uint16(im[0:]), binary.LittleEndian.Uint16(im[2:]))
	return nil
}

func redoHeapHint(_ page.ID, buf, payload []byte) error {
	b, err := redoHeapPage(buf)
	if err != nil {
		return err
	}
	r := redo.NewReader(payload)
	s := r.Int(math.MaxUint16)
	lo, hi := r.Byte(), r.Byte()
	if err := r.Err(); err != nil {
		return err
	}
	bits := uint16(lo) | uint16(hi)<<8
	if bits&^hintBits != 0 {
		return fmt.Errorf("hint bits %#04x include non-hint bits", bits)
	}
	t, err := redoVersionSlot(b, s)
	if err != nil {
		return err
	}
	t.setInfomask(t.infomask() | bits)
	return nil
}
