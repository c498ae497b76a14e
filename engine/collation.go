package engine

import (
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// Collations: how a sort orders strings, as MariaDB's collations of the
// same names do. A sort key names one (SortKey.Collation); the engine's
// indexes order strings by their bytes, which is the binary collation.
//
// Each collation has the two functions a sort needs, as MariaDB's
// MY_COLLATION_HANDLER does (strings/ctype-*.c):
//
//   - strnxfrm (appendWeights): the value's weights, padded to a fixed
//     length, compared with memcmp. This is the fixed-length sort key of
//     make_sortkey, and the only format before MDEV-21580.
//   - strnncollsp (compare): the collation's comparison of two values as
//     they are, which the packed sort keys of MDEV-21580 call.
//
// The collations, their weights and where the weights come from:
//
//	name                bytes/char  weight  pad    source of the weights
//	binary              1           1 byte  none   the bytes (my_charset_bin)
//	latin1_swedish_ci   1           1 byte  space  sort_order_latin1 (ctype-latin1.c)
//	utf8mb4_general_ci  1 to 4      2 bytes space  my_unicase_default's sort weights
//	                                               (ctype-utf8.c); above U+FFFF 0xFFFD
//	utf8mb4_bin         1 to 4      3 bytes space  the code point (my_strnxfrm_unicode_full_bin)
//	utf8mb4_unicode_ci  1 to 4      2 bytes space  UCA 4.0.0 primary weights, 0 to 8 a
//	                                (each)         character (ctype-uca.c); above U+FFFF 0xFFFD
//
// The latin1, general_ci and unicode_ci weights are generated from MySQL's
// tables (engine/internal/collgen, from vitess's implementation of them),
// which MariaDB shares for these collations: every BMP code point is
// covered. What is not modeled: UCA contractions (utf8mb4_unicode_ci has
// none; its language tailorings do, and are not offered), and levels
// beyond the primary one (unicode_ci compares on one level).
//
// Invalid UTF-8 in a utf8mb4 collation: strnxfrm stops at the first bad
// byte and pads (as MariaDB's my_strnxfrm_unicode does), and strnncollsp
// compares the rest bytewise (my_bincmp), so the two formats can order
// such values differently, as in MariaDB.

// Collation errors.
var (
	// ErrUnknownCollation means a sort key names a collation the engine
	// does not have.
	ErrUnknownCollation = errors.New("engine: unknown collation")
)

// collKind selects a collation's functions.
type collKind uint8

const (
	collBinary collKind = iota
	collLatin1Swedish
	collUTF8MB4General
	collUTF8MB4Bin
	collUTF8MB4Unicode
	numCollations
)

// NumCollations is how many collations there are: the length of
// SortCounts' arrays by collation, indexed as Collations lists them.
const NumCollations = int(numCollations)

// Collation is one of the collations above. Its zero value is binary.
type Collation struct {
	kind collKind
}

// collationInfo is what MariaDB's CHARSET_INFO says of a collation that
// the sort needs.
type collationInfo struct {
	name string
	// mbmaxlen is the charset's longest character in bytes: a column of
	// L bytes (field_length) holds at most L/mbmaxlen characters of it
	// when full, MariaDB's char_length.
	mbmaxlen int
	// weightLen is the bytes of one weight in a fixed key.
	weightLen int
	// strnxfrm: MY_CS_STRNXFRM, the key length is strnxfrmlen of the
	// byte length. Without it (binary, latin1) a key has a byte a byte.
	strnxfrm bool
	// nonOneToOne: MY_CS_NON1TO1, a character may have several weights
	// or none, so a key cut at max_sort_length can cut a character's
	// weights apart (check_if_packing_possible).
	nonOneToOne bool
	// binary: my_charset_bin, whose keys carry the value's length as a
	// suffix, and which pads with zero bytes, not spaces.
	binary bool
	// space is the weight of a space, with which keys are padded.
	space uint32
}

var collationInfos = [numCollations]collationInfo{
	collBinary:         {name: "binary", mbmaxlen: 1, weightLen: 1, binary: true},
	collLatin1Swedish:  {name: "latin1_swedish_ci", mbmaxlen: 1, weightLen: 1, space: 0x20},
	collUTF8MB4General: {name: "utf8mb4_general_ci", mbmaxlen: 4, weightLen: 2, strnxfrm: true, space: 0x20},
	collUTF8MB4Bin:     {name: "utf8mb4_bin", mbmaxlen: 4, weightLen: 3, strnxfrm: true, space: 0x20},
	collUTF8MB4Unicode: {name: "utf8mb4_unicode_ci", mbmaxlen: 4, weightLen: 2, strnxfrm: true, nonOneToOne: true, space: 0x0209},
}

// Collations lists the collations' names.
func Collations() []string {
	names := make([]string, numCollations)
	for i := range collationInfos {
		names[i] = collationInfos[i].name
	}
	return names
}

// LookupCollation returns the collation called name ("" is binary). An
// unknown name is an error matching ErrUnknownCollation.
func LookupCollation(name string) (Collation, error) {
	if name == "" {
		return Collation{}, nil
	}
	for i := range collationInfos {
		if collationInfos[i].name == name {
			return Collation{kind: collKind(i)}, nil
		}
	}
	return Collation{}, fmt.Errorf("%w: %q: want one of %s", ErrUnknownCollation, strings.Clone(name), strings.Join(Collations(), ", "))
}

// Name returns the collation's name.
func (c Collation) Name() string { return c.info().name }

func (c Collation) String() string { return c.Name() }

func (c Collation) info() *collationInfo { return &collationInfos[c.kind] }

// keyLen is the fixed sort key's length for a value of at most n bytes:
// MariaDB's strnxfrmlen, a weight for every character the value can
// have (n itself without MY_CS_STRNXFRM). MariaDB counts a utf8mb4
// column's characters (VARCHAR(N) holds N of them, each up to 4 bytes),
// so its keys have room for N weights. The engine's lengths are bytes,
// and a column of n bytes can hold n one-byte characters, so its keys
// have room for n weights: general_ci two bytes each, utf8mb4_bin three,
// unicode_ci two (one weight a character; a character with more, such as
// ¼'s three, can cut the key short, as in MariaDB, which counts such
// strings as sorted on a truncated length). A VARCHAR(N) of MariaDB's
// utf8mb4 has the key of a column of N bytes here.
func (c Collation) keyLen(n int) int {
	in := c.info()
	if !in.strnxfrm {
		return n
	}
	return n * in.weightLen
}

// appendWeights appends s's weights to dst, padded with the weight of a
// space (zero bytes for binary) to exactly n bytes: strnxfrm with
// MY_STRXFRM_PAD_WITH_SPACE and MY_STRXFRM_PAD_TO_MAXLEN. It reports
// whether weights were cut off (the value did not fit).
func (c Collation) appendWeights(dst, s []byte, n int) ([]byte, bool) {
	end := len(dst) + n
	in := c.info()
	truncated := false
	put := func(w uint32) bool {
		if len(dst)+in.weightLen > end {
			truncated = true
			return false
		}
		switch in.weightLen {
		case 1:
			dst = append(dst, byte(w))
		case 2:
			dst = append(dst, byte(w>>8), byte(w))
		default:
			dst = append(dst, byte(w>>16), byte(w>>8), byte(w))
		}
		return true
	}
	switch c.kind {
	case collBinary:
		k := min(len(s), n)
		truncated = k < len(s)
		dst = append(dst, s[:k]...)
		for len(dst) < end {
			dst = append(dst, 0)
		}
		return dst, truncated
	case collLatin1Swedish:
		for _, b := range s {
			if !put(uint32(latin1SwedishWeights[b])) {
				break
			}
		}
	case collUTF8MB4Unicode:
		u := ucaTable()
	scan:
		for len(s) > 0 {
			r, size := utf8.DecodeRune(s)
			if r == utf8.RuneError && size <= 1 {
				break // my_strnxfrm_unicode stops at a bad byte
			}
			s = s[size:]
			for _, w := range u.weights(r) {
				if !put(uint32(w)) {
					break scan
				}
			}
		}
	default:
		for len(s) > 0 {
			r, size := utf8.DecodeRune(s)
			if r == utf8.RuneError && size <= 1 {
				break
			}
			s = s[size:]
			if !put(c.runeWeight(r)) {
				break
			}
		}
	}
	// Pad with the space's weight; a last partial weight gets its first
	// bytes.
	for len(dst) < end {
		for i := in.weightLen - 1; i >= 0 && len(dst) < end; i-- {
			dst = append(dst, byte(in.space>>(8*i)))
		}
	}
	return dst, truncated
}

// runeWeight is the one weight of r in utf8mb4_general_ci or utf8mb4_bin.
func (c Collation) runeWeight(r rune) uint32 {
	if c.kind == collUTF8MB4Bin {
		return uint32(r)
	}
	return generalWeight(r)
}

// generalWeight is r's utf8mb4_general_ci weight.
func generalWeight(r rune) uint32 {
	if r > 0xFFFF {
		return 0xFFFD // MY_CS_REPLACEMENT_CHARACTER: all of them equal
	}
	x := generalCIExceptions[:]
	// Binary search of the pairs by code point.
	i := sort.Search(len(x)/2, func(i int) bool { return rune(x[2*i]) >= r })
	if i < len(x)/2 && rune(x[2*i]) == r {
		return uint32(x[2*i+1])
	}
	return uint32(r)
}

// compare compares a and b as the collation's strnncollsp does: PAD
// SPACE collations compare as if the shorter were padded with spaces (so
// trailing spaces never matter); binary compares bytes, then lengths.
// It returns the comparison and the bytes it read of a and b together.
func (c Collation) compare(a, b []byte) (int, int) {
	switch c.kind {
	case collBinary:
		return memcmp(a, b)
	case collLatin1Swedish:
		n := min(len(a), len(b))
		for i := range n {
			wa, wb := latin1SwedishWeights[a[i]], latin1SwedishWeights[b[i]]
			if wa != wb {
				return cmpInt(int(wa), int(wb)), 2 * (i + 1)
			}
		}
		// The longer one's rest against spaces (my_strnncollsp_simple).
		rest, sign := a[n:], 1
		if len(b) > n {
			rest, sign = b[n:], -1
		}
		for i, x := range rest {
			if w := latin1SwedishWeights[x]; w != 0x20 {
				return sign * cmpInt(int(w), 0x20), 2*n + i + 1
			}
		}
		return 0, len(a) + len(b)
	case collUTF8MB4Unicode:
		return compareUCA(a, b)
	}
	return c.compareUnicode(a, b)
}

// compareUnicode is strnncollsp of utf8mb4_general_ci and utf8mb4_bin
// (my_strnncollsp_utf8mb4, my_strnncollsp_utf8mb4_bin): one weight a
// character, then the longer string's rest against spaces.
func (c Collation) compareUnicode(a, b []byte) (int, int) {
	ia, ib := 0, 0
	for ia < len(a) && ib < len(b) {
		ra, na := utf8.DecodeRune(a[ia:])
		rb, nb := utf8.DecodeRune(b[ib:])
		if (ra == utf8.RuneError && na <= 1) || (rb == utf8.RuneError && nb <= 1) {
			r, n := memcmp(a[ia:], b[ib:]) // my_bincmp
			return r, ia + ib + n
		}
		if wa, wb := c.runeWeight(ra), c.runeWeight(rb); wa != wb {
			return cmpInt(int(wa), int(wb)), ia + na + ib + nb
		}
		ia += na
		ib += nb
	}
	rest, sign, read := a[ia:], 1, ia+ib
	if ib < len(b) {
		rest, sign = b[ib:], -1
	}
	for i := 0; i < len(rest); {
		r, n := utf8.DecodeRune(rest[i:])
		i += n
		if r == utf8.RuneError && n <= 1 {
			return sign, read + i // a bad byte sorts after a space
		}
		if w := c.runeWeight(r); w != 0x20 {
			return sign * cmpInt(int(w), 0x20), read + i
		}
	}
	return 0, len(a) + len(b)
}

// compareUCA is utf8mb4_unicode_ci's strnncollsp: the two strings' weight
// sequences compared weight by weight (a character with no weight, such
// as a control character, is ignored; one with two, such as ß, counts as
// two), then the longer sequence's rest against the space's weight.
func compareUCA(a, b []byte) (int, int) {
	u := ucaTable()
	sa, sb := ucaScanner{s: a, u: u}, ucaScanner{s: b, u: u}
	for {
		wa, oka := sa.next()
		wb, okb := sb.next()
		switch {
		case oka && okb:
			if wa != wb {
				return cmpInt(int(wa), int(wb)), sa.i + sb.i
			}
			continue
		case !oka && !okb:
			return 0, len(a) + len(b)
		}
		rest, sign, w := &sa, 1, wa
		if okb {
			rest, sign, w = &sb, -1, wb
		}
		for {
			if w != 0x0209 {
				return sign * cmpInt(int(w), 0x0209), sa.i + sb.i
			}
			var ok bool
			if w, ok = rest.next(); !ok {
				return 0, len(a) + len(b)
			}
		}
	}
}

// ucaScanner yields a string's UCA weights one at a time (MariaDB's
// my_uca_scanner).
type ucaScanner struct {
	s   []byte
	i   int
	u   *ucaWeights
	buf []uint16
}

func (s *ucaScanner) next() (uint16, bool) {
	for len(s.buf) == 0 {
		if s.i >= len(s.s) {
			return 0, false
		}
		r, n := utf8.DecodeRune(s.s[s.i:])
		if r == utf8.RuneError && n <= 1 {
			// A bad byte: weigh it above every character, as the
			// scanner's 0xFFFF for an illegal sequence.
			s.i++
			return 0xFFFF, true
		}
		s.i += n
		s.buf = s.u.weights(r)
	}
	w := s.buf[0]
	s.buf = s.buf[1:]
	return w, true
}

//go:embed collation_uca400.bin
var ucaBin []byte

// ucaWeights is the UCA 4.0.0 table of every BMP code point: the
// weights of code point r are w[start[r]:start[r+1]].
type ucaWeights struct {
	start   []uint32
	w       []uint16
	replace []uint16 // 0xFFFD: every character above the BMP
}

var (
	ucaOnce sync.Once
	ucaTab  *ucaWeights
)

// ucaTable decodes the embedded table once. Its format (collgen): for
// each BMP code point a count byte, then that many big-endian weights;
// a count of 0xFF marks implicit weights, computed from the code point as
// UCA does for a character its table lacks (a base 0xFB40 for the CJK
// ideographs, 0xFB80 for CJK extension A, 0xFBC0 otherwise, plus the code
// point's top bits, then its low 15 bits with the top bit set).
func ucaTable() *ucaWeights {
	ucaOnce.Do(func() {
		u := &ucaWeights{start: make([]uint32, 0x10001), replace: []uint16{0xFFFD}}
		b := ucaBin
		for r := range 0x10000 {
			u.start[r] = uint32(len(u.w))
			n := int(b[0])
			b = b[1:]
			if n == 0xFF {
				base := uint16(0xFBC0)
				switch {
				case r >= 0x3400 && r <= 0x4DB5:
					base = 0xFB80
				case r >= 0x4E00 && r <= 0x9FA5:
					base = 0xFB40
				}
				u.w = append(u.w, base+uint16(r>>15), uint16(r&0x7FFF)|0x8000)
				continue
			}
			for i := range n {
				u.w = append(u.w, uint16(b[2*i])<<8|uint16(b[2*i+1]))
			}
			b = b[2*n:]
		}
		u.start[0x10000] = uint32(len(u.w))
		u.w = slices.Clip(u.w)
		ucaTab = u
	})
	return ucaTab
}

// weights returns r's weights (nil for an ignorable character).
func (u *ucaWeights) weights(r rune) []uint16 {
	if r < 0 || r > 0xFFFF {
		return u.replace
	}
	return u.w[u.start[r]:u.start[r+1]]
}

// memcmp compares a and b bytewise, the shorter first when one is a
// prefix of the other, and returns the bytes it read of both.
func memcmp(a, b []byte) (int, int) {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		x, y := binary.BigEndian.Uint64(a[i:]), binary.BigEndian.Uint64(b[i:])
		if x != y {
			j := i + bits.LeadingZeros64(x^y)/8
			return cmpInt(int(a[j]), int(b[j])), 2 * (j + 1)
		}
	}
	for ; i < n; i++ {
		if a[i] != b[i] {
			return cmpInt(int(a[i]), int(b[i])), 2 * (i + 1)
		}
	}
	return cmpInt(len(a), len(b)), 2 * n
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
