package heap

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRowPtrEncoding(t *testing.T) {
	p := RowPtr{Page: 0x01020304, Slot: 0x0506}
	enc := p.Encode()
	require.Equal(t, [RowPtrSize]byte{1, 2, 3, 4, 5, 6}, enc)
	require.Equal(t, []byte{9, 1, 2, 3, 4, 5, 6}, p.Append([]byte{9}))
	got, err := DecodeRowPtr(enc[:])
	require.NoError(t, err)
	require.Equal(t, p, got)
	require.Equal(t, "(16909060,1286)", p.String())

	for _, n := range []int{0, 5, 7} {
		_, err := DecodeRowPtr(make([]byte, n))
		require.ErrorIs(t, err, ErrBadRowPtr)
	}

	// Encoded pointers sort like the pointers.
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	for range 10000 {
		a := RowPtr{Page: rng.Uint32N(4), Slot: uint16(rng.UintN(4))}
		b := RowPtr{Page: rng.Uint32N(4), Slot: uint16(rng.UintN(4))}
		if rng.IntN(2) == 0 {
			a.Page, b.Page = rng.Uint32(), rng.Uint32()
		}
		ea, eb := a.Encode(), b.Encode()
		require.Equal(t, a.Compare(b), bytes.Compare(ea[:], eb[:]), "%s vs %s", a, b)
		require.Equal(t, -a.Compare(b), b.Compare(a))
	}
}
