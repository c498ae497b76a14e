package redo

import (
	"encoding/binary"
	"fmt"

	"github.com/enginelab/enginelab/cache/page"
)

// A record is one mini-transaction: the operations it did, page by page,
// in the order it did them, and a note for the layer above. Each operation
// says what it did to one page in a few bytes (doc.go draws the format and
// lists the kinds). Redo of an operation reads only that page's earlier
// state and the operation's payload: pages are written back separately,
// and recovery skips, page by page, the records a page's LSN says it
// already holds.

// Kind says what an operation did to its page. The kind space is shared by
// the layers: each layer registers its own kinds (Register) in the range
// it owns, so that a layer above can add kinds without this package
// knowing what they mean, as InnoDB's mlog_id_t and MariaDB's mrec_type_t
// list every record type of the server.
type Kind uint8

// The kinds this package owns and applies itself, in MariaDB 10.5's style
// (physical, at offsets within the page). Ranges for the layers above:
//
//	 1 ..  31  cache: these, and the pool's own (space and meta pages)
//	32 ..  63  btree (node operations)
//	64 ..  95  heap (slotted page operations)
//	96 .. 127  engine (undo pages, transaction records, versions)
//
// The top bit of the kind byte is not part of the kind: it marks an
// operation on the same page as the one before it (opSamePage).
const (
	// KindNote carries the layer above's payload; it names no page.
	KindNote Kind = 1
	// KindInit formats a page from nothing: payload one byte, the page
	// kind; redo starts from page.Init, whatever the page held.
	KindInit Kind = 2
	// KindWrite writes bytes: payload uvarint offset, then the bytes.
	KindWrite Kind = 3
	// KindMemset fills bytes: payload uvarint offset, uvarint length, one
	// byte.
	KindMemset Kind = 4
	// KindMemmove moves bytes within the page (overlap allowed): payload
	// uvarint destination, uvarint source, uvarint length.
	KindMemmove Kind = 5
	// KindPageImage is a full page image (PostgreSQL's full-page write):
	// payload the page's bytes after the checksum field. Redo restores the
	// image and skips the page's other operations in the record, as
	// PostgreSQL restores a backup block instead of redoing the change.
	KindPageImage Kind = 6

	// MaxKind bounds the kinds.
	MaxKind Kind = 127

	opSamePage = 0x80
)

// ApplyFunc redoes one operation of a registered kind on buf, the bytes
// of page id, from payload. It must change buf exactly as the operation
// did when it was logged, given the same earlier page, and must return an
// error (never panic, never write outside buf) when the payload does not
// fit the page: a log may be damaged. Apply recovers a panic as a last
// resort and reports it as ErrCorruptLog.
type ApplyFunc func(id page.ID, buf, payload []byte) error

type kindEntry struct {
	name  string
	apply ApplyFunc
}

var kinds [MaxKind + 1]kindEntry

func init() {
	for _, k := range []struct {
		k    Kind
		name string
		fn   ApplyFunc
	}{
		{KindNote, "note", nil},
		{KindInit, "init", applyInit},
		{KindWrite, "write", applyWrite},
		{KindMemset, "memset", applyMemset},
		{KindMemmove, "memmove", applyMemmove},
		{KindPageImage, "page-image", applyPageImage},
	} {
		kinds[k.k] = kindEntry{name: k.name, apply: k.fn}
	}
}

// Register makes kind k known, with its name (for diagnostics) and the
// function that redoes it. Layers register their kinds from init
// functions; registering a kind twice, or outside 7..MaxKind, is a
// programming error and panics at startup.
func Register(k Kind, name string, fn ApplyFunc) {
	if k < 7 || k > MaxKind || fn == nil {
		panic(fmt.Sprintf("redo: cannot register kind %d (%q)", k, name))
	}
	if kinds[k].name != "" {
		panic(fmt.Sprintf("redo: kind %d registered twice: %q and %q", k, kinds[k].name, name))
	}
	kinds[k] = kindEntry{name: name, apply: fn}
}

func (k Kind) String() string {
	if k <= MaxKind && kinds[k].name != "" {
		return kinds[k].name
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Builder appends operations to a record (the mini-transaction keeps one
// and reuses it). The zero value is ready; Reset empties it.
type Builder struct {
	buf  []byte
	last page.ID
	has  bool
}

// Op appends one operation of kind k on page id with its payload.
func (b *Builder) Op(id page.ID, k Kind, payload []byte) {
	if b.has && id == b.last {
		b.buf = append(b.buf, byte(k)|opSamePage)
	} else {
		b.buf = append(b.buf, byte(k))
		b.buf = binary.AppendUvarint(b.buf, uint64(id.Space))
		b.buf = binary.AppendUvarint(b.buf, uint64(id.Page))
		b.last, b.has = id, true
	}
	b.buf = binary.AppendUvarint(b.buf, uint64(len(payload)))
	b.buf = append(b.buf, payload...)
}

// Note appends the layer above's payload.
func (b *Builder) Note(note []byte) {
	b.buf = append(b.buf, byte(KindNote))
	b.buf = binary.AppendUvarint(b.buf, uint64(len(note)))
	b.buf = append(b.buf, note...)
}

// Bytes returns the record so far (valid until the next change).
func (b *Builder) Bytes() []byte { return b.buf }

// Len returns the record's length so far.
func (b *Builder) Len() int { return len(b.buf) }

// Reset empties the builder, keeping its storage unless it grew past
// 1 MiB.
func (b *Builder) Reset() {
	if cap(b.buf) > 1<<20 {
		b.buf = nil
	}
	b.buf = b.buf[:0]
	b.has = false
}

// NoteRecord returns a record that carries only note.
func NoteRecord(note []byte) []byte {
	var b Builder
	b.Note(note)
	return b.buf
}

// ErrCorruptLog means a redo record does not decode, or the stored log has
// a gap or a bad frame. It matches page.ErrCorrupt.
var ErrCorruptLog = page.NewCorruptKind("cache: corrupt redo log")

// Op is one decoded operation on a page.
type Op struct {
	Kind    Kind
	Payload []byte // aliases the record's body
}

// PageRedo is one page's part of a decoded record: which page, and the
// operations on it in the order they were done. Fresh says the first
// operation formats the page from nothing (KindInit), so redo may create a
// page the store does not have.
type PageRedo struct {
	ID    page.ID
	Fresh bool
	Ops   []Op
}

// Decode splits a record body into its pages' operations, grouped by page
// in the order each page first appears (an operation's relative order
// within its page is kept; across pages it does not matter), and its note
// (the concatenation of its note operations). It reuses pages' storage;
// the slices alias body. A body that does not decode, or names a kind no
// layer registered, is an error matching ErrCorruptLog.
func Decode(body []byte, pages []PageRedo) ([]PageRedo, []byte, error) {
	r := reader{b: body}
	for i := range pages {
		pages[i].Ops = pages[i].Ops[:0]
	}
	pages = pages[:0]
	var note []byte
	notes := 0
	cur := -1
	for r.off < len(body) && r.err == nil {
		c := r.byte()
		k := Kind(c &^ opSamePage)
		if k == KindNote {
			if c&opSamePage != 0 {
				return nil, nil, fmt.Errorf("%w: note with the same-page flag at byte %d", ErrCorruptLog, r.off-1)
			}
			n := r.take(r.uvarint())
			if notes == 0 {
				note = n
			} else {
				note = append(append([]byte(nil), note...), n...)
			}
			notes++
			continue
		}
		if k == 0 || kinds[k].name == "" {
			return nil, nil, fmt.Errorf("%w: unknown operation kind %d at byte %d", ErrCorruptLog, k, r.off-1)
		}
		if c&opSamePage == 0 {
			id := page.ID{Space: uint32(r.uvarint()), Page: uint32(r.uvarint())}
			cur = -1
			for i := range pages {
				if pages[i].ID == id {
					cur = i
					break
				}
			}
			if cur < 0 {
				cur = len(pages)
				if cur < cap(pages) {
					pages = pages[:cur+1]
					pages[cur].ID, pages[cur].Fresh = id, false
					pages[cur].Ops = pages[cur].Ops[:0]
				} else {
					pages = append(pages, PageRedo{ID: id})
				}
			}
		} else if cur < 0 {
			return nil, nil, fmt.Errorf("%w: same-page operation with no page before it at byte %d", ErrCorruptLog, r.off-1)
		}
		payload := r.take(r.uvarint())
		if r.err != nil {
			break
		}
		pr := &pages[cur]
		if len(pr.Ops) == 0 && k == KindInit {
			pr.Fresh = true
		}
		pr.Ops = append(pr.Ops, Op{Kind: k, Payload: payload})
	}
	if r.err != nil {
		return nil, nil, r.err
	}
	return pages, note, nil
}

// Apply redoes the page's operations on buf, its bytes (for a fresh page,
// whatever the frame held: the first operation formats it). It leaves buf
// as the logged mini-transaction left the page, apart from the checksum
// and the LSN, which the caller sets. An operation that does not fit the
// page is an error matching ErrCorruptLog (buf may then be half changed).
func (pr *PageRedo) Apply(buf []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: redo of page %s panicked: %v", ErrCorruptLog, pr.ID, p)
		}
	}()
	ops := pr.Ops
	for i := len(ops) - 1; i >= 0; i-- {
		if ops[i].Kind == KindPageImage {
			ops = ops[i : i+1] // the image is the page after every op
			break
		}
	}
	for i := range ops {
		op := &ops[i]
		if err := kinds[op.Kind].apply(pr.ID, buf, op.Payload); err != nil {
			return fmt.Errorf("%w: %s operation on page %s: %w", ErrCorruptLog, op.Kind, pr.ID, err)
		}
	}
	return nil
}

// Reader decodes a payload: unsigned varints, bytes, and lengths, with the
// first failure kept (Err) and every later read returning zero values, so
// that an ApplyFunc can read its fields and check once.
type Reader struct{ r reader }

// NewReader reads payload.
func NewReader(payload []byte) Reader { return Reader{reader{b: payload}} }

// Uvarint reads an unsigned varint.
func (r *Reader) Uvarint() uint64 { return r.r.uvarint() }

// Int reads an unsigned varint that must be at most max.
func (r *Reader) Int(max int) int {
	v := r.r.uvarint()
	if v > uint64(max) {
		r.r.failf("value %d above %d", v, max)
		return 0
	}
	return int(v)
}

// Byte reads one byte.
func (r *Reader) Byte() byte { return r.r.byte() }

// Bytes reads n bytes (aliasing the payload).
func (r *Reader) Bytes(n int) []byte { return r.r.take(uint64(n)) }

// Prefixed reads a uvarint length and that many bytes.
func (r *Reader) Prefixed() []byte { return r.r.take(r.r.uvarint()) }

// Rest returns the unread bytes.
func (r *Reader) Rest() []byte {
	if r.r.err != nil {
		return nil
	}
	b := r.r.b[r.r.off:]
	r.r.off = len(r.r.b)
	return b
}

// Failed returns the first failure so far (nil while every read fit),
// without Err's check for unread bytes: for loops that read on.
func (r *Reader) Failed() error { return r.r.err }

// Left returns how many bytes are unread.
func (r *Reader) Left() int { return len(r.r.b) - r.r.off }

// Err returns the first failure, or an error if bytes are left unread.
func (r *Reader) Err() error {
	if r.r.err == nil && r.r.off != len(r.r.b) {
		return fmt.Errorf("%d bytes left in the payload", len(r.r.b)-r.r.off)
	}
	return r.r.err
}

func applyInit(id page.ID, buf, p []byte) error {
	if len(p) != 1 || page.Kind(p[0]) >= page.NumKinds {
		return fmt.Errorf("bad payload %x", p)
	}
	page.Init(buf, id, page.Kind(p[0]))
	return nil
}

func applyPageImage(_ page.ID, buf, p []byte) error {
	if len(p) != len(buf)-page.ChecksumSize {
		return fmt.Errorf("an image of %d bytes for a page of %d", len(p), len(buf))
	}
	copy(buf[page.ChecksumSize:], p)
	return nil
}

func applyWrite(_ page.ID, buf, p []byte) error {
	r := NewReader(p)
	off := r.Int(len(buf))
	b := r.Rest()
	if err := r.Err(); err != nil {
		return err
	}
	if len(b) > len(buf)-off {
		return fmt.Errorf("write of %d bytes at %d outside the page", len(b), off)
	}
	copy(buf[off:], b)
	return nil
}

func applyMemset(_ page.ID, buf, p []byte) error {
	r := NewReader(p)
	off := r.Int(len(buf))
	n := r.Int(len(buf) - off)
	c := r.Byte()
	if err := r.Err(); err != nil {
		return err
	}
	s := buf[off : off+n]
	for i := range s {
		s[i] = c
	}
	return nil
}

func applyMemmove(_ page.ID, buf, p []byte) error {
	r := NewReader(p)
	dst := r.Int(len(buf))
	src := r.Int(len(buf))
	n := r.Int(len(buf) - max(dst, src))
	if err := r.Err(); err != nil {
		return err
	}
	copy(buf[dst:dst+n], buf[src:src+n])
	return nil
}

type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = fmt.Errorf("%w: record ends early at byte %d", ErrCorruptLog, r.off)
	}
}

func (r *reader) failf(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: at byte %d: %s", ErrCorruptLog, r.off, fmt.Sprintf(format, args...))
	}
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.fail()
		return 0
	}
	r.off += n
	return v
}

func (r *reader) byte() byte {
	if r.err != nil || r.off >= len(r.b) {
		r.fail()
		return 0
	}
	c := r.b[r.off]
	r.off++
	return c
}

func (r *reader) take(n uint64) []byte {
	if r.err != nil || n > uint64(len(r.b)-r.off) {
		r.fail()
		return nil
	}
	s := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return s
}
