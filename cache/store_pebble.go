package cache

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Key layout of the pebble database. One pebble database holds the pages
// and (from the engine on) the redo log, so that one filesystem and one sync
// order hold both.
//
//	'm' name            database metadata (page size, ...)
//	'p' space(4) page(4) a page image, big-endian so pages of a space sort in
//	                     page order and a space is one contiguous key range
//	'l' ...             reserved for the redo log
const (
	prefixMeta = 'm'
	prefixPage = 'p'
	// PrefixLog is the first key byte reserved for the engine's redo log.
	PrefixLog = 'l'
)

var (
	metaPageSizeKey = []byte{prefixMeta, 'p', 'a', 'g', 'e', 's', 'i', 'z', 'e'}
	metaIdentityKey = []byte{prefixMeta, 'i', 'd'}
)

// PebbleOptions configure a PebbleStore. The zero value is an in-memory
// store with 16 KiB pages.
type PebbleOptions struct {
	// Dir is the directory of the database. Empty means in memory
	// (vfs.NewMem), which is what tests and the default run use.
	Dir string
	// FS overrides the filesystem; nil means the real one for a Dir, a new
	// in-memory one otherwise. Tests pass vfs.NewCrashableMem here.
	FS vfs.FS
	// PageSize is the page size of a new database: a power of two from
	// 4 KiB to 64 KiB. Default (0) 16 KiB for a new database, and for an
	// existing one the size it was created with; asking an existing
	// database for another size is an error.
	PageSize int
	// BlockCacheSize is pebble's own block cache. Default 8 MiB: kept small
	// on purpose, because the buffer pool (and the remote tier) are the
	// caches this project measures; pebble's cache only keeps the store
	// from re-reading its index blocks.
	BlockCacheSize int64
	// Volatile runs an in-memory store (no Dir, no FS) without pebble's
	// WAL: nothing in this process's memory survives it anyway, and the
	// WAL only copies every write once more (a fifth of a TPC-C run's
	// time). Syncs become no-ops; a Log on it needs LogOptions.Volatile.
	Volatile bool
}

// PebbleStore is a Store on a pebble database.
type PebbleStore struct {
	db       *pebble.DB
	pageSize int
	// mu keeps Close from closing the database under a read or write in
	// flight: operations hold it shared, Close exclusively.
	mu       sync.RWMutex
	closed   bool // guarded by mu
	volatile bool // PebbleOptions.Volatile

	id, epoch uint64 // Identity
}

// Volatile says the store runs without pebble's WAL (PebbleOptions.Volatile):
// syncs are no-ops.
func (s *PebbleStore) Volatile() bool { return s.volatile }

// writeOpts is how a write that must be durable is written: synced, unless
// the store is volatile.
func (s *PebbleStore) writeOpts() *pebble.WriteOptions {
	if s.volatile {
		return pebble.NoSync
	}
	return pebble.Sync
}

var _ Store = (*PebbleStore)(nil)

// quietLogger drops pebble's informational chatter (compactions, WAL
// recycling) so that it never interleaves with reports. Errors still reach
// the caller through returned errors; a fatal error still stops the process.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebble: "+format, args...))
}

// OpenPebbleStore opens (creating if needed) a pebble-backed page store.
func OpenPebbleStore(o PebbleOptions) (*PebbleStore, error) {
	adopt := o.PageSize == 0
	if adopt {
		o.PageSize = DefaultPageSize
	}
	if !ValidPageSize(o.PageSize) {
		return nil, fmt.Errorf("%w: page size %d: want a power of two from %d to %d",
			ErrInvalidConfig, o.PageSize, MinPageSize, MaxPageSize)
	}
	if o.BlockCacheSize < 0 {
		return nil, fmt.Errorf("%w: pebble block cache size %d is negative", ErrInvalidConfig, o.BlockCacheSize)
	}
	if o.BlockCacheSize == 0 {
		o.BlockCacheSize = 8 << 20
	}
	if o.Volatile && (o.Dir != "" || o.FS != nil) {
		return nil, fmt.Errorf("%w: a volatile store takes no Dir and no FS", ErrInvalidConfig)
	}
	volatile := o.Volatile
	fs := o.FS
	if fs == nil {
		if o.Dir == "" {
			fs = vfs.NewMem()
		} else {
			fs = vfs.Default
		}
	}
	dir := o.Dir
	if dir == "" {
		dir = "enginelab"
	}
	popts := &pebble.Options{
		FS:        fs,
		CacheSize: o.BlockCacheSize,
		Logger:    quietLogger{},
		// A memtable larger than a checkpoint's worth of redo log lets
		// most log chunks die (DeleteRange at the checkpoint) before a
		// flush writes them to an sstable.
		MemTableSize: 64 << 20,
		DisableWAL:   volatile,
	}
	popts.EnsureDefaults()
	// Pages are stored as they are, as InnoDB stores them by default:
	// compressing every flushed and compacted block cost a third of the
	// CPU of a write-heavy run, for work the engine never asked for.
	for i := range popts.Levels {
		popts.Levels[i].Compression = func() *sstable.CompressionProfile { return sstable.NoCompression }
	}
	db, err := pebble.Open(dir, popts)
	if err != nil {
		return nil, fmt.Errorf("cache: open pebble store %q: %w", dir, err)
	}
	s := &PebbleStore{db: db, pageSize: o.PageSize, volatile: volatile}
	if err := s.checkPageSize(adopt); err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := s.openIdentity(); err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// Identity returns the database's id (random, chosen when the database was
// created) and the epoch of this open (1 for the first, one more at each
// open after). Remote tier keys carry both (TierKey).
func (s *PebbleStore) Identity() (id, epoch uint64) { return s.id, s.epoch }

// openIdentity reads the database's id and last epoch, or chooses an id
// for a new database, and records this open's epoch durably before any
// page can be pushed under it: an epoch is never used twice.
func (s *PebbleStore) openIdentity() error {
	var rec [16]byte
	v, closer, err := s.db.Get(metaIdentityKey)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
		if _, err := rand.Read(rec[:8]); err != nil {
			return fmt.Errorf("cache: choose database id: %w", err)
		}
	case err != nil:
		return fmt.Errorf("cache: read database id: %w", err)
	default:
		if len(v) != 16 {
			_ = closer.Close()
			return fmt.Errorf("%w: stored identity record is %d bytes", ErrBadFormat, len(v))
		}
		copy(rec[:], v)
		_ = closer.Close()
	}
	s.id = binary.LittleEndian.Uint64(rec[:8])
	s.epoch = binary.LittleEndian.Uint64(rec[8:]) + 1
	binary.LittleEndian.PutUint64(rec[8:], s.epoch)
	if err := s.db.Set(metaIdentityKey, rec[:], s.writeOpts()); err != nil {
		return fmt.Errorf("cache: record open epoch: %w", err)
	}
	return nil
}

// checkPageSize records the page size of a new database, or checks that an
// existing one was created with the same size (or adopts that size, if
// adopt).
func (s *PebbleStore) checkPageSize(adopt bool) error {
	v, closer, err := s.db.Get(metaPageSizeKey)
	if errors.Is(err, pebble.ErrNotFound) {
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], uint32(s.pageSize))
		return s.db.Set(metaPageSizeKey, b[:], s.writeOpts())
	}
	if err != nil {
		return fmt.Errorf("cache: read page size: %w", err)
	}
	defer closer.Close()
	if len(v) != 4 {
		return fmt.Errorf("%w: stored page size record is %d bytes", ErrBadFormat, len(v))
	}
	got := int(binary.LittleEndian.Uint32(v))
	if !ValidPageSize(got) {
		return fmt.Errorf("%w: stored page size %d is not a power of two from %d to %d",
			ErrBadFormat, got, MinPageSize, MaxPageSize)
	}
	if adopt {
		s.pageSize = got
		return nil
	}
	if got != s.pageSize {
		return fmt.Errorf("%w: page size %d asked for, database was created with %d",
			ErrInvalidConfig, s.pageSize, got)
	}
	return nil
}

// DB exposes the pebble database so that the engine can keep its redo log
// beside the pages (under PrefixLog).
func (s *PebbleStore) DB() *pebble.DB { return s.db }

// PageSize implements Store.
func (s *PebbleStore) PageSize() int { return s.pageSize }

// PageKey returns the pebble key of a page.
func PageKey(id PageID) [9]byte {
	var k [9]byte
	k[0] = prefixPage
	binary.BigEndian.PutUint32(k[1:], id.Space)
	binary.BigEndian.PutUint32(k[5:], id.Page)
	return k
}

// ReadPage implements Store.
func (s *PebbleStore) ReadPage(id PageID, buf []byte) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	k := PageKey(id)
	v, closer, err := s.db.Get(k[:])
	if errors.Is(err, pebble.ErrNotFound) {
		return fmt.Errorf("%w: page %s", ErrPageNotFound, id)
	}
	if err != nil {
		return fmt.Errorf("cache: read page %s: %w", id, err)
	}
	defer closer.Close()
	if err := VerifyPage(id, v, s.pageSize); err != nil {
		return err
	}
	copy(buf, v)
	return nil
}

// WritePage implements Store. The write goes through pebble's WAL without a
// sync; Sync makes it durable.
func (s *PebbleStore) WritePage(id PageID, buf []byte) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	if len(buf) != s.pageSize {
		return fmt.Errorf("%w: write of page %s with %d bytes, page size is %d",
			ErrInvalidConfig, id, len(buf), s.pageSize)
	}
	k := PageKey(id)
	if err := s.db.Set(k[:], buf, pebble.NoSync); err != nil {
		return fmt.Errorf("cache: write page %s: %w", id, err)
	}
	return nil
}

// Sync implements Store: an empty synced log record forces pebble's WAL,
// and with it every earlier write, to stable storage.
func (s *PebbleStore) Sync() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	if s.volatile {
		return nil
	}
	if err := s.db.LogData(nil, pebble.Sync); err != nil {
		return fmt.Errorf("cache: sync store: %w", err)
	}
	return nil
}

// Close implements Store.
func (s *PebbleStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return s.db.Close()
}
