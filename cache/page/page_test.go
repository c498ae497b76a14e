package page_test

import (
	"testing"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/stretchr/testify/require"
)

func TestValidPageSize(t *testing.T) {
	for size, want := range map[int]bool{
		0: false, -4096: false, 2048: false, 4095: false, 4096: true, 6144: false,
		8192: true, 16384: true, 32768: true, 65536: true, 65537: false, 131072: false,
	} {
		require.Equal(t, want, page.ValidSize(size), "size %d", size)
	}
	require.True(t, page.ValidSize(page.MinSize))
	require.True(t, page.ValidSize(page.MaxSize))
	require.True(t, page.ValidSize(page.DefaultSize))
}

func TestKindAndPageIDString(t *testing.T) {
	want := []string{"free", "meta", "btree-inner", "btree-leaf", "heap", "fsm", "undo", "vm", "xact"}
	require.Len(t, want, int(page.NumKinds))
	for k := page.Kind(0); k < page.NumKinds; k++ {
		require.Equal(t, want[k], k.String())
	}
	require.Equal(t, "kind(200)", page.Kind(200).String())
	require.Equal(t, "7:1234", page.ID{Space: 7, Page: 1234}.String())
	require.Equal(t, "0:0", page.ID{}.String())
}

func TestPageHeaderRoundTrip(t *testing.T) {
	rng := seed(t)
	for _, size := range []int{page.MinSize, 8 << 10, page.DefaultSize, page.MaxSize} {
		id := page.ID{Space: 0xdeadbeef, Page: 0x01020304}
		buf := make([]byte, size)
		for i := range buf { // InitPage must clear whatever was there
			buf[i] = 0xa5
		}
		page.Init(buf, id, page.KindBTreeLeaf)
		require.Equal(t, page.KindBTreeLeaf, page.KindOf(buf))
		require.Equal(t, id, page.IDOf(buf))
		require.Zero(t, page.LSN(buf))
		require.Equal(t, make([]byte, size-page.HeaderSize), buf[page.HeaderSize:], "body not zeroed")

		const lsn = 0x0102030405060708
		page.SetLSN(buf, lsn)
		page.SetKind(buf, page.KindHeap)
		for i := page.HeaderSize; i < size; i++ {
			buf[i] = byte(rng.Uint32())
		}
		page.Seal(buf)
		require.NoError(t, page.Verify(id, buf, size), "size %d", size)
		require.Equal(t, page.KindHeap, page.KindOf(buf))
		require.Equal(t, id, page.IDOf(buf))
		require.Equal(t, uint64(lsn), page.LSN(buf))

		// Sealing again is idempotent.
		page.Seal(buf)
		require.NoError(t, page.Verify(id, buf, size))
	}
}

// TestVerifyPageDetectsAnyByteFlip flips single bytes (every header byte,
// the last byte and a seeded sample of the rest) and expects each to be
// caught as corruption naming the page. CRC-32C catches every error burst
// of up to 32 bits, so a single changed byte can never go unnoticed.
func TestVerifyPageDetectsAnyByteFlip(t *testing.T) {
	rng := seed(t)
	id := page.ID{Space: 3, Page: 77}
	buf := make([]byte, testPageSize)
	page.Init(buf, id, page.KindBTreeInner)
	page.SetLSN(buf, 99)
	for i := page.HeaderSize; i < len(buf); i++ {
		buf[i] = byte(rng.Uint32())
	}
	page.Seal(buf)
	require.NoError(t, page.Verify(id, buf, testPageSize))

	var offsets []int
	for i := 0; i < page.HeaderSize; i++ {
		offsets = append(offsets, i)
	}
	offsets = append(offsets, len(buf)-1, page.HeaderSize)
	for range 200 {
		offsets = append(offsets, rng.IntN(len(buf)))
	}
	for _, off := range offsets {
		mask := byte(rng.IntN(255) + 1)
		buf[off] ^= mask
		err := page.Verify(id, buf, testPageSize)
		require.ErrorIs(t, err, page.ErrCorruptPage, "flip %#02x at offset %d went unnoticed", mask, off)
		require.Contains(t, err.Error(), id.String(), "offset %d", off)
		buf[off] ^= mask
	}
	require.NoError(t, page.Verify(id, buf, testPageSize))
}

func TestVerifyPageWrongLengthOrID(t *testing.T) {
	id := page.ID{Space: 5, Page: 9}
	buf := make([]byte, testPageSize)
	page.Init(buf, id, page.KindHeap)
	page.Seal(buf)

	for _, n := range []int{0, 1, page.HeaderSize, testPageSize - 1} {
		err := page.Verify(id, buf[:n], testPageSize)
		require.ErrorIs(t, err, page.ErrCorruptPage, "length %d", n)
		require.Contains(t, err.Error(), "5:9")
	}
	long := append(append([]byte(nil), buf...), 0)
	err := page.Verify(id, long, testPageSize)
	require.ErrorIs(t, err, page.ErrCorruptPage)
	require.Contains(t, err.Error(), "5:9")
	// A perfectly good image of the wrong size for this database.
	err = page.Verify(id, buf, 2*testPageSize)
	require.ErrorIs(t, err, page.ErrCorruptPage)

	// A well-sealed page that names another page: a misdirected write.
	for _, other := range []page.ID{{Space: 5, Page: 10}, {Space: 6, Page: 9}, {}} {
		page.Init(buf, other, page.KindHeap)
		page.Seal(buf)
		require.NoError(t, page.Verify(other, buf, testPageSize))
		err := page.Verify(id, buf, testPageSize)
		require.ErrorIs(t, err, page.ErrCorruptPage, "page %s accepted as %s", other, id)
		require.Contains(t, err.Error(), id.String())
		require.Contains(t, err.Error(), other.String())
	}
}
