package lock

import (
	"encoding/binary"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkLock takes ten exclusive row locks in a transaction and releases
// them, uncontended.
func BenchmarkLock(b *testing.B) {
	lm := NewManager(wallClock{}, RealParker{Clock: wallClock{}}, time.Second)
	var key [8]byte
	var m Counters
	var o Owner // as a Tx carries it
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o.ID = uint64(i/10 + 1)
		binary.BigEndian.PutUint64(key[:], uint64(i)*2654435761)
		if err := lm.LockAs(&m, &o, RowKey(1, key[:]), Shared); err != nil {
			b.Fatal(err)
		}
		if i%10 == 9 {
			lm.Release(&o)
		}
	}
}

// BenchmarkLockParallel is BenchmarkLock on every processor at once, each
// goroutine a transaction of its own on rows no other goroutine locks:
// what the lock table's latching costs when nothing conflicts.
func BenchmarkLockParallel(b *testing.B) {
	lm := NewManager(wallClock{}, RealParker{Clock: wallClock{}}, time.Second)
	var next atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		g := next.Add(1)
		var key [16]byte
		binary.BigEndian.PutUint64(key[:], g)
		var m Counters
		o := Owner{ID: g << 32}
		for i := uint64(0); pb.Next(); i++ {
			binary.BigEndian.PutUint64(key[8:], i*2654435761)
			if err := lm.LockAs(&m, &o, RowKey(1, key[:]), Exclusive); err != nil {
				b.Fatal(err)
			}
			if i%10 == 9 {
				lm.Release(&o)
				o.ID++
			}
		}
		lm.Release(&o)
	})
}
