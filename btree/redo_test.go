package btree

import (
	"bytes"
	"fmt"
	"maps"
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

// Redo tests: a tree written through a pool with a redo log, whose pages
// never reach the store after the base state, is rebuilt by replaying the
// log from the base state into a fresh pool; in TestRedoConcurrent pages
// do reach the store, at any LSN, and replay still rebuilds the tree.

const (
	redoPageSize = 4096
	redoSpace    = 1
)

// redoOp is one write of a logged run and what it did.
type redoOp struct {
	name     string // "insert", "update", "put", "delete"
	key, val string
	applied  bool   // it succeeded (and changed the model)
	lsn      uint64 // LSN of its record (0: none)
	splits   int64
	merges   int64
}

// redoRec is a stored log record.
type redoRec struct {
	lsn  uint64
	body []byte
}

// redoRun is a tree written with a log, never flushed after its base state.
type redoRun struct {
	store  *store.PebbleStore
	pool   *cache.Pool // the pool that wrote it (still holding every page)
	base   uint64      // log end at the base state
	ops    []redoOp
	recs   []redoRec // every record from base, in LSN order
	models []model   // models[j]: the tree after the first j records
}

// newRedoBase creates a store, a pool of frames pages with a log attached,
// and a tree in it, and flushes it: the base state, whose log end run.base
// records.
func newRedoBase(t *testing.T, frames int64) (*redoRun, *Tree, *redo.Log) {
	t.Helper()
	st, err := store.OpenPebble(store.PebbleOptions{PageSize: redoPageSize})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	lg, err := redo.Open(st, nil)
	require.NoError(t, err)
	pool, err := cache.NewPool(st, &cache.Options{PoolSize: frames * redoPageSize}, &cache.Wiring{Log: lg})
	require.NoError(t, err)
	tree, err := Create(nil, pool, redoSpace)
	require.NoError(t, err)
	require.NoError(t, pool.FlushAll(nil))
	return &redoRun{store: st, pool: pool, base: lg.End()}, tree, lg
}

// newRedoRun creates a tree, flushes it (the base state), then runs nops
// seeded random writes, long keys and values of a few hundred bytes in 4 KiB
// pages, so that leaves and inner nodes split and merge often, and the
// tree grows to three levels and shrinks again.
func newRedoRun(t *testing.T, seed uint64, nops int) *redoRun {
	t.Helper()
	// Large enough never to evict: the store keeps the base state.
	run, tree, lg := newRedoBase(t, 4096)
	pool, store := run.pool, run.store
	var err error

	r := rand.New(rand.NewPCG(seed, 0x7ed0))
	md := model{}
	run.models = append(run.models, model{})
	var total Meter
	// present lists the model's keys, for picking one at random.
	var present []string
	at := map[string]int{}
	var maxHeight, maxEntries int
	for i := 0; i < nops; i++ {
		// Keys of 7, 67 or 127 bytes: inner nodes hold few separators, so
		// they split and merge too. The tree grows and shrinks in turns.
		no := r.IntN(2000)
		k := fmt.Sprintf("k%0*d", 6+no%3*60, no)
		v := string(randVal(r, 400))
		// Growing: 60% inserts, 10% puts, 10% updates, 20% deletes;
		// shrinking: 60% deletes, 20% inserts, 10% puts, 10% updates.
		// Updates and deletes mostly pick keys that are there.
		p := r.IntN(100)
		var name string
		if (i/(nops/4))%2 == 0 {
			name = pickOp(p, "insert", "put", "update", "delete")
		} else {
			name = pickOp(p, "delete", "insert", "put", "update")
		}
		if (name == "update" || name == "delete") && len(present) > 0 && r.IntN(10) > 0 {
			k = present[r.IntN(len(present))]
		}
		op := redoOp{name: name, key: k, val: v}
		_, there := md[k]
		recsBefore, lsnBefore := lg.Stats().Records, lg.End()
		var m Meter
		// Half the inserts and updates carry a transaction id, which
		// raises their leaf's max trx id in the same record (replay
		// must rebuild it too, through splits and merges).
		trx := uint64(0)
		if i%2 == 0 {
			trx = uint64(i + 1)
		}
		switch {
		case name == "insert" && trx != 0:
			mt := pool.BeginMtr(m.Pages())
			err = tree.InsertTrxIn(&m, mt, []byte(k), []byte(v), trx)
			mt.Commit()
			op.applied = !there
		case name == "update" && trx != 0:
			mt := pool.BeginMtr(m.Pages())
			err = tree.UpdateTrxIn(&m, mt, []byte(k), []byte(v), trx)
			mt.Commit()
			op.applied = there
		case name == "insert":
			err = tree.Insert(&m, []byte(k), []byte(v))
			op.applied = !there
		case name == "put":
			err = tree.Put(&m, []byte(k), []byte(v))
			op.applied = true
		case name == "update":
			err = tree.Update(&m, []byte(k), []byte(v))
			op.applied = there
		default:
			err = tree.Delete(&m, []byte(k))
			op.applied = there
		}
		if op.applied {
			require.NoError(t, err, "op %d: %s %q", i, op.name, k)
		} else {
			require.Error(t, err, "op %d: %s %q", i, op.name, k)
		}
		// One record for a write that changed the tree, none otherwise.
		nrec := lg.Stats().Records - recsBefore
		if op.applied {
			require.Equal(t, int64(1), nrec, "op %d: %s %q logged %d records", i, op.name, k, nrec)
			op.lsn = lsnBefore
			if _, ok := md[k]; !ok {
				at[k] = len(present)
				present = append(present, k)
			}
			if op.name == "delete" {
				delete(md, k)
				last := present[len(present)-1]
				present[at[k]] = last
				at[last] = at[k]
				present = present[:len(present)-1]
				delete(at, k)
			} else {
				md[k] = v
			}
			run.models = append(run.models, maps.Clone(md))
		} else {
			require.Zero(t, nrec, "op %d: a failed %s %q logged a record", i, op.name, k)
			require.Equal(t, lsnBefore, lg.End())
		}
		op.splits, op.merges = m.Splits, m.Merges
		total.Add(&m)
		maxHeight = max(maxHeight, int(tree.height.Load()))
		maxEntries = max(maxEntries, len(md))
		run.ops = append(run.ops, op)
	}
	shape, err := tree.Check(nil)
	require.NoError(t, err)
	require.Equal(t, len(md), shape.Entries)
	t.Logf("seed %d: %d ops, %d records, height up to %d, entries up to %d, final shape %+v, splits %d, merges %d, log %d bytes",
		seed, nops, len(run.models)-1, maxHeight, maxEntries, shape, total.Splits, total.Merges, lg.End()-run.base)
	// The run exercised what the tests claim, and wrote no page after the
	// base state.
	require.Greater(t, total.Splits, int64(40))
	require.Greater(t, total.Merges, int64(30))
	require.GreaterOrEqual(t, maxHeight, 3, "no inner node split")
	require.Less(t, shape.Height, maxHeight, "the root never collapsed")
	require.Zero(t, total.StoreWrites)
	require.Zero(t, total.Evictions)
	require.Zero(t, pool.Stats().Pinned, "pages left pinned")

	require.NoError(t, lg.Flush(lg.End()))
	// Read the records back through a fresh log.
	lg2, err := redo.Open(store, nil)
	require.NoError(t, err)
	require.Equal(t, lg.End(), lg2.End())
	require.NoError(t, lg2.Scan(run.base, func(lsn uint64, body []byte) error {
		run.recs = append(run.recs, redoRec{lsn: lsn, body: slices.Clone(body)})
		return nil
	}))
	require.Len(t, run.recs, len(run.models)-1)
	j := 0
	for _, op := range run.ops {
		if op.lsn != 0 {
			require.Equal(t, op.lsn, run.recs[j].lsn, "record %d", j)
			j++
		}
	}
	return run
}

// pickOp picks by p in [0, 100): 60% a, 20% b, 10% c, 10% d.
func pickOp(p int, a, b, c, d string) string {
	switch {
	case p < 60:
		return a
	case p < 80:
		return b
	case p < 90:
		return c
	}
	return d
}

// freshPool is a new pool on the run's store (which holds the base state)
// with a fresh log attached.
func (run *redoRun) freshPool(t *testing.T) (*cache.Pool, *redo.Log) {
	t.Helper()
	lg, err := redo.Open(run.store, nil)
	require.NoError(t, err)
	pool, err := cache.NewPool(run.store, &cache.Options{PoolSize: 1024 * redoPageSize}, &cache.Wiring{Log: lg})
	require.NoError(t, err)
	return pool, lg
}

// apply replays records into pool and reports how many page changes it
// applied and skipped.
func applyRecs(t *testing.T, pool *cache.Pool, recs []redoRec) (applied, skipped int) {
	t.Helper()
	var pages []redo.PageRedo
	for _, rc := range recs {
		var note []byte
		var err error
		pages, note, err = redo.Decode(rc.body, pages)
		require.NoError(t, err, "record at LSN %d", rc.lsn)
		require.Empty(t, note)
		for i := range pages {
			changed, err := pool.Redo(nil, rc.lsn, &pages[i])
			require.NoError(t, err, "record at LSN %d, page %s", rc.lsn, pages[i].ID)
			if changed {
				applied++
			} else {
				skipped++
			}
		}
	}
	return applied, skipped
}

// checkTree opens the tree in pool and checks it against md: its
// invariants, and a full scan in both directions.
func checkTree(t *testing.T, pool *cache.Pool, md model, what string) Shape {
	t.Helper()
	tree, err := Open(nil, pool, redoSpace)
	require.NoError(t, err, what)
	shape, err := tree.Check(nil)
	require.NoError(t, err, what)
	require.Equal(t, len(md), shape.Entries, what)
	checkScan(t, tree, md, IterOptions{})
	return shape
}

// samePages compares every page of the space in two pools, byte for byte
// past the checksum (which only a write-out sets).
func samePages(t *testing.T, a, b *cache.Pool) {
	t.Helper()
	ia, err := a.Space(nil, redoSpace)
	require.NoError(t, err)
	ib, err := b.Space(nil, redoSpace)
	require.NoError(t, err)
	require.Equal(t, ia, ib)
	for no := uint32(0); no < ia.HighWater; no++ {
		id := page.ID{Space: redoSpace, Page: no}
		pa, err := a.Fetch(nil, id)
		require.NoError(t, err)
		pb, err := b.Fetch(nil, id)
		require.NoError(t, err)
		pa.RLatch()
		pb.RLatch()
		same := bytes.Equal(pa.Data()[4:], pb.Data()[4:])
		pa.RUnlatch()
		pb.RUnlatch()
		pa.Unpin(false)
		pb.Unpin(false)
		require.True(t, same, "page %s differs after replay", id)
	}
}

// TestRedoReplay: replaying the whole log from the base state into a fresh
// pool rebuilds the tree, page for page.
func TestRedoReplay(t *testing.T) {
	run := newRedoRun(t, 1, 3000)

	pool, lg := run.freshPool(t)
	var pages []redo.PageRedo
	nrec := 0
	seen := map[redo.Kind]int{}
	require.NoError(t, lg.Scan(run.base, func(lsn uint64, body []byte) error {
		var err error
		pages, _, err = redo.Decode(body, pages)
		if err != nil {
			return err
		}
		for i := range pages {
			for _, op := range pages[i].Ops {
				seen[op.Kind]++
			}
			if _, err := pool.Redo(nil, lsn, &pages[i]); err != nil {
				return err
			}
		}
		nrec++
		return nil
	}))
	require.Equal(t, len(run.recs), nrec)
	checkTree(t, pool, run.models[len(run.models)-1], "after replay")
	samePages(t, run.pool, pool)
	// Every operation kind of the tree was replayed (the root's push-down
	// and collapse are the whole-body writes).
	for _, k := range []redo.Kind{kindLeafInsert, kindInnerInsert, kindRemove, kindReplace, kindInit,
		kindSplitKeep, kindFill, kindAppendCells, kindTruncate, kindPatch, redo.KindWrite, redo.KindInit} {
		require.NotZero(t, seen[k], "no %s operation in the log: %v", k, seen)
	}
	require.Zero(t, pool.Stats().Pinned)
}

// TestRedoSplitAtomic: a split (or merge) interrupted by a crash is
// replayed whole or not at all. For cuts at record boundaries, replaying
// the records below the cut from the base state gives a sound tree that
// holds exactly the writes whose records are below the cut. Every
// boundary is checked by replaying record after record into one pool; a
// sample of cuts (after records that split, that merged, and at random)
// is also replayed from scratch into a fresh pool each.
func TestRedoSplitAtomic(t *testing.T) {
	skipUnderRace(t)
	run := newRedoRun(t, 2, 3000)
	n := len(run.recs)

	// Every boundary, incrementally.
	pool, _ := run.freshPool(t)
	checkTree(t, pool, run.models[0], "base state")
	for j := 0; j < n; j++ {
		applyRecs(t, pool, run.recs[j:j+1])
		md := run.models[j+1]
		tree, err := Open(nil, pool, redoSpace)
		require.NoError(t, err)
		shape, err := tree.Check(nil)
		require.NoError(t, err, "after record %d", j)
		require.Equal(t, len(md), shape.Entries, "after record %d", j)
		it := tree.NewIter(nil, nil)
		i := 0
		keys := md.sorted()
		for ok := it.First(); ok; ok = it.Next() {
			require.Less(t, i, len(keys), "after record %d", j)
			require.Equal(t, keys[i], string(it.Key()), "after record %d", j)
			require.Equal(t, md[keys[i]], string(it.Value()), "after record %d", j)
			i++
		}
		require.NoError(t, it.Close())
		require.Equal(t, len(keys), i, "after record %d", j)
	}

	// Sampled cuts, each from scratch. cuts holds record counts: the cut
	// is at the LSN of record c (or the log end), so records [0, c) are
	// replayed.
	r := rand.New(rand.NewPCG(2, 2))
	var splitCuts, mergeCuts []int
	j := 0
	for _, op := range run.ops {
		if op.lsn == 0 {
			continue
		}
		j++ // the cut right after this op's record
		if op.splits > 0 {
			splitCuts = append(splitCuts, j)
		}
		if op.merges > 0 {
			mergeCuts = append(mergeCuts, j)
		}
	}
	require.NotEmpty(t, splitCuts)
	require.NotEmpty(t, mergeCuts)
	pick := func(from []int, k int) []int {
		if len(from) <= k {
			return from
		}
		var out []int
		for _, i := range r.Perm(len(from))[:k] {
			out = append(out, from[i])
		}
		return out
	}
	cuts := []int{0, 1, n}
	cuts = append(cuts, pick(splitCuts, 25)...)
	cuts = append(cuts, pick(mergeCuts, 25)...)
	for i := 0; i < 15; i++ {
		cuts = append(cuts, r.IntN(n+1))
	}
	for _, c := range cuts {
		cut := uint64(0)
		if c < n {
			cut = run.recs[c].lsn
		} else {
			cut = run.recs[n-1].lsn + 1
		}
		var prefix []redoRec
		for _, rc := range run.recs {
			if rc.lsn < cut {
				prefix = append(prefix, rc)
			}
		}
		require.Len(t, prefix, c)
		pool, _ := run.freshPool(t)
		applyRecs(t, pool, prefix)
		checkTree(t, pool, run.models[c], fmt.Sprintf("cut at LSN %d (%d records)", cut, c))
	}
}

// TestRedoIdempotent: replaying the log a second time over its own result
// skips every page (none is older than its record) and leaves the same
// tree.
func TestRedoIdempotent(t *testing.T) {
	run := newRedoRun(t, 3, 2000)
	pool, _ := run.freshPool(t)
	applied, skipped := applyRecs(t, pool, run.recs)
	require.Positive(t, applied)
	require.Zero(t, skipped)
	md := run.models[len(run.models)-1]
	shape := checkTree(t, pool, md, "after the first replay")
	samePages(t, run.pool, pool)

	applied, skipped = applyRecs(t, pool, run.recs)
	require.Zero(t, applied, "the second replay changed pages")
	require.Positive(t, skipped)
	require.Equal(t, shape, checkTree(t, pool, md, "after the second replay"))
	samePages(t, run.pool, pool)
}

// TestRedoConcurrent: writers on interleaved keys and readers scanning
// both ways run on a logged pool small enough to evict (so pages reach
// the store at many LSNs, each after its log records: the write-ahead
// rule). Replaying the whole log from the base state over that store then
// gives the final tree, page for page: every change reached its page in
// log order, and no write-out saw a change before its record. Run it with
// -race.
func TestRedoConcurrent(t *testing.T) {
	const (
		writers = 4
		readers = 2
		opsEach = 1200
		space   = 800 // keys per writer
	)
	st, err := store.OpenPebble(store.PebbleOptions{PageSize: redoPageSize})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	lg, err := redo.Open(st, nil)
	require.NoError(t, err)
	pool, err := cache.NewPool(st, &cache.Options{PoolSize: 64 * redoPageSize, Policy: cache.PolicyMidpoint}, &cache.Wiring{Log: lg})
	require.NoError(t, err)
	tree, err := Create(nil, pool, redoSpace)
	require.NoError(t, err)
	require.NoError(t, pool.FlushAll(nil))
	run := &redoRun{store: st, pool: pool, base: lg.End()}

	key := func(w, i int) []byte { return fmt.Appendf(nil, "k%0*d-w%d", 6+i%3*50, i, w) }
	models := make([]model, writers)
	var totals [writers]Meter
	errs := make(chan error, writers+readers)
	var wg, rg sync.WaitGroup
	done := make(chan struct{})
	for w := 0; w < writers; w++ {
		models[w] = model{}
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(11, uint64(w)))
			md := models[w]
			m := &totals[w]
			for op := 0; op < opsEach; op++ {
				k := key(w, r.IntN(space))
				_, there := md[string(k)]
				v := randVal(r, 400)
				grow := (op/(opsEach/4))%2 == 0
				var err error
				switch p := r.IntN(10); {
				case !there && (grow && p < 8 || !grow && p < 3):
					err = tree.Insert(m, k, v)
					md[string(k)] = string(v)
				case there && p < 3:
					err = tree.Put(m, k, v)
					md[string(k)] = string(v)
				case there:
					err = tree.Delete(m, k)
					delete(md, string(k))
				}
				if err != nil {
					errs <- fmt.Errorf("writer %d op %d on %q: %w", w, op, k, err)
					return
				}
			}
		}(w)
	}
	for rd := 0; rd < readers; rd++ {
		rg.Add(1)
		go func(rd int) {
			defer rg.Done()
			r := rand.New(rand.NewPCG(12, uint64(rd)))
			for {
				select {
				case <-done:
					return
				default:
				}
				it := tree.NewIter(nil, nil)
				var last []byte
				fwd := r.IntN(2) == 0
				ok, step := it.First(), it.Next
				if !fwd {
					ok, step = it.Last(), it.Prev
				}
				for ; ok; ok = step() {
					k := it.Key()
					if last != nil && (fwd && bytes.Compare(last, k) >= 0 || !fwd && bytes.Compare(last, k) <= 0) {
						errs <- fmt.Errorf("reader %d: %q after %q (forward %v)", rd, k, last, fwd)
						return
					}
					last = append(last[:0], k...)
				}
				if err := it.Close(); err != nil {
					errs <- fmt.Errorf("reader %d: scan: %w", rd, err)
					return
				}
			}
		}(rd)
	}
	wg.Wait()
	close(done)
	rg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	var total Meter
	for w := range totals {
		total.Add(&totals[w])
	}
	all := model{}
	for _, md := range models {
		for k, v := range md {
			all[k] = v
		}
	}
	shape := checkTree(t, pool, all, "after the run")
	t.Logf("shape %+v, splits %d, merges %d, store writes %d, log %d bytes",
		shape, total.Splits, total.Merges, total.StoreWrites, lg.End()-run.base)
	require.Positive(t, total.Splits)
	require.Positive(t, total.Merges)
	require.Positive(t, total.StoreWrites, "no page was written out during the run")
	require.Zero(t, pool.Stats().Pinned, "pages left pinned")

	require.NoError(t, lg.Flush(lg.End()))
	fresh, lg2 := run.freshPool(t)
	require.NoError(t, lg2.Scan(run.base, func(lsn uint64, body []byte) error {
		run.recs = append(run.recs, redoRec{lsn: lsn, body: slices.Clone(body)})
		return nil
	}))
	applyRecs(t, fresh, run.recs)
	checkTree(t, fresh, all, "after replay")
	samePages(t, pool, fresh)
}

// TestWriteInCallerMtr: the In variants work inside the caller's mtr and
// leave the commit to it, so the caller's note and the tree's pages
// (a split's or a merge's included) are one record.
func TestWriteInCallerMtr(t *testing.T) {
	run, tree, lg := newRedoBase(t, 1024)
	pool, store := run.pool, run.store
	var err error

	r := rand.New(rand.NewPCG(4, 4))
	md := model{}
	notes := map[uint64]string{} // LSN -> note
	var total Meter
	write := func(i int, name string, k string, f func(m *Meter, mt *cache.Mtr) error) {
		var m Meter
		mt := pool.BeginMtr(&m.Meter)
		err := f(&m, mt)
		note := fmt.Sprintf("op %d: %s %s", i, name, k)
		mt.Note([]byte(note))
		lsn := mt.Commit()
		require.NotZero(t, lsn)
		notes[lsn] = note
		require.Equal(t, int64(1), m.LogRecords)
		total.Add(&m)
		_, there := md[k]
		switch name {
		case "insert":
			require.Equal(t, there, err != nil, "%s: %v", note, err)
			if !there {
				md[k] = "v" + k
			}
		case "update", "delete":
			require.Equal(t, !there, err != nil, "%s: %v", note, err)
			if there && name == "update" {
				md[k] = "u" + k
			} else if there {
				delete(md, k)
			}
		case "put":
			require.NoError(t, err)
			md[k] = "p" + k
		}
	}
	for i := 0; i < 1500; i++ {
		k := fmt.Sprintf("k%0*d", 6+i%2*100, r.IntN(500))
		p := r.IntN(10)
		if i > 900 {
			p = 9 - p
		}
		switch {
		case p < 5:
			write(i, "insert", k, func(m *Meter, mt *cache.Mtr) error { return tree.InsertIn(m, mt, []byte(k), []byte("v"+k)) })
		case p < 6:
			write(i, "put", k, func(m *Meter, mt *cache.Mtr) error { return tree.PutIn(m, mt, []byte(k), []byte("p"+k)) })
		case p < 7:
			write(i, "update", k, func(m *Meter, mt *cache.Mtr) error { return tree.UpdateIn(m, mt, []byte(k), []byte("u"+k)) })
		default:
			write(i, "delete", k, func(m *Meter, mt *cache.Mtr) error { return tree.DeleteIn(m, mt, []byte(k)) })
		}
	}
	require.Positive(t, total.Splits)
	require.Positive(t, total.Merges)
	checkTree(t, pool, md, "after the run")

	// A foreign or missing mtr is refused.
	other, err := cache.NewPool(store, &cache.Options{PoolSize: 64 * redoPageSize}, nil)
	require.NoError(t, err)
	mt := other.BeginMtr(nil)
	require.Error(t, tree.InsertIn(nil, mt, []byte("x"), []byte("y")))
	require.Error(t, tree.DeleteIn(nil, nil, []byte("x")))
	require.Zero(t, mt.Commit())

	// Replay: every record carries its note, and the tree comes back.
	require.NoError(t, lg.Flush(lg.End()))
	fresh, lg2 := run.freshPool(t)
	var pages []redo.PageRedo
	n := 0
	require.NoError(t, lg2.Scan(run.base, func(lsn uint64, body []byte) error {
		var note []byte
		var err error
		pages, note, err = redo.Decode(body, pages)
		require.NoError(t, err)
		require.Equal(t, notes[lsn], string(note), "note of the record at LSN %d", lsn)
		for i := range pages {
			_, err := fresh.Redo(nil, lsn, &pages[i])
			require.NoError(t, err)
		}
		n++
		return nil
	}))
	require.Equal(t, len(notes), n)
	checkTree(t, fresh, md, "after replay")
	samePages(t, pool, fresh)
}
