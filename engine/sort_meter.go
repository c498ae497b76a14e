package engine

import (
	"fmt"
	"strings"
)

// SortCounts are the sorts' counters, a part of Meter (its fields read
// as Meter's: m.SortKeysBuilt). A cost model prices them: the two compare
// paths at their own cost (a memcmp of fixed keys, a collation's function
// on packed ones, per comparison and per byte read, by collation), the
// keys built, the radix passes, and the temporary files' I/O on the
// store's device.
type SortCounts struct {
	// Sorts run; SortsAvoided, ORDER BYs that an index's order served
	// with no sort; SortsPQ, sorts that kept a LIMIT in a priority
	// queue; SortsPacked, sorts with packed keys.
	Sorts        int64
	SortsAvoided int64
	SortsPQ      int64
	SortsPacked  int64
	// SortKeysBuilt counts keys made (one a row sorted, in the queue
	// too) and SortKeyBytes their bytes.
	SortKeysBuilt int64
	SortKeyBytes  int64
	// SortMemcmps counts comparisons of fixed keys (memcmp), and
	// SortMemcmpBytes the bytes they read of both keys.
	SortMemcmps     int64
	SortMemcmpBytes int64
	// SortPackedCompares counts comparisons of packed keys; within them,
	// SortCollCompares the calls of a collation's strnncollsp, by
	// collation (indexed as Collations lists them), and SortCollBytes
	// the bytes those calls read of both values.
	SortPackedCompares int64
	SortCollCompares   [numCollations]int64
	SortCollBytes      [numCollations]int64
	// SortRadixPasses counts the byte positions a radix sort distributed
	// records on (mf_radix.c skips a position where every record has
	// the same byte: SortRadixSkipped), and SortRadixBytes the key bytes
	// it read, one a record a position.
	SortRadixPasses  int64
	SortRadixSkipped int64
	SortRadixBytes   int64
	// SortRuns counts sorted runs written to the temporary file;
	// SortMergePasses the merge passes over the data; SortMergeCalls the
	// merges of a group of runs (merge_buffers: MariaDB's
	// Sort_merge_passes).
	SortRuns        int64
	SortMergePasses int64
	SortMergeCalls  int64
	// Temporary file I/O: write calls (one a 64 KiB block of the write
	// cache, and the last partial one) and bytes; read calls (one a
	// refill of a run's part of the buffer, or of the result reader's
	// block) and bytes.
	SortTempWrites     int64
	SortTempWriteBytes int64
	SortTempReads      int64
	SortTempReadBytes  int64
	// SortRowsRefetched counts rows read again after a sort by their
	// reference: by primary key (SortRefetchPrimary: Clustered and
	// HeapPrimaryKey) or by heap row pointer (SortRefetchHeap:
	// HeapRowPointer). The reads themselves are also counted where any
	// read is (node visits, heap fetches, pages).
	SortRowsRefetched  int64
	SortRefetchPrimary int64
	SortRefetchHeap    int64
}

// Add adds o's counters to c.
func (c *SortCounts) Add(o *SortCounts) { c.combine(o, 1) }

// Sub subtracts o's counters from c.
func (c *SortCounts) Sub(o *SortCounts) { c.combine(o, -1) }

func (c *SortCounts) combine(o *SortCounts, s int64) {
	c.Sorts += s * o.Sorts
	c.SortsAvoided += s * o.SortsAvoided
	c.SortsPQ += s * o.SortsPQ
	c.SortsPacked += s * o.SortsPacked
	c.SortKeysBuilt += s * o.SortKeysBuilt
	c.SortKeyBytes += s * o.SortKeyBytes
	c.SortMemcmps += s * o.SortMemcmps
	c.SortMemcmpBytes += s * o.SortMemcmpBytes
	c.SortPackedCompares += s * o.SortPackedCompares
	for i := range c.SortCollCompares {
		c.SortCollCompares[i] += s * o.SortCollCompares[i]
		c.SortCollBytes[i] += s * o.SortCollBytes[i]
	}
	c.SortRadixPasses += s * o.SortRadixPasses
	c.SortRadixSkipped += s * o.SortRadixSkipped
	c.SortRadixBytes += s * o.SortRadixBytes
	c.SortRuns += s * o.SortRuns
	c.SortMergePasses += s * o.SortMergePasses
	c.SortMergeCalls += s * o.SortMergeCalls
	c.SortTempWrites += s * o.SortTempWrites
	c.SortTempWriteBytes += s * o.SortTempWriteBytes
	c.SortTempReads += s * o.SortTempReads
	c.SortTempReadBytes += s * o.SortTempReadBytes
	c.SortRowsRefetched += s * o.SortRowsRefetched
	c.SortRefetchPrimary += s * o.SortRefetchPrimary
	c.SortRefetchHeap += s * o.SortRefetchHeap
}

// SortCollCompareTotal is the collation compares of every collation.
func (c *SortCounts) SortCollCompareTotal() int64 {
	var n int64
	for _, x := range c.SortCollCompares {
		n += x
	}
	return n
}

// Compares is every comparison of keys, fixed or packed.
func (c *SortCounts) Compares() int64 { return c.SortMemcmps + c.SortPackedCompares }

// String lists the non-zero counters.
func (c *SortCounts) String() string {
	var b strings.Builder
	add := func(name string, v int64) {
		if v != 0 {
			fmt.Fprintf(&b, " %s=%d", name, v)
		}
	}
	add("sorts", c.Sorts)
	add("sorts-avoided", c.SortsAvoided)
	add("sorts-pq", c.SortsPQ)
	add("sorts-packed", c.SortsPacked)
	add("sort-keys", c.SortKeysBuilt)
	add("sort-key-bytes", c.SortKeyBytes)
	add("sort-memcmps", c.SortMemcmps)
	add("sort-memcmp-bytes", c.SortMemcmpBytes)
	add("sort-packed-compares", c.SortPackedCompares)
	for i := range c.SortCollCompares {
		n := collationInfos[i].name
		add("sort-coll."+n, c.SortCollCompares[i])
		add("sort-coll-bytes."+n, c.SortCollBytes[i])
	}
	add("sort-radix-passes", c.SortRadixPasses)
	add("sort-radix-skipped", c.SortRadixSkipped)
	add("sort-radix-bytes", c.SortRadixBytes)
	add("sort-runs", c.SortRuns)
	add("sort-merge-passes", c.SortMergePasses)
	add("sort-merge-calls", c.SortMergeCalls)
	add("sort-temp-writes", c.SortTempWrites)
	add("sort-temp-write-bytes", c.SortTempWriteBytes)
	add("sort-temp-reads", c.SortTempReads)
	add("sort-temp-read-bytes", c.SortTempReadBytes)
	add("sort-rows-refetched", c.SortRowsRefetched)
	add("sort-refetch.primary", c.SortRefetchPrimary)
	add("sort-refetch.heap", c.SortRefetchHeap)
	return strings.TrimSpace(b.String())
}
