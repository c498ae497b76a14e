package heap

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/cache/store"
)

// The redo tests run heap operations on a pool with a redo log attached,
// starting from a base state that is in the store (pages flushed, log end
// noted), never flushing a page afterwards. Recovery is a fresh pool over
// the same store that replays the log from the base: the store still
// holds the base state, so any prefix of the log can be replayed from it,
// as many times as a test likes.

// redoRun is a heap whose changes since base are only in the log.
type redoRun struct {
	st     *store.PebbleStore
	pool   *cache.Pool
	log    *redo.Log
	h      *Heap
	base   uint64
	frames int
	m      Meter
}

// newRedoRun creates a heap in space 1 of a fresh in-memory store, on a
// pool of frames frames (enough that nothing is evicted: an eviction
// would write a page past the base), flushes it and notes the base.
func newRedoRun(t *testing.T, frames int) *redoRun {
	t.Helper()
	st, err := store.OpenPebble(store.PebbleOptions{PageSize: 4096})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	lg, err := redo.Open(st, nil)
	require.NoError(t, err)
	pool := newPoolWithLog(t, st, frames, lg)
	h, err := Create(nil, pool, 1)
	require.NoError(t, err)
	require.NoError(t, pool.FlushAll(nil))
	return &redoRun{st: st, pool: pool, log: lg, h: h, base: lg.End(), frames: frames}
}

// redoOp is one heap operation and the log range its records fill.
type redoOp struct {
	kind          string // insert, update (in place), move, delete
	ptr, newPtr   RowPtr
	row           []byte
	before, after uint64 // log.End() before and after the operation
}

func (op *redoOp) apply(md *model) {
	switch op.kind {
	case "insert":
		md.add(op.newPtr, op.row)
	case "update":
		md.rows[op.ptr] = op.row
	case "move":
		md.remove(op.ptr)
		md.add(op.newPtr, op.row)
	case "delete":
		md.remove(op.ptr)
	}
}

// randomBytes returns n seeded random bytes.
func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// run performs n seeded random inserts, updates (in place, and growing
// ones that move) and deletes, checking each against the model md, and
// returns them with their log ranges.
func (r *redoRun) run(t *testing.T, rng *rand.Rand, md *model, n int) []redoOp {
	t.Helper()
	h := r.h
	maxRow := h.MaxRowSize()
	ops := make([]redoOp, 0, n)
	for i := range n {
		op := redoOp{before: r.log.End()}
		switch x := rng.IntN(100); {
		case x < 45 || len(md.ptrs) == 0:
			row := randomRow(rng, maxRow)
			row = row[:min(len(row), maxRow)]
			p, err := h.Insert(&r.m, row)
			require.NoError(t, err, "op %d", i)
			op.kind, op.newPtr, op.row = "insert", p, row
		case x < 80:
			p := md.random(rng)
			var row []byte
			if x < 60 {
				// Grow past what the page is likely to have: a move.
				row = randomBytes(rng, maxRow-rng.IntN(300))
			} else {
				row = randomRow(rng, maxRow)
				row = row[:min(len(row), maxRow)]
			}
			np, err := h.Update(&r.m, p, row)
			require.NoError(t, err, "op %d", i)
			op.kind, op.ptr, op.newPtr, op.row = "update", p, np, row
			if np != p {
				op.kind = "move"
			}
		default:
			p := md.random(rng)
			require.NoError(t, h.Delete(&r.m, p), "op %d", i)
			op.kind, op.ptr = "delete", p
		}
		op.after = r.log.End()
		require.Greater(t, op.after, op.before, "op %d (%s) wrote no redo record", i, op.kind)
		op.apply(md)
		ops = append(ops, op)
	}
	return ops
}

// finish writes the whole log to pebble (pages stay unflushed) and
// returns the LSN of every record since base. It checks that nothing was
// written to the store since base and that each record is counted once.
func (r *redoRun) finish(t *testing.T) []uint64 {
	t.Helper()
	require.NoError(t, r.log.Flush(r.log.End()))
	require.Zero(t, r.m.Evictions, "the pool must hold the whole heap: an eviction writes past the base")
	require.Zero(t, r.m.StoreWrites)
	var lsns []uint64
	require.NoError(t, r.log.Scan(r.base, func(lsn uint64, body []byte) error {
		lsns = append(lsns, lsn)
		return nil
	}))
	require.Equal(t, r.m.LogRecords, int64(len(lsns)), "records counted by the meter")
	return lsns
}

var errStopReplay = errors.New("stop replay")

// replay applies to pool every stored record at or after from and below
// cut, and returns how many page changes it applied (Redo reporting true).
func replay(t *testing.T, st *store.PebbleStore, pool *cache.Pool, from, cut uint64) int {
	t.Helper()
	lg, err := redo.Open(st, nil)
	require.NoError(t, err)
	var pages []redo.PageRedo
	applied := 0
	err = lg.Scan(from, func(lsn uint64, body []byte) error {
		if lsn >= cut {
			return errStopReplay
		}
		var err error
		if pages, _, err = redo.Decode(body, pages); err != nil {
			return err
		}
		for i := range pages {
			ok, err := pool.Redo(nil, lsn, &pages[i])
			if err != nil {
				return fmt.Errorf("redo of page %s at LSN %d: %w", pages[i].ID, lsn, err)
			}
			if ok {
				applied++
			}
		}
		return nil
	})
	if !errors.Is(err, errStopReplay) {
		require.NoError(t, err)
	}
	return applied
}

// recoverHeap builds a fresh pool with a log over st, replays the records
// in [from, cut) and opens the heap.
func recoverHeap(t *testing.T, st *store.PebbleStore, frames int, from, cut uint64) (*cache.Pool, *Heap) {
	t.Helper()
	lg, err := redo.Open(st, nil)
	require.NoError(t, err)
	pool := newPoolWithLog(t, st, frames, lg)
	replay(t, st, pool, from, cut)
	h, err := Open(nil, pool, 1)
	require.NoError(t, err)
	return pool, h
}

// pageImages returns the bytes of pages 0 .. hw-1 of space 1, less the
// checksum (stale in memory).
func pageImages(t *testing.T, pool *cache.Pool, hw uint32) [][]byte {
	t.Helper()
	imgs := make([][]byte, hw)
	for no := range hw {
		pg, err := pool.Fetch(nil, page.ID{Space: 1, Page: no})
		require.NoError(t, err, "page %d", no)
		pg.RLatch()
		imgs[no] = bytes.Clone(pg.Data()[4:])
		pg.RUnlatch()
		pg.Unpin(false)
	}
	return imgs
}

func requireSameImages(t *testing.T, want, got [][]byte) {
	t.Helper()
	require.Equal(t, len(want), len(got), "pages")
	for i := range want {
		if !bytes.Equal(want[i], got[i]) {
			at := 0
			for at < len(want[i]) && want[i][at] == got[i][at] {
				at++
			}
			require.Failf(t, "page images differ", "page %d first differs at byte %d", i, at+4)
		}
	}
}

// withFSMPerPage makes FSM pages cover n pages for the rest of the test.
func withFSMPerPage(t *testing.T, n int) {
	testFSMPerPage = n
	t.Cleanup(func() { testFSMPerPage = 0 })
}

// TestRedoReplay runs seeded random inserts, in-place and moving updates
// and deletes with a redo log attached and no page flushed, then replays
// the log from the base state on a fresh pool: the heap must pass Check,
// hold exactly the model's rows, and every page must equal the original
// pool's byte for byte (the checksum aside). It runs once with one FSM
// page and once with FSM pages of 8 pages each, so that FSM extension
// (an mtr of its own) is replayed too.
func TestRedoReplay(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fsmPer int
		ops    int
	}{{"one-fsm-page", 0, 3000}, {"fsm-chain", 8, 1500}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.fsmPer > 0 {
				withFSMPerPage(t, tc.fsmPer)
			}
			seed := testSeed(t)
			rng := rand.New(rand.NewPCG(seed, 11))
			r := newRedoRun(t, 2048)
			md := newModel()
			ops := r.run(t, rng, md, tc.ops)
			lsns := r.finish(t)
			counts := map[string]int{}
			for _, op := range ops {
				counts[op.kind]++
			}
			hw := r.h.HighWater()
			t.Logf("%d ops %v, %d records, %d log bytes, %d pages, FSM chain %d; %s",
				len(ops), counts, len(lsns), r.log.End()-r.base, hw, len(*r.h.chain.Load()), r.m.String())
			for _, k := range []string{"insert", "update", "move", "delete"} {
				require.Positive(t, counts[k], "no %s in the run", k)
			}
			require.Greater(t, len(lsns), len(ops), "no operation wrote a second record (FSM correction or extension)")
			if tc.fsmPer > 0 {
				require.Greater(t, len(*r.h.chain.Load()), 5)
			}
			md.check(t, r.h)
			want := pageImages(t, r.pool, hw)

			pool, h := recoverHeap(t, r.st, r.frames, r.base, r.log.End())
			require.Equal(t, hw, h.HighWater())
			md.check(t, h)
			requireSameImages(t, want, pageImages(t, pool, hw))

			// The recovered heap takes new work.
			for i := range 50 {
				p, err := h.Insert(nil, []byte(fmt.Sprintf("after recovery %d", i)))
				require.NoError(t, err)
				md.add(p, []byte(fmt.Sprintf("after recovery %d", i)))
			}
			md.check(t, h)
		})
	}
}

// checkPrefixes replays, for each cut (ascending), the records below it
// from the base state on a fresh pool, and checks that the heap passes
// Check and holds exactly the rows of the operations whose records all
// lie below the cut.
func checkPrefixes(t *testing.T, r *redoRun, ops []redoOp, lsns []uint64, cuts []uint64) {
	t.Helper()
	// The operations' ranges tile the log, and each has a record.
	last := make([]uint64, len(ops)) // LSN of each operation's last record
	j := 0
	for i, op := range ops {
		if i > 0 {
			require.Equal(t, ops[i-1].after, op.before)
		}
		require.Less(t, j, len(lsns))
		require.Equal(t, op.before, lsns[j], "op %d starts with a record", i)
		for j < len(lsns) && lsns[j] < op.after {
			last[i] = lsns[j]
			j++
		}
	}
	require.Equal(t, len(lsns), j)

	slices.Sort(cuts)
	md := newModel()
	k := 0 // operations applied to md
	for _, cut := range cuts {
		for k < len(ops) && last[k] < cut {
			ops[k].apply(md)
			k++
		}
		pool, h := recoverHeap(t, r.st, r.frames, r.base, cut)
		if err := h.Check(nil); err != nil {
			require.NoError(t, err, "cut at LSN %d (after %d operations)", cut, k)
		}
		md.checkScan(t, h)
		var buf []byte
		var err error
		for _, p := range md.ptrs {
			buf, err = h.Fetch(nil, p, buf)
			require.NoError(t, err, "cut %d: fetch %s", cut, p)
			requireRow(t, md.rows[p], buf, "cut %d: row %s", cut, p)
		}
		_ = pool
	}
}

// TestRedoPrefix replays prefixes of the log: after a crash only a prefix
// of the records may be in the store, and every prefix must give a heap
// that passes Check and holds the rows of exactly the operations whose
// records are in it. A run of 300 operations is cut at every record
// boundary (including between an FSM correction or extension and the
// operation's own record); a run of 3000 (with an FSM chain) at a seeded
// sample of LSNs, boundaries or not.
func TestRedoPrefix(t *testing.T) {
	t.Run("every-boundary", func(t *testing.T) {
		withFSMPerPage(t, 4)
		seed := testSeed(t)
		rng := rand.New(rand.NewPCG(seed, 12))
		r := newRedoRun(t, 256)
		md := newModel()
		ops := r.run(t, rng, md, 400)
		lsns := r.finish(t)
		require.Greater(t, len(lsns), len(ops))
		require.Greater(t, len(*r.h.chain.Load()), 2)
		cuts := append([]uint64{r.base}, lsns...)
		cuts = append(cuts, r.log.End())
		checkPrefixes(t, r, ops, lsns, cuts)
	})
	t.Run("sampled", func(t *testing.T) {
		withFSMPerPage(t, 16)
		seed := testSeed(t)
		rng := rand.New(rand.NewPCG(seed, 13))
		r := newRedoRun(t, 2048)
		md := newModel()
		ops := r.run(t, rng, md, 3000)
		lsns := r.finish(t)
		end := r.log.End()
		cuts := []uint64{r.base, end}
		for range 40 {
			cuts = append(cuts, r.base+rng.Uint64N(end-r.base))
		}
		for range 10 {
			cuts = append(cuts, lsns[rng.IntN(len(lsns))])
		}
		checkPrefixes(t, r, ops, lsns, cuts)
	})
}

// TestRedoIdempotent replays the log twice: on the same pool (every page
// already carries each record's LSN, so nothing is applied again), after
// the replayed pages reached the store, and after a replay of a prefix (a
// crash during recovery). Each time the heap is the same, page for page.
func TestRedoIdempotent(t *testing.T) {
	withFSMPerPage(t, 16)
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 14))
	r := newRedoRun(t, 1024)
	md := newModel()
	r.run(t, rng, md, 1500)
	lsns := r.finish(t)
	end := r.log.End()
	hw := r.h.HighWater()
	want := pageImages(t, r.pool, hw)

	// A prefix, then the whole log from the base again.
	pool := newPool(t, r.st, r.frames)
	mid := lsns[len(lsns)/2]
	first := replay(t, r.st, pool, r.base, mid)
	rest := replay(t, r.st, pool, r.base, end)
	require.Positive(t, first)
	require.Positive(t, rest)
	requireSameImages(t, want, pageImages(t, pool, hw))
	all := replay(t, r.st, newPool(t, r.st, r.frames), r.base, end)
	require.Equal(t, all, first+rest, "a record applied by the prefix replay was applied again")

	// Twice on the same pool.
	require.Zero(t, replay(t, r.st, pool, r.base, end))
	requireSameImages(t, want, pageImages(t, pool, hw))
	h, err := Open(nil, pool, 1)
	require.NoError(t, err)
	md.check(t, h)

	// The replayed pages in the store (a checkpoint that did not trim the
	// log), then recovery again: still nothing to apply, same heap. The
	// base is gone from the store after this.
	require.NoError(t, pool.FlushAll(nil))
	pool2 := newPool(t, r.st, r.frames)
	require.Zero(t, replay(t, r.st, pool2, r.base, end))
	requireSameImages(t, want, pageImages(t, pool2, hw))
	h, err = Open(nil, pool2, 1)
	require.NoError(t, err)
	md.check(t, h)
}

// TestInMtr checks InsertIn, UpdateIn and DeleteIn: they leave the mtr to
// the caller, whose note travels in the same redo record as the page
// changes, and the record replays.
func TestInMtr(t *testing.T) {
	r := newRedoRun(t, 64)
	h := r.h
	md := newModel()

	note := func(mt *cache.Mtr, p RowPtr) uint64 {
		mt.Note(p.Append(nil))
		return mt.Commit()
	}
	// recordAt returns the pages and note of the record at lsn, and the
	// kinds of each page's operations, in order.
	var ops map[page.ID][]redo.Kind
	recordAt := func(lsn uint64) ([]page.ID, []byte) {
		require.NoError(t, r.log.Flush(r.log.End()))
		var ids []page.ID
		var got []byte
		found := false
		ops = map[page.ID][]redo.Kind{}
		require.NoError(t, r.log.Scan(lsn, func(l uint64, body []byte) error {
			if l != lsn {
				return nil
			}
			pages, nt, err := redo.Decode(body, nil)
			require.NoError(t, err)
			for _, pr := range pages {
				ids = append(ids, pr.ID)
				for _, op := range pr.Ops {
					ops[pr.ID] = append(ops[pr.ID], op.Kind)
				}
				require.Equal(t, pr.Ops[0].Kind == redo.KindInit, pr.Fresh, "page %s", pr.ID)
			}
			got, found = bytes.Clone(nt), true
			return nil
		}))
		require.True(t, found, "no record at LSN %d", lsn)
		return ids, got
	}
	// newHeapPage is what an insert into a new page logs for it: the
	// pool's init (AllocPage), the heap header, the row.
	newHeapPage := []redo.Kind{redo.KindInit, kindHeapInit, kindHeapInsert}

	// The first insert allocates: the heap page, the meta page and the FSM
	// page are in the one record, with the note.
	end := r.log.End()
	mt := h.pool.BeginMtr(&r.m.Meter)
	p, err := h.InsertIn(&r.m, mt, []byte("first"))
	require.NoError(t, err)
	require.Equal(t, end, r.log.End(), "InsertIn committed the mtr")
	lsn := note(mt, p)
	require.Equal(t, end, lsn)
	ids, nt := recordAt(lsn)
	require.ElementsMatch(t, []page.ID{{Space: 1, Page: 0}, {Space: 1, Page: 1}, {Space: 1, Page: 2}}, ids)
	require.Equal(t, p.Append(nil), nt)
	require.Equal(t, newHeapPage, ops[page.ID{Space: 1, Page: 2}])
	require.Equal(t, []redo.Kind{kindFSMSet}, ops[page.ID{Space: 1, Page: 1}])
	require.Equal(t, []redo.Kind{redo.KindWrite}, ops[page.ID{Space: 1, Page: 0}], "the meta page's high water")
	md.add(p, []byte("first"))

	// Fill the page, then move a row with UpdateIn: both heap pages, the
	// meta page (a new page) and the FSM page in one record.
	var last RowPtr
	for i := 0; ; i++ {
		q, err := h.Insert(&r.m, bytes.Repeat([]byte{byte(i)}, 300))
		require.NoError(t, err)
		if q.Page != 2 {
			require.NoError(t, h.Delete(&r.m, q))
			break
		}
		md.add(q, bytes.Repeat([]byte{byte(i)}, 300))
		last = q
	}
	big := bytes.Repeat([]byte{'B'}, h.MaxRowSize())
	mt = h.pool.BeginMtr(&r.m.Meter)
	np, err := h.UpdateIn(&r.m, mt, last, big)
	require.NoError(t, err)
	require.Greater(t, np.Page, last.Page)
	lsn = note(mt, np)
	ids, nt = recordAt(lsn)
	require.Contains(t, ids, page.ID{Space: 1, Page: last.Page})
	require.Contains(t, ids, page.ID{Space: 1, Page: np.Page})
	require.Equal(t, np.Append(nil), nt)
	// The row moved to page 3, which the fill loop above made.
	require.Equal(t, []redo.Kind{kindHeapInsert}, ops[page.ID{Space: 1, Page: np.Page}])
	require.Equal(t, []redo.Kind{kindHeapDelete}, ops[page.ID{Space: 1, Page: last.Page}])
	md.remove(last)
	md.add(np, big)

	mt = h.pool.BeginMtr(&r.m.Meter)
	require.NoError(t, h.DeleteIn(&r.m, mt, p))
	lsn = note(mt, p)
	ids, _ = recordAt(lsn)
	require.Contains(t, ids, page.ID{Space: 1, Page: p.Page})
	require.Equal(t, []redo.Kind{kindHeapDelete}, ops[page.ID{Space: 1, Page: p.Page}])
	md.remove(p)

	// Errors leave nothing in the mtr: an empty commit writes no record.
	mt = h.pool.BeginMtr(&r.m.Meter)
	_, err = h.UpdateIn(&r.m, mt, p, []byte("x"))
	require.ErrorIs(t, err, ErrRowNotFound)
	require.ErrorIs(t, h.DeleteIn(&r.m, mt, p), ErrRowNotFound)
	_, err = h.InsertIn(&r.m, mt, make([]byte, h.MaxRowSize()+1))
	require.ErrorIs(t, err, ErrRowTooLarge)
	require.Zero(t, mt.Commit())

	md.check(t, h)
	r.finish(t)
	pool, h2 := recoverHeap(t, r.st, r.frames, r.base, r.log.End())
	md.check(t, h2)
	requireSameImages(t, pageImages(t, r.pool, h.HighWater()), pageImages(t, pool, h.HighWater()))
}

// TestRedoConcurrent runs writers in parallel with a redo log attached on
// a pool small enough to evict (so pages reach the store mid-run, under
// the write-ahead rule), then recovers from the base on a fresh pool: the
// recovered heap must equal the final one page for page. Changed pages
// stay latched until their mtr commits; a latch-order inversion would hang
// here. It runs with one FSM page and with FSM pages of 8 pages each
// (moves that latch two FSM pages, FSM extensions under contention). Run
// it with -race.
func TestRedoConcurrent(t *testing.T) {
	t.Run("one-fsm-page", func(t *testing.T) { runRedoConcurrent(t) })
	t.Run("fsm-chain", func(t *testing.T) {
		withFSMPerPage(t, 8)
		runRedoConcurrent(t)
	})
}

func runRedoConcurrent(t *testing.T) {
	const (
		writers = 4
		ops     = 800
		frames  = 48
	)
	seed := testSeed(t)
	r := newRedoRun(t, frames)
	h := r.h
	type record struct {
		ptr RowPtr
		row []byte
	}
	results := make([]map[int]record, writers)
	meters := make([]Meter, writers)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(100+w)))
			m := &meters[w]
			mine := map[int]record{}
			var order []int
			fail := func(format string, args ...any) {
				errs[w] = fmt.Errorf("writer %d: "+format, append([]any{w}, args...)...)
			}
			for i := range ops {
				switch x := rng.IntN(10); {
				case x < 5 || len(order) == 0:
					row := selfRow(w, i, 0, 20+rng.IntN(300))
					p, err := h.Insert(m, row)
					if err != nil {
						fail("insert: %v", err)
						return
					}
					mine[i] = record{p, row}
					order = append(order, i)
				case x < 9:
					k := order[rng.IntN(len(order))]
					n := 20 + rng.IntN(300)
					if rng.IntN(3) == 0 {
						n = 400 + rng.IntN(h.MaxRowSize()-400)
					}
					row := selfRow(w, k, i, n)
					p, err := h.Update(m, mine[k].ptr, row)
					if err != nil {
						fail("update %s: %v", mine[k].ptr, err)
						return
					}
					mine[k] = record{p, row}
				default:
					j := rng.IntN(len(order))
					if err := h.Delete(m, mine[order[j]].ptr); err != nil {
						fail("delete %s: %v", mine[order[j]].ptr, err)
						return
					}
					delete(mine, order[j])
					order = slices.Delete(order, j, j+1)
				}
			}
			results[w] = mine
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	md := newModel()
	for w := range writers {
		for _, rec := range results[w] {
			md.add(rec.ptr, rec.row)
		}
	}
	md.check(t, h)
	require.NoError(t, r.log.Flush(r.log.End()))
	var total Meter
	for w := range writers {
		total.Add(&meters[w])
	}
	t.Logf("%d pages, %d log bytes; %s", h.HighWater(), r.log.End()-r.base, total.String())
	hw := h.HighWater()
	require.Positive(t, total.Evictions)
	require.Positive(t, total.DirtyWriteBacks, "pages must reach the store during the run")
	require.Positive(t, total.HeapMoves)
	want := pageImages(t, r.pool, hw)

	pool, h2 := recoverHeap(t, r.st, 4*int(hw), r.base, r.log.End())
	md.check(t, h2)
	requireSameImages(t, want, pageImages(t, pool, hw))
}
