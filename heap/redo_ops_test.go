package heap

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/cache/store"
)

// The tests of the heap's redo operations (redo.go): a model-based run
// whose log is replayed, record by record, onto page images that start
// from nothing, and compared byte for byte with the pages that wrote it;
// the kinds that run logs; and the appliers fed garbage.

// redoModelRun is the outcome of runRedoModel.
type redoModelRun struct {
	st    *store.PebbleStore
	pool  *cache.Pool
	h     *Heap
	md    *model
	start uint64 // the log's end before the space was created
	end   uint64
	// ops counts the operations the run did, by name.
	ops map[string]int
	// kinds counts the operations of the decoded records by kind;
	// patterns counts some sequences of operations on one page in one
	// record (an insert after the compaction it needed, an update that
	// compacts: update to empty, compact, update).
	kinds    map[redo.Kind]int
	patterns map[string]int
	records  int
	images   map[page.ID][]byte // the replay's pages, LSN stamped
}

// runRedoModel creates a heap on pages of pageSize bytes, in a pool with a
// redo log and enough frames that nothing is evicted (so nothing reaches
// the store but the log), and runs n seeded random operations against a
// model: inserts, updates in place (the same row with a few bytes
// changed, or another row shrinking or growing a little), moving updates, deletes, and two patterns that force a
// compaction (an insert into a fragmented page that needs frag's room,
// made the target page; an update in place that needs it). FSM pages
// cover fsmPer pages (0: the default), so that a small fsmPer makes FSM
// extensions (fsm-init, fsm-link) part of the run.
//
// It then replays the whole log, from before the space was created, onto
// page images that start empty (a page absent from the images must be
// created by its record: Fresh), applying each record's operations with
// redo.PageRedo.Apply and stamping its LSN, and counts the kinds and
// patterns of the operations it replayed.
func runRedoModel(t *testing.T, pageSize, n, fsmPer int, stream uint64) *redoModelRun {
	t.Helper()
	if fsmPer > 0 {
		withFSMPerPage(t, fsmPer)
	}
	rng := rand.New(rand.NewPCG(testSeed(t), stream))
	st := newStore(t, pageSize)
	lg, err := redo.Open(st, nil)
	require.NoError(t, err)
	r := &redoModelRun{st: st, start: lg.End(), md: newModel(), ops: map[string]int{}}
	r.pool = newPoolWithLog(t, st, 1024, lg)
	r.h, err = Create(nil, r.pool, 1)
	require.NoError(t, err)
	h, md := r.h, r.md
	maxRow := h.MaxRowSize()
	var m Meter

	row := func(n int) []byte { return randomBytes(rng, n) }
	insert := func(i int, b []byte) RowPtr {
		p, err := h.Insert(&m, b)
		require.NoError(t, err, "op %d", i)
		md.add(p, b)
		r.ops["insert"]++
		return p
	}
	update := func(i int, p RowPtr, b []byte) RowPtr {
		np, err := h.Update(&m, p, b)
		require.NoError(t, err, "op %d", i)
		if np == p {
			md.rows[p] = b
			r.ops["update"]++
		} else {
			md.remove(p)
			md.add(np, b)
			r.ops["move"]++
		}
		return np
	}
	for i := range n {
		switch x := rng.IntN(100); {
		case x < 35 || len(md.ptrs) == 0:
			if rng.IntN(4) == 0 {
				insert(i, row(300+rng.IntN(maxRow-300+1)))
			} else {
				insert(i, row(rng.IntN(120)))
			}
		case x < 43:
			// The same length, a few bytes changed (heap-patch), or
			// none.
			p := md.random(rng)
			b := bytes.Clone(md.rows[p])
			for range rng.IntN(4) {
				if len(b) > 0 {
					b[rng.IntN(len(b))] = byte(rng.Uint32())
				}
			}
			update(i, p, b)
		case x < 55:
			p := md.random(rng)
			old := len(md.rows[p])
			update(i, p, row(min(maxRow, max(0, old+rng.IntN(41)-24))))
		case x < 63:
			p := md.random(rng)
			update(i, p, row(maxRow-rng.IntN(100)))
		case x < 85:
			p := md.random(rng)
			require.NoError(t, h.Delete(&m, p), "op %d", i)
			md.remove(p)
			r.ops["delete"]++
		default:
			r.compactionPattern(t, rng, i, insert, update)
		}
	}
	md.check(t, h)
	require.Zero(t, m.Evictions, "the pool must hold the whole heap")
	require.Zero(t, m.StoreWrites)

	// Replay the log onto empty page images.
	require.NoError(t, lg.Flush(lg.End()))
	r.end = lg.End()
	r.kinds, r.patterns, r.images = map[redo.Kind]int{}, map[string]int{}, map[page.ID][]byte{}
	var pages []redo.PageRedo
	require.NoError(t, lg.Scan(r.start, func(lsn uint64, body []byte) error {
		r.records++
		var err error
		if pages, _, err = redo.Decode(body, pages); err != nil {
			return fmt.Errorf("record at LSN %d: %w", lsn, err)
		}
		for i := range pages {
			pr := &pages[i]
			img := r.images[pr.ID]
			if img == nil {
				require.True(t, pr.Fresh, "LSN %d: page %s first appears in a record that does not create it (%s first)",
					lsn, pr.ID, pr.Ops[0].Kind)
				img = make([]byte, pageSize)
				r.images[pr.ID] = img
			}
			if err := pr.Apply(img); err != nil {
				return fmt.Errorf("record at LSN %d: %w", lsn, err)
			}
			page.SetLSN(img, lsn)
			for j, op := range pr.Ops {
				r.kinds[op.Kind]++
				if j > 0 && op.Kind == kindHeapInsert && pr.Ops[j-1].Kind == kindHeapCompact {
					r.patterns["compact, insert"]++
				}
				if j > 1 && op.Kind == kindHeapUpdate && pr.Ops[j-1].Kind == kindHeapCompact && pr.Ops[j-2].Kind == kindHeapUpdate {
					r.patterns["update to empty, compact, update"]++
				}
			}
		}
		return nil
	}))
	t.Logf("%d-byte pages: %d ops %v, %d records, %d log bytes, %d pages; kinds %v, patterns %v",
		pageSize, n, r.ops, r.records, r.end-r.start, h.HighWater(), r.kinds, r.patterns)
	return r
}

// compactionPattern forces a compaction on a fragmented heap page (one
// whose frag is not 0): an insert of the longest row the page takes, after
// making the page the insert target, or an update in place of one of its
// rows to the longest row that fits. Either needs frag's room when the
// row is longer than the gap, which the pattern checks before it counts
// the operation as one that compacts. Without a fragmented page it
// inserts a row.
func (r *redoModelRun) compactionPattern(t *testing.T, rng *rand.Rand, i int,
	insert func(int, []byte) RowPtr, update func(int, RowPtr, []byte) RowPtr) {
	t.Helper()
	h, md := r.h, r.md
	byPage := map[uint32][]RowPtr{}
	for _, p := range md.ptrs {
		byPage[p.Page] = append(byPage[p.Page], p)
	}
	hw := h.HighWater()
	first := rng.Uint32N(hw - 1)
	for k := range hw - 1 {
		no := 1 + (first+k)%(hw-1)
		if len(byPage[no]) == 0 {
			continue
		}
		pg, err := h.pool.Fetch(nil, h.id(no))
		require.NoError(t, err)
		pg.RLatch()
		b := hpage(bytes.Clone(pg.Data()))
		pg.RUnlatch()
		pg.Unpin(false)
		if page.KindOf(b) != page.KindHeap || b.frag() == 0 {
			continue
		}
		if rng.IntN(2) == 0 {
			n := min(h.MaxRowSize(), b.avail())
			if !b.fits(n) || !b.insertCompacts(n) {
				continue
			}
			h.target.Store(no)
			p := insert(i, randomBytes(rng, n))
			require.Equal(t, no, p.Page, "op %d: the insert did not go to the target page", i)
			r.ops["insert compacting"]++
			return
		}
		p := byPage[no][rng.IntN(len(byPage[no]))]
		_, old := b.slot(int(p.Slot))
		n := min(h.MaxRowSize(), old+b.free())
		row := randomBytes(rng, n)
		if !b.updateCompacts(int(p.Slot), row) {
			continue
		}
		require.Equal(t, p, update(i, p, row), "op %d: the update did not stay in place", i)
		r.ops["update compacting"]++
		return
	}
	insert(i, randomBytes(rng, rng.IntN(100)))
}

// TestRedoModel runs runRedoModel on 4 KiB pages (with FSM pages of 6
// pages each, so that the FSM chain grows) and on 64 KiB pages, and
// compares every page the replay built with the pool's page, byte for
// byte (the checksum aside, which is stale in memory): free space and
// leftover bytes included, so a redo that rebuilds the rows but not the
// garbage between them fails. The replayed images hold exactly the pages
// of the pool's space, and recovery of the same log into an empty pool
// (cache.Pool.Redo over a store that holds only the log) gives the same
// pages and the model's rows.
func TestRedoModel(t *testing.T) {
	for _, tc := range []struct {
		pageSize, ops, fsmPer int
		stream                uint64
	}{
		{4 << 10, 4000, 6, 21},
		{4 << 10, 3000, 0, 22},
		{64 << 10, 1500, 0, 23},
	} {
		t.Run(fmt.Sprintf("page=%dKiB/fsmPer=%d", tc.pageSize>>10, tc.fsmPer), func(t *testing.T) {
			r := runRedoModel(t, tc.pageSize, tc.ops, tc.fsmPer, tc.stream)
			hw := r.h.HighWater()
			if tc.fsmPer > 0 {
				require.Greater(t, len(*r.h.chain.Load()), 3)
			}
			require.Len(t, r.images, int(hw), "the replay built other pages than the space's")
			want := pageImages(t, r.pool, hw)
			for no := range hw {
				img := r.images[page.ID{Space: 1, Page: no}]
				require.NotNil(t, img, "page %d was never replayed", no)
				if !bytes.Equal(want[no], img[4:]) {
					at := 0
					for want[no][at] == img[4+at] {
						at++
					}
					require.Failf(t, "replayed page differs", "page %d (%s) first differs at byte %d: %d after replay, %d in the pool",
						no, page.KindOf(img), at+4, img[4+at], want[no][at])
				}
			}

			// Recovery from an empty pool, through the pool's own redo.
			pool := newPool(t, r.st, 2*int(hw))
			require.Positive(t, replay(t, r.st, pool, r.start, r.end))
			h, err := Open(nil, pool, 1)
			require.NoError(t, err)
			require.Equal(t, hw, h.HighWater())
			r.md.check(t, h)
			requireSameImages(t, want, pageImages(t, pool, hw))
		})
	}
}

// TestRedoModelKinds checks that the runs of TestRedoModel replay every
// kind the heap registers, and both ways a compaction is logged: before
// an insert, and between an update to an empty row and the update to the
// new one.
func TestRedoModelKinds(t *testing.T) {
	kinds := map[redo.Kind]int{}
	patterns := map[string]int{}
	for _, tc := range []struct {
		pageSize, ops, fsmPer int
		stream                uint64
	}{{4 << 10, 4000, 6, 21}, {64 << 10, 1500, 0, 23}} {
		t.Run(fmt.Sprintf("page=%dKiB/fsmPer=%d", tc.pageSize>>10, tc.fsmPer), func(t *testing.T) {
			r := runRedoModel(t, tc.pageSize, tc.ops, tc.fsmPer, tc.stream)
			for k, n := range r.kinds {
				kinds[k] += n
			}
			for p, n := range r.patterns {
				patterns[p] += n
			}
			for _, op := range []string{"insert", "update", "move", "delete", "insert compacting", "update compacting"} {
				require.Positive(t, r.ops[op], "no %s in the run", op)
			}
		})
	}
	// The versioned tuples' kinds (heap-xmax, heap-hint, heap-prune) come
	// from a run of the versioned model, replayed the same way.
	t.Run("versions", func(t *testing.T) {
		r := runVersionsRedo(t, 3000, 32)
		for k, n := range r.kinds {
			kinds[k] += n
		}
	})
	for _, k := range heapKinds {
		require.Positive(t, kinds[k.k], "kind %s (%d) was never replayed", k.name, k.k)
	}
	for _, p := range []string{"compact, insert", "update to empty, compact, update"} {
		require.Positive(t, patterns[p], "no %q in any record", p)
	}
	// The pool's own kinds are in the records too: the space's and each
	// page's creation, and the meta page's fields.
	require.Positive(t, kinds[redo.KindInit])
	require.Positive(t, kinds[redo.KindWrite])
}

// validHeapPage returns a heap page of size bytes holding a few rows, a
// deleted slot and some frag, built by the hpage code itself.
func validHeapPage(size int) hpage {
	b := newPage(size)
	for i := range 6 {
		b.insert(bytes.Repeat([]byte{byte('a' + i)}, 20+10*i))
	}
	b.del(1)
	b.del(3)
	b.update(4, []byte("short"))
	return b
}

// validFSMPage returns an FSM page of size bytes, formatted.
func validFSMPage(size int) []byte {
	b := make([]byte, size)
	page.Init(b, page.ID{Space: 1, Page: 1}, page.KindFSM)
	initFSMPage(b, 0)
	b[fsmBodyStart+3] = 7
	return b
}

// applyGuarded calls fn on a copy of pg that sits in a larger array, and
// fails the test if fn panics or writes past the page's end.
func applyGuarded(t *testing.T, fn redo.ApplyFunc, pg, payload []byte) error {
	t.Helper()
	const guard = 64
	full := make([]byte, len(pg)+guard)
	copy(full, pg)
	buf := full[:len(pg)] // cap reaches into the guard: a write past len is not caught by Go
	var err error
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("applier panicked on payload %x: %v", payload, p)
			}
		}()
		err = fn(page.ID{Space: 1, Page: 2}, buf, payload)
	}()
	require.Equal(t, make([]byte, guard), full[len(pg):], "applier wrote past the page on payload %x", payload)
	return err
}

// TestRedoAppliers checks each applier on payloads that fit and on ones
// that do not: those change nothing and return an error.
func TestRedoAppliers(t *testing.T) {
	const size = 4 << 10
	hp := validHeapPage(size)
	require.NoError(t, hp.cellsOK())
	fp := validFSMPage(size)
	slotRow := func(s int, row string) []byte { return append(binary.AppendUvarint(nil, uint64(s)), row...) }
	uv := func(v uint64, tail ...byte) []byte { return append(binary.AppendUvarint(nil, v), tail...) }
	// slotEdit is a heap-update payload: the slot and the edit from the
	// row page b holds there (nothing, if the slot is not live) to row.
	slotEdit := func(b hpage, s int, row string) []byte {
		var old []byte
		if s < b.nslots() {
			old, _, _ = b.row(s)
		}
		return redo.AppendEdit(binary.AppendUvarint(nil, uint64(s)), old, []byte(row))
	}
	for _, tc := range []struct {
		name    string
		fn      redo.ApplyFunc
		pg      []byte
		payload []byte
		ok      bool
	}{
		{"insert into the lowest deleted slot", redoHeapInsert, hp, slotRow(1, "new"), true},
		{"insert into another slot", redoHeapInsert, hp, slotRow(3, "new"), false},
		{"insert into a new slot", redoHeapInsert, hp, slotRow(6, "new"), false},
		{"insert of a row too large", redoHeapInsert, hp, slotRow(1, string(make([]byte, MaxRowSize(size)+1))), false},
		{"insert with a cut slot", redoHeapInsert, hp, []byte{0x80}, false},
		{"insert into an FSM page", redoHeapInsert, fp, slotRow(0, "x"), false},
		{"update in place", redoHeapUpdate, hp, slotEdit(hp, 0, "updated"), true},
		{"update with an edit past the row", redoHeapUpdate, hp, append(uv(0), uv(1000, 0, 0)...), false},
		{"update of a deleted slot", redoHeapUpdate, hp, slotEdit(hp, 1, "x"), false},
		{"update of a slot out of range", redoHeapUpdate, hp, slotEdit(hp, 6, "x"), false},
		{"update of a huge slot", redoHeapUpdate, hp, slotRow(1<<40, "x"), false},
		{"update too large for the page", redoHeapUpdate, validFullPage(size), slotEdit(validFullPage(size), 0, string(make([]byte, MaxRowSize(size)))), false},
		{"patch", redoHeapPatch, hp, append(uv(0), uv(3, 2, 'x', 'y')...), true},
		{"patch of two ranges", redoHeapPatch, hp, append(uv(0), uv(3, 1, 'x', 2, 1, 'y')...), true},
		{"patch of the row's last byte", redoHeapPatch, hp, append(uv(0), uv(19, 1, 'x')...), true},
		{"patch past the row", redoHeapPatch, hp, append(uv(0), uv(19, 2, 'x', 'y')...), false},
		{"patch far past the row", redoHeapPatch, hp, append(uv(0), uv(1<<20, 1, 'x')...), false},
		{"patch of a deleted slot", redoHeapPatch, hp, append(uv(1), uv(0, 1, 'x')...), false},
		{"patch with a range cut short", redoHeapPatch, hp, append(uv(0), uv(3, 2, 'x')...), false},
		{"patch with no slot", redoHeapPatch, hp, nil, false},
		{"delete", redoHeapDelete, hp, uv(5), true},
		{"delete of a deleted slot", redoHeapDelete, hp, uv(3), false},
		{"delete with bytes left", redoHeapDelete, hp, uv(5, 0), false},
		{"delete with no slot", redoHeapDelete, hp, nil, false},
		{"compact", redoHeapCompact, hp, nil, true},
		{"compact with a payload", redoHeapCompact, hp, []byte{0}, false},
		{"heap init", redoHeapInit, hp, nil, true},
		{"heap init of an FSM page", redoHeapInit, fp, nil, false},
		{"fsm init", redoFSMInit, fp, uv(4048), true},
		{"fsm init of a heap page", redoFSMInit, hp, uv(0), false},
		{"fsm init of a page number too large", redoFSMInit, fp, uv(1 << 32), false},
		{"fsm set", redoFSMSet, fp, uv(5, 200), true},
		{"fsm set at the last byte", redoFSMSet, fp, uv(size-fsmBodyStart-1, 200), true},
		{"fsm set past the page", redoFSMSet, fp, uv(size-fsmBodyStart, 200), false},
		{"fsm set with no category", redoFSMSet, fp, uv(5), false},
		{"fsm link", redoFSMLink, fp, uv(9), true},
		{"fsm link to itself", redoFSMLink, fp, uv(2), false},
		{"fsm link to 0", redoFSMLink, fp, uv(0), false},
	} {
		err := applyGuarded(t, tc.fn, tc.pg, tc.payload)
		if tc.ok {
			require.NoError(t, err, tc.name)
			continue
		}
		require.Error(t, err, tc.name)
	}
	// An applier that fails leaves the page alone (it checks first).
	for _, payload := range [][]byte{slotRow(3, "new"), slotRow(1, string(make([]byte, 4000)))} {
		cp := bytes.Clone(hp)
		require.Error(t, redoHeapInsert(page.ID{}, cp, payload))
		require.Equal(t, []byte(hp), cp)
	}
	// A page that fails cellsOK is an error for every heap applier but
	// init (which rewrites the header), never a panic.
	bad := hpage(bytes.Clone(hp))
	bad.setFrag(bad.frag() + 1)
	for _, tc := range []struct {
		fn      redo.ApplyFunc
		payload []byte
	}{
		{redoHeapInsert, slotRow(1, "x")},
		{redoHeapUpdate, slotEdit(hp, 0, "x")},
		{redoHeapPatch, append(uv(0), uv(0, 1, 'x')...)},
		{redoHeapDelete, uv(0)},
		{redoHeapCompact, nil},
	} {
		require.NoError(t, applyGuarded(t, tc.fn, hp, tc.payload))
		require.Error(t, applyGuarded(t, tc.fn, bad, tc.payload))
	}
}

// validFullPage returns a heap page of size bytes with one short row and
// little room.
func validFullPage(size int) hpage {
	b := newPage(size)
	b.insert([]byte("x"))
	for _, n := range []int{MaxRowSize(size), 100, 1} {
		for b.fits(n) {
			b.insert(make([]byte, n))
		}
	}
	return b
}

// FuzzHeapRedo feeds each heap applier garbage payloads on valid pages (a
// heap page with rows, deleted slots and frag; an empty heap page; an FSM
// page; or the page's bytes damaged at one place): an error or a clean
// apply, never a panic, never a write past the page. Each applier is
// called directly (it must not rely on Apply's recover), and through
// redo.Decode and redo.PageRedo.Apply, whose errors match
// redo.ErrCorruptLog. A heap applier that succeeds leaves a heap page
// that hpage.cellsOK accepts.
//
// Input: kind selector, page selector, damage offset (2B) and value, then
// the payload.
//
// Run with: go test -run XXX -fuzz FuzzHeapRedo ./heap/
func FuzzHeapRedo(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 0, 1, 'n', 'e', 'w'})
	f.Add([]byte{2, 0, 0, 0, 0, 0, 'u', 'p'})
	f.Add([]byte{3, 0, 0, 0, 0, 5})
	f.Add([]byte{4, 0, 0, 0, 0})
	f.Add([]byte{5, 2, 0, 0, 0, 0x90, 0x1f})
	f.Add([]byte{6, 2, 0, 0, 0, 5, 200})
	f.Add([]byte{7, 2, 0, 0, 0, 9})
	f.Add([]byte{0, 1, 0, 0, 0})
	f.Add([]byte{1, 3, 0x22, 0, 9, 0})
	f.Add([]byte{2, 3, 0x30, 0, 0xff, 4, 0xff, 0xff, 0xff, 0xff})
	f.Add(append([]byte{2, 0, 0, 0, 0, 0}, make([]byte, 1100)...))
	const size = 4 << 10
	pages := []func() []byte{
		func() []byte { return validHeapPage(size) },
		func() []byte { return newPage(size) },
		func() []byte { return validFSMPage(size) },
		func() []byte { return validFullPage(size) },
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 5 {
			return
		}
		k := heapKinds[int(in[0])%len(heapKinds)]
		pg := pages[int(in[1])%len(pages)]()
		if in[1]&0x80 != 0 {
			// Damage one byte, anywhere after the checksum.
			pg[4+int(binary.LittleEndian.Uint16(in[2:]))%(size-4)] = in[4]
		}
		payload := in[5:]

		// Directly.
		err := applyGuarded(t, k.apply, pg, payload)
		if err == nil && page.KindOf(pg) == page.KindHeap && k.k != kindHeapInit {
			cp := bytes.Clone(pg)
			require.NoError(t, k.apply(page.ID{Space: 1, Page: 2}, cp, payload))
			require.NoError(t, hpage(cp).cellsOK(), "%s left a page that cellsOK rejects", k.name)
		}

		// Through a record.
		var rb redo.Builder
		rb.Op(page.ID{Space: 1, Page: 2}, k.k, payload)
		prs, _, err := redo.Decode(rb.Bytes(), nil)
		require.NoError(t, err)
		require.Len(t, prs, 1)
		full := make([]byte, size+64)
		copy(full, pg)
		if err := prs[0].Apply(full[:size]); err != nil {
			require.ErrorIs(t, err, redo.ErrCorruptLog)
		}
		require.Equal(t, make([]byte, 64), full[size:], "written past the page")
	})
}

// TestRedoRecordSizes pins the log bytes of the common operations on a
// heap of 4 KiB pages, where page numbers, slots and FSM indexes are
// below 128 (one-byte varints). A record is framed by 8 bytes (length,
// CRC); an operation is its kind byte, the page (space and number, one
// byte each here; left out when the operation before it was on the same
// page), the payload's length and the payload.
func TestRedoRecordSizes(t *testing.T) {
	st := newStore(t, 4<<10)
	lg, err := redo.Open(st, nil)
	require.NoError(t, err)
	pool := newPoolWithLog(t, st, 64, lg)
	h, err := Create(nil, pool, 1)
	require.NoError(t, err)
	row := randomBytes(rand.New(rand.NewPCG(1, 1)), 100)
	_, err = h.Insert(nil, row) // the first insert allocates page 2
	require.NoError(t, err)

	const frame, op = 8, 4 // record frame; kind, space, page, length
	measure := func(what string, want int, fn func()) {
		t.Helper()
		before := lg.End()
		fn()
		require.Equal(t, uint64(want), lg.End()-before, what)
	}
	// An insert into the target page: the slot and the row. The FSM is
	// not touched.
	var p RowPtr
	measure("insert", frame+op+1+100, func() {
		p, err = h.Insert(nil, row)
		require.NoError(t, err)
	})
	require.Equal(t, RowPtr{Page: 2, Slot: 1}, p)

	// An update in place of the same length: the slot, and one range: the
	// gap to it, its length and the one byte that changed.
	row2 := bytes.Clone(row)
	row2[40]++
	measure("update of one byte", frame+op+1+1+1+1, func() {
		np, err := h.Update(nil, p, row2)
		require.NoError(t, err)
		require.Equal(t, p, np)
	})

	// An update in place that shrinks the row: the slot and the edit
	// (one step: keep 50, drop 50, add nothing), and the FSM byte when
	// the page's category changes (an operation on the FSM page: index
	// and category).
	const fsmOp = op + 1 + 1
	cat, _ := pageState(t, h, 2)
	measure("update shrinking by 50 bytes", frame+op+1+3+fsmOp, func() {
		np, err := h.Update(nil, p, row2[:50])
		require.NoError(t, err)
		require.Equal(t, p, np)
	})
	after, _ := pageState(t, h, 2)
	require.NotEqual(t, cat, after)

	// A delete: the slot, and the FSM byte.
	measure("delete", frame+op+1+fsmOp, func() {
		require.NoError(t, h.Delete(nil, RowPtr{Page: 2, Slot: 0}))
	})

	// An insert that needs frag's room: the compaction (no payload), then
	// the insert on the same page (kind, a two-byte length, the slot and
	// the row; no page). The page
	// holds slot 1 (50 bytes, its old 100-byte cell's tail in frag);
	// slot 0 is deleted and reused. Fill the gap first.
	for {
		b := pageCopy(t, h, 2)
		if b.gap() < 200 {
			break
		}
		_, err := h.Insert(nil, row[:min(100, b.gap()-110)])
		require.NoError(t, err)
	}
	b := pageCopy(t, h, 2)
	n := b.avail()
	require.True(t, b.insertCompacts(n))
	require.Greater(t, n, 127) // a two-byte length varint
	h.target.Store(2)
	measure("insert after a compaction", frame+op+(1+2+1+n), func() {
		p, err := h.Insert(nil, randomBytes(rand.New(rand.NewPCG(2, 2)), n))
		require.NoError(t, err)
		require.Equal(t, uint32(2), p.Page)
	})
}

// pageCopy returns a copy of heap page no.
func pageCopy(t *testing.T, h *Heap, no uint32) hpage {
	t.Helper()
	pg, err := h.pool.Fetch(nil, h.id(no))
	require.NoError(t, err)
	pg.RLatch()
	defer func() { pg.RUnlatch(); pg.Unpin(false) }()
	return hpage(bytes.Clone(pg.Data()))
}
