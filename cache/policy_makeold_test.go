package cache

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// makeOld on the midpoint list (buf_LRU_make_block_old): a young page
// goes to the old sublist's end, old, with its last page's stamp, and the
// midpoint moves back so the old sublist keeps its share; nothing leaves
// the list. 100 pages read in, the last 10 touched young: 37 old.
func TestMidpointMakeOld(t *testing.T) {
	r := &midpoint{oldPct: 37, rule: Promote51, freed51: 1}
	fs := make([]Page, 100)
	for i := range fs {
		r.insert(&fs[i], time.Time{})
	}
	r.removed.Store(10) // every page far enough from its last move
	for i := 90; i < 100; i++ {
		r.access(&fs[i], nil, false)
	}
	require.Equal(t, 37, r.old.n)
	f := r.young.head
	require.False(t, f.old.Load())
	last := r.old.tail
	r.makeOld(f)
	require.Same(t, f, r.old.tail)
	require.True(t, f.old.Load())
	require.Equal(t, last.lruPos, f.lruPos)
	require.Equal(t, 37, r.old.n)
	require.Equal(t, 100, r.old.n+r.young.n)
	require.Equal(t, uint64(10), r.removed.Load(), "no page left the pool")
	var order []*Page
	r.tail(2, func(p *Page) bool { order = append(order, p); return true })
	require.Equal(t, []*Page{f, last}, order, "the next victim")
	r.makeOld(f) // already last: nothing moves
	require.Same(t, f, r.old.tail)
	require.Equal(t, 37, r.old.n)
}
