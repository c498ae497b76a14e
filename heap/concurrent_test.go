package heap

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// A self-describing row for the concurrency test: writer, row number and
// version, then a pattern derived from them, so that a reader can tell a
// torn or misplaced row from a good one without knowing what to expect.
//
//	| writer (1B) | row (4B) | version (4B) | pattern ... |
const selfRowHeader = 9

func selfRow(writer, row, version, n int) []byte {
	n = max(n, selfRowHeader)
	b := make([]byte, n)
	b[0] = byte(writer)
	binary.BigEndian.PutUint32(b[1:], uint32(row))
	binary.BigEndian.PutUint32(b[5:], uint32(version))
	for i := selfRowHeader; i < n; i++ {
		b[i] = byte(writer*31 + row*7 + version*13 + i)
	}
	return b
}

func checkSelfRow(b []byte) error {
	if len(b) < selfRowHeader {
		return fmt.Errorf("row of %d bytes is too short", len(b))
	}
	w, r, v := int(b[0]), int(binary.BigEndian.Uint32(b[1:])), int(binary.BigEndian.Uint32(b[5:]))
	for i := selfRowHeader; i < len(b); i++ {
		if b[i] != byte(w*31+r*7+v*13+i) {
			return fmt.Errorf("row w%d/r%d/v%d: byte %d is %d", w, r, v, i, b[i])
		}
	}
	return nil
}

// TestConcurrent runs writers that insert, update (in place and moving),
// fetch and delete their own rows in parallel, and a scanner that checks
// every row it sees is whole, on a pool small enough to evict. Each writer
// records where its rows ended up; afterwards every record is checked by
// fetch and by one full scan. Run it with -race.
func TestConcurrent(t *testing.T) {
	const (
		writers = 4
		ops     = 800
		frames  = 48 // 192 KiB; the heap grows to several times that
	)
	seed := testSeed(t)
	st, pool, h := newHeapForTest(t, 4<<10, frames)

	type record struct {
		ptr RowPtr
		row []byte
	}
	results := make([]map[int]record, writers)
	meters := make([]Meter, writers)
	errs := make([]error, writers+1)
	var wg sync.WaitGroup
	done := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			m := &meters[w]
			mine := map[int]record{}
			var order []int // row numbers of live rows, for deterministic picks
			var buf []byte
			fail := func(format string, args ...any) {
				errs[w] = fmt.Errorf("writer %d: "+format, append([]any{w}, args...)...)
			}
			for i := range ops {
				switch r := rng.IntN(10); {
				case r < 4 || len(order) == 0:
					row := selfRow(w, i, 0, 20+rng.IntN(300))
					p, err := h.Insert(m, row)
					if err != nil {
						fail("insert: %v", err)
						return
					}
					mine[i] = record{p, row}
					order = append(order, i)
				case r < 7:
					k := rng.IntN(len(order))
					rec := mine[order[k]]
					n := 20 + rng.IntN(300)
					if rng.IntN(4) == 0 {
						n = 400 + rng.IntN(h.MaxRowSize()-400)
					}
					row := selfRow(w, order[k], i, n)
					p, err := h.Update(m, rec.ptr, row)
					if err != nil {
						fail("update %s: %v", rec.ptr, err)
						return
					}
					mine[order[k]] = record{p, row}
				case r < 9:
					rec := mine[order[rng.IntN(len(order))]]
					var err error
					if buf, err = h.Fetch(m, rec.ptr, buf); err != nil {
						fail("fetch %s: %v", rec.ptr, err)
						return
					}
					if string(buf) != string(rec.row) {
						fail("fetch %s: got another row", rec.ptr)
						return
					}
				default:
					k := rng.IntN(len(order))
					rec := mine[order[k]]
					if err := h.Delete(m, rec.ptr); err != nil {
						fail("delete %s: %v", rec.ptr, err)
						return
					}
					delete(mine, order[k])
					order = slices.Delete(order, k, k+1)
				}
			}
			results[w] = mine
		})
	}
	scans := 0
	var sm Meter
	var swg sync.WaitGroup
	swg.Go(func() {
		for {
			s := h.NewScan(&sm)
			var last RowPtr
			for s.Next() {
				if err := checkSelfRow(s.Row()); err != nil {
					errs[writers] = fmt.Errorf("scan at %s: %v", s.Ptr(), err)
					return
				}
				if s.Ptr().Compare(last) <= 0 {
					errs[writers] = fmt.Errorf("scan: %s after %s", s.Ptr(), last)
					return
				}
				last = s.Ptr()
			}
			if err := s.Close(); err != nil {
				errs[writers] = err
				return
			}
			scans++
			select {
			case <-done:
				return
			default:
			}
		}
	})
	wg.Wait()
	close(done)
	swg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.Positive(t, scans)

	check := func(h *Heap) {
		md := newModel()
		for w := range writers {
			for _, rec := range results[w] {
				_, dup := md.rows[rec.ptr]
				require.False(t, dup, "two writers hold %s", rec.ptr)
				md.add(rec.ptr, rec.row)
			}
		}
		// model.add order follows map iteration, but check only compares
		// sets and sorted order, so the result does not depend on it.
		md.check(t, h)
	}
	check(h)
	var total Meter
	for w := range writers {
		total.Add(&meters[w])
	}
	total.Add(&sm)
	t.Logf("%d scans; %d pages; %s", scans, h.HighWater(), total.String())
	require.Positive(t, total.HeapMoves)
	require.Positive(t, total.Evictions)

	_, h = reopen(t, st, pool, 1, frames)
	check(h)
}
