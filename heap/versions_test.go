package heap

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
)

// memClog is a commit log in memory: every xid not recorded is in
// progress.
type memClog map[uint64]XidStatus

func (c memClog) XidStatus(xid uint64) (XidStatus, error) { return c[xid], nil }

// TestHOTChainPrune pins a HOT chain's life: three HOT updates on one
// page, the fetches that walk the chain, the hint bits they set, and two
// prunes: the first makes the root a redirect to the live version and
// frees the two dead heap-only versions, the second follows the redirect.
func TestHOTChainPrune(t *testing.T) {
	_, _, h := newHeapForTest(t, 4<<10, 32)
	clog := memClog{}
	var m Meter
	root, err := h.InsertVersion(&m, 10, []byte("v0"))
	require.NoError(t, err)
	clog[10] = XidCommitted
	ptr := root
	for i, xid := range []uint64{11, 12, 13} {
		np, hot, err := h.UpdateVersion(&m, ptr, xid, []byte(fmt.Sprintf("v%d", i+1)), true)
		require.NoError(t, err)
		require.True(t, hot)
		require.Equal(t, root.Page, np.Page)
		clog[xid] = XidCommitted
		ptr = np
	}
	require.Equal(t, int64(3), m.HeapHOTUpdates)
	require.Zero(t, m.HeapNonHOTUpdates)

	// A snapshot that sees 13 running sees v2, the third version.
	snap := &Snapshot{Xmin: 13, Xmax: 14, Xip: []uint64{13}}
	m = Meter{}
	row, at, ok, err := h.FetchVersion(&m, root, snap, clog, nil)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "v2", string(row))
	require.Equal(t, RowPtr{Page: root.Page, Slot: 2}, at)
	require.Equal(t, int64(3), m.HeapVersionsRead)
	// Hints: v0 xmin and xmax committed, v1 the same, v2 xmin committed
	// (its xmax, 13, is running for the snapshot: no hint).
	require.Equal(t, int64(3), m.HeapHintsSet)
	require.Equal(t, int64(1), m.HeapFetches)

	// The same fetch again sets no hint.
	m = Meter{}
	_, _, ok, err = h.FetchVersion(&m, root, snap, clog, nil)
	require.NoError(t, err)
	require.True(t, ok)
	require.Zero(t, m.HeapHintsSet)

	// A snapshot after 13 sees v3.
	now := &Snapshot{Xmin: 14, Xmax: 14}
	row, at, ok, err = h.FetchVersion(nil, root, now, clog, nil)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "v3", string(row))
	require.Equal(t, ptr, at)

	// Prune with the horizon 14: v0, v1 and v2 are dead.
	m = Meter{}
	res, err := h.Prune(&m, root.Page, 14, clog)
	require.NoError(t, err)
	require.Equal(t, PruneResult{Pruned: 3, Redirected: 1, Unused: 2, FreeBefore: res.FreeBefore, FreeAfter: res.FreeAfter}, res)
	require.Equal(t, 3*(TupleHeaderSize+2), res.FreeAfter-res.FreeBefore, "three versions' cells freed; slot 3 is not trimmed")
	require.Equal(t, int64(1), m.HeapPrunes)
	require.Equal(t, int64(3), m.HeapTuplesPruned)
	b := pageCopy(t, h, root.Page)
	st, to := b.lp(0)
	require.Equal(t, lpRedirect, st)
	require.Equal(t, 3, to)
	require.NoError(t, h.Check(nil))

	row, at, ok, err = h.FetchVersion(nil, root, now, clog, nil)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "v3", string(row))
	require.Equal(t, ptr, at)
	// A pointer to a heap-only version is no index entry: not found.
	_, _, ok, err = h.FetchVersion(nil, ptr, now, clog, nil)
	require.NoError(t, err)
	require.False(t, ok)

	// Another HOT update reuses a freed slot; pruning again follows the
	// redirect and frees v3.
	np, hot, err := h.UpdateVersion(nil, ptr, 14, []byte("v4"), true)
	require.NoError(t, err)
	require.True(t, hot)
	require.Equal(t, RowPtr{Page: root.Page, Slot: 1}, np, "the lowest unused slot")
	clog[14] = XidCommitted
	res, err = h.Prune(nil, root.Page, 15, clog)
	require.NoError(t, err)
	require.Equal(t, 1, res.Pruned)
	require.Equal(t, 1, res.Redirected)
	require.Equal(t, 1, res.Unused)
	row, at, ok, err = h.FetchVersion(nil, root, &Snapshot{Xmin: 15, Xmax: 15}, clog, nil)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "v4", string(row))
	require.Equal(t, np, at)

	// Delete it; once the delete is below the horizon the root is dead
	// and vacuum makes it unused.
	require.NoError(t, h.DeleteVersion(nil, np, 15))
	clog[15] = XidCommitted
	res, err = h.Prune(nil, root.Page, 16, clog)
	require.NoError(t, err)
	require.Equal(t, PruneResult{Pruned: 1, Dead: 1, Unused: 1, FreeBefore: res.FreeBefore, FreeAfter: res.FreeAfter}, res)
	_, _, ok, err = h.FetchVersion(nil, root, &Snapshot{Xmin: 16, Xmax: 16}, clog, nil)
	require.NoError(t, err)
	require.False(t, ok)
	n, err := h.VacuumDeadSlots(nil, root.Page, []uint16{root.Slot})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	b = pageCopy(t, h, root.Page)
	require.Zero(t, b.nslots(), "every slot unused and trimmed")
	require.NoError(t, h.Check(nil))
}

// TestUpdateVersionNotHOT checks the two non-HOT updates: an indexed
// column changed (the new version stays on the page, not heap-only), and
// a page without room (the new version goes to another page).
func TestUpdateVersionNotHOT(t *testing.T) {
	_, _, h := newHeapForTest(t, 4<<10, 32)
	clog := memClog{1: XidCommitted}
	var m Meter
	p, err := h.InsertVersion(&m, 1, []byte("a"))
	require.NoError(t, err)
	np, hot, err := h.UpdateVersion(&m, p, 2, []byte("b"), false)
	require.NoError(t, err)
	require.False(t, hot)
	require.Equal(t, p.Page, np.Page)
	th, row, err := h.ReadVersion(nil, np, nil)
	require.NoError(t, err)
	require.Equal(t, "b", string(row))
	require.False(t, th.HeapOnly())
	require.Equal(t, HeapUpdated|HeapXmaxInvalid, th.Infomask)
	old, _, err := h.ReadVersion(nil, p, nil)
	require.NoError(t, err)
	require.Equal(t, uint64(2), old.Xmax)
	require.Equal(t, np, old.Ctid)
	require.False(t, old.HotUpdated())

	// Fill the page, then update: the new version moves.
	big := make([]byte, h.MaxVersionSize())
	for {
		q, err := h.InsertVersion(nil, 1, big)
		require.NoError(t, err)
		if q.Page != p.Page {
			break
		}
	}
	clog[2] = XidCommitted
	b := pageCopy(t, h, p.Page)
	n := b.avail() - TupleHeaderSize + 1
	mp, hot, err := h.UpdateVersion(&m, np, 3, make([]byte, n), true)
	require.NoError(t, err)
	require.False(t, hot)
	require.Greater(t, mp.Page, p.Page)
	require.Equal(t, int64(2), m.HeapNonHOTUpdates)
	require.Zero(t, m.HeapHOTUpdates)
	clog[3] = XidCommitted
	// The new version is its own root (the caller indexes it); the old
	// root's chain shows nothing to a later snapshot.
	_, at, ok, err := h.FetchVersion(nil, mp, &Snapshot{Xmin: 4, Xmax: 4}, clog, nil)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, mp, at)
	_, _, ok, err = h.FetchVersion(nil, np, &Snapshot{Xmin: 4, Xmax: 4}, clog, nil)
	require.NoError(t, err)
	require.False(t, ok)
	require.NoError(t, h.Check(nil))
}

// TestVisibility checks HeapTupleSatisfiesMVCC's cases on headers.
func TestVisibility(t *testing.T) {
	clog := memClog{1: XidCommitted, 2: XidAborted, 3: XidCommitted, 5: XidCommitted}
	snap := &Snapshot{Xmin: 4, Xmax: 7, Xip: []uint64{4, 6}, Own: 6}
	for _, tc := range []struct {
		name  string
		th    TupleHeader
		vis   bool
		hints uint16
	}{
		{"committed insert", TupleHeader{Xmin: 1, Infomask: HeapXmaxInvalid}, true, HeapXminCommitted},
		{"aborted insert", TupleHeader{Xmin: 2, Infomask: HeapXmaxInvalid}, false, HeapXminInvalid},
		{"insert by a running xact", TupleHeader{Xmin: 4, Infomask: HeapXmaxInvalid}, false, 0},
		{"insert after the snapshot", TupleHeader{Xmin: 7, Infomask: HeapXmaxInvalid}, false, 0},
		{"insert committed between xmin and xmax", TupleHeader{Xmin: 5, Infomask: HeapXmaxInvalid}, true, HeapXminCommitted},
		{"own insert", TupleHeader{Xmin: 6, Infomask: HeapXmaxInvalid}, true, 0},
		{"own insert, own delete", TupleHeader{Xmin: 6, Xmax: 6}, false, 0},
		{"deleted by a committed xact", TupleHeader{Xmin: 1, Xmax: 3}, false, HeapXminCommitted | HeapXmaxCommitted},
		{"deleted by an aborted xact", TupleHeader{Xmin: 1, Xmax: 2}, true, HeapXminCommitted | HeapXmaxInvalid},
		{"deleted by a running xact", TupleHeader{Xmin: 1, Xmax: 4}, true, HeapXminCommitted},
		{"deleted by me", TupleHeader{Xmin: 1, Xmax: 6}, false, HeapXminCommitted},
		{"locked only", TupleHeader{Xmin: 1, Xmax: 3, Infomask: HeapXmaxLockOnly}, true, HeapXminCommitted},
		{"hinted committed, but after the snapshot", TupleHeader{Xmin: 4, Infomask: HeapXminCommitted | HeapXmaxInvalid}, false, 0},
		{"frozen", TupleHeader{Xmin: 4, Infomask: HeapXminFrozen | HeapXmaxInvalid}, true, 0},
		{"hinted deleted, deleter running for the snapshot", TupleHeader{Xmin: 1, Xmax: 4, Infomask: HeapXminCommitted | HeapXmaxCommitted}, true, 0},
	} {
		vis, hints, err := visible(tc.th, snap, clog)
		require.NoError(t, err)
		require.Equal(t, tc.vis, vis, tc.name)
		require.Equal(t, tc.hints, hints, tc.name)
	}
}

// vModel is the reference a versioned heap is checked against: for each
// logical row its versions, in order, and each version's chain root (the
// index entry that reaches it).
type vModel struct {
	rows  []*vRow
	clog  memClog
	next  uint64
	open  []uint64 // running transactions, ascending
	owner map[int]uint64
}

type vRow struct {
	versions []vVersion
	roots    []RowPtr // the index entries
}

type vVersion struct {
	ptr, root  RowPtr
	xmin, xmax uint64
	lock       bool
	data       []byte
}

// visibleTo is the model's own visibility rule, written from the
// definitions rather than from HeapTupleSatisfiesMVCC.
func (md *vModel) visibleTo(v vVersion, s *Snapshot) bool {
	sees := func(xid uint64) bool {
		if xid == s.Own && xid != 0 {
			return true
		}
		return md.clog[xid] == XidCommitted && xid < s.Xmax && !slices.Contains(s.Xip, xid)
	}
	if !sees(v.xmin) {
		return false
	}
	return v.xmax == 0 || v.lock || !sees(v.xmax)
}

func (md *vModel) snapshot(own uint64) *Snapshot {
	s := &Snapshot{Xmin: md.next, Xmax: md.next, Own: own}
	for _, x := range md.open {
		if x != own {
			s.Xip = append(s.Xip, x)
		}
	}
	if len(md.open) > 0 {
		s.Xmin = md.open[0]
	}
	return s
}

func (md *vModel) horizon() uint64 {
	if len(md.open) > 0 {
		return md.open[0]
	}
	return md.next
}

// check fetches every index entry of every row with snapshots of every
// running transaction and a read-only one, and compares with the model.
func (md *vModel) check(t *testing.T, h *Heap, op int) {
	t.Helper()
	snaps := []*Snapshot{md.snapshot(0)}
	for _, x := range md.open {
		snaps = append(snaps, md.snapshot(x))
	}
	var buf []byte
	for ri, r := range md.rows {
		for _, s := range snaps {
			var want *vVersion
			for i := range r.versions {
				if md.visibleTo(r.versions[i], s) {
					require.Nil(t, want, "op %d row %d: two visible versions", op, ri)
					want = &r.versions[i]
				}
			}
			for _, root := range r.roots {
				row, at, ok, err := h.FetchVersion(nil, root, s, md.clog, buf)
				require.NoError(t, err, "op %d row %d root %s", op, ri, root)
				if want != nil && want.root == root {
					require.True(t, ok, "op %d row %d root %s snapshot %+v: want %s", op, ri, root, s, want.ptr)
					require.Equal(t, want.ptr, at, "op %d row %d", op, ri)
					requireRow(t, want.data, row, "op %d row %d", op, ri)
				} else {
					require.False(t, ok, "op %d row %d root %s snapshot %+v: found %s", op, ri, root, s, at)
				}
				buf = row
			}
		}
	}
	md.checkMap(t, h, op)
	require.NoError(t, h.Check(nil))
}

// runVersionsModel runs n seeded random transactions' operations on a
// versioned heap (inserts, HOT and non-HOT updates, deletes, locks,
// commits and aborts, with up to four transactions open at once and one
// writer per row, as the engine's row locks ensure), prunes pages on the
// way with the horizon of the running transactions, and vacuums the dead
// roots whose index entries the model drops. It checks every fetch
// against the model now and then, and returns the heap.
func runVersionsModel(t *testing.T, pool *cache.Pool, n int, stream uint64) (*Heap, *vModel, map[string]int) {
	rng := rand.New(rand.NewPCG(testSeed(t), stream))
	h, err := Create(nil, pool, 1)
	require.NoError(t, err)
	md := &vModel{clog: memClog{}, next: 1, owner: map[int]uint64{}}
	ops := map[string]int{}
	var m Meter
	maxRow := h.MaxVersionSize()
	randRow := func() []byte {
		if rng.IntN(8) == 0 {
			return randomBytes(rng, 200+rng.IntN(maxRow-200+1))
		}
		return randomBytes(rng, rng.IntN(80))
	}
	finish := func(x uint64, st XidStatus) {
		md.clog[x] = st
		md.open = slices.DeleteFunc(md.open, func(y uint64) bool { return y == x })
		for ri, o := range md.owner {
			if o == x {
				delete(md.owner, ri)
			}
		}
		ops[st.String()]++
	}
	for i := range n {
		// Begin, or pick a running transaction.
		if len(md.open) < 4 && (len(md.open) == 0 || rng.IntN(3) == 0) {
			md.open = append(md.open, md.next)
			md.next++
		}
		x := md.open[rng.IntN(len(md.open))]
		switch r := rng.IntN(100); {
		case r < 20 || len(md.rows) == 0:
			data := randRow()
			p, err := h.InsertVersion(&m, x, data)
			require.NoError(t, err, "op %d", i)
			md.requireBits(t, h, p.Page, 0, "op %d: insert", i)
			md.rows = append(md.rows, &vRow{versions: []vVersion{{ptr: p, root: p, xmin: x, data: data}}, roots: []RowPtr{p}})
			md.owner[len(md.rows)-1] = x
			ops["insert"]++
		case r < 75:
			ri := rng.IntN(len(md.rows))
			row := md.rows[ri]
			if o, ok := md.owner[ri]; ok && o != x {
				continue // locked by another writer
			}
			last := &row.versions[len(row.versions)-1]
			if !md.visibleTo(*last, md.snapshot(x)) {
				continue // deleted, or not committed for x: nothing to update
			}
			md.owner[ri] = x
			switch k := rng.IntN(10); {
			case k < 6:
				data := randRow()
				hotOK := rng.IntN(4) != 0
				np, hot, err := h.UpdateVersion(&m, last.ptr, x, data, hotOK)
				require.NoError(t, err, "op %d", i)
				require.Equal(t, hotOK && np.Page == last.ptr.Page, hot, "op %d", i)
				md.requireBits(t, h, last.ptr.Page, 0, "op %d: update, old page", i)
				md.requireBits(t, h, np.Page, 0, "op %d: update, new page", i)
				last.xmax, last.lock = x, false
				v := vVersion{ptr: np, root: last.root, xmin: x, data: data}
				if !hot {
					v.root = np
					row.roots = append(row.roots, np)
					ops["update"]++
				} else {
					ops["hot update"]++
				}
				row.versions = append(row.versions, v)
			case k < 8:
				require.NoError(t, h.DeleteVersion(&m, last.ptr, x), "op %d", i)
				md.requireBits(t, h, last.ptr.Page, 0, "op %d: delete", i)
				last.xmax, last.lock = x, false
				ops["delete"]++
			default:
				before, err := h.VisibilityBits(nil, last.ptr.Page)
				require.NoError(t, err)
				require.NoError(t, h.LockVersion(&m, last.ptr, x), "op %d", i)
				// A lock hides nothing: it clears all-frozen only, as
				// heap_lock_tuple.
				md.requireBits(t, h, last.ptr.Page, before&^VMAllFrozen, "op %d: lock", i)
				last.xmax, last.lock = x, true
				ops["lock"]++
			}
		case r < 88:
			st := XidCommitted
			if rng.IntN(4) == 0 {
				st = XidAborted
			}
			finish(x, st)
		case r < 94:
			// Vacuum's visibility step on a random page: the page is
			// all-visible exactly when the model says so.
			no := 1 + rng.Uint32N(h.HighWater()-1)
			if h.isFSMPage(no) || h.isVMPage(no) {
				continue
			}
			freeze := rng.IntN(2) == 0
			want, wantFrozen, wantFreeze := md.pageAllVisible(t, h, no)
			res, err := h.MarkVisible(&m, no, md.horizon(), md.clog, freeze)
			require.NoError(t, err, "op %d", i)
			if !want {
				require.Zero(t, res.Bits, "op %d: page %d marked visible", i, no)
				continue
			}
			require.NotZero(t, res.Bits&VMAllVisible, "op %d: page %d not marked visible", i, no)
			frozen := wantFrozen || freeze && wantFreeze >= 0
			require.Equal(t, frozen, res.Bits&VMAllFrozen != 0, "op %d: page %d frozen", i, no)
			if freeze && !wantFrozen && wantFreeze >= 0 {
				require.Equal(t, wantFreeze, res.Frozen, "op %d", i)
			}
			md.requireBits(t, h, no, res.Bits, "op %d: mark visible", i)
			ops["mark visible"]++
			if res.Bits&VMAllFrozen != 0 {
				ops["mark frozen"]++
			}
		default:
			// Prune a random page, then vacuum the roots it made dead.
			no := 1 + rng.Uint32N(h.HighWater()-1)
			if h.isFSMPage(no) || h.isVMPage(no) {
				continue
			}
			res, err := h.Prune(&m, no, md.horizon(), md.clog)
			require.NoError(t, err, "op %d", i)
			ops["prune"]++
			if res.Pruned > 0 {
				ops["prune that freed"]++
			}
			md.vacuumPage(t, h, no)
		}
		// An aborted or superseded version drops out of the model once
		// nobody can see it; the model keeps it (harmless: invisible).
		if i%97 == 0 {
			md.check(t, h, i)
		}
	}
	for len(md.open) > 0 {
		finish(md.open[0], XidCommitted)
	}
	md.check(t, h, n)
	return h, md, ops
}

// requireBits requires page no's visibility map bits to be want.
func (md *vModel) requireBits(t *testing.T, h *Heap, no uint32, want uint8, msg string, args ...any) {
	t.Helper()
	got, err := h.VisibilityBits(nil, no)
	require.NoError(t, err)
	require.Equal(t, want, got, append([]any{msg}, args...)...)
}

// visibleToAll is the model's rule for a tuple every snapshot sees, now
// and later: its inserter committed before every running transaction
// began, and it has no xmax, or one that only locks or that aborted.
func (md *vModel) visibleToAll(th TupleHeader) bool {
	if md.clog[th.Xmin] != XidCommitted || th.Xmin >= md.horizon() {
		return false
	}
	return th.Xmax == 0 || th.LockOnly() || md.clog[th.Xmax] == XidAborted
}

// pageAllVisible says, from page no's tuples and the model's commit log,
// whether the page is all-visible, whether it is all-frozen, and how
// many tuples freezing it would freeze (-1: it cannot be frozen).
func (md *vModel) pageAllVisible(t *testing.T, h *Heap, no uint32) (bool, bool, int) {
	b := pageCopy(t, h, no)
	if page.KindOf(b) != page.KindHeap {
		return false, false, -1
	}
	frozen, toFreeze := true, 0
	for i := range b.nslots() {
		switch st, _ := b.lp(i); st {
		case lpDead:
			return false, false, -1
		case lpNormal:
			th := b.tupleAt(i).header()
			if !md.visibleToAll(th) {
				return false, false, -1
			}
			noXmax := th.Xmax == 0 || th.Infomask&HeapXmaxInvalid != 0
			isFrozen := th.Infomask&HeapXminFrozen == HeapXminFrozen
			switch {
			case !noXmax:
				frozen, toFreeze = false, -1
			case !isFrozen:
				frozen = false
				if toFreeze >= 0 {
					toFreeze++
				}
			}
		}
	}
	return true, frozen, toFreeze
}

// checkMap requires every page the visibility map calls all-visible to
// hold only tuples visible to every snapshot (by the model's rule), no
// dead slot, and, if all-frozen, only frozen tuples without xmax.
func (md *vModel) checkMap(t *testing.T, h *Heap, op int) {
	t.Helper()
	for no := uint32(1); no < h.HighWater(); no++ {
		if h.isFSMPage(no) || h.isVMPage(no) {
			continue
		}
		bits, err := h.VisibilityBits(nil, no)
		require.NoError(t, err)
		if bits == 0 {
			continue
		}
		av, frozen, _ := md.pageAllVisible(t, h, no)
		require.True(t, av, "op %d: page %d is all-visible in the map, not in the model", op, no)
		if bits&VMAllFrozen != 0 {
			require.True(t, frozen, "op %d: page %d is all-frozen in the map, not in the model", op, no)
		}
	}
}

// vacuumPage drops the model's index entries whose root slot on page no
// is dead, and sets those slots unused.
func (md *vModel) vacuumPage(t *testing.T, h *Heap, no uint32) {
	b := pageCopy(t, h, no)
	var dead []uint16
	for _, r := range md.rows {
		r.roots = slices.DeleteFunc(r.roots, func(p RowPtr) bool {
			if p.Page != no || int(p.Slot) >= b.nslots() {
				return false
			}
			if st, _ := b.lp(int(p.Slot)); st == lpDead {
				dead = append(dead, p.Slot)
				return true
			}
			return false
		})
	}
	if len(dead) > 0 {
		n, err := h.VacuumDeadSlots(nil, no, dead)
		require.NoError(t, err)
		require.Equal(t, len(dead), n)
	}
}

// TestVersionsModel runs the versioned model on a pool small enough to
// evict, without a log, and on one with a redo log whose records are
// replayed onto empty pages and compared byte for byte with the pool's.
func TestVersionsModel(t *testing.T) {
	t.Run("evicting", func(t *testing.T) {
		st := newStore(t, 4<<10)
		pool := newPool(t, st, 24)
		_, _, ops := runVersionsModel(t, pool, 5000, 31)
		t.Logf("ops %v", ops)
		for _, op := range []string{"insert", "update", "hot update", "delete", "lock", "committed", "aborted", "prune that freed", "mark visible", "mark frozen"} {
			require.Positive(t, ops[op], "no %s", op)
		}
	})
	t.Run("redo", func(t *testing.T) {
		r := runVersionsRedo(t, 3000, 32)
		for _, k := range []redo.Kind{kindHeapXmax, kindHeapHint, kindHeapPrune, kindHeapFlags, kindVMInit, kindVMSet, kindVMClear, kindVMLink} {
			require.Positive(t, r.kinds[k], "kind %s never replayed", k)
		}
	})
}

// versionsRedoRun is the outcome of runVersionsRedo.
type versionsRedoRun struct {
	kinds map[redo.Kind]int
}

// runVersionsRedo runs the versioned model on a pool with a redo log that
// holds the whole heap, then replays the log onto empty page images and
// requires every page to match the pool's byte for byte; it also recovers
// the log into a fresh pool and checks the model there.
func runVersionsRedo(t *testing.T, n int, stream uint64) *versionsRedoRun {
	// Map pages of 8 heap pages each, so that the map grows a chain.
	testVMPerPage = 8
	t.Cleanup(func() { testVMPerPage = 0 })
	st := newStore(t, 4<<10)
	lg, err := redo.Open(st, nil)
	require.NoError(t, err)
	start := lg.End()
	pool := newPoolWithLog(t, st, 1024, lg)
	h, md, _ := runVersionsModel(t, pool, n, stream)
	require.NoError(t, lg.Flush(lg.End()))
	end := lg.End()
	r := &versionsRedoRun{kinds: map[redo.Kind]int{}}
	images := map[page.ID][]byte{}
	var pages []redo.PageRedo
	require.NoError(t, lg.Scan(start, func(lsn uint64, body []byte) error {
		var err error
		if pages, _, err = redo.Decode(body, pages); err != nil {
			return fmt.Errorf("record at LSN %d: %w", lsn, err)
		}
		for i := range pages {
			pr := &pages[i]
			img := images[pr.ID]
			if img == nil {
				require.True(t, pr.Fresh, "LSN %d: page %s first appears unformatted", lsn, pr.ID)
				img = make([]byte, 4<<10)
				images[pr.ID] = img
			}
			if err := pr.Apply(img); err != nil {
				return fmt.Errorf("record at LSN %d: %w", lsn, err)
			}
			page.SetLSN(img, lsn)
			for _, op := range pr.Ops {
				r.kinds[op.Kind]++
			}
		}
		return nil
	}))
	hw := h.HighWater()
	want := pageImages(t, pool, hw)
	for no := range hw {
		img := images[page.ID{Space: 1, Page: no}]
		require.NotNil(t, img, "page %d never replayed", no)
		require.True(t, bytes.Equal(want[no], img[4:]), "page %d differs after replay", no)
	}
	// Recovery into an empty pool.
	p2 := newPool(t, st, 2*int(hw))
	require.Positive(t, replay(t, st, p2, start, end))
	h2, err := Open(nil, p2, 1)
	require.NoError(t, err)
	requireSameImages(t, want, pageImages(t, p2, hw))
	md.check(t, h2, n)
	return r
}

// validVersionPage returns a heap page of size bytes holding versioned
// tuples: slot 0 a redirect to slot 2, slot 1 dead, slots 2 and 3
// versions (3 heap-only, the HOT successor of 2), slot 4 a version, and
// slot 5 unused (made so by deleting 5 after inserting 6).
func validVersionPage(size int) hpage {
	b := newPage(size)
	no := b.pageNo()
	for i := range 7 {
		th := TupleHeader{Xmin: uint64(10 + i), Infomask: HeapXmaxInvalid, Ctid: RowPtr{Page: no, Slot: uint16(i)}}
		if i == 3 {
			th.Infomask2 = HeapOnlyTuple
		}
		b.insert(appendTuple(nil, th, bytes.Repeat([]byte{byte('a' + i)}, 10+i)))
	}
	b.tupleAt(2).setXmaxFields(13, RowPtr{Page: no, Slot: 3}, HeapHotUpdated, 0)
	b.del(5)
	b.pruneExecute([][2]int{{0, 2}}, []int{1}, nil)
	return b
}

// TestVersionRedoAppliers checks the appliers of the versioned kinds on
// payloads that fit and on ones that do not.
func TestVersionRedoAppliers(t *testing.T) {
	const size = 4 << 10
	vp := validVersionPage(size)
	require.NoError(t, vp.cellsOK())
	require.NoError(t, vp.verify())
	plain := validHeapPage(size)
	uv := func(vs ...uint64) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.AppendUvarint(b, v)
		}
		return b
	}
	xmax := func(s, x, cp, cs uint64, im2, im uint16) []byte {
		return append(uv(s, x, cp, cs), byte(im2), byte(im2>>8), byte(im), byte(im>>8))
	}
	for _, tc := range []struct {
		name    string
		fn      redo.ApplyFunc
		pg      []byte
		payload []byte
		ok      bool
	}{
		{"xmax", redoHeapXmax, vp, xmax(4, 20, 2, 4, 0, HeapXmaxLockOnly), true},
		{"xmax of a redirect", redoHeapXmax, vp, xmax(0, 20, 2, 0, 0, 0), false},
		{"xmax of a dead slot", redoHeapXmax, vp, xmax(1, 20, 2, 1, 0, 0), false},
		{"xmax of an unused slot", redoHeapXmax, vp, xmax(5, 20, 2, 5, 0, 0), false},
		{"xmax of a short plain row", redoHeapXmax, plain, xmax(4, 20, 2, 4, 0, 0), false},
		{"xmax cut short", redoHeapXmax, vp, uv(4, 20, 2, 4), false},
		{"xmax with a ctid page too large", redoHeapXmax, vp, xmax(4, 20, 1<<32, 4, 0, 0), false},
		{"xmax with bytes left", redoHeapXmax, vp, append(xmax(4, 20, 2, 4, 0, 0), 0), false},
		{"hint", redoHeapHint, vp, append(uv(4), 0x00, 0x01), true},
		{"hint of a non-hint bit", redoHeapHint, vp, append(uv(4), 0x80, 0x00), false},
		{"hint of a dead slot", redoHeapHint, vp, append(uv(1), 0x00, 0x01), false},
		{"hint cut short", redoHeapHint, vp, append(uv(4), 0x00), false},
		{"prune: redirect 2's chain to 3, 2 unused", redoHeapPrune, vp, uv(1, 0, 3, 0, 1, 2), true},
		{"prune: 4 dead, 1 unused", redoHeapPrune, vp, uv(0, 1, 4, 1, 1), true},
		{"prune: nothing", redoHeapPrune, vp, uv(0, 0, 0), true},
		{"prune: redirect to a dead slot", redoHeapPrune, vp, uv(1, 4, 1, 0, 0), false},
		{"prune: redirect to itself", redoHeapPrune, vp, uv(1, 4, 4, 0, 0), false},
		{"prune: redirect to a slot made unused", redoHeapPrune, vp, uv(1, 0, 3, 0, 1, 3), false},
		{"prune: a slot twice", redoHeapPrune, vp, uv(0, 1, 4, 1, 4), false},
		{"prune: unused from a redirect", redoHeapPrune, vp, uv(0, 0, 1, 0), false},
		{"prune: dead from unused", redoHeapPrune, vp, uv(0, 1, 5, 0), false},
		{"prune: slot out of range", redoHeapPrune, vp, uv(0, 1, 70, 0), false},
		{"prune: a huge count", redoHeapPrune, vp, uv(60000), false},
		{"prune: cut short", redoHeapPrune, vp, uv(1, 0), false},
		{"prune: bytes left", redoHeapPrune, vp, uv(0, 0, 0, 0), false},
	} {
		err := applyGuarded(t, tc.fn, tc.pg, tc.payload)
		if tc.ok {
			require.NoError(t, err, tc.name)
			cp := bytes.Clone(tc.pg)
			require.NoError(t, tc.fn(page.ID{Space: 1, Page: 2}, cp, tc.payload))
			require.NoError(t, hpage(cp).cellsOK(), tc.name)
			continue
		}
		require.Error(t, err, tc.name)
		cp := bytes.Clone(tc.pg)
		_ = tc.fn(page.ID{Space: 1, Page: 2}, cp, tc.payload)
		require.Equal(t, tc.pg, cp, "%s: a failed apply changed the page", tc.name)
	}
}

// FuzzVersionRedo feeds the versioned kinds' appliers (and the
// visibility map's) garbage payloads on a page of versioned tuples
// (possibly damaged at one byte), an empty page, a plain heap page and a
// visibility map page: an error or a clean apply, never a panic,
// never a write past the page, and a page that cellsOK accepts after a
// clean apply. Input: kind selector, page selector, damage offset (2B)
// and value, then the payload.
//
// Run with: go test -run XXX -fuzz FuzzVersionRedo ./heap/
func FuzzVersionRedo(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 4, 20, 2, 4, 0, 0, 0x80, 0})
	f.Add([]byte{1, 0, 0, 0, 0, 4, 0, 1})
	f.Add([]byte{2, 0, 0, 0, 0, 1, 0, 3, 0, 1, 2})
	f.Add([]byte{2, 0x80, 0x30, 0, 9, 0, 1, 4, 1, 1})
	f.Add([]byte{2, 2, 0, 0, 0, 0, 1, 0, 0})
	f.Add([]byte{3, 0, 0, 0, 0, 4})
	f.Add([]byte{5, 3, 0, 0, 0, 5, 1})
	f.Add([]byte{6, 3, 0, 0, 0, 7, 3})
	f.Add([]byte{7, 3, 0, 0, 0, 9})
	f.Add([]byte{4, 3, 0, 0, 0, 0})
	const size = 4 << 10
	pages := []func() []byte{
		func() []byte { return validVersionPage(size) },
		func() []byte { return newPage(size) },
		func() []byte { return validHeapPage(size) },
		func() []byte {
			b := make([]byte, size)
			page.Init(b, page.ID{Space: 1, Page: 2}, page.KindVM)
			initVMPage(b, 0)
			b[vmBodyStart+7] = 0x5a
			return b
		},
	}
	fns := []struct {
		k  redo.Kind
		fn redo.ApplyFunc
	}{{kindHeapXmax, redoHeapXmax}, {kindHeapHint, redoHeapHint}, {kindHeapPrune, redoHeapPrune},
		{kindHeapFlags, redoHeapFlags}, {kindVMInit, redoVMInit}, {kindVMSet, redoVMSet},
		{kindVMClear, redoVMClear}, {kindVMLink, redoVMLink}}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 5 {
			return
		}
		k := fns[int(in[0])%len(fns)]
		pg := pages[int(in[1]&0x7f)%len(pages)]()
		if in[1]&0x80 != 0 {
			pg[4+int(binary.LittleEndian.Uint16(in[2:]))%(size-4)] = in[4]
		}
		payload := in[5:]
		before := bytes.Clone(pg)
		err := applyGuarded(t, k.fn, pg, payload)
		cp := bytes.Clone(pg)
		err2 := k.fn(page.ID{Space: 1, Page: 2}, cp, payload)
		require.Equal(t, err == nil, err2 == nil)
		if err2 == nil {
			if page.KindOf(cp) == page.KindHeap {
				require.NoError(t, hpage(cp).cellsOK(), "%s left a page that cellsOK rejects", k.k)
			}
		} else {
			require.Equal(t, before, cp, "%s failed but changed the page", k.k)
		}
		var rb redo.Builder
		rb.Op(page.ID{Space: 1, Page: 2}, k.k, payload)
		prs, _, err := redo.Decode(rb.Bytes(), nil)
		require.NoError(t, err)
		full := make([]byte, size+64)
		copy(full, pg)
		if err := prs[0].Apply(full[:size]); err != nil {
			require.ErrorIs(t, err, redo.ErrCorruptLog)
		}
		require.Equal(t, make([]byte, 64), full[size:], "written past the page")
	})
}

// TestVisibilityMap pins the map's life on one page with exact counts:
// vacuum marks it all-visible only once every tuple's inserter committed
// below the horizon, freezing adds all-frozen, a lock clears all-frozen
// only, a delete clears both; a change to a page that is not all-visible
// never reads the map (PD_ALL_VISIBLE says so), and the map pages are
// made on first use and found again by Open.
func TestVisibilityMap(t *testing.T) {
	st := newStore(t, 4<<10)
	pool := newPool(t, st, 64)
	h, err := Create(nil, pool, 1)
	require.NoError(t, err)
	clog := memClog{1: XidCommitted, 2: XidCommitted, 3: XidCommitted, 4: XidCommitted}
	var m Meter
	var ptrs []RowPtr
	for range 3 {
		p, err := h.InsertVersion(&m, 1, []byte("row"))
		require.NoError(t, err)
		ptrs = append(ptrs, p)
	}
	no := ptrs[0].Page
	require.Zero(t, m.HeapVMPagesRead, "no map yet, nothing read")
	require.Nil(t, h.vmChain())
	av, err := h.AllVisible(&m, no)
	require.NoError(t, err)
	require.False(t, av)
	require.Zero(t, m.HeapVMPagesRead, "a page beyond the map reads nothing")

	// Horizon 1: xid 1 may still be running for someone.
	m = Meter{}
	res, err := h.MarkVisible(&m, no, 1, clog, false)
	require.NoError(t, err)
	require.Equal(t, MarkVisibleResult{}, res)
	require.Len(t, h.vmChain(), 1, "the map page is made on first use")
	vmNo := h.vmChain()[0]
	require.Equal(t, int64(1), m.HeapVMPagesRead)
	require.Zero(t, m.HeapVMBitsSet)
	require.NoError(t, h.Check(nil))

	m = Meter{}
	res, err = h.MarkVisible(&m, no, 2, clog, false)
	require.NoError(t, err)
	require.Equal(t, MarkVisibleResult{Bits: VMAllVisible}, res)
	require.Equal(t, HeapCounts{HeapVMPagesRead: 1, HeapVMBitsSet: 1}, m.HeapCounts)
	require.Equal(t, int64(1), m.PageRequests[page.KindHeap])
	require.Equal(t, int64(1), m.PageRequests[page.KindVM])
	require.Equal(t, PDAllVisible, pageCopy(t, h, no).pdFlags())
	m = Meter{}
	av, err = h.AllVisible(&m, no)
	require.NoError(t, err)
	require.True(t, av)
	require.Equal(t, HeapCounts{HeapVMPagesRead: 1}, m.HeapCounts)
	require.Equal(t, int64(1), m.PageRequests[page.KindVM])
	require.NoError(t, h.Check(nil))

	// Marking again sets nothing; freezing freezes the three tuples.
	m = Meter{}
	res, err = h.MarkVisible(&m, no, 2, clog, false)
	require.NoError(t, err)
	require.Equal(t, MarkVisibleResult{Bits: VMAllVisible}, res)
	require.Zero(t, m.HeapVMBitsSet)
	res, err = h.MarkVisible(&m, no, 2, clog, true)
	require.NoError(t, err)
	require.Equal(t, MarkVisibleResult{Bits: VMAllVisible | VMAllFrozen, Frozen: 3}, res)
	require.Equal(t, int64(1), m.HeapVMBitsSet)
	th, _, err := h.ReadVersion(nil, ptrs[1], nil)
	require.NoError(t, err)
	require.Equal(t, HeapXminFrozen, th.Infomask&HeapXminFrozen)

	// A lock clears all-frozen only.
	m = Meter{}
	require.NoError(t, h.LockVersion(&m, ptrs[0], 3))
	require.Equal(t, HeapCounts{HeapVMPagesRead: 1, HeapVMBitsCleared: 1}, m.HeapCounts)
	bits, err := h.VisibilityBits(nil, no)
	require.NoError(t, err)
	require.Equal(t, VMAllVisible, bits)
	require.NoError(t, h.Check(nil))

	// A delete clears all-visible and PD_ALL_VISIBLE.
	m = Meter{}
	require.NoError(t, h.DeleteVersion(&m, ptrs[1], 3))
	require.Equal(t, HeapCounts{HeapVMPagesRead: 1, HeapVMBitsCleared: 1}, m.HeapCounts)
	bits, err = h.VisibilityBits(nil, no)
	require.NoError(t, err)
	require.Zero(t, bits)
	require.Zero(t, pageCopy(t, h, no).pdFlags())
	require.NoError(t, h.Check(nil))

	// Now the page is not all-visible: changes do not read the map.
	m = Meter{}
	_, err = h.InsertVersion(&m, 3, []byte("more"))
	require.NoError(t, err)
	_, _, err = h.UpdateVersion(&m, ptrs[2], 3, []byte("new"), true)
	require.NoError(t, err)
	require.Zero(t, m.HeapVMPagesRead)
	require.Zero(t, m.PageRequests[page.KindVM])

	// Once 3 committed below the horizon, the page is all-visible again
	// only if the deleted row is pruned: its deleter committed, so it is
	// dead, not live.
	res, err = h.MarkVisible(nil, no, 4, clog, false)
	require.NoError(t, err)
	require.Zero(t, res.Bits)
	_, err = h.Prune(nil, no, 4, clog)
	require.NoError(t, err)
	res, err = h.MarkVisible(nil, no, 4, clog, false)
	require.NoError(t, err)
	require.Zero(t, res.Bits, "the pruned root is LP_DEAD until vacuum removes it")
	b := pageCopy(t, h, no)
	var dead []uint16
	for i := range b.nslots() {
		if st, _ := b.lp(i); st == lpDead {
			dead = append(dead, uint16(i))
		}
	}
	_, err = h.VacuumDeadSlots(nil, no, dead)
	require.NoError(t, err)
	res, err = h.MarkVisible(nil, no, 4, clog, false)
	require.NoError(t, err)
	require.Equal(t, VMAllVisible, res.Bits)

	// An insert into it clears the bit in its own mini-transaction.
	m = Meter{}
	p, err := h.InsertVersion(&m, 5, []byte("late"))
	require.NoError(t, err)
	require.Equal(t, no, p.Page)
	require.Equal(t, HeapCounts{HeapVMPagesRead: 1, HeapVMBitsCleared: 1}, m.HeapCounts)
	require.NoError(t, h.Check(nil))

	// Open finds the map through the meta page's Aux field.
	info, err := pool.Space(nil, 1)
	require.NoError(t, err)
	require.Equal(t, vmNo, info.Aux)
	h2, err := Open(nil, pool, 1)
	require.NoError(t, err)
	require.Equal(t, []uint32{vmNo}, h2.vmChain())
	require.NoError(t, h2.Check(nil))
	_, err = h.MarkVisible(nil, vmNo, 4, clog, false)
	require.ErrorIs(t, err, ErrRowNotFound, "a map page is not a heap page")
}

// TestVMRedoAppliers checks the map kinds' appliers on payloads that fit
// and on ones that do not.
func TestVMRedoAppliers(t *testing.T) {
	const size = 4 << 10
	vp := validVersionPage(size)
	vm := make([]byte, size)
	page.Init(vm, page.ID{Space: 1, Page: 2}, page.KindVM)
	initVMPage(vm, 0)
	uv := func(vs ...uint64) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.AppendUvarint(b, v)
		}
		return b
	}
	for _, tc := range []struct {
		name    string
		fn      redo.ApplyFunc
		pg      []byte
		payload []byte
		ok      bool
	}{
		{"flags: all-visible", redoHeapFlags, vp, []byte{PDAllVisible}, true},
		{"flags: none", redoHeapFlags, vp, []byte{0}, true},
		{"flags: unknown", redoHeapFlags, vp, []byte{0x01}, false},
		{"flags: two bytes", redoHeapFlags, vp, []byte{0, 0}, false},
		{"flags on a map page", redoHeapFlags, vm, []byte{PDAllVisible}, false},
		{"vm-init", redoVMInit, vm, uv(16192), true},
		{"vm-init on a heap page", redoVMInit, vp, uv(0), false},
		{"vm-init with a huge page", redoVMInit, vm, uv(1 << 33), false},
		{"vm-set", redoVMSet, vm, append(uv(5), VMAllVisible), true},
		{"vm-set both", redoVMSet, vm, append(uv(16191), vmValidBits), true},
		{"vm-set beyond the page", redoVMSet, vm, append(uv(16192), VMAllVisible), false},
		{"vm-set no bits", redoVMSet, vm, append(uv(5), 0), false},
		{"vm-set bad bits", redoVMSet, vm, append(uv(5), 4), false},
		{"vm-set cut short", redoVMSet, vm, uv(5), false},
		{"vm-set on a heap page", redoVMSet, vp, append(uv(5), 1), false},
		{"vm-clear", redoVMClear, vm, append(uv(5), VMAllFrozen), true},
		{"vm-clear bytes left", redoVMClear, vm, append(uv(5), 1, 0), false},
		{"vm-link", redoVMLink, vm, uv(9), true},
		{"vm-link to itself", redoVMLink, vm, uv(2), false},
		{"vm-link to 0", redoVMLink, vm, uv(0), false},
	} {
		err := applyGuarded(t, tc.fn, tc.pg, tc.payload)
		cp := bytes.Clone(tc.pg)
		err2 := tc.fn(page.ID{Space: 1, Page: 2}, cp, tc.payload)
		if tc.ok {
			require.NoError(t, err, tc.name)
			require.NoError(t, err2, tc.name)
			continue
		}
		require.Error(t, err, tc.name)
		require.Equal(t, tc.pg, cp, "%s: a failed apply changed the page", tc.name)
	}
}
