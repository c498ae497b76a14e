package engine

import (
	"encoding/binary"
	"fmt"

	"github.com/enginelab/enginelab/cache/page"
)

// Compact row encoding.
//
// A row is stored as
//
//	+-------------+------------------+--------------------+-----------------------------+
//	| version (1B)| column count n   | NULL bitmap        | the non-NULL values,        |
//	| = 1         | uvarint (1-10B)  | ceil(n/8) bytes    | in column order             |
//	+-------------+------------------+--------------------+-----------------------------+
//
//	int, decimal, timestamp   +------------------------------------+
//	                          | zigzag varint of I (1-10B)         |
//	                          +------------------------------------+
//	char, varchar             +------------------+-----------------+
//	                          | length uvarint   | the bytes       |
//	                          +------------------+-----------------+
//
// Bit i%8 of bitmap byte i/8 (least significant bit first) is set when
// column i is NULL; a NULL column takes no other space.
//
// Example: columns (int, varchar, decimal, timestamp) and the row
// (3, "ab", NULL, -2):
//
//	01 | 04 | 04 | 06 | 02 61 62 | 03
//	ver  n=4  col 2  3    "ab"     -2
//	          NULL
//
// Why each field:
//   - The version byte lets a later format (column ids for schema changes,
//     say) be read beside rows written in this one.
//   - The column count catches a row decoded with the wrong schema at the
//     cost of a byte, and would let a table gain trailing columns without
//     rewriting its rows. Today a count other than len(cols) is an error.
//   - A bitmap spends a bit per column on NULLs, not a byte.
//   - Rows are never compared as bytes, so, unlike keys, nothing needs to
//     preserve order: integers are varints, 1 to 3 bytes for TPC-C's ids,
//     quantities and cents instead of 8, zigzagged so small negative
//     numbers stay short; strings carry their length instead of a
//     terminator, so they need no escaping, decode by aliasing the input,
//     and are skipped in O(1).
//
// Decoding accepts only the encoding appendRow produces: varints minimal,
// unused bitmap bits zero, no bytes after the last value. So a row's bytes
// are a function of its values, and decoding then encoding gives back the
// input. Decoding checks the bytes, not the schema's constraints: a NULL in
// a NOT NULL column or a string longer than Column.Length decodes as it
// was stored (checkRow guards the way in).

// Errors from decoding stored rows.
var (
	// ErrCorruptRow means bytes given to a row decoder are not a row of the
	// expected columns: an unknown format version, a column count other
	// than the schema's, truncated data, a string longer than the bytes
	// left, or trailing bytes. The message says which column and at which
	// byte it went wrong.
	// It matches ErrCorrupt: rows are only decoded from the store.
	ErrCorruptRow = page.NewCorruptKind("engine: corrupt row")
)

// rowFormatVersion is the first byte of every encoded row.
const rowFormatVersion byte = 1

// rowFormatPadded marks a row followed by zero bytes: a heap row updated in
// place to a shorter image keeps its length (see padRow), so that rolling
// the update back always fits in place.
const rowFormatPadded byte = 2

// padRow pads img with zero bytes to n bytes (marking it padded) if it is
// shorter, and returns it.
func padRow(img []byte, n int) []byte {
	if len(img) >= n {
		return img
	}
	img[0] = rowFormatPadded
	for len(img) < n {
		img = append(img, 0)
	}
	return img
}

// appendRow appends the encoding of row, whose values are those of cols,
// to dst. It allocates only if dst lacks the capacity. It panics if row and
// cols differ in length or a column's type is invalid: both come from a
// validated table. A non-NULL string with a nil B is the empty string.
func appendRow(dst []byte, cols []Column, row Row) []byte {
	if len(row) != len(cols) {
		panic(fmt.Sprintf("engine: appendRow of %d values for %d columns", len(row), len(cols)))
	}
	dst = append(dst, rowFormatVersion)
	dst = binary.AppendUvarint(dst, uint64(len(cols)))
	bitmap := len(dst)
	dst = append(dst, make([]byte, (len(cols)+7)/8)...)
	for i := range row {
		v := &row[i] // not a copy: copying each Value costs more than encoding it
		if !v.NotNull {
			dst[bitmap+i/8] |= 1 << (i % 8) // see isNullBit
			continue
		}
		switch t := cols[i].Type; {
		case t.isString():
			dst = binary.AppendUvarint(dst, uint64(len(v.B)))
			dst = append(dst, v.B...)
		case isIntLike(t):
			dst = binary.AppendVarint(dst, v.I)
		default:
			panic(fmt.Sprintf("engine: row encoding of invalid type %s in column %d", t, i))
		}
	}
	return dst
}

// decodeRow decodes the row b, whose columns are cols, into dst resized to
// len(cols) (allocated anew only if cap(dst) is too small) and returns it.
//
// String values alias b: they are valid while b is, and change if b does.
// Each is capacity-limited, so appending to one cannot overwrite b. Empty
// strings are non-nil.
//
// Malformed input returns nil and an error wrapping ErrCorruptRow naming the
// column and byte; it never panics (given valid column types). dst's
// contents are then unspecified.
func decodeRow(b []byte, cols []Column, dst Row) (Row, error) {
	if cap(dst) < len(cols) {
		dst = make(Row, len(cols))
	}
	dst = dst[:len(cols)]
	bitmap, off, err := decodeRowHeader(b, cols)
	if err != nil {
		return nil, err
	}
	for i := range cols {
		if isNullBit(b[bitmap:], i) {
			dst[i] = Value{}
			continue
		}
		if off, err = decodeRowValue(b, off, cols, i, &dst[i]); err != nil {
			return nil, err
		}
	}
	if off != len(b) {
		padded := b[0] == rowFormatPadded
		for _, c := range b[off:] {
			padded = padded && c == 0
		}
		if !padded {
			return nil, corruptRow(off, -1, cols, "trailing bytes: %d after the last column", len(b)-off)
		}
	}
	return dst, nil
}

// decodeColumns decodes only the columns listed in want (positions in cols,
// strictly ascending) into dst[want[i]], skipping the others' bytes. dst
// must have len(cols); entries not wanted are left untouched. Strings alias
// b, as in decodeRow.
//
// It reads no further than the last wanted column, so it checks only the
// header and the bytes up to there: a row that decodeRow rejects for
// something later (say, trailing bytes) may decode here without error.
// Malformed input returns an error wrapping ErrCorruptRow; dst may then be
// partly written. It panics if len(dst) != len(cols) or want is not
// strictly ascending: both are the caller's bugs, not the data's.
func decodeColumns(b []byte, cols []Column, want []int, dst Row) error {
	if len(dst) != len(cols) {
		panic(fmt.Sprintf("engine: decodeColumns into %d values for %d columns", len(dst), len(cols)))
	}
	bitmap, off, err := decodeRowHeader(b, cols)
	if err != nil {
		return err
	}
	i := 0 // next column to read
	var skipped Value
	for _, w := range want {
		if w < i || w >= len(cols) {
			panic(fmt.Sprintf("engine: decodeColumns: want %v is not ascending column positions below %d", want, len(cols)))
		}
		for ; i <= w; i++ {
			if isNullBit(b[bitmap:], i) {
				if i == w {
					dst[i] = Value{}
				}
				continue
			}
			v := &skipped
			if i == w {
				v = &dst[i]
			}
			if off, err = decodeRowValue(b, off, cols, i, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// decodeRowHeader checks the version, column count and bitmap of the row b
// against cols and returns the offsets of the bitmap and the first value.
func decodeRowHeader(b []byte, cols []Column) (bitmap, values int, err error) {
	if len(b) == 0 {
		return 0, 0, corruptRow(0, -1, cols, "empty: no format version")
	}
	if b[0] != rowFormatVersion && b[0] != rowFormatPadded {
		return 0, 0, corruptRow(0, -1, cols, "format version %d, want %d or %d", b[0], rowFormatVersion, rowFormatPadded)
	}
	n, w := binary.Uvarint(b[1:])
	if err := checkVarint(b[1:], w); err != "" {
		return 0, 0, corruptRow(1, -1, cols, "column count: %s", err)
	}
	if n != uint64(len(cols)) {
		return 0, 0, corruptRow(1, -1, cols, "%d columns, want %d", n, len(cols))
	}
	bitmap = 1 + w
	values = bitmap + (len(cols)+7)/8
	if values > len(b) {
		return 0, 0, corruptRow(bitmap, -1, cols, "truncated NULL bitmap: %d of %d bytes", len(b)-bitmap, values-bitmap)
	}
	if r := len(cols) % 8; r != 0 {
		if unused := b[values-1] &^ (1<<r - 1); unused != 0 {
			return 0, 0, corruptRow(values-1, -1, cols, "NULL bitmap sets bits 0x%02x beyond column %d", unused, len(cols)-1)
		}
	}
	return bitmap, values, nil
}

// decodeRowValue decodes the value of the non-NULL column i at b[off:] into
// *v and returns the offset after it. (Filling *v field by field, rather
// than returning a Value, saves copying each Value through the stack,
// which profiles showed costing as much as the decoding itself.)
func decodeRowValue(b []byte, off int, cols []Column, i int, v *Value) (int, error) {
	t := cols[i].Type
	if !t.isString() && !isIntLike(t) {
		panic(fmt.Sprintf("engine: row decoding of invalid type %s in column %d", t, i))
	}
	// Both kinds start with a varint; most are one byte (small integers,
	// strings shorter than 128 bytes).
	var u uint64
	var w int
	if off < len(b) && b[off] < 0x80 {
		u, w = uint64(b[off]), 1
	} else {
		u, w = binary.Uvarint(b[off:])
		if msg := checkVarint(b[off:], w); msg != "" {
			if t.isString() {
				return off, corruptRow(off, i, cols, "string length: %s", msg)
			}
			return off, corruptRow(off, i, cols, "%s", msg)
		}
	}
	off += w
	if isIntLike(t) {
		v.I = int64(u>>1) ^ -int64(u&1) // zigzag, as binary.Varint
		v.B = nil
		v.NotNull = true
		return off, nil
	}
	if u > uint64(len(b)-off) {
		return off, corruptRow(off, i, cols, "string of %d bytes, %d left", u, len(b)-off)
	}
	end := off + int(u)
	v.I = 0
	v.B = b[off:end:end]
	v.NotNull = true
	return end, nil
}

// isNullBit reports whether the NULL bitmap at the front of bitmap marks
// column i.
func isNullBit(bitmap []byte, i int) bool {
	return bitmap[uint(i)/8]&(1<<(uint(i)%8)) != 0
}

// checkVarint explains what is wrong with a varint that binary.Uvarint read
// from b with width w, or returns "" if it is the
// minimal encoding of its value. A minimal varint of more than one byte
// never ends in 0x00 (that byte would add nothing).
func checkVarint(b []byte, w int) string {
	switch {
	case w == 0:
		return "truncated varint"
	case w < 0:
		return "varint overflows 64 bits"
	case w > 1 && b[w-1] == 0:
		return "varint not minimally encoded"
	}
	return ""
}

// corruptRow returns an error wrapping ErrCorruptRow; col < 0 means the
// error is not in a column.
func corruptRow(off, col int, cols []Column, format string, args ...any) error {
	where := fmt.Sprintf("byte %d", off)
	switch {
	case col >= 0 && cols[col].Name != "":
		where = fmt.Sprintf("column %d (%s %s) at byte %d", col, cols[col].Name, cols[col].Type, off)
	case col >= 0:
		where = fmt.Sprintf("column %d (%s) at byte %d", col, cols[col].Type, off)
	}
	return fmt.Errorf("%w: %s: %s", ErrCorruptRow, where, fmt.Sprintf(format, args...))
}
