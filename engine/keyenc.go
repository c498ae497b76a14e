package engine

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/enginelab/enginelab/cache/page"
)

// Order-preserving key encoding.
//
// A key is the concatenation of its columns' encodings. Each encoding starts
// with a tag byte; what follows depends on the column's type:
//
//	NULL                 +------+
//	                     | 0x00 |
//	                     +------+
//
//	int, decimal,        +------+-----------------------------------------+
//	timestamp            | 0x01 | uint64(I) XOR 1<<63, big-endian (8B)    |
//	                     +------+-----------------------------------------+
//
//	char, varchar        +------+-----------------------------------+-----------+
//	                     | 0x01 | the bytes, each 0x00 as 0x00 0xFF  | 0x00 0x01 |
//	                     +------+-----------------------------------+-----------+
//	                       tag    body (0 or more bytes)              terminator
//
// Example: the key (w int = 1, last varchar = "ab\x00") is
//
//	01 | 80 00 00 00 00 00 00 01 | 01 | 61 62 00 FF | 00 01
//
// Why it orders: every column's encoding is self-delimiting (no encoding is
// a proper prefix of another encoding of the same type), so the first byte
// where two keys differ lies inside the first column where their tuples
// differ, and the bytes before it are equal. bytes.Compare of two keys
// is therefore tuple order, provided each column's encoding orders its own
// values, which each choice below ensures:
//
//   - The tag. 0x00 for NULL and 0x01 for a value puts NULL before every
//     value, as SQL's NULLS FIRST. Columns that cannot be NULL (primary-key
//     columns) still carry it: one byte buys a single format for every
//     column, so a range bound can be encoded without asking whether a
//     column is nullable. The tags 0x02 to 0xFF are unused (decoding
//     rejects them) and free for later, e.g. a "+infinity" bound.
//   - Integers. Flipping the sign bit maps MinInt64..MaxInt64 onto
//     0..MaxUint64 in order, and big-endian makes byte order numeric order.
//     Eight fixed bytes need no length and decode with one load; an
//     order-preserving varint would save bytes on small TPC-C ids but needs
//     a length header ordered by magnitude, and is not worth it yet.
//   - Strings. A length prefix would order by length first ("b" < "aa"),
//     so the end is marked instead, by a terminator that sorts below every
//     way a string can continue: a raw byte 0x01..0xFF, or an escaped zero
//     0x00 0xFF. The terminator 0x00 0x01 is below both, so a proper prefix
//     sorts before its extensions ("a" < "a\x00" < "a\x01" < "ab") whatever
//     columns follow. The escape uses 0xFF as its second byte so that an
//     escaped zero sorts above the terminator and below a raw 0x01. A
//     second byte other than 0x01 or 0xFF is corrupt; 0x00 0x00 included
//     (this is CockroachDB's choice of bytes too, which keeps 0x00 0x00 for
//     a descending variant and 0x02.. for other terminators).
//
// The encoding is a bijection between tuples and valid keys: decoding a
// valid key and encoding the result gives back the same bytes.
//
// Range scans: since each column's encoding is deterministic and
// self-delimiting, the keys whose first k columns equal (v1..vk) are exactly
// the keys that start with appendKeyPrefix(v1..vk), which is the range
// [prefix, prefixSuccessor(prefix)).

// Errors from decoding stored keys.
var (
	// ErrCorruptKey means bytes given to a key decoder are not a key of the
	// expected column types: truncated, a bad tag or a bad escape. The
	// message says which column and at which byte it went wrong.
	// It matches ErrCorrupt: keys are only decoded from the store.
	ErrCorruptKey = page.NewCorruptKind("engine: corrupt key")
)

// Key tags and string escapes; see the diagram above.
const (
	keyTagNull  byte = 0x00
	keyTagValue byte = 0x01

	keyEscape     byte = 0x00 // first byte of an escape pair
	keyEscapedNul byte = 0xFF // 0x00 0xFF: a 0x00 byte inside the string
	keyTerminator byte = 0x01 // 0x00 0x01: end of the string

	keyIntLen = 8
)

// appendKeyValue appends the key encoding of v as a value of type t.
// A non-NULL string value with a nil B is the empty string. It panics if t
// is not a valid Type: types come from validated schemas.
func appendKeyValue(dst []byte, t Type, v Value) []byte {
	return appendKeyValueRef(dst, t, &v)
}

// appendKeyValueRef is appendKeyValue taking the value by reference: the
// key encoders call it on row[c] in place, as copying each 40-byte Value
// through the stack costs as much as encoding it.
func appendKeyValueRef(dst []byte, t Type, v *Value) []byte {
	if !v.NotNull {
		return append(dst, keyTagNull)
	}
	dst = append(dst, keyTagValue)
	switch {
	case t.isString():
		b := v.B
		for {
			i := bytes.IndexByte(b, 0)
			if i < 0 {
				break
			}
			dst = append(dst, b[:i]...)
			dst = append(dst, keyEscape, keyEscapedNul)
			b = b[i+1:]
		}
		dst = append(dst, b...)
		return append(dst, keyEscape, keyTerminator)
	case isIntLike(t):
		return binary.BigEndian.AppendUint64(dst, uint64(v.I)^(1<<63))
	default:
		panic(fmt.Sprintf("engine: key encoding of invalid type %s", t))
	}
}

// isIntLike reports whether values of t are held in Value.I.
func isIntLike(t Type) bool {
	return t == TypeInt || t == TypeDecimal || t == TypeTimestamp
}

// decodeKeyValue decodes one value of type t from the front of b and returns
// it with the bytes after it.
//
// String bytes are copied: they are appended to scratch, the value's B is a
// slice of the result (capacity-limited, so appending to it cannot overwrite
// a neighbour), and the result is returned as scratchOut for the next call.
// Nothing aliases b. Pass scratch[:0] to reuse a buffer; values decoded
// into it stay valid until the buffer is reused. With enough capacity no
// allocation happens. A decoded string is never nil, even when empty.
//
// Malformed input returns an error wrapping ErrCorruptKey that names the
// byte offset in b; it never panics (except for an invalid t).
func decodeKeyValue(b []byte, t Type, scratch []byte) (v Value, rest, scratchOut []byte, err error) {
	off, scratch, err := decodeKeyValueAt(b, 0, -1, t, scratch, &v)
	if err != nil {
		return Value{}, b, scratch, err
	}
	return v, b[off:], scratch, nil
}

// decodeKeyValueAt decodes the value of type t at b[off:], key column col
// (-1 when unknown, for messages), into *v and returns the offset after it.
// *v is written only on success. (Filling *v rather than returning a Value
// saves copying each Value through the stack, which profiles showed
// costing as much as the decoding itself.)
func decodeKeyValueAt(b []byte, off, col int, t Type, scratch []byte, v *Value) (int, []byte, error) {
	if !t.isString() && !isIntLike(t) {
		panic(fmt.Sprintf("engine: key decoding of invalid type %s", t))
	}
	if off >= len(b) {
		return off, scratch, corruptKey(off, col, t, "truncated: no tag byte")
	}
	switch tag := b[off]; tag {
	case keyTagNull:
		*v = Value{}
		return off + 1, scratch, nil
	case keyTagValue:
		off++
	default:
		return off, scratch, corruptKey(off, col, t, "tag 0x%02x, want 0x00 (NULL) or 0x01 (value)", tag)
	}
	if isIntLike(t) {
		if len(b)-off < keyIntLen {
			return off, scratch, corruptKey(off, col, t, "truncated integer: %d of 8 bytes", len(b)-off)
		}
		v.I = int64(binary.BigEndian.Uint64(b[off:]) ^ (1 << 63))
		v.B = nil
		v.NotNull = true
		return off + keyIntLen, scratch, nil
	}
	start := len(scratch)
	for {
		i := bytes.IndexByte(b[off:], keyEscape)
		if i < 0 {
			return off, scratch[:start], corruptKey(len(b), col, t, "truncated string: no terminator")
		}
		scratch = append(scratch, b[off:off+i]...)
		off += i
		if off+1 >= len(b) {
			return off, scratch[:start], corruptKey(off, col, t, "truncated string: 0x00 at the end, want 0x00 0x01 or 0x00 0xFF")
		}
		switch e := b[off+1]; e {
		case keyTerminator:
			s := scratch[start:len(scratch):len(scratch)]
			if s == nil {
				s = []byte{} // a nil scratch and an empty string
			}
			v.I = 0
			v.B = s
			v.NotNull = true
			return off + 2, scratch, nil
		case keyEscapedNul:
			scratch = append(scratch, 0)
			off += 2
		default:
			return off, scratch[:start], corruptKey(off, col, t, "bad escape 0x00 0x%02x, want 0x00 0x01 or 0x00 0xFF", e)
		}
	}
}

// corruptKey returns an error wrapping ErrCorruptKey.
func corruptKey(off, col int, t Type, format string, args ...any) error {
	where := fmt.Sprintf("%s value at byte %d", t, off)
	if col >= 0 {
		where = fmt.Sprintf("key column %d (%s) at byte %d", col, t, off)
	}
	return fmt.Errorf("%w: %s: %s", ErrCorruptKey, where, fmt.Sprintf(format, args...))
}

// appendKey appends the key of row over the columns idx (positions in cols
// and row, in key order): row[idx[0]], row[idx[1]], ... each encoded with
// its column's type.
func appendKey(dst []byte, cols []Column, idx []int, row Row) []byte {
	for _, c := range idx {
		dst = appendKeyValueRef(dst, cols[c].Type, &row[c])
	}
	return dst
}

// appendKeyPrefix appends the encoding of the first len(vals) columns of the
// key over idx, vals[i] being the value of column idx[i]: a bound for a
// range scan on a key prefix. Every key whose first len(vals) columns equal
// vals starts with these bytes, and no other key does. It panics if vals
// has more values than idx has columns.
func appendKeyPrefix(dst []byte, cols []Column, idx []int, vals []Value) []byte {
	if len(vals) > len(idx) {
		panic(fmt.Sprintf("engine: key prefix of %d values for a key of %d columns", len(vals), len(idx)))
	}
	for i := range vals {
		dst = appendKeyValueRef(dst, cols[idx[i]].Type, &vals[i])
	}
	return dst
}

// decodeKey decodes the key over the columns idx from the front of b into
// dst[idx[0]], dst[idx[1]], ... and returns the bytes after the key. dst
// must be long enough to hold every position in idx (len(cols) is). Other
// entries of dst are left alone.
//
// Decoded strings are newly allocated and do not alias b; to decode without
// allocating, use decodeKeyInto. Malformed input returns an error wrapping
// ErrCorruptKey naming the key column (its position in idx) and the byte;
// dst may then be partly written.
func decodeKey(b []byte, cols []Column, idx []int, dst Row) (rest []byte, err error) {
	rest, _, err = decodeKeyInto(b, cols, idx, dst, nil)
	return rest, err
}

// decodeKeyInto is decodeKey with the string bytes appended to scratch, as
// decodeKeyValue does: strings alias scratchOut, not b, and no allocation
// happens when scratch has room for them (at most len(b) bytes).
func decodeKeyInto(b []byte, cols []Column, idx []int, dst Row, scratch []byte) (rest, scratchOut []byte, err error) {
	off := 0
	for i, c := range idx {
		if off, scratch, err = decodeKeyValueAt(b, off, i, cols[c].Type, scratch, &dst[c]); err != nil {
			return b[off:], scratch, err
		}
	}
	return b[off:], scratch, nil
}

// prefixSuccessor returns the smallest byte string greater than every byte
// string that starts with prefix, or nil if there is none (prefix is empty
// or all 0xFF). So s starts with prefix exactly when prefix <= s <
// prefixSuccessor(prefix), and a scan of every key with a given prefix is
// the half-open range [prefix, prefixSuccessor(prefix)), nil meaning no
// upper bound. It is prefix with its trailing 0xFF bytes removed and the
// last remaining byte incremented. The result is newly allocated; prefix is
// not modified.
func prefixSuccessor(prefix []byte) []byte {
	return appendPrefixSuccessor(nil, prefix)
}

// appendPrefixSuccessor appends prefixSuccessor(prefix) to dst and returns
// it, or returns nil if there is none (dst is then unchanged). dst may be
// prefix[:0], to make the successor in place; otherwise it must not
// overlap prefix.
func appendPrefixSuccessor(dst, prefix []byte) []byte {
	for i := len(prefix) - 1; i >= 0; i-- {
		if prefix[i] != 0xFF {
			dst = append(dst, prefix[:i+1]...)
			dst[len(dst)-1]++
			return dst
		}
	}
	return nil
}
