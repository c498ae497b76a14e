// Package store keeps the database's pages durably: the Store interface the
// buffer pool reads and writes whole page images through, and PebbleStore,
// the Store on a pebble database that also holds the redo log.
//
// # Basics
//
// A Store maps a page.ID to a sealed page image of the database's one page
// size. ReadPage verifies what it reads (checksum, length, the id in the
// header) and never returns damaged bytes; WritePage stores an image, which
// is durable once a later Sync returns.
//
//	st, err := store.OpenPebble(store.PebbleOptions{Dir: dir}) // or {} in memory
//	if err != nil { ... }                                      // a *CorruptError if damaged
//	defer st.Close()
//	buf := make([]byte, st.PageSize())
//	page.Init(buf, id, page.KindHeap)
//	page.Seal(buf)
//	err = st.WritePage(id, buf)
//	err = st.Sync()                                            // now durable
//	err = st.ReadPage(id, buf)                                 // ErrPageNotFound, page.ErrCorruptPage
//
// One pebble database holds the pages and a few metadata records (the
// page size, the database's identity, and the redo log's record of how
// far it was synced). The redo log keeps its own files in the database
// directory, on the store's filesystem (FS); pebble's order with the pages
// is kept by that record (package redo). The key layout is drawn in
// pebble.go.
//
// Identity returns the database's random id and the number of this open
// (its epoch): the remote tiers key pages with both, so that no other
// database and no earlier open can hand a page back.
//
// # Damaged files
//
// Every call into pebble crosses one boundary (PebbleStore.enter): pebble's
// corruption errors, files it expected and did not find, its panics and its
// fatal errors become a *CorruptError, which names the directory and
// matches page.ErrCorrupt; after one, the store refuses every call with
// that same error. Opening also checks what pebble would let through: a
// lost MANIFEST marker, and a MANIFEST cut short or altered (against a
// witness the store keeps beside it, witness.go). PebbleStore's comment
// tells the whole story and what no check can see.
//
// # Concurrency and lifetimes
//
// A PebbleStore is safe for concurrent use. Close waits for the reads and
// writes in flight and refuses later ones with ErrClosed; it flushes
// pebble's memtable first, so that a database closed cleanly does not need
// its WAL. A store that has failed is left to the process's exit rather
// than closed, if pebble's own state is in doubt.
//
// # Memory
//
// The store's own memory is its budget: pebble's memtables (up to two of
// PebbleOptions.MemTableSize, one filling while the other is flushed:
// MemTableBudget) and its block cache (PebbleOptions.BlockCacheSize).
// The defaults are 64 MiB memtables on a directory, 16 MiB in memory
// (where a flush is a copy within memory and the memtables hold bytes the
// files will hold again), and an 8 MiB cache (the buffer pool is the
// cache being measured). An in-memory store's files are in a MemFS: in
// chunks mapped outside Go's heap, never grown by copying, released when
// pebble deletes a file and its last reader closes it (kept for the next
// writes up to a quarter of what the files hold, unmapped beyond that);
// MemoryBytes says how much the files hold. memfs.go tells why pebble's vfs.NewMem was not
// kept.
//
// # Caveats
//
// A volatile store (PebbleOptions.Volatile) runs pebble without its WAL:
// fast, and nothing survives the process, which is all an in-memory store
// promises anyway. A WAL cut short or deleted cannot be told from a crash:
// the writes only it held are lost, the latest first.
package store
