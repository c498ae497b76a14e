package store

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/enginelab/enginelab/cache/page"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Key layout of the pebble database. The redo log is not in it: it keeps
// its own files in the database directory (package redo), on the store's
// filesystem (FS).
//
//	'm' name              database metadata: "pagesize" and "id" (the
//	                      store's), "logsync" (how far the redo log was
//	                      synced, written in order with the pages)
//	'p' space(4) page(4)  a page image, big-endian so pages of a space sort
//	                      in page order and a space is one contiguous key
//	                      range
//	'l' ...               reserved (the redo log's records were kept here
//	                      before it had files of its own)
const (
	// PrefixMeta is the first key byte of the database's metadata
	// records; the store keeps two ("pagesize", "id"), the redo log one
	// ("logsync").
	PrefixMeta = 'm'
	prefixPage = 'p'
	// PrefixLog is the first key byte once used by the redo log, kept
	// reserved.
	PrefixLog = 'l'
)

var (
	metaPageSizeKey = []byte{PrefixMeta, 'p', 'a', 'g', 'e', 's', 'i', 'z', 'e'}
	metaIdentityKey = []byte{PrefixMeta, 'i', 'd'}
)

// PebbleOptions configure a PebbleStore. The zero value is an in-memory
// store with 16 KiB pages.
type PebbleOptions struct {
	// Dir is the directory of the database. Empty means in memory (a
	// MemFS of the store's own), which is what tests and the default run
	// use.
	Dir string
	// FS overrides the filesystem; nil means the real one for a Dir, a new
	// in-memory one otherwise. Tests pass vfs.NewCrashableMem here.
	FS vfs.FS
	// PageSize is the page size of a new database: a power of two from
	// 4 KiB to 64 KiB. Default (0) 16 KiB for a new database, and for an
	// existing one the size it was created with; asking an existing
	// database for another size is an error.
	PageSize int
	// BlockCacheSize is pebble's own block cache. Default 8 MiB
	// (DefaultBlockCacheSize): kept small on purpose, because the buffer
	// pool (and the remote tier) are the caches this project measures;
	// pebble's cache only keeps the store from re-reading its index
	// blocks. Negative is refused.
	BlockCacheSize int64
	// MemTableSize is pebble's memtable size: page writes gather in a
	// memtable until it is full, then it is flushed to an sstable while
	// the next one fills (pebble's default MemTableStopWritesThreshold,
	// 2: writes wait rather than start a third), so the memtables take up
	// to twice this (MemTableBudget). Pages rewritten between two flushes
	// are flushed once. Default DefaultMemTableSize (64 MiB) with a Dir or
	// an FS, DefaultMemMemTableSize (16 MiB) in memory, where a flush is
	// a copy within memory and the memtables only hold bytes the store's
	// files will hold again. From MinMemTableSize to MaxMemTableSize.
	MemTableSize int64
	// Volatile runs an in-memory store (no Dir, no FS) without pebble's
	// WAL: nothing in this process's memory survives it anyway, and the
	// WAL only copies every write once more (a fifth of a TPC-C run's
	// time). Syncs become no-ops; a redo.Log on it needs
	// redo.LogOptions.Volatile.
	Volatile bool
}

// The store's memory budget: pebble's block cache and its memtables.
const (
	// DefaultBlockCacheSize is PebbleOptions.BlockCacheSize's default.
	DefaultBlockCacheSize = 8 << 20
	// DefaultMemTableSize is PebbleOptions.MemTableSize's default for a
	// store on a directory or a given filesystem, and
	// DefaultMemMemTableSize for one in memory.
	DefaultMemTableSize    = 64 << 20
	DefaultMemMemTableSize = 16 << 20
	// MinMemTableSize and MaxMemTableSize bound MemTableSize: a memtable
	// holds at least a few 64 KiB pages, and pebble's arena offsets are
	// 32-bit.
	MinMemTableSize = 1 << 20
	MaxMemTableSize = 4<<30 - 1
	// memTableStopWrites is pebble's MemTableStopWritesThreshold, which
	// the store leaves at pebble's default: a full memtable waits for its
	// flush while one more fills, and writes stop rather than start a
	// third.
	memTableStopWrites = 2
)

// MemTableBudget is the most memory pebble's memtables take with
// memtables of size bytes: the one being flushed and the one filling.
func MemTableBudget(size int64) int64 { return memTableStopWrites * size }

// Defaults returns o with its defaults applied (BlockCacheSize,
// MemTableSize; PageSize stays 0, which means "the database's own").
func (o PebbleOptions) Defaults() PebbleOptions {
	if o.BlockCacheSize == 0 {
		o.BlockCacheSize = DefaultBlockCacheSize
	}
	if o.MemTableSize == 0 {
		o.MemTableSize = DefaultMemTableSize
		if o.Dir == "" && o.FS == nil {
			o.MemTableSize = DefaultMemMemTableSize
		}
	}
	return o
}

// Validate reports the first invalid option (a zero field is valid: it
// takes its default).
func (o PebbleOptions) Validate() error {
	if o.PageSize != 0 && !page.ValidSize(o.PageSize) {
		return fmt.Errorf("cache: %w: page size %d: want a power of two from %d to %d",
			ErrInvalidOptions, o.PageSize, page.MinSize, page.MaxSize)
	}
	if o.BlockCacheSize < 0 {
		return fmt.Errorf("cache: %w: pebble block cache size %d is negative", ErrInvalidOptions, o.BlockCacheSize)
	}
	if o.MemTableSize != 0 && (o.MemTableSize < MinMemTableSize || o.MemTableSize > MaxMemTableSize) {
		return fmt.Errorf("cache: %w: pebble memtable size %d: want %d to %d bytes", ErrInvalidOptions, o.MemTableSize, int64(MinMemTableSize), int64(MaxMemTableSize))
	}
	if o.Volatile && (o.Dir != "" || o.FS != nil) {
		return fmt.Errorf("cache: %w: a volatile store takes no Dir and no FS", ErrInvalidOptions)
	}
	return nil
}

// pebbleOptions is what the store asks of pebble for o (defaults
// applied), on fsys, before the store's logger, listener and lock are
// added: the block cache, the memtables, the WAL (off when volatile), the
// format and the levels' compression.
func pebbleOptions(o PebbleOptions, fsys vfs.FS) *pebble.Options {
	popts := &pebble.Options{
		FS:        fsys,
		CacheSize: o.BlockCacheSize,
		// Pages rewritten between two flushes are flushed once.
		MemTableSize:                uint64(o.MemTableSize),
		MemTableStopWritesThreshold: memTableStopWrites,
		DisableWAL:                  o.Volatile,
		// The first format whose WAL records how far it was synced, so that
		// replay tells a record damaged inside the synced part (an error)
		// from a tail torn by a crash (the end of the log). Without it
		// pebble takes any bad record for the end, and damage in the
		// middle of the WAL silently drops synced commits. New sstables
		// are written in this format's newest table format, Pebblev5:
		// columnar blocks, which pebble's defaults turn on
		// (Experimental.EnableColumnarBlocks). Row blocks (Pebblev4)
		// cost pebble the same CPU here: 2.17 and 1.95 s of 18.2 and
		// 17.9 s in two 15 s one-terminal runs against 1.98 and 1.95 s
		// of 17.8 s each (2026-12-06, the profile's pebble tags). An
		// older database is upgraded when it is opened; a new database's
		// first WAL, created before the upgrade, is written the old way.
		FormatMajorVersion: pebble.FormatWALSyncChunks,
	}
	popts.EnsureDefaults()
	// Pages are stored as they are, as InnoDB stores them by default:
	// compressing every flushed and compacted block cost a third of the
	// CPU of a write-heavy run, for work the engine never asked for.
	for i := range popts.Levels {
		popts.Levels[i].Compression = func() *sstable.CompressionProfile { return sstable.NoCompression }
	}
	return popts
}

// PebbleStore is a Store on a pebble database.
//
// # The boundary with pebble
//
// Every call the store makes into pebble (open, ReadPage, WritePage, Sync,
// Close, and the raw key reads, writes and iterations of keys.go, which the
// redo log uses) runs inside one method, enter, the only place pebble is
// entered:
//
//   - pebble's corruption errors and files it expected but did not find
//     become a *CorruptError (matching page.ErrCorrupt) that names the
//     directory, the operation and, when pebble said, the file;
//   - a panic inside pebble, or its logger's Fatalf, on the caller's
//     goroutine is recovered there and becomes a *CorruptError too;
//   - a store that has met such damage has failed: every later call
//     returns the same error without entering pebble again, so that
//     nothing is read from, or written to, a database known to be damaged.
//
// Pebble also works in its own goroutines (flushes, compactions, table
// statistics), where no call boundary can recover a panic. There pebble
// does not panic on damaged data: it verifies the checksum of every block
// and record it reads and reports a failure to the EventListener
// (DataCorruption, BackgroundError), which the store records as its
// failure, returned by the next call. The one way left for pebble to stop
// such a goroutine is Fatalf (an I/O error on the MANIFEST, a file that
// shrank under a running database): the store's logger records the
// failure and ends that goroutine alone (runtime.Goexit) instead of the
// process. After a panic or such a Fatalf, pebble's state is unknown (a
// lock may be held, a compaction never finish), so Close does not close
// pebble: it returns the failure and leaves pebble's memory and open files
// to the process's exit.
//
// Opening guards against what pebble would open without a word:
//   - an existing database (a directory with pebble's files) is opened
//     with pebble's ErrorIfNotExists: a directory whose MANIFEST marker
//     was lost is damaged, not a new, empty database;
//   - its MANIFEST is checked against the store's witness first
//     (witness.go): pebble takes a MANIFEST cut short, or with a flipped
//     byte, for one torn by a crash, and opens an older database;
//   - pebble's format is FormatWALSyncChunks, whose WAL says how far it was
//     synced: damage inside the synced part is an error, not the end of
//     the log;
//   - an existing database that pebble cannot open is damaged, unless the
//     environment explains it (permission denied, a full or read-only
//     disk, a read error, too many open files; the directory locked by
//     another store is told apart before pebble is called).
//
// What no check sees is a WAL cut short, or deleted: pebble cannot tell
// a WAL cut short from one a crash tore, nor a missing WAL from one never
// written, and nothing records how long it was. The writes only it held
// are lost, the latest first, and the database opens as a crash a moment
// earlier would have left it. A database closed by Close needs no WAL:
// Close flushes pebble's memtable.
type PebbleStore struct {
	db    *pebble.DB
	lock  *pebble.Lock // the directory's lock, taken before pebble.Open
	dir   string       // for messages, and where the redo log keeps its files
	fs    vfs.FS       // the filesystem pebble runs on (FS): meter
	meter *meteredFS   // counts the writes through fs (FSStats)
	mem   *MemFS       // the metered filesystem when the store made its own in memory; else nil
	// memAtClose is what mem's files held when Close removed them.
	memAtClose int64
	pageSize   int
	// mu keeps Close from closing the database under a read or write in
	// flight: operations hold it shared, Close exclusively.
	mu       sync.RWMutex
	closed   bool // guarded by mu
	volatile bool // PebbleOptions.Volatile

	// failed is the first damage the store met (nil: none). Once set it
	// never changes, and every call returns it.
	failed atomic.Pointer[CorruptError]
	// abandoned says pebble's own state is no longer to be trusted: a
	// panic unwound through it, or Fatalf stopped one of its goroutines.
	// Close then leaves pebble alone.
	abandoned atomic.Bool

	witness *witness // the MANIFEST witness (witness.go); nil when volatile

	id, epoch uint64 // Identity
}

// Volatile says the store runs without pebble's WAL (PebbleOptions.Volatile):
// syncs are no-ops.
func (s *PebbleStore) Volatile() bool { return s.volatile }

// Dir returns the directory of the database ("enginelab" in memory).
func (s *PebbleStore) Dir() string { return s.dir }

// FS returns the filesystem the database lives on: PebbleOptions.FS, the
// real one for a Dir, or the store's own MemFS in memory, wrapped in
// the meter that counts its writes (FSStats; vfs.Root unwraps it). The
// redo log keeps its files there, under Dir, so that an in-memory
// database's log is in memory too, a crashable test filesystem crashes the
// log with the pages, and its writes are counted with pebble's.
func (s *PebbleStore) FS() vfs.FS { return s.fs }

// MemoryBytes returns what the files of an in-memory store hold now
// (pebble's sstables, MANIFEST and WAL, the redo log's segments: its
// MemFS's Bytes), or 0 for a store on a directory or a given filesystem.
func (s *PebbleStore) MemoryBytes() int64 {
	if s.mem == nil {
		return 0
	}
	s.mu.Lock()
	closed, at := s.closed, s.memAtClose
	s.mu.Unlock()
	if closed {
		return at
	}
	return s.mem.Bytes()
}

// writeOpts is how a write that must be durable is written: synced, unless
// the store is volatile.
func (s *PebbleStore) writeOpts() *pebble.WriteOptions {
	if s.volatile {
		return pebble.NoSync
	}
	return pebble.Sync
}

var _ Store = (*PebbleStore)(nil)

// boundaryFunc is the name of the store's boundary with pebble, as the
// runtime reports it: pebbleLogger looks for it on the stack.
const boundaryFunc = "github.com/enginelab/enginelab/cache/store.(*PebbleStore).enter"

// fatalPanic carries a Fatalf of pebble's from the logger to the boundary
// that recovers it.
type fatalPanic struct{ err error }

// call runs f, which calls into pebble, through the store's boundary, and
// returns its error translated (see enter); a store that has failed
// returns its failure instead, without entering pebble. op names what the
// store is doing, for messages.
func (s *PebbleStore) call(op string, f func() error) error {
	if ce := s.failed.Load(); ce != nil {
		return ce
	}
	return s.enter(op, f)
}

// enter is the store's one boundary with pebble (see PebbleStore): every
// pebble call runs in an f given to it. A panic in f (pebble's own, or
// Fatalf's) is recovered and becomes the store's failure, as does an
// error of f that says the files are damaged; other errors are returned
// as they are.
func (s *PebbleStore) enter(op string, f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			s.abandoned.Store(true)
			perr, ok := p.(fatalPanic)
			if !ok {
				perr = fatalPanic{fmt.Errorf("pebble panicked: %v", p)}
			}
			err = s.fail(op, "", perr.err)
		}
	}()
	if err = f(); err != nil && isDamage(err) {
		file := ""
		if info := pebble.ExtractDataCorruptionInfo(err); info != nil {
			file = info.Path
		}
		return s.fail(op, file, err)
	}
	return err
}

// isDamage says whether an error from pebble means its files are damaged:
// a corruption it detected, or a file it expected and did not find (pebble
// never answers a missing key with a missing file).
func isDamage(err error) bool {
	return pebble.IsCorruptionError(err) || errors.Is(err, fs.ErrNotExist)
}

// isEnvironment says whether pebble failed to open an existing database
// because of its surroundings rather than its files.
func isEnvironment(err error) bool {
	for _, e := range []error{fs.ErrPermission, syscall.ENOSPC, syscall.EROFS, syscall.EIO, syscall.EMFILE, syscall.ENFILE} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// fail records damage as the store's failure (the first one stays) and
// returns the error for this call.
func (s *PebbleStore) fail(op, file string, err error) *CorruptError {
	ce := &CorruptError{Dir: s.dir, Op: op, File: file, Err: err}
	s.failed.CompareAndSwap(nil, ce)
	return ce
}

// Err returns the damage the store has met (a *CorruptError), or nil. A
// store that has failed refuses every call with this error.
func (s *PebbleStore) Err() error {
	if ce := s.failed.Load(); ce != nil {
		return ce
	}
	return nil
}

// pebbleLogger drops pebble's informational chatter (compactions, WAL
// recycling) so that it never interleaves with reports; errors reach the
// store through returned errors and the event listener. Fatalf, which
// pebble calls when it cannot go on, ends the pebble call in progress
// without ending the process (see PebbleStore).
type pebbleLogger struct{ s *PebbleStore }

func (pebbleLogger) Infof(string, ...any)  {}
func (pebbleLogger) Errorf(string, ...any) {}

// Fatalf panics to the store's boundary when it is on the stack (a pebble
// call the store made); otherwise it is in one of pebble's own goroutines,
// which no boundary can reach: it records the failure and ends that
// goroutine alone.
func (l pebbleLogger) Fatalf(format string, args ...any) {
	err := errors.New("pebble: fatal: " + fmt.Sprintf(format, args...))
	if inBoundary() {
		panic(fatalPanic{err})
	}
	l.s.abandoned.Store(true)
	l.s.fail("pebble background work", "", err)
	runtime.Goexit()
}

// inBoundary says whether the calling goroutine is inside the store's
// boundary with pebble.
func inBoundary() bool {
	// The whole stack: a goroutine of the caller's taken for one of
	// pebble's would be ended.
	pcs := make([]uintptr, 256)
	n := runtime.Callers(2, pcs)
	for n == len(pcs) {
		pcs = make([]uintptr, 2*len(pcs))
		n = runtime.Callers(2, pcs)
	}
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if f.Function == boundaryFunc {
			return true
		}
		if !more {
			return false
		}
	}
}

// listener records the damage pebble finds in its own work (and in reads,
// where the caller gets it as an error too).
func (s *PebbleStore) listener() *pebble.EventListener {
	return &pebble.EventListener{
		BackgroundError: func(err error) {
			if isDamage(err) {
				file := ""
				if info := pebble.ExtractDataCorruptionInfo(err); info != nil {
					file = info.Path
				}
				s.fail("pebble background work", file, err)
			}
		},
		// Pebble's default stops the process (Fatalf); a damaged file is
		// the store's failure instead.
		DataCorruption: func(info pebble.DataCorruptionInfo) {
			s.fail("read", info.Path, info.Details)
		},
		// Pebble calls these holding its mutex: the witness is recorded
		// in the background.
		FlushEnd: func(pebble.FlushInfo) {
			if s.witness != nil {
				s.witness.kick()
			}
		},
		CompactionEnd: func(pebble.CompactionInfo) {
			if s.witness != nil {
				s.witness.kick()
			}
		},
	}
}

// RecordManifest records the MANIFEST witness (witness.go) now, after any
// recording in progress in the background. The store records it by itself
// after pebble's flushes and compactions and at Close; a test calls this
// before it takes a crash image, so that the image's witness does not
// depend on timing.
func (s *PebbleStore) RecordManifest() error {
	if s.witness == nil {
		return nil
	}
	s.witness.settle()
	return s.witness.record()
}

// hasPebbleFiles says whether a directory listing holds files of a pebble
// database (not just its lock, nor files of someone else's).
func hasPebbleFiles(ls []string) bool {
	for _, n := range ls {
		switch {
		case n == "CURRENT", strings.HasPrefix(n, "MANIFEST-"), strings.HasPrefix(n, "OPTIONS-"),
			strings.HasPrefix(n, "marker."), strings.HasSuffix(n, ".sst"), strings.HasSuffix(n, ".log"),
			strings.HasSuffix(n, ".blob"), n == witnessFile:
			return true
		}
	}
	return false
}

// OpenPebble opens (creating if needed) a pebble-backed page store. A
// database whose files are damaged fails with a *CorruptError.
func OpenPebble(o PebbleOptions) (*PebbleStore, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o = o.Defaults()
	adopt := o.PageSize == 0
	if adopt {
		o.PageSize = page.DefaultSize
	}
	volatile := o.Volatile
	fsys := o.FS
	var mem *MemFS
	if fsys == nil {
		if o.Dir == "" {
			mem = NewMemFS()
			fsys = mem
		} else {
			fsys = vfs.Default
		}
	}
	dir := o.Dir
	if dir == "" {
		dir = "enginelab"
	}
	// Everything the database writes is counted (fsmeter.go): pebble and
	// every user of FS see the metered filesystem.
	meter := newMeteredFS(fsys, dir)
	fsys = meter
	s := &PebbleStore{dir: dir, fs: fsys, meter: meter, mem: mem, pageSize: o.PageSize, volatile: volatile}
	ls, err := fsys.List(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("cache: open pebble store %q: %w", dir, err)
	}
	existing := hasPebbleFiles(ls)
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cache: open pebble store %q: %w", dir, err)
	}
	// The lock is taken here, not by pebble.Open, so that a directory in
	// use is told apart from a damaged one, and so that the store can
	// release it whatever happens inside pebble.
	if s.lock, err = pebble.LockDirectory(dir, fsys); err != nil {
		return nil, fmt.Errorf("cache: open pebble store %q: in use by another store or process: %w", dir, err)
	}
	if !volatile {
		s.witness = newWitness(fsys, dir)
		if existing {
			// Listed again under the lock: a store closing a moment ago
			// may have written its last witness since.
			file := ""
			if ls, err = fsys.List(dir); err == nil {
				file, err = s.witness.check(ls)
			}
			if err != nil {
				_ = s.lock.Close()
				if file == "" || isEnvironment(err) {
					return nil, fmt.Errorf("cache: open pebble store %q: %w", dir, err)
				}
				return nil, s.fail("open: check the MANIFEST against its witness", fsys.PathJoin(dir, file), err)
			}
		}
	}
	popts := pebbleOptions(o, fsys)
	popts.Logger = pebbleLogger{s}
	popts.EventListener = s.listener()
	popts.Lock = s.lock
	// An existing database must be found as one: pebble would make a new,
	// empty database of a directory whose MANIFEST marker is gone.
	popts.ErrorIfNotExists = existing
	err = s.call("open", func() error {
		var err error
		s.db, err = pebble.Open(dir, popts)
		return err
	})
	if err != nil {
		_ = s.lock.Close()
		var ce *CorruptError
		if existing && !errors.As(err, &ce) && !isEnvironment(err) {
			err = s.fail("open", "", err)
		}
		if !errors.As(err, &ce) {
			err = fmt.Errorf("cache: open pebble store %q: %w", dir, err)
		}
		return nil, err
	}
	if err := s.checkPageSize(adopt); err != nil {
		_ = s.Close()
		return nil, err
	}
	if err := s.openIdentity(); err != nil {
		_ = s.Close()
		return nil, err
	}
	if s.witness != nil {
		// A failed recording leaves the last witness, which lags: safe.
		_ = s.witness.record()
		s.witness.start()
	}
	return s, nil
}

// Identity returns the database's id (random, chosen when the database was
// created) and the epoch of this open (1 for the first, one more at each
// open after). Remote tier keys carry both (tier.Key).
func (s *PebbleStore) Identity() (id, epoch uint64) { return s.id, s.epoch }

// openIdentity reads the database's id and last epoch, or chooses an id
// for a new database, and records this open's epoch durably before any
// page can be pushed under it: an epoch is never used twice.
func (s *PebbleStore) openIdentity() error {
	var rec [16]byte
	n := -1
	found, err := s.get("open", metaIdentityKey, func(v []byte) {
		n = copy(rec[:], v)
		if len(v) != len(rec) {
			n = len(v)
		}
	})
	switch {
	case err != nil:
		return fmt.Errorf("cache: read database id: %w", err)
	case !found:
		if _, err := rand.Read(rec[:8]); err != nil {
			return fmt.Errorf("cache: choose database id: %w", err)
		}
	case n != len(rec):
		return fmt.Errorf("%w: stored identity record is %d bytes", ErrBadFormat, n)
	}
	s.id = binary.LittleEndian.Uint64(rec[:8])
	s.epoch = binary.LittleEndian.Uint64(rec[8:]) + 1
	binary.LittleEndian.PutUint64(rec[8:], s.epoch)
	if err := s.set("open", metaIdentityKey, rec[:], s.writeOpts()); err != nil {
		return fmt.Errorf("cache: record open epoch: %w", err)
	}
	return nil
}

// checkPageSize records the page size of a new database, or checks that an
// existing one was created with the same size (or adopts that size, if
// adopt).
func (s *PebbleStore) checkPageSize(adopt bool) error {
	var v []byte
	found, err := s.get("open", metaPageSizeKey, func(b []byte) { v = append(v, b...) })
	if err != nil {
		return fmt.Errorf("cache: read page size: %w", err)
	}
	if !found {
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], uint32(s.pageSize))
		return s.set("open", metaPageSizeKey, b[:], s.writeOpts())
	}
	if len(v) != 4 {
		return fmt.Errorf("%w: stored page size record is %d bytes", ErrBadFormat, len(v))
	}
	got := int(binary.LittleEndian.Uint32(v))
	if !page.ValidSize(got) {
		return fmt.Errorf("%w: stored page size %d is not a power of two from %d to %d",
			ErrBadFormat, got, page.MinSize, page.MaxSize)
	}
	if adopt {
		s.pageSize = got
		return nil
	}
	if got != s.pageSize {
		return fmt.Errorf("cache: %w: page size %d asked for, database was created with %d",
			ErrInvalidOptions, s.pageSize, got)
	}
	return nil
}

// DB exposes the pebble database, for tests that must reach under the
// store (to damage a stored page, say). Calls through it bypass the
// store's boundary (see PebbleStore): the engine never uses it.
func (s *PebbleStore) DB() *pebble.DB { return s.db }

// PageSize implements Store.
func (s *PebbleStore) PageSize() int { return s.pageSize }

// PageKey returns the pebble key of a page.
func PageKey(id page.ID) [9]byte {
	var k [9]byte
	k[0] = prefixPage
	binary.BigEndian.PutUint32(k[1:], id.Space)
	binary.BigEndian.PutUint32(k[5:], id.Page)
	return k
}

// get reads key through the boundary and hands its value to use, which
// runs inside the boundary (the value is pebble's) and must only copy or
// inspect it. found is false for a key that is absent.
func (s *PebbleStore) get(op string, key []byte, use func(v []byte)) (found bool, err error) {
	err = s.call(op, func() error {
		v, closer, err := s.db.Get(key)
		if errors.Is(err, pebble.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		use(v)
		return closer.Close()
	})
	return found, err
}

// set writes key through the boundary.
func (s *PebbleStore) set(op string, key, value []byte, o *pebble.WriteOptions) error {
	return s.call(op, func() error { return s.db.Set(key, value, o) })
}

// ReadPage implements Store.
func (s *PebbleStore) ReadPage(id page.ID, buf []byte) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	k := PageKey(id)
	var verr error
	found, err := s.get("read", k[:], func(v []byte) {
		if verr = page.Verify(id, v, s.pageSize); verr == nil {
			copy(buf, v)
		}
	})
	if err != nil {
		return fmt.Errorf("cache: read page %s: %w", id, err)
	}
	if !found {
		return fmt.Errorf("%w: page %s", ErrPageNotFound, id)
	}
	if verr != nil {
		// The page is damaged, the store is not: the page's error is
		// this read's alone.
		return fmt.Errorf("cache: database in %s: %w", s.dir, verr)
	}
	return nil
}

// WritePage implements Store. The write goes through pebble's WAL without a
// sync; Sync makes it durable.
func (s *PebbleStore) WritePage(id page.ID, buf []byte) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	if len(buf) != s.pageSize {
		return fmt.Errorf("cache: %w: write of page %s with %d bytes, page size is %d",
			ErrInvalidOptions, id, len(buf), s.pageSize)
	}
	k := PageKey(id)
	if err := s.set("write", k[:], buf, pebble.NoSync); err != nil {
		return fmt.Errorf("cache: write page %s: %w", id, err)
	}
	return nil
}

// Sync implements Store: an empty synced log record forces pebble's WAL,
// and with it every earlier write, to stable storage.
func (s *PebbleStore) Sync() error {
	return s.makeDurable("sync", func() error { return s.db.LogData(nil, pebble.Sync) })
}

// makeDurable runs pebble's call op (Sync's or Flush's) on an open store
// on disk; a volatile store has nothing to make durable.
func (s *PebbleStore) makeDurable(op string, f func() error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	if s.volatile {
		return s.Err()
	}
	if err := s.call(op, f); err != nil {
		return fmt.Errorf("cache: %s store: %w", op, err)
	}
	return nil
}

// Flush makes every write that returned before it durable, as Sync does,
// but in pebble's data files: it flushes the memtables to sstables, which
// pebble syncs with the MANIFEST that names them, so that the WAL holding
// the same writes is no longer needed and need not be synced (pebble
// deletes it). It costs a sync of the WAL more than Sync does when the
// store goes on (the memtables' bytes are written again, as an sstable
// in L0); it is what a store about to close does anyway (Close). A
// volatile store has nothing to make durable.
func (s *PebbleStore) Flush() error { return s.makeDurable("flush", s.db.Flush) }

// Close implements Store. A store on disk flushes pebble's memtable first,
// so that a database closed cleanly does not need its WAL: damage to the
// WAL of a closed database then loses nothing. A store that has failed
// returns its failure; if pebble's state is unknown (see PebbleStore), it
// is left as it is.
func (s *PebbleStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.witness != nil {
		s.witness.stop()
	}
	if s.abandoned.Load() {
		return s.Err()
	}
	var err error
	if !s.volatile {
		err = s.call("close", s.db.Flush)
	}
	// Closing enters pebble even after a failure (call would refuse):
	// the files are damaged, pebble's state is not.
	cerr := s.enter("close", s.db.Close)
	if s.abandoned.Load() {
		return s.Err()
	}
	if s.witness != nil && cerr == nil && s.failed.Load() == nil {
		// The last word on the MANIFEST: nothing writes it any more. A
		// failed recording leaves the last witness, which lags: safe.
		_ = s.witness.record()
	}
	if ce := s.failed.Load(); ce != nil {
		err = ce
	}
	if err == nil && cerr != nil {
		err = fmt.Errorf("cache: close pebble store %q: %w", s.dir, cerr)
	}
	if lerr := s.lock.Close(); err == nil && lerr != nil {
		err = fmt.Errorf("cache: close pebble store %q: release its lock: %w", s.dir, lerr)
	}
	if s.mem != nil {
		// Nothing can open an in-memory store again: its files go with
		// it. Their chunks are mapped outside Go's heap, so nothing else
		// would free them (a file still open, such as a log segment not
		// yet closed, is freed at its last close). MemoryBytes keeps
		// saying what they held.
		s.memAtClose = s.mem.Bytes()
		_ = s.mem.RemoveAll(".")
		s.mem.FreeSpare()
	}
	return err
}
