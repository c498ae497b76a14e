package cache_test

import (
	"testing"

	"github.com/enginelab/enginelab/cache"
	"github.com/stretchr/testify/require"
)

func TestValidPageSize(t *testing.T) {
	for size, want := range map[int]bool{
		0: false, -4096: false, 2048: false, 4095: false, 4096: true, 6144: false,
		8192: true, 16384: true, 32768: true, 65536: true, 65537: false, 131072: false,
	} {
		require.Equal(t, want, cache.ValidPageSize(size), "size %d", size)
	}
	require.True(t, cache.ValidPageSize(cache.MinPageSize))
	require.True(t, cache.ValidPageSize(cache.MaxPageSize))
	require.True(t, cache.ValidPageSize(cache.DefaultPageSize))
}

func TestKindAndPageIDString(t *testing.T) {
	want := []string{"free", "meta", "btree-inner", "btree-leaf", "heap", "fsm"}
	require.Len(t, want, int(cache.NumKinds))
	for k := cache.Kind(0); k < cache.NumKinds; k++ {
		require.Equal(t, want[k], k.String())
	}
	require.Equal(t, "kind(200)", cache.Kind(200).String())
	require.Equal(t, "7:1234", cache.PageID{Space: 7, Page: 1234}.String())
	require.Equal(t, "0:0", cache.PageID{}.String())
}

func TestPageHeaderRoundTrip(t *testing.T) {
	rng := seed(t)
	for _, size := range []int{cache.MinPageSize, 8 << 10, cache.DefaultPageSize, cache.MaxPageSize} {
		id := cache.PageID{Space: 0xdeadbeef, Page: 0x01020304}
		buf := make([]byte, size)
		for i := range buf { // InitPage must clear whatever was there
			buf[i] = 0xa5
		}
		cache.InitPage(buf, id, cache.KindBTreeLeaf)
		require.Equal(t, cache.KindBTreeLeaf, cache.PageKind(buf))
		require.Equal(t, id, cache.PageIDOf(buf))
		require.Zero(t, cache.PageLSN(buf))
		require.Equal(t, make([]byte, size-cache.HeaderSize), buf[cache.HeaderSize:], "body not zeroed")

		const lsn = 0x0102030405060708
		cache.SetPageLSN(buf, lsn)
		cache.SetPageKind(buf, cache.KindHeap)
		for i := cache.HeaderSize; i < size; i++ {
			buf[i] = byte(rng.Uint32())
		}
		cache.SealPage(buf)
		require.NoError(t, cache.VerifyPage(id, buf, size), "size %d", size)
		require.Equal(t, cache.KindHeap, cache.PageKind(buf))
		require.Equal(t, id, cache.PageIDOf(buf))
		require.Equal(t, uint64(lsn), cache.PageLSN(buf))

		// Sealing again is idempotent.
		cache.SealPage(buf)
		require.NoError(t, cache.VerifyPage(id, buf, size))
	}
}

// TestVerifyPageDetectsAnyByteFlip flips single bytes (every header byte,
// the last byte and a seeded sample of the rest) and expects each to be
// caught as corruption naming the page. CRC-32C catches every error burst
// of up to 32 bits, so a single changed byte can never go unnoticed.
func TestVerifyPageDetectsAnyByteFlip(t *testing.T) {
	rng := seed(t)
	id := cache.PageID{Space: 3, Page: 77}
	buf := make([]byte, testPageSize)
	cache.InitPage(buf, id, cache.KindBTreeInner)
	cache.SetPageLSN(buf, 99)
	for i := cache.HeaderSize; i < len(buf); i++ {
		buf[i] = byte(rng.Uint32())
	}
	cache.SealPage(buf)
	require.NoError(t, cache.VerifyPage(id, buf, testPageSize))

	var offsets []int
	for i := 0; i < cache.HeaderSize; i++ {
		offsets = append(offsets, i)
	}
	offsets = append(offsets, len(buf)-1, cache.HeaderSize)
	for range 200 {
		offsets = append(offsets, rng.IntN(len(buf)))
	}
	for _, off := range offsets {
		mask := byte(rng.IntN(255) + 1)
		buf[off] ^= mask
		err := cache.VerifyPage(id, buf, testPageSize)
		require.ErrorIs(t, err, cache.ErrCorruptPage, "flip %#02x at offset %d went unnoticed", mask, off)
		require.Contains(t, err.Error(), id.String(), "offset %d", off)
		buf[off] ^= mask
	}
	require.NoError(t, cache.VerifyPage(id, buf, testPageSize))
}

func TestVerifyPageWrongLengthOrID(t *testing.T) {
	id := cache.PageID{Space: 5, Page: 9}
	buf := make([]byte, testPageSize)
	cache.InitPage(buf, id, cache.KindHeap)
	cache.SealPage(buf)

	for _, n := range []int{0, 1, cache.HeaderSize, testPageSize - 1} {
		err := cache.VerifyPage(id, buf[:n], testPageSize)
		require.ErrorIs(t, err, cache.ErrCorruptPage, "length %d", n)
		require.Contains(t, err.Error(), "5:9")
	}
	long := append(append([]byte(nil), buf...), 0)
	err := cache.VerifyPage(id, long, testPageSize)
	require.ErrorIs(t, err, cache.ErrCorruptPage)
	require.Contains(t, err.Error(), "5:9")
	// A perfectly good image of the wrong size for this database.
	err = cache.VerifyPage(id, buf, 2*testPageSize)
	require.ErrorIs(t, err, cache.ErrCorruptPage)

	// A well-sealed page that names another page: a misdirected write.
	for _, other := range []cache.PageID{{Space: 5, Page: 10}, {Space: 6, Page: 9}, {}} {
		cache.InitPage(buf, other, cache.KindHeap)
		cache.SealPage(buf)
		require.NoError(t, cache.VerifyPage(other, buf, testPageSize))
		err := cache.VerifyPage(id, buf, testPageSize)
		require.ErrorIs(t, err, cache.ErrCorruptPage, "page %s accepted as %s", other, id)
		require.Contains(t, err.Error(), id.String())
		require.Contains(t, err.Error(), other.String())
	}
}
