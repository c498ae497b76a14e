// Package slab models memcached's memory as memcached manages it, for the
// releases Waffle Grid used and the one installed here: its item header
// (struct _stritem), an item's size (ITEM_ntotal), the slab classes
// (slabs_init: from the smallest chunk, by the growth factor), the chunks
// a 1 MiB slab page holds, the slab pages the memory limit allows
// (do_slabs_newslab), and an LRU per class whose tail is evicted when a
// class has no chunk left (do_item_alloc). The pointer size of the build
// is a parameter: it sizes the header, and so every chunk.
//
//	item = header + key + NUL + suffix + value + "\r\n" (+ CAS)
//	                                   │
//	slabs_clsid ──► class k: chunk_size, chunks_per_page = 1 MiB / chunk
//	                │
//	                └─ slab pages while the limit allows ─► then evict the
//	                   class's LRU tail
//
// For a 16 KiB page (the numbers the tests check, and Waffle Grid's
// published ones):
//
//	release  build   header  smallest  chunk   per page  pages in 768 MiB  items
//	1.2.5    32-bit  40      88        17,192  60        780               46,800
//	1.3.2    32-bit  32      80        20,176  51        782               39,882
//	1.3.2    64-bit  48      96        17,352  60        773               46,380
//	1.6.18   64-bit  48      96        17,352  60        768               46,080
//
// (1.6 takes a whole 1 MiB for every slab page, 1.2 and 1.3 only the
// chunks'.) Params holds a server's release, pointer size and settings;
// Memcached125, Memcached132 and Memcached1618 make them. Server is the
// model itself, keys and sizes only, reporting memcached's "stats" and
// "stats slabs" counters; Tier is a tier.Tier over a Server that keeps the
// pages, so the pool can run against a memcached of a given release
// deterministically, in process. Params.MRUPatch is Waffle Grid's patch
// to memcached: a GET moves the item to the eviction end of its LRU.
//
// The test against a real server (skipped, with one line saying why,
// without a memcached binary; failed instead under CI=true) SETs pages
// into a memcached it starts, and compares its "stats" and "stats slabs"
// with the model's at that server's growth factor and pointer size.
//
// Not modelled: expiry, 1.6's segmented LRU (HOT, WARM, COLD: see
// tier/slru) and its moving of slab pages between classes, items larger
// than a 1.6 slab chunk (split into chunks there), and refcounts (an item
// a request is sending is not evicted by memcached; here none is ever in
// flight).
package slab
