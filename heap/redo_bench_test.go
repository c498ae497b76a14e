package heap

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache/redo"
)

// BenchmarkHeapRedo measures what each heap operation writes to the redo
// log, on 16 KiB pages, with a pool that holds the whole heap:
// log-bytes/op (frame headers included) and log-records/op, with the
// allocations per operation. The rows are 100 bytes. Run it with a fixed
// count, since the delete case inserts b.N rows first and the log is kept
// in memory:
//
//	go test ./heap/ -run XXX -bench BenchmarkHeapRedo -benchtime 20000x
//
// The cases:
//   - insert: into the target page, a new page every 150 rows or so.
//   - update/all-bytes: in place, same length, every byte new.
//   - update/one-byte: in place, same length, one byte changed (what a
//     counter column does).
//   - update/grow: in place, 100 to 120 bytes and back; growing needs the
//     page's frag now and then, and compacts it.
//
// The updates cycle over 10k rows on pages half emptied by deletes.
//   - delete: of rows inserted before the timer starts.
func BenchmarkHeapRedo(b *testing.B) {
	const rowLen = 100
	setup := func(b *testing.B, rows int) (*Heap, []RowPtr) {
		noVerifyRedo(b)
		st := newStore(b, 16<<10)
		lg, err := redo.Open(st, nil)
		require.NoError(b, err)
		pool := newPoolWithLog(b, st, 8192, lg)
		h, err := Create(nil, pool, 1)
		require.NoError(b, err)
		ptrs := make([]RowPtr, rows)
		for i := range ptrs {
			ptrs[i], err = h.Insert(nil, benchRow(i)[:rowLen])
			require.NoError(b, err)
		}
		return h, ptrs
	}
	report := func(b *testing.B, m *Meter) {
		b.StopTimer()
		b.ReportMetric(float64(m.LogBytes)/float64(b.N), "log-bytes/op")
		b.ReportMetric(float64(m.LogRecords)/float64(b.N), "log-records/op")
	}
	b.Run("insert", func(b *testing.B) {
		h, _ := setup(b, 0)
		rows := make([][]byte, 1024)
		for i := range rows {
			rows[i] = benchRow(i)[:rowLen]
		}
		var m Meter
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := h.Insert(&m, rows[i%len(rows)]); err != nil {
				b.Fatal(err)
			}
		}
		report(b, &m)
	})
	updates := func(b *testing.B, next func(i, k int, row []byte) []byte) {
		// 20k rows, every other one deleted: pages half full, with room
		// for rows to grow in place, and frag.
		h, all := setup(b, 20_000)
		var ptrs []RowPtr
		for i, p := range all {
			if i%2 == 0 {
				require.NoError(b, h.Delete(nil, p))
			} else {
				ptrs = append(ptrs, p)
			}
		}
		rows := make([][]byte, len(ptrs))
		for j := range ptrs {
			rows[j] = benchRow(2*j + 1)
		}
		var m Meter
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			k := i % len(ptrs)
			p := ptrs[k]
			np, err := h.Update(&m, p, next(i, k, rows[k]))
			if err != nil || np != p {
				b.Fatalf("update %s: moved to %s, %v", p, np, err)
			}
		}
		report(b, &m)
	}
	b.Run("update/all-bytes", func(b *testing.B) {
		updates(b, func(i, _ int, row []byte) []byte {
			for j := range rowLen {
				row[j] += byte(2*j + 1) // odd: every byte changes
			}
			return row[:rowLen]
		})
	})
	b.Run("update/one-byte", func(b *testing.B) {
		updates(b, func(i, _ int, row []byte) []byte {
			row[rowLen/2]++
			return row[:rowLen]
		})
	})
	b.Run("update/grow", func(b *testing.B) {
		updates(b, func(i, _ int, row []byte) []byte {
			if (i/10_000)%2 == 0 {
				return row[:rowLen+20]
			}
			return row[:rowLen]
		})
	})
	b.Run("delete", func(b *testing.B) {
		h, ptrs := setup(b, b.N)
		var m Meter
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := h.Delete(&m, ptrs[i]); err != nil {
				b.Fatal(err)
			}
		}
		report(b, &m)
	})
}

// benchRow returns 120 seeded random bytes for row k: rows that differ
// from one another, as a table's do, so that a physical diff of a page
// whose cells moved is as large as the bytes that moved.
func benchRow(k int) []byte {
	rng := rand.New(rand.NewPCG(uint64(k), 7))
	row := make([]byte, 120)
	for i := range row {
		row[i] = byte(rng.Uint32())
	}
	return row
}
