package redo

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/store"
)

// Log is the redo log: a stream of framed records kept in fixed-size
// segment files in the database directory's redo/ (doc.go draws the
// files and the frames), on the store's filesystem. A record's LSN is
// its frame's place in the stream, so LSNs only grow, and they keep
// growing across restarts (the stream continues where the stored log
// ends).
//
// Records are appended to an in-memory buffer under one mutex (that order
// is the log order). The buffer reaches the segment files when it is
// written (Flush, SyncTo, MaybeWrite once it holds LogOptions.BufferBytes,
// SaveCheckpoint). A page image must not reach the store before the
// records that changed it are durable: the log's files and pebble's are
// written and synced apart, so nothing orders them but a sync. Flush,
// which the buffer pool calls before it writes a page, therefore syncs
// the log up to the page's LSN (the write-ahead rule, as InnoDB's page
// flush calls log_write_up_to(lsn, true) and PostgreSQL's FlushBuffer
// calls XLogFlush). SyncTo makes the log durable for commits; concurrent
// callers share one sync (group commit).
//
// Segments wholly below the oldest record recovery needs are recycled
// (Checkpointed): renamed to a future segment's name and overwritten in
// place when the log gets there.
type Log struct {
	st       *store.PebbleStore
	fs       vfs.FS
	dir      string // the log's directory, <database>/redo
	opts     LogOptions
	segSize  uint64 // size of a new segment
	maxFiles int    // segment files within the capacity
	memFS    bool   // the filesystem is in memory (vfs.MemFS, store.MemFS)

	// writeMu orders writes to the files: a buffer reaches its segments
	// after every buffer before it, and one goroutine at a time writes,
	// syncs, creates, renames or removes a file (vfs.File allows one
	// write or sync at a time). It is taken before mu, never while
	// holding it, and never held across a Waiter call.
	writeMu   sync.Mutex
	open      map[uint64]*segFile // segment files open for writing, by first LSN
	spares    []spareFile         // files to reuse for future segments, ascending
	nfiles    int                 // segment files in the directory
	dirty     []*segFile          // written since their last sync
	pre       *preallocated       // the next segment's file, being made ahead (prealloc); nil: none
	ctl       vfs.File            // the control file, opened at the first save
	ctlNumber uint64              // number of the control slot written last

	// mu guards every field below: the buffer and the LSNs that say how
	// far the stream is written and synced, the live segments, the sync
	// in progress, the stats and closed. It is never held during a file
	// operation or a sync.
	mu         sync.Mutex
	buf        []byte // the stream's bytes from bufStart (== written) to end
	spare      []byte
	bufStart   uint64
	end        uint64        // LSN of the next record
	written    uint64        // the stream below is in the files
	durable    uint64        // records below are synced
	chain      uint32        // checksum of the last frame appended
	sumScratch [16]byte      // frameSum's, in Append
	segs       []segHeader   // live segments, ascending; the last holds end
	syncing    bool          // a SyncTo is leading a sync
	syncDone   chan struct{} // closed when that sync ends
	ckptEnd    uint64        // log end at the last checkpoint
	ckptRec    []byte        // the checkpoint record saved last
	stats      LogStats
	closed     bool
	mark       uint64 // SetMark's LSN (0 until it is called)
	crossed    bool   // what flag.crossed holds

	// pub holds copies of end, written, durable, ckptEnd and bufStart,
	// stored under mu whenever one of them changes (publishLocked) and
	// read without it: End, Durable, Age and Buffered are asked once or
	// more per mini-transaction and per commit, by every terminal, and a
	// mutex taken only to read a word made each of those reads a write
	// to a cache line every core shares (InnoDB 8.0's log_sys keeps its
	// LSNs in atomics for the same reason: log_get_lsn reads sn without
	// a latch). A reader sees a value that was true at some instant
	// during its call, which is all a mutex-guarded read gave it.
	pub logPub

	// flag says whether the log's end has reached its buffer's write-out
	// point or the caller's mark (Crossed). Appends change end every few
	// hundred nanoseconds; the flag changes only when a threshold is
	// crossed or moved. MaybeWrite and the engine's per-operation checks
	// read the flag first, so that every core does not pull the line
	// that each append writes (InnoDB 5.7's log_free_check reads
	// log_sys->check_flush_or_checkpoint, a flag log_close sets, and
	// not the LSN, for the same reason).
	flag logFlag
}

// logFlag is Log.flag, on a cache line of its own.
type logFlag struct {
	_       [64]byte
	crossed atomic.Bool
	_       [64]byte
}

// logPub is Log.pub, on cache lines of its own so that publishing does
// not share a line with mu.
type logPub struct {
	_                              [64]byte
	end, written, durable, ckptEnd atomic.Uint64
	// bufStart, not len(buf): len(buf) is end - bufStart, and bufStart
	// changes only when the buffer is written out, so an append publishes
	// one word, not two (each publish is a locked exchange that waits
	// for the record's copy into the buffer to drain).
	bufStart atomic.Uint64
	_        [64]byte
}

// publishLocked copies the LSNs and the buffer's start to l.pub.
// REQUIRES: l.mu held (or l not yet shared).
func (l *Log) publishLocked() {
	l.pub.end.Store(l.end)
	l.pub.written.Store(l.written)
	l.pub.durable.Store(l.durable)
	l.pub.ckptEnd.Store(l.ckptEnd)
	l.pub.bufStart.Store(l.bufStart)
	l.flagLocked()
}

// flagLocked sets flag.crossed to whether end has reached the write-out
// point (bufStart + BufferBytes, MaybeWrite's test) or the mark. It
// stores only a change: between crossings the flag's line stays shared
// by every core that reads it. REQUIRES: l.mu held (or l not yet shared).
func (l *Log) flagLocked() {
	c := l.end >= min(l.bufStart+uint64(l.opts.BufferBytes), l.mark)
	if c != l.crossed {
		l.crossed = c
		l.flag.crossed.Store(c)
	}
}

// SetMark sets the LSN from which Crossed reports true until the next
// SetMark (besides the buffer's write-out point). A caller that tests
// several thresholds on End sets the lowest of them, and tests them only
// when Crossed says so: a mark at or below every threshold keeps each
// test exact. Until the first SetMark the mark is 0, so Crossed is true.
func (l *Log) SetMark(lsn uint64) {
	l.mu.Lock()
	l.mark = lsn
	l.flagLocked()
	l.mu.Unlock()
}

// Crossed reports whether the log's end has reached the buffer's
// write-out point (MaybeWrite would write) or SetMark's LSN. It reads a
// word that changes only at those crossings, not at every append: false
// means the end was below both as of the last append or change that
// stored the flag (an append publishes its end just before its flag, so
// a caller may see the end past a mark and the flag still false for that
// moment; its next check sees the flag).
func (l *Log) Crossed() bool { return l.flag.crossed.Load() }

// segFile is a segment file open for writing.
type segFile struct {
	start uint64
	f     vfs.File
	// appendAt is the offset the file's Write appends at, for a file
	// created by this Log without preallocation (a volatile store's,
	// which grows as it is written); -1: write with WriteAt.
	appendAt int64
}

// preallocated is a segment file made ahead of need (prealloc): created
// under a temporary name, filled and synced by a goroutine of the log's
// while the log writes on, then renamed to the segment that takes it.
type preallocated struct {
	tmp  string        // its temporary name
	size uint64        // its size
	done chan struct{} // closed once f and err are set
	f    vfs.File      // the file, open, filled and synced; nil on an error
	err  error
}

// spareFile is a segment file kept for reuse: named for a future segment
// (its contents are from its previous cycle).
type spareFile struct {
	start, size uint64
}

// LogStats are the log's totals since it was opened.
type LogStats struct {
	Records       int64
	Bytes         int64
	Syncs         int64 // syncs led by SyncTo
	SyncedCommits int64 // SyncTo calls that asked for durability (commits in sync mode)
	// FlushSyncs counts the other syncs: Flush's, for a page whose
	// record was not yet durable (the write-ahead rule), and
	// SaveCheckpoint's.
	FlushSyncs int64
	// Switches counts moves to a next segment; Created the segment files
	// created (a new log's first cycle, or past the capacity); Recycled
	// the segments renamed for reuse once a checkpoint passed them;
	// Overruns the segments added beyond Capacity because every segment
	// still held records a checkpoint had not passed (the log never
	// overwrites those).
	Switches, Created, Recycled, Overruns int64
}

// Waiter is how the log's callers wait, and the log's time as the
// simulator sees it: real mode (RealWaiter) blocks on the channel and
// does nothing at a sync's start; the simulator prices the sync when it
// starts and parks a waiting transaction until the sync's completion time.
// This is the same seam as the engine's lock Parker.
type Waiter interface {
	// Wait returns once done is closed: the caller waits for a sync
	// another caller is performing.
	Wait(done <-chan struct{})
	// SyncStart is called at the start of every sync, by the caller that
	// leads it, in its goroutine, with no lock of the log's held (other
	// callers may append and join the next group meanwhile).
	SyncStart()
}

// RealWaiter blocks the goroutine: real mode.
type RealWaiter struct{}

// Wait implements Waiter.
func (RealWaiter) Wait(done <-chan struct{}) { <-done }

// SyncStart implements Waiter: nothing to do in real time.
func (RealWaiter) SyncStart() {}

// LogOptions configure a Log.
type LogOptions struct {
	// Waiter is how a commit waits for a group sync led by another
	// commit, and what runs at the start of every sync SyncTo leads.
	// Default RealWaiter.
	Waiter Waiter
	// Sync, if set, runs in place of the segment files' sync (fdatasync).
	// Tests replace it (a sync they can hold open, or fail).
	Sync func() error
	// BufferBytes is how many bytes the log buffer holds before the next
	// mtr writes it to the files. Default 1 MiB.
	BufferBytes int
	// Volatile says the store keeps nothing past the process (an
	// in-memory store, store.PebbleStore.Volatile): the log writes its
	// files in the store's memory filesystem without syncing or
	// preallocating them.
	Volatile bool
	// Prealloc makes the next segment's file in the background once
	// three quarters of the current one are written (Log.prealloc), on a
	// goroutine of the log's. Off by default: a simulated clock times
	// the log's work on the caller's goroutine, and the engine turns it
	// on in real mode.
	Prealloc bool
	// Capacity is the log's size on disk in bytes, the segment files it
	// keeps and recycles (InnoDB's innodb_log_file_size; 8.0.30's
	// innodb_redo_log_capacity). Default DefaultCapacity (96 MiB); at
	// least MinCapacity. Segments are Capacity/8 each (see
	// MinSegmentSize). The log goes past it only when the checkpoint
	// falls behind (LogStats.Overruns); keeping the checkpoint age (Age)
	// below it is the caller's.
	Capacity int64
}

// Validate reports an invalid option.
func (o *LogOptions) Validate() error {
	if o.Capacity < 0 || (o.Capacity > 0 && o.Capacity < MinCapacity) {
		return fmt.Errorf("cache: %w: redo log capacity %d: want 0 (the default, %d MiB) or at least %d KiB",
			page.ErrInvalidOptions, o.Capacity, DefaultCapacity>>20, MinCapacity>>10)
	}
	if o.BufferBytes < 0 {
		return fmt.Errorf("cache: %w: redo log buffer of %d bytes", page.ErrInvalidOptions, o.BufferBytes)
	}
	return nil
}

// ErrClosed means the log was closed.
var ErrClosed = errors.New("cache: redo log closed")

// Open opens the log of st's database (creating it for a new database):
// it reads the control file, finds the segments and reads the log from
// the segment that holds the last checkpoint's log end to where the log
// ends (the first frame that does not verify: a torn last write, or the
// previous cycle's contents of a recycled file). The next Append
// continues there, overwriting the torn tail.
//
// Damaged or missing files are an error matching ErrCorruptLog (and so
// page.ErrCorrupt) that names the file: a control file neither of whose
// slots verifies, a gap between the segments, a log that ends before the
// last checkpoint's log end, a database with pages but no log.
func Open(st *store.PebbleStore, o *LogOptions) (*Log, error) {
	l := &Log{st: st, fs: st.FS(), syncDone: make(chan struct{}), open: make(map[uint64]*segFile)}
	if o != nil {
		l.opts = *o
	}
	if err := l.opts.Validate(); err != nil {
		return nil, err
	}
	if l.opts.Waiter == nil {
		l.opts.Waiter = RealWaiter{}
	}
	if l.opts.BufferBytes == 0 {
		l.opts.BufferBytes = 1 << 20
	}
	if l.opts.Capacity == 0 {
		l.opts.Capacity = DefaultCapacity
	}
	l.segSize = segmentSize(l.opts.Capacity)
	l.maxFiles = int(uint64(l.opts.Capacity) / l.segSize)
	l.dir = l.fs.PathJoin(st.Dir(), logDirName)
	switch vfs.Root(l.fs).(type) {
	case *vfs.MemFS, *store.MemFS:
		l.memFS = true
	}

	ctl, found, err := l.readControl()
	if err != nil {
		return nil, err
	}
	var files segFiles
	if _, err := l.fs.Stat(l.dir); err == nil {
		if files, err = l.listSegments(); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("cache: open redo log %s: %w", l.dir, err)
	}
	var promise uint64
	if !l.opts.Volatile {
		if promise, err = l.readPromise(); err != nil {
			return nil, err
		}
	}
	if !found {
		if promise != 0 {
			return nil, fmt.Errorf("%w: the redo log's control file %s is missing, but the store says the log was synced up to LSN %d",
				ErrCorruptLog, l.controlPath(), promise)
		}
		return l.create(files)
	}
	l.ckptRec, l.ctlNumber = ctl.rec, ctl.number
	if err := l.recoverEnd(files, ctl.logEnd, promise); err != nil {
		return nil, err
	}
	return l, nil
}

// create makes a new log, for a database that has none: the directory
// and the control file. The first segment is created when it is first
// written. A database that has pages, or segment files, but no control
// file has lost its log.
func (l *Log) create(files segFiles) (*Log, error) {
	if len(files) > 0 {
		return nil, fmt.Errorf("%w: the redo log's control file %s is missing (the directory holds %d segment files)",
			ErrCorruptLog, l.controlPath(), len(files))
	}
	pages, err := l.st.HasPages("open redo log")
	if err != nil {
		return nil, err
	}
	if pages {
		return nil, fmt.Errorf("%w: the database holds pages but its redo log control file %s is missing (or the database was written when the log was kept in pebble, a format this version does not read)",
			ErrCorruptLog, l.controlPath())
	}
	if err := l.fs.MkdirAll(l.dir, 0o755); err != nil {
		return nil, fmt.Errorf("cache: create redo log directory %s: %w", l.dir, err)
	}
	if err := l.syncDir(l.st.Dir()); err != nil {
		return nil, err
	}
	if err := l.createControl(); err != nil {
		return nil, err
	}
	l.startNew()
	return l, nil
}

// startNew sets a log with no record yet: the first segment starts at LSN
// 0, its header is the buffer's first bytes, and the first record gets
// FirstLSN.
func (l *Log) startNew() {
	h := segHeader{start: 0, size: l.segSize}
	l.segs = []segHeader{h}
	l.buf = h.appendTo(l.buf[:0])
	l.bufStart = 0
	l.end, l.written, l.durable, l.ckptEnd = FirstLSN, FirstLSN, FirstLSN, FirstLSN
	l.publishLocked()
}

// recoverEnd finds the end of an existing log whose last checkpoint saw
// it durable up to logEnd, and which the store says was synced up to
// promise, and sets the log up to continue there.
func (l *Log) recoverEnd(files segFiles, logEnd, promise uint64) error {
	starts := slices.Sorted(maps.Keys(files))
	// Recycled files named below the last checkpoint's end were left
	// behind by a segment of another size (see stale): they hold nothing
	// of the log, and go once it is open. Those between there and the
	// end are met below.
	var gone []uint64
	for _, s := range starts {
		if s >= logEnd {
			break
		}
		if st, err := l.stale(s); err != nil {
			return err
		} else if st {
			gone = append(gone, s)
			delete(files, s)
		}
	}
	starts = slices.DeleteFunc(starts, func(s uint64) bool { return slices.Contains(gone, s) })
	// The segment holding logEnd: the last that starts below it.
	k := sort.Search(len(starts), func(i int) bool { return starts[i] >= logEnd }) - 1
	fresh := func() error {
		if promise > FirstLSN {
			return fmt.Errorf("%w: the log in %s holds no record, but the store says it was synced up to LSN %d",
				ErrCorruptLog, l.dir, promise)
		}
		return l.startFresh(starts)
	}
	if k < 0 {
		if len(starts) == 0 && logEnd == FirstLSN {
			// Nothing ever reached a segment: a new log.
			return fresh()
		}
		// Every file starts past logEnd: the log was recycled past the
		// last saved checkpoint (Checkpointed without SaveCheckpoint).
		// It is read from its first segment, if that one's header
		// verifies.
		if len(starts) > 0 {
			if _, ok, err := l.readHeader(starts[0]); err != nil {
				return err
			} else if ok {
				k = 0
			}
		}
		if k < 0 {
			return fmt.Errorf("%w: no segment file in %s holds LSN %d, where the log ended at its last checkpoint",
				ErrCorruptLog, l.dir, logEnd)
		}
	}
	hk, ok, err := l.readHeader(starts[k])
	if err != nil {
		return err
	}
	if !ok {
		if logEnd == FirstLSN && starts[k] == 0 {
			// The first segment was created but its first write was
			// never made durable: nothing was logged.
			return fresh()
		}
		return fmt.Errorf("%w: segment file %s has no valid header, but holds LSN %d, where the log ended at its last checkpoint",
			ErrCorruptLog, l.segPath(starts[k]), logEnd)
	}
	res, err := l.read(files, hk, ^uint64(0), nil)
	if err != nil {
		return err
	}
	// The live segments, from the first file to the one holding the end,
	// must follow each other; the files after it are spares. A stale
	// file among them is passed over (and goes with the others).
	var live []segHeader
	passed := 0
	for _, s := range starts {
		if s > res.seg.start {
			break
		}
		h := res.seg
		if s != res.seg.start {
			var valid bool
			if h, valid, err = l.readAnyHeader(s); err != nil {
				return err
			}
			if valid && h.start != s { // stale: it goes with the others
				gone = append(gone, s)
				passed++
				continue
			}
			if !valid {
				return fmt.Errorf("%w: segment file %s, before the log's end at LSN %d, has no valid header",
					ErrCorruptLog, l.segPath(s), res.end)
			}
		}
		if n := len(live); n > 0 && live[n-1].end() != s {
			return fmt.Errorf("%w: segment file %s is missing: %s ends at LSN %d and the next file is %s",
				ErrCorruptLog, l.segPath(live[n-1].end()), l.segPath(live[n-1].start), live[n-1].end(), l.segPath(s))
		}
		live = append(live, h)
	}
	next := res.seg.end()
	for _, s := range starts {
		if s <= res.seg.start {
			continue
		}
		h, valid, err := l.readAnyHeader(s)
		if err != nil {
			return err
		}
		if valid && h.start != s && s < res.seg.end() {
			// Stale, inside the segment holding the end (where no
			// segment starts): it goes with the others.
			gone = append(gone, s)
			passed++
			continue
		}
		size, err := l.fileSize(s)
		if err != nil {
			return err
		}
		// A spare whose header names it was written in this cycle: every
		// segment before it was written too, so none may be missing.
		if valid && h.start == s && s > next && !files[next] {
			return fmt.Errorf("%w: segment file %s is missing, but %s after it holds the log from LSN %d",
				ErrCorruptLog, l.segPath(next), l.segPath(s), h.start)
		}
		l.spares = append(l.spares, spareFile{start: s, size: size})
	}
	// A missing file, named above, explains a log that ends early; else
	// the end is checked against what was durable.
	if res.end < logEnd {
		return fmt.Errorf("%w: the log ends at LSN %d in segment file %s, before LSN %d, where it ended at its last checkpoint",
			ErrCorruptLog, res.end, l.segPath(res.seg.start), logEnd)
	}
	if res.end < promise {
		return fmt.Errorf("%w: the log ends at LSN %d in segment file %s, before LSN %d, up to which it was synced",
			ErrCorruptLog, res.end, l.segPath(res.seg.start), promise)
	}
	for _, s := range gone {
		if err := l.fs.Remove(l.segPath(s)); err != nil {
			return fmt.Errorf("cache: remove stale redo log file %s: %w", l.segPath(s), err)
		}
	}
	if len(gone) > 0 {
		if err := l.syncDir(l.dir); err != nil {
			return err
		}
	}
	// The segment holding the end is written again from there on.
	f, err := l.fs.OpenReadWrite(l.segPath(res.seg.start), vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("cache: open redo log segment %s: %w", l.segPath(res.seg.start), err)
	}
	l.open[res.seg.start] = &segFile{start: res.seg.start, f: f, appendAt: -1}
	l.nfiles = len(starts) - passed
	l.segs = live
	l.end, l.written, l.durable, l.bufStart, l.ckptEnd = res.end, res.end, res.end, res.end, res.end
	l.chain = res.chain
	l.publishLocked()
	return nil
}

// startFresh starts a new log in a directory whose segment files hold
// nothing logged: they become spares.
func (l *Log) startFresh(starts []uint64) error {
	for _, s := range starts {
		size, err := l.fileSize(s)
		if err != nil {
			return err
		}
		l.spares = append(l.spares, spareFile{start: s, size: size})
	}
	l.nfiles = len(starts)
	l.startNew()
	return nil
}

func (l *Log) fileSize(start uint64) (uint64, error) {
	fi, err := l.fs.Stat(l.segPath(start))
	if err != nil {
		return 0, fmt.Errorf("cache: redo log segment %s: %w", l.segPath(start), err)
	}
	return uint64(fi.Size()), nil
}

// Stamper is told the LSN its record got, under the log's mutex (Append).
// It is an interface, not a func, so that a caller passing itself (the
// mini-transaction) allocates nothing: a closure passed where the callee is
// not known at compile time escapes to the heap on every call.
type Stamper interface {
	Stamp(lsn uint64)
}

// Append adds one record (body: an encoded mtr record, opaque here) and
// returns its LSN. stamp, if not nil, is called under the log's mutex with
// that LSN, so that record order and LSN order agree: the
// mini-transaction stamps its pages' headers there. c, if not nil, counts
// the record and its bytes (frame header included).
//
// A frame never spans two segments: one that does not fit in the rest of
// the current segment starts the next (the rest is zeros), as
// pebble's chunks never cross its WAL's 32 KiB blocks. A frame larger than
// a whole segment gets a segment of its own, as large as it needs.
func (l *Log) Append(c *Counts, body []byte, stamp Stamper) uint64 {
	n := uint64(len(body)) + frameHeaderSize
	bodySum := page.CRC32C(body)
	l.mu.Lock()
	if cur := l.segs[len(l.segs)-1]; l.end+n > cur.end() {
		l.switchLocked(n)
	}
	lsn := l.end
	sum := frameSum(&l.sumScratch, bodySum, lsn, uint32(n), l.chain)
	var hdr [frameHeaderSize]byte
	binary.LittleEndian.PutUint32(hdr[:], uint32(n))
	binary.LittleEndian.PutUint32(hdr[4:], sum)
	l.buf = append(l.buf, hdr[:]...)
	l.buf = append(l.buf, body...)
	l.chain = sum
	l.end += n
	l.stats.Records++
	l.stats.Bytes += int64(n)
	l.pub.end.Store(l.end) // and len(buf) == end - bufStart still
	if !l.crossed {
		l.flagLocked()
	}
	if stamp != nil {
		stamp.Stamp(lsn)
	}
	l.mu.Unlock()
	if c != nil {
		c.LogRecords++
		c.LogBytes += int64(n)
	}
	return lsn
}

// switchLocked moves the stream to the next segment for a frame of n
// bytes: the rest of the current segment is zeros, the next segment's
// header follows. REQUIRES: l.mu held.
func (l *Log) switchLocked(n uint64) {
	cur := l.segs[len(l.segs)-1]
	l.buf = append(l.buf, make([]byte, cur.end()-l.end)...)
	size := l.segSize
	if need := segmentHeaderSize + n; need > size {
		size = (need + 4095) &^ 4095
	}
	h := segHeader{start: cur.end(), size: size, chain: l.chain}
	l.buf = h.appendTo(l.buf)
	l.segs = append(l.segs, h)
	l.end = h.start + segmentHeaderSize
	l.stats.Switches++
}

// End returns the LSN the next record will get (unless it starts a new
// segment).
func (l *Log) End() uint64 { return l.pub.end.Load() }

// Durable returns the LSN below which every record is synced.
func (l *Log) Durable() uint64 { return l.pub.durable.Load() }

// Stats returns the log's totals.
func (l *Log) Stats() LogStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats
}

// SinceCheckpoint returns the bytes logged since the last checkpoint
// (Age).
func (l *Log) SinceCheckpoint() uint64 { return l.Age() }

// Age returns the checkpoint age: End() less the LSN of the last
// checkpoint (Checkpointed's lsn; the log's end when it was opened). The
// caller keeps it below Capacity by flushing pages and checkpointing.
func (l *Log) Age() uint64 {
	// ckptEnd first: it only grows and never passes end, so the
	// difference read this way never underflows.
	c := l.pub.ckptEnd.Load()
	return l.pub.end.Load() - c
}

// Capacity returns the log's capacity in bytes (LogOptions.Capacity).
func (l *Log) Capacity() uint64 { return uint64(l.opts.Capacity) }

// SegmentSize returns the size of the log's segment files.
func (l *Log) SegmentSize() uint64 { return l.segSize }

// Dir returns the log's directory.
func (l *Log) Dir() string { return l.dir }

// Buffered returns the bytes not yet written to the files.
func (l *Log) Buffered() int {
	// bufStart first: it is at most end at every instant and end only
	// grows, so the difference never underflows. A write-out between
	// the two loads makes it an overestimate, which MaybeWrite's
	// writeLocked finds empty.
	s := l.pub.bufStart.Load()
	return int(l.pub.end.Load() - s)
}

// Flush makes the log durable at least past the record at lsn (on a
// volatile store: written). The buffer pool calls it before it writes a
// page whose LSN is lsn (the write-ahead rule). Its sync is not a group
// commit's: it calls no Waiter (the pool calls it holding a frame's I/O
// mutex, where the simulator must not park), and it syncs by itself when
// the record is not yet durable.
func (l *Log) Flush(lsn uint64) error {
	d := l.pub.durable.Load()
	if l.opts.Volatile {
		d = l.pub.written.Load()
	}
	if lsn < d {
		return nil
	}
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	if l.opts.Volatile {
		_, err := l.writeLocked()
		return err
	}
	if lsn < l.pub.durable.Load() {
		return nil // synced by another meanwhile
	}
	end, err := l.writeSyncLocked()
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.durable = max(l.durable, end)
	l.stats.FlushSyncs++
	l.publishLocked()
	l.mu.Unlock()
	return nil
}

// writeLocked moves the whole buffer to the segment files and returns
// the LSN written up to. REQUIRES: l.writeMu held.
func (l *Log) writeLocked() (uint64, error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return 0, ErrClosed
	}
	if len(l.buf) == 0 {
		w := l.written
		l.mu.Unlock()
		return w, nil
	}
	data, start, end := l.buf, l.bufStart, l.end
	l.buf, l.spare = l.spare[:0], nil
	l.bufStart = end
	l.publishLocked()
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].end() > start })
	segs := slices.Clone(l.segs[i:])
	l.mu.Unlock()
	err := l.writeOut(data, start, segs)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		// Put the data back in front of whatever came since, so that no
		// record is lost and order holds; writing it again rewrites the
		// same bytes.
		l.buf = append(data, l.buf...)
		l.bufStart = start
		l.publishLocked()
		return 0, fmt.Errorf("cache: write redo log at LSN %d: %w", start, err)
	}
	l.written = end
	l.publishLocked()
	if cap(data) <= 4*l.opts.BufferBytes {
		l.spare = data[:0]
	}
	return end, nil
}

// writeOut writes data, the stream from LSN start, into the segments
// segs (ascending, the first holding start). REQUIRES: l.writeMu held.
func (l *Log) writeOut(data []byte, start uint64, segs []segHeader) error {
	end := start + uint64(len(data))
	for _, h := range segs {
		if h.start >= end {
			break
		}
		a, b := max(h.start, start), min(h.end(), end)
		sf, err := l.segmentFile(h)
		if err != nil {
			return err
		}
		p := data[a-start : b-start]
		off := int64(a - h.start)
		if off == sf.appendAt {
			_, err = sf.f.Write(p)
			sf.appendAt += int64(len(p))
		} else {
			_, err = sf.f.WriteAt(p, off)
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", l.segPath(h.start), err)
		}
		if !l.opts.Volatile && !slices.Contains(l.dirty, sf) {
			l.dirty = append(l.dirty, sf)
		}
		if b-h.start >= h.size/4*3 {
			l.prealloc()
		}
	}
	return nil
}

// prealloc starts making the next segment's file in the background once
// the log has written three quarters of a segment (PostgreSQL's
// PreallocXlogFiles makes the next WAL segment once the current one is
// 75% used; InnoDB 8.0.30's log files governor keeps spare redo files
// ready), so that the writer that reaches the segment's end does not
// zero-fill and sync a new file while every other writer waits for
// writeMu: a 12 MiB segment (96 MiB's), about 30 ms each of a W=1 load's seven on the 2-core
// development VM. It does nothing unless LogOptions.Prealloc asks for it,
// if a file is being made already, if a spare will take the next segment,
// if the log already has the files its capacity allows (the next comes
// from a recycled one, or an overrun makes it), or on a memory filesystem
// (whose files are not filled). REQUIRES: l.writeMu held.
func (l *Log) prealloc() {
	if !l.opts.Prealloc || l.pre != nil || l.memFS || l.opts.Volatile || l.nfiles >= l.maxFiles {
		return
	}
	if slices.ContainsFunc(l.spares, func(s spareFile) bool { return s.size == l.segSize }) {
		return
	}
	l.mu.Lock()
	next := l.segs[len(l.segs)-1].end()
	l.mu.Unlock()
	p := &preallocated{tmp: l.segPath(next) + tmpSuffix, size: l.segSize, done: make(chan struct{})}
	l.pre = p
	go func() {
		defer close(p.done)
		p.f, p.err = l.fillSegment(p.tmp, p.size)
	}()
}

// takePrealloc returns the file made ahead (prealloc), renamed to segment
// h's name, or nil if there is none. A file of another size than h's (a
// segment made larger for one large frame), or one whose making failed,
// is removed, and the caller creates h's file itself (meeting the error
// again if it lasts). It waits for a file still being made: the writer
// waits less than it would making one. REQUIRES: l.writeMu held.
func (l *Log) takePrealloc(h segHeader) (*segFile, error) {
	p := l.pre
	if p == nil {
		return nil, nil
	}
	l.pre = nil
	<-p.done
	if p.err != nil || p.size != h.size {
		l.dropPrealloc(p)
		return nil, nil
	}
	sf := &segFile{start: h.start, f: p.f, appendAt: -1}
	if err := l.installSegment(sf, p.tmp); err != nil {
		return nil, err
	}
	return sf, nil
}

// dropPrealloc closes and removes a file made ahead that no segment
// takes. REQUIRES: l.writeMu held; p.done closed.
func (l *Log) dropPrealloc(p *preallocated) {
	if p.f != nil {
		_ = p.f.Close()
	}
	_ = l.fs.Remove(p.tmp)
}

// segmentFile returns the file of segment h, open for writing: already
// open, or a spare renamed to its name (recycled), or a new file.
// REQUIRES: l.writeMu held.
func (l *Log) segmentFile(h segHeader) (*segFile, error) {
	if sf := l.open[h.start]; sf != nil {
		return sf, nil
	}
	path := l.segPath(h.start)
	// The spare named for h, if it has h's size, else one of its size
	// renamed (the capacity changed, and the names with it).
	i := slices.IndexFunc(l.spares, func(s spareFile) bool { return s.start == h.start && s.size == h.size })
	if i < 0 {
		i = slices.IndexFunc(l.spares, func(s spareFile) bool { return s.size == h.size })
	}
	// Every other spare named below h's end can no longer be taken in
	// order: the log is about to pass its name (after a change of
	// capacity, or past a segment made larger for one large record, the
	// names no longer fall on the segments' starts). It goes now, and
	// the directory is synced before h is written: left there, its name
	// would lie inside the log, where Open would meet it (see stale).
	removed := false
	for j := len(l.spares) - 1; j >= 0; j-- {
		if j == i || l.spares[j].start >= h.end() {
			continue
		}
		stale := l.segPath(l.spares[j].start)
		if err := l.fs.Remove(stale); err != nil {
			return nil, fmt.Errorf("remove redo log spare %s: %w", stale, err)
		}
		l.spares = slices.Delete(l.spares, j, j+1)
		l.nfiles--
		removed = true
		if j < i {
			i--
		}
	}
	if i >= 0 && l.spares[i].start != h.start {
		from := l.segPath(l.spares[i].start)
		if err := l.fs.Rename(from, path); err != nil {
			return nil, fmt.Errorf("reuse redo log spare %s as %s: %w", from, path, err)
		}
		removed = true // the rename, too, is made durable below
	}
	if removed && i >= 0 {
		// Without a spare, a new file's install syncs the directory.
		if err := l.syncDir(l.dir); err != nil {
			return nil, err
		}
	}
	var sf *segFile
	if i >= 0 {
		l.spares = slices.Delete(l.spares, i, i+1)
		f, err := l.fs.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
		if err != nil {
			return nil, fmt.Errorf("open redo log segment %s: %w", path, err)
		}
		sf = &segFile{start: h.start, f: f, appendAt: -1}
	} else {
		var err error
		if sf, err = l.takePrealloc(h); err != nil {
			return nil, err
		}
		if sf == nil {
			if sf, err = l.createSegment(h); err != nil {
				return nil, err
			}
		}
	}
	l.open[h.start] = sf
	return sf, nil
}

// createSegment creates the file of segment h: under a temporary name,
// filled with zeros to its full size and synced (so that later writes
// overwrite allocated blocks and a sync need not update the file's size,
// as PostgreSQL zero-fills a new WAL segment), then renamed. On a memory
// filesystem the file is not filled (it grows as it is written), and a
// volatile store's is not synced either.
// REQUIRES: l.writeMu held.
func (l *Log) createSegment(h segHeader) (*segFile, error) {
	tmp := l.segPath(h.start) + tmpSuffix
	f, err := l.fillSegment(tmp, h.size)
	if err != nil {
		return nil, err
	}
	sf := &segFile{start: h.start, f: f, appendAt: -1}
	if l.memFS {
		// A memory filesystem has no blocks to allocate and no size to
		// sync: the file grows as it is written, by Write (its WriteAt
		// grows a file a byte at a time).
		sf.appendAt = 0
	}
	if err := l.installSegment(sf, tmp); err != nil {
		return nil, err
	}
	return sf, nil
}

// installSegment gives sf's file, made under the temporary name tmp, its
// segment's name, makes the rename durable and counts the file (on an
// error it closes the file). REQUIRES: l.writeMu held.
func (l *Log) installSegment(sf *segFile, tmp string) error {
	path := l.segPath(sf.start)
	if err := l.fs.Rename(tmp, path); err != nil {
		sf.f.Close()
		return fmt.Errorf("create redo log segment %s: %w", path, err)
	}
	if err := l.syncDir(l.dir); err != nil {
		sf.f.Close()
		return err
	}
	l.countCreated()
	return nil
}

// fillSegment creates the file tmp for a segment of size bytes, filled
// with zeros and synced (createSegment says why), except on a memory
// filesystem (not filled) and for a volatile store (not synced). It
// touches no field of the log's but its options, so that prealloc may run
// it without writeMu.
func (l *Log) fillSegment(tmp string, size uint64) (vfs.File, error) {
	f, err := l.fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return nil, fmt.Errorf("create redo log segment %s: %w", tmp, err)
	}
	if !l.memFS {
		// In pieces of one buffer, zeroed again before each write: a
		// file's Write may scribble on what it is given (vfs.File). A new
		// slice a piece cost a 12 MiB segment twelve fresh megabytes for
		// the collector and the page faults of first writes.
		buf := make([]byte, min(size, 1<<20))
		for left := size; left > 0; {
			n := min(left, uint64(len(buf)))
			clear(buf[:n])
			if _, err := f.Write(buf[:n]); err != nil {
				f.Close()
				return nil, fmt.Errorf("fill redo log segment %s: %w", tmp, err)
			}
			left -= n
		}
	}
	if !l.opts.Volatile {
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, fmt.Errorf("sync redo log segment %s: %w", tmp, err)
		}
	}
	return f, nil
}

// countCreated counts a segment file added to the directory (LogStats:
// Created, and Overruns past the capacity). REQUIRES: l.writeMu held.
func (l *Log) countCreated() {
	l.nfiles++
	l.mu.Lock()
	l.stats.Created++
	if l.nfiles > l.maxFiles {
		l.stats.Overruns++
	}
	l.mu.Unlock()
}

// syncDir makes the directory's entries durable (created and renamed
// files), unless the store is volatile.
func (l *Log) syncDir(dir string) error {
	if l.opts.Volatile {
		return nil
	}
	d, err := l.fs.OpenDir(dir)
	if err != nil {
		return fmt.Errorf("cache: sync directory %s: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cache: sync directory %s: %w", dir, err)
	}
	return nil
}

// writeSyncLocked writes the buffer and syncs every segment file written
// since its last sync (fdatasync; a volatile store's are not synced), and
// returns the LSN now durable; the caller publishes it (Durable).
// REQUIRES: l.writeMu held.
func (l *Log) writeSyncLocked() (uint64, error) {
	end, err := l.writeLocked()
	if err != nil {
		return 0, err
	}
	if l.opts.Sync != nil {
		err = l.opts.Sync()
	} else {
		for _, sf := range l.dirty {
			if err = sf.f.SyncData(); err != nil {
				err = fmt.Errorf("sync %s: %w", l.segPath(sf.start), err)
				break
			}
		}
	}
	if err != nil {
		return 0, err
	}
	l.dirty = l.dirty[:0]
	if !l.opts.Volatile {
		// The promise goes to pebble before anyone learns the log is
		// durable: every page written after it (Flush returns only
		// then) follows it in pebble's order.
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], end)
		if err := l.st.Set("record redo log sync", promiseKey, b[:], false); err != nil {
			return 0, err
		}
	}
	return end, nil
}

// promiseKey is the store's record of how far the log was synced (the
// log's durable end, 8 bytes little-endian), written without a sync after
// every log sync. Pebble keeps its own writes in order, and a page is
// written only after the sync that covers its records, so any page that
// survives a crash comes with a promise at least as large as its needs:
// a log that ends before the promise lost records the pages depend on,
// damage rather than a torn tail (as pebble's own WAL records how far it
// was synced, FormatWALSyncChunks).
var promiseKey = []byte{store.PrefixMeta, 'l', 'o', 'g', 's', 'y', 'n', 'c'}

// readPromise returns the store's promise of how far the log was synced
// (0: none).
func (l *Log) readPromise() (uint64, error) {
	var v uint64
	n := -1
	_, err := l.st.Get("open redo log", promiseKey, func(b []byte) {
		n = len(b)
		if n == 8 {
			v = binary.LittleEndian.Uint64(b)
		}
	})
	if err != nil {
		return 0, err
	}
	if n != -1 && n != 8 {
		return 0, fmt.Errorf("%w: the store's record of the log's sync is %d bytes", ErrCorruptLog, n)
	}
	return v, nil
}

// MaybeWrite writes the buffer to the files if it holds more than the
// configured bytes. Mtrs call it before they start, holding no latch. If
// another caller is writing or syncing, it leaves the buffer to grow: the
// next one writes it.
func (l *Log) MaybeWrite() error {
	if !l.Crossed() || l.Buffered() < l.opts.BufferBytes {
		return nil
	}
	if !l.writeMu.TryLock() {
		return nil
	}
	defer l.writeMu.Unlock()
	_, err := l.writeLocked()
	return err
}

// SyncTo returns when every record below upto is durable. Callers that
// arrive while a sync is in progress wait for it (through the Waiter) and
// then, if it did not cover them, the first of them leads the next: one
// sync serves every commit that arrived during the previous one. c, if not
// nil, counts the syncs this caller led and the syncs it waited for.
func (l *Log) SyncTo(c *Counts, upto uint64) error {
	l.mu.Lock()
	l.stats.SyncedCommits++
	upto = min(upto, l.end) // nothing past the end can be waited for
	for l.durable < upto {
		if l.closed {
			l.mu.Unlock()
			return ErrClosed
		}
		if l.syncing {
			ch := l.syncDone
			l.mu.Unlock()
			l.opts.Waiter.Wait(ch)
			if c != nil {
				c.LogSyncWaits++
			}
			l.mu.Lock()
			continue
		}
		l.syncing = true
		// The group is what was appended when the sync starts: a record
		// appended during it (as the simulator sees time, during the
		// sync's latency) waits for the next, even if this write took it.
		target := l.end
		l.mu.Unlock()
		l.opts.Waiter.SyncStart()
		l.writeMu.Lock()
		_, err := l.writeSyncLocked()
		l.writeMu.Unlock()
		l.mu.Lock()
		l.syncing = false
		close(l.syncDone)
		l.syncDone = make(chan struct{})
		if err != nil {
			l.mu.Unlock()
			return fmt.Errorf("cache: sync redo log: %w", err)
		}
		l.stats.Syncs++
		if c != nil {
			c.LogSyncs++
		}
		l.durable = max(l.durable, target)
		l.publishLocked()
	}
	l.mu.Unlock()
	return nil
}

// Checkpointed records that every page change below lsn is in the store
// and that the caller has made that durable, with a checkpoint record
// (SaveCheckpoint) from which recovery needs no record below keep. Every
// segment wholly below keep, except the one holding the log's end, is
// recycled: renamed to the name of a future segment, to be overwritten
// when the log gets there (PostgreSQL's RemoveOldXlogFiles renames WAL
// segments for reuse; InnoDB 8.0.30 keeps consumed files as
// #ib_redoN_tmp spares). Files beyond the capacity (added by overruns)
// and files of another size (the capacity changed) are removed instead.
func (l *Log) Checkpointed(lsn, keep uint64) error {
	l.mu.Lock()
	if lsn > l.ckptEnd {
		l.ckptEnd = lsn
		l.publishLocked()
	}
	// A segment the buffer has not yet been written to is never recycled.
	keep = min(keep, l.written)
	cut := 0
	for cut < len(l.segs)-1 && l.segs[cut].end() <= keep {
		cut++
	}
	old := slices.Clone(l.segs[:cut])
	l.segs = slices.Delete(l.segs, 0, cut)
	l.mu.Unlock()
	if cut == 0 {
		return nil
	}
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	for _, h := range old {
		if err := l.recycle(h); err != nil {
			return fmt.Errorf("cache: recycle redo log segment %s: %w", l.segPath(h.start), err)
		}
	}
	return l.syncDir(l.dir)
}

// recycle renames the file of segment h, which no reader needs any more,
// to the next free future segment name, or removes it. REQUIRES:
// l.writeMu held.
func (l *Log) recycle(h segHeader) error {
	if sf := l.open[h.start]; sf != nil {
		delete(l.open, h.start)
		l.dirty = slices.DeleteFunc(l.dirty, func(d *segFile) bool { return d == sf })
		if err := sf.f.Close(); err != nil {
			return err
		}
	}
	path := l.segPath(h.start)
	if l.nfiles > l.maxFiles || h.size != l.segSize {
		if err := l.fs.Remove(path); err != nil {
			return err
		}
		l.nfiles--
		return nil
	}
	// The first name past the live segments and the spares already named.
	l.mu.Lock()
	next := l.segs[len(l.segs)-1].end()
	l.mu.Unlock()
	for {
		i := slices.IndexFunc(l.spares, func(s spareFile) bool { return s.start == next })
		if i < 0 {
			break
		}
		next += l.spares[i].size
	}
	if err := l.fs.Rename(path, l.segPath(next)); err != nil {
		return err
	}
	l.spares = append(l.spares, spareFile{start: next, size: h.size})
	slices.SortFunc(l.spares, func(a, b spareFile) int { return cmp.Compare(a.start, b.start) })
	l.mu.Lock()
	l.stats.Recycled++
	l.mu.Unlock()
	return nil
}

// Close refuses further writes and closes the files; records not yet
// written are lost (a clean shutdown syncs first).
func (l *Log) Close() {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	l.mu.Lock()
	was := l.closed
	l.closed = true
	l.mu.Unlock()
	if was {
		return
	}
	if p := l.pre; p != nil {
		l.pre = nil
		<-p.done
		l.dropPrealloc(p)
	}
	for _, sf := range l.open {
		_ = sf.f.Close()
	}
	clear(l.open)
	l.dirty = nil
	if l.ctl != nil {
		_ = l.ctl.Close()
		l.ctl = nil
	}
}

// Scan calls fn for every stored record at or after from, in LSN order,
// with its LSN and body (valid only during the call), up to the log's
// end: the first frame that does not verify. Records before the segment
// holding from are skipped unread. A log that no longer holds from (its
// segment was recycled or is missing), or that ends before its durable
// LSN, is an error matching ErrCorruptLog naming the file.
func (l *Log) Scan(from uint64, fn func(lsn uint64, body []byte) error) error {
	l.mu.Lock()
	floor := l.durable
	if l.opts.Volatile {
		floor = l.written
	}
	l.mu.Unlock()
	files, err := l.listSegments()
	if err != nil {
		return fmt.Errorf("cache: scan redo log: %w", err)
	}
	starts := slices.Sorted(maps.Keys(files))
	// The segment holding from: the last that starts at or below it.
	k := sort.Search(len(starts), func(i int) bool { return starts[i] > from }) - 1
	if k < 0 {
		if len(starts) == 0 && floor <= FirstLSN {
			return nil // nothing was ever written
		}
		first := "none"
		if len(starts) > 0 {
			first = l.segPath(starts[0])
		}
		return fmt.Errorf("%w: records from LSN %d are needed, but the log's first segment file in %s is %s",
			ErrCorruptLog, from, l.dir, first)
	}
	h, ok, err := l.readHeader(starts[k])
	if err != nil {
		return fmt.Errorf("cache: scan redo log: %w", err)
	}
	if !ok {
		if from >= floor {
			return nil // a spare past the end: nothing there yet
		}
		return fmt.Errorf("%w: records from LSN %d are needed, but segment file %s has no valid header",
			ErrCorruptLog, from, l.segPath(starts[k]))
	}
	if from >= h.end() {
		// from is past the segment's last byte, and no file holds it.
		if from < floor {
			return fmt.Errorf("%w: records from LSN %d are needed, but no segment file in %s holds them (%s ends at LSN %d)",
				ErrCorruptLog, from, l.dir, l.segPath(h.start), h.end())
		}
		return nil
	}
	res, err := l.read(files, h, from, fn)
	if err != nil {
		return err
	}
	if res.end < floor {
		return fmt.Errorf("%w: the log ends at LSN %d in segment file %s, before LSN %d, which was synced",
			ErrCorruptLog, res.end, l.segPath(res.seg.start), floor)
	}
	return nil
}
