package cache_test

import (
	"fmt"
	"log"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/cache/store"
)

// ExamplePool opens an in-memory store, puts a buffer pool in front of it,
// creates a space, writes a page and reads it back, and counts the work.
func ExamplePool() {
	st, err := store.OpenPebble(store.PebbleOptions{PageSize: 4096})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()

	pool, err := cache.NewPool(st, &cache.Options{PoolSize: 1 << 20}, nil) // 256 frames
	if err != nil {
		log.Fatal(err)
	}
	var m cache.Meter // this "transaction's" costs
	if err := pool.CreateSpace(&m, 1); err != nil {
		log.Fatal(err)
	}

	// Every page change happens in a mini-transaction. A new page comes
	// back pinned and exclusively latched by the mtr.
	mt := pool.BeginMtr(&m)
	pg, err := pool.AllocPage(mt, nil, 1, page.KindHeap)
	if err != nil {
		log.Fatal(err)
	}
	mt.Write(pg, page.HeaderSize, []byte("hello, page")) // changed, and logged
	id := pg.ID()
	mt.Release(pg, true) // changed: the mtr keeps it latched until Commit
	mt.Commit()          // dirty: written out before its frame is reused

	// Read it back under the shared latch.
	pg, err = pool.Fetch(&m, id)
	if err != nil {
		log.Fatal(err)
	}
	pg.RLatch()
	fmt.Printf("page %s (%s): %s\n", id, page.KindOf(pg.Data()), pg.Data()[page.HeaderSize:page.HeaderSize+11])
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
	// background: flushes=2 store-writes=2 store-write-bytes=8192 store-syncs=1
}

// ExampleMtr changes a page in a mini-transaction with a redo log attached,
// makes its record durable, and reads the record back as recovery would.
func ExampleMtr() {
	st, err := store.OpenPebble(store.PebbleOptions{PageSize: 4096})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	// The log lives in the store's pebble database; the pool is given it
	// for its life.
	wal, err := redo.Open(st, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer wal.Close()
	pool, err := cache.NewPool(st, &cache.Options{PoolSize: 1 << 20}, &cache.Wiring{Log: wal})
	if err != nil {
		log.Fatal(err)
	}

	var m cache.Meter
	if err := pool.CreateSpace(&m, 1); err != nil { // one record: the new meta page
		log.Fatal(err)
	}
	mt := pool.BeginMtr(&m)
	pg, err := pool.AllocPage(mt, nil, 1, page.KindHeap)
	if err != nil {
		log.Fatal(err)
	}
	mt.Write(pg, page.HeaderSize, []byte("hello, log")) // one write operation in the record
	mt.Release(pg, true)
	mt.Note([]byte("txn 1 commits")) // for the layer above, atomic with the page changes
	lsn := mt.Commit()               // one record: the new page's and the meta page's operations, the note
	if err := wal.SyncTo(&m.Counts, lsn+1); err != nil {
		log.Fatal(err)
	}
	fmt.Println("durable:", wal.Durable() > lsn)

	err = wal.Scan(lsn, func(lsn uint64, body []byte) error {
		pages, note, err := redo.Decode(body, nil)
		if err != nil {
			return err
		}
		for _, pr := range pages {
			fmt.Printf("LSN %d: page %s fresh=%v\n", lsn, pr.ID, pr.Fresh)
		}
		fmt.Printf("LSN %d: note %q\n", lsn, note)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("records=%d syncs=%d\n", m.LogRecords, m.LogSyncs)
	// The log's first segment starts with its 32-byte header, so the first
	// record is at LSN 32 (redo.FirstLSN); it (CreateSpace: the meta page
	// formatted, its header written) is 24 bytes, 32 with its frame, so
	// this one is at LSN 32+32.
	// Pages come in the order of their first operation: AllocPage formats
	// the new page before it moves the meta page's high-water mark.

	// Output:
	// durable: true
	// LSN 64: page 1:1 fresh=true
	// LSN 64: page 1:0 fresh=false
	// LSN 64: note "txn 1 commits"
	// records=2 syncs=1
}
