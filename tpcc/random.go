package tpcc

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// The A values of NURand [2.1.6].
const (
	ALast = 255  // C_LAST, via the number 0..999 of LastName
	ACID  = 1023 // C_ID, 1..3000 (at full scale; the same A at any Scale)
	AItem = 8191 // OL_I_ID, 1..100,000 (at full scale; the same A at any Scale)
)

// Constants are the C of NURand, one per A [2.1.6]: each "a run-time
// constant randomly chosen within [0 .. A]", the same for every terminal.
// A load draws its own (NewLoadConstants); a run must be given constants
// whose CLast keeps the distance 2.1.6.1 asks from the load's
// (NewRunConstants, CheckRunConstants).
type Constants struct {
	CLast int // for A = 255 (C_LAST), in [0, 255]
	CID   int // for A = 1023 (C_ID), in [0, 1023]
	CItem int // for A = 8191 (OL_I_ID), in [0, 8191]
}

// C returns the constant for a, which must be ALast, ACID or AItem.
func (c Constants) C(a int) int {
	switch a {
	case ALast:
		return c.CLast
	case ACID:
		return c.CID
	case AItem:
		return c.CItem
	}
	panic(fmt.Sprintf("tpcc: NURand: no constant for A = %d (want %d, %d or %d)", a, ALast, ACID, AItem))
}

// Validate reports a constant outside [0, A].
func (c Constants) Validate() error {
	for _, k := range []struct {
		name string
		v, a int
	}{{"C_LAST", c.CLast, ALast}, {"C_ID", c.CID, ACID}, {"OL_I_ID", c.CItem, AItem}} {
		if k.v < 0 || k.v > k.a {
			return fmt.Errorf("tpcc: %w: NURand constant for %s is %d, not in [0, %d] (2.1.6)", ErrInvalidConfig, k.name, k.v, k.a)
		}
	}
	return nil
}

// NewLoadConstants draws the constants a load uses, from seed [2.1.6].
func NewLoadConstants(seed uint64) Constants {
	g := newStream(seed, tagLoadConstants)
	return Constants{CLast: g.Int(0, ALast), CID: g.Int(0, ACID), CItem: g.Int(0, AItem)}
}

// NewRunConstants draws the constants of a run on a database loaded with
// load's. C_ID's and OL_I_ID's are drawn freely (2.1.6.1 constrains only
// C_LAST's); C_LAST's is drawn uniformly from
// the values in [0, 255] whose distance from load.CLast is a valid C_delta
// (validCDelta). There always are some: a load constant up to 127 has
// load+65..load+119 ≤ 246, one from 128 on has load−119..load−65 ≥ 9.
func NewRunConstants(seed uint64, load Constants) Constants {
	g := newStream(seed, tagRunConstants)
	var cands []int
	for c := 0; c <= ALast; c++ {
		if validCDelta(absInt(c - load.CLast)) {
			cands = append(cands, c)
		}
	}
	return Constants{CLast: cands[g.Int(0, len(cands)-1)], CID: g.Int(0, ACID), CItem: g.Int(0, AItem)}
}

// validCDelta reports whether d = |C_run − C_load| for C_LAST is allowed:
// in [65 .. 119] and neither 96 nor 112 [2.1.6.1].
func validCDelta(d int) bool { return d >= 65 && d <= 119 && d != 96 && d != 112 }

// CheckRunConstants reports whether run may be used for a run on a
// database loaded with load: both within range, and C_delta of C_LAST
// valid [2.1.6.1]. The error wraps ErrInvalidConfig.
func CheckRunConstants(load, run Constants) error {
	if err := errors.Join(load.Validate(), run.Validate()); err != nil {
		return err
	}
	if d := absInt(run.CLast - load.CLast); !validCDelta(d) {
		return fmt.Errorf("tpcc: %w: C_delta = |%d − %d| = %d for C_LAST, want 65..119 and not 96 or 112 (2.1.6.1)",
			ErrInvalidConfig, run.CLast, load.CLast, d)
	}
	return nil
}

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Rand draws the specification's random inputs [2.1.6, 4.3.2]. It is
// deterministic: two Rands made from the same seed and constants give the
// same values for the same calls. A Rand is used by one goroutine.
//
// Rand wraps a math/rand/v2 PCG source and does its own range reduction
// (Lemire's unbiased multiply-and-reject) and string drawing, so its
// outputs depend only on the PCG generator's stream, not on how a Go
// release implements rand.Rand's methods.
type Rand struct {
	src *rand.PCG
	c   Constants
	sc  Scale // the ranges of CustomerID, ItemID and LastNameNumber
}

// NewRand returns a generator seeded by seed whose NURand uses c, drawing
// the inputs of a full-scale database (SetScale changes that).
func NewRand(seed uint64, c Constants) *Rand {
	g := newStream(seed, tagUser)
	g.c = c
	return g
}

// Constants returns the generator's NURand constants.
func (g *Rand) Constants() Constants { return g.c }

// SetScale makes CustomerID, ItemID and LastNameNumber draw within the
// population of a database loaded at s. The draws themselves are the same
// calls: at full scale, the values are those of a generator never set.
func (g *Rand) SetScale(s Scale) { g.sc = s }

// Stream tags: each part of a load draws from its own stream, derived from
// the seed, the table and the part's coordinates, so what it draws does not
// depend on which goroutine loads it, when, or what else is loaded.
const (
	tagUser uint64 = iota + 1
	tagLoadConstants
	tagRunConstants
	tagItem      // chunk
	tagWarehouse // w: WAREHOUSE and DISTRICT
	tagStock     // w, chunk
	tagCustomer  // w, d
	tagHistory   // w, d
	tagOrder     // w, d: O_C_ID, O_CARRIER_ID
	tagOrderLine // w, d
	tagOLCount   // w, d: O_OL_CNT, which ORDERS and ORDER_LINE share
)

// newStream returns a Rand on the stream seed and parts name.
func newStream(seed uint64, parts ...uint64) *Rand {
	h := splitmix(seed ^ 0x7470_6363_2d6c_6f61) // "tpcc-loa"
	for _, p := range parts {
		h = splitmix(h ^ p)
	}
	return &Rand{src: rand.NewPCG(h, splitmix(h^0x5851_f42d_4c95_7f2d))}
}

// splitmix is SplitMix64's step: a bijection that scatters nearby inputs.
func splitmix(x uint64) uint64 {
	x += 0x9e37_79b9_7f4a_7c15
	x ^= x >> 30
	x *= 0xbf58_476d_1ce4_e5b9
	x ^= x >> 27
	x *= 0x94d0_49bb_1331_11eb
	return x ^ x>>31
}

// uint64n returns a uniform value in [0, n), n > 0 (Lemire, "Fast random
// integer generation in an interval", 2019).
func (g *Rand) uint64n(n uint64) uint64 {
	hi, lo := bits.Mul64(g.src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(g.src.Uint64(), n)
		}
	}
	return hi
}

// Int returns a uniform integer in [x, y]: "random within [x .. y]"
// [4.3.2.5]. It panics if y < x.
func (g *Rand) Int(x, y int) int {
	if y < x {
		panic(fmt.Sprintf("tpcc: random within [%d .. %d]: empty range", x, y))
	}
	return x + int(g.uint64n(uint64(y-x)+1))
}

// Int64 is Int for int64 bounds.
func (g *Rand) Int64(x, y int64) int64 {
	if y < x {
		panic(fmt.Sprintf("tpcc: random within [%d .. %d]: empty range", x, y))
	}
	return x + int64(g.uint64n(uint64(y-x)+1))
}

// Percent reports true with probability p/100 (one draw of [1 .. 100]).
func (g *Rand) Percent(p int) bool { return g.Int(1, 100) <= p }

// Perm returns a uniform random permutation of [lo .. hi] (Fisher-Yates).
func (g *Rand) Perm(lo, hi int) []int {
	p := make([]int, hi-lo+1)
	for i := range p {
		p[i] = lo + i
	}
	for i := len(p) - 1; i > 0; i-- {
		j := g.Int(0, i)
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// nurand is NURand's formula with its two random draws given [2.1.6]:
//
//	NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y − x + 1)) + x
func nurand(x, y, c, ra, rxy int) int { return ((ra|rxy)+c)%(y-x+1) + x }

// NURand returns NURand(a, x, y) [2.1.6] with the generator's constant for
// a (ALast, ACID or AItem; any other a panics). random(0, A) is drawn
// first, then random(x, y).
func (g *Rand) NURand(a, x, y int) int {
	c := g.c.C(a)
	ra := g.Int(0, a)
	return nurand(x, y, c, ra, g.Int(x, y))
}

// CustomerID returns a C_ID for a transaction: NURand(1023, 1, 3000)
// [2.1.6, 2.4.1.2, 2.5.1.2, 2.6.1.2]; at another scale, NURand(1023, 1,
// Scale.Customers()).
func (g *Rand) CustomerID() int { return g.NURand(ACID, 1, g.sc.Customers()) }

// ItemID returns an OL_I_ID for a New-Order line: NURand(8191, 1, 100000)
// [2.1.6, 2.4.1.5]; at another scale, NURand(8191, 1, Scale.NumItems()).
func (g *Rand) ItemID() int { return g.NURand(AItem, 1, g.sc.NumItems()) }

// LastNameNumber returns NURand(255, 0, 999), the number LastName turns
// into a C_LAST [4.3.2.3, 2.5.1.2]. At a scale of fewer than 1,000
// customers a district holds only the names 0 .. Customers − 1, so the
// draw is NURand(255, 0, Customers − 1): a by-name lookup always finds
// its customer.
func (g *Rand) LastNameNumber() int { return g.NURand(ALast, 0, g.sc.LastNames()-1) }

// RandomLastName returns LastName(LastNameNumber()): the C_LAST a
// by-name Payment or Order-Status looks for.
func (g *Rand) RandomLastName() string { return LastName(g.LastNameNumber()) }

// The syllables of C_LAST, by digit [4.3.2.3].
var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// LastName returns the C_LAST of number n in [0 .. 999]: the syllables of
// its three decimal digits, hundreds first [4.3.2.3]; 371 is
// "PRICALLYOUGHT". It panics if n is out of range.
func LastName(n int) string { return string(AppendLastName(nil, n)) }

// AppendLastName appends LastName(n) to dst.
func AppendLastName(dst []byte, n int) []byte {
	if n < 0 || n > 999 {
		panic(fmt.Sprintf("tpcc: last name number %d not in [0 .. 999]", n))
	}
	dst = append(dst, syllables[n/100]...)
	dst = append(dst, syllables[n/10%10]...)
	return append(dst, syllables[n%10]...)
}

// alnum is the alphabet of a-strings [4.3.2.2]: digits, upper- and
// lower-case letters, as most kits draw them.
const alnum = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// appendChars appends n characters drawn uniformly from set, which has at
// most 1<<width characters: each 64-bit draw gives 64/width chunks of width
// bits, and a chunk that does not index set is rejected.
// It grows dst once and stores by index: the load draws most of its
// bytes here (stock's s_dist and s_data, customer's c_data).
func (g *Rand) appendChars(dst []byte, n int, set string, width uint) []byte {
	mask := uint64(1)<<width - 1
	m := uint64(len(set))
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	out := dst[start:]
	for j := 0; j < len(out); {
		x := g.src.Uint64()
		for k := 64 / width; k > 0 && j < len(out); k-- {
			if v := x & mask; v < m {
				out[j] = set[v]
				j++
			}
			x >>= width
		}
	}
	return dst
}

// AppendAString appends a random a-string [x .. y]: random alphanumeric
// characters, of a length uniform in [x .. y] [4.3.2.2].
func (g *Rand) AppendAString(dst []byte, x, y int) []byte {
	return g.appendChars(dst, g.Int(x, y), alnum, 6)
}

// AString returns a random a-string [x .. y] [4.3.2.2].
func (g *Rand) AString(x, y int) string { return string(g.AppendAString(nil, x, y)) }

// AppendNString appends a random n-string [x .. y]: random digits, of a
// length uniform in [x .. y] [4.3.2.2].
func (g *Rand) AppendNString(dst []byte, x, y int) []byte {
	return g.appendChars(dst, g.Int(x, y), alnum[:10], 4)
}

// NString returns a random n-string [x .. y] [4.3.2.2].
func (g *Rand) NString(x, y int) string { return string(g.AppendNString(nil, x, y)) }

// AppendZip appends a zip code: a random n-string of 4 digits, then
// "11111" [4.3.2.7].
func (g *Rand) AppendZip(dst []byte) []byte {
	return append(g.AppendNString(dst, 4, 4), "11111"...)
}

// Zip returns a zip code [4.3.2.7].
func (g *Rand) Zip() string { return string(g.AppendZip(nil)) }

// Original is the marker 10% of I_DATA and S_DATA hold [4.3.3.1], which
// New-Order's brand-generic test looks for [2.4.2.2].
const Original = "ORIGINAL"

// AppendData appends an I_DATA or S_DATA value: a random a-string
// [26 .. 50] which, for 10% of the rows, holds "ORIGINAL" in 8 consecutive
// characters at a random position [4.3.3.1]. It reports whether this one
// does. (The 10% is a draw per row, not an exact tenth.)
func (g *Rand) AppendData(dst []byte) ([]byte, bool) {
	start := len(dst)
	dst = g.AppendAString(dst, 26, 50)
	if !g.Percent(10) {
		return dst, false
	}
	at := g.Int(0, len(dst)-start-len(Original))
	copy(dst[start+at:], Original)
	return dst, true
}

// Source returns the generator's source, for a rand.Rand (rand.New) that
// draws from the same stream: a terminal's deck and think times.
func (g *Rand) Source() rand.Source { return g.src }
