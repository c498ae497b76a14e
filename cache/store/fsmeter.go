package store

import (
	"io"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// The filesystem meter.
//
// Every file the database writes goes through the store's filesystem
// (FS): pebble's own files, the redo log's segments and its checkpoint
// control file (package redo), the store's MANIFEST witness, and any file
// a layer above adds. The store wraps that filesystem (PebbleOptions.FS,
// vfs.Default for a directory, or its own in-memory one) in a meter that
// counts, by class of file, the bytes written, the write calls, the syncs,
// and the files created, removed and renamed. The redo log's own counter
// (redo.LogStats.Bytes) says what the engine logged; the meter says what
// reached the files, so that no write moves out of sight of the figures:
// a page flush shows in pebble's WAL and, later, in its sstables, and a
// new file of any kind shows in its class.
//
// A file's class is decided by its name when it is opened for writing
// (Create, OpenReadWrite, ReuseForWrite) and kept for the handle's life:
//
//	<dir>/redo/<16 hex digits>[.tmp]   FSRedo        the redo log's segments
//	<dir>/redo/ (the directory)        FSRedo        its syncs (segments created, renamed)
//	*.log                              FSWAL         pebble's write-ahead log
//	*.sst, *.blob                      FSTables      pebble's tables: flushes and compactions
//	MANIFEST-*, OPTIONS-*, CURRENT*,   FSPebbleMeta  pebble's metadata and its temporary
//	marker.*, LOCK, *.dbtmp                          files; a directory other than redo/
//	anything else                      FSOther       redo/checkpoint (the log's control
//	                                                 file), ENGINELAB-MANIFEST (the
//	                                                 witness), files other layers add
//
// Removals and renames are counted in the class of the name they act on
// (a rename, of its new name). Reads are not counted. A Sync, SyncData or
// a SyncTo that synced the whole file counts as one sync; a SyncTo that
// only started writeback (pebble's bytes-per-sync, sync_file_range) does
// not. Preallocation writes no bytes and is not counted.
//
// The counters are atomic adds, one cache line per class, so that the
// redo log's writer and pebble's WAL and compaction goroutines do not
// share one: counting costs a few nanoseconds per write call, and any
// number of goroutines may write and read the counts at once.

// FSClass is a class of files the database writes (see the table above).
type FSClass uint8

// File classes.
const (
	// FSRedo is the redo log's segment files and its directory's syncs.
	FSRedo FSClass = iota
	// FSWAL is pebble's write-ahead log.
	FSWAL
	// FSTables is pebble's sstables (and blob files): its memtable
	// flushes and its compactions.
	FSTables
	// FSPebbleMeta is pebble's MANIFEST, OPTIONS, CURRENT and marker
	// files, its temporary files and the database directory's syncs.
	FSPebbleMeta
	// FSOther is every other file: the redo log's checkpoint control
	// file, the store's MANIFEST witness, files other layers add.
	FSOther
	// NumFSClasses is the number of classes.
	NumFSClasses
)

var fsClassNames = [NumFSClasses]string{"redo", "wal", "sst", "pebble-meta", "other"}

func (c FSClass) String() string {
	if c < NumFSClasses {
		return fsClassNames[c]
	}
	return "fsclass(" + strconv.Itoa(int(c)) + ")"
}

// FSCounts are the writes to one class of files.
type FSCounts struct {
	Bytes   int64 `json:"bytes"`   // bytes written (Write and WriteAt)
	Writes  int64 `json:"writes"`  // Write and WriteAt calls
	Syncs   int64 `json:"syncs"`   // Sync, SyncData, and SyncTo calls that synced the whole file
	Created int64 `json:"created"` // files created (Create, Link)
	Removed int64 `json:"removed"` // files removed (Remove, RemoveAll)
	Renamed int64 `json:"renamed"` // files renamed (Rename, ReuseForWrite: a recycled file)
}

// Add adds o to c.
func (c *FSCounts) Add(o FSCounts) {
	c.Bytes += o.Bytes
	c.Writes += o.Writes
	c.Syncs += o.Syncs
	c.Created += o.Created
	c.Removed += o.Removed
	c.Renamed += o.Renamed
}

// Sub returns c − o.
func (c FSCounts) Sub(o FSCounts) FSCounts {
	return FSCounts{Bytes: c.Bytes - o.Bytes, Writes: c.Writes - o.Writes, Syncs: c.Syncs - o.Syncs,
		Created: c.Created - o.Created, Removed: c.Removed - o.Removed, Renamed: c.Renamed - o.Renamed}
}

// FSStats are the writes through the store's filesystem since the store
// was opened, by class of file (see FSClass).
type FSStats struct {
	Redo       FSCounts `json:"redo"`
	WAL        FSCounts `json:"wal"`
	Tables     FSCounts `json:"sst"`
	PebbleMeta FSCounts `json:"pebble_meta"`
	Other      FSCounts `json:"other"`
}

// Class returns the counts of class c (nil for no class).
func (s *FSStats) Class(c FSClass) *FSCounts {
	switch c {
	case FSRedo:
		return &s.Redo
	case FSWAL:
		return &s.WAL
	case FSTables:
		return &s.Tables
	case FSPebbleMeta:
		return &s.PebbleMeta
	case FSOther:
		return &s.Other
	}
	return nil
}

// Total returns every class's counts summed.
func (s FSStats) Total() FSCounts {
	var t FSCounts
	for c := range NumFSClasses {
		t.Add(*s.Class(c))
	}
	return t
}

// Sub returns s − o, class by class: the writes between two readings.
func (s FSStats) Sub(o FSStats) FSStats {
	var d FSStats
	for c := range NumFSClasses {
		*d.Class(c) = s.Class(c).Sub(*o.Class(c))
	}
	return d
}

// FSStats returns what the store's files were written since it was opened
// (see FSClass). It may be called at any time, from any goroutine, and
// after Close.
func (s *PebbleStore) FSStats() FSStats { return s.meter.stats() }

// fsCounters are one class's counters, padded to a cache line of their
// own.
type fsCounters struct {
	bytes, writes, syncs, created, removed, renamed atomic.Int64
	_                                               [64 - 6*8]byte
}

// meteredFS is the store's filesystem: another vfs.FS with its writes
// counted by class (see FSClass). Unwrap returns the filesystem it wraps,
// so vfs.Root still finds a memory filesystem under it.
type meteredFS struct {
	vfs.FS
	redoDir string // <dir>/redo, cleaned as PathDir returns it
	counts  [NumFSClasses]fsCounters
}

var _ vfs.FS = (*meteredFS)(nil)

// redoDirName is the redo log's directory inside the database directory,
// and redoTmpSuffix the suffix of a segment being created (package redo's
// logDirName and tmpSuffix; it imports this package, not the other way).
const (
	redoDirName    = "redo"
	redoTmpSuffix  = ".tmp"
	redoSegNameLen = 16
)

func newMeteredFS(fsys vfs.FS, dir string) *meteredFS {
	return &meteredFS{FS: fsys, redoDir: fsys.PathDir(fsys.PathJoin(dir, redoDirName, "x"))}
}

func (m *meteredFS) stats() FSStats {
	var s FSStats
	if m == nil {
		return s
	}
	for c := range NumFSClasses {
		k := &m.counts[c]
		*s.Class(c) = FSCounts{Bytes: k.bytes.Load(), Writes: k.writes.Load(), Syncs: k.syncs.Load(),
			Created: k.created.Load(), Removed: k.removed.Load(), Renamed: k.renamed.Load()}
	}
	return s
}

// classify returns the class of the file called name (see FSClass).
func (m *meteredFS) classify(name string) FSClass {
	base := m.PathBase(name)
	if m.PathDir(name) == m.redoDir {
		if isRedoSegment(base) {
			return FSRedo
		}
		return FSOther
	}
	switch {
	case strings.HasSuffix(base, ".log"):
		return FSWAL
	case strings.HasSuffix(base, ".sst"), strings.HasSuffix(base, ".blob"):
		return FSTables
	case strings.HasPrefix(base, "MANIFEST-"), strings.HasPrefix(base, "OPTIONS-"), strings.HasPrefix(base, "CURRENT"),
		strings.HasPrefix(base, "marker."), strings.HasPrefix(base, "temporary."), strings.HasSuffix(base, ".dbtmp"),
		base == "LOCK":
		return FSPebbleMeta
	}
	return FSOther
}

// isRedoSegment says whether a name in redo/ is a segment's: its first
// LSN in 16 lowercase hexadecimal digits, with ".tmp" while it is made.
func isRedoSegment(base string) bool {
	base = strings.TrimSuffix(base, redoTmpSuffix)
	if len(base) != redoSegNameLen {
		return false
	}
	for _, c := range base {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func (m *meteredFS) counters(name string) *fsCounters { return &m.counts[m.classify(name)] }

func (m *meteredFS) wrap(f vfs.File, c *fsCounters) vfs.File { return &meteredFile{File: f, c: c} }

// Create creates a file, counted in its class.
func (m *meteredFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	c := m.counters(name)
	f, err := m.FS.Create(name, category)
	if err != nil {
		return nil, err
	}
	c.created.Add(1)
	return m.wrap(f, c), nil
}

// OpenReadWrite opens a file whose writes count in its class.
func (m *meteredFS) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := m.FS.OpenReadWrite(name, category, opts...)
	if err != nil {
		return nil, err
	}
	return m.wrap(f, m.counters(name)), nil
}

// ReuseForWrite recycles a file (pebble's WAL recycling), counted as a
// rename in the class of its new name.
func (m *meteredFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	c := m.counters(newname)
	f, err := m.FS.ReuseForWrite(oldname, newname, category)
	if err != nil {
		return nil, err
	}
	c.renamed.Add(1)
	return m.wrap(f, c), nil
}

// OpenDir opens a directory whose syncs count: redo/'s as the redo log's,
// any other as pebble's metadata.
func (m *meteredFS) OpenDir(name string) (vfs.File, error) {
	f, err := m.FS.OpenDir(name)
	if err != nil {
		return nil, err
	}
	c := FSPebbleMeta
	if m.PathDir(m.PathJoin(name, "x")) == m.redoDir {
		c = FSRedo
	}
	return m.wrap(f, &m.counts[c]), nil
}

// Link makes a hard link, counted as a file created.
func (m *meteredFS) Link(oldname, newname string) error {
	if err := m.FS.Link(oldname, newname); err != nil {
		return err
	}
	m.counters(newname).created.Add(1)
	return nil
}

// Remove removes a file, counted in its class.
func (m *meteredFS) Remove(name string) error {
	if err := m.FS.Remove(name); err != nil {
		return err
	}
	m.counters(name).removed.Add(1)
	return nil
}

// RemoveAll removes a file or a tree, counted as one removal in the class
// of its name.
func (m *meteredFS) RemoveAll(name string) error {
	if err := m.FS.RemoveAll(name); err != nil {
		return err
	}
	m.counters(name).removed.Add(1)
	return nil
}

// Rename renames a file, counted in the class of its new name.
func (m *meteredFS) Rename(oldname, newname string) error {
	if err := m.FS.Rename(oldname, newname); err != nil {
		return err
	}
	m.counters(newname).renamed.Add(1)
	return nil
}

// Unwrap returns the filesystem the meter wraps.
func (m *meteredFS) Unwrap() vfs.FS { return m.FS }

// meteredFile is a file open for writing, its writes and syncs counted in
// its class.
type meteredFile struct {
	vfs.File
	c *fsCounters
}

var _ io.WriterAt = (*meteredFile)(nil)

func (f *meteredFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	f.c.writes.Add(1)
	f.c.bytes.Add(int64(n))
	return n, err
}

func (f *meteredFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	f.c.writes.Add(1)
	f.c.bytes.Add(int64(n))
	return n, err
}

func (f *meteredFile) Sync() error {
	f.c.syncs.Add(1)
	return f.File.Sync()
}

func (f *meteredFile) SyncData() error {
	f.c.syncs.Add(1)
	return f.File.SyncData()
}

func (f *meteredFile) SyncTo(length int64) (bool, error) {
	full, err := f.File.SyncTo(length)
	if full {
		f.c.syncs.Add(1)
	}
	return full, err
}
