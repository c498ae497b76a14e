package store

import "github.com/enginelab/enginelab/cache/page"

// Store is the durable page store behind the buffer pool (and behind the
// remote tier, when there is one). Implementations are safe for concurrent
// use.
//
// A Store keeps whole page images. It does not interpret them beyond the
// header: ReadPage verifies the checksum and the page id, WritePage expects a
// sealed image (see page.Seal).
type Store interface {
	// PageSize is the size of every page in the store.
	PageSize() int
	// ReadPage copies page id into buf (len(buf) == PageSize()). It returns
	// an error matching ErrPageNotFound if the page was never written, and
	// one matching page.ErrCorruptPage if the stored image does not verify.
	ReadPage(id page.ID, buf []byte) error
	// WritePage stores a sealed image of page id. The write is durable only
	// after a later Sync returns.
	WritePage(id page.ID, buf []byte) error
	// Sync makes every write that returned before it durable.
	Sync() error
	// Close releases the store. Unsynced writes may be lost.
	Close() error
}
