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
// part to the page (cache.Pool.Redo, which calls PageRedo.Apply). The log
// keeps its own segment files, recycled once a checkpoint passes them, and
// the checkpoint record in its own control file.
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
// The package imports page and store (and pebble's vfs, the store's
// filesystem) only: the buffer pool, which owns the mini-transaction,
// imports it.
//
// # The log's files
//
// The log lives in the database directory's redo/ (on the store's
// filesystem: an in-memory store's memory filesystem, a test's crashable
// one), apart from pebble: a record is written once, to its segment,
// instead of flowing through pebble's WAL, memtable and compactions.
//
//	<database>/redo/checkpoint          the control file (below)
//	<database>/redo/0000000000000000    a segment: its first LSN, 16 hex
//	<database>/redo/0000000000c00000    digits, so that names sort in LSN
//	...                                 order; Open checks that the live
//	                                    ones follow each other
//
// The stream is a sequence of fixed-size segments. A segment's LSN range
// is [first LSN, first LSN + size), its file's bytes are that range (an
// LSN is its byte's segment's first LSN plus its offset in the file), and
// the next segment starts where it ends. Segments are LogOptions.Capacity
// / 8 each (the default capacity, DefaultCapacity, is MariaDB 10.5's
// innodb_log_file_size default of 96 MiB: 12 MiB segments), clamped to
// [1 MiB, 64 MiB]; a capacity under 8 MiB (tests) gets capacity/8, at
// least 32 KiB (MinSegmentSize). A new segment file is created under a
// temporary name, filled with zeros to its full size, synced and renamed
// before it is used, as PostgreSQL zero-fills a new WAL segment
// (XLogFileInit), so that a sync need not update the file's size; on a
// memory filesystem, which has no blocks to allocate, it grows as it is
// written instead.
//
//	segment file
//	0          32                                             size
//	+----------+--------+--------+-----+--------+--------------+
//	|  header  | frame  | frame  | ... | frame  | zeros, or a  |
//	|          |        |        |     |        | previous     |
//	|          |        |        |     |        | cycle's bytes|
//	+----------+--------+--------+-----+--------+--------------+
//	 LSN first   first+32 ...
//
//	header (32 bytes, little-endian)
//	0        4        6        8                16               24       28       32
//	+--------+--------+--------+----------------+----------------+--------+--------+
//	| magic  | version| zero   | first LSN      | size           | chain  | CRC-32C|
//	| "EELR" | 1 (u16)| (u16)  | (u64)          | (u64, header   | in     | of     |
//	| (u32)  |        |        |                | included)      | (u32)  | 0..28  |
//	+--------+--------+--------+----------------+----------------+--------+--------+
//
// A frame is one record: an 8-byte header and the record's body, opaque
// here (Encode's):
//
//	0          4          8
//	+----------+----------+------------------------------+
//	|  length  |  CRC-32C |  body: the record (Builder)  |
//	|  (u32)   |   (u32)  |  length - 8 bytes            |
//	+----------+----------+------------------------------+
//	  length: the frame's, header included (never 0)
//	  CRC-32C of: body ‖ LSN (u64) ‖ length (u32) ‖ chain (u32)
//
// The frame's LSN is not stored: it is its place, and the checksum covers
// it, as pebble's recyclable WAL chunks carry their log number and
// PostgreSQL's WAL pages their address (xlp_pageaddr). A recycled file
// still holds its previous cycle's frames, intact, but at other LSNs:
// they fail the checksum where they now lie. chain is the checksum of the
// frame before (for a segment's first frame, its header's chain in, the
// checksum of the last frame before the segment; 0 for the log's very
// first segment), as PostgreSQL's records carry the address of the record
// before (xl_prev): after a crash the log continues over its torn tail,
// and an intact frame left past the new records from before the crash
// chains to a frame that is no longer there.
//
// A frame never spans two segments: one that does not fit in the rest of
// the current segment starts the next; the rest is written as zeros (a
// frame larger than a whole segment gets a segment of its own, as large as
// it needs). Reading the log (Open, Scan) ends at the first frame that
// does not verify: a bad checksum (a torn write, a previous cycle's frame),
// a zero or impossible length. There the next segment continues the log
// only if its header names its own LSN and carries the chain value
// reached; otherwise that frame is the log's end, and the next Append
// writes there.
//
// Writing. Records are appended to a buffer holding the stream's bytes
// (headers and a switch's zeros included); a write copies the buffer into
// its segments (pwrite), and a sync fdatasyncs the files written since the
// last one. A group commit's leader writes the buffer and syncs (SyncTo);
// Flush syncs too (the write-ahead rule: the log's files and the store's
// are synced apart, so only a sync orders them). A volatile store's files
// are neither synced nor zero-filled.
//
// After every sync the log records how far it is durable in the store,
// under the metadata key 'm' "logsync" (8 bytes), unsynced. Pebble keeps
// its writes in order and a page is written only after the sync covering
// it, so a page that survives a crash comes with a record at least as far
// as the records it depends on: a log that ends before that point has lost
// synced records (damage, an error naming the segment), not a torn tail;
// pebble's WAL records how far it was synced for the same purpose
// (FormatWALSyncChunks). Damage past both that point and the last
// checkpoint's log end reads as the log's end.
//
// Recycling. Checkpointed(lsn, keep) renames every segment wholly below
// keep (but the one holding the end) to the next future segment's name;
// the log overwrites it when it gets there. The log never overwrites a
// segment that holds records at or after keep: when it needs a segment
// and no spare is left, it creates one, and a file past the capacity
// counts as an overrun (LogStats.Overruns). Keeping the checkpoint age
// (Age) below Capacity is the caller's: it flushes pages and checkpoints.
//
// The capacity may change from one Open to the next, and the segment
// size with it (Capacity/8). New segments then have the new size, a
// spare of the new size is renamed to the next segment's name, and old
// segments are removed once recycled rather than kept. The new segments'
// starts then no longer fall on the spares' names, as they do not after
// a segment made larger for one large frame either: every spare whose
// name the log is about to pass, but the one it takes, is removed before
// the segment that passes it is written (segmentFile). Left there, a file
// whose header names another segment would lie inside the log. Open
// passes over such a file if it meets one (a directory written before
// the log removed them) and removes it: none of its frames verifies at
// its name's LSNs. A file there whose header does not verify at all is
// damage, an error naming it.
//
// # The control file
//
// redo/checkpoint holds the layer above's checkpoint record (opaque, at
// most MaxCheckpointRecord bytes) in two 512-byte slots, written in turn
// and synced, as InnoDB writes its two checkpoint blocks: a crash while
// one is written leaves the other. The valid slot with the larger number
// wins; neither valid is an error naming the file. logEnd is the log's
// durable end when the slot was written: Open reads from the segment
// holding it, and a log that ends before it is damage.
//
//	slot (512 bytes, little-endian; slot n%2 at offset 512·(n%2))
//	0        4        6        8                16               24       28             508      512
//	+--------+--------+--------+----------------+----------------+--------+-------------+--------+
//	| magic  | version| flags  | number n (u64) | logEnd (u64)   | reclen | record,     | CRC-32C|
//	| "EELC" | 1 (u16)| bit 0: |                |                | (u32)  | zero-padded | of     |
//	| (u32)  |        | record |                |                |        |             | 0..508 |
//	+--------+--------+--------+----------------+----------------+--------+-------------+--------+
//
// A new log's control file (slot 0: no record, logEnd FirstLSN) is
// written under a temporary name and renamed once synced, so a crash
// leaves a whole one or none. No control file and no segments is a new
// log, unless the store holds pages: then the log was lost (an error).
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
// writes, syncs and file operations are ordered by another, and the first
// is never held during a file operation. A caller waiting for another's
// sync waits through LogOptions.Waiter, and the caller leading a sync
// calls its SyncStart first, holding no lock (the simulator prices the
// sync there and parks simulated transactions in Wait; RealWaiter blocks
// and does nothing at a sync's start). Flush calls neither: the pool calls
// it with a frame's I/O mutex held. Close refuses further writes; records
// appended but not yet written are lost, as in a crash. The bodies Scan
// hands out, and the slices Decode returns, are valid only during the call
// (Scan) or while the body lives (Decode). Scan reads the files and must
// not run beside Checkpointed (which renames them): recovery scans before
// the database is used.
//
// # Caveats
//
// A damaged log is an error matching page.ErrCorrupt (ErrCorruptLog, or
// the error of a file operation, which names the file), never a panic.
// Damage past the last checkpoint's log end and past the store's record
// of the log's sync reads as the log's end, as a torn tail does: the
// frames carry no promise of how far they were synced. So does a lost last
// segment whose successor was never written. A log on a volatile store (store.PebbleOptions.Volatile) needs
// LogOptions.Volatile: nothing survives the process.
package redo
