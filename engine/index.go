package engine

import (
	"github.com/enginelab/enginelab/btree"
)

// What an index entry carries after its key columns, which decides what a
// lookup through it must fetch.
const (
	carryRow    = iota // the clustered primary tree: the value is the row
	carryPtr           // the value (primary index) or the key's tail (secondary) is a row pointer
	carryPK            // the key's tail is the primary key (Clustered and HeapPrimaryKey secondaries)
	carryPtrVal        // heap primary index: key = primary key, value = row pointer
)

// index is an open index of a table: the primary index (ixs[0]) or a
// secondary one.
//
// Entry formats (keys are the order-preserving key encoding):
//
//	Clustered primary     key: pk               value: row
//	Clustered secondary   key: cols + pk        value: empty
//	heap primary          key: pk               value: row pointer (6 bytes)
//	HeapRowPointer sec.   key: cols + pointer   value: empty
//	HeapPrimaryKey sec.   key: cols + pk        value: empty
//
// A secondary key always ends with what identifies the row, so entries are
// unique even when the index is not; a unique index checks for another
// entry with the same columns before it writes (NULLs never collide, as in
// SQL).
type index struct {
	id      int // the index's number in the database (Meter.Index)
	name    string
	tree    *btree.Tree
	cols    []int // key columns
	unique  bool
	primary bool
	carry   int
	// has[c] says whether an entry holds column c, so that a scan that
	// wants only such columns is index-only.
	has []bool
}

// covers reports whether entries of ix hold every column of want.
func (ix *index) covers(want []int) bool {
	for _, c := range want {
		if !ix.has[c] {
			return false
		}
	}
	return true
}
