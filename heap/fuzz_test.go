package heap

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzHeap decodes its input into a sequence of heap operations on 4 KiB
// pages and a 16-frame pool, and checks each against a map model; at the
// end (and when the input asks) it checks every row, a full scan and the
// heap's invariants. Each operation is an opcode byte followed by its
// arguments; missing bytes read as 0:
//
//	op%8 = 0, 1  insert       len (2B, mod MaxRowSize+64: some too large)
//	op%8 = 2     fetch live   index (1B)
//	op%8 = 3     fetch any    page (1B, mod high water+2), slot (1B, mod 64)
//	op%8 = 4, 5  update live  index (1B), len (2B)
//	op%8 = 6     delete live  index (1B)
//	op%8 = 7     check        kind (1B): 0 mod 8 reopens the heap on a new
//	                          pool, else a scan is compared with the model
//
// Run with: go test -run XXX -fuzz FuzzHeap ./heap/
func FuzzHeap(f *testing.F) {
	f.Add([]byte{0, 0, 100, 0, 0, 200, 2, 0, 4, 1, 3, 255, 6, 0, 7, 0, 7, 1})
	f.Add([]byte{0, 3, 245, 0, 3, 245, 0, 3, 245, 0, 3, 245, 4, 0, 3, 200, 3, 2, 0})
	f.Add([]byte{0, 0, 0, 0, 0, 1, 6, 0, 0, 0, 0, 3, 2, 1, 7, 0})
	rng := rand.New(rand.NewPCG(1, 2))
	for range 4 {
		b := make([]byte, 600)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const frames = 16
		st, pool, h := newHeapForTest(t, 4<<10, frames)
		md := newModel()
		next := func() int {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return int(b)
		}
		rowOf := func(seq, n int) []byte {
			row := make([]byte, n)
			for i := range row {
				row[i] = byte(seq*131 + i)
			}
			return row
		}
		var buf []byte
		var err error
		for seq := 0; len(data) > 0 && seq < 3000; seq++ {
			switch op := next() % 8; op {
			case 0, 1:
				row := rowOf(seq, (next()<<8|next())%(h.MaxRowSize()+64))
				p, err := h.Insert(nil, row)
				if len(row) > h.MaxRowSize() {
					require.ErrorIs(t, err, ErrRowTooLarge)
					continue
				}
				require.NoError(t, err)
				_, dup := md.rows[p]
				require.False(t, dup, "insert returned the live pointer %s", p)
				md.add(p, row)
			case 2:
				if len(md.ptrs) == 0 {
					continue
				}
				p := md.ptrs[next()%len(md.ptrs)]
				buf, err = h.Fetch(nil, p, buf)
				require.NoError(t, err)
				requireRow(t, md.rows[p], buf, "row %s", p)
			case 3:
				p := RowPtr{Page: uint32(next()) % (h.HighWater() + 2), Slot: uint16(next() % 64)}
				buf, err = h.Fetch(nil, p, buf)
				if want, ok := md.rows[p]; ok {
					require.NoError(t, err)
					requireRow(t, want, buf, "row %s", p)
				} else {
					require.ErrorIs(t, err, ErrRowNotFound, "%s", p)
				}
			case 4, 5:
				if len(md.ptrs) == 0 {
					continue
				}
				p := md.ptrs[next()%len(md.ptrs)]
				row := rowOf(seq, (next()<<8|next())%(h.MaxRowSize()+64))
				np, err := h.Update(nil, p, row)
				if len(row) > h.MaxRowSize() {
					require.ErrorIs(t, err, ErrRowTooLarge)
					continue
				}
				require.NoError(t, err)
				if np != p {
					require.Greater(t, np.Page, p.Page)
					_, dup := md.rows[np]
					require.False(t, dup)
				}
				md.remove(p)
				md.add(np, row)
			case 6:
				if len(md.ptrs) == 0 {
					continue
				}
				p := md.ptrs[next()%len(md.ptrs)]
				require.NoError(t, h.Delete(nil, p))
				md.remove(p)
			case 7:
				if next()%8 == 0 {
					pool, h = reopen(t, st, pool, 1, frames)
				} else {
					md.checkScan(t, h)
				}
			}
		}
		md.check(t, h)
	})
}
