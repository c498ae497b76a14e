package cache_test

import (
	"fmt"
	"log"

	"github.com/enginelab/enginelab/cache"
)

// ExamplePool opens an in-memory store, puts a buffer pool in front of it,
// creates a space, writes a page and reads it back, and counts the work.
func ExamplePool() {
	store, err := cache.OpenPebbleStore(cache.PebbleOptions{PageSize: 4096})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	pool, err := cache.NewPool(store, &cache.Options{Capacity: 1 << 20}) // 256 frames
	if err != nil {
		log.Fatal(err)
	}
	var m cache.Meter // this "transaction's" costs
	if err := pool.CreateSpace(&m, 1); err != nil {
		log.Fatal(err)
	}

	// A new page comes back pinned and exclusively latched.
	pg, err := pool.AllocPage(&m, nil, 1, cache.KindHeap)
	if err != nil {
		log.Fatal(err)
	}
	copy(pg.Data()[cache.HeaderSize:], "hello, page")
	id := pg.ID()
	pg.Unlatch()
	pg.Unpin(true) // dirty: written out before its frame is reused

	// Read it back under the shared latch.
	pg, err = pool.Fetch(&m, id)
	if err != nil {
		log.Fatal(err)
	}
	pg.RLatch()
	fmt.Printf("page %s (%s): %s\n", id, cache.PageKind(pg.Data()), pg.Data()[cache.HeaderSize:cache.HeaderSize+11])
	pg.RUnlatch()
	pg.Unpin(false)
	// Two misses (the new meta page and the new page, neither read from
	// the store), two hits (the meta page for AllocPage, the page for
	// Fetch) and one store read: CreateSpace looking for an existing space.
	fmt.Println(m.String())

	// Close writes the dirty pages out and syncs the store.
	if err := pool.Close(); err != nil {
		log.Fatal(err)
	}
	bg := pool.BackgroundMeter()
	fmt.Println("background:", bg.String())
	// Output:
	// page 1:1 (heap): hello, page
	// req.meta=2 req.heap=2 hits=2 creates=2 store-reads=1
	// background: flushes=2 store-writes=2 store-write-bytes=8192
}
