package btree

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// search's interpolation only chooses which slots to probe: on leaves of
// evenly spread, skewed, clustered and head-tying keys, and for probes
// inside, between and outside them (outside the node's prefix too), it
// returns what sort.Search over the keys returns.
func TestSearchMatchesBisection(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	u64 := func(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
	shapes := []struct {
		name  string
		shape func(i int) []byte
	}{
		{"even", func(i int) []byte { return u64(1000 + 2*uint64(i)) }},
		{"squares", func(i int) []byte { return u64(uint64(i) * uint64(i) * 977) }},
		{"clustered", func(i int) []byte { // a dense run, then a far tail
			if i < 300 {
				return u64(5000 + uint64(i))
			}
			return u64(1<<40 + uint64(i)<<20)
		}},
		{"random", func(int) []byte { return u64(r.Uint64() >> r.IntN(40)) }},
		{"tying heads", func(i int) []byte { // equal four bytes after the prefix
			return append([]byte("customer"), u64(uint64(i/40)<<32|uint64(i%40)*3)...)
		}},
		{"short and long", func(i int) []byte { return bytes.Repeat([]byte{byte(i/16 + 1)}, 1+i%16) }},
	}
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			n := node(make([]byte, 16<<10))
			n.init(0)
			var keys [][]byte
			for i := 0; ; i++ {
				k := sh.shape(i)
				j, eq := n.search(k)
				if eq {
					continue
				}
				if !n.insertLeaf(j, k, []byte("v")) {
					break
				}
				keys = slices.Insert(keys, j, k)
			}
			require.Greater(t, len(keys), 2*interpolateMin)
			for i := range keys {
				require.Equal(t, keys[i], n.key(i), "the node holds the keys in order")
			}
			probes := [][]byte{nil, {0}, {0xFF}, bytes.Repeat([]byte{0xFF}, 20), []byte("customer"), []byte("customez")}
			for _, k := range keys {
				probes = append(probes, k, append(slices.Clone(k), 0), k[:len(k)-1])
				pre := slices.Clone(k)
				pre[len(pre)-1]++
				probes = append(probes, pre)
			}
			for range 2000 {
				probes = append(probes, u64(r.Uint64()>>r.IntN(64)))
			}
			for _, k := range probes {
				want := sort.Search(len(keys), func(i int) bool { return bytes.Compare(keys[i], k) >= 0 })
				got, eq := n.search(k)
				require.Equal(t, want, got, "key %x", k)
				require.Equal(t, want < len(keys) && bytes.Equal(keys[want], k), eq, "key %x", k)
			}
		})
	}
}
