package tier

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/enginelab/enginelab/cache/page"
)

// Trace event operations, the first field of an event line.
const (
	TraceGet    byte = 'g'
	TracePut    byte = 'p'
	TraceDelete byte = 'd'
)

// traceMagic opens the header line; the version is part of it, so a
// future v2 is refused by this reader rather than misread.
const traceMagic = "# enginelab page trace v1"

// ErrBadTrace is wrapped by every error of ReadTrace about the trace's
// content (not about reading it); the message names the line and what was
// wrong with it.
var ErrBadTrace = errors.New("cache: malformed page trace")

// TraceEvent is one call recorded in a trace.
type TraceEvent struct {
	Op    byte    // TraceGet, TracePut or TraceDelete
	ID    page.ID // the page (Key.ID)
	Bytes int32   // the page's length
}

// Trace is a page trace, read back by ReadTrace. A page trace is the stream of calls that reached a tier: what the buffer
// pool asked for (its misses) and pushed (its evictions or its store reads
// and write-backs, by placement mode). Recorded once from a run, it can be
// replayed into any tier policy at any size (sim.ReplayTrace), so that a
// policy experiment costs one run of the engine, and a non-deterministic
// policy such as ristretto can be measured without making the run itself
// depend on timing.
//
// The format is text, one event per line, so that a trace can be read,
// grepped, cut with head and written by hand in a test:
//
//	trace  = header { line }
//	header = "# enginelab page trace v1" { " " key "=" value } "\n"
//	         keys: page_size (decimal, page.ValidSize), mode ("exclusive"
//	         or "inclusive"); both required, each once, no others
//	line   = event | comment
//	event  = op " " space " " page " " bytes "\n"
//	op     = "g" (Get) | "p" (Put) | "d" (Delete)
//	space  = decimal uint32      the page.ID's Space
//	page   = decimal uint32      the page.ID's Page
//	bytes  = decimal, 1 to 2^31-1: len(dst) of a Get, len(page) of a Put,
//	         the page size for a Delete (Tier.Delete has no length)
//	comment = "#" { any } "\n"
//
// Fields may be separated by runs of spaces or tabs; a final line without
// its newline is accepted. For example, a pool of 16 KiB pages in
// exclusive mode that misses page 12:345, reads it from the store, and
// later evicts it to the tier:
//
//	# enginelab page trace v1 page_size=16384 mode=exclusive
//	g 12 345 16384
//	p 12 345 16384
//
// A trace records what the pool did given the tier it ran with, and the
// pool's calls depend on the tier's answers: in exclusive mode it deletes
// a page it got back, in inclusive mode it pushes a page only when the
// tier missed. A trace meant for comparing policies should therefore be
// recorded over a NullTier (every Get misses), which leaves the pool's
// demand and nothing of any policy; the replay then re-applies the pool's
// rules with each policy's own answers (see sim.ReplayTrace). The DB and
// Epoch of the keys are not recorded: within one run they are constant.
type Trace struct {
	PageSize int  // the header's page_size
	Mode     Mode // the header's mode: where the pool put pages in the tier
	Events   []TraceEvent
}

// Pages counts the distinct pages the trace names.
func (t *Trace) Pages() int {
	seen := make(map[page.ID]struct{})
	for _, e := range t.Events {
		seen[e.ID] = struct{}{}
	}
	return len(seen)
}

// TraceTier is a Tier that records every call it gets to a writer, in the
// trace format (see Trace), and then forwards the call to the tier it wraps.
//
// Recording is best effort as far as the engine is concerned: a failed
// write never fails a tier call (a tier's error is a miss, and a broken
// trace file must not change what the run does). The first write error is
// kept; later events are not written, and Flush, Close and Err report it.
//
// Concurrency: safe for concurrent use, as a Tier must be. A call appends
// its line under mu and forwards outside it (a memcached round trip must
// not serialize the pool's callers), so the trace's order is the order in
// which calls took the lock, which can differ from the order the inner tier
// applied them only for calls that race on one page; the pool makes none
// (a page being read in is private to its loader, and a page is pushed
// only once out of the pool).
type TraceTier struct {
	inner    Tier
	pageSize int

	// mu guards the writer, the line buffer and the first error: a call
	// appends its line under it and forwards outside it.
	mu struct {
		sync.Mutex
		w    *bufio.Writer
		line []byte // scratch for one line, reused
		err  error  // the first write error, sticky
	}
}

var _ Tier = (*TraceTier)(nil)

// NewTraceTier returns a tier that records to w every call and forwards it
// to inner (a NullTier when inner is nil). The header is written at once
// with pageSize (page.ValidSize) and mode (Exclusive or Inclusive);
// otherwise nothing is recorded and Flush returns an error wrapping
// ErrInvalidOptions (the constructor has no error, so that a recording tier
// can be put wherever a tier goes). Lines are buffered: call Flush (or
// Close) before reading w. The caller owns w: Close does not close it.
func NewTraceTier(inner Tier, w io.Writer, pageSize int, mode Mode) *TraceTier {
	if inner == nil {
		inner = NewNullTier()
	}
	t := &TraceTier{inner: inner, pageSize: pageSize}
	t.mu.w = bufio.NewWriterSize(w, 64<<10)
	switch {
	case !page.ValidSize(pageSize):
		t.mu.err = fmt.Errorf("cache: %w: trace tier page size %d: want a power of two from %d to %d",
			ErrInvalidOptions, pageSize, page.MinSize, page.MaxSize)
	case mode != Exclusive && mode != Inclusive:
		t.mu.err = fmt.Errorf("cache: %w: trace tier mode %q: want %s or %s", ErrInvalidOptions, mode, Exclusive, Inclusive)
	default:
		_, t.mu.err = fmt.Fprintf(t.mu.w, "%s page_size=%d mode=%s\n", traceMagic, pageSize, mode)
	}
	return t
}

// record writes one event line.
func (t *TraceTier) record(op byte, id page.ID, n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.err != nil {
		return
	}
	b := append(t.mu.line[:0], op, ' ')
	b = strconv.AppendUint(b, uint64(id.Space), 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, uint64(id.Page), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, '\n')
	t.mu.line = b
	_, t.mu.err = t.mu.w.Write(b)
}

// Get implements Tier: it records a get of len(dst) bytes and forwards.
func (t *TraceTier) Get(k Key, lsn uint64, dst []byte) (bool, error) {
	t.record(TraceGet, k.ID, len(dst))
	return t.inner.Get(k, lsn, dst)
}

// Put implements Tier: it records a put of len(page) bytes and forwards.
func (t *TraceTier) Put(k Key, lsn uint64, page []byte) (bool, error) {
	t.record(TracePut, k.ID, len(page))
	return t.inner.Put(k, lsn, page)
}

// Delete implements Tier: it records a delete of a page of the trace's
// page size and forwards.
func (t *TraceTier) Delete(k Key) error {
	t.record(TraceDelete, k.ID, t.pageSize)
	return t.inner.Delete(k)
}

// Stats implements Tier: the inner tier's counters.
func (t *TraceTier) Stats() Stats { return t.inner.Stats() }

// Name implements Tier: the inner tier's name, so that a report names the
// policy that answered, recorded or not.
func (t *TraceTier) Name() string { return t.inner.Name() }

// InProcessBytes is the inner tier's (InProcessBytes): recording adds only
// its line buffer.
func (t *TraceTier) InProcessBytes() int64 { return InProcessBytes(t.inner) }

// Flush writes the buffered lines to w and returns the first error of any
// write so far (or of the configuration).
func (t *TraceTier) Flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.err == nil {
		t.mu.err = t.mu.w.Flush()
	}
	return t.mu.err
}

// Err returns the first write error, if any, without flushing.
func (t *TraceTier) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.err
}

// Close implements Tier: it flushes the trace and closes the inner tier,
// and returns the first of their errors.
func (t *TraceTier) Close() error {
	return errors.Join(t.Flush(), t.inner.Close())
}

// NullTier is a Tier that stores nothing: every Get misses, every Put is
// accepted (stored is true) and forgotten, every Delete succeeds. Behind a
// TraceTier it records the pool's demand without any policy's answers:
// the trace to replay into policies. It counts its calls; Items, Bytes and
// Capacity are 0. Safe for concurrent use.
type NullTier struct {
	gets, puts, deletes, errors atomic.Int64
	closed                      atomic.Bool
}

var _ Tier = (*NullTier)(nil)

// NewNullTier returns an empty tier that stays empty.
func NewNullTier() *NullTier { return &NullTier{} }

// Get implements Tier: always a miss.
func (t *NullTier) Get(k Key, lsn uint64, dst []byte) (bool, error) {
	t.gets.Add(1)
	if t.closed.Load() {
		t.errors.Add(1)
		return false, ErrClosed
	}
	return false, nil
}

// Put implements Tier: accepted, and forgotten.
func (t *NullTier) Put(k Key, lsn uint64, page []byte) (bool, error) {
	t.puts.Add(1)
	if t.closed.Load() {
		t.errors.Add(1)
		return false, ErrClosed
	}
	return true, nil
}

// Delete implements Tier.
func (t *NullTier) Delete(k Key) error {
	t.deletes.Add(1)
	if t.closed.Load() {
		t.errors.Add(1)
		return ErrClosed
	}
	return nil
}

// Stats implements Tier.
func (t *NullTier) Stats() Stats {
	return Stats{Gets: t.gets.Load(), Puts: t.puts.Load(), Deletes: t.deletes.Load(), Errors: t.errors.Load()}
}

// Name implements Tier.
func (t *NullTier) Name() string { return "null" }

// InProcessBytes is 0: a NullTier keeps nothing (InProcessBytes).
func (t *NullTier) InProcessBytes() int64 { return 0 }

// Close implements Tier. Later calls fail with ErrClosed, as with the other
// backends; closing again is a no-op.
func (t *NullTier) Close() error {
	t.closed.Store(true)
	return nil
}

// ReadTrace reads a whole trace. An error about the content wraps
// ErrBadTrace and names the line; an error of r is returned as it is,
// wrapped with the line reached.
func ReadTrace(r io.Reader) (*Trace, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 4096) // a valid line is under 60 bytes
	tr := &Trace{}
	line := 0
	for sc.Scan() {
		line++
		text := sc.Bytes()
		if line == 1 {
			if err := tr.parseHeader(string(text)); err != nil {
				return nil, fmt.Errorf("%w: line 1: %s", ErrBadTrace, err)
			}
			continue
		}
		if len(text) > 0 && text[0] == '#' {
			continue
		}
		e, err := parseEvent(text)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %s", ErrBadTrace, line, err)
		}
		tr.Events = append(tr.Events, e)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%w: line %d: longer than 4096 bytes", ErrBadTrace, line+1)
		}
		return nil, fmt.Errorf("cache: reading page trace, line %d: %w", line+1, err)
	}
	if line == 0 {
		return nil, fmt.Errorf("%w: line 1: empty: no header %q", ErrBadTrace, traceMagic)
	}
	return tr, nil
}

// parseHeader reads the header line into tr. Its errors say what is wrong
// without the line number, which the caller adds.
func (tr *Trace) parseHeader(s string) error {
	rest, ok := strings.CutPrefix(s, traceMagic)
	if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '\t') {
		return fmt.Errorf("not a header %q: want one starting %q", truncate(s), traceMagic)
	}
	var sawSize, sawMode bool
	for _, kv := range strings.Fields(rest) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("header field %q: want key=value", truncate(kv))
		}
		switch k {
		case "page_size":
			n, err := strconv.Atoi(v)
			if sawSize || err != nil || !page.ValidSize(n) {
				return fmt.Errorf("header page_size=%s: want one, a power of two from %d to %d", truncate(v), page.MinSize, page.MaxSize)
			}
			tr.PageSize, sawSize = n, true
		case "mode":
			m := Mode(v)
			if sawMode || (m != Exclusive && m != Inclusive) {
				return fmt.Errorf("header mode=%s: want one, %s or %s", truncate(v), Exclusive, Inclusive)
			}
			tr.Mode, sawMode = m, true
		default:
			return fmt.Errorf("header field %q: unknown key, want page_size or mode", truncate(k))
		}
	}
	if !sawSize || !sawMode {
		return errors.New("header: want page_size=N and mode=M")
	}
	return nil
}

// parseEvent reads one event line.
func parseEvent(b []byte) (TraceEvent, error) {
	f := bytes.Fields(b)
	if len(f) != 4 {
		return TraceEvent{}, fmt.Errorf("%q: want 4 fields (op space page bytes), got %d", truncate(string(b)), len(f))
	}
	var e TraceEvent
	if len(f[0]) != 1 || (f[0][0] != TraceGet && f[0][0] != TracePut && f[0][0] != TraceDelete) {
		return e, fmt.Errorf("op %q: want g, p or d", truncate(string(f[0])))
	}
	e.Op = f[0][0]
	space, err := strconv.ParseUint(string(f[1]), 10, 32)
	if err != nil {
		return e, fmt.Errorf("space %q: want a decimal from 0 to %d", truncate(string(f[1])), uint32(math.MaxUint32))
	}
	no, err := strconv.ParseUint(string(f[2]), 10, 32)
	if err != nil {
		return e, fmt.Errorf("page %q: want a decimal from 0 to %d", truncate(string(f[2])), uint32(math.MaxUint32))
	}
	n, err := strconv.ParseInt(string(f[3]), 10, 32)
	if err != nil || n <= 0 {
		return e, fmt.Errorf("bytes %q: want a decimal from 1 to %d", truncate(string(f[3])), math.MaxInt32)
	}
	e.ID = page.ID{Space: uint32(space), Page: uint32(no)}
	e.Bytes = int32(n)
	return e, nil
}

// truncate shortens what an error message quotes from the input.
func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
