package heap_test

import (
	"fmt"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/enginelab/enginelab/heap"
)

func ExampleHeap() {
	st, err := store.OpenPebble(store.PebbleOptions{}) // in memory, 16 KiB pages
	if err != nil {
		panic(err)
	}
	defer st.Close()
	pool, err := cache.NewPool(st, &cache.Options{PoolSize: 1 << 20}, nil)
	if err != nil {
		panic(err)
	}
	var m heap.Meter
	h, err := heap.Create(&m, pool, 1)
	if err != nil {
		panic(err)
	}

	alice, _ := h.Insert(&m, []byte("alice"))
	bob, _ := h.Insert(&m, []byte("bob"))
	row, _ := h.Fetch(&m, bob, nil)
	fmt.Println(alice, bob, string(row))

	// Update keeps a row in place when it fits in its page; a row that
	// has to move gets a new pointer, which the caller stores instead.
	bob, _ = h.Update(&m, bob, []byte("robert"))
	fmt.Println(bob)

	// Rows longer than a quarter of the page body are refused.
	_, err = h.Insert(&m, make([]byte, h.MaxRowSize()+1))
	fmt.Println(err)

	_ = h.Delete(&m, alice)
	_, err = h.Fetch(&m, alice, nil)
	fmt.Println(err)

	s := h.NewScan(&m)
	for s.Next() {
		fmt.Printf("%s %q\n", s.Ptr(), s.Row())
	}
	if err := s.Close(); err != nil {
		panic(err)
	}
	fmt.Printf("fetches %d, rows scanned %d, heap page requests %d\n",
		m.HeapFetches, m.HeapRowsScanned, m.PageRequests[page.KindHeap])
	// Output:
	// (2,0) (2,1) bob
	// (2,1)
	// heap: row too large: 4086 bytes, at most 4085 (a quarter of the body of a 16384-byte page)
	// heap: row not found: (2,0) in space 1: slot 0 is deleted
	// (2,1) "robert"
	// fetches 2, rows scanned 1, heap page requests 7
}
