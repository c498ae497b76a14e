package redo_test

import (
	"bytes"
	"testing"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/stretchr/testify/require"
)

// TestRecordLayout pins the record format doc.go draws: one page changed
// at bytes 100..103, and a note.
func TestRecordLayout(t *testing.T) {
	before := make([]byte, testPageSize)
	after := bytes.Clone(before)
	copy(after[100:], []byte{1, 2, 3, 4})
	id := page.ID{Space: 3, Page: 17}
	rec := redo.Encode(nil, []redo.Change{{ID: id, Before: before, After: after}}, []byte("hi"))
	require.Equal(t, []byte{
		1,        // npages
		3, 17, 0, // space, page, flags
		1,                  // nranges
		100, 4, 1, 2, 3, 4, // gap, length, bytes
		2, 'h', 'i', // notelen, note
	}, rec)

	pages, note, err := redo.Decode(rec, nil)
	require.NoError(t, err)
	require.Equal(t, "hi", string(note))
	require.Len(t, pages, 1)
	require.Equal(t, id, pages[0].ID)
	require.False(t, pages[0].Fresh)
	got := bytes.Clone(before)
	require.NoError(t, pages[0].Apply(got))
	require.Equal(t, after, got)
}

// TestRecordRoundTrip encodes changes scattered over pages, a fresh one
// among them, decodes them and applies each onto its before-image (zeros
// for the fresh one): the after-images come back byte for byte.
func TestRecordRoundTrip(t *testing.T) {
	rng := seed(t)
	var changes []redo.Change
	for i := range 6 {
		before := make([]byte, testPageSize)
		for j := range before {
			before[j] = byte(rng.Uint32())
		}
		after := bytes.Clone(before)
		for range rng.IntN(20) {
			off := rng.IntN(len(after))
			for k := off; k < min(off+1+rng.IntN(100), len(after)); k++ {
				after[k] ^= byte(1 + rng.IntN(255))
			}
		}
		c := redo.Change{ID: page.ID{Space: 1, Page: uint32(i)}, Before: before, After: after}
		if i == 2 {
			c.Before = nil // fresh
		}
		changes = append(changes, c)
	}
	rec := redo.Encode(nil, changes, []byte("note"))
	pages, note, err := redo.Decode(rec, nil)
	require.NoError(t, err)
	require.Equal(t, "note", string(note))
	require.Len(t, pages, len(changes))
	for i, pr := range pages {
		c := changes[i]
		require.Equal(t, c.ID, pr.ID)
		require.Equal(t, c.Before == nil, pr.Fresh)
		buf := make([]byte, testPageSize)
		if !pr.Fresh {
			copy(buf, c.Before)
		}
		require.NoError(t, pr.Apply(buf))
		require.Equal(t, c.After, buf, "page %s", c.ID)
	}

	// A record cut anywhere does not decode, and says so.
	for n := range len(rec) {
		_, _, err := redo.Decode(rec[:n], nil)
		require.ErrorIs(t, err, redo.ErrCorruptLog, "cut at %d of %d", n, len(rec))
		require.ErrorIs(t, err, page.ErrCorrupt)
	}
	// So does one with bytes after the note.
	_, _, err = redo.Decode(append(bytes.Clone(rec), 0), nil)
	require.ErrorIs(t, err, redo.ErrCorruptLog)
}
