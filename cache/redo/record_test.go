package redo_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/stretchr/testify/require"
)

// TestRecordLayout pins the record format doc.go draws: a write of four
// bytes at offset 100 of page 3:17, a memset on the same page, and a note.
func TestRecordLayout(t *testing.T) {
	id := page.ID{Space: 3, Page: 17}
	var b redo.Builder
	b.Op(id, redo.KindWrite, []byte{100, 1, 2, 3, 4})
	b.Op(id, redo.KindMemset, []byte{200, 1, 5, 9})
	b.Note([]byte("hi"))
	require.Equal(t, []byte{
		3, 3, 17, 5, 100, 1, 2, 3, 4, // write: kind, space, page, len, offset, bytes
		4 | 0x80, 4, 200, 1, 5, 9, // memset on the same page: kind|same, len, offset 200, length 5, byte 9
		1, 2, 'h', 'i', // note: kind, len, bytes
	}, b.Bytes())

	pages, note, err := redo.Decode(b.Bytes(), nil)
	require.NoError(t, err)
	require.Equal(t, "hi", string(note))
	require.Len(t, pages, 1)
	require.Equal(t, id, pages[0].ID)
	require.False(t, pages[0].Fresh)
	got := make([]byte, testPageSize)
	require.NoError(t, pages[0].Apply(got))
	want := make([]byte, testPageSize)
	copy(want[100:], []byte{1, 2, 3, 4})
	copy(want[200:], bytes.Repeat([]byte{9}, 5))
	require.Equal(t, want, got)
}

// TestRecordRoundTrip builds records of random operations (init, write,
// memset, memmove) interleaved over several pages, doing each to a model
// page as it is logged; decoding and applying each page's operations to
// its before-image rebuilds the model byte for byte.
func TestRecordRoundTrip(t *testing.T) {
	rng := seed(t)
	for trial := range 50 {
		before := map[page.ID][]byte{}
		after := map[page.ID][]byte{}
		var ids []page.ID
		for i := range 1 + rng.IntN(5) {
			id := page.ID{Space: uint32(rng.IntN(3)), Page: uint32(i)}
			b := make([]byte, testPageSize)
			for j := range b {
				b[j] = byte(rng.Uint32())
			}
			before[id] = b
			after[id] = bytes.Clone(b)
			ids = append(ids, id)
		}
		var rb redo.Builder
		for range rng.IntN(40) {
			id := ids[rng.IntN(len(ids))]
			pg := after[id]
			switch rng.IntN(4) {
			case 0:
				k := page.Kind(rng.IntN(int(page.NumKinds)))
				page.Init(pg, id, k)
				rb.Op(id, redo.KindInit, []byte{byte(k)})
			case 1:
				off := rng.IntN(testPageSize)
				n := rng.IntN(min(200, testPageSize-off) + 1)
				data := make([]byte, n)
				for j := range data {
					data[j] = byte(rng.Uint32())
				}
				copy(pg[off:], data)
				rb.Op(id, redo.KindWrite, append(binary.AppendUvarint(nil, uint64(off)), data...))
			case 2:
				off := rng.IntN(testPageSize)
				n := rng.IntN(testPageSize - off + 1)
				c := byte(rng.Uint32())
				for j := off; j < off+n; j++ {
					pg[j] = c
				}
				p := binary.AppendUvarint(nil, uint64(off))
				p = binary.AppendUvarint(p, uint64(n))
				rb.Op(id, redo.KindMemset, append(p, c))
			case 3:
				dst, src := rng.IntN(testPageSize), rng.IntN(testPageSize)
				n := rng.IntN(testPageSize - max(dst, src) + 1)
				copy(pg[dst:dst+n], pg[src:src+n])
				p := binary.AppendUvarint(nil, uint64(dst))
				p = binary.AppendUvarint(p, uint64(src))
				rb.Op(id, redo.KindMemmove, binary.AppendUvarint(p, uint64(n)))
			}
		}
		rb.Note([]byte("note"))
		rec := rb.Bytes()
		pages, note, err := redo.Decode(rec, nil)
		require.NoError(t, err, "trial %d", trial)
		require.Equal(t, "note", string(note))
		for _, pr := range pages {
			buf := bytes.Clone(before[pr.ID])
			require.NoError(t, pr.Apply(buf))
			require.Equal(t, after[pr.ID], buf, "trial %d page %s", trial, pr.ID)
		}
		for _, id := range ids {
			logged := false
			for _, pr := range pages {
				logged = logged || pr.ID == id
			}
			if !logged {
				require.Equal(t, before[id], after[id], "page %s changed but not in the record", id)
			}
		}

		// A record cut anywhere inside an operation does not decode, and
		// says so; cut between operations it decodes to fewer of them.
		for n := range len(rec) {
			_, _, err := redo.Decode(rec[:n], nil)
			if err != nil {
				require.ErrorIs(t, err, redo.ErrCorruptLog, "cut at %d of %d", n, len(rec))
				require.ErrorIs(t, err, page.ErrCorrupt)
			}
		}
	}
	// An unknown kind and a same-page operation with no page before it
	// are errors.
	for _, bad := range [][]byte{{0}, {127, 1, 1, 0}, {3 | 0x80, 1, 0}, {1 | 0x80, 0}} {
		_, _, err := redo.Decode(bad, nil)
		require.ErrorIs(t, err, redo.ErrCorruptLog, "%x", bad)
	}
}

// TestApplyOutOfPage: an operation that reaches outside the page is an
// error, and the page is not written past its end.
func TestApplyOutOfPage(t *testing.T) {
	id := page.ID{Space: 1, Page: 1}
	for _, op := range []struct {
		k redo.Kind
		p []byte
	}{
		{redo.KindWrite, append(binary.AppendUvarint(nil, testPageSize-2), 1, 2, 3)},
		{redo.KindWrite, binary.AppendUvarint(nil, testPageSize+1)},
		{redo.KindMemset, append(binary.AppendUvarint(binary.AppendUvarint(nil, 10), testPageSize), 1)},
		{redo.KindMemmove, binary.AppendUvarint(binary.AppendUvarint(binary.AppendUvarint(nil, 0), 10), testPageSize)},
		{redo.KindInit, []byte{byte(page.NumKinds)}},
		{redo.KindInit, nil},
	} {
		var b redo.Builder
		b.Op(id, op.k, op.p)
		pages, _, err := redo.Decode(b.Bytes(), nil)
		require.NoError(t, err)
		err = pages[0].Apply(make([]byte, testPageSize))
		require.ErrorIs(t, err, redo.ErrCorruptLog, "%s %x", op.k, op.p)
	}
}

// FuzzDecode feeds the decoder and the appliers garbage: an error or a
// clean apply, never a panic that escapes, never a write outside the page.
func FuzzDecode(f *testing.F) {
	var b redo.Builder
	b.Op(page.ID{Space: 1, Page: 2}, redo.KindWrite, []byte{40, 1, 2, 3})
	b.Op(page.ID{Space: 1, Page: 2}, redo.KindMemmove, []byte{50, 40, 3})
	b.Op(page.ID{Space: 1, Page: 3}, redo.KindInit, []byte{3})
	b.Note([]byte("n"))
	f.Add(b.Bytes())
	f.Add([]byte{})
	f.Add([]byte{4, 0, 0, 3, 0, 255, 1})
	f.Fuzz(func(t *testing.T, body []byte) {
		pages, _, err := redo.Decode(body, nil)
		if err != nil {
			require.ErrorIs(t, err, redo.ErrCorruptLog)
			return
		}
		buf := make([]byte, testPageSize+16)
		for i := range pages {
			if err := pages[i].Apply(buf[:testPageSize]); err != nil {
				require.ErrorIs(t, err, redo.ErrCorruptLog)
			}
			require.Equal(t, make([]byte, 16), buf[testPageSize:], "written past the page")
		}
	})
}
