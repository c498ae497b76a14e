package cache_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/stretchr/testify/require"
)

// redoState is what every page of the model space was (its image in the
// pool, LSN included) just after the record at lsn.
type redoState struct {
	lsn   uint64
	pages map[page.ID][]byte
}

// redoModelTotals sums what the trials of TestRedoModelCrash exercised, so
// that the test can tell it did not lose its point.
type redoModelTotals struct {
	applied, skipped, lostRecords, trialsLosing int
}

// TestRedoModelCrash is a model-based test of the mtr's records and of
// redo. Each trial, seeded, runs a few hundred mtrs of random Write,
// Memset, Memmove, Fresh (the page formatted from nothing) and SetKind
// operations on a few pages of a small space, one to three pages per mtr
// interleaved; some mtrs carry a note, some latch a page and release it
// unchanged. A model applies each operation to its own copy of the pages,
// and after each commit the pool's pages must equal the model (apart
// from the checksum and the LSN, which must be the record's). Between
// mtrs the trial syncs the log, flushes pages (so the store holds pages at
// assorted LSNs, and redo must skip records they already hold) or does
// nothing. Then the process crashes: the filesystem keeps what was synced
// and, in a third of the trials, half of what was not; the pool is dropped
// without a flush. Recovery opens the crashed store, scans the log from
// the start and applies every record with Pool.Redo. The log that survives
// must be exactly the first records written, every one that was synced
// among them, and every page must equal, byte for byte apart from the
// checksum (the LSN included), the page in the pool just after the last
// record that survived.
func TestRedoModelCrash(t *testing.T) {
	var tot redoModelTotals
	const trials = 8
	for trial := range trials {
		t.Run(fmt.Sprint(trial), func(t *testing.T) { redoModelTrial(t, &tot) })
	}
	t.Logf("redo: %d page changes applied, %d skipped; %d trials lost %d unsynced records",
		tot.applied, tot.skipped, tot.trialsLosing, tot.lostRecords)
	require.Positive(t, tot.applied)
	require.Positive(t, tot.skipped, "no store page was ahead of a record: redo never had to skip")
	require.Positive(t, tot.trialsLosing, "no crash lost an unsynced record")
}

func redoModelTrial(t *testing.T, tot *redoModelTotals) {
	rng := seed(t)
	fs := vfs.NewCrashableMem()
	st, err := store.OpenPebble(store.PebbleOptions{FS: fs, PageSize: testPageSize})
	require.NoError(t, err)
	// A small buffer: the log reaches its files in many writes between
	// syncs.
	l, err := redo.Open(st, &redo.LogOptions{BufferBytes: 512 + rng.IntN(8<<10)})
	require.NoError(t, err)
	p := newPoolWith(t, st, 16, cache.Options{Policy: cache.PolicyLRU}, cache.Wiring{Log: l})

	var states []redoState
	cur := map[page.ID][]byte{}
	// committed records the state after the record at lsn, refreshing the
	// images of the pages the mtr changed.
	committed := func(lsn uint64, changed ...page.ID) {
		require.NotZero(t, lsn)
		if len(states) > 0 {
			require.Greater(t, lsn, states[len(states)-1].lsn)
		}
		for _, id := range changed {
			cur[id] = image(t, p, id)
			require.Equal(t, lsn, page.LSN(cur[id]), "page %s carries its record's LSN", id)
		}
		states = append(states, redoState{lsn: lsn, pages: maps.Clone(cur)})
	}

	lsn := l.End()
	require.NoError(t, p.CreateSpace(nil, 1))
	meta := pid(1, 0)
	committed(lsn, meta)
	const npages = 5
	model := map[page.ID][]byte{} // the data pages, as the operations say
	var ids []page.ID
	for range npages {
		mt := p.BeginMtr(nil)
		pg, err := p.AllocPage(mt, nil, 1, page.KindHeap)
		require.NoError(t, err)
		id := pg.ID()
		ids = append(ids, id)
		model[id] = make([]byte, testPageSize)
		page.Init(model[id], id, page.KindHeap)
		mt.Release(pg, true)
		committed(mt.Commit(), meta, id)
	}
	require.NoError(t, l.SyncTo(nil, l.End()))
	durable := len(states) // states[:durable] are synced
	kinds := []page.Kind{page.KindFree, page.KindBTreeInner, page.KindBTreeLeaf, page.KindHeap, page.KindFSM}
	// Write, Memset and Memmove stay off the checksum, the kind (SetKind
	// and Fresh change it), the page's id and the LSN.
	const lo = page.LSNOffset + 8

	mtrs := 150 + rng.IntN(150)
	for range mtrs {
		// One to three pages, latched in page order.
		var latched []*cache.Page
		pick := rng.Perm(npages)[:1+rng.IntN(3)]
		slices.Sort(pick)
		mt := p.BeginMtr(nil)
		for _, i := range pick {
			pg, err := p.Fetch(nil, ids[i])
			require.NoError(t, err)
			mt.Latch(pg)
			latched = append(latched, pg)
		}
		changed := make([]bool, len(latched))
		for range rng.IntN(9) {
			j := rng.IntN(len(latched))
			pg := latched[j]
			d, m := pg.Data(), model[pg.ID()]
			changed[j] = true
			switch op := rng.IntN(100); {
			case op < 40: // write
				off := lo + rng.IntN(testPageSize-lo)
				b := make([]byte, rng.IntN(min(300, testPageSize-off)+1))
				fillRandom(rng, b)
				mt.Write(pg, off, b)
				copy(m[off:], b)
			case op < 65: // memset
				off := lo + rng.IntN(testPageSize-lo)
				n := rng.IntN(min(1000, testPageSize-off) + 1)
				c := byte(rng.Uint32())
				mt.Memset(pg, off, n, c)
				for i := off; i < off+n; i++ {
					m[i] = c
				}
			case op < 85: // memmove, overlapping or not
				dst := lo + rng.IntN(testPageSize-lo)
				src := lo + rng.IntN(testPageSize-lo)
				n := rng.IntN(min(1000, testPageSize-max(dst, src)) + 1)
				mt.Memmove(pg, dst, src, n)
				copy(m[dst:dst+n], m[src:src+n])
			case op < 95: // set kind
				k := kinds[rng.IntN(len(kinds))]
				mt.SetKind(pg, k)
				page.SetKind(m, k)
			default: // formatted from nothing
				k := kinds[rng.IntN(len(kinds))]
				reformat(pg, k)
				mt.Fresh(pg)
				page.Init(m, pg.ID(), k)
			}
			require.Equal(t, page.KindOf(m), page.KindOf(d))
		}
		if rng.IntN(5) == 0 {
			mt.Note([]byte("note"))
		}
		var changedIDs []page.ID
		for j, pg := range latched {
			mt.Release(pg, changed[j])
			if changed[j] {
				changedIDs = append(changedIDs, pg.ID())
			}
		}
		if lsn := mt.Commit(); lsn != 0 {
			committed(lsn, changedIDs...)
		} else {
			require.Empty(t, changedIDs, "a change was not logged")
		}
		for _, id := range changedIDs {
			requireSameButLSN(t, model[id], cur[id], "after the mtr: page "+id.String())
		}

		switch r := rng.IntN(40); {
		case r < 3:
			require.NoError(t, l.SyncTo(nil, l.End()))
			durable = len(states)
		case r < 5:
			all := append([]page.ID{meta}, ids...)
			require.NoError(t, p.FlushPage(nil, all[rng.IntN(len(all))]))
		case r < 6:
			// A checkpoint's writes: every page, then the store synced
			// (the log has its own files, so its syncs do not make the
			// store's page writes durable).
			require.NoError(t, p.FlushAll(nil))
			require.NoError(t, st.Sync())
		}
	}

	// The crash: the pool is dropped as it is.
	pct := []int{0, 0, 50}[rng.IntN(3)]
	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: pct, RNG: rand.New(rand.NewPCG(rng.Uint64(), 0))})
	l.Close()
	require.NoError(t, st.Close())

	st2, err := store.OpenPebble(store.PebbleOptions{FS: crashed})
	require.NoError(t, err)
	defer func() { require.NoError(t, st2.Close()) }()
	l2, err := redo.Open(st2, nil)
	require.NoError(t, err)
	defer l2.Close()
	recs := scanLog(t, l2, redo.FirstLSN)
	require.GreaterOrEqual(t, len(recs), durable, "every synced record survives (unsynced %d%% kept)", pct)
	require.LessOrEqual(t, len(recs), len(states))
	for i, r := range recs {
		require.Equal(t, states[i].lsn, r.lsn, "record %d: the log that survives is a prefix of the log written", i)
	}
	if len(recs) < len(states) {
		tot.trialsLosing++
		tot.lostRecords += len(states) - len(recs)
	}

	p2 := newPool(t, st2, 16, cache.Options{})
	var pages []redo.PageRedo
	for _, r := range recs {
		pages, _, err = redo.Decode(r.body, pages)
		require.NoError(t, err, "record at LSN %d", r.lsn)
		for i := range pages {
			ok, err := p2.Redo(nil, r.lsn, &pages[i])
			require.NoError(t, err, "redo of page %s at LSN %d", pages[i].ID, r.lsn)
			if ok {
				tot.applied++
			} else {
				tot.skipped++
			}
		}
	}
	want := states[len(recs)-1]
	t.Logf("%d mtrs, %d records written, %d synced, %d survived (unsynced %d%% kept)", mtrs, len(states), durable, len(recs), pct)
	require.Len(t, want.pages, 1+npages)
	for id, img := range want.pages {
		requireRedone(t, img, image(t, p2, id), page.LSN(img), "recovered page "+id.String())
	}
}

// requireSameButLSN checks that got is want byte for byte apart from the
// checksum and the LSN.
func requireSameButLSN(t testing.TB, want, got []byte, what string) {
	t.Helper()
	for i := page.ChecksumSize; i < len(want); i++ {
		if i >= page.LSNOffset && i < page.LSNOffset+8 {
			continue
		}
		if want[i] != got[i] {
			t.Fatalf("%s: byte %d is %#x, the model says %#x", what, i, got[i], want[i])
		}
	}
}
