package heap

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// benchHeap returns a heap of n rows of rowLen bytes on 16 KiB pages, in a
// pool of poolBytes, and the rows' pointers.
func benchHeap(b *testing.B, n, rowLen int, poolBytes int64) (*Heap, []RowPtr) {
	b.Helper()
	st := newStore(b, 16<<10)
	pool := newPool(b, st, int(poolBytes/(16<<10)))
	h, err := Create(nil, pool, 1)
	require.NoError(b, err)
	row := bytes.Repeat([]byte{'r'}, rowLen)
	ptrs := make([]RowPtr, n)
	for i := range ptrs {
		ptrs[i], err = h.Insert(nil, row)
		require.NoError(b, err)
	}
	return h, ptrs
}

// BenchmarkHeapFetch fetches random rows of a 100k-row heap (about 10 MiB
// of 100-byte rows) from a warm pool that holds all of it: the CPU cost of
// a fetch by pointer. It must not allocate.
func BenchmarkHeapFetch(b *testing.B) {
	b.Run("rows=100k/row=100B/page=16KiB", func(b *testing.B) {
		h, ptrs := benchHeap(b, 100_000, 100, 32<<20)
		rng := rand.New(rand.NewPCG(1, 1))
		order := make([]RowPtr, 1<<16)
		for i := range order {
			order[i] = ptrs[rng.IntN(len(ptrs))]
		}
		var m Meter
		buf := make([]byte, 0, 128)
		var err error
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; b.Loop(); i++ {
			if buf, err = h.Fetch(&m, order[i&(len(order)-1)], buf); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		if m.PoolMisses != 0 {
			b.Fatalf("warm pool missed: %s", m.String())
		}
	})
}

// BenchmarkHeapInsert inserts 100-byte rows into a heap that starts empty,
// on a 64 MiB pool: target-page inserts, with an FSM update whenever the
// page's category changes and a new page every 150 rows or so.
func BenchmarkHeapInsert(b *testing.B) {
	b.Run("row=100B/page=16KiB", func(b *testing.B) {
		h, _ := benchHeap(b, 0, 0, 64<<20)
		row := bytes.Repeat([]byte{'r'}, 100)
		var m Meter
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if _, err := h.Insert(&m, row); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(m.PageRequestsTotal())/float64(b.N), "pages/op")
	})
}

// BenchmarkHeapScan scans a 10k-row heap of 100-byte rows from a warm pool;
// one op is a whole scan.
func BenchmarkHeapScan(b *testing.B) {
	b.Run("rows=10k/row=100B/page=16KiB", func(b *testing.B) {
		h, ptrs := benchHeap(b, 10_000, 100, 16<<20)
		var m Meter
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			s := h.NewScan(&m)
			n := 0
			for s.Next() {
				n += len(s.Row())
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			if n != len(ptrs)*100 {
				b.Fatalf("scanned %d bytes, want %d", n, len(ptrs)*100)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(m.HeapRowsScanned)/float64(b.N), "rows/op")
	})
}
