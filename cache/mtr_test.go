package cache_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/stretchr/testify/require"
)

// logEnv is a store, a pool over it and a redo log in the store's pebble
// database, attached to the pool.
type logEnv struct {
	st *store.PebbleStore
	p  *cache.Pool
	l  *redo.Log
}

// newLogEnv opens an in-memory store, a pool of frames frames over it and a
// log (options lo, nil for the defaults) attached to the pool. The log is
// closed before the store when the test ends.
func newLogEnv(t testing.TB, frames int, lo *redo.LogOptions) *logEnv {
	t.Helper()
	st := newStore(t)
	l, err := redo.Open(st, lo)
	require.NoError(t, err)
	t.Cleanup(l.Close)
	p := newPoolWith(t, st, frames, cache.Options{}, cache.Wiring{Log: l})
	return &logEnv{st: st, p: p, l: l}
}

// copyStore returns a new in-memory store holding every page image of src
// (not its log): what src's pages were at the time of the call.
func copyStore(t testing.TB, src *store.PebbleStore) *store.PebbleStore {
	t.Helper()
	dst := newStore(t)
	k := store.PageKey(page.ID{})
	it, err := src.DB().NewIter(&pebble.IterOptions{LowerBound: k[:1], UpperBound: []byte{k[0] + 1}})
	require.NoError(t, err)
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		require.NoError(t, err)
		require.NoError(t, dst.DB().Set(it.Key(), v, pebble.NoSync))
		n++
	}
	require.NoError(t, it.Error())
	require.NoError(t, it.Close())
	require.Positive(t, n, "copied an empty store")
	return dst
}

// image returns a copy of page id's bytes in p, read under the shared latch.
func image(t testing.TB, p *cache.Pool, id page.ID) []byte {
	t.Helper()
	pg, err := p.Fetch(nil, id)
	require.NoError(t, err, "fetch %s", id)
	pg.RLatch()
	b := bytes.Clone(pg.Data())
	pg.RUnlatch()
	pg.Unpin(false)
	return b
}

// requireRedone checks that got is want byte for byte outside the checksum
// (bytes 0..4, stale in memory) and carries LSN lsn.
func requireRedone(t testing.TB, want, got []byte, lsn uint64, what string) {
	t.Helper()
	require.Equal(t, lsn, page.LSN(got), "%s: LSN", what)
	require.Len(t, got, len(want))
	for i := 4; i < len(want); i++ {
		if want[i] != got[i] {
			j := i
			for j < len(want) && want[j] != got[j] {
				j++
			}
			t.Fatalf("%s: redone page differs from the after-image at bytes %d..%d (want % x, got % x)",
				what, i, j, want[i:min(j, i+16)], got[i:min(j, i+16)])
		}
	}
}

// record is one stored log record.
type record struct {
	lsn  uint64
	body []byte
}

// scanLog returns every stored record at or after from.
func scanLog(t testing.TB, l *redo.Log, from uint64) []record {
	t.Helper()
	var out []record
	require.NoError(t, l.Scan(from, func(lsn uint64, body []byte) error {
		out = append(out, record{lsn, bytes.Clone(body)})
		return nil
	}))
	return out
}

// readRecord flushes the log past lsn and returns the stored record at lsn,
// decoded.
func readRecord(t testing.TB, l *redo.Log, lsn uint64) ([]redo.PageRedo, []byte) {
	t.Helper()
	require.NoError(t, l.Flush(lsn))
	recs := scanLog(t, l, lsn)
	require.NotEmpty(t, recs, "no record at LSN %d after Flush", lsn)
	require.Equal(t, lsn, recs[0].lsn, "first record at or after %d", lsn)
	pages, note, err := redo.Decode(recs[0].body, nil)
	require.NoError(t, err)
	return pages, note
}

// redoAll applies every page change of every record to p, in order, and
// returns how many it applied.
func redoAll(t testing.TB, p *cache.Pool, recs []record) int {
	t.Helper()
	n := 0
	var pages []redo.PageRedo
	for _, r := range recs {
		var err error
		pages, _, err = redo.Decode(r.body, pages)
		require.NoError(t, err, "record at LSN %d", r.lsn)
		for i := range pages {
			ok, err := p.Redo(nil, r.lsn, &pages[i])
			require.NoError(t, err, "redo of page %s at LSN %d", pages[i].ID, r.lsn)
			if ok {
				n++
			}
		}
	}
	return n
}

// fillRandom overwrites b with random bytes.
func fillRandom(rng *rand.Rand, b []byte) {
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
}

// allocRandom allocates a heap page in space in an mtr of its own, fills its
// whole body with random bytes and returns its id.
func allocRandom(t testing.TB, p *cache.Pool, rng *rand.Rand, space uint32) page.ID {
	t.Helper()
	mt := p.BeginMtr(nil)
	pg, err := p.AllocPage(mt, nil, space, page.KindHeap)
	require.NoError(t, err)
	fillRandom(rng, pg.Data()[page.HeaderSize:])
	id := pg.ID()
	mt.Release(pg, true)
	require.NotZero(t, mt.Commit())
	return id
}

// changeInMtr changes page id in one mtr with change and returns the
// record's LSN and the page's after-image.
func changeInMtr(t testing.TB, p *cache.Pool, m *cache.Meter, id page.ID, change func(pg *cache.Page)) (uint64, []byte) {
	t.Helper()
	mt := p.BeginMtr(m)
	pg, err := p.Fetch(m, id)
	require.NoError(t, err)
	mt.Latch(pg)
	change(pg)
	mt.Release(pg, true)
	lsn := mt.Commit()
	require.NotZero(t, lsn)
	return lsn, image(t, p, id)
}

// scatter changes n random byte ranges of the page body (and sometimes its
// last byte), each to random values different from the old ones.
func scatter(rng *rand.Rand, d []byte, n int) {
	for range n {
		off := page.HeaderSize + rng.IntN(len(d)-page.HeaderSize)
		l := 1 + rng.IntN(40)
		if rng.IntN(4) == 0 {
			l = 1
		}
		for i := off; i < min(off+l, len(d)); i++ {
			d[i] ^= byte(1 + rng.IntN(255))
		}
	}
	if rng.IntN(2) == 0 {
		d[len(d)-1] ^= 0x5a
	}
}

// TestMtrDiffRoundTrip changes pages in mtrs with a log attached, reads each
// record back from pebble (Log.Flush, Log.Scan), and redoes it with
// Pool.Redo onto the before-image in a second pool over a copy of the
// store: the result is the after-image byte for byte except the checksum,
// with the record's LSN. The second pool follows the first record by
// record, so later cases redo onto pages earlier cases changed.
func TestMtrDiffRoundTrip(t *testing.T) {
	rng := seed(t)
	e := newLogEnv(t, 32, nil)
	require.NoError(t, e.p.CreateSpace(nil, 1))
	var ids []page.ID
	for range 8 {
		ids = append(ids, allocRandom(t, e.p, rng, 1))
	}
	require.NoError(t, e.p.FlushAll(nil))
	p2 := newPool(t, copyStore(t, e.st), 32, cache.Options{})

	ps := e.p.PageSize()
	body := ps - page.HeaderSize
	cases := []struct {
		name    string
		id      page.ID
		change  func(pg *cache.Page)
		maxBody int // bound on the record body's size, 0 for none
	}{
		{"whole body", ids[0], func(pg *cache.Page) {
			d := pg.Data()
			for i := page.HeaderSize; i < len(d); i++ {
				d[i] ^= byte(1 + rng.IntN(255)) // every body byte changes
			}
		}, 0},
		{"one byte", ids[1], func(pg *cache.Page) {
			d := pg.Data()
			d[page.HeaderSize+rng.IntN(body)] ^= 0x80
		}, 16},
		{"first body byte", ids[1], func(pg *cache.Page) { pg.Data()[page.HeaderSize] ^= 1 }, 16},
		{"last byte", ids[1], func(pg *cache.Page) { pg.Data()[ps-1] ^= 1 }, 16},
		{"header", ids[2], func(pg *cache.Page) {
			d := pg.Data()
			pg.SetKind(page.KindBTreeLeaf)
			d[5] ^= 0x01 // flags
			d[6] = 0xee  // unused
			d[7] = 0xdd
			for i := 24; i < 32; i++ { // reserved
				d[i] ^= byte(i)
			}
			d[page.HeaderSize] ^= 0xff // and the first body byte
		}, 48},
		{"scattered", ids[3], func(pg *cache.Page) { scatter(rng, pg.Data(), 40) }, 0},
		{"scattered again", ids[3], func(pg *cache.Page) { scatter(rng, pg.Data(), 5) }, 0},
		{"dirty but unchanged", ids[4], func(pg *cache.Page) {
			d := pg.Data()
			copy(d[page.HeaderSize:], bytes.Clone(d[page.HeaderSize:]))
		}, 8},
	}
	for _, c := range cases {
		before := image(t, p2, c.id)
		var m cache.Meter
		lsn, after := changeInMtr(t, e.p, &m, c.id, c.change)
		require.Equal(t, lsn, page.LSN(after), "%s: Commit stamps the page", c.name)
		require.Greater(t, lsn, page.LSN(before), c.name)
		require.EqualValues(t, 1, m.LogRecords, c.name)

		pages, note := readRecord(t, e.l, lsn)
		require.Empty(t, note, c.name)
		require.Len(t, pages, 1, c.name)
		require.Equal(t, c.id, pages[0].ID, c.name)
		require.False(t, pages[0].Fresh, c.name)
		if c.maxBody > 0 {
			// The record is a diff, not a page image.
			require.LessOrEqual(t, m.LogBytes-8, int64(c.maxBody), "%s: record body size", c.name)
		}
		if c.name == "whole body" {
			require.Greater(t, m.LogBytes, int64(body), "every body byte is in the record")
		}

		ok, err := p2.Redo(nil, lsn, &pages[0])
		require.NoError(t, err, c.name)
		require.True(t, ok, c.name)
		got := image(t, p2, c.id)
		requireRedone(t, after, got, lsn, c.name)
		require.Equal(t, page.KindOf(after), page.KindOf(got), c.name)

		// A second redo of the same record finds the page up to date.
		ok, err = p2.Redo(nil, lsn, &pages[0])
		require.NoError(t, err, c.name)
		require.False(t, ok, "%s: redo must skip a page already at the record's LSN", c.name)
		require.Equal(t, got, image(t, p2, c.id), c.name)
	}

	// Several pages in one mtr are one record; a page latched in the mtr
	// and released unchanged is not in it, and is unlatched and unpinned at
	// its Release while the changed ones stay held until Commit.
	mt := e.p.BeginMtr(nil)
	var held []*cache.Page
	for i, id := range ids[5:] {
		pg, err := e.p.Fetch(nil, id)
		require.NoError(t, err)
		mt.Latch(pg)
		if i < 2 {
			scatter(rng, pg.Data(), 1+rng.IntN(10))
		}
		held = append(held, pg)
	}
	for i, pg := range held {
		mt.Release(pg, i < 2)
	}
	require.Equal(t, 2, e.p.Stats().Pinned, "the unchanged page was unpinned at Release")
	require.True(t, mt.Holds(held[0]))
	require.False(t, mt.Holds(held[2]))
	lsn := mt.Commit()
	require.Zero(t, e.p.Stats().Pinned)
	pages, _ := readRecord(t, e.l, lsn)
	require.ElementsMatch(t, ids[5:7], []page.ID{pages[0].ID, pages[1].ID})
	for i := range pages {
		ok, err := p2.Redo(nil, lsn, &pages[i])
		require.NoError(t, err)
		require.True(t, ok)
		id := pages[i].ID
		requireRedone(t, image(t, e.p, id), image(t, p2, id), lsn, id.String())
	}
	require.Less(t, page.LSN(image(t, e.p, ids[7])), lsn, "an unchanged page keeps its LSN")

	// In the end both pools agree on every page.
	for _, id := range ids {
		a, b := image(t, e.p, id), image(t, p2, id)
		requireRedone(t, a, b, page.LSN(a), id.String())
	}
}

// TestMtrRedoFreshPages: a page AllocPage takes from the space's high
// water is logged as fresh and redone from zeros on a store that never saw
// it; a page AllocPage takes from the free list (kind free, old content) is
// rebuilt exactly, whatever the store holds for it.
func TestMtrRedoFreshPages(t *testing.T) {
	rng := seed(t)
	e := newLogEnv(t, 32, nil)
	require.NoError(t, e.p.CreateSpace(nil, 1))
	a := allocRandom(t, e.p, rng, 1)
	require.NoError(t, e.p.FlushAll(nil))
	meta := pid(1, 0)

	t.Run("high water", func(t *testing.T) {
		st2 := copyStore(t, e.st) // has the meta page and page a only
		p2 := newPool(t, st2, 16, cache.Options{})
		mt := e.p.BeginMtr(nil)
		pg, err := e.p.AllocPage(mt, nil, 1, page.KindBTreeLeaf)
		require.NoError(t, err)
		id := pg.ID()
		require.Equal(t, pid(1, 2), id)
		d := pg.Data()
		d[24] = 0x42 // a reserved header byte: the diff against zeros spans the LSN
		fillRandom(rng, d[page.HeaderSize:page.HeaderSize+100])
		d[len(d)-1] = 7
		mt.Release(pg, true)
		lsn := mt.Commit()
		afterPage, afterMeta := image(t, e.p, id), image(t, e.p, meta)

		pages, _ := readRecord(t, e.l, lsn)
		require.Len(t, pages, 2, "the meta page and the new page")
		byID := map[page.ID]redo.PageRedo{}
		for _, pr := range pages {
			byID[pr.ID] = pr
		}
		require.False(t, byID[meta].Fresh)
		require.True(t, byID[id].Fresh)

		err = st2.ReadPage(id, make([]byte, testPageSize))
		require.ErrorIs(t, err, store.ErrPageNotFound, "the copy must not have the new page")
		for i := range pages {
			ok, err := p2.Redo(nil, lsn, &pages[i])
			require.NoError(t, err)
			require.True(t, ok)
		}
		requireRedone(t, afterPage, image(t, p2, id), lsn, "new page")
		requireRedone(t, afterMeta, image(t, p2, meta), lsn, "meta page")
		info, err := p2.Space(nil, 1)
		require.NoError(t, err)
		require.Equal(t, cache.SpaceInfo{Extents: 1, HighWater: 3}, info)
		require.Equal(t, page.KindBTreeLeaf, page.KindOf(image(t, p2, id)))
	})

	t.Run("free list", func(t *testing.T) {
		// The copy has page a live, with its random body.
		require.NoError(t, e.p.FlushAll(nil))
		st2 := copyStore(t, e.st)
		p2 := newPool(t, st2, 16, cache.Options{})
		require.Equal(t, page.KindHeap, page.KindOf(image(t, p2, a)))

		// Free a: a diff against its snapshot.
		mt := e.p.BeginMtr(nil)
		pg, err := e.p.Fetch(nil, a)
		require.NoError(t, err)
		mt.Latch(pg)
		require.NoError(t, e.p.FreePage(mt, nil, pg))
		mt.Release(pg, true)
		freeLSN := mt.Commit()
		freedImg, freedMeta := image(t, e.p, a), image(t, e.p, meta)
		require.Equal(t, page.KindFree, page.KindOf(freedImg))
		require.NoError(t, e.p.FlushAll(nil))
		st3 := copyStore(t, e.st) // has a on the free list

		// Take it back: fresh, whatever it held.
		mt = e.p.BeginMtr(nil)
		pg, err = e.p.AllocPage(mt, nil, 1, page.KindHeap)
		require.NoError(t, err)
		require.Equal(t, a, pg.ID(), "the free list is used before the high water")
		require.NotZero(t, page.LSN(pg.Data()), "the frame keeps the page's old LSN")
		// A reserved header byte: the record's range then spans the LSN
		// field, which holds the old LSN at encoding time.
		pg.Data()[24] = 0x99
		fillRandom(rng, pg.Data()[page.HeaderSize+50:page.HeaderSize+90])
		mt.Release(pg, true)
		allocLSN := mt.Commit()
		afterPage, afterMeta := image(t, e.p, a), image(t, e.p, meta)

		freePages, _ := readRecord(t, e.l, freeLSN)
		require.Len(t, freePages, 2)
		for _, pr := range freePages {
			require.False(t, pr.Fresh, "a freed page is a diff")
		}
		allocPages, _ := readRecord(t, e.l, allocLSN)
		require.Len(t, allocPages, 2)
		for _, pr := range allocPages {
			require.Equal(t, pr.ID == a, pr.Fresh, "page %s", pr.ID)
		}

		// Onto the live page: both records, in order.
		for i := range freePages {
			ok, err := p2.Redo(nil, freeLSN, &freePages[i])
			require.NoError(t, err)
			require.True(t, ok)
		}
		requireRedone(t, freedImg, image(t, p2, a), freeLSN, "freed page")
		requireRedone(t, freedMeta, image(t, p2, meta), freeLSN, "meta after free")
		for i := range allocPages {
			ok, err := p2.Redo(nil, allocLSN, &allocPages[i])
			require.NoError(t, err)
			require.True(t, ok)
		}
		requireRedone(t, afterPage, image(t, p2, a), allocLSN, "reallocated page")
		requireRedone(t, afterMeta, image(t, p2, meta), allocLSN, "meta after alloc")

		// Onto a free page whose body holds garbage (old content that the
		// free never cleared on disk): the fresh record rebuilds it from
		// zeros, so the garbage is gone.
		garbage := bytes.Clone(freedImg)
		fillRandom(rng, garbage[page.HeaderSize:])
		page.Seal(garbage)
		require.NoError(t, st3.WritePage(a, garbage))
		p3 := newPool(t, st3, 16, cache.Options{})
		for i := range allocPages {
			ok, err := p3.Redo(nil, allocLSN, &allocPages[i])
			require.NoError(t, err)
			require.True(t, ok)
		}
		requireRedone(t, afterPage, image(t, p3, a), allocLSN, "reallocated page over garbage")
		requireRedone(t, afterMeta, image(t, p3, meta), allocLSN, "meta over garbage")
	})
}

// TestMtrRedoSkipsAndRefuses: Redo leaves alone a page whose LSN is not
// older than the record's (equal or newer), and refuses a change to a page
// the store lacks unless the record creates it (ErrCorruptLog).
func TestMtrRedoSkipsAndRefuses(t *testing.T) {
	rng := seed(t)
	e := newLogEnv(t, 16, nil)
	require.NoError(t, e.p.CreateSpace(nil, 1))
	id := allocRandom(t, e.p, rng, 1)
	lsn1, _ := changeInMtr(t, e.p, nil, id, func(pg *cache.Page) { scatter(rng, pg.Data(), 3) })
	lsn2, after2 := changeInMtr(t, e.p, nil, id, func(pg *cache.Page) { scatter(rng, pg.Data(), 3) })
	require.Less(t, lsn1, lsn2)
	pages1, _ := readRecord(t, e.l, lsn1)
	pages2, _ := readRecord(t, e.l, lsn2)
	require.NoError(t, e.p.FlushAll(nil)) // the store has the page at lsn2

	p2 := newPool(t, e.st, 16, cache.Options{})
	var m cache.Meter
	ok, err := p2.Redo(&m, lsn1, &pages1[0])
	require.NoError(t, err)
	require.False(t, ok, "a page newer than the record is skipped")
	ok, err = p2.Redo(&m, lsn2, &pages2[0])
	require.NoError(t, err)
	require.False(t, ok, "a page at the record's LSN is skipped")
	got := image(t, p2, id)
	require.Equal(t, after2[4:], got[4:])
	require.Equal(t, cache.Stats{Frames: 16, Resident: 1}, p2.Stats(), "skips leave the page clean and unpinned")

	// A store without the page: the non-fresh change cannot be applied.
	empty := newStore(t)
	p3 := newPool(t, empty, 16, cache.Options{})
	ok, err = p3.Redo(nil, lsn1, &pages1[0])
	require.ErrorIs(t, err, redo.ErrCorruptLog)
	require.Contains(t, err.Error(), id.String())
	require.False(t, ok)
	require.Equal(t, cache.Stats{Frames: 16}, p3.Stats(), "a refused redo must give its frame back")
	require.False(t, p3.Resident(id))

	// Records that do not decode.
	recs := scanLog(t, e.l, lsn2)
	good := recs[0].body
	for n := range len(good) {
		_, _, err := redo.Decode(good[:n], nil)
		require.ErrorIs(t, err, redo.ErrCorruptLog, "record cut to %d bytes", n)
	}
	_, _, err = redo.Decode(append(bytes.Clone(good), 0), nil)
	require.ErrorIs(t, err, redo.ErrCorruptLog, "a byte after the note")
}

// TestMtrCommitNothingAndNote: an mtr that changed nothing and carries no
// note writes no record and returns 0; a note-only mtr writes a record with
// no pages and the note; without a log, nothing is ever logged.
func TestMtrCommitNothingAndNote(t *testing.T) {
	rng := seed(t)
	e := newLogEnv(t, 16, nil)
	require.NoError(t, e.p.CreateSpace(nil, 1))
	id := allocRandom(t, e.p, rng, 1)
	end, stats := e.l.End(), e.l.Stats()

	var m cache.Meter
	mt := e.p.BeginMtr(&m)
	require.Same(t, e.p, mt.Pool())
	require.Same(t, &m, mt.Meter())
	require.Zero(t, mt.Commit(), "empty mtr")

	// A page latched and released clean: unlatched and unpinned at once.
	mt = e.p.BeginMtr(&m)
	pg, err := e.p.Fetch(&m, id)
	require.NoError(t, err)
	mt.Latch(pg)
	mt.RLatch(pg) // the mtr holds it: no second latch (would deadlock)
	mt.RUnlatch(pg)
	mt.Release(pg, false)
	require.False(t, mt.Holds(pg))
	require.Zero(t, e.p.Stats().Pinned)
	pg, err = e.p.Fetch(&m, id)
	require.NoError(t, err)
	require.True(t, pg.TryRLatch(), "the exclusive latch was released")
	pg.RUnlatch()
	pg.Unpin(false)
	require.Zero(t, mt.Commit(), "unchanged page")
	require.Equal(t, end, e.l.End(), "no record written")
	require.Equal(t, stats, e.l.Stats())
	require.Zero(t, m.LogRecords)
	require.Zero(t, m.LogBytes)

	// Note only.
	mt = e.p.BeginMtr(&m)
	mt.Note([]byte("txn 7 "))
	mt.Note([]byte("commits"))
	lsn := mt.Commit()
	require.Equal(t, end, lsn, "the record takes the log's end")
	require.Greater(t, e.l.End(), lsn)
	pages, note := readRecord(t, e.l, lsn)
	require.Empty(t, pages)
	require.Equal(t, "txn 7 commits", string(note))
	require.EqualValues(t, 1, m.LogRecords)

	// A note and a page change: one record with both.
	mt = e.p.BeginMtr(&m)
	pg, err = e.p.Fetch(&m, id)
	require.NoError(t, err)
	mt.Latch(pg)
	pg.Data()[page.HeaderSize] ^= 1
	mt.Note([]byte("undo:1"))
	mt.Release(pg, true)
	lsn = mt.Commit()
	pages, note = readRecord(t, e.l, lsn)
	require.Len(t, pages, 1)
	require.Equal(t, id, pages[0].ID)
	require.Equal(t, "undo:1", string(note))
	require.EqualValues(t, 2, m.LogRecords)

	// Mtrs come from a free list: a new one does not inherit the note.
	mt = e.p.BeginMtr(nil)
	require.Zero(t, mt.Commit())

	// No log: pages are still held until Commit, nothing is logged.
	st := newStore(t)
	p := newPool(t, st, 16, cache.Options{})
	require.NoError(t, p.CreateSpace(nil, 1))
	mt = p.BeginMtr(&m)
	pg, err = p.AllocPage(mt, nil, 1, page.KindHeap)
	require.NoError(t, err)
	mt.Note([]byte("lost"))
	mt.Release(pg, true)
	require.Equal(t, 2, p.Stats().Pinned)
	require.Zero(t, mt.Commit())
	require.Zero(t, p.Stats().Pinned)
	require.Zero(t, page.LSN(image(t, p, pid(1, 1))))
	require.EqualValues(t, 2, m.LogRecords, "no log, no records")
}

// TestMtrNestedLatches: Latch and RLatch of a page the mtr already holds
// nest instead of latching again; an unchanged page leaves the mtr
// (unlatched, every pin handed over dropped) at its last release, a
// changed one only at Commit, and the record holds the change made under
// the inner latch.
func TestMtrNestedLatches(t *testing.T) {
	rng := seed(t)
	e := newLogEnv(t, 16, nil)
	require.NoError(t, e.p.CreateSpace(nil, 1))
	id := allocRandom(t, e.p, rng, 1)
	fetch := func() *cache.Page {
		pg, err := e.p.Fetch(nil, id)
		require.NoError(t, err)
		return pg
	}
	exclusive := func(pg *cache.Page) bool {
		if pg.TryRLatch() {
			pg.RUnlatch()
			return false
		}
		return true
	}

	// Unchanged: two Latches (two pins) and an RLatch; the page stays
	// latched until the last of them is released.
	mt := e.p.BeginMtr(nil)
	pg := fetch()
	mt.Latch(pg)
	mt.Latch(fetch()) // same frame, a second pin
	mt.RLatch(pg)
	require.Equal(t, 1, e.p.Stats().Pinned)
	mt.Release(pg, false)
	mt.RUnlatch(pg)
	require.True(t, mt.Holds(pg))
	require.True(t, exclusive(pg))
	mt.Release(pg, false)
	require.False(t, mt.Holds(pg))
	require.False(t, exclusive(pg))
	require.Zero(t, e.p.Stats().Pinned, "both pins handed to the mtr were dropped")
	require.Zero(t, mt.Commit())

	// Changed under the inner latch: held until Commit, then in the record.
	before := image(t, e.p, id)
	mt = e.p.BeginMtr(nil)
	pg = fetch()
	mt.Latch(pg)
	inner := fetch()
	mt.Latch(inner)
	inner.Data()[page.HeaderSize+7] ^= 0xff
	mt.Release(inner, true)
	mt.RLatch(pg) // re-read a page the mtr changed: no deadlock
	require.NotEqual(t, before[page.HeaderSize+7], pg.Data()[page.HeaderSize+7])
	mt.RUnlatch(pg)
	mt.Release(pg, false)
	require.True(t, mt.Holds(pg), "a changed page stays until Commit")
	require.True(t, exclusive(pg))
	require.Equal(t, 1, e.p.Stats().Pinned)
	lsn := mt.Commit()
	require.NotZero(t, lsn)
	require.False(t, exclusive(pg))
	require.Zero(t, e.p.Stats().Pinned)
	pages, _ := readRecord(t, e.l, lsn)
	require.Len(t, pages, 1)
	p2 := newPool(t, newStore(t), 16, cache.Options{})
	require.NoError(t, p2.Store().WritePage(id, sealed(before)))
	ok, err := p2.Redo(nil, lsn, &pages[0])
	require.NoError(t, err)
	require.True(t, ok)
	requireRedone(t, image(t, e.p, id), image(t, p2, id), lsn, "nested change")

	// Commit with a latch not released is a bug the mtr reports.
	mt = e.p.BeginMtr(nil)
	pg = fetch()
	mt.Latch(pg)
	require.Panics(t, func() { mt.Commit() })
}

// sealed returns a sealed copy of a page image.
func sealed(b []byte) []byte {
	b = bytes.Clone(b)
	page.Seal(b)
	return b
}
