package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// MemFS is the filesystem of an in-memory store (PebbleOptions with no
// Dir and no FS): pebble's sstables, MANIFEST and WAL and the redo log's
// segments live in it. It stands where pebble's vfs.NewMem stood, for two
// reasons that measurement gave:
//
//   - vfs.NewMem keeps a file's bytes in one Go slice grown by append: a
//     file of n bytes allocates about 2n on its way and may keep up to n
//     of spare capacity, and every flushed or compacted sstable is
//     allocated that way (in a TPC-C run, nine tenths of the bytes the
//     process allocated once the load was done);
//   - its bytes are on Go's heap, where the collector's headroom
//     (GOGC=100: garbage may grow as large as the live heap) doubles
//     them: an in-memory run's resident memory was twice its store.
//
// MemFS keeps a file's bytes in chunks of MemChunkSize outside Go's heap
// (anonymous mappings on Linux, memfs_linux.go; Go slices elsewhere). A
// chunk is mapped when a write first reaches it, so a file never moves,
// and released when the file's last name is removed and its last handle
// closed: kept as a spare for the next writes while the spares hold less
// than a quarter of what the files hold (spareLimit), unmapped otherwise,
// so an obsolete sstable or a removed redo segment gives most of its
// memory back at once; Bytes counts what the files hold now. Only the pages
// of a chunk that a write reached take memory: a write backs the pages
// up to the next 256 KiB boundary past its end in one call
// (populateWindow: faulting them in one by one cost a load about twice
// as much), so a file takes at most 256 KiB more than its size, not a
// chunk.
//
// Directories are a set of names; a file has an inode (memNode) with a
// link count, so Link, Rename over an open file and Remove of an open
// file behave as on a POSIX filesystem. Nothing is lost by a crash
// because nothing survives the process: Sync does nothing (tests that
// crash use vfs.NewCrashableMem through PebbleOptions.FS). It is safe for
// concurrent use; a file may be read while it is written.
type MemFS struct {
	mu    sync.Mutex
	dirs  map[string]bool     // directories, by clean path ("." is the root)
	files map[string]*memNode // files, by clean path
	locks map[string]bool     // paths locked by Lock

	// bytes is what the files hold: their sizes, each rounded up to the
	// system page (the memory a file's written pages take).
	bytes atomic.Int64

	// spare holds up to spareLimit chunks of removed files for the
	// next writes, their pages already faulted in: the page store's
	// flushes and compactions write new files as fast as they remove
	// old ones, and mapping a new chunk for each costs a page fault per
	// 4 KiB written and an unmap (with its TLB shootdown) per chunk
	// freed. spareMu is a leaf lock: taken under fs.mu or a node's mu,
	// never the other way.
	spareMu  sync.Mutex
	spare    [][]byte
	noSpares bool // after FreeSpare: a chunk released later is unmapped
}

// minSpareChunks and spareShare bound the memory a MemFS keeps for reuse,
// outside what Bytes reports: 16 MiB, or a quarter of Bytes when that is
// more (spareLimit).
//
// A first write to memory the process never wrote is slow on a virtual
// machine: on the 2-core development VM about 5 ms a MiB, against 12 to
// 20 GB/s once the pages are the process's own. A 16-warehouse load
// writes 2.6 GiB of sstables (flushes and compactions) into a 1.6 GiB
// store; with 16 spare chunks 4.0 GiB of its chunks were new mappings,
// with a quarter of Bytes 2.1 GiB. Spares never raise the peak: a chunk
// joins them as it leaves a file, and a new mapping is made only when
// none is left, so files and spares together never hold more than the
// files alone held at their largest. What they cost is memory not given
// back at once when the store shrinks. In a run the flushes and
// compactions do the same: one terminal on one warehouse for 15 s spent
// 3.5 s of system time with 16 spare chunks and 1.9 s with 256.
const (
	minSpareChunks = 16
	spareShare     = 4
)

// spareLimit is how many chunks the spare list may hold now.
func (y *MemFS) spareLimit() int {
	return max(minSpareChunks, int(y.bytes.Load()/spareShare/MemChunkSize))
}

// chunk returns a chunk for a write: a spare one if there is one (its
// old bytes are still there: WriteAt zeroes what a write skips), else a
// new mapping.
func (y *MemFS) chunk() ([]byte, error) {
	y.spareMu.Lock()
	if n := len(y.spare); n > 0 {
		c := y.spare[n-1]
		y.spare = y.spare[:n-1]
		y.spareMu.Unlock()
		return c, nil
	}
	y.spareMu.Unlock()
	return allocChunk()
}

// FreeSpare unmaps the chunks kept for reuse (a store closing drops its
// filesystem).
func (y *MemFS) FreeSpare() {
	y.spareMu.Lock()
	spare := y.spare
	y.spare, y.noSpares = nil, true
	y.spareMu.Unlock()
	for _, c := range spare {
		freeChunk(c)
	}
}

// release keeps c for reuse, or unmaps it when the spare list is full.
func (y *MemFS) release(c []byte) {
	y.spareMu.Lock()
	if !y.noSpares && len(y.spare) < y.spareLimit() {
		y.spare = append(y.spare, c)
		c = nil
	}
	y.spareMu.Unlock()
	if c != nil {
		freeChunk(c)
	}
}

// populateWindow is the unit in which a write backs a file's pages ahead
// of itself (populate): 64 pages of 4 KiB.
const populateWindow = 256 << 10

// MemChunkSize is the unit a MemFS file's bytes are mapped in. A chunk's
// pages take memory only once written, so the size bounds the mappings'
// count (a 1 GiB store is 1,024 of them), not the memory.
const MemChunkSize = 1 << 20

// osPage is the unit Bytes rounds a file's size up to: the pages its
// written bytes take.
const osPage = 4 << 10

// NewMemFS returns an empty in-memory filesystem.
func NewMemFS() *MemFS {
	return &MemFS{dirs: map[string]bool{".": true}, files: map[string]*memNode{}, locks: map[string]bool{}}
}

var _ vfs.FS = (*MemFS)(nil)

// Bytes returns what the filesystem's files hold now: the sum of their
// sizes, each rounded up to a 4 KiB page (the memory their written pages
// take), removed files still open included.
func (y *MemFS) Bytes() int64 { return y.bytes.Load() }

// memNode is a file: its bytes and how many names and open handles it has.
// Its chunks are freed when both counts reach zero.
type memNode struct {
	fs *MemFS
	// mu guards the bytes: shared to read, exclusive to write or grow.
	mu      sync.RWMutex
	chunks  [][]byte // MemChunkSize each, outside Go's heap
	size    int64
	modTime time.Time
	// populated is how far the chunks' pages are backed (populate): a
	// multiple of populateWindow, or the chunks' end.
	populated int64
	// links and refs are guarded by fs.mu.
	links, refs int
	freed       bool
}

// clean makes a path a key: cleaned, relative to the root.
func clean(name string) string {
	p := strings.TrimPrefix(path.Clean("/"+name), "/")
	if p == "" {
		return "."
	}
	return p
}

func notExist(op, name string) error {
	return &os.PathError{Op: op, Path: name, Err: os.ErrNotExist}
}

// releaseLocked frees n's chunks once it has no name and no open handle.
// REQUIRES: y.mu held.
func (y *MemFS) releaseLocked(n *memNode) {
	if n.links > 0 || n.refs > 0 || n.freed {
		return
	}
	n.freed = true
	n.mu.Lock()
	// Bytes drops first, so that the spare list's limit is a share of
	// what the other files hold.
	y.bytes.Add(-roundPage(n.size))
	for _, c := range n.chunks {
		y.release(c)
	}
	n.chunks, n.size, n.populated = nil, 0, 0
	n.mu.Unlock()
}

func roundPage(n int64) int64 { return (n + osPage - 1) &^ (osPage - 1) }

// unlinkLocked drops the name p of a file. REQUIRES: y.mu held.
func (y *MemFS) unlinkLocked(p string) {
	if n := y.files[p]; n != nil {
		delete(y.files, p)
		n.links--
		y.releaseLocked(n)
	}
}

// parentLocked checks that p's directory exists. REQUIRES: y.mu held.
func (y *MemFS) parentLocked(op, name, p string) error {
	if !y.dirs[path.Dir(p)] {
		return notExist(op, name)
	}
	if y.dirs[p] {
		return &os.PathError{Op: op, Path: name, Err: syscall.EISDIR}
	}
	return nil
}

// Create implements vfs.FS: a new, empty file under name (an existing file
// of that name loses the name, as it would to O_TRUNC on a file nobody
// else has open).
func (y *MemFS) Create(name string, _ vfs.DiskWriteCategory) (vfs.File, error) {
	y.mu.Lock()
	defer y.mu.Unlock()
	p := clean(name)
	if err := y.parentLocked("create", name, p); err != nil {
		return nil, err
	}
	y.unlinkLocked(p)
	n := &memNode{fs: y, links: 1, refs: 1, modTime: time.Now()}
	y.files[p] = n
	return &memFile{name: path.Base(p), n: n, read: true, write: true}, nil
}

// Link implements vfs.FS.
func (y *MemFS) Link(oldname, newname string) error {
	y.mu.Lock()
	defer y.mu.Unlock()
	o, p := clean(oldname), clean(newname)
	n := y.files[o]
	if n == nil {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: os.ErrNotExist}
	}
	if y.files[p] != nil || y.dirs[p] {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: os.ErrExist}
	}
	if err := y.parentLocked("link", newname, p); err != nil {
		return err
	}
	y.files[p] = n
	n.links++
	return nil
}

// open opens the file (or directory) name.
func (y *MemFS) open(op, name string, write bool) (vfs.File, error) {
	y.mu.Lock()
	defer y.mu.Unlock()
	p := clean(name)
	if y.dirs[p] {
		return &memDir{name: path.Base(p)}, nil
	}
	n := y.files[p]
	if n == nil {
		return nil, notExist(op, name)
	}
	n.refs++
	return &memFile{name: path.Base(p), n: n, read: true, write: write}, nil
}

// Open implements vfs.FS.
func (y *MemFS) Open(name string, _ ...vfs.OpenOption) (vfs.File, error) {
	return y.open("open", name, false)
}

// OpenReadWrite implements vfs.FS: the file, created if it does not exist.
func (y *MemFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, _ ...vfs.OpenOption) (vfs.File, error) {
	f, err := y.open("open", name, true)
	if errors.Is(err, os.ErrNotExist) {
		return y.Create(name, c)
	}
	return f, err
}

// OpenDir implements vfs.FS.
func (y *MemFS) OpenDir(name string) (vfs.File, error) {
	y.mu.Lock()
	defer y.mu.Unlock()
	p := clean(name)
	if !y.dirs[p] {
		return nil, notExist("open", name)
	}
	return &memDir{name: path.Base(p)}, nil
}

// childrenLocked says whether directory p has entries. REQUIRES: y.mu held.
func (y *MemFS) childrenLocked(p string) bool {
	for q := range y.files {
		if path.Dir(q) == p {
			return true
		}
	}
	for q := range y.dirs {
		if q != "." && path.Dir(q) == p {
			return true
		}
	}
	return false
}

// Remove implements vfs.FS: a file's name, or an empty directory.
func (y *MemFS) Remove(name string) error {
	y.mu.Lock()
	defer y.mu.Unlock()
	p := clean(name)
	switch {
	case y.files[p] != nil:
		y.unlinkLocked(p)
	case y.dirs[p] && p != ".":
		if y.childrenLocked(p) {
			return &os.PathError{Op: "remove", Path: name, Err: syscall.ENOTEMPTY}
		}
		delete(y.dirs, p)
	default:
		return notExist("remove", name)
	}
	return nil
}

// under says whether q is p or inside it.
func under(q, p string) bool {
	return p == "." || q == p || strings.HasPrefix(q, p+"/")
}

// RemoveAll implements vfs.FS.
func (y *MemFS) RemoveAll(name string) error {
	y.mu.Lock()
	defer y.mu.Unlock()
	p := clean(name)
	for q := range y.files {
		if under(q, p) {
			y.unlinkLocked(q)
		}
	}
	for q := range y.dirs {
		if under(q, p) && q != "." {
			delete(y.dirs, q)
		}
	}
	return nil
}

// Rename implements vfs.FS: a file over any file of the new name, or a
// directory and everything in it.
func (y *MemFS) Rename(oldname, newname string) error {
	y.mu.Lock()
	defer y.mu.Unlock()
	o, p := clean(oldname), clean(newname)
	if o == p {
		return nil
	}
	if err := y.parentLocked("rename", newname, p); err != nil {
		return err
	}
	if n := y.files[o]; n != nil {
		delete(y.files, o)
		y.unlinkLocked(p)
		y.files[p] = n
		return nil
	}
	if !y.dirs[o] || o == "." {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: os.ErrNotExist}
	}
	if y.files[p] != nil || under(p, o) {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: os.ErrInvalid}
	}
	for q, n := range y.files {
		if under(q, o) {
			delete(y.files, q)
			y.files[p+strings.TrimPrefix(q, o)] = n
		}
	}
	for q := range y.dirs {
		if under(q, o) {
			delete(y.dirs, q)
			y.dirs[p+strings.TrimPrefix(q, o)] = true
		}
	}
	return nil
}

// ReuseForWrite implements vfs.FS: the file renamed, open for writing
// from its start, its old bytes kept until overwritten.
func (y *MemFS) ReuseForWrite(oldname, newname string, _ vfs.DiskWriteCategory) (vfs.File, error) {
	if err := y.Rename(oldname, newname); err != nil {
		return nil, err
	}
	return y.open("open", newname, true)
}

// MkdirAll implements vfs.FS.
func (y *MemFS) MkdirAll(dir string, _ os.FileMode) error {
	y.mu.Lock()
	defer y.mu.Unlock()
	for p := clean(dir); p != "."; p = path.Dir(p) {
		if y.files[p] != nil {
			return &os.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
		}
		y.dirs[p] = true
	}
	return nil
}

// Lock implements vfs.FS: one holder at a time within the process (a
// second Lock of the same name fails with EAGAIN, as flock would). The
// lock file is created, so that it shows in the directory.
func (y *MemFS) Lock(name string) (io.Closer, error) {
	p := clean(name)
	y.mu.Lock()
	if y.locks[p] {
		y.mu.Unlock()
		return nil, syscall.EAGAIN
	}
	y.locks[p] = true
	y.mu.Unlock()
	f, err := y.Create(name, vfs.WriteCategoryUnspecified)
	if err != nil {
		y.mu.Lock()
		delete(y.locks, p)
		y.mu.Unlock()
		return nil, err
	}
	return &memLock{y: y, p: p, f: f}, nil
}

type memLock struct {
	y    *MemFS
	p    string
	f    vfs.File
	once sync.Once
}

func (l *memLock) Close() error {
	var err error
	l.once.Do(func() {
		err = l.f.Close()
		l.y.mu.Lock()
		delete(l.y.locks, l.p)
		l.y.mu.Unlock()
	})
	return err
}

// List implements vfs.FS: the names in a directory, sorted.
func (y *MemFS) List(dir string) ([]string, error) {
	y.mu.Lock()
	defer y.mu.Unlock()
	p := clean(dir)
	if !y.dirs[p] {
		return nil, notExist("open", dir)
	}
	var names []string
	for q := range y.files {
		if path.Dir(q) == p {
			names = append(names, path.Base(q))
		}
	}
	for q := range y.dirs {
		if q != "." && path.Dir(q) == p {
			names = append(names, path.Base(q))
		}
	}
	sort.Strings(names)
	return names, nil
}

// Stat implements vfs.FS.
func (y *MemFS) Stat(name string) (vfs.FileInfo, error) {
	y.mu.Lock()
	defer y.mu.Unlock()
	p := clean(name)
	if y.dirs[p] {
		return &memInfo{name: path.Base(p), dir: true}, nil
	}
	if n := y.files[p]; n != nil {
		return n.stat(path.Base(p)), nil
	}
	return nil, notExist("stat", name)
}

// PathBase implements vfs.FS.
func (*MemFS) PathBase(p string) string { return path.Base(p) }

// PathJoin implements vfs.FS.
func (*MemFS) PathJoin(elem ...string) string { return path.Join(elem...) }

// PathDir implements vfs.FS.
func (*MemFS) PathDir(p string) string { return path.Dir(p) }

// GetDiskUsage implements vfs.FS: memory is no disk (vfs.ErrUnsupported,
// as vfs.NewMem answers).
func (*MemFS) GetDiskUsage(string) (vfs.DiskUsage, error) {
	return vfs.DiskUsage{}, vfs.ErrUnsupported
}

// Unwrap implements vfs.FS.
func (*MemFS) Unwrap() vfs.FS { return nil }

func (n *memNode) stat(name string) *memInfo {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return &memInfo{name: name, size: n.size, mod: n.modTime}
}

// memFile is an open file: a handle on a memNode with its own position.
type memFile struct {
	name        string
	n           *memNode // nil once closed
	pos         int64
	read, write bool
}

var errClosedFile = errors.New("store: memory file used after Close")

// Close implements vfs.File.
func (f *memFile) Close() error {
	n := f.n
	if n == nil {
		return errClosedFile
	}
	f.n = nil
	n.fs.mu.Lock()
	n.refs--
	n.fs.releaseLocked(n)
	n.fs.mu.Unlock()
	return nil
}

// Read implements vfs.File.
func (f *memFile) Read(p []byte) (int, error) {
	k, err := f.ReadAt(p, f.pos)
	f.pos += int64(k)
	if err == io.EOF && k > 0 {
		err = nil
	}
	return k, err
}

// ReadAt implements vfs.File.
func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	if f.n == nil {
		return 0, errClosedFile
	}
	if !f.read {
		return 0, fmt.Errorf("store: memory file %s is not open for reading", f.name)
	}
	if off < 0 {
		return 0, fmt.Errorf("store: memory file %s: read at negative offset %d", f.name, off)
	}
	n := f.n
	n.mu.RLock()
	defer n.mu.RUnlock()
	if off >= n.size {
		return 0, io.EOF
	}
	want := min(int64(len(p)), n.size-off)
	done := int64(0)
	for done < want {
		at := off + done
		c := n.chunks[at/MemChunkSize]
		done += int64(copy(p[done:want], c[at%MemChunkSize:]))
	}
	if done < int64(len(p)) {
		return int(done), io.EOF
	}
	return int(done), nil
}

// Write implements vfs.File.
func (f *memFile) Write(p []byte) (int, error) {
	k, err := f.WriteAt(p, f.pos)
	f.pos += int64(k)
	return k, err
}

// WriteAt implements vfs.File: a write past the end grows the file, the
// gap reading as zeros.
func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	if f.n == nil {
		return 0, errClosedFile
	}
	if !f.write {
		return 0, fmt.Errorf("store: memory file %s is not open for writing", f.name)
	}
	if off < 0 {
		return 0, fmt.Errorf("store: memory file %s: write at negative offset %d", f.name, off)
	}
	n := f.n
	n.mu.Lock()
	defer n.mu.Unlock()
	end := off + int64(len(p))
	for int64(len(n.chunks))*MemChunkSize < end {
		c, err := n.fs.chunk()
		if err != nil {
			return 0, fmt.Errorf("store: memory file %s: %w", f.name, err)
		}
		n.chunks = append(n.chunks, c)
	}
	if end > n.populated {
		// The pages up to the next populateWindow boundary past the
		// write are backed in one call rather than faulted in one by
		// one as the copy reaches them: a file takes at most a window
		// more than it holds.
		to := min((end+populateWindow-1)/populateWindow*populateWindow, int64(len(n.chunks))*MemChunkSize)
		for at := n.populated; at < to; {
			c := n.chunks[at/MemChunkSize][at%MemChunkSize:]
			k := min(int64(len(c)), to-at)
			populate(c[:k])
			at += k
		}
		n.populated = to
	}
	// Invariant: the bytes below size were written or zeroed, so a
	// chunk reused with another file's bytes shows none of them. A
	// write past the end zeroes the gap it leaves.
	for at := n.size; at < off; {
		c := n.chunks[at/MemChunkSize][at%MemChunkSize:]
		k := min(int64(len(c)), off-at)
		clear(c[:k])
		at += k
	}
	done := 0
	for done < len(p) {
		at := off + int64(done)
		done += copy(n.chunks[at/MemChunkSize][at%MemChunkSize:], p[done:])
	}
	if end > n.size {
		n.fs.bytes.Add(roundPage(end) - roundPage(n.size))
		n.size = end
	}
	n.modTime = time.Now()
	return len(p), nil
}

// Preallocate implements vfs.File: nothing to do (a chunk is mapped when
// a write reaches it).
func (f *memFile) Preallocate(int64, int64) error { return nil }

// Stat implements vfs.File.
func (f *memFile) Stat() (vfs.FileInfo, error) {
	if f.n == nil {
		return nil, errClosedFile
	}
	return f.n.stat(f.name), nil
}

// Sync implements vfs.File: memory is as durable as it gets.
func (f *memFile) Sync() error { return nil }

// SyncData implements vfs.File.
func (f *memFile) SyncData() error { return nil }

// SyncTo implements vfs.File: everything written is as durable as a sync
// would make it.
func (f *memFile) SyncTo(int64) (bool, error) { return true, nil }

// Prefetch implements vfs.File.
func (f *memFile) Prefetch(int64, int64) error { return nil }

// Fd implements vfs.File: there is no descriptor.
func (f *memFile) Fd() uintptr { return vfs.InvalidFd }

// memDir is an open directory: only Sync, Stat and Close do anything.
type memDir struct{ name string }

var errIsDir = errors.New("store: memory filesystem: is a directory")

func (d *memDir) Close() error                       { return nil }
func (d *memDir) Read([]byte) (int, error)           { return 0, errIsDir }
func (d *memDir) ReadAt([]byte, int64) (int, error)  { return 0, errIsDir }
func (d *memDir) Write([]byte) (int, error)          { return 0, errIsDir }
func (d *memDir) WriteAt([]byte, int64) (int, error) { return 0, errIsDir }
func (d *memDir) Preallocate(int64, int64) error     { return nil }
func (d *memDir) Stat() (vfs.FileInfo, error)        { return &memInfo{name: d.name, dir: true}, nil }
func (d *memDir) Sync() error                        { return nil }
func (d *memDir) SyncData() error                    { return nil }
func (d *memDir) SyncTo(int64) (bool, error)         { return true, nil }
func (d *memDir) Prefetch(int64, int64) error        { return nil }
func (d *memDir) Fd() uintptr                        { return vfs.InvalidFd }

// memInfo is a vfs.FileInfo.
type memInfo struct {
	name string
	size int64
	mod  time.Time
	dir  bool
}

func (i *memInfo) Name() string           { return i.name }
func (i *memInfo) Size() int64            { return i.size }
func (i *memInfo) IsDir() bool            { return i.dir }
func (i *memInfo) Sys() any               { return nil }
func (i *memInfo) ModTime() time.Time     { return i.mod }
func (i *memInfo) DeviceID() vfs.DeviceID { return vfs.DeviceID{} }
func (i *memInfo) Mode() os.FileMode {
	if i.dir {
		return os.ModeDir | 0o755
	}
	return 0o644
}
