package engine

import (
	"bytes"
	"errors"
	"testing"
)

// encFuzzColumns turns fuzz bytes into columns, one per byte (its value
// modulo 5 picks the type), at most limit of them.
func encFuzzColumns(schema []byte, limit int) ([]Column, []int) {
	if len(schema) > limit {
		schema = schema[:limit]
	}
	cols := make([]Column, len(schema))
	idx := make([]int, len(schema))
	for i, b := range schema {
		cols[i] = Column{Type: encTypes[int(b)%len(encTypes)], Length: MaxStringLength, Nullable: true}
		idx[i] = i
	}
	return cols, idx
}

// encTypeBytes returns schema bytes for encFuzzColumns naming types.
func encTypeBytes(types ...Type) []byte {
	b := make([]byte, len(types))
	for i, t := range types {
		b[i] = byte(t - 1) // encTypes[t-1] == t
	}
	return b
}

// FuzzKeyDecode decodes arbitrary bytes as a key of 1 to 4 columns of types
// chosen by the schema bytes. Decoding never panics; it fails only with
// ErrCorruptKey; when it succeeds, encoding the decoded values gives back
// exactly the bytes it consumed, with and without scratch, and each value
// in turn decodes the same with decodeKeyValue.
func FuzzKeyDecode(f *testing.F) {
	int1 := appendKeyValue(nil, TypeInt, Int(1))
	f.Add(encTypeBytes(TypeInt), int1)
	f.Add(encTypeBytes(TypeInt, TypeVarchar), appendKey(nil,
		[]Column{{Type: TypeInt}, {Type: TypeVarchar}}, []int{0, 1}, Row{Int(-7), Str("a\x00b\xff")}))
	f.Add(encTypeBytes(TypeChar, TypeChar, TypeDecimal, TypeTimestamp), appendKey(nil,
		[]Column{{Type: TypeChar}, {Type: TypeChar}, {Type: TypeDecimal}, {Type: TypeTimestamp}}, []int{0, 1, 2, 3},
		Row{Str(""), Null, Dec(12345), Int(-1)}))
	f.Add(encTypeBytes(TypeVarchar), []byte{0x01, 0x00, 0xFF, 0x00, 0xFF, 0x00, 0x01, 0xAA})
	f.Add(encTypeBytes(TypeVarchar), []byte{0x01, 'a', 0x00, 0x02})
	f.Add(encTypeBytes(TypeInt, TypeInt), int1[:5])
	f.Add(encTypeBytes(TypeVarchar, TypeInt), []byte{0x00, 0x00})
	f.Add([]byte{}, []byte{0x02})
	f.Fuzz(func(t *testing.T, schema, key []byte) {
		cols, idx := encFuzzColumns(schema, 4)
		if len(cols) == 0 {
			return
		}
		dst := make(Row, len(cols))
		rest, scratch, err := decodeKeyInto(key, cols, idx, dst, nil)
		if err != nil {
			if !errors.Is(err, ErrCorruptKey) {
				t.Fatalf("error %v does not match ErrCorruptKey", err)
			}
			if _, err2 := decodeKey(key, cols, idx, make(Row, len(cols))); err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("decodeKey says %v, decodeKeyInto %v", err2, err)
			}
			return
		}
		consumed := key[:len(key)-len(rest)]
		if len(scratch) > len(consumed) {
			t.Fatalf("scratch of %d bytes for a key of %d", len(scratch), len(consumed))
		}
		if re := appendKey(nil, cols, idx, dst); !bytes.Equal(re, consumed) {
			t.Fatalf("decoded %v from %x, which encodes as %x", dst, consumed, re)
		}
		dst2 := make(Row, len(cols))
		rest2, err := decodeKey(key, cols, idx, dst2)
		if err != nil || len(rest2) != len(rest) {
			t.Fatalf("decodeKey: rest %d bytes, err %v; decodeKeyInto: rest %d bytes", len(rest2), err, len(rest))
		}
		b := key
		for i, c := range cols {
			var v Value
			if v, b, _, err = decodeKeyValue(b, c.Type, nil); err != nil {
				t.Fatalf("column %d: decodeKeyValue: %v", i, err)
			}
			if encCompareValue(c.Type, v, dst[i]) != 0 || encCompareValue(c.Type, v, dst2[i]) != 0 {
				t.Fatalf("column %d: decodeKeyValue %v, decodeKeyInto %v, decodeKey %v", i, v, dst[i], dst2[i])
			}
		}
	})
}

// FuzzRowDecode decodes arbitrary bytes as a row of 0 to 24 columns of
// types chosen by the schema bytes. Decoding never panics; it fails only
// with ErrCorruptRow; when it succeeds, encoding the decoded row gives back
// exactly the input, and decodeColumns of the columns in the mask agrees.
func FuzzRowDecode(f *testing.F) {
	cols3 := []Column{{Type: TypeInt}, {Type: TypeVarchar}, {Type: TypeDecimal}}
	f.Add(encTypeBytes(TypeInt, TypeVarchar, TypeDecimal), uint32(0b101), appendRow(nil, cols3, Row{Int(5), Str("xy"), Null}))
	f.Add(encTypeBytes(TypeInt, TypeVarchar, TypeDecimal), uint32(0b010), appendRow(nil, cols3, Row{Int(-1 << 62), Str(""), Dec(-99)}))
	f.Add([]byte{}, uint32(0), []byte{0x01, 0x00})
	cols9 := make([]Column, 9)
	for i := range cols9 {
		cols9[i] = Column{Type: encTypes[i%len(encTypes)], Nullable: true}
	}
	row9 := make(Row, 9)
	row9[8] = Str("last")
	f.Add(bytes.Repeat([]byte{0, 1, 2, 3, 4}, 2)[:9], uint32(1<<8|1), appendRow(nil, cols9, row9))
	f.Add(encTypeBytes(TypeInt), uint32(1), []byte{0x01, 0x01, 0x00, 0x80, 0x00})
	f.Add(encTypeBytes(TypeChar), uint32(1), []byte{0x01, 0x01, 0x00, 0x05, 'a'})
	f.Add(encTypeBytes(TypeInt), uint32(1), []byte{0x01, 0x01, 0x02, 0x00})
	f.Fuzz(func(t *testing.T, schema []byte, mask uint32, in []byte) {
		cols, _ := encFuzzColumns(schema, 24)
		var want []int
		for i := range cols {
			if mask&(1<<i) != 0 {
				want = append(want, i)
			}
		}
		part := make(Row, len(cols))
		errCols := decodeColumns(in, cols, want, part)
		if errCols != nil && !errors.Is(errCols, ErrCorruptRow) {
			t.Fatalf("decodeColumns: error %v does not match ErrCorruptRow", errCols)
		}
		row, err := decodeRow(in, cols, nil)
		if err != nil {
			if !errors.Is(err, ErrCorruptRow) {
				t.Fatalf("decodeRow: error %v does not match ErrCorruptRow", err)
			}
			return
		}
		if re := appendRow(nil, cols, row); !bytes.Equal(re, in) {
			t.Fatalf("decoded %v from %x, which encodes as %x", row, in, re)
		}
		if errCols != nil {
			t.Fatalf("decodeRow accepts %x, decodeColumns %v says %v", in, want, errCols)
		}
		for _, i := range want {
			if encCompareValue(cols[i].Type, row[i], part[i]) != 0 {
				t.Fatalf("column %d: decodeRow %v, decodeColumns %v", i, row[i], part[i])
			}
		}
	})
}
