package redo_test

import (
	"bytes"
	"testing"

	"github.com/enginelab/enginelab/cache/redo"
	"github.com/stretchr/testify/require"
)

// TestEditRoundTrip: an edit between random related values (bytes
// changed, inserted and deleted in a few places) rebuilds the target, and
// is small when little changed.
func TestEditRoundTrip(t *testing.T) {
	rng := seed(t)
	for trial := range 2000 {
		from := make([]byte, rng.IntN(700))
		for i := range from {
			from[i] = byte(rng.IntN(4)) // few symbols: many false resyncs
		}
		if trial%2 == 0 {
			for i := range from {
				from[i] = byte(rng.Uint32())
			}
		}
		to := bytes.Clone(from)
		edits := rng.IntN(5)
		for range edits {
			at := 0
			if len(to) > 0 {
				at = rng.IntN(len(to))
			}
			switch rng.IntN(3) {
			case 0:
				if len(to) > 0 {
					to[at]++
				}
			case 1:
				ins := make([]byte, 1+rng.IntN(3))
				to = append(to[:at], append(ins, to[at:]...)...)
			case 2:
				n := min(len(to)-at, 1+rng.IntN(3))
				to = append(to[:at], to[at+n:]...)
			}
		}
		e := redo.AppendEdit(nil, from, to)
		got, err := redo.ApplyEdit(nil, from, e, len(to))
		require.NoError(t, err, "trial %d", trial)
		require.True(t, bytes.Equal(to, got), "trial %d: %x want %x", trial, got, to)
		if trial%2 == 0 && len(from) > 100 {
			require.LessOrEqual(t, len(e), 12*edits+8, "trial %d: %d edits", trial, edits)
		}
		if len(to) > 0 {
			_, err = redo.ApplyEdit(nil, from, e, len(to)-1)
			require.ErrorIs(t, err, redo.ErrBadEdit, "a limit below the result")
		}
	}
	// An edit that reaches past its source is an error.
	_, err := redo.ApplyEdit(nil, []byte("abc"), []byte{2, 5, 0}, 100)
	require.ErrorIs(t, err, redo.ErrBadEdit)
	_, err = redo.ApplyEdit(nil, []byte("abc"), []byte{1, 1, 9, 'x'}, 100)
	require.ErrorIs(t, err, redo.ErrBadEdit)
}

// FuzzApplyEdit: garbage edits give an error or a value within the
// limit, never a panic.
func FuzzApplyEdit(f *testing.F) {
	f.Add([]byte("hello, world"), []byte{3, 2, 1, 'x'})
	f.Fuzz(func(t *testing.T, from, edit []byte) {
		got, err := redo.ApplyEdit(nil, from, edit, 1000)
		if err == nil {
			require.LessOrEqual(t, len(got), 1000)
		}
	})
}

// TestPatch: a patch between values of the same length rebuilds the new
// one in place, holds only the changed ranges, and one that reaches past
// the value is an error.
func TestPatch(t *testing.T) {
	old := []byte("quantity=0042;ytd=00000100;cnt=07;dist=abcdefghijklmnopqrstuvwx")
	nw := []byte("quantity=0037;ytd=00000105;cnt=08;dist=abcdefghijklmnopqrstuvwx")
	p := redo.AppendPatch(nil, old, nw)
	require.Equal(t, []byte{11, 2, '3', '7', 12, 1, '5', 6, 1, '8'}, p, "three ranges: gap, length, new bytes")
	v := bytes.Clone(old)
	require.NoError(t, redo.ApplyPatch(v, p))
	require.Equal(t, nw, v)
	require.ErrorIs(t, redo.ApplyPatch(v[:30], p), redo.ErrBadEdit, "a value too short for the last range")
	require.ErrorIs(t, redo.ApplyPatch(v, p[:len(p)-1]), redo.ErrBadEdit, "a cut patch")
	require.Empty(t, redo.AppendPatch(nil, old, old), "no change, no range")
}
