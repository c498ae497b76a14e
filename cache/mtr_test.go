package cache_test

import (
	"bytes"
	"encoding/binary"
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

// fillRandom overwrites b with random bytes (a buffer, not a page in an
// mtr: see writeRandom).
func fillRandom(rng *rand.Rand, b []byte) {
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
}

// writeRandom writes n random bytes into pg at off through mt: one logged
// redo.KindWrite.
func writeRandom(rng *rand.Rand, mt *cache.Mtr, pg *cache.Page, off, n int) {
	b := make([]byte, n)
	fillRandom(rng, b)
	mt.Write(pg, off, b)
}

// allocRandom allocates a heap page in space in an mtr of its own, fills its
// whole body with random bytes and returns its id.
func allocRandom(t testing.TB, p *cache.Pool, rng *rand.Rand, space uint32) page.ID {
	t.Helper()
	mt := p.BeginMtr(nil)
	pg, err := p.AllocPage(mt, nil, space, page.KindHeap)
	require.NoError(t, err)
	writeRandom(rng, mt, pg, page.HeaderSize, len(pg.Data())-page.HeaderSize)
	id := pg.ID()
	mt.Release(pg, true)
	require.NotZero(t, mt.Commit())
	return id
}

// changeInMtr changes page id in one mtr with change (which logs what it
// does through mt) and returns the record's LSN and the page's
// after-image.
func changeInMtr(t testing.TB, p *cache.Pool, m *cache.Meter, id page.ID, change func(mt *cache.Mtr, pg *cache.Page)) (uint64, []byte) {
	t.Helper()
	mt := p.BeginMtr(m)
	pg, err := p.Fetch(m, id)
	require.NoError(t, err)
	mt.Latch(pg)
	change(mt, pg)
	mt.Release(pg, true)
	lsn := mt.Commit()
	require.NotZero(t, lsn)
	return lsn, image(t, p, id)
}

// pageWrite is one logged write: bytes b at offset off.
type pageWrite struct {
	off int
	b   []byte
}

// scatter changes n random byte ranges of the page body (and sometimes its
// last byte), each to random values different from the old ones, each
// range logged through mt as a write of its new bytes. It returns the
// writes in the order it logged them.
func scatter(rng *rand.Rand, mt *cache.Mtr, pg *cache.Page, n int) []pageWrite {
	d := pg.Data()
	var ws []pageWrite
	for range n {
		off := page.HeaderSize + rng.IntN(len(d)-page.HeaderSize)
		l := 1 + rng.IntN(40)
		if rng.IntN(4) == 0 {
			l = 1
		}
		b := bytes.Clone(d[off:min(off+l, len(d))])
		for i := range b {
			b[i] ^= byte(1 + rng.IntN(255))
		}
		mt.Write(pg, off, b)
		ws = append(ws, pageWrite{off, b})
	}
	if rng.IntN(2) == 0 {
		b := []byte{d[len(d)-1] ^ 0x5a}
		mt.Write(pg, len(d)-1, b)
		ws = append(ws, pageWrite{len(d) - 1, b})
	}
	return ws
}

// rawRecord flushes the log past lsn and returns the stored body of the
// record at lsn.
func rawRecord(t testing.TB, l *redo.Log, lsn uint64) []byte {
	t.Helper()
	require.NoError(t, l.Flush(lsn))
	recs := scanLog(t, l, lsn)
	require.NotEmpty(t, recs, "no record at LSN %d after Flush", lsn)
	require.Equal(t, lsn, recs[0].lsn, "first record at or after %d", lsn)
	return recs[0].body
}

// TestMtrOpRecords pins the records the mtr writes, operation by operation
// (the format cache/redo's doc.go draws): each case's record is read back
// from pebble (Log.Flush, Log.Scan) and must be exactly the bytes listed,
// and the meter counts exactly those bytes and the 8-byte frame header.
// Each record is then redone with Pool.Redo onto the before-image in a
// second pool over a copy of the store: the result is the after-image
// byte for byte except the checksum, with the record's LSN. The second
// pool follows the first record by record, so later cases redo onto pages
// earlier cases changed.
func TestMtrOpRecords(t *testing.T) {
	rng := seed(t)
	e := newLogEnv(t, 32, nil)
	require.NoError(t, e.p.CreateSpace(nil, 1))
	var ids []page.ID
	for range 8 {
		ids = append(ids, allocRandom(t, e.p, rng, 1))
	}
	require.Equal(t, pid(1, 8), ids[7], "page numbers below 128: one-byte uvarints below")
	require.NoError(t, e.p.FlushAll(nil))
	p2 := newPool(t, copyStore(t, e.st), 32, cache.Options{})

	ps := e.p.PageSize()
	require.Equal(t, 4096, ps)
	// Uvarints of the offsets and lengths used below.
	const (
		u200a, u200b   = 0xc8, 0x01 // 200
		u300a, u300b   = 0xac, 0x02 // 300
		u400a, u400b   = 0x90, 0x03 // 400
		u500a, u500b   = 0xf4, 0x03 // 500
		u1000a, u1000b = 0xe8, 0x07 // 1000
		u4000a, u4000b = 0xa0, 0x1f // 4000
		u4095a, u4095b = 0xff, 0x1f // 4095, the last byte
		u4065a, u4065b = 0xe1, 0x1f // 4065
	)
	var scattered []pageWrite
	var whole []byte
	cases := []struct {
		name   string
		id     page.ID
		change func(mt *cache.Mtr, pg *cache.Page)
		want   func(n byte) []byte // the record body; n is the page number
		fresh  bool
	}{
		{"whole body", ids[5], func(mt *cache.Mtr, pg *cache.Page) {
			whole = make([]byte, ps-page.HeaderSize)
			for i := range whole {
				whole[i] = pg.Data()[page.HeaderSize+i] ^ byte(1+rng.IntN(255)) // every body byte changes
			}
			mt.Write(pg, page.HeaderSize, whole)
		}, func(n byte) []byte {
			// Payload 1+4064 bytes: its length is a two-byte uvarint.
			return append([]byte{3, 1, n, u4065a, u4065b, page.HeaderSize}, whole...)
		}, false},
		{"first body byte", ids[5], func(mt *cache.Mtr, pg *cache.Page) {
			mt.Write(pg, page.HeaderSize, []byte{pg.Data()[page.HeaderSize] ^ 1})
		}, func(n byte) []byte {
			return []byte{3, 1, n, 2, page.HeaderSize, whole[0] ^ 1}
		}, false},
		{"write32", ids[0], func(mt *cache.Mtr, pg *cache.Page) {
			mt.Write32(pg, 100, 0xdeadbeef)
		}, func(n byte) []byte {
			// kind write, space 1, page n, payload length 5: offset 100, the
			// four bytes little-endian.
			return []byte{3, 1, n, 5, 100, 0xef, 0xbe, 0xad, 0xde}
		}, false},
		{"two writes: the same-page flag", ids[0], func(mt *cache.Mtr, pg *cache.Page) {
			mt.Write32(pg, 100, 1)
			mt.Write32(pg, 4000, 2)
		}, func(n byte) []byte {
			return []byte{
				3, 1, n, 5, 100, 1, 0, 0, 0,
				3 | 0x80, 6, u4000a, u4000b, 2, 0, 0, 0, // same page: no space, no page
			}
		}, false},
		{"the example of cache/redo's doc", ids[6], func(mt *cache.Mtr, pg *cache.Page) {
			mt.Write32(pg, 100, 0xdeadbeef)
			mt.Memset(pg, 200, 5, 9)
		}, func(n byte) []byte {
			require.Equal(t, byte(7), n)
			return []byte{
				0x03, 0x01, 0x07, 0x05, 0x64, 0xef, 0xbe, 0xad, 0xde,
				0x84, 0x04, 0xc8, 0x01, 0x05, 0x09,
			}
		}, false},
		{"memset", ids[1], func(mt *cache.Mtr, pg *cache.Page) {
			mt.Memset(pg, 200, 300, 0xab)
		}, func(n byte) []byte {
			// offset 200, length 300, the byte: 5 bytes for 300 changed.
			return []byte{4, 1, n, 5, u200a, u200b, u300a, u300b, 0xab}
		}, false},
		{"memmove, apart and overlapping", ids[1], func(mt *cache.Mtr, pg *cache.Page) {
			mt.Memmove(pg, 1000, 40, 500)
			mt.Memmove(pg, 60, 40, 100)
		}, func(n byte) []byte {
			// destination, source, length: no bytes of the page.
			return []byte{
				5, 1, n, 5, u1000a, u1000b, 40, u500a, u500b,
				5 | 0x80, 3, 60, 40, 100,
			}
		}, false},
		{"last byte", ids[1], func(mt *cache.Mtr, pg *cache.Page) {
			mt.Write(pg, ps-1, []byte{0x5a})
		}, func(n byte) []byte {
			return []byte{3, 1, n, 3, u4095a, u4095b, 0x5a}
		}, false},
		{"header", ids[2], func(mt *cache.Mtr, pg *cache.Page) {
			mt.SetKind(pg, page.KindBTreeLeaf)
			mt.Write(pg, 5, []byte{1, 0xee, 0xdd}) // flags, unused
			mt.Memset(pg, 24, 8, 0x77)             // reserved
			mt.Write(pg, page.HeaderSize, []byte{0xff})
		}, func(n byte) []byte {
			return []byte{
				3, 1, n, 2, 4, byte(page.KindBTreeLeaf), // SetKind: a write of the kind byte
				3 | 0x80, 4, 5, 1, 0xee, 0xdd,
				4 | 0x80, 3, 24, 8, 0x77,
				3 | 0x80, 2, page.HeaderSize, 0xff,
			}
		}, false},
		{"fresh and writes", ids[3], func(mt *cache.Mtr, pg *cache.Page) {
			reformat(pg, page.KindFSM)
			mt.Fresh(pg)
			mt.Write32(pg, 40, 7)
		}, func(n byte) []byte {
			return []byte{
				2, 1, n, 1, byte(page.KindFSM), // init: the page's kind
				3 | 0x80, 5, 40, 7, 0, 0, 0,
			}
		}, true},
		{"scattered", ids[4], func(mt *cache.Mtr, pg *cache.Page) {
			scattered = scatter(rng, mt, pg, 40)
		}, func(n byte) []byte { return writesRecord(pid(1, uint32(n)), scattered) }, false},
		{"scattered again", ids[4], func(mt *cache.Mtr, pg *cache.Page) {
			scattered = scatter(rng, mt, pg, 5)
		}, func(n byte) []byte { return writesRecord(pid(1, uint32(n)), scattered) }, false},
	}
	for _, c := range cases {
		before := image(t, p2, c.id)
		var m cache.Meter
		lsn, after := changeInMtr(t, e.p, &m, c.id, c.change)
		require.Equal(t, lsn, page.LSN(after), "%s: Commit stamps the page", c.name)
		require.Greater(t, lsn, page.LSN(before), c.name)
		require.EqualValues(t, 1, m.LogRecords, c.name)

		want := c.want(byte(c.id.Page))
		require.Equal(t, want, rawRecord(t, e.l, lsn), "%s: record body", c.name)
		require.EqualValues(t, 8+len(want), m.LogBytes, "%s: frame header and body", c.name)

		pages, note := readRecord(t, e.l, lsn)
		require.Empty(t, note, c.name)
		require.Len(t, pages, 1, c.name)
		require.Equal(t, c.id, pages[0].ID, c.name)
		require.Equal(t, c.fresh, pages[0].Fresh, c.name)

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

	// A page released dirty with nothing logged (it did not change) gets
	// no record, and keeps its LSN.
	end := e.l.End()
	lsnBefore := page.LSN(image(t, e.p, ids[4]))
	var m cache.Meter
	mt := e.p.BeginMtr(&m)
	pg, err := e.p.Fetch(&m, ids[4])
	require.NoError(t, err)
	mt.Latch(pg)
	mt.Release(pg, true)
	require.Zero(t, mt.Commit(), "nothing logged, no record")
	require.Equal(t, end, e.l.End())
	require.Zero(t, m.LogRecords)
	require.Equal(t, lsnBefore, page.LSN(image(t, e.p, ids[4])))

	// Several pages in one mtr are one record, their operations in the
	// order they were done (a page named again after another page's
	// operation, the same-page flag after an operation on the same page);
	// a page latched in the mtr and released unchanged is not in it, and
	// is unlatched and unpinned at its Release while the changed ones stay
	// held until Commit.
	mt = e.p.BeginMtr(&m)
	var held []*cache.Page
	for _, id := range ids[5:] {
		pg, err := e.p.Fetch(nil, id)
		require.NoError(t, err)
		mt.Latch(pg)
		held = append(held, pg)
	}
	a, b := held[0], held[1]
	mt.Write32(a, 100, 0x01020304)
	mt.Write32(b, 104, 0x05060708)
	mt.Memset(a, 300, 10, 0xcc)
	mt.Memmove(a, 400, 300, 10)
	for i, pg := range held {
		mt.Release(pg, i < 2)
	}
	require.Equal(t, 2, e.p.Stats().Pinned, "the unchanged page was unpinned at Release")
	require.True(t, mt.Holds(held[0]))
	require.False(t, mt.Holds(held[2]))
	lsn := mt.Commit()
	require.Zero(t, e.p.Stats().Pinned)
	an, bn := byte(ids[5].Page), byte(ids[6].Page)
	want := []byte{
		3, 1, an, 5, 100, 4, 3, 2, 1,
		3, 1, bn, 5, 104, 8, 7, 6, 5,
		4, 1, an, 4, u300a, u300b, 10, 0xcc, // back to a: named again
		5 | 0x80, 5, u400a, u400b, u300a, u300b, 10,
	}
	require.Equal(t, want, rawRecord(t, e.l, lsn))
	require.EqualValues(t, 8+len(want), m.LogBytes)
	pages, _ := readRecord(t, e.l, lsn)
	require.Len(t, pages, 2, "grouped by page")
	require.Equal(t, []page.ID{ids[5], ids[6]}, []page.ID{pages[0].ID, pages[1].ID})
	var kinds []redo.Kind
	for _, op := range pages[0].Ops {
		kinds = append(kinds, op.Kind)
	}
	require.Equal(t, []redo.Kind{redo.KindWrite, redo.KindMemset, redo.KindMemmove}, kinds)
	require.Len(t, pages[1].Ops, 1)
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

// writesRecord is the record of ws logged on page id in one mtr.
func writesRecord(id page.ID, ws []pageWrite) []byte {
	var b redo.Builder
	for _, w := range ws {
		b.Op(id, redo.KindWrite, append(binary.AppendUvarint(nil, uint64(w.off)), w.b...))
	}
	return b.Bytes()
}

// reformat formats pg (latched by an mtr) afresh as an empty page of kind
// k, keeping its LSN for the frame's sake, as the pool's AllocPage and
// FreePage do; the caller logs it with Mtr.Fresh.
func reformat(pg *cache.Page, k page.Kind) {
	d := pg.Data()
	lsn := page.LSN(d)
	page.Init(d, pg.ID(), k)
	page.SetLSN(d, lsn)
	pg.SetKind(k) // the frame's copy of the kind
}

// TestMtrRedoFreshPages: a page AllocPage takes from the space's high
// water is logged as fresh and redone from zeros on a store that never saw
// it; a page FreePage puts on the free list is logged as fresh too
// (formatted as a free page, then its free-list link written); a page
// AllocPage takes from the free list (kind free, old content) is rebuilt
// exactly, whatever the store holds for it.
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
		mt.Write(pg, 24, []byte{0x42}) // a reserved header byte
		writeRandom(rng, mt, pg, page.HeaderSize, 100)
		mt.Write(pg, len(pg.Data())-1, []byte{7})
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

		// Free a: formatted afresh, whatever it held.
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
		mt.Write(pg, 24, []byte{0x99}) // a reserved header byte
		writeRandom(rng, mt, pg, page.HeaderSize+50, 40)
		mt.Release(pg, true)
		allocLSN := mt.Commit()
		afterPage, afterMeta := image(t, e.p, a), image(t, e.p, meta)

		freePages, _ := readRecord(t, e.l, freeLSN)
		require.Len(t, freePages, 2)
		for _, pr := range freePages {
			require.Equal(t, pr.ID == a, pr.Fresh, "page %s: a freed page is formatted from nothing", pr.ID)
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
	lsn1, _ := changeInMtr(t, e.p, nil, id, func(mt *cache.Mtr, pg *cache.Page) { scatter(rng, mt, pg, 3) })
	lsn2, after2 := changeInMtr(t, e.p, nil, id, func(mt *cache.Mtr, pg *cache.Page) { scatter(rng, mt, pg, 3) })
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

	// Records that do not decode. A record has no count of its
	// operations (the log's frame, its length and CRC-32C, is what catches
	// a record cut short), so a record cut exactly between two operations
	// is a shorter record: it decodes to the operations before the cut.
	// Cut anywhere else, it does not decode.
	recs := scanLog(t, e.l, lsn2)
	good := recs[0].body
	whole, _, err := redo.Decode(good, nil)
	require.NoError(t, err)
	require.Len(t, whole, 1)
	decoded := 0
	for n := range len(good) {
		pages, _, err := redo.Decode(good[:n], nil)
		if err != nil {
			require.ErrorIs(t, err, redo.ErrCorruptLog, "record cut to %d bytes", n)
			continue
		}
		var ops []redo.Op
		if len(pages) > 0 {
			ops = pages[0].Ops
		}
		require.Less(t, len(ops), len(whole[0].Ops), "record cut to %d bytes", n)
		for i := range ops {
			require.Equal(t, whole[0].Ops[i], ops[i], "record cut to %d bytes: operation %d", n, i)
		}
		decoded++
	}
	require.Equal(t, len(whole[0].Ops), decoded, "exactly the cuts between operations (and at 0) decode")
	_, _, err = redo.Decode(append(bytes.Clone(good), 0), nil)
	require.ErrorIs(t, err, redo.ErrCorruptLog, "a byte of kind 0 after the last operation")
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
	mt.Write(pg, page.HeaderSize, []byte{pg.Data()[page.HeaderSize] ^ 1})
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
	mt.Write(inner, page.HeaderSize+7, []byte{inner.Data()[page.HeaderSize+7] ^ 0xff})
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
