// Package redo is the redo log: the durable stream of mini-transaction
// records that makes page changes survive a crash, and the format of those
// records.
//
// A mini-transaction (cache.Mtr) changes pages in the buffer pool and,
// as it changes them, says what it did, operation by operation, into its
// record (Builder); when it commits, it appends the record to the Log
// (Append), which gives it its LSN. The pool flushes the log before
// it writes a page (Flush: the write-ahead rule); a committing transaction
// makes its records durable with SyncTo, which concurrent callers share
// (group commit). After a crash, recovery scans the log from the
// checkpoint (Scan), decodes each record (Decode) and applies each page's
// part to the page (cache.Pool.Redo, which calls PageRedo.Apply).
//
//	lg, err := redo.Open(st, nil)                  // st: a *store.PebbleStore
//	pool, err := cache.NewPool(st, nil, &cache.Wiring{Log: lg})
//	mt := pool.BeginMtr(m)                         // ... mt.Write(pg, off, b) ...
//	lsn := mt.Commit()                             // Append the record
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
//	|  length  |  CRC-32C |  body: the record (Builder)  |
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
// A record is one mini-transaction: the operations it did to pages, in
// the order it did them, and notes for the layer above (the engine's
// transaction records), atomic with the page changes. There is no count
// and no end marker: the frame's length bounds the record, and its
// CRC-32C catches one cut short. All integers are unsigned varints.
//
//	+-------------+-------------+-----+-------------+
//	| operation 1 | operation 2 | ... | operation n |   notes among them
//	+-------------+-------------+-----+-------------+
//
//	an operation naming its page (top bit of the first byte clear):
//	+--------+---------+---------+---------+------------------+
//	|  kind  |  space  | page no | length  | payload          |
//	|  (1B)  | uvarint | uvarint | uvarint | length B         |
//	+--------+---------+---------+---------+------------------+
//
//	an operation on the page of the operation before it (top bit set):
//	+-----------+---------+------------------+
//	| kind|0x80 | length  | payload          |
//	|   (1B)    | uvarint | length B         |
//	+-----------+---------+------------------+
//
//	a note (names no page, never flagged; an operation after it may still
//	be flagged for the page before it):
//	+--------+---------+------------------+
//	|   1    | length  | note bytes       |
//	+--------+---------+------------------+
//
// For example, mt.Write32(pg, 100, 0xdeadbeef) on page 1:7 and then
// mt.Memset(pg, 200, 5, 9) on the same page are the 15 bytes
//
//	03 01 07 05 64 ef be ad de    write, space 1, page 7, 5 bytes: offset 100, the value
//	84 04 c8 01 05 09             memset, same page, 4 bytes: offset 200, length 5, byte 9
//
// The kind byte's low seven bits are the kind. Kind 0 is never valid (a
// body of zeros does not decode), and the layers own ranges of the rest,
// each registering its kinds with Register and the function that redoes
// them:
//
//	 1 ..  31  cache: the five below (the pool's own pages, space meta
//	           pages and free pages, need no more); 6 .. 31 unassigned
//	32 ..  63  btree: node operations
//	64 ..  95  heap: slotted page operations
//	96 .. 127  engine: undo pages, transaction records
//
// The kinds this package owns and applies itself (payload fields in
// order):
//
//	1 note     the layer above's bytes
//	2 init     1 byte, the page kind: the page is formatted from nothing
//	           (page.Init: zeros and a header naming the page and kind)
//	3 write    offset, then the bytes to write there
//	4 memset   offset, length, the byte to fill with
//	5 memmove  destination, source, length: bytes move within the page
//	           (the ranges may overlap, as in memmove)
//
// Decode groups a record's operations by page, keeping each page's in
// order (PageRedo); a page whose first operation is init is fresh, and
// redo may create it where the store never had it. Operations do not
// write the checksum or the LSN: redo sets the LSN from the record, and
// the pool seals the checksum when it writes the page.
//
// Why operations, and why two sorts. The pool's own pages (a space's meta
// page, a free page's link) change a few fixed fields at a time, so their
// operations are physical and compact, in MariaDB 10.5's style (its
// WRITE, MEMSET and MEMMOVE records and the same_page flag in the first
// byte; MariaDB packs the length into that byte and makes offsets
// relative to the previous operation, where this format spends a byte or
// two more on a plain uvarint length and absolute offsets). A Write32 is
// 9 bytes. The layers' pages (B+tree nodes, heap pages) are changed by
// operations that move many bytes for a little information: an insert
// shifts a slot array, moves free space and bumps counters. Those are
// logged logically, as the layer's own kind with the operation's
// arguments, and replayed by the same code that did the operation, so a
// record holds an insert's key and value, not the bytes a diff of the
// page would find. MariaDB 10.5 does the same for its index and undo
// pages (EXTENDED records: INSERT_HEAP_DYNAMIC, DELETE_ROW_FORMAT_DYNAMIC,
// UNDO_APPEND).
//
// Either sort, redo of an operation reads only its own page, as the
// records before it left that page, and the operation's payload: no other
// page, no catalog, no undo (InnoDB's logical records before 10.5, such
// as MLOG_COMP_REC_INSERT, carried a description of the index's fields
// for that; here the page says everything redo needs). So pages are
// redone independently, in any order across pages, each skipping the
// records its LSN says it already holds, and a layer's redo function
// must change the page exactly as the logged operation did given the same
// earlier page. The cost is that a change the code does not log is lost:
// cache.VerifyRedo, on in the tests, replays every mtr's record on copies
// of its pages and panics at the first page that comes out different.
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
