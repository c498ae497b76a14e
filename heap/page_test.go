package heap

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache/page"
)

func newPage(size int) hpage {
	b := make([]byte, size)
	page.Init(b, page.ID{Space: 1, Page: 2}, page.KindHeap)
	initHeapPage(b)
	return b
}

// pageRows returns the live rows of b by slot (nil for deleted slots).
func pageRows(t *testing.T, b hpage) [][]byte {
	t.Helper()
	require.NoError(t, b.verify())
	var out [][]byte
	for i := range b.nslots() {
		row, live, ok := b.row(i)
		require.True(t, ok)
		if live {
			out = append(out, bytes.Clone(row))
		} else {
			out = append(out, nil)
		}
	}
	return out
}

func TestMaxRowSize(t *testing.T) {
	require.Equal(t, 1013, MaxRowSize(4<<10))
	require.Equal(t, 4085, MaxRowSize(16<<10))
	require.Equal(t, 16373, MaxRowSize(64<<10))
	for size := page.MinSize; size <= page.MaxSize; size *= 2 {
		// At least three maximal rows fit in an empty page.
		b := newPage(size)
		row := bytes.Repeat([]byte{7}, MaxRowSize(size))
		for range 3 {
			_, ok := b.insert(row)
			require.True(t, ok, "page size %d", size)
		}
		require.NoError(t, b.verify())
		// The FSM category of an empty page fits in a byte.
		require.LessOrEqual(t, (size-slotsStart-slotSize)/(size/256), 255)
	}
}

// TestPageWorkedExample checks the example in page.go's comment.
func TestPageWorkedExample(t *testing.T) {
	b := newPage(4096)
	s0, ok := b.insert([]byte("alpha"))
	require.True(t, ok)
	s1, ok := b.insert([]byte("hello, world"))
	require.True(t, ok)
	require.Equal(t, []int{0, 1}, []int{s0, s1})
	require.Equal(t, 2, b.nslots())
	require.Equal(t, 4079, b.cellStart())
	off, n := b.slot(0)
	require.Equal(t, []int{4091, 5}, []int{off, n})
	off, n = b.slot(1)
	require.Equal(t, []int{4079, 12}, []int{off, n})
	require.Equal(t, 4023, b.avail())
	h := newHeap(newPool(t, newStore(t, 4096), 16), 1)
	require.Equal(t, uint8(251), h.category(b.free(), b.ndead()))
}

func TestPageSlotReuseTrimAndCompaction(t *testing.T) {
	b := newPage(4096)
	rows := [][]byte{[]byte("aaaa"), []byte("bbbbbbbb"), []byte(""), []byte("cc"), []byte("dddddd")}
	for i, r := range rows {
		s, ok := b.insert(r)
		require.True(t, ok)
		require.Equal(t, i, s)
	}
	b.del(1)
	b.del(3)
	require.Equal(t, 5, b.nslots())
	require.Equal(t, 2, b.ndead())
	require.NoError(t, b.verify())
	// The lowest deleted slot is reused first.
	s, ok := b.insert([]byte("x"))
	require.True(t, ok)
	require.Equal(t, 1, s)
	// Deleting the last slot trims it and the deleted slot before it.
	b.del(4)
	require.Equal(t, 3, b.nslots())
	require.Equal(t, 0, b.ndead())
	require.Equal(t, [][]byte{[]byte("aaaa"), []byte("x"), {}}, pageRows(t, b))

	// Fill the page with fragmentation, then insert a row that needs
	// compaction.
	b = newPage(4096)
	var ptrs []int
	for {
		s, ok := b.insert(bytes.Repeat([]byte{byte(len(ptrs))}, 100))
		if !ok {
			break
		}
		ptrs = append(ptrs, s)
	}
	require.Len(t, ptrs, 38) // 38·104 = 3952 ≤ 4052 - 4 < 39·104
	for i := 0; i < len(ptrs)-1; i += 2 {
		b.del(ptrs[i])
	}
	require.Equal(t, 19, b.ndead())
	gap := b.cellStart() - b.slotsEnd()
	require.Less(t, gap, 300)
	big := bytes.Repeat([]byte{0xEE}, 900)
	s, ok = b.insert(big)
	require.True(t, ok)
	require.Equal(t, 0, s)
	require.Equal(t, 0, b.frag())
	got := pageRows(t, b)
	require.Equal(t, big, got[0])
	for i := 1; i < len(ptrs); i++ {
		if i%2 == 1 || i == len(ptrs)-1 {
			require.Equal(t, bytes.Repeat([]byte{byte(i)}, 100), got[i], "slot %d", i)
		} else {
			require.Nil(t, got[i], "slot %d", i)
		}
	}
}

func TestPageUpdate(t *testing.T) {
	b := newPage(4096)
	for i := range 3 {
		_, ok := b.insert(bytes.Repeat([]byte{byte('a' + i)}, 50))
		require.True(t, ok)
	}
	free := b.free()
	// Shrink in place: the tail becomes fragmented space.
	require.True(t, b.update(1, []byte("short")))
	require.Equal(t, free+45, b.free())
	require.Equal(t, 45, b.frag())
	// Grow: a new cell.
	require.True(t, b.update(1, bytes.Repeat([]byte{'B'}, 200)))
	require.Equal(t, free-150, b.free())
	// To empty and back.
	require.True(t, b.update(0, nil))
	require.True(t, b.update(0, []byte("zz")))
	require.Equal(t, [][]byte{[]byte("zz"), bytes.Repeat([]byte{'B'}, 200), bytes.Repeat([]byte{'c'}, 50)}, pageRows(t, b))
	// A row that does not fit is refused and nothing changes.
	before := bytes.Clone(b)
	require.False(t, b.fitsInPlace(2, make([]byte, b.free()+51)))
	require.False(t, b.update(2, make([]byte, b.free()+51)))
	require.Equal(t, before, []byte(b))
	// One that fits only with the old row's bytes and compaction.
	n := b.free() + 50
	require.True(t, b.fitsInPlace(2, make([]byte, n)))
	require.True(t, b.update(2, bytes.Repeat([]byte{'C'}, n)))
	require.Equal(t, 0, b.free())
	require.Equal(t, bytes.Repeat([]byte{'C'}, n), pageRows(t, b)[2])
}

// TestPage64KiB checks the page at its largest size, where the cell start
// of an empty page (65536) does not fit in 16 bits but every offset does.
func TestPage64KiB(t *testing.T) {
	const size = 64 << 10
	b := newPage(size)
	require.Equal(t, size, b.cellStart())
	require.True(t, b.headerOK())
	// An empty row on an empty page does not need the cell start.
	s, ok := b.insert(nil)
	require.True(t, ok)
	require.Equal(t, size, b.cellStart())
	one, ok := b.insert([]byte{0xAB})
	require.True(t, ok)
	off, n := b.slot(one)
	require.Equal(t, []int{size - 1, 1}, []int{off, n})
	// Fill the page with maximal rows, delete, refill through compaction.
	var slots []int
	row := bytes.Repeat([]byte{0x5A}, MaxRowSize(size))
	for {
		s, ok := b.insert(row)
		if !ok {
			break
		}
		slots = append(slots, s)
	}
	require.Len(t, slots, 3)
	b.del(one)
	b.del(slots[1])
	require.NoError(t, b.verify())
	small := bytes.Repeat([]byte{1}, 200)
	for {
		if _, ok := b.insert(small); !ok {
			break
		}
	}
	require.NoError(t, b.verify())
	require.Less(t, b.avail(), 200)
	rows := pageRows(t, b)
	require.Equal(t, []byte{}, rows[s])
	require.Equal(t, row, rows[slots[0]])
	require.Equal(t, row, rows[slots[2]])
}

// TestPageRandom runs random page operations at every page size against a
// model of the page, verifying the page after each one.
func TestPageRandom(t *testing.T) {
	seed := testSeed(t)
	for size := page.MinSize; size <= page.MaxSize; size *= 2 {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, uint64(size)))
			b := newPage(size)
			model := map[int][]byte{}
			maxRow := MaxRowSize(size)
			for i := range 2000 {
				n := rng.IntN(maxRow/4 + 1)
				if rng.IntN(10) == 0 {
					n = rng.IntN(maxRow + 1)
				}
				row := make([]byte, n)
				for j := range row {
					row[j] = byte(rng.Uint32())
				}
				var live []int
				for s := range b.nslots() {
					if _, ok := model[s]; ok {
						live = append(live, s)
					}
				}
				switch op := rng.IntN(3); {
				case op == 0 || len(live) == 0:
					avail := b.avail()
					s, ok := b.insert(row)
					require.Equal(t, n <= avail, ok, "op %d", i)
					if ok {
						_, dup := model[s]
						require.False(t, dup)
						model[s] = row
					}
				case op == 1:
					s := live[rng.IntN(len(live))]
					fits := b.fitsInPlace(s, row)
					require.Equal(t, fits, b.update(s, row))
					if fits {
						model[s] = row
					}
				default:
					s := live[rng.IntN(len(live))]
					free, ndead := b.delEffect(s)
					b.del(s)
					require.Equal(t, free, b.free())
					require.Equal(t, ndead, b.ndead())
					delete(model, s)
				}
				require.NoError(t, b.verify(), "op %d", i)
			}
			rows := pageRows(t, b)
			for s, r := range rows {
				require.Equal(t, model[s], r, "slot %d", s)
			}
		})
	}
}
