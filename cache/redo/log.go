package redo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/store"
)

// Log is the redo log: a stream of framed records (doc.go draws the
// frames and how they are grouped into pebble keys) kept in the same
// pebble database as the pages, under store.PrefixLog. A record's LSN is
// the offset of its frame in the stream, so LSNs only grow, and they keep
// growing across restarts (the stream continues where the stored log
// ends).
//
// Records are appended to an in-memory buffer under one mutex (that order
// is the log order). The buffer reaches pebble in chunks, one pebble key per
// chunk, written without a sync: pebble keeps its own writes in order, so a
// page image written after a chunk can never survive a crash that the
// chunk does not. That is the write-ahead rule, enforced by Flush, which the
// buffer pool calls before it writes a page. SyncTo makes the log durable;
// concurrent callers share one sync (group commit).
//
// Every pebble call the log makes goes through its store's boundary (see
// store.PebbleStore): damaged files give an error matching page.ErrCorrupt,
// never a panic.
type Log struct {
	st   *store.PebbleStore
	opts LogOptions

	// writeMu orders chunk writes: a chunk reaches pebble after every
	// chunk before it. It is taken before mu, never while holding it.
	writeMu sync.Mutex

	// mu guards every field below: the buffer and the LSNs that say how
	// far the stream is written and synced, the sync in progress, the
	// chunk index, the stats and closed. It is never held during a pebble
	// call or a sync.
	mu       sync.Mutex
	buf      []byte // records from bufStart (== written) to end
	spare    []byte
	bufStart uint64
	end      uint64        // LSN of the next record
	written  uint64        // records below are in pebble
	durable  uint64        // records below are synced
	syncing  bool          // a SyncTo is leading a sync
	syncDone chan struct{} // closed when that sync ends
	ckptEnd  uint64        // log end at the last checkpoint
	chunks   []uint64      // first LSN of every stored chunk, ascending
	stats    LogStats
	closed   bool
}

// LogStats are the log's totals since it was opened.
type LogStats struct {
	Records       int64
	Bytes         int64
	Syncs         int64 // syncs performed
	SyncedCommits int64 // SyncTo calls that asked for durability (commits in sync mode)
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
	// commit, and what runs at the start of every sync. Default
	// RealWaiter.
	Waiter Waiter
	// Sync makes every pebble write before it durable. Default: a synced
	// empty pebble log record. Tests and the simulator replace it (a sync
	// they can hold open, a priced device).
	Sync func() error
	// BufferBytes is how many bytes the log buffer holds before the next
	// mtr writes it to pebble. Default 1 MiB.
	BufferBytes int
	// Volatile says the pebble database runs without its WAL (an
	// in-memory store, store.PebbleStore.Volatile): the default Sync does
	// nothing and the checkpoint record is written unsynced.
	Volatile bool
}

// FirstLSN is the LSN of the first record of a new log. 0 means "never
// logged" in a page header.
const FirstLSN = 8

// ErrClosed means the log was closed.
var ErrClosed = errors.New("cache: redo log closed")

func logKey(lsn uint64) []byte {
	k := make([]byte, 9)
	k[0] = store.PrefixLog
	binary.BigEndian.PutUint64(k[1:], lsn)
	return k
}

// Open opens the log stored in st. It reads the chunk index (not the
// records: Scan does that) to learn where the stream ends.
func Open(st *store.PebbleStore, o *LogOptions) (*Log, error) {
	l := &Log{st: st, syncDone: make(chan struct{})}
	if o != nil {
		l.opts = *o
	}
	if l.opts.Waiter == nil {
		l.opts.Waiter = RealWaiter{}
	}
	if l.opts.Volatile {
		if l.opts.Sync == nil {
			l.opts.Sync = func() error { return nil }
		}
	}
	if l.opts.Sync == nil {
		l.opts.Sync = st.Sync
	}
	if l.opts.BufferBytes <= 0 {
		l.opts.BufferBytes = 1 << 20
	}
	l.end = FirstLSN
	it, err := st.NewIter("open redo log", []byte{store.PrefixLog}, []byte{store.PrefixLog + 1})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		if len(k) != 9 {
			return nil, fmt.Errorf("%w: log key of %d bytes", ErrCorruptLog, len(k))
		}
		start := binary.BigEndian.Uint64(k[1:])
		if len(l.chunks) > 0 && start != l.end {
			return nil, fmt.Errorf("%w: chunk at LSN %d follows a log that ends at %d", ErrCorruptLog, start, l.end)
		}
		l.chunks = append(l.chunks, start)
		v, err := it.Value()
		if err != nil {
			return nil, err
		}
		l.end = start + uint64(len(v))
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	l.bufStart, l.written, l.durable, l.ckptEnd = l.end, l.end, l.end, l.end
	return l, nil
}

// Stamper is told the LSN its record got, under the log's mutex (Append).
// It is an interface, not a func, so that a caller passing itself (the
// mini-transaction) allocates nothing: a closure passed where the callee is
// not known at compile time escapes to the heap on every call.
type Stamper interface {
	Stamp(lsn uint64)
}

// Append adds one record (body: an encoded mtr record, Encode) and returns
// its LSN. stamp, if not nil, is called under the log's mutex with that LSN, so
// that record order and LSN order agree: the mini-transaction stamps its
// pages' headers there. c, if not nil, counts the record and its bytes.
func (l *Log) Append(c *Counts, body []byte, stamp Stamper) uint64 {
	var hdr [8]byte
	binary.LittleEndian.PutUint32(hdr[:], uint32(len(body)))
	binary.LittleEndian.PutUint32(hdr[4:], page.CRC32C(body))
	n := int64(len(body) + 8)
	l.mu.Lock()
	lsn := l.end
	l.buf = append(l.buf, hdr[:]...)
	l.buf = append(l.buf, body...)
	l.end += uint64(n)
	l.stats.Records++
	l.stats.Bytes += n
	if stamp != nil {
		stamp.Stamp(lsn)
	}
	l.mu.Unlock()
	if c != nil {
		c.LogRecords++
		c.LogBytes += n
	}
	return lsn
}

// End returns the LSN the next record will get.
func (l *Log) End() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.end
}

// Durable returns the LSN below which every record is synced.
func (l *Log) Durable() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.durable
}

// Stats returns the log's totals.
func (l *Log) Stats() LogStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats
}

// SinceCheckpoint returns the bytes logged since the last checkpoint.
func (l *Log) SinceCheckpoint() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.end - l.ckptEnd
}

// Buffered returns the bytes not yet written to pebble.
func (l *Log) Buffered() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buf)
}

// Flush writes the log to pebble (without a sync) at least past the record
// at lsn. The buffer pool calls it before it writes a page whose LSN is lsn
// (the write-ahead rule).
func (l *Log) Flush(lsn uint64) error {
	l.mu.Lock()
	w := l.written
	l.mu.Unlock()
	if lsn < w {
		return nil
	}
	return l.write()
}

// write moves the whole buffer to pebble as one chunk.
func (l *Log) write() error {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	if len(l.buf) == 0 {
		l.mu.Unlock()
		return nil
	}
	data, start, end := l.buf, l.bufStart, l.end
	l.buf, l.spare = l.spare[:0], nil
	l.bufStart = end
	l.mu.Unlock()
	err := l.st.Set("write redo log", logKey(start), data, false)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		// Put the data back in front of whatever came since, so that no
		// record is lost and order holds.
		l.buf = append(data, l.buf...)
		l.bufStart = start
		return fmt.Errorf("cache: write redo log at LSN %d: %w", start, err)
	}
	l.written = end
	l.chunks = append(l.chunks, start)
	if cap(data) <= 4*l.opts.BufferBytes {
		l.spare = data[:0]
	}
	return nil
}

// MaybeWrite writes the buffer to pebble if it holds more than the
// configured bytes. Mtrs call it before they start, holding no latch.
func (l *Log) MaybeWrite() error {
	if l.Buffered() < l.opts.BufferBytes {
		return nil
	}
	return l.write()
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
		target := l.end
		l.mu.Unlock()
		l.opts.Waiter.SyncStart()
		err := l.write()
		if err == nil {
			err = l.opts.Sync()
		}
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
		if target > l.durable {
			l.durable = target
		}
	}
	l.mu.Unlock()
	return nil
}

// Checkpointed records that every page change below lsn is in the store
// and that the caller has made that durable; chunks wholly below keep (the
// oldest record recovery still needs) are deleted.
func (l *Log) Checkpointed(lsn, keep uint64) error {
	l.mu.Lock()
	if lsn > l.ckptEnd {
		l.ckptEnd = lsn
	}
	// The last chunk that starts at or below keep holds keep: drop the
	// ones before it.
	cut := 0
	for cut+1 < len(l.chunks) && l.chunks[cut+1] <= keep {
		cut++
	}
	var upto uint64
	if cut > 0 {
		upto = l.chunks[cut]
		l.chunks = append(l.chunks[:0], l.chunks[cut:]...)
	}
	l.mu.Unlock()
	if upto == 0 {
		return nil
	}
	if err := l.st.DeleteRange("drop redo log", logKey(0), logKey(upto)); err != nil {
		return fmt.Errorf("cache: drop redo log below LSN %d: %w", upto, err)
	}
	return nil
}

// Close refuses further writes; records not yet written are lost (a clean
// shutdown syncs first).
func (l *Log) Close() {
	l.writeMu.Lock()
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.writeMu.Unlock()
}

// Scan calls fn for every stored record at or after from, in LSN order,
// with its LSN and body (valid only during the call). Records before the
// chunk holding from are skipped unread.
func (l *Log) Scan(from uint64, fn func(lsn uint64, body []byte) error) error {
	it, err := l.st.NewIter("scan redo log", []byte{store.PrefixLog}, []byte{store.PrefixLog + 1})
	if err != nil {
		return fmt.Errorf("cache: scan redo log: %w", err)
	}
	defer it.Close()
	ok := it.SeekLT(logKey(from + 1))
	if !ok {
		// No chunk starts at or before from: the log must then begin
		// after it only if nothing was ever logged before from.
		if ok = it.First(); ok {
			if start := binary.BigEndian.Uint64(it.Key()[1:]); start > max(from, FirstLSN) {
				return fmt.Errorf("%w: the log starts at LSN %d, but records from LSN %d are needed", ErrCorruptLog, start, from)
			}
		}
	}
	for ; ok; ok = it.Next() {
		start := binary.BigEndian.Uint64(it.Key()[1:])
		v, err := it.Value()
		if err != nil {
			return fmt.Errorf("cache: scan redo log: %w", err)
		}
		for off := 0; off < len(v); {
			if len(v)-off < 8 {
				return fmt.Errorf("%w: chunk at LSN %d ends inside a frame header", ErrCorruptLog, start)
			}
			n := int(binary.LittleEndian.Uint32(v[off:]))
			sum := binary.LittleEndian.Uint32(v[off+4:])
			if n > len(v)-off-8 {
				return fmt.Errorf("%w: record at LSN %d runs past its chunk", ErrCorruptLog, start+uint64(off))
			}
			body := v[off+8 : off+8+n]
			if page.CRC32C(body) != sum {
				return fmt.Errorf("%w: record at LSN %d fails its checksum", ErrCorruptLog, start+uint64(off))
			}
			lsn := start + uint64(off)
			if lsn >= from {
				if err := fn(lsn, body); err != nil {
					return err
				}
			}
			off += 8 + n
		}
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("cache: scan redo log: %w", err)
	}
	return nil
}
