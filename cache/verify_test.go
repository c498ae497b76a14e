package cache_test

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/stretchr/testify/require"
)

// kindTestAddOne is a layer's operation registered by this test binary
// only, in the cache's range: "add one to the byte at the offset". Its
// redo is the same code as the change it logs, as a layer's is.
const kindTestAddOne redo.Kind = 31

func init() {
	redo.Register(kindTestAddOne, "cache-test-add-one", func(_ page.ID, buf, p []byte) error {
		r := redo.NewReader(p)
		off := r.Int(len(buf) - 1)
		if err := r.Err(); err != nil {
			return err
		}
		addOne(buf, off)
		return nil
	})
}

func addOne(buf []byte, off int) { buf[off]++ }

// requirePanicsWith runs f, which must panic with a message containing
// every one of substrs.
func requirePanicsWith(t *testing.T, f func(), substrs ...string) {
	t.Helper()
	require.Panics(t, func() {
		defer func() {
			if r := recover(); r != nil {
				for _, s := range substrs {
					require.Contains(t, fmt.Sprint(r), s)
				}
				panic(r)
			}
		}()
		f()
	})
}

// TestVerifyRedoCatches: with cache.VerifyRedo on (TestMain), an mtr that
// changes a page without logging the change, or logs something other than
// what it did, panics, at Commit (or at the Release that lets a changed
// page go as unchanged), before its record reaches the log. Each case has
// a twin that logs the same change rightly and passes.
func TestVerifyRedoCatches(t *testing.T) {
	cases := []struct {
		name   string
		msg    string                                          // in the panic
		atRel  bool                                            // panics at Release(pg, false), not Commit
		change func(mt *cache.Mtr, pg *cache.Page, wrong bool) // wrong: the bad variant
	}{
		{"unlogged change", "no operation was logged", false, func(mt *cache.Mtr, pg *cache.Page, wrong bool) {
			if wrong {
				pg.Data()[page.HeaderSize+9] ^= 1
			} else {
				mt.Write(pg, page.HeaderSize+9, []byte{pg.Data()[page.HeaderSize+9] ^ 1})
			}
		}},
		{"unlogged header byte", "no operation was logged", false, func(mt *cache.Mtr, pg *cache.Page, wrong bool) {
			if wrong {
				pg.Data()[5] ^= 1 // flags
			} else {
				mt.Write(pg, 5, []byte{pg.Data()[5] ^ 1})
			}
		}},
		{"one change logged, one not", "differs from the page at byte 200", false, func(mt *cache.Mtr, pg *cache.Page, wrong bool) {
			mt.Write32(pg, 100, 0xfeedf00d)
			if wrong {
				pg.Data()[200] ^= 1
			} else {
				mt.Memset(pg, 200, 1, pg.Data()[200]^1)
			}
		}},
		{"changed, released as unchanged", "released as unchanged", true, func(mt *cache.Mtr, pg *cache.Page, wrong bool) {
			if wrong {
				pg.Data()[page.HeaderSize] ^= 1
			}
		}},
		{"a write logged with other bytes", "differs from the page at byte 103", false, func(mt *cache.Mtr, pg *cache.Page, wrong bool) {
			b := []byte{1, 2, 3, 4}
			copy(pg.Data()[100:], b)
			if wrong {
				b = []byte{1, 2, 3, 5}
			}
			mt.Log(pg, redo.KindWrite, append(binary.AppendUvarint(nil, 100), b...))
		}},
		{"a write logged at another offset", "differs from the page", false, func(mt *cache.Mtr, pg *cache.Page, wrong bool) {
			b := []byte{0xa1, 0xa2, 0xa3}
			copy(pg.Data()[300:], b)
			off := uint64(300)
			if wrong {
				off = 301
			}
			mt.Log(pg, redo.KindWrite, append(binary.AppendUvarint(nil, off), b...))
		}},
		{"an operation whose redo fails", "fails", false, func(mt *cache.Mtr, pg *cache.Page, wrong bool) {
			off := uint64(testPageSize - 4)
			if wrong {
				off = testPageSize - 3 // four bytes do not fit
			}
			binary.LittleEndian.PutUint32(pg.Data()[testPageSize-4:], 0x01020304)
			mt.Log(pg, redo.KindWrite, binary.LittleEndian.AppendUint32(binary.AppendUvarint(nil, off), 0x01020304))
		}},
		{"a layer's operation done twice, logged once", "differs from the page at byte 64", false, func(mt *cache.Mtr, pg *cache.Page, wrong bool) {
			addOne(pg.Data(), 64)
			if wrong {
				addOne(pg.Data(), 64)
			}
			mt.Log(pg, kindTestAddOne, binary.AppendUvarint(mt.Payload(), 64))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := seed(t)
			e := newLogEnv(t, 16, nil)
			require.NoError(t, e.p.CreateSpace(nil, 1))
			id := allocRandom(t, e.p, rng, 1)
			run := func(wrong bool) uint64 {
				mt := e.p.BeginMtr(nil)
				pg, err := e.p.Fetch(nil, id)
				require.NoError(t, err)
				mt.Latch(pg)
				c.change(mt, pg, wrong)
				mt.Release(pg, !c.atRel)
				return mt.Commit()
			}

			// Right: passes, and the record rebuilds the page.
			before := image(t, e.p, id)
			lsn := run(false)
			if c.atRel {
				require.Zero(t, lsn, "nothing changed, nothing logged")
			} else {
				require.NotZero(t, lsn)
				pages, _ := readRecord(t, e.l, lsn)
				require.Len(t, pages, 1)
				got := before
				require.NoError(t, pages[0].Apply(got))
				page.SetLSN(got, lsn)
				requireRedone(t, image(t, e.p, id), got, lsn, c.name)
			}

			// Wrong: panics before anything reaches the log. The mtr is
			// left as a panic leaves it (its page latched); the test
			// abandons the pool.
			end := e.l.End()
			requirePanicsWith(t, func() { run(true) }, "cache: VerifyRedo:", id.String(), c.msg)
			require.Equal(t, end, e.l.End(), "the record that failed the check was not appended")
		})
	}
}

// TestVerifyRedoPoolWithoutLog: a pool without a log writes no record, but
// under VerifyRedo its mtrs build one for the check, so a structure test
// (no log) catches an unlogged change too; Logging says a record is built.
func TestVerifyRedoPoolWithoutLog(t *testing.T) {
	p := newPool(t, newStore(t), 16, cache.Options{})
	require.NoError(t, p.CreateSpace(nil, 1))
	mt := p.BeginMtr(nil)
	require.True(t, mt.Logging(), "VerifyRedo builds the record")
	pg, err := p.AllocPage(mt, nil, 1, page.KindHeap)
	require.NoError(t, err)
	writeBody(mt, pg, "logged")
	mt.Release(pg, true)
	require.Zero(t, mt.Commit(), "no log: no LSN")
	id := pg.ID()

	pg, err = p.Fetch(nil, id)
	require.NoError(t, err)
	mt = p.BeginMtr(nil)
	mt.Latch(pg)
	setBody(pg, "unlogged")
	mt.Release(pg, true)
	requirePanicsWith(t, func() { mt.Commit() }, "no operation was logged", id.String())
}

// TestVerifyRedoOff shows what the check is for: with it off, an unlogged
// change commits without complaint, and redo of the record (which holds
// the logged change only) loses it.
func TestVerifyRedoOff(t *testing.T) {
	cache.VerifyRedo(false)
	defer cache.VerifyRedo(true)
	rng := seed(t)
	e := newLogEnv(t, 16, nil)
	require.NoError(t, e.p.CreateSpace(nil, 1))
	id := allocRandom(t, e.p, rng, 1)
	before := image(t, e.p, id)
	mt := e.p.BeginMtr(nil)
	require.True(t, mt.Logging())
	pg, err := e.p.Fetch(nil, id)
	require.NoError(t, err)
	mt.Latch(pg)
	mt.Write32(pg, 100, 7)
	pg.Data()[200] ^= 0xff // not logged
	mt.Release(pg, true)
	lsn := mt.Commit()
	require.NotZero(t, lsn)
	after := image(t, e.p, id)

	pages, _ := readRecord(t, e.l, lsn)
	require.Len(t, pages, 1)
	got := make([]byte, testPageSize)
	copy(got, before)
	require.NoError(t, pages[0].Apply(got))
	require.Equal(t, after[100:104], got[100:104], "the logged write is redone")
	require.NotEqual(t, after[200], got[200], "the unlogged change is lost")

	// Without a log and without the check, nothing is built.
	p := newPool(t, newStore(t), 16, cache.Options{})
	mt = p.BeginMtr(nil)
	require.False(t, mt.Logging())
	require.Zero(t, mt.Commit())
}
