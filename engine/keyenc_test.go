package engine

import (
	"bytes"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

var encSeedFlag = flag.Uint64("engine.encseed", 0, "seed of the key and row encoding property tests (0: the fixed default)")

// encSeed returns the seed of an encoding property test and logs it.
func encSeed(tb testing.TB) uint64 {
	tb.Helper()
	s := *encSeedFlag
	if s == 0 {
		s = 0x6b6579
	}
	tb.Logf("seed %d (replay with -engine.encseed=%d)", s, s)
	return s
}

// encTypes is every column type.
var encTypes = []Type{TypeInt, TypeDecimal, TypeChar, TypeVarchar, TypeTimestamp}

// encInts and encStrings are values chosen to collide often and to sit on
// the encodings' edges: the extremes, the sign change, 0x00 and 0xFF bytes,
// strings that are prefixes of each other.
var (
	encInts = []int64{
		math.MinInt64, math.MinInt64 + 1, -1 << 32, -256, -255, -1, 0, 1, 255, 256, 1 << 32,
		math.MaxInt64 - 1, math.MaxInt64,
	}
	encStrings = []string{
		"", "\x00", "\x00\x00", "\x00\x01", "\x00\xff", "\x01", "\xff", "\xff\x00", "\xff\xff",
		"a", "a\x00", "a\x00\x00", "a\x00b", "a\x01", "a\xff", "ab", "ab\x00", "abc", "b",
	}
	encAlphabet = []byte{0x00, 0x01, 'a', 'b', 0xFE, 0xFF}
)

// encRandColumns returns n nullable columns of random types.
func encRandColumns(rng *rand.Rand, n int) []Column {
	cols := make([]Column, n)
	for i := range cols {
		cols[i] = Column{Name: fmt.Sprintf("c%d", i), Type: encTypes[rng.IntN(len(encTypes))], Length: MaxStringLength, Nullable: true}
	}
	return cols
}

// encRandValue returns a random value of type t: NULL one time in six,
// otherwise mostly an edge value.
func encRandValue(rng *rand.Rand, t Type) Value {
	if rng.IntN(6) == 0 {
		return Null
	}
	if t.isString() {
		if rng.IntN(2) == 0 {
			return Str(encStrings[rng.IntN(len(encStrings))])
		}
		b := make([]byte, rng.IntN(7))
		for i := range b {
			b[i] = encAlphabet[rng.IntN(len(encAlphabet))]
		}
		return Bytes(b)
	}
	switch rng.IntN(3) {
	case 0:
		return Int(rng.Int64() - rng.Int64())
	case 1:
		return Int(rng.Int64N(5) - 2)
	default:
		return Int(encInts[rng.IntN(len(encInts))])
	}
}

// encRandRow returns a random row of cols.
func encRandRow(rng *rand.Rand, cols []Column) Row {
	row := make(Row, len(cols))
	for i, c := range cols {
		row[i] = encRandValue(rng, c.Type)
	}
	return row
}

// encCompareValue is the reference order: NULL first, integers
// numerically, strings bytewise.
func encCompareValue(t Type, a, b Value) int {
	switch {
	case a.IsNull() && b.IsNull():
		return 0
	case a.IsNull():
		return -1
	case b.IsNull():
		return 1
	case t.isString():
		return bytes.Compare(a.B, b.B)
	default:
		return cmp.Compare(a.I, b.I)
	}
}

// encCompareKey compares the first k key columns idx of rows a and b in the
// reference order.
func encCompareKey(cols []Column, idx []int, k int, a, b Row) int {
	for _, c := range idx[:k] {
		if r := encCompareValue(cols[c].Type, a[c], b[c]); r != 0 {
			return r
		}
	}
	return 0
}

// encKeyValues returns row's values at idx, in key order.
func encKeyValues(idx []int, row Row) []Value {
	vals := make([]Value, len(idx))
	for i, c := range idx {
		vals[i] = row[c]
	}
	return vals
}

func encSign(x int) int { return cmp.Compare(x, 0) }

func TestKeyEncodingExamples(t *testing.T) {
	ff := bytes.Repeat([]byte{0xFF}, 8)
	for _, tc := range []struct {
		typ  Type
		v    Value
		want []byte
	}{
		{TypeInt, Null, []byte{0x00}},
		{TypeVarchar, Null, []byte{0x00}},
		{TypeInt, Int(0), []byte{0x01, 0x80, 0, 0, 0, 0, 0, 0, 0}},
		{TypeInt, Int(1), []byte{0x01, 0x80, 0, 0, 0, 0, 0, 0, 1}},
		{TypeDecimal, Dec(-1), append([]byte{0x01, 0x7F}, ff[:7]...)},
		{TypeTimestamp, Int(math.MinInt64), []byte{0x01, 0, 0, 0, 0, 0, 0, 0, 0}},
		{TypeInt, Int(math.MaxInt64), append([]byte{0x01}, ff...)},
		{TypeChar, Str(""), []byte{0x01, 0x00, 0x01}},
		{TypeVarchar, Value{NotNull: true}, []byte{0x01, 0x00, 0x01}}, // nil B: the empty string
		{TypeVarchar, Str("ab"), []byte{0x01, 'a', 'b', 0x00, 0x01}},
		{TypeVarchar, Str("\x00"), []byte{0x01, 0x00, 0xFF, 0x00, 0x01}},
		{TypeVarchar, Str("a\x00b\xff"), []byte{0x01, 'a', 0x00, 0xFF, 'b', 0xFF, 0x00, 0x01}},
	} {
		t.Run(fmt.Sprintf("%s/%s", tc.typ, tc.v.Format(tc.typ, 0)), func(t *testing.T) {
			got := appendKeyValue([]byte("prefix"), tc.typ, tc.v)
			require.Equal(t, append([]byte("prefix"), tc.want...), got)
			v, rest, _, err := decodeKeyValue(append(tc.want, 0xAB), tc.typ, nil)
			require.NoError(t, err)
			require.Equal(t, []byte{0xAB}, rest)
			want := tc.v
			if want.NotNull && tc.typ.isString() && want.B == nil {
				want.B = []byte{}
			}
			require.Equal(t, want, v)
		})
	}

	// The worked example of the file comment.
	cols := []Column{{Name: "w", Type: TypeInt}, {Name: "last", Type: TypeVarchar, Length: 16}}
	got := appendKey(nil, cols, []int{0, 1}, Row{Int(1), Str("ab\x00")})
	require.Equal(t, []byte{0x01, 0x80, 0, 0, 0, 0, 0, 0, 1, 0x01, 'a', 'b', 0x00, 0xFF, 0x00, 0x01}, got)
}

// TestKeyOrderExamples checks hand-ordered lists: each key must sort
// strictly after the one before it.
func TestKeyOrderExamples(t *testing.T) {
	ints := []Value{Null, Int(math.MinInt64), Int(math.MinInt64 + 1), Int(-1 << 40), Int(-256), Int(-1),
		Int(0), Int(1), Int(255), Int(256), Int(1 << 40), Int(math.MaxInt64 - 1), Int(math.MaxInt64)}
	strs := []Value{Null, Str(""), Str("\x00"), Str("\x00\x00"), Str("\x00\x01"), Str("\x00\xff"), Str("\x01"),
		Str("a"), Str("a\x00"), Str("a\x00\x00"), Str("a\x00\xff"), Str("a\x01"), Str("ab"), Str("a\xff"),
		Str("b"), Str("\xff"), Str("\xff\x00"), Str("\xff\xff")}
	check := func(t *testing.T, cols []Column, rows []Row) {
		idx := make([]int, len(cols))
		for i := range idx {
			idx[i] = i
		}
		var prev []byte
		for i, row := range rows {
			k := appendKey(nil, cols, idx, row)
			if i > 0 {
				require.Negative(t, bytes.Compare(prev, k), "%v must sort before %v: %x vs %x", rows[i-1], row, prev, k)
			}
			prev = k
		}
	}
	t.Run("int", func(t *testing.T) {
		var rows []Row
		for _, v := range ints {
			rows = append(rows, Row{v})
		}
		check(t, []Column{{Type: TypeInt}}, rows)
	})
	t.Run("string", func(t *testing.T) {
		var rows []Row
		for _, v := range strs {
			rows = append(rows, Row{v})
		}
		check(t, []Column{{Type: TypeVarchar}}, rows)
	})
	t.Run("composite", func(t *testing.T) {
		// A shorter first column wins whatever follows it.
		check(t, []Column{{Type: TypeVarchar}, {Type: TypeInt}, {Type: TypeChar}}, []Row{
			{Null, Int(math.MaxInt64), Str("\xff")},
			{Str(""), Null, Null},
			{Str(""), Int(math.MaxInt64), Str("\xff\xff")},
			{Str("a"), Null, Str("z")},
			{Str("a"), Int(math.MinInt64), Null},
			{Str("a"), Int(math.MinInt64), Str("")},
			{Str("a"), Int(math.MaxInt64), Str("\xff")},
			{Str("a\x00"), Int(math.MinInt64), Null},
			{Str("a\x00"), Int(0), Str("a")},
			{Str("a\x01"), Null, Null},
			{Str("ab"), Null, Null},
		})
	})
}

// TestKeyProperties encodes thousands of random tuples of random schemas
// and checks, against the reference comparator: order preservation, round
// trips (with and without scratch, with trailing bytes), and prefix bounds.
func TestKeyProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(encSeed(t), 1))
	const schemas, rowsPer = 250, 40
	pairs, prefixes := 0, 0
	for s := range schemas {
		cols := encRandColumns(rng, 1+rng.IntN(4))
		// The key is over every column, in a random order.
		idx := rng.Perm(len(cols))
		rows := make([]Row, rowsPer)
		keys := make([][]byte, rowsPer)
		for i := range rows {
			rows[i] = encRandRow(rng, cols)
			keys[i] = appendKey(nil, cols, idx, rows[i])
		}
		desc := fmt.Sprintf("schema %d: %v key order %v", s, cols, idx)

		// Order: every pair.
		for i := range rows {
			for j := range rows {
				want := encCompareKey(cols, idx, len(idx), rows[i], rows[j])
				if got := encSign(bytes.Compare(keys[i], keys[j])); got != want {
					require.Equal(t, want, got, "%s\nrows %v and %v\nkeys %x and %x", desc, rows[i], rows[j], keys[i], keys[j])
				}
				pairs++
			}
		}

		// Round trip.
		var scratch []byte
		for i, row := range rows {
			dst := make(Row, len(cols))
			rest, err := decodeKey(keys[i], cols, idx, dst)
			require.NoError(t, err, desc)
			require.Empty(t, rest)
			require.Equal(t, row, dst, desc)

			in := append(slices.Clone(keys[i]), 0x00, 0x01, 0xFF)
			clear(dst)
			rest, scratch, err = decodeKeyInto(in, cols, idx, dst, scratch[:0])
			require.NoError(t, err, desc)
			require.Equal(t, []byte{0x00, 0x01, 0xFF}, rest)
			require.Equal(t, row, dst, desc)

			// Column by column with decodeKeyValue.
			b := keys[i]
			for _, c := range idx {
				var v Value
				v, b, scratch, err = decodeKeyValue(b, cols[c].Type, scratch[:0])
				require.NoError(t, err, desc)
				require.Equal(t, row[c], v, desc)
			}
			require.Empty(t, b)
		}

		// Prefixes: the encoding of the first k values is a byte prefix of
		// the full key, and a key lies in [prefix, prefixSuccessor(prefix))
		// exactly when its first k values equal those.
		for i, row := range rows {
			vals := encKeyValues(idx, row)
			for k := 0; k <= len(idx); k++ {
				p := appendKeyPrefix(nil, cols, idx, vals[:k])
				require.True(t, bytes.HasPrefix(keys[i], p), "%s: prefix %x of key %x", desc, p, keys[i])
				if k == len(idx) {
					require.Equal(t, keys[i], p)
				}
				succ := prefixSuccessor(p)
				for j := range rows {
					inRange := bytes.Compare(keys[j], p) >= 0 && (succ == nil || bytes.Compare(keys[j], succ) < 0)
					same := encCompareKey(cols, idx, k, row, rows[j]) == 0
					if same != inRange {
						require.Equal(t, same, inRange, "%s: k=%d prefix %v (%x, successor %x), row %v key %x",
							desc, k, vals[:k], p, succ, rows[j], keys[j])
					}
					prefixes++
				}
			}
		}
	}
	t.Logf("%d schemas, %d ordered pairs, %d prefix checks", schemas, pairs, prefixes)
}

func TestPrefixSuccessor(t *testing.T) {
	for _, tc := range []struct{ in, want []byte }{
		{nil, nil},
		{[]byte{}, nil},
		{[]byte{0xFF}, nil},
		{[]byte{0xFF, 0xFF}, nil},
		{[]byte{0x00}, []byte{0x01}},
		{[]byte("a"), []byte("b")},
		{[]byte("a\xff"), []byte("b")},
		{[]byte("a\xff\xff"), []byte("b")},
		{[]byte("a\x00"), []byte("a\x01")},
		{[]byte("\xff\xfe\xff"), []byte("\xff\xff")},
	} {
		in := slices.Clone(tc.in)
		require.Equal(t, tc.want, prefixSuccessor(in), "prefixSuccessor(%x)", tc.in)
		require.Equal(t, tc.in, in, "input modified")
	}

	// Property: s starts with p exactly when p <= s < prefixSuccessor(p),
	// over short strings of a small alphabet (so that prefixes and 0xFF
	// runs are common).
	rng := rand.New(rand.NewPCG(encSeed(t), 2))
	randBytes := func() []byte {
		b := make([]byte, rng.IntN(5))
		for i := range b {
			b[i] = []byte{0x00, 0x01, 0xFE, 0xFF}[rng.IntN(4)]
		}
		return b
	}
	for range 20000 {
		p := randBytes()
		s := randBytes()
		if rng.IntN(2) == 0 {
			s = append(slices.Clone(p), s...)
		}
		succ := prefixSuccessor(p)
		inRange := bytes.Compare(s, p) >= 0 && (succ == nil || bytes.Compare(s, succ) < 0)
		require.Equal(t, bytes.HasPrefix(s, p), inRange, "p=%x s=%x succ=%x", p, s, succ)
	}
}

// TestKeyDecodeCorrupt feeds malformed keys: each must return an error
// matching ErrCorruptKey that says what went wrong, without panicking.
func TestKeyDecodeCorrupt(t *testing.T) {
	i1 := []byte{0x01, 0x80, 0, 0, 0, 0, 0, 0, 1} // Int(1)
	for _, tc := range []struct {
		name  string
		types []Type
		in    []byte
		msg   string
	}{
		{"empty", []Type{TypeInt}, nil, "column 0 (int) at byte 0: truncated: no tag byte"},
		{"bad tag", []Type{TypeInt}, []byte{0x02, 0, 0, 0, 0, 0, 0, 0, 0}, "tag 0x02"},
		{"bad tag string", []Type{TypeVarchar}, []byte{0xFF, 0x00, 0x01}, "tag 0xff"},
		{"truncated int", []Type{TypeDecimal}, []byte{0x01, 0x80, 0, 0}, "byte 1: truncated integer: 3 of 8 bytes"},
		{"tag only", []Type{TypeTimestamp}, []byte{0x01}, "truncated integer: 0 of 8 bytes"},
		{"string without terminator", []Type{TypeVarchar}, []byte{0x01, 'a', 'b'}, "byte 3: truncated string: no terminator"},
		{"string tag only", []Type{TypeChar}, []byte{0x01}, "truncated string: no terminator"},
		{"string ends in 0x00", []Type{TypeVarchar}, []byte{0x01, 'a', 0x00}, "byte 2: truncated string: 0x00 at the end"},
		{"bad escape", []Type{TypeVarchar}, []byte{0x01, 'a', 0x00, 0x02}, "byte 2: bad escape 0x00 0x02"},
		{"escape 0x00 0x00", []Type{TypeChar}, []byte{0x01, 0x00, 0x00}, "bad escape 0x00 0x00"},
		{"bad escape after an escaped zero", []Type{TypeVarchar}, []byte{0x01, 0x00, 0xFF, 0x00, 0x80}, "byte 3: bad escape 0x00 0x80"},
		{"second column missing", []Type{TypeInt, TypeInt}, i1, "column 1 (int) at byte 9: truncated: no tag byte"},
		{"second column truncated", []Type{TypeInt, TypeVarchar}, append(slices.Clone(i1), 0x01, 'x'), "column 1 (varchar) at byte 11: truncated string"},
		{"second column bad tag", []Type{TypeInt, TypeChar}, append(slices.Clone(i1), 0x10), "column 1 (char) at byte 9: tag 0x10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cols := make([]Column, len(tc.types))
			idx := make([]int, len(tc.types))
			for i, typ := range tc.types {
				cols[i] = Column{Type: typ, Length: 10, Nullable: true}
				idx[i] = i
			}
			dst := make(Row, len(cols))
			_, err := decodeKey(tc.in, cols, idx, dst)
			require.ErrorIs(t, err, ErrCorruptKey)
			require.ErrorContains(t, err, tc.msg)
			_, _, err = decodeKeyInto(tc.in, cols, idx, dst, make([]byte, 0, 64))
			require.ErrorIs(t, err, ErrCorruptKey)
			if len(tc.types) == 1 {
				_, rest, _, err := decodeKeyValue(tc.in, tc.types[0], nil)
				require.True(t, errors.Is(err, ErrCorruptKey), "%v", err)
				require.Equal(t, tc.in, rest, "rest on error is the input")
			}
		})
	}
}

// TestKeyDecodeOwnership: decodeKey's strings are copies; decodeKeyInto's
// live in scratch, capacity-limited so appending to one spares the next.
func TestKeyDecodeOwnership(t *testing.T) {
	cols := []Column{{Type: TypeVarchar, Length: 10}, {Type: TypeVarchar, Length: 10}}
	idx := []int{0, 1}
	key := appendKey(nil, cols, idx, Row{Str("ab"), Str("cd")})

	dst := make(Row, 2)
	_, err := decodeKey(key, cols, idx, dst)
	require.NoError(t, err)
	clear(key)
	require.Equal(t, Row{Str("ab"), Str("cd")}, dst, "decodeKey's strings must not alias the key")

	key = appendKey(nil, cols, idx, Row{Str("ab"), Str("cd")})
	scratch := make([]byte, 0, 64)
	_, out, err := decodeKeyInto(key, cols, idx, dst, scratch)
	require.NoError(t, err)
	require.Equal(t, "abcd", string(out))
	require.Same(t, &scratch[:1][0], &dst[0].B[0], "strings live in scratch")
	_ = append(dst[0].B, 'X')
	require.Equal(t, Row{Str("ab"), Str("cd")}, dst)
}

func TestKeyAllocs(t *testing.T) {
	cols, idx, row := benchCustomer()
	buf := make([]byte, 0, 256)
	require.Zero(t, testing.AllocsPerRun(100, func() { buf = appendKey(buf[:0], cols, idx, row) }))
	dst := make(Row, len(cols))
	scratch := make([]byte, 0, 256)
	require.Zero(t, testing.AllocsPerRun(100, func() {
		var err error
		if _, scratch, err = decodeKeyInto(buf, cols, idx, dst, scratch[:0]); err != nil {
			panic(err)
		}
	}))
}

// benchCustomer returns a TPC-C customer row (clause 1.3) and the column positions
// of the secondary index on (c_w_id, c_d_id, c_last, c_first) followed by
// the primary key's c_id, as organizations 1 and 3 store it.
func benchCustomer() ([]Column, []int, Row) {
	cols := []Column{
		{Name: "c_w_id", Type: TypeInt},
		{Name: "c_d_id", Type: TypeInt},
		{Name: "c_id", Type: TypeInt},
		{Name: "c_first", Type: TypeVarchar, Length: 16},
		{Name: "c_middle", Type: TypeChar, Length: 2},
		{Name: "c_last", Type: TypeVarchar, Length: 16},
		{Name: "c_street_1", Type: TypeVarchar, Length: 20},
		{Name: "c_city", Type: TypeVarchar, Length: 20},
		{Name: "c_state", Type: TypeChar, Length: 2},
		{Name: "c_zip", Type: TypeChar, Length: 9},
		{Name: "c_phone", Type: TypeChar, Length: 16},
		{Name: "c_since", Type: TypeTimestamp},
		{Name: "c_credit", Type: TypeChar, Length: 2},
		{Name: "c_credit_lim", Type: TypeDecimal, Scale: 2},
		{Name: "c_discount", Type: TypeDecimal, Scale: 4},
		{Name: "c_balance", Type: TypeDecimal, Scale: 2},
		{Name: "c_ytd_payment", Type: TypeDecimal, Scale: 2},
		{Name: "c_payment_cnt", Type: TypeInt},
		{Name: "c_delivery_cnt", Type: TypeInt},
		{Name: "c_data", Type: TypeVarchar, Length: 500, Nullable: true},
	}
	row := Row{
		Int(7), Int(3), Int(2101), Str("Q8xy7SdDm2uLvK"), Str("OE"), Str("BARBARABLE"),
		Str("kjhsdf8s7df6sdf"), Str("lkjhsdfoiuwer"), Str("CA"), Str("123411111"), Str("0123456789012345"),
		Int(1_700_000_000_000_000), Str("GC"), Dec(5_000_000), Dec(1234), Dec(-1000), Dec(1000),
		Int(1), Int(0), Bytes(bytes.Repeat([]byte("x"), 400)),
	}
	return cols, []int{0, 1, 5, 3, 2}, row
}

func BenchmarkKeyEncode(b *testing.B) {
	noVerifyRedo(b)
	cols, idx, row := benchCustomer()
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = appendKey(buf[:0], cols, idx, row)
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkKeyDecode(b *testing.B) {
	noVerifyRedo(b)
	cols, idx, row := benchCustomer()
	key := appendKey(nil, cols, idx, row)
	dst := make(Row, len(cols))
	scratch := make([]byte, 0, 256)
	b.ReportAllocs()
	b.SetBytes(int64(len(key)))
	for b.Loop() {
		var err error
		if _, scratch, err = decodeKeyInto(key, cols, idx, dst, scratch[:0]); err != nil {
			b.Fatal(err)
		}
	}
}
