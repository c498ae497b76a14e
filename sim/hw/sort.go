package hw

import (
	"time"

	"github.com/enginelab/enginelab/engine"
)

// SortCosts price the sort's counters (engine.SortCounts): the CPU of
// each event in nanoseconds. The two compare paths have their own costs:
// a memcmp of fixed keys (a call and a byte), and a packed key's
// comparison (a call of compare_packed_sort_keys, then per string part a
// call of its collation's strnncollsp and the bytes it reads, by
// collation, indexed as engine.Collations lists them).
type SortCosts struct {
	Key           float64                       `json:"key"`      // a key made (make_sortkey's call)
	KeyByte       float64                       `json:"key_byte"` // a byte of key written (strnxfrm, or a copy when packed)
	Memcmp        float64                       `json:"memcmp"`
	MemcmpByte    float64                       `json:"memcmp_byte"`
	PackedCompare float64                       `json:"packed_compare"`
	Coll          [engine.NumCollations]float64 `json:"coll"`
	CollByte      [engine.NumCollations]float64 `json:"coll_byte"`
	RadixByte     float64                       `json:"radix_byte"` // a key byte a radix pass reads
	// TempRequest is a temporary file request's CPU (a system call and
	// its copy), besides its time on the store's device.
	TempRequest float64 `json:"temp_request"`
	Source      string  `json:"source,omitempty"`
}

// DefaultSortCosts are the shipped sort costs: estimates of the work
// each event is on one core of a current x86 machine, not fitted. A
// collation's byte is dearer than a memcmp's: latin1 looks a weight up
// a byte; general_ci and utf8mb4_bin decode UTF-8 and (general_ci) look a
// weight up; unicode_ci decodes and walks a weight table with expansions.
var DefaultSortCosts = SortCosts{
	Key: 40, KeyByte: 1.5,
	Memcmp: 8, MemcmpByte: 0.15,
	PackedCompare: 12,
	//        binary latin1 general  bin  unicode
	Coll:        [engine.NumCollations]float64{6, 8, 10, 10, 14},
	CollByte:    [engine.NumCollations]float64{0.15, 0.8, 2.5, 1.6, 4.5},
	RadixByte:   0.8,
	TempRequest: 2000,
	Source:      "estimates (2026): memcmp about 6 GB/s once started; a table lookup a byte; UTF-8 decoding a character; UCA's weight walk about twice general_ci's",
}

// SortTime is what c's sort counters take on machine m at costs s: the
// CPU, and the temporary files' I/O on the store's device (each write
// and read a request: its latency and its bytes' transfer, unqueued).
func SortTime(m *Machine, s *SortCosts, c *engine.SortCounts) (cpu, io time.Duration) {
	ns := float64(c.SortKeysBuilt)*s.Key + float64(c.SortKeyBytes)*s.KeyByte +
		float64(c.SortMemcmps)*s.Memcmp + float64(c.SortMemcmpBytes)*s.MemcmpByte +
		float64(c.SortPackedCompares)*s.PackedCompare + float64(c.SortRadixBytes)*s.RadixByte +
		float64(c.SortTempWrites+c.SortTempReads)*s.TempRequest
	for i := range c.SortCollCompares {
		ns += float64(c.SortCollCompares[i])*s.Coll[i] + float64(c.SortCollBytes[i])*s.CollByte[i]
	}
	d := &m.Store
	ion := c.SortTempWrites*int64(d.WriteLatency) + TransferNanos(c.SortTempWriteBytes, d.WriteBandwidth) +
		c.SortTempReads*int64(d.ReadLatency) + TransferNanos(c.SortTempReadBytes, d.ReadBandwidth)
	return time.Duration(ns), time.Duration(ion)
}

// CPUTime is the CPU that m's profile gives a meter's CPU events (page
// requests, node visits, rows examined, ...), and StoreReadTime its page
// reads from the store: the scan's and the re-fetches' cost beside the
// sort's own.
func CPUTime(m *Machine, mt *engine.Meter) time.Duration {
	v := VectorOf(mt)
	costs := m.CPU.Costs()
	var ns float64
	for i := range NumCPUEvents {
		ns += float64(v[i]) * costs[i]
	}
	return time.Duration(ns)
}

// StoreReadTime is the store device's time for mt's page reads.
func StoreReadTime(m *Machine, mt *engine.Meter, pageSize int64) time.Duration {
	d := &m.Store
	return time.Duration(mt.StoreReads * (int64(d.ReadLatency) + TransferNanos(pageSize, d.ReadBandwidth)))
}
