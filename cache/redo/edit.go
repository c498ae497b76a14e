package redo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// A value edit says how to turn one byte string into another that mostly
// shares its bytes: the new value of an updated row from the old one (a
// redo operation's payload), or the old one back from the new (an undo
// record). It is what InnoDB's update records carry (the changed fields
// only), found without knowing the fields: the values are compared byte
// by byte, and where they differ the edit resynchronises on the nearest
// run of equal bytes, so a column whose encoding grows by a byte costs
// that column's bytes, not the rest of the row.
//
// An edit is a sequence of steps, each three unsigned varints and bytes:
//
//	+---------+---------+---------+-------------+
//	|  keep   |  drop   |  add    |  add bytes  |   ... repeated
//	+---------+---------+---------+-------------+
//
// keep bytes are copied from the source, drop bytes of the source are
// skipped, add bytes are written; after the last step the rest of the
// source is copied.

// editSync is how many equal bytes in a row count as back in step, and
// editReach how far ahead (in either value) a resynchronisation looks.
const (
	editSync  = 4
	editReach = 12
)

// AppendEdit appends to dst the edit that turns from into to.
func AppendEdit(dst, from, to []byte) []byte {
	i, j, last := 0, 0, 0
	for i < len(from) && j < len(to) {
		if n := equalRun(from[i:], to[j:]); n > 0 {
			i += n
			j += n
			continue
		}
		// Find the smallest a+b such that from[i+a:] and to[j+b:] agree
		// for editSync bytes (or both run out).
		da, db := len(from)-i, len(to)-j // fallback: replace the rest
		best := da + db
		if da >= editReach+editSync && db >= editReach+editSync {
			if a, b, ok := nearestSync(from[i:], to[j:]); ok {
				da, db = a, b
			}
		} else {
			for s := 1; s <= 2*editReach && s < best; s++ {
				for a := max(0, s-editReach); a <= min(s, editReach); a++ {
					b := s - a
					if i+a > len(from) || j+b > len(to) {
						continue
					}
					if synced(from[i+a:], to[j+b:]) {
						da, db, best = a, b, s
						break
					}
				}
			}
		}
		dst = binary.AppendUvarint(dst, uint64(i-last))
		dst = binary.AppendUvarint(dst, uint64(da))
		dst = binary.AppendUvarint(dst, uint64(db))
		dst = append(dst, to[j:j+db]...)
		i += da
		j += db
		last = i
	}
	if j < len(to) || i < len(from) {
		dst = binary.AppendUvarint(dst, uint64(i-last))
		dst = binary.AppendUvarint(dst, uint64(len(from)-i))
		dst = binary.AppendUvarint(dst, uint64(len(to)-j))
		dst = append(dst, to[j:]...)
	}
	return dst
}

// nearestSync is AppendEdit's search for the nearest (a, b), smallest a+b
// and then smallest a, at which from[a:] and to[b:] start with editSync
// equal bytes, when both hold editReach+editSync bytes or more, so that
// every candidate is one word of each: it reads each word once, as the
// search reaches it, instead of slicing both values for each of up to 168
// candidates. Every update of a clustered row needs the longest search
// there is, past the 12 bytes of its header that change (the writer's
// transaction id and roll pointer), and it was 3 to 4% of a TPC-C
// terminal's CPU. The answer is the general loop's, byte for byte
// (TestAppendEditSameAsBytewise).
func nearestSync(from, to []byte) (a, b int, ok bool) {
	var fw, tw [editReach + 1]uint32
	fw[0] = binary.LittleEndian.Uint32(from)
	tw[0] = binary.LittleEndian.Uint32(to)
	for s := 1; s <= 2*editReach; s++ {
		if s <= editReach {
			fw[s] = binary.LittleEndian.Uint32(from[s:])
			tw[s] = binary.LittleEndian.Uint32(to[s:])
		}
		for a := max(0, s-editReach); a <= min(s, editReach); a++ {
			if fw[a] == tw[s-a] {
				return a, s - a, true
			}
		}
	}
	return 0, 0, false
}

// equalRun returns the length of the longest common prefix of a and b,
// comparing eight bytes at a time: an updated row's value mostly equals
// the old one, and the edit's search walks the equal runs.
func equalRun(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for ; i < n && a[i] == b[i]; i++ {
	}
	return i
}

// synced reports whether a and b start with editSync equal bytes, or are
// equal to the end of the shorter when that is nearer (both ending counts
// only if both end together). The edit's search asks it up to a few
// hundred times at each difference, so the common case, both long enough,
// is one four-byte comparison.
func synced(a, b []byte) bool {
	if len(a) >= editSync && len(b) >= editSync {
		return binary.LittleEndian.Uint32(a) == binary.LittleEndian.Uint32(b)
	}
	n := min(len(a), len(b))
	for k := 0; k < n; k++ {
		if a[k] != b[k] {
			return false
		}
	}
	return len(a) == len(b)
}

// synced compares four bytes as one word: editSync must be 4.
var (
	_ [editSync - 4]struct{}
	_ [4 - editSync]struct{}
)

// ErrBadEdit means an edit does not apply to the value it was given.
var ErrBadEdit = errors.New("redo: edit does not fit the value")

// ApplyEdit appends to dst the value edit makes of from. An edit that
// does not decode, or reaches past from, is ErrBadEdit. limit bounds the
// result's length.
func ApplyEdit(dst, from, edit []byte, limit int) ([]byte, error) {
	r := reader{b: edit}
	pos := 0
	start := len(dst)
	for r.off < len(edit) {
		keep := r.uvarint()
		drop := r.uvarint()
		add := r.take(r.uvarint())
		if r.err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadEdit, r.err)
		}
		if keep > uint64(len(from)-pos) || drop > uint64(len(from)-pos)-keep {
			return nil, fmt.Errorf("%w: a step keeps %d and drops %d of %d bytes left", ErrBadEdit, keep, drop, len(from)-pos)
		}
		if len(dst)-start+int(keep)+len(add) > limit {
			return nil, fmt.Errorf("%w: the result passes %d bytes", ErrBadEdit, limit)
		}
		dst = append(dst, from[pos:pos+int(keep)]...)
		dst = append(dst, add...)
		pos += int(keep + drop)
	}
	if len(dst)-start+len(from)-pos > limit {
		return nil, fmt.Errorf("%w: the result passes %d bytes", ErrBadEdit, limit)
	}
	return append(dst, from[pos:]...), nil
}

// A patch is the special case of an edit for two values of the same
// length (an update in place of fixed-size fields, InnoDB's
// MLOG_REC_UPDATE_IN_PLACE): the byte ranges where the new value
// differs, each as the gap from the previous range's end, its length and
// the new bytes, to the end of the patch:
//
//	+---------+---------+-------+---------+---------+-------+-----
//	|   gap   | length  | bytes |   gap   | length  | bytes | ...
//	+---------+---------+-------+---------+---------+-------+-----
//
// Ranges closer than patchGap equal bytes merge (a range costs two
// varints).
const patchGap = 2

// AppendPatch appends to dst the patch that turns old into new (the same
// length).
func AppendPatch(dst, old, new []byte) []byte {
	prev := 0
	for j := 0; j < len(new); {
		if old[j] == new[j] {
			j++
			continue
		}
		end := j + 1
		for end < len(new) {
			if old[end] != new[end] {
				end++
				continue
			}
			k := end
			for k < len(new) && k-end < patchGap && old[k] == new[k] {
				k++
			}
			if k < len(new) && k-end < patchGap {
				end = k
				continue
			}
			break
		}
		dst = binary.AppendUvarint(dst, uint64(j-prev))
		dst = binary.AppendUvarint(dst, uint64(end-j))
		dst = append(dst, new[j:end]...)
		prev, j = end, end
	}
	return dst
}

// ApplyPatch writes patch's ranges into v, in place. A range that does
// not decode, or reaches past v, is ErrBadEdit (v may then be half
// written).
func ApplyPatch(v, patch []byte) error {
	r := reader{b: patch}
	pos := 0
	for r.off < len(patch) {
		gap := r.uvarint()
		l := r.uvarint()
		b := r.take(l)
		if r.err != nil {
			return fmt.Errorf("%w: %w", ErrBadEdit, r.err)
		}
		if gap > uint64(len(v)-pos) || l > uint64(len(v)-pos)-gap {
			return fmt.Errorf("%w: a range of %d bytes %d past byte %d of %d", ErrBadEdit, l, gap, pos, len(v))
		}
		pos += int(gap)
		copy(v[pos:], b)
		pos += int(l)
	}
	return nil
}
