package tpcc

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLastName(t *testing.T) {
	// By hand from the syllables of 4.3.2.3, hundreds digit first.
	for n, want := range map[int]string{
		0:   "BARBARBAR",
		1:   "BARBAROUGHT",
		10:  "BAROUGHTBAR",
		100: "OUGHTBARBAR",
		123: "OUGHTABLEPRI",
		371: "PRICALLYOUGHT", // the specification's example
		456: "PRESESEANTI",
		789: "CALLYATIONEING",
		999: "EINGEINGEING",
	} {
		require.Equal(t, want, LastName(n), "LastName(%d)", n)
	}
	// The syllables are a prefix code, so the 1,000 names are distinct.
	seen := make(map[string]int)
	for n := range 1000 {
		s := LastName(n)
		require.LessOrEqual(t, len(s), 16, "c_last is varchar(16)")
		if m, dup := seen[s]; dup {
			t.Fatalf("LastName(%d) = LastName(%d) = %s", n, m, s)
		}
		seen[s] = n
	}
	require.Panics(t, func() { LastName(-1) })
	require.Panics(t, func() { LastName(1000) })
}

func TestNURandFormula(t *testing.T) {
	// (((r_A | r_xy) + C) % (y − x + 1)) + x [2.1.6], worked by hand.
	for _, c := range []struct {
		name             string
		x, y, c, ra, rxy int
		want             int
	}{
		// 200 = 0b0011001000, 517 = 0b1000000101: OR 717; +123 = 840.
		{"C_LAST", 0, 999, 123, 200, 517, 840},
		// 1000 = 0b001111101000, 2999 = 0b101110110111: OR 3071;
		// +259 = 3330; mod 3000 = 330; +1.
		{"C_ID", 1, 3000, 259, 1000, 2999, 331},
		// 8000 | 65536 = 73536; +7911 = 81447; +1.
		{"OL_I_ID", 1, 100000, 7911, 8000, 65536, 81448},
		// 8191 | 99999 = 106495 (99999 = 98304 + 1695, 1695 < 8192);
		// +7911 = 114406; mod 100000 = 14406; +1.
		{"OL_I_ID wraps", 1, 100000, 7911, 8191, 99999, 14407},
		{"zero", 0, 999, 0, 0, 0, 0},
	} {
		require.Equal(t, c.want, nurand(c.x, c.y, c.c, c.ra, c.rxy), c.name)
	}
}

func TestNURandDraws(t *testing.T) {
	c := Constants{CLast: 123, CID: 259, CItem: 7911}
	g, twin := NewRand(42, c), NewRand(42, c)
	for range 2000 {
		for _, k := range []struct{ a, x, y int }{{ALast, 0, 999}, {ACID, 1, 3000}, {AItem, 1, 100000}} {
			got := g.NURand(k.a, k.x, k.y)
			ra := twin.Int(0, k.a) // random(0, A) first, then random(x, y)
			want := nurand(k.x, k.y, c.C(k.a), ra, twin.Int(k.x, k.y))
			require.Equal(t, want, got, "NURand(%d, %d, %d)", k.a, k.x, k.y)
			require.True(t, got >= k.x && got <= k.y)
		}
	}
	require.Panics(t, func() { g.NURand(511, 0, 999) })

	// The helpers are NURand with the specification's A, x, y.
	g, twin = NewRand(7, c), NewRand(7, c)
	require.Equal(t, twin.NURand(ACID, 1, 3000), g.CustomerID())
	require.Equal(t, twin.NURand(AItem, 1, 100000), g.ItemID())
	require.Equal(t, LastName(twin.NURand(ALast, 0, 999)), g.RandomLastName())
}

func TestCDelta(t *testing.T) {
	// 2.1.6.1: 65..119 except 96 and 112.
	var valid []int
	for d := 0; d <= 255; d++ {
		if validCDelta(d) {
			valid = append(valid, d)
		}
	}
	require.Len(t, valid, 119-65+1-2)
	require.Equal(t, 65, valid[0])
	require.Equal(t, 119, valid[len(valid)-1])
	require.NotContains(t, valid, 96)
	require.NotContains(t, valid, 112)

	load := Constants{CLast: 100, CID: 5, CItem: 6}
	// Distances from 100, by hand: 65 and 119 are the ends, 64 and 120 just
	// outside, 96 and 112 excluded either side.
	for run, ok := range map[int]bool{35: true, 165: true, 219: true, 34: true, 188: true,
		36: false, 164: false, 220: false, 4: false, 196: false, 212: false, 99: false, 100: false} {
		err := CheckRunConstants(load, Constants{CLast: run})
		if ok {
			require.NoError(t, err, "run C_LAST %d", run)
		} else {
			require.ErrorIs(t, err, ErrInvalidConfig, "run C_LAST %d", run)
		}
	}
	require.ErrorIs(t, CheckRunConstants(load, Constants{CLast: 200, CID: 1024}), ErrInvalidConfig)
	require.ErrorIs(t, CheckRunConstants(Constants{CLast: 256}, Constants{CLast: 150}), ErrInvalidConfig)

	// Over many seeds, the run's C_LAST keeps a valid distance and every
	// constant stays in [0, A]; every valid delta and both signs occur.
	deltas := make(map[int]bool)
	signs := make(map[bool]bool)
	for seed := range uint64(20000) {
		l := NewLoadConstants(seed)
		r := NewRunConstants(seed^0xabcdef, l)
		require.NoError(t, l.Validate())
		require.NoError(t, r.Validate())
		d := r.CLast - l.CLast
		signs[d > 0] = true
		d = absInt(d)
		require.True(t, validCDelta(d), "seed %d: load %d run %d delta %d", seed, l.CLast, r.CLast, d)
		require.NoError(t, CheckRunConstants(l, r))
		deltas[d] = true
	}
	require.Len(t, deltas, len(valid))
	require.Len(t, signs, 2)
}

func TestRandDeterministic(t *testing.T) {
	draw := func(seed uint64) []int {
		g := NewRand(seed, Constants{})
		var out []int
		for range 100 {
			out = append(out, g.Int(0, 1<<30))
		}
		return out
	}
	require.Equal(t, draw(1), draw(1))
	require.NotEqual(t, draw(1), draw(2))
	// Streams of neighbouring coordinates differ.
	require.NotEqual(t, newStream(1, tagStock, 1, 0).Int(0, 1<<30), newStream(1, tagStock, 1, 1).Int(0, 1<<30))
}

func TestRandInt(t *testing.T) {
	g := NewRand(3, Constants{})
	hit := make(map[int]int)
	for range 10000 {
		v := g.Int(5, 15)
		require.True(t, v >= 5 && v <= 15)
		hit[v]++
	}
	require.Len(t, hit, 11, "every value of [5 .. 15] is drawn")
	require.Equal(t, 7, g.Int(7, 7))
	require.Panics(t, func() { g.Int(2, 1) })
	require.Equal(t, int64(-3), g.Int64(-3, -3))

	p := g.Perm(1, 3000)
	seen := make([]bool, 3001)
	for _, v := range p {
		require.False(t, seen[v])
		seen[v] = true
	}
	require.Len(t, p, 3000)
}

func TestRandStrings(t *testing.T) {
	g := NewRand(4, Constants{})
	lengths := make(map[int]bool)
	for range 5000 {
		s := g.AString(8, 16)
		require.True(t, len(s) >= 8 && len(s) <= 16, "a-string %q", s)
		lengths[len(s)] = true
		for _, c := range []byte(s) {
			require.True(t, strings.IndexByte(alnum, c) >= 0, "a-string %q", s)
		}
		n := g.NString(16, 16)
		require.Len(t, n, 16)
		require.Equal(t, "", strings.Trim(n, "0123456789"), "n-string %q", n)
		z := g.Zip()
		require.Len(t, z, 9) // 4.3.2.7
		require.Equal(t, "11111", z[4:])
		require.Equal(t, "", strings.Trim(z[:4], "0123456789"), "zip %q", z)
	}
	require.Len(t, lengths, 9, "every length of [8 .. 16] occurs")

	// Every character of the alphabet occurs.
	all := g.AString(10000, 10000)
	for _, c := range []byte(alnum) {
		require.Contains(t, all, string(c))
	}
}

// The strings a seed draws are fixed: a loaded database is the same
// bytes for one seed, whatever changes in how they are drawn.
func TestRandStringsFixed(t *testing.T) {
	g := NewRand(9, Constants{})
	var b []byte
	for range 1000 {
		b = g.AppendAString(b, 8, 50)
		b = g.AppendNString(b, 4, 9)
	}
	sum := sha256.Sum256(b)
	require.Equal(t, "95c5212655692015ffc2e341029851d4b46e196de94a0a711a016b76b9ff558a", hex.EncodeToString(sum[:]))
	require.Equal(t, "8EaBJnN5MOFS", g.AString(12, 12))
}

// BenchmarkAppendAString draws a-strings of 26 to 50 characters, as the
// load's s_data and c_data (most of what it generates).
func BenchmarkAppendAString(b *testing.B) {
	g := NewRand(1, Constants{})
	buf := make([]byte, 0, 64)
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		buf = g.AppendAString(buf[:0], 26, 50)
		n += len(buf)
	}
	b.ReportMetric(float64(n)/float64(b.N), "chars/op")
}

func TestRandData(t *testing.T) {
	g := NewRand(5, Constants{})
	var orig int
	const n = 100000
	var buf []byte
	for range n {
		var o bool
		buf, o = g.AppendData(buf[:0])
		require.True(t, len(buf) >= 26 && len(buf) <= 50)
		require.Equal(t, o, strings.Contains(string(buf), Original), "%q", buf)
		if o {
			orig++
		}
	}
	// 10% of the rows [4.3.3.1]; the seed is fixed, so this is exact.
	require.InDelta(t, 0.10, float64(orig)/n, 0.005)
}

func TestConstantsC(t *testing.T) {
	c := Constants{CLast: 1, CID: 2, CItem: 3}
	require.Equal(t, 1, c.C(ALast))
	require.Equal(t, 2, c.C(ACID))
	require.Equal(t, 3, c.C(AItem))
	require.Panics(t, func() { c.C(0) })
	require.NoError(t, c.Validate())
	err := Constants{CLast: -1}.Validate()
	require.True(t, errors.Is(err, ErrInvalidConfig))
}
