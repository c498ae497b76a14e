package xact

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/enginelab/enginelab/heap"
)

func init() { cache.VerifyRedoInTests() }

func newPool(t *testing.T, st store.Store, frames int, lg cache.RedoLog) *cache.Pool {
	t.Helper()
	p, err := cache.NewPool(st, &cache.Options{
		PoolSize: int64(frames) * int64(st.PageSize()),
		Policy:   cache.PolicyLRU,
	}, &cache.Wiring{Log: lg})
	require.NoError(t, err)
	return p
}

var _ heap.CommitStatus = (*Log)(nil)

// TestLog sets statuses across three pages and reads them back, with
// exact counts, refuses bad changes, and reopens.
func TestLog(t *testing.T) {
	st, err := store.OpenPebble(store.PebbleOptions{PageSize: 4096})
	require.NoError(t, err)
	pool := newPool(t, st, 32, nil)
	l, err := Create(nil, pool, 7)
	require.NoError(t, err)
	const per = 4 * (4096 - 48)
	require.Equal(t, uint64(per), l.per)
	set := func(xid uint64, s heap.XidStatus) error {
		mt := pool.BeginMtr(nil)
		defer mt.Commit()
		return l.SetStatus(mt, xid, s)
	}
	require.NoError(t, set(1, heap.XidCommitted))
	require.NoError(t, set(2, heap.XidAborted))
	require.NoError(t, set(per+3, heap.XidCommitted)) // page 2
	require.NoError(t, set(2*per, heap.XidAborted))   // page 3
	require.NoError(t, set(1, heap.XidCommitted), "the same status again")
	require.ErrorIs(t, set(1, heap.XidAborted), ErrBadStatus)
	require.ErrorIs(t, set(3, heap.XidInProgress), ErrBadStatus)
	require.Equal(t, Stats{Sets: 4, Pages: 3}, l.Stats())
	for xid, want := range map[uint64]heap.XidStatus{
		0: heap.XidInProgress, 1: heap.XidCommitted, 2: heap.XidAborted, 3: heap.XidInProgress,
		per + 3: heap.XidCommitted, 2 * per: heap.XidAborted, 2*per + 1: heap.XidInProgress,
		10 * per: heap.XidInProgress, // beyond the log: never set
	} {
		got, err := l.XidStatus(xid)
		require.NoError(t, err)
		require.Equal(t, want, got, "xid %d", xid)
	}
	require.Equal(t, int64(7), l.Stats().Lookups, "the id beyond the log reads no page")

	require.NoError(t, pool.Close())
	pool = newPool(t, st, 32, nil)
	l, err = Open(nil, pool, 7)
	require.NoError(t, err)
	require.Equal(t, uint32(3), l.Stats().Pages)
	got, err := l.XidStatus(per + 3)
	require.NoError(t, err)
	require.Equal(t, heap.XidCommitted, got)
	n, err := l.AbortInProgress(nil, 0, 5)
	require.NoError(t, err)
	require.Equal(t, 3, n, "0, 3 and 4")
	got, err = l.XidStatus(3)
	require.NoError(t, err)
	require.Equal(t, heap.XidAborted, got)

	_, err = Open(nil, pool, 8)
	require.Error(t, err)
	require.NoError(t, pool.CreateSpace(nil, 9))
	_, err = Open(nil, pool, 9)
	require.ErrorIs(t, err, ErrNotLog)
}

// TestLogCrash sets statuses in logged mini-transactions, syncs the redo
// log half way, crashes (pebble's crashable filesystem drops what was not
// synced), recovers by redo, and requires every status set before the
// sync to be there and every one after it to read as not committed (in
// progress); AbortInProgress then makes them aborted.
func TestLogCrash(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 19))
			fs := vfs.NewCrashableMem()
			st, err := store.OpenPebble(store.PebbleOptions{FS: fs, Dir: "db", PageSize: 4096})
			require.NoError(t, err)
			lg, err := redo.Open(st, nil)
			require.NoError(t, err)
			start := lg.End()
			pool := newPool(t, st, 256, lg)
			l, err := Create(nil, pool, 7)
			require.NoError(t, err)
			durable := map[uint64]heap.XidStatus{}
			lost := map[uint64]bool{}
			next := uint64(1)
			for phase := range 2 {
				for range 400 {
					xid := next
					next += 1 + uint64(rng.IntN(200)) // spans several pages
					s := heap.XidCommitted
					if rng.IntN(3) == 0 {
						s = heap.XidAborted
					}
					mt := pool.BeginMtr(nil)
					require.NoError(t, l.SetStatus(mt, xid, s))
					mt.Commit()
					if phase == 0 {
						durable[xid] = s
					} else {
						lost[xid] = true
					}
				}
				if phase == 0 {
					require.NoError(t, lg.Flush(lg.End()))
				}
			}
			require.Greater(t, l.Stats().Pages, uint32(3))
			image := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})

			st2, err := store.OpenPebble(store.PebbleOptions{FS: image, Dir: "db"})
			require.NoError(t, err)
			defer func() { require.NoError(t, st2.Close()) }()
			lg2, err := redo.Open(st2, nil)
			require.NoError(t, err)
			defer lg2.Close()
			pool2 := newPool(t, st2, 256, lg2)
			kinds := map[redo.Kind]int{}
			var pages []redo.PageRedo
			require.NoError(t, lg2.Scan(start, func(lsn uint64, body []byte) error {
				var err error
				if pages, _, err = redo.Decode(body, pages); err != nil {
					return err
				}
				for i := range pages {
					if _, err := pool2.Redo(nil, lsn, &pages[i]); err != nil {
						return err
					}
					for _, op := range pages[i].Ops {
						kinds[op.Kind]++
					}
				}
				return nil
			}))
			require.Equal(t, len(durable), kinds[kindSet], "exactly the synced statuses are replayed")
			require.Positive(t, kinds[kindInit])
			l2, err := Open(nil, pool2, 7)
			require.NoError(t, err)
			for xid, want := range durable {
				got, err := l2.XidStatus(xid)
				require.NoError(t, err)
				require.Equal(t, want, got, "xid %d, synced", xid)
			}
			for xid := range lost {
				got, err := l2.XidStatus(xid)
				require.NoError(t, err)
				require.Equal(t, heap.XidInProgress, got, "xid %d, not synced", xid)
			}
			// Recovery's last step: everything below the next id that is
			// still in progress is aborted.
			n, err := l2.AbortInProgress(nil, 0, next)
			require.NoError(t, err)
			require.Equal(t, int(next)-len(durable), n)
			for xid := range lost {
				got, err := l2.XidStatus(xid)
				require.NoError(t, err)
				require.Equal(t, heap.XidAborted, got, "xid %d after recovery", xid)
			}
			require.NoError(t, pool2.Close())
		})
	}
}

// TestRedoAppliers checks the appliers on payloads that fit and on ones
// that do not: an error, never a panic, and a failed apply changes
// nothing.
func TestRedoAppliers(t *testing.T) {
	pg := make([]byte, 4096)
	page.Init(pg, page.ID{Space: 7, Page: 1}, page.KindXact)
	initPage(pg, 0)
	pg[bodyStart] = byte(heap.XidCommitted)
	heapPage := make([]byte, 4096)
	page.Init(heapPage, page.ID{Space: 7, Page: 1}, page.KindHeap)
	uv := func(v uint64, tail ...byte) []byte { return append(binary.AppendUvarint(nil, v), tail...) }
	for _, tc := range []struct {
		name    string
		fn      redo.ApplyFunc
		pg      []byte
		payload []byte
		ok      bool
	}{
		{"init", redoInit, pg, uv(16192), true},
		{"init bytes left", redoInit, pg, uv(0, 1), false},
		{"init on a heap page", redoInit, heapPage, uv(0), false},
		{"set", redoSet, pg, uv(5, 2), true},
		{"set the same again", redoSet, pg, uv(0, 1), true},
		{"set another final status", redoSet, pg, uv(0, 2), false},
		{"set in progress", redoSet, pg, uv(5, 0), false},
		{"set status 3", redoSet, pg, uv(5, 3), false},
		{"set beyond the page", redoSet, pg, uv(16192, 1), false},
		{"set cut short", redoSet, pg, uv(5), false},
		{"set on a heap page", redoSet, heapPage, uv(5, 1), false},
	} {
		cp := bytes.Clone(tc.pg)
		err := tc.fn(page.ID{Space: 7, Page: 1}, cp, tc.payload)
		if tc.ok {
			require.NoError(t, err, tc.name)
			continue
		}
		require.Error(t, err, tc.name)
		require.Equal(t, tc.pg, cp, "%s: a failed apply changed the page", tc.name)
	}
}
