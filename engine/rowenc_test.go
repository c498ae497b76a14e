package engine

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRowEncodingExamples(t *testing.T) {
	for _, tc := range []struct {
		name string
		cols []Column
		row  Row
		want []byte
	}{
		{
			// The worked example of the file comment.
			name: "example",
			cols: []Column{{Type: TypeInt}, {Type: TypeVarchar, Length: 5}, {Type: TypeDecimal, Nullable: true}, {Type: TypeTimestamp}},
			row:  Row{Int(3), Str("ab"), Null, Int(-2)},
			want: []byte{0x01, 0x04, 0x04, 0x06, 0x02, 'a', 'b', 0x03},
		},
		{
			name: "no columns",
			want: []byte{0x01, 0x00},
		},
		{
			// Nine columns: a second bitmap byte, bit 0 of which is column 8.
			name: "nine nulls",
			cols: slices.Repeat([]Column{{Type: TypeInt, Nullable: true}}, 9),
			row:  slices.Repeat(Row{Null}, 9),
			want: []byte{0x01, 0x09, 0xFF, 0x01},
		},
		{
			name: "extremes",
			cols: []Column{{Type: TypeInt}, {Type: TypeInt}, {Type: TypeChar, Length: 1}},
			row:  Row{Int(math.MinInt64), Int(math.MaxInt64), Str("")},
			// zigzag(MinInt64) is 2^64-1: nine 0xFF and 0x01; zigzag(MaxInt64)
			// is 2^64-2.
			want: slices.Concat([]byte{0x01, 0x03, 0x00},
				bytes.Repeat([]byte{0xFF}, 9), []byte{0x01},
				[]byte{0xFE}, bytes.Repeat([]byte{0xFF}, 8), []byte{0x01},
				[]byte{0x00}),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := appendRow([]byte("prefix"), tc.cols, tc.row)
			require.Equal(t, append([]byte("prefix"), tc.want...), got)
			dec, err := decodeRow(tc.want, tc.cols, nil)
			require.NoError(t, err)
			if len(tc.row) == 0 {
				require.Empty(t, dec)
			} else {
				require.Equal(t, tc.row, dec)
			}
		})
	}
}

// TestRowProperties round-trips thousands of random rows of random schemas
// (up to 20 columns, so bitmaps of 1 to 3 bytes), and checks that
// decodeColumns agrees with decodeRow on a random subset of columns and
// leaves the others untouched.
func TestRowProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(encSeed(t), 3))
	sentinel := Int(-12345)
	var buf []byte
	var dec Row
	for r := range 5000 {
		cols := encRandColumns(rng, rng.IntN(21))
		row := encRandRow(rng, cols)
		prefix := []byte{0xEE, 0xEE}
		buf = appendRow(append(buf[:0], prefix...), cols, row)
		require.Equal(t, prefix, buf[:2], "appendRow must append")
		enc := buf[2:]

		var err error
		dec, err = decodeRow(enc, cols, dec[:0])
		require.NoError(t, err, "row %d: %v", r, cols)
		require.Len(t, dec, len(cols))
		if len(cols) > 0 {
			require.Equal(t, row, dec, "row %d: %v\nencoding %x", r, cols, enc)
		}
		require.Equal(t, enc, appendRow(nil, cols, dec), "re-encoding")

		var want []int
		for i := range cols {
			if rng.IntN(2) == 0 {
				want = append(want, i)
			}
		}
		part := slices.Repeat(Row{sentinel}, len(cols))
		require.NoError(t, decodeColumns(enc, cols, want, part), "row %d: want %v", r, want)
		for i := range cols {
			if slices.Contains(want, i) {
				require.Equal(t, dec[i], part[i], "row %d column %d", r, i)
			} else {
				require.Equal(t, sentinel, part[i], "row %d column %d not wanted", r, i)
			}
		}
	}
}

// TestDecodeRowAliasing: strings alias the input, capacity-limited; dst is
// reused when it has room.
func TestDecodeRowAliasing(t *testing.T) {
	cols := []Column{{Type: TypeVarchar, Length: 9}, {Type: TypeVarchar, Length: 9}, {Type: TypeInt}}
	enc := appendRow(nil, cols, Row{Str("ab"), Str("cd"), Int(1)})

	dst := make(Row, 1, 8)
	got, err := decodeRow(enc, cols, dst)
	require.NoError(t, err)
	require.Same(t, &dst[:1][0], &got[0], "dst with room is reused")
	enc[bytes.Index(enc, []byte("ab"))] = 'X'
	require.Equal(t, "Xb", string(got[0].B), "strings alias the input")
	_ = append(got[0].B, 'Z')
	require.Equal(t, "cd", string(got[1].B), "appending to a string must not overwrite the input")

	small := make(Row, 0, 2)
	got, err = decodeRow(enc, cols, small)
	require.NoError(t, err)
	require.Len(t, got, 3)
}

// TestRowDecodeCorrupt feeds malformed rows: each must return an error
// matching ErrCorruptRow that says what went wrong, without panicking.
// A padded row (what an in-place heap update that shrank a row leaves)
// decodes like the row it pads.
func TestRowPadded(t *testing.T) {
	cols := []Column{{Name: "a", Type: TypeInt}, {Name: "b", Type: TypeVarchar, Length: 9}}
	img := appendRow(nil, cols, Row{Int(5), Str("xy")})
	padded := padRow(append([]byte{}, img...), len(img)+5)
	require.Len(t, padded, len(img)+5)
	require.Equal(t, rowFormatPadded, padded[0])
	row, err := decodeRow(padded, cols, nil)
	require.NoError(t, err)
	require.Equal(t, Row{Int(5), Str("xy")}, row)
	require.Equal(t, img, padRow(img, 3), "a row as long as asked stays as it is")
}

func TestRowDecodeCorrupt(t *testing.T) {
	cols := []Column{{Name: "a", Type: TypeInt}, {Name: "b", Type: TypeVarchar, Length: 9}, {Name: "c", Type: TypeInt, Nullable: true}}
	valid := appendRow(nil, cols, Row{Int(5), Str("xy"), Null})
	require.Equal(t, []byte{0x01, 0x03, 0x04, 0x0A, 0x02, 'x', 'y'}, valid)
	hdr := valid[:3]
	for _, tc := range []struct {
		name string
		in   []byte
		msg  string
		// columnsOK: decodeColumns of every column accepts it (it does not
		// look past the last column).
		columnsOK bool
	}{
		{name: "empty", in: nil, msg: "byte 0: empty"},
		{name: "version 0", in: slices.Concat([]byte{0x00}, valid[1:]), msg: "format version 0, want 1 or 2"},
		{name: "version 3", in: slices.Concat([]byte{0x03}, valid[1:]), msg: "format version 3, want 1 or 2"},
		{name: "padded with a non-zero byte", in: slices.Concat([]byte{0x02}, valid[1:], []byte{0, 1}), msg: "trailing bytes: 2 after the last column", columnsOK: true},
		{name: "no column count", in: []byte{0x01}, msg: "byte 1: column count: truncated varint"},
		{name: "column count truncated", in: []byte{0x01, 0x83}, msg: "column count: truncated varint"},
		{name: "column count not minimal", in: []byte{0x01, 0x83, 0x00, 0x04}, msg: "column count: varint not minimally encoded"},
		{name: "column count overflows", in: slices.Concat([]byte{0x01}, bytes.Repeat([]byte{0xFF}, 10), []byte{0x01}), msg: "column count: varint overflows"},
		{name: "too few columns", in: []byte{0x01, 0x02, 0x00, 0x0A, 0x02, 'x', 'y'}, msg: "2 columns, want 3"},
		{name: "too many columns", in: slices.Concat([]byte{0x01, 0x04}, valid[2:], []byte{0x00}), msg: "4 columns, want 3"},
		{name: "no bitmap", in: []byte{0x01, 0x03}, msg: "byte 2: truncated NULL bitmap: 0 of 1 bytes"},
		{name: "bitmap bit beyond the columns", in: slices.Concat([]byte{0x01, 0x03, 0x0C}, valid[3:]), msg: "NULL bitmap sets bits 0x08 beyond column 2"},
		{name: "int missing", in: hdr, msg: "column 0 (a int) at byte 3: truncated varint"},
		{name: "int truncated", in: slices.Concat(hdr, []byte{0x80}), msg: "column 0 (a int) at byte 3: truncated varint"},
		{name: "int not minimal", in: slices.Concat(hdr, []byte{0x8A, 0x00, 0x02, 'x', 'y'}), msg: "column 0 (a int) at byte 3: varint not minimally encoded"},
		{name: "int overflows", in: slices.Concat(hdr, bytes.Repeat([]byte{0x80}, 10), []byte{0x02}), msg: "varint overflows 64 bits"},
		{name: "string length missing", in: slices.Concat(hdr, []byte{0x0A}), msg: "column 1 (b varchar) at byte 4: string length: truncated varint"},
		{name: "string longer than the rest", in: slices.Concat(hdr, []byte{0x0A, 0x05, 'x', 'y'}), msg: "column 1 (b varchar) at byte 5: string of 5 bytes, 2 left"},
		{name: "string length huge", in: slices.Concat(hdr, []byte{0x0A}, bytes.Repeat([]byte{0xFF}, 9), []byte{0x01, 'x'}), msg: "string of 18446744073709551615 bytes, 1 left"},
		{name: "string length not minimal", in: slices.Concat(hdr, []byte{0x0A, 0x82, 0x00, 'x', 'y'}), msg: "string length: varint not minimally encoded"},
		{name: "trailing bytes", in: slices.Concat(valid, []byte{0x00}), msg: "byte 7: trailing bytes: 1 after the last column", columnsOK: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := make(Row, len(cols))
			got, err := decodeRow(tc.in, cols, dst)
			require.ErrorIs(t, err, ErrCorruptRow)
			require.ErrorContains(t, err, tc.msg)
			require.Nil(t, got)

			err = decodeColumns(tc.in, cols, []int{0, 1, 2}, dst)
			if tc.columnsOK {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, ErrCorruptRow)
			}
		})
	}
}

func TestRowAllocs(t *testing.T) {
	cols, _, row := benchCustomer()
	buf := make([]byte, 0, 1024)
	require.Zero(t, testing.AllocsPerRun(100, func() { buf = appendRow(buf[:0], cols, row) }))
	dst := make(Row, len(cols))
	require.Zero(t, testing.AllocsPerRun(100, func() {
		var err error
		if dst, err = decodeRow(buf, cols, dst[:0]); err != nil {
			panic(err)
		}
	}))
	want := []int{2, 5, 15}
	require.Zero(t, testing.AllocsPerRun(100, func() {
		if err := decodeColumns(buf, cols, want, dst); err != nil {
			panic(err)
		}
	}))
}

func BenchmarkRowEncode(b *testing.B) {
	noVerifyRedo(b)
	cols, _, row := benchCustomer()
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = appendRow(buf[:0], cols, row)
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkRowDecode(b *testing.B) {
	noVerifyRedo(b)
	cols, _, row := benchCustomer()
	enc := appendRow(nil, cols, row)
	b.Run("all", func(b *testing.B) {
		dst := make(Row, len(cols))
		b.ReportAllocs()
		b.SetBytes(int64(len(enc)))
		for b.Loop() {
			var err error
			if dst, err = decodeRow(enc, cols, dst[:0]); err != nil {
				b.Fatal(err)
			}
		}
	})
	// Three columns of twenty (c_id, c_last, c_balance): it still walks the
	// 16 columns up to c_balance, but stops before c_data, the longest.
	b.Run("columns=3", func(b *testing.B) {
		dst := make(Row, len(cols))
		want := []int{2, 5, 15}
		b.ReportAllocs()
		b.SetBytes(int64(len(enc)))
		for b.Loop() {
			if err := decodeColumns(enc, cols, want, dst); err != nil {
				b.Fatal(err)
			}
		}
	})
}
