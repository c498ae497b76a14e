// Package redo is the redo log: the durable stream of mini-transaction
// records that makes page changes survive a crash, and the format of those
// records.
//
// A mini-transaction (cache.Mtr) changes pages in the buffer pool; when it
// commits, it encodes what it changed (Encode) and appends the record to
// the Log (Append), which gives it its LSN. The pool flushes the log before
// it writes a page (Flush: the write-ahead rule); a committing transaction
// makes its records durable with SyncTo, which concurrent callers share
// (group commit). After a crash, recovery scans the log from the
// checkpoint (Scan), decodes each record (Decode) and applies each page's
// part to the page (cache.Pool.Redo, which calls PageRedo.Apply).
//
//	lg, err := redo.Open(st, nil)                  // st: a *store.PebbleStore
//	pool, err := cache.NewPool(st, nil, &cache.Wiring{Log: lg})
//	mt := pool.BeginMtr(m)                         // ... changes pages ...
//	lsn := mt.Commit()                             // Encode, Append
//	err = lg.SyncTo(&m.Counts, lsn+1)              // durable
//	err = lg.Scan(from, func(lsn uint64, body []byte) error {
//		pages, note, err := redo.Decode(body, nil)
//		...
//	})
//
// The package imports page and store only: the buffer pool, which owns the
// mini-transaction, imports it.
//
// # The log's framing
//
// The stream is a sequence of frames, one per record; a record's LSN is
// the offset of its frame in the stream, which starts at FirstLSN (8: LSN 0
// means "never logged" in a page header). A frame is an 8-byte header and
// the record's body:
//
//	0          4          8
//	+----------+----------+------------------------------+
//	|  length  |  CRC-32C |  body: the record (Encode)   |
//	|  (u32)   |   (u32)  |  length bytes                |
//	+----------+----------+------------------------------+
//	             checksum of the body only; integers little-endian
//
// The buffer reaches pebble in chunks: each write of the buffer (Flush,
// SyncTo, MaybeWrite once it holds LogOptions.BufferBytes) is one pebble
// key whose value is the frames it held, back to back. A chunk never
// splits a frame. The key is the byte 'l' (store.PrefixLog) and the
// chunk's first LSN, big-endian, so that chunks sort in LSN order:
//
//	key (9 bytes)                  value
//	+-----+------------------+     +---------+---------+-----+---------+
//	| 'l' | first LSN (u64,  |     | frame @ | frame @ | ... | frame @ |
//	|     | big-endian)      |     | LSN c   | c+8+n1  |     | ...     |
//	+-----+------------------+     +---------+---------+-----+---------+
//
//	stream:  8 ...... c1 ...... c2 ...... c3 ...... end
//	         [chunk 8 ][chunk c1][chunk c2][buffer ]
//	         the next chunk starts where the previous ends: Open checks it
//
// Checkpointed deletes the chunks wholly below the oldest record recovery
// still needs; the layer above's checkpoint record is kept beside the log
// under the metadata key 'm' "ckpt" (SaveCheckpoint, LoadCheckpoint).
//
// # The record
//
// A record is one mini-transaction: every page it changed, each as the
// byte ranges that differ between the page before and after, and a note
// for the layer above (the engine's transaction records), atomic with the
// page changes. All integers are unsigned varints:
//
//	+---------+----------------------+-----+----------------------+---------+-------------+
//	| npages  | page 1               | ... | page npages          | notelen | note        |
//	| uvarint |                      |     |                      | uvarint | notelen B   |
//	+---------+----------------------+-----+----------------------+---------+-------------+
//
//	page i:
//	+---------+---------+-------+---------+---------------+-----+---------------+
//	| space   | page no | flags | nranges | range 1       | ... | range nranges |
//	| uvarint | uvarint | (1B)  | uvarint |               |     |               |
//	+---------+---------+-------+---------+---------------+-----+---------------+
//	  flags bit 0: fresh, the ranges are against a zero page (redo starts
//	  the page from zeros); the other bits are written 0 and not read
//
//	range j:
//	+---------+---------+----------------+
//	| gap     | length  | bytes          |
//	| uvarint | uvarint | length B       |
//	+---------+---------+----------------+
//	  gap: from the end of range j-1 (from byte 0 of the page for j = 1)
//	  to the range's first byte; bytes: the page's new bytes there
//
// The page header's checksum and LSN are never in a range (a fresh page's
// LSN may be, and is overwritten): redo sets the LSN from the record, and
// the pool seals the checksum when it writes the page.
//
// # Concurrency and lifetimes
//
// A Log is safe for concurrent use: Append orders records under one mutex,
// chunk writes are ordered by another, and neither is held during a sync.
// A caller waiting for another's sync waits through LogOptions.Waiter, and
// the caller leading a sync calls its SyncStart first, holding no lock (the
// simulator prices the sync there and parks simulated transactions in
// Wait; RealWaiter blocks and does nothing at a sync's start). Close refuses further
// writes; records appended but not yet written are lost, as in a crash.
// The bodies Scan hands out, and the slices Decode returns, are valid only
// during the call (Scan) or while the body lives (Decode).
//
// # Caveats
//
// Every pebble call goes through the store's boundary: a damaged log is an
// error matching page.ErrCorrupt (ErrCorruptLog for a frame or record that
// does not verify or decode), never a panic. A log on a volatile store
// (store.PebbleOptions.Volatile) needs LogOptions.Volatile: its syncs are
// no-ops and nothing survives the process.
package redo
