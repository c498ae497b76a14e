package redo

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/enginelab/enginelab/cache/page"
)

// The record of a mini-transaction (doc.go draws it): the pages it changed,
// each as the byte ranges that differ from its before-image, and a note.
// The page header's checksum and LSN are never in a range: redo sets the
// LSN from the record, and a write-out seals the checksum.
const (
	flagFresh = 1 // the page is logged against zeros (Change.Before nil)

	// appendDiff's grain: it skips equal blocks with one compare, then
	// looks for differences chunk by chunk.
	diffBlock = 1024
	diffChunk = 64
	diffGap   = 16 // ranges closer than this are merged
)

var zeroPage [page.MaxSize]byte

// Change is one page's change in a mini-transaction, as Encode logs it:
// the page's bytes before and after. Before nil means the page was created
// (or formatted from nothing) in the mini-transaction: the change is logged
// against a zero page and marked fresh, and redo starts the page from
// zeros.
type Change struct {
	ID     page.ID
	Before []byte // nil: fresh
	After  []byte
}

// Encode appends to dst the record of a mini-transaction that made changes
// and carries note (for the layer above; may be empty), and returns the
// extended slice. Before and After of a change are one page long. The
// record is what Log.Append takes and Decode reads back; doc.go draws it.
func Encode(dst []byte, changes []Change, note []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(changes)))
	for i := range changes {
		c := &changes[i]
		dst = binary.AppendUvarint(dst, uint64(c.ID.Space))
		dst = binary.AppendUvarint(dst, uint64(c.ID.Page))
		var flags byte
		before := c.Before
		if before == nil {
			flags |= flagFresh
			before = zeroPage[:len(c.After)]
		}
		dst = append(dst, flags)
		dst = appendDiff(dst, before, c.After)
	}
	dst = binary.AppendUvarint(dst, uint64(len(note)))
	return append(dst, note...)
}

// appendDiff appends the ranges where after differs from before. It
// compares 64-byte chunks (memequal), and in a chunk that differs finds the
// first and last differing byte with word compares; the range covers both
// and whatever lies between (at most one chunk's bytes), and ranges closer
// than diffGap merge. The checksum and LSN fields never differ inside an
// mtr (the checksum is written on a write-out's copy, the LSN after the
// diff), except on a fresh page, where redo overwrites the LSN anyway.
func appendDiff(dst, before, after []byte) []byte {
	type rng struct{ off, end int }
	var stack [64]rng
	ranges := stack[:0]
	n := len(after)
	for c := 0; c < n; c += diffChunk {
		if c%diffBlock == 0 {
			// Most of a page is unchanged: skip whole blocks with one
			// compare before looking at chunks.
			if be := min(c+diffBlock, n); bytes.Equal(before[c:be], after[c:be]) {
				c = be - diffChunk
				continue
			}
		}
		ce := min(c+diffChunk, n)
		if bytes.Equal(before[c:ce], after[c:ce]) {
			continue
		}
		first, last := -1, -1
		for w := c; w+8 <= ce; w += 8 {
			if x := le64(before, w) ^ le64(after, w); x != 0 {
				first = w + bits.TrailingZeros64(x)/8
				break
			}
		}
		for w := ce - 8; w >= c; w -= 8 {
			if x := le64(before, w) ^ le64(after, w); x != 0 {
				last = w + 7 - bits.LeadingZeros64(x)/8
				break
			}
		}
		if first < 0 {
			continue // page sizes are multiples of 8: cannot happen
		}
		if k := len(ranges); k > 0 && first-ranges[k-1].end < diffGap {
			ranges[k-1].end = last + 1
		} else {
			ranges = append(ranges, rng{first, last + 1})
		}
	}
	dst = binary.AppendUvarint(dst, uint64(len(ranges)))
	prev := 0
	for _, r := range ranges {
		dst = binary.AppendUvarint(dst, uint64(r.off-prev))
		dst = binary.AppendUvarint(dst, uint64(r.end-r.off))
		dst = append(dst, after[r.off:r.end]...)
		prev = r.end
	}
	return dst
}

func le64(b []byte, off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }

// ErrCorruptLog means a redo record does not decode, or the stored log has
// a gap or a bad frame. It matches page.ErrCorrupt.
var ErrCorruptLog = page.NewCorruptKind("cache: corrupt redo log")

// PageRedo is one page's part of a decoded record: which page, whether it
// is fresh (redo starts it from zeros), and its ranges (Apply).
type PageRedo struct {
	ID     page.ID
	Fresh  bool
	ranges []byte // encoded ranges, aliasing the record's body
}

// Decode splits a record body (Encode's) into its page changes and its
// note, reusing pages' storage. The slices alias body. A body that does not
// decode is an error matching ErrCorruptLog.
func Decode(body []byte, pages []PageRedo) ([]PageRedo, []byte, error) {
	r := reader{b: body}
	n := r.uvarint()
	pages = pages[:0]
	for i := uint64(0); i < n && r.err == nil; i++ {
		var pr PageRedo
		pr.ID.Space = uint32(r.uvarint())
		pr.ID.Page = uint32(r.uvarint())
		pr.Fresh = r.byte()&flagFresh != 0
		start := r.off
		nr := r.uvarint()
		for j := uint64(0); j < nr && r.err == nil; j++ {
			r.uvarint()
			l := r.uvarint()
			r.skip(l)
		}
		pr.ranges = body[start:r.off]
		pages = append(pages, pr)
	}
	nl := r.uvarint()
	note := r.take(nl)
	if r.err != nil {
		return nil, nil, r.err
	}
	if r.off != len(body) {
		return nil, nil, fmt.Errorf("%w: %d bytes after the note", ErrCorruptLog, len(body)-r.off)
	}
	return pages, note, nil
}

// Apply writes the change's ranges into buf, the page's bytes: onto its
// before-image, or onto zeros for a fresh page (the caller clears buf
// first), they leave its after-image, apart from the checksum and the LSN,
// which the caller sets. A range outside buf is an error matching
// ErrCorruptLog (buf may then be half changed).
func (pr *PageRedo) Apply(buf []byte) error {
	r := reader{b: pr.ranges}
	nr := r.uvarint()
	pos := 0
	for j := uint64(0); j < nr && r.err == nil; j++ {
		pos += int(r.uvarint())
		l := int(r.uvarint())
		src := r.take(uint64(l))
		if r.err != nil {
			break
		}
		if pos < 0 || pos+l > len(buf) {
			return fmt.Errorf("%w: range %d+%d outside page %s", ErrCorruptLog, pos, l, pr.ID)
		}
		copy(buf[pos:], src)
		pos += l
	}
	return r.err
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

func (r *reader) skip(n uint64) { r.take(n) }
