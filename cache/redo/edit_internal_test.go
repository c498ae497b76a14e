package redo

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// appendEditBytewise is AppendEdit as first written, walking equal runs a
// byte at a time. AppendEdit must produce the same bytes: the edit is in
// every update's redo and undo records, whose sizes the meters count.
func appendEditBytewise(dst, from, to []byte) []byte {
	i, j, last := 0, 0, 0
	for i < len(from) && j < len(to) {
		if from[i] == to[j] {
			i++
			j++
			continue
		}
		da, db := len(from)-i, len(to)-j
		best := da + db
		for s := 1; s <= 2*editReach && s < best; s++ {
			for a := max(0, s-editReach); a <= min(s, editReach); a++ {
				b := s - a
				if i+a > len(from) || j+b > len(to) {
					continue
				}
				if syncedBytewise(from[i+a:], to[j+b:]) {
					da, db, best = a, b, s
					break
				}
			}
		}
		dst = binary.AppendUvarint(dst, uint64(i-last))
		dst = binary.AppendUvarint(dst, uint64(da))
		dst = binary.AppendUvarint(dst, uint64(db))
		dst = append(dst, to[j:j+db]...)
		i += da
		j += db
		last = i
	}
	if j < len(to) || i < len(from) {
		dst = binary.AppendUvarint(dst, uint64(i-last))
		dst = binary.AppendUvarint(dst, uint64(len(from)-i))
		dst = binary.AppendUvarint(dst, uint64(len(to)-j))
		dst = append(dst, to[j:]...)
	}
	return dst
}

// syncedBytewise is synced as first written, a byte at a time.
func syncedBytewise(a, b []byte) bool {
	n := min(len(a), len(b), editSync)
	for k := 0; k < n; k++ {
		if a[k] != b[k] {
			return false
		}
	}
	return n == editSync || len(a) == len(b)
}

// TestAppendEditSameAsBytewise compares AppendEdit with the byte-at-a-time
// walk on related random values: changes at every offset relative to the
// eight-byte words, insertions, deletions, runs of up to 20 bytes
// rewritten (past the search's reach), and values of few symbols.
func TestAppendEditSameAsBytewise(t *testing.T) {
	rng := rand.New(rand.NewPCG(20261203, 1))
	for trial := range 20000 {
		from := make([]byte, rng.IntN(400))
		syms := 256
		if trial%3 == 0 {
			syms = 3
		}
		for i := range from {
			from[i] = byte(rng.IntN(syms))
		}
		to := bytes.Clone(from)
		for range rng.IntN(6) {
			at := 0
			if len(to) > 0 {
				at = rng.IntN(len(to))
			}
			switch rng.IntN(4) {
			case 0:
				if len(to) > 0 {
					to[at] ^= byte(1 + rng.IntN(255))
				}
			case 1:
				to = append(to[:at], append(make([]byte, 1+rng.IntN(9)), to[at:]...)...)
			case 2:
				n := min(len(to)-at, 1+rng.IntN(9))
				to = append(to[:at], to[at+n:]...)
			case 3:
				// A run rewritten, as a row header's transaction id and
				// roll pointer are, up to past the search's reach.
				n := 1 + rng.IntN(20)
				for k := at; k < min(len(to), at+n); k++ {
					to[k] = byte(rng.IntN(syms))
				}
			}
		}
		want := appendEditBytewise(nil, from, to)
		if got := AppendEdit(nil, from, to); !bytes.Equal(got, want) {
			t.Fatalf("trial %d: from %x to %x: edit %x, byte-wise %x", trial, from, to, got, want)
		}
	}
}

// BenchmarkAppendEdit is a stock row's update: a few bytes changed in a
// 300-byte value, the edit built both ways (redo and undo).
func BenchmarkAppendEdit(b *testing.B) {
	from := make([]byte, 300)
	for i := range from {
		from[i] = byte(i * 7)
	}
	to := bytes.Clone(from)
	to[10]++
	to[150]++
	to[151]++
	benchEditBothWays(b, from, to)
}

// benchEditBothWays times the edits from from to to and back (an update's
// redo and undo), and reports the last one's size.
func benchEditBothWays(b *testing.B, from, to []byte) {
	var dst []byte
	b.ReportAllocs()
	for b.Loop() {
		dst = AppendEdit(dst[:0], from, to)
		dst = AppendEdit(dst[:0], to, from)
	}
	b.ReportMetric(float64(len(dst)), "edit-bytes")
}

// BenchmarkAppendEditRowHeader is a clustered row's update as Delivery
// makes one of ORDER_LINE: the 12 bytes of the row's header that hold the
// writer's transaction id and roll pointer change, and a NULL delivery
// date becomes a timestamp (8 bytes more); built both ways.
func BenchmarkAppendEditRowHeader(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	from := make([]byte, 56)
	for i := range from {
		from[i] = byte(rng.IntN(256))
	}
	to := bytes.Clone(from[:24])
	for k := 5; k < 17; k++ {
		to[k] = byte(rng.IntN(256))
	}
	to = append(to, 0xca, 0xff, 0xe3, 0xed, 0xe6, 0xfb, 0xb0, 0x06)
	to = append(to, from[24:]...)
	benchEditBothWays(b, from, to)
}
