package engine

import (
	"encoding/binary"
	"fmt"

	"github.com/enginelab/enginelab/heap"
)

// Sort records. A record is a key, then either the addon columns or a row
// reference (sql_sort.h):
//
//	fixed key, row reference          fixed key, addon columns
//	+----------------+-----------+    +----------------+-------+---------+---------+
//	| key parts      | reference |    | key parts      | NULL  | col a   | col b   |
//	| (memcmp order) | ref_length|    | (memcmp order) | bits  | (its max, fixed) |
//	+----------------+-----------+    +----------------+-------+---------+---------+
//	|<-------- sort_length ----->|    |<- sort_length->|<---- addon_length ------>|
//
//	packed key (MDEV-21580), packed addon columns
//	+--------+---------+---------+-----+--------+-------+-------+-------+
//	| key    | part 1  | part 2  | ... | addon  | NULL  | col a | col b |
//	| length | (below) |         |     | length | bits  | as long as it is |
//	| 4B LE  |         |         |     | 2B LE  |       |       |       |
//	+--------+---------+---------+-----+--------+-------+-------+-------+
//
// A fixed key part (make_sortkey), a NULL marker first if the column may
// be NULL (0 for NULL, 1 for a value; a NULL's bytes are zeros):
//
//	integer  8 bytes, big-endian, sign bit flipped (store_sort_key_longlong)
//	string   the collation's weights, padded with a space's to the part's
//	         length (strnxfrm); the binary collation pads with zeros and
//	         ends with the value's length, big-endian (the suffix), so that
//	         "a" sorts before "a\x00"
//
// A descending part is inverted byte for byte, and its NULL marker flipped
// (reverse_key: a NULL's zeros are left alone), so memcmp of two whole
// keys is the ORDER BY. The reference is compared last, so that rows with
// equal keys come out in reference order (rows fetched in order).
//
// A packed key part (make_packed_sortkey), the NULL marker first if the
// column may be NULL (a NULL has no other byte):
//
//	integer  its 8 fixed bytes, as above
//	string   its length (1 to 4 bytes, little-endian, the suffix
//	         included), the value's own bytes (at most max_sort_length),
//	         and for binary the suffix
//
// Packed keys are compared part by part (compare_packed_sort_keys): an
// integer with memcmp, a string with its collation's strnncollsp, each
// result negated for a descending part; then the references by memcmp.
//
// Addon columns (make_sortkey's second half) are a NULL bit per nullable
// column, then each value as Field::pack writes it: a string's length (one
// byte, two over 255) and bytes, an integer's 8 bytes little-endian.
// Fixed, each takes its maximum; packed, only its bytes, and a NULL none.

// appendFixedKey appends row's fixed sort key to dst and reports whether a
// string's weights were cut off.
func (p *sortParam) appendFixedKey(dst []byte, row Row) ([]byte, bool) {
	cut := false
	for i := range p.fields {
		f := &p.fields[i]
		v := &row[f.col]
		start := len(dst)
		if f.nullable {
			if !v.NotNull {
				for range f.length + 1 {
					dst = append(dst, 0)
				}
				if f.desc {
					dst[start] = 1 // reverse_key: NULLs last, zeros kept
				}
				continue
			}
			dst = append(dst, 1)
		}
		body := len(dst)
		if f.variable {
			var c bool
			data := f.length - f.suffix
			dst, c = f.coll.appendWeights(dst, v.B, data)
			cut = cut || c
			if f.suffix > 0 {
				n := min(len(v.B), data)
				for j := f.suffix - 1; j >= 0; j-- {
					dst = append(dst, byte(n>>(8*j)))
				}
			}
		} else {
			dst = binary.BigEndian.AppendUint64(dst, uint64(v.I)^(1<<63))
		}
		if f.desc {
			if f.nullable {
				dst[start] = 0
			}
			for j := body; j < len(dst); j++ {
				dst[j] = ^dst[j]
			}
		}
	}
	return dst, cut
}

// appendPackedKey appends row's packed sort key to dst.
func (p *sortParam) appendPackedKey(dst []byte, row Row) ([]byte, bool) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	cut := false
	for i := range p.fields {
		f := &p.fields[i]
		v := &row[f.col]
		if f.nullable {
			if !v.NotNull {
				dst = append(dst, 0)
				continue
			}
			dst = append(dst, 1)
		}
		if !f.variable {
			dst = binary.BigEndian.AppendUint64(dst, uint64(v.I)^(1<<63))
			continue
		}
		// pack_sort_string.
		n := len(v.B)
		if n+f.suffix > f.original {
			n = f.original - f.suffix
			cut = true
		}
		m := uint32(n + f.suffix)
		for j := range f.lengthBytes {
			dst = append(dst, byte(m>>(8*j)))
		}
		dst = append(dst, v.B[:n]...)
		for j := f.suffix - 1; j >= 0; j-- {
			dst = append(dst, byte(len(v.B)>>(8*j)))
		}
	}
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start-keyLenField))
	return dst, cut
}

// keyLen is the length of the key at the front of rec.
func (p *sortParam) keyLen(rec []byte) int {
	if p.packedKeys {
		return keyLenField + int(binary.LittleEndian.Uint32(rec))
	}
	return p.fixedKeyLen
}

// recLen is the length of the record at the front of rec
// (get_record_length).
func (p *sortParam) recLen(rec []byte) int {
	if !p.packedKeys && !p.packedAddons {
		return p.recLength
	}
	k := p.keyLen(rec)
	return k + p.resLen(rec[k:])
}

// resLen is the length of the result part at the front of res.
func (p *sortParam) resLen(res []byte) int {
	if p.packedAddons {
		return addonLenField + int(binary.LittleEndian.Uint16(res))
	}
	return p.resLength
}

// appendRef appends the row reference, zero-padded to its fixed length.
func (p *sortParam) appendRef(dst, ref []byte) []byte {
	dst = append(dst, ref...)
	for range p.refLen - len(ref) {
		dst = append(dst, 0)
	}
	return dst
}

// appendAddon appends row's addon columns.
func (p *sortParam) appendAddon(dst []byte, row Row) []byte {
	start := len(dst)
	if p.packedAddons {
		dst = append(dst, 0, 0)
	}
	nulls := len(dst)
	dst = append(dst, make([]byte, p.addonNullBytes)...)
	for i := range p.addon {
		f := &p.addon[i]
		v := &row[f.col]
		at := len(dst)
		if !v.NotNull {
			dst[nulls+f.nullBit/8] |= 1 << (f.nullBit % 8)
		} else if f.typ.isString() {
			n := uint32(len(v.B))
			for j := range f.lenBytes {
				dst = append(dst, byte(n>>(8*j)))
			}
			dst = append(dst, v.B...)
		} else {
			dst = binary.LittleEndian.AppendUint64(dst, uint64(v.I))
		}
		if !p.packedAddons {
			for len(dst) < at+f.maxLen {
				dst = append(dst, 0)
			}
		}
	}
	if p.packedAddons {
		binary.LittleEndian.PutUint16(dst[start:], uint16(len(dst)-start-addonLenField))
	}
	return dst
}

// decodeAddon fills row's addon columns from res (the result part);
// strings alias res.
func (p *sortParam) decodeAddon(res []byte, row Row) error {
	if p.packedAddons {
		res = res[addonLenField:]
	}
	nulls := res[:p.addonNullBytes]
	off := p.addonNullBytes
	for i := range p.addon {
		f := &p.addon[i]
		if !p.packedAddons {
			off = f.offset // each column in its fixed slot
		}
		if f.nullable && nulls[f.nullBit/8]&(1<<(f.nullBit%8)) != 0 {
			row[f.col] = Null
			continue
		}
		if f.typ.isString() {
			if off+f.lenBytes > len(res) {
				return fmt.Errorf("%w: sort record: column %d truncated", ErrCorrupt, f.col)
			}
			n := int(res[off])
			if f.lenBytes == 2 {
				n = int(binary.LittleEndian.Uint16(res[off:]))
			}
			off += f.lenBytes
			if off+n > len(res) {
				return fmt.Errorf("%w: sort record: column %d truncated", ErrCorrupt, f.col)
			}
			row[f.col] = Value{B: res[off : off+n : off+n], NotNull: true}
			off += n
		} else {
			if off+8 > len(res) {
				return fmt.Errorf("%w: sort record: column %d truncated", ErrCorrupt, f.col)
			}
			row[f.col] = Value{I: int64(binary.LittleEndian.Uint64(res[off:])), NotNull: true}
			off += 8
		}
	}
	return nil
}

// compare compares the records at a and b (their keys, and their
// references when they carry them), counting the comparison in m.
func (p *sortParam) compare(m *SortCounts, a, b []byte) int {
	if !p.packedKeys {
		r, n := memcmp(a[:p.sortLength], b[:p.sortLength])
		m.SortMemcmps++
		m.SortMemcmpBytes += int64(n)
		return r
	}
	return p.comparePacked(m, a, b)
}

// comparePacked is compare_packed_sort_keys.
func (p *sortParam) comparePacked(m *SortCounts, a, b []byte) int {
	m.SortPackedCompares++
	a, b = a[keyLenField:], b[keyLenField:]
	for i := range p.fields {
		f := &p.fields[i]
		if f.nullable {
			if a[0] != b[0] {
				if a[0] == 0 {
					return f.reverse(-1)
				}
				return f.reverse(1)
			}
			isNull := a[0] == 0
			a, b = a[1:], b[1:]
			if isNull {
				continue
			}
		}
		if !f.variable {
			r, n := memcmp(a[:8], b[:8])
			m.SortMemcmpBytes += int64(n)
			if r != 0 {
				return f.reverse(r)
			}
			a, b = a[8:], b[8:]
			continue
		}
		la, lb := readLen(a, f.lengthBytes), readLen(b, f.lengthBytes)
		a, b = a[f.lengthBytes:], b[f.lengthBytes:]
		va, vb := a[:la-f.suffix], b[:lb-f.suffix]
		r, n := f.coll.compare(va, vb)
		m.SortCollCompares[f.coll.kind]++
		m.SortCollBytes[f.coll.kind] += int64(n)
		if r == 0 && f.suffix > 0 {
			r, _ = memcmp(a[la-f.suffix:la], b[lb-f.suffix:lb])
		}
		if r != 0 {
			return f.reverse(r)
		}
		a, b = a[la:], b[lb:]
	}
	if !p.useAddons {
		r, n := memcmp(a[:p.refLen], b[:p.refLen])
		m.SortMemcmpBytes += int64(n)
		return r
	}
	return 0
}

func (f *sortField) reverse(r int) int {
	if f.desc {
		return -r
	}
	return r
}

// readLen reads a little-endian length of n bytes.
func readLen(b []byte, n int) int {
	x := 0
	for j := n - 1; j >= 0; j-- {
		x = x<<8 | int(b[j])
	}
	return x
}

// ref returns the row reference of rec (whose result part is the
// reference).
func (p *sortParam) refOf(rec []byte) []byte {
	k := p.keyLen(rec)
	return rec[k : k+p.refLen]
}

// decodeRef splits a reference into the primary key's encoding (its
// padding removed) or a heap row pointer.
func (p *sortParam) decodeRef(ref []byte) ([]byte, heap.RowPtr, error) {
	t := p.t
	if t.org == HeapRowPointer {
		ptr, err := heap.DecodeRowPtr(ref[:heap.RowPtrSize])
		return nil, ptr, err
	}
	// The primary key's encoding is self-delimiting: decode it to find
	// its end.
	var tmp [16]Value
	row := tmp[:0]
	if len(t.info.def.Columns) > len(tmp) {
		row = make(Row, len(t.info.def.Columns))
	} else {
		row = tmp[:len(t.info.def.Columns)]
	}
	rest, err := decodeKey(ref, t.info.def.Columns, t.info.pk, row)
	if err != nil {
		return nil, heap.RowPtr{}, err
	}
	return ref[:len(ref)-len(rest)], heap.RowPtr{}, nil
}
