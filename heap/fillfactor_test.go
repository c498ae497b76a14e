package heap

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// fillPage inserts versions of rowLen bytes until one lands on another
// page, and returns the pointers of those on the first page.
func fillPage(t *testing.T, h *Heap, rowLen int) []RowPtr {
	t.Helper()
	var ptrs []RowPtr
	for {
		p, err := h.InsertVersion(nil, 1, make([]byte, rowLen))
		require.NoError(t, err)
		if len(ptrs) > 0 && p.Page != ptrs[0].Page {
			return ptrs
		}
		ptrs = append(ptrs, p)
	}
}

// TestFillFactorRowsPerPage checks how many fixed-size versions a page
// takes at fill factors 50 and 100, from the page layout: a 4 KiB page
// has a 44-byte header (cache's 32, the heap's 12), and a version of a
// 100-byte row takes its cell (a 26-byte tuple header and the row) and a
// 4-byte slot, 130 bytes. At fill factor 100 inserts fill the whole page:
// (4096-44)/130 = 31 versions (4,074 bytes used). At 50 an insert stops
// once the page's used bytes would pass half of it: (4096·50/100-44)/130
// = 2004/130 = 15 versions (1,994 bytes used; a 16th would use 2,124).
func TestFillFactorRowsPerPage(t *testing.T) {
	const pageSize, rowLen = 4 << 10, 100
	per := TupleHeaderSize + rowLen + slotSize
	require.Equal(t, 130, per)
	for _, tc := range []struct{ ff, want int }{
		{100, (pageSize - slotsStart) / per},
		{50, (pageSize*50/100 - slotsStart) / per},
	} {
		_, _, h := newHeapForTest(t, pageSize, 32)
		require.NoError(t, h.SetFillFactor(tc.ff))
		require.Equal(t, tc.ff, h.FillFactor())
		ptrs := fillPage(t, h, rowLen)
		require.Len(t, ptrs, tc.want, "fill factor %d", tc.ff)
		require.Equal(t, map[int]int{100: 31, 50: 15}[tc.ff], len(ptrs))
	}
}

// TestFillFactorUpdateStaysHOT checks that an update uses the room the
// fill factor kept: on a page filled at fill factor 50 the new version of
// a row goes on the row's page and is heap-only, while on a page filled
// at 100 it finds no room there and goes to another page, not HOT
// (heap_update's rule: the reserve binds only the search for a page).
func TestFillFactorUpdateStaysHOT(t *testing.T) {
	for _, tc := range []struct {
		ff      int
		wantHOT bool
	}{{50, true}, {100, false}} {
		_, _, h := newHeapForTest(t, 4<<10, 32)
		require.NoError(t, h.SetFillFactor(tc.ff))
		ptrs := fillPage(t, h, 100)
		var m Meter
		np, hot, err := h.UpdateVersion(&m, ptrs[0], 2, make([]byte, 100), true)
		require.NoError(t, err)
		require.Equal(t, tc.wantHOT, hot, "fill factor %d", tc.ff)
		require.Equal(t, tc.wantHOT, np.Page == ptrs[0].Page, "fill factor %d", tc.ff)
		if tc.wantHOT {
			require.Equal(t, int64(1), m.HeapHOTUpdates)
			require.Zero(t, m.HeapNonHOTUpdates)
			// Updates keep using the reserve until the page is full:
			// after 16 versions it has (4096-44) - 16·130 = 1972 bytes
			// left, room for 15 more; the one after those moves.
			for i := range 15 {
				np, hot, err = h.UpdateVersion(&m, np, uint64(3+i), make([]byte, 100), true)
				require.NoError(t, err)
				require.True(t, hot, "update %d", i+2)
			}
			_, free, err := h.PageVersions(nil, ptrs[0].Page)
			require.NoError(t, err)
			require.Equal(t, (4<<10)-slotsStart-31*130, free)
			mp, hot, err := h.UpdateVersion(&m, np, 18, make([]byte, 100), true)
			require.NoError(t, err)
			require.False(t, hot)
			require.NotEqual(t, ptrs[0].Page, mp.Page)
		} else {
			require.Zero(t, m.HeapHOTUpdates)
			require.Equal(t, int64(1), m.HeapNonHOTUpdates)
		}
		require.NoError(t, h.Check(nil))
	}
}

// TestFillFactorPlainHeap checks the reserve on a heap of plain rows: the
// same arithmetic without the tuple header, and an in-place update that
// grows a row into the reserve keeps its pointer.
func TestFillFactorPlainHeap(t *testing.T) {
	_, _, h := newHeapForTest(t, 4<<10, 32)
	require.NoError(t, h.SetFillFactor(50))
	var ptrs []RowPtr
	for {
		p, err := h.Insert(nil, make([]byte, 96))
		require.NoError(t, err)
		if len(ptrs) > 0 && p.Page != ptrs[0].Page {
			break
		}
		ptrs = append(ptrs, p)
	}
	// (2048-44)/(96+4) = 20 rows.
	require.Len(t, ptrs, 20)
	var m Meter
	np, err := h.Update(&m, ptrs[0], make([]byte, 500))
	require.NoError(t, err)
	require.Equal(t, ptrs[0], np)
	require.Zero(t, m.HeapMoves)
	require.NoError(t, h.Check(nil))
}

// TestFillFactorLargeRow checks RelationGetBufferForTuple's cap: at fill
// factor 10 a row plus the 3,686-byte reserve is more than a nearly empty
// 4 KiB page holds, so a page is judged by the nearly empty room instead
// (4,048 bytes less 16 slots, 3,984): each of three largest versions goes
// to a page of its own, none to a page that stays empty.
func TestFillFactorLargeRow(t *testing.T) {
	_, _, h := newHeapForTest(t, 4<<10, 32)
	require.NoError(t, h.SetFillFactor(10))
	require.Equal(t, 3984, h.targetFree(h.MaxVersionSize()+TupleHeaderSize))
	require.Equal(t, 10+4096*90/100, h.targetFree(10))
	seen := map[uint32]bool{}
	for range 3 {
		p, err := h.InsertVersion(nil, 1, make([]byte, h.MaxVersionSize()))
		require.NoError(t, err)
		require.False(t, seen[p.Page])
		seen[p.Page] = true
	}
	require.Equal(t, uint32(5), h.HighWater(), "the FSM page and three heap pages")
}

// TestFillFactorBad checks that an out-of-range fill factor is refused
// with ErrBadFillFactor and changes nothing.
func TestFillFactorBad(t *testing.T) {
	_, _, h := newHeapForTest(t, 4<<10, 32)
	require.NoError(t, h.SetFillFactor(70))
	for _, ff := range []int{-1, 0, 9, 101} {
		err := h.SetFillFactor(ff)
		require.True(t, errors.Is(err, ErrBadFillFactor), "%d: %v", ff, err)
		require.Contains(t, err.Error(), "space 1")
		require.Equal(t, 70, h.FillFactor())
	}
}
