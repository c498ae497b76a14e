package lock

import (
	"encoding/binary"
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
