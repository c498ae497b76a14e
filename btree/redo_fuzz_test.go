package btree

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/stretchr/testify/require"
)

// FuzzNodeRedo feeds each node operation's applier a garbage payload on a
// valid leaf and a valid inner node, and on a garbage page: an error or a
// clean apply, never a panic, never a write outside the page. The
// appliers are called directly, so redo.PageRedo.Apply's recover (a last
// resort) hides nothing.
func FuzzNodeRedo(f *testing.F) {
	f.Add(uint8(0), []byte{0, 3, 'a', 'b', 'c', 'v'}, []byte(nil))
	f.Add(uint8(5), []byte{1, 2, 3, 'k', 'e', 'y', 1, 'v'}, []byte(nil))
	f.Add(uint8(6), []byte{0, 0, 2, 1, 'a', 1, 'b', 1, 'c', 1, 'd'}, []byte{1, 2, 3})
	f.Add(uint8(7), []byte{1, 1, 0, 3, 0, 'a', 'b', 'c'}, []byte(nil))
	f.Fuzz(func(t *testing.T, which uint8, payload, garbage []byte) {
		appliers := []redo.ApplyFunc{applyLeafInsert, applyInnerInsert, applyRemove, applyReplace,
			applyInit, applySplitKeep, applyFill, applyAppendCells, applyTruncate, applyPatch}
		apply := appliers[int(which)%len(appliers)]
		const size = page.MinSize
		for _, base := range fuzzNodes(garbage) {
			buf := make([]byte, size+16)
			copy(buf, base)
			_ = apply(page.ID{Space: 1, Page: 1}, buf[:size], payload)
			require.Equal(t, make([]byte, 16), buf[size:], "written past the page")
		}
	})
}

// fuzzNodes returns page images to apply garbage to: a leaf and an inner
// node with a few entries, and a page of garbage bytes.
func fuzzNodes(garbage []byte) [][]byte {
	const size = page.MinSize
	leaf := node(make([]byte, size))
	leaf.init(0)
	for i, k := range []string{"apple", "banana", "cherry"} {
		leaf.insertLeaf(i, []byte(k), bytes.Repeat([]byte{byte(i)}, 10))
	}
	inner := node(make([]byte, size))
	inner.init(1)
	inner.setLeft(7)
	for i, k := range []string{"m", "t"} {
		inner.insertInner(i, []byte(k), uint32(8+i))
	}
	junk := make([]byte, size)
	for i := range junk {
		if len(garbage) > 0 {
			junk[i] = garbage[i%len(garbage)]
		}
	}
	return [][]byte{leaf, inner, junk}
}

// TestPatchRoundTrip: a patch of a value changed in random places (one
// byte, a few ranges, every other byte: more ranges than a patch holds)
// rebuilds the value, and a patch is smaller than the value unless nearly
// every byte changed.
func TestPatchRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := node(make([]byte, page.MinSize))
		n.init(0)
		old := make([]byte, 1+rng.IntN(600))
		for i := range old {
			old[i] = byte(rng.Uint32())
		}
		require.True(t, n.insertLeaf(0, []byte("k"), old))
		val := bytes.Clone(old)
		switch trial % 3 {
		case 0:
			val[rng.IntN(len(val))]++
		case 1:
			for range 1 + rng.IntN(10) {
				o := rng.IntN(len(val))
				for j := o; j < min(len(val), o+rng.IntN(8)); j++ {
					val[j] ^= 0x5a
				}
			}
		case 2:
			for j := 0; j < len(val); j += 2 {
				val[j]++
			}
		}
		p := appendPatch(nil, 0, old, val)
		redone := node(bytes.Clone(n))
		require.NoError(t, applyPatch(page.ID{}, redone, p), "trial %d", trial)
		require.Equal(t, val, redone.val(0), "trial %d", trial)
		if trial%3 == 0 {
			require.LessOrEqual(t, len(p), 8, "one changed byte")
		}
	}
}
