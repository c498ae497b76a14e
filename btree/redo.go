package btree

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
)

// Redo of node changes. Every change the tree makes to a node is logged as
// one logical operation on that node, in the style of MySQL 5.7's page
// records (MLOG_REC_INSERT, MLOG_REC_DELETE, MLOG_LIST_END_COPY_CREATED,
// MLOG_LIST_END_DELETE): what was done, with the key and value it was done
// with, never the bytes it moved. Redo calls the same node method that did
// the change, which is deterministic, so the node comes out byte for byte
// as it was (its free space, its garbage and its head array included). An
// operation reads only its own node's earlier state: a split is logged as
// one operation on the node that keeps the first half ("split-keep", which
// recomputes the split point from the node itself), one that fills the new
// sibling with the entries it received ("fill"), and one on the parent
// (an inner insert), all in the split's mini-transaction.
//
// Links (prev, next, leftmost child) are 4-byte writes (redo.KindWrite).
// The two rare changes that copy a whole node body to another page (the
// root pushed down a level when it splits, and collapsed when it has one
// child left) log the body as one write.
//
// Payloads (every integer an unsigned varint; "key" is a uvarint length
// and the bytes):
//
//	leaf-insert    i, shared, suffix, vshared, vsuffix (the rest)
//	               node.insertLeaf(i, key, value): key = the first "shared"
//	               bytes of key i-1, then suffix; value = the first
//	               "vshared" bytes of value i-1, then vsuffix
//	inner-insert   i, child, key                   node.insertInner(i, key, child)
//	remove         i                               node.remove(i)
//	replace        i, edit (the rest)              node.replaceVal(i, the edit applied to the value)
//	init           level                           node.init(level)
//	split-keep     i, flags, key, value | child    splitKeep: entries before the split point
//	fill           level, left, last, n, n × (key, value | child)   init, n appends, last insert
//	append-cells   n, n × cell (raw)               node.appendCell × n (a merge)
//	truncate       from                            entries from "from" on removed
//	patch          i, ranges (redo.AppendPatch)    the value's changed bytes
//
// A replace by a value of another length logs a value edit
// (redo.AppendEdit): the old value's bytes it keeps and the new ones, so
// a row whose varint column grew by a byte costs about that column. A
// replace by a value of the same length (an update of fixed-size
// columns, the common case: a stock row's quantity and counters) is logged
// as a patch: the byte ranges of the value that changed, each after the gap
// from the previous one, as InnoDB's MLOG_REC_UPDATE_IN_PLACE logs only
// the updated fields. Finding them compares the old and new value (tens to
// hundreds of bytes), never the page.
//
//	split-keep flags: bit 0 the entry replaces entry i (an update that grew),
//	bit 1 the node is a leaf (value follows the key; else a child).
const (
	kindLeafInsert  redo.Kind = 32
	kindInnerInsert redo.Kind = 33
	kindRemove      redo.Kind = 34
	kindReplace     redo.Kind = 35
	kindInit        redo.Kind = 36
	kindSplitKeep   redo.Kind = 37
	kindFill        redo.Kind = 38
	kindAppendCells redo.Kind = 39
	kindTruncate    redo.Kind = 40
	kindPatch       redo.Kind = 41
)

func init() {
	redo.Register(kindLeafInsert, "btree-leaf-insert", applyLeafInsert)
	redo.Register(kindInnerInsert, "btree-inner-insert", applyInnerInsert)
	redo.Register(kindRemove, "btree-remove", applyRemove)
	redo.Register(kindReplace, "btree-replace", applyReplace)
	redo.Register(kindInit, "btree-init", applyInit)
	redo.Register(kindSplitKeep, "btree-split-keep", applySplitKeep)
	redo.Register(kindFill, "btree-fill", applyFill)
	redo.Register(kindAppendCells, "btree-append-cells", applyAppendCells)
	redo.Register(kindTruncate, "btree-truncate", applyTruncate)
	redo.Register(kindPatch, "btree-patch", applyPatch)
}

var errBadOp = errors.New("operation does not fit the node")

func appendKey(p, key []byte) []byte {
	p = binary.AppendUvarint(p, uint64(len(key)))
	return append(p, key...)
}

// Logged node changes. Each changes the node the way the node method does
// and logs it on mt (which holds pg's exclusive latch).

func insertLeaf(mt *cache.Mtr, pg *cache.Page, i int, key, val []byte) bool {
	n := node(pg.Data())
	if !n.insertLeaf(i, key, val) {
		return false
	}
	if mt.Logging() {
		// The key and the value each as the bytes it shares with the
		// entry before it and the rest, as MariaDB's page_cur_insert_rec_low
		// logs a record as its mismatch with the cursor record (the bytes
		// it copies from the preceding record, then its own): consecutive
		// keys share most of their bytes (an order's lines differ in the
		// line number only), and so do the values a transaction inserts
		// next to each other (the same DB_TRX_ID, a roll pointer into the
		// same undo page).
		shared, vshared := 0, 0
		if i > 0 {
			shared = commonPrefix(n.key(i-1), key)
			vshared = commonPrefix(n.val(i-1), val)
		}
		p := binary.AppendUvarint(mt.Payload(), uint64(i))
		p = binary.AppendUvarint(p, uint64(shared))
		p = appendKey(p, key[shared:])
		p = binary.AppendUvarint(p, uint64(vshared))
		mt.Log(pg, kindLeafInsert, append(p, val[vshared:]...))
	} else {
		mt.Log(pg, kindLeafInsert, nil)
	}
	return true
}

func insertInner(mt *cache.Mtr, pg *cache.Page, i int, key []byte, child uint32) bool {
	if !node(pg.Data()).insertInner(i, key, child) {
		return false
	}
	p := binary.AppendUvarint(mt.Payload(), uint64(i))
	p = binary.AppendUvarint(p, uint64(child))
	mt.Log(pg, kindInnerInsert, appendKey(p, key))
	return true
}

func remove(mt *cache.Mtr, pg *cache.Page, i int) {
	node(pg.Data()).remove(i)
	mt.Log(pg, kindRemove, binary.AppendUvarint(mt.Payload(), uint64(i)))
}

func replaceVal(mt *cache.Mtr, pg *cache.Page, i int, val []byte) bool {
	n := node(pg.Data())
	if old := n.val(i); len(old) == len(val) {
		var p []byte
		if mt.Logging() {
			p = appendPatch(mt.Payload(), i, old, val)
		}
		copy(old, val)
		mt.Log(pg, kindPatch, p)
		return true
	}
	var p []byte
	if mt.Logging() {
		// The edit from the old value to the new, built before the cell
		// moves (n.val(i) aliases the page).
		p = binary.AppendUvarint(mt.Payload(), uint64(i))
		p = redo.AppendEdit(p, n.val(i), val)
	}
	if !n.replaceVal(i, val) {
		return false
	}
	mt.Log(pg, kindReplace, p)
	return true
}

func initNode(mt *cache.Mtr, pg *cache.Page, level int) {
	node(pg.Data()).init(level)
	mt.Log(pg, kindInit, binary.AppendUvarint(mt.Payload(), uint64(level)))
}

func setPrev(mt *cache.Mtr, pg *cache.Page, v uint32) { mt.Write32(pg, offPrev, v) }
func setNext(mt *cache.Mtr, pg *cache.Page, v uint32) { mt.Write32(pg, offNext, v) }
func setLeft(mt *cache.Mtr, pg *cache.Page, v uint32) { mt.Write32(pg, offLeft, v) }

// raiseMaxTrx sets leaf pg's max trx id to v if that is higher, logged
// in mt.
func raiseMaxTrx(mt *cache.Mtr, pg *cache.Page, v uint64) {
	n := node(pg.Data())
	if v <= n.maxTrx() || !n.isLeaf() {
		return
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	mt.Write(pg, offMaxTrx, b[:])
}

// moveTail moves entries [from, count) of node pg to the end of node dst
// (a merge), logging an append-cells on dst and a truncate on pg.
func moveTail(mt *cache.Mtr, pg, dst *cache.Page, from int) {
	n, d := node(pg.Data()), node(dst.Data())
	p := mt.Payload()
	if mt.Logging() {
		p = binary.AppendUvarint(p, uint64(n.count()-from))
		for i := from; i < n.count(); i++ {
			off := n.slot(i)
			p = append(p, n[off:off+n.cellSize(off)]...)
		}
	}
	n.moveTail(d, from)
	mt.Log(dst, kindAppendCells, p)
	mt.Log(pg, kindTruncate, binary.AppendUvarint(mt.Payload(), uint64(from)))
}

// logSplit logs a split of node pg (entry e at i) into pg and the new
// sibling sib, after splitNode did it.
func logSplit(mt *cache.Mtr, pg, sib *cache.Page, i int, e entry) {
	n, s := node(pg.Data()), node(sib.Data())
	var flags byte
	if e.replace {
		flags |= 1
	}
	if n.isLeaf() {
		flags |= 2
	}
	p := binary.AppendUvarint(mt.Payload(), uint64(i))
	p = append(p, flags)
	p = appendKey(p, e.key)
	if n.isLeaf() {
		p = appendKey(p, e.val)
	} else {
		p = binary.AppendUvarint(p, uint64(e.child))
	}
	mt.Log(pg, kindSplitKeep, p)
	mt.Log(sib, kindFill, fillPayload(mt.Payload(), s))
}

// fillPayload describes node s as a fill operation: its level, leftmost
// child and entries, which init and appends in order rebuild.
func fillPayload(p []byte, s node) []byte {
	p = binary.AppendUvarint(p, uint64(s.level()))
	p = binary.AppendUvarint(p, uint64(s.left()))
	p = binary.AppendUvarint(p, uint64(s.lastInsert()))
	p = binary.AppendUvarint(p, uint64(s.count()))
	for j := 0; j < s.count(); j++ {
		p = appendKey(p, s.key(j))
		if s.isLeaf() {
			p = appendKey(p, s.val(j))
		} else {
			p = binary.AppendUvarint(p, uint64(s.child(j)))
		}
	}
	return p
}

// copyBody makes dst's body a copy of src's and logs it as one write: the
// root pushed down or collapsed (rare).
func copyBody(mt *cache.Mtr, dst, src *cache.Page) {
	mt.Write(dst, page.HeaderSize, src.Data()[page.HeaderSize:])
}

// Appliers. Each checks its payload against the node before it changes
// anything it cannot finish, and never indexes outside the page.

// nodeOK reports whether buf's node header is sane enough for the node
// methods to run on: counts and offsets inside the page.
func nodeOK(n node) bool {
	if len(n) < nodeHeader+slotSize {
		return false
	}
	c, cs := n.count(), n.cellStart()
	if n.slotsEnd() > cs || cs > len(n) || n.garbage() > len(n) {
		return false
	}
	if p := n.prefix(); p != noPrefix && p > len(n) {
		return false
	}
	for i := 0; i < c; i++ {
		off := n.slot(i)
		if off < cs || off+innerCellHead > len(n) {
			return false
		}
		if off+n.cellSize(off) > len(n) {
			return false
		}
	}
	return true
}

func applyLeafInsert(_ page.ID, buf, payload []byte) error {
	n := node(buf)
	r := redo.NewReader(payload)
	i := r.Int(len(buf))
	shared := r.Int(len(buf))
	suffix := r.Prefixed()
	vshared := r.Int(len(buf))
	vsuffix := r.Rest()
	if err := r.Err(); err != nil {
		return err
	}
	if !nodeOK(n) || !n.isLeaf() || i > n.count() ||
		(shared > 0 && (i == 0 || shared > len(n.key(i-1)))) ||
		(vshared > 0 && (i == 0 || vshared > len(n.val(i-1)))) {
		return fmt.Errorf("leaf insert at %d: %w", i, errBadOp)
	}
	var stack [256]byte
	key := stack[:0]
	if shared > 0 {
		key = append(key, n.key(i - 1)[:shared]...)
	}
	key = append(key, suffix...)
	val := vsuffix
	if vshared > 0 {
		// Copied out before the insert moves the entries.
		var vstack [512]byte
		val = append(append(vstack[:0], n.val(i - 1)[:vshared]...), vsuffix...)
	}
	if !n.insertLeaf(i, key, val) {
		return fmt.Errorf("leaf insert at %d: %w", i, errBadOp)
	}
	return nil
}

func applyInnerInsert(_ page.ID, buf, payload []byte) error {
	n := node(buf)
	r := redo.NewReader(payload)
	i := r.Int(len(buf))
	child := uint32(r.Int(1<<32 - 1))
	key := r.Prefixed()
	if err := r.Err(); err != nil {
		return err
	}
	if !nodeOK(n) || n.isLeaf() || i > n.count() || !n.insertInner(i, key, child) {
		return fmt.Errorf("inner insert at %d: %w", i, errBadOp)
	}
	return nil
}

func applyRemove(_ page.ID, buf, payload []byte) error {
	n := node(buf)
	r := redo.NewReader(payload)
	i := r.Int(len(buf))
	if err := r.Err(); err != nil {
		return err
	}
	if !nodeOK(n) || i >= n.count() {
		return fmt.Errorf("remove of %d: %w", i, errBadOp)
	}
	n.remove(i)
	return nil
}

func applyReplace(_ page.ID, buf, payload []byte) error {
	n := node(buf)
	r := redo.NewReader(payload)
	i := r.Int(len(buf))
	edit := r.Rest()
	if err := r.Err(); err != nil {
		return err
	}
	if !nodeOK(n) || !n.isLeaf() || i >= n.count() {
		return fmt.Errorf("replace of %d: %w", i, errBadOp)
	}
	bp := compactBuf.Get().(*[]byte)
	defer compactBuf.Put(bp)
	val, err := redo.ApplyEdit((*bp)[:0], n.val(i), edit, len(buf)/2)
	if err != nil {
		return err
	}
	if !n.replaceVal(i, val) {
		return fmt.Errorf("replace of %d: %w", i, errBadOp)
	}
	return nil
}

func applyInit(_ page.ID, buf, payload []byte) error {
	r := redo.NewReader(payload)
	level := r.Int(0xFFFF)
	if err := r.Err(); err != nil {
		return err
	}
	if len(buf) < nodeHeader+slotSize {
		return errBadOp
	}
	node(buf).init(level)
	return nil
}

func applySplitKeep(_ page.ID, buf, payload []byte) error {
	n := node(buf)
	r := redo.NewReader(payload)
	i := r.Int(len(buf))
	flags := r.Byte()
	e := entry{key: r.Prefixed(), replace: flags&1 != 0}
	if flags&2 != 0 {
		e.val = r.Prefixed()
	} else {
		e.child = uint32(r.Int(1<<32 - 1))
	}
	if err := r.Err(); err != nil {
		return err
	}
	if !nodeOK(n) || n.isLeaf() != (flags&2 != 0) || i > n.count() || (e.replace && i >= n.count()) ||
		n.count()+1 < 2 || (!n.isLeaf() && n.count()+1 < 3) {
		return fmt.Errorf("split of a node of %d entries at %d: %w", n.count(), i, errBadOp)
	}
	bp := compactBuf.Get().(*[]byte)
	defer compactBuf.Put(bp)
	tn := node((*bp)[:len(n)])
	copy(tn, n)
	best := splitPoint(tn, i, e)
	keepLeft(n, tn, i, e, best)
	return nil
}

func applyFill(_ page.ID, buf, payload []byte) error {
	n := node(buf)
	r := redo.NewReader(payload)
	level := r.Int(0xFFFF)
	left := uint32(r.Int(1<<32 - 1))
	last := r.Int(len(buf))
	cnt := r.Int(len(buf))
	if err := r.Failed(); err != nil {
		return err
	}
	if len(buf) < nodeHeader+slotSize {
		return errBadOp
	}
	n.init(level)
	if level > 0 {
		n.setLeft(left)
	}
	for j := 0; j < cnt; j++ {
		key := r.Prefixed()
		var ok bool
		if level == 0 {
			val := r.Prefixed()
			ok = r.Failed() == nil && n.insertLeaf(j, key, val)
		} else {
			child := uint32(r.Int(1<<32 - 1))
			ok = r.Failed() == nil && n.insertInner(j, key, child)
		}
		if !ok {
			if err := r.Failed(); err != nil {
				return err
			}
			return fmt.Errorf("fill entry %d: %w", j, errBadOp)
		}
	}
	if cnt > 0 {
		n.put16(offLast, last)
	}
	return r.Err()
}

func applyAppendCells(_ page.ID, buf, payload []byte) error {
	n := node(buf)
	r := redo.NewReader(payload)
	cnt := r.Int(len(buf))
	if err := r.Failed(); err != nil {
		return err
	}
	if !nodeOK(n) {
		return errBadOp
	}
	h := leafCellHeader
	if !n.isLeaf() {
		h = innerCellHead
	}
	for j := 0; j < cnt; j++ {
		if r.Left() < h {
			return fmt.Errorf("cell %d: %w", j, errBadOp)
		}
		hdr := r.Bytes(h)
		size := int(binary.LittleEndian.Uint16(hdr))
		if n.isLeaf() {
			size += int(binary.LittleEndian.Uint16(hdr[2:]) &^ killedBit)
		}
		if size > r.Left() || n.free() < h+size+slotSize {
			return fmt.Errorf("cell %d: %w", j, errBadOp)
		}
		cell := hdr[: h+size : h+size]
		r.Bytes(size)
		n.appendCell(cell)
	}
	return r.Err()
}

func applyTruncate(_ page.ID, buf, payload []byte) error {
	n := node(buf)
	r := redo.NewReader(payload)
	from := r.Int(len(buf))
	if err := r.Err(); err != nil {
		return err
	}
	if !nodeOK(n) || from > n.count() {
		return fmt.Errorf("truncate from %d: %w", from, errBadOp)
	}
	for n.count() > from {
		n.remove(n.count() - 1)
	}
	return nil
}

// appendPatch appends a patch payload for replacing value old of entry i
// by val (the same length): i and the changed ranges (redo.AppendPatch).
func appendPatch(p []byte, i int, old, val []byte) []byte {
	return redo.AppendPatch(binary.AppendUvarint(p, uint64(i)), old, val)
}

func applyPatch(_ page.ID, buf, payload []byte) error {
	n := node(buf)
	r := redo.NewReader(payload)
	i := r.Int(len(buf))
	patch := r.Rest()
	if err := r.Err(); err != nil {
		return err
	}
	if !nodeOK(n) || !n.isLeaf() || i >= n.count() {
		return fmt.Errorf("patch of entry %d: %w", i, errBadOp)
	}
	return redo.ApplyPatch(n.val(i), patch)
}
