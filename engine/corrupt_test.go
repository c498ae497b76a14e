package engine

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/btree"
	"github.com/enginelab/enginelab/cache"
)

// The corruption kinds of the packages under the engine, and its own, all
// match ErrCorrupt.
func TestCorruptKinds(t *testing.T) {
	require.Same(t, cache.ErrCorrupt, ErrCorrupt)
	for _, kind := range []error{ErrCorruptRow, ErrCorruptKey, btree.ErrCorruptTree, cache.ErrCorruptPage, cache.ErrCorruptLog} {
		err := fmt.Errorf("engine: check table t: %w", kind)
		require.ErrorIs(t, err, ErrCorrupt, "%v", kind)
		require.ErrorIs(t, err, kind)
	}
	_, err := decodeRow([]byte{0xff}, metaColumns, nil)
	require.ErrorIs(t, err, ErrCorruptRow)
	require.ErrorIs(t, err, ErrCorrupt)
	_, err = decodeKey([]byte{0x07}, metaColumns, []int{mK1}, make(Row, mCols))
	require.ErrorIs(t, err, ErrCorruptKey)
	require.ErrorIs(t, err, ErrCorrupt)
}
