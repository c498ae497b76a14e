// Package page is the one thing every layer of the database agrees on: what
// a page looks like at its start. It defines the 32-byte page header (page.go
// draws it), the page kinds, page ids, the allowed page sizes, the page
// checksum (CRC-32C) with Seal and Verify, the class of errors that
// damaged files cause (ErrCorrupt) and the error every refused option wraps
// (ErrInvalidOptions). It imports nothing of this module, so that the
// store, the redo log, the buffer pool, the tiers and the access methods
// above can all share it.
//
// # Basics
//
// A database has one page size, a power of two from MinSize (4 KiB) to
// MaxSize (64 KiB), DefaultSize (16 KiB) unless chosen otherwise. A page is
// named by an ID: the space it belongs to and its number there. Every page
// starts with the header; the bytes from HeaderSize on belong to the layer
// that owns the page (a B+tree node, a heap page, a space's meta page).
//
//	buf := make([]byte, page.DefaultSize)
//	id := page.ID{Space: 3, Page: 17}
//	page.Init(buf, id, page.KindHeap)        // zeroed, header written
//	copy(buf[page.HeaderSize:], "row data")
//	page.SetLSN(buf, lsn)                     // the change's log record
//	page.Seal(buf)                            // checksum, just before a write
//	err := page.Verify(id, buf, len(buf))     // after a read: ErrCorruptPage?
//
// The header repeats the page's own id, so that Verify catches a page
// written to the wrong place, and carries the LSN of the last logged change,
// which the buffer pool reads to honour the write-ahead rule and to judge
// copies of a page coming back from a tier.
//
// # Damaged files
//
// ErrCorrupt is the class of every error that damaged files cause, in any
// layer; NewCorruptKind makes a kind of it (ErrCorruptPage here,
// redo.ErrCorruptLog, btree.ErrCorruptTree, ...) that matches both itself
// and the class with errors.Is.
//
// # Refused options
//
// ErrInvalidOptions is wrapped by every option a library object refuses,
// in any layer: a pool's, a store's, a tier backend's, a database's. The
// packages that validate options re-export it under the same name
// (cache.ErrInvalidOptions, engine.ErrInvalidOptions, ...); they are one
// value, so errors.Is against any of them matches a refusal from any layer.
//
// # Concurrency
//
// The functions here work on the byte slice they are given and keep no
// state. Callers that share a page's bytes (the buffer pool's frames) guard
// them with the page's latch: read the header under a shared latch, change
// it under the exclusive one.
//
// # Caveats
//
// In memory, a page's checksum is stale: it is set by Seal on the copy
// about to be written, and nobody reads it before Verify on the way back in.
// KindOf, LSN and IDOf do not check anything; a page read from outside the
// process is trusted only after Verify.
package page
