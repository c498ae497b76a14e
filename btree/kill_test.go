package btree

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
)

func killKey(i int) []byte { return fmt.Appendf(nil, "k%04d", i) }

// keysOf iterates it from First (or Last, backward) and returns its keys.
func keysOf(t *testing.T, it *Iter, backward bool) []string {
	t.Helper()
	var ks []string
	if backward {
		for ok := it.Last(); ok; ok = it.Prev() {
			ks = append(ks, string(it.Key()))
		}
	} else {
		for ok := it.First(); ok; ok = it.Next() {
			ks = append(ks, string(it.Key()))
		}
	}
	require.NoError(t, it.Close())
	return ks
}

// TestIterKill: Kill marks the current entry (one logged two-byte write,
// replayed under the tests' redo check); iterators step over killed
// entries forward and backward, across whole killed leaves and within
// bounds, unless IterOptions.Killed asks for them; the iterator that
// killed keeps its place (no descent); a mark set on a leaf changed since
// the entry was read finds the entry by key; marks survive a cold reopen;
// Delete removes a killed entry as any other.
func TestIterKill(t *testing.T) {
	e := newEnv(t, 4096, 64, cache.PolicyLRU)
	const n = 300
	for i := range n {
		require.NoError(t, e.tree.Insert(nil, killKey(i), []byte("value")))
	}
	// Kill every third key, and every key of [100, 200): several whole
	// leaves.
	dead := func(i int) bool { return i%3 == 0 || (i >= 100 && i < 200) }
	var want []string
	var tc Meter
	it := e.tree.NewIter(&tc, nil)
	kills := 0
	for ok := it.First(); ok; ok = it.Next() {
		var i int
		_, err := fmt.Sscanf(string(it.Key()), "k%04d", &i)
		require.NoError(t, err)
		if !dead(i) {
			want = append(want, string(it.Key()))
			continue
		}
		before := tc.NodeVisitsTotal()
		set, err := it.Kill()
		require.NoError(t, err)
		require.True(t, set)
		require.False(t, it.Changed(), "the iterator's own mark is no change")
		require.Equal(t, before, tc.NodeVisitsTotal(), "a kill descends nowhere")
		kills++
	}
	require.NoError(t, it.Close())
	require.Equal(t, 100+67, kills)
	require.Len(t, want, n-kills)

	require.Equal(t, want, keysOf(t, e.tree.NewIter(nil, nil), false))
	rev := slices.Clone(want)
	slices.Reverse(rev)
	require.Equal(t, rev, keysOf(t, e.tree.NewIter(nil, nil), true))

	// Bounds: [k0090, k0210) forward and backward.
	var inRange []string
	for _, k := range want {
		if k >= "k0090" && k < "k0210" {
			inRange = append(inRange, k)
		}
	}
	o := &IterOptions{Lower: Incl(killKey(90)), Upper: Excl(killKey(210))}
	require.Equal(t, inRange, keysOf(t, e.tree.NewIter(nil, o), false))
	slices.Reverse(inRange)
	require.Equal(t, inRange, keysOf(t, e.tree.NewIter(nil, o), true))
	// A range of killed entries only is empty, both ways.
	o = &IterOptions{Lower: Incl(killKey(100)), Upper: Excl(killKey(200))}
	require.Empty(t, keysOf(t, e.tree.NewIter(nil, o), false))
	require.Empty(t, keysOf(t, e.tree.NewIter(nil, o), true))

	// SeekGE onto a killed key lands on the next live one, SeekLT on the
	// previous.
	it = e.tree.NewIter(nil, nil)
	require.True(t, it.SeekGE(killKey(150)))
	require.Equal(t, "k0200", string(it.Key()))
	require.True(t, it.SeekLT(killKey(200)))
	require.Equal(t, "k0098", string(it.Key()))
	require.NoError(t, it.Close())

	// IterOptions.Killed: every entry, marked ones flagged, values whole.
	all := e.tree.NewIter(nil, &IterOptions{Killed: true})
	k := 0
	for ok := all.First(); ok; ok = all.Next() {
		require.Equal(t, string(killKey(k)), string(all.Key()))
		require.Equal(t, "value", string(all.Value()))
		require.Equal(t, dead(k), all.Killed(), "entry %d", k)
		if k == 0 {
			set, err := all.Kill()
			require.NoError(t, err)
			require.False(t, set, "already killed")
		}
		k++
	}
	require.NoError(t, all.Close())
	require.Equal(t, n, k)

	// A leaf changed between the read and the kill: the entry is found
	// by key.
	it = e.tree.NewIter(nil, nil)
	require.True(t, it.SeekGE(killKey(250)))
	require.NoError(t, e.tree.Insert(nil, []byte("k0250a"), []byte("value")))
	require.True(t, it.Changed())
	set, err := it.Kill()
	require.NoError(t, err)
	require.True(t, set)
	require.True(t, it.Next())
	require.Equal(t, "k0250a", string(it.Key()))
	require.NoError(t, it.Close())
	want = slices.DeleteFunc(want, func(k string) bool { return k == "k0250" })
	want = append(want, "k0250a")
	slices.Sort(want)

	// Point operations do not look at the mark; marks are on the pages.
	_, found, err := e.tree.Get(nil, killKey(150), nil)
	require.NoError(t, err)
	require.True(t, found)
	_, err = e.tree.Check(nil)
	require.NoError(t, err)
	e.reopen(t, 64)
	require.Equal(t, want, keysOf(t, e.tree.NewIter(nil, nil), false))

	// Delete removes killed entries as any other (merging leaves: their
	// marks move with their cells, the redo check replays it).
	for i := 100; i < 200; i++ {
		require.NoError(t, e.tree.Delete(nil, killKey(i)))
	}
	require.Equal(t, want, keysOf(t, e.tree.NewIter(nil, nil), false))
	require.Len(t, keysOf(t, e.tree.NewIter(nil, &IterOptions{Killed: true}), false), n+1-100)
	_, err = e.tree.Check(nil)
	require.NoError(t, err)
}

// TestKillSplit: a split rebuilds both halves from keys and values, so
// the marks of the split leaf are dropped (a lost hint: the entries come
// back to readers, the engine kills them again at their next heap
// visit).
func TestKillSplit(t *testing.T) {
	e := newEnv(t, 4096, 64, cache.PolicyLRU)
	for i := range 20 {
		require.NoError(t, e.tree.Insert(nil, killKey(i*10), []byte("value")))
	}
	it := e.tree.NewIter(nil, nil)
	for ok := it.First(); ok; ok = it.Next() {
		_, err := it.Kill()
		require.NoError(t, err)
	}
	require.NoError(t, it.Close())
	require.Empty(t, keysOf(t, e.tree.NewIter(nil, nil), false))
	var tc Meter
	i := 1
	for tc.Splits == 0 {
		require.NoError(t, e.tree.Insert(&tc, fmt.Appendf(nil, "k%04d-%0200d", (i%20)*10, i), []byte("value")))
		i++
	}
	require.Len(t, keysOf(t, e.tree.NewIter(nil, nil), false), 20+i-1)
}
