package btree_test

import (
	"fmt"

	"github.com/enginelab/enginelab/btree"
	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/store"
)

// Count the cost of an index lookup: a point get visits one node per level
// and, on a warm pool, reads nothing from the store.
func Example() {
	st, _ := store.OpenPebble(store.PebbleOptions{}) // in memory, 16 KiB pages
	defer st.Close()
	pool, _ := cache.NewPool(st, &cache.Options{PoolSize: 8 << 20}, nil)
	tree, _ := btree.Create(nil, pool, 1)

	for i := 0; i < 5000; i++ {
		key := fmt.Appendf(nil, "customer-%05d", i)
		_ = tree.Insert(nil, key, fmt.Appendf(nil, "row %d", i))
	}

	var m btree.Meter
	v, found, _ := tree.Get(&m, []byte("customer-04242"), nil)
	fmt.Printf("%s found=%v\n", v, found)
	fmt.Printf("nodes visited %d, store reads %d\n", m.NodeVisitsTotal(), m.StoreReads)

	// The largest key below a bound: an iterator with an exclusive upper
	// bound, positioned at its last entry.
	it := tree.NewIter(&m, &btree.IterOptions{Upper: btree.Excl([]byte("customer-01000"))})
	if it.Last() {
		fmt.Printf("below customer-01000: %s\n", it.Key())
	}
	_ = it.Close()
	// Output:
	// row 4242 found=true
	// nodes visited 2, store reads 0
	// below customer-01000: customer-00999
}
