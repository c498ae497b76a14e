package cache_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/cache/store"
)

// Every corruption kind matches the class, keeps its own identity, and
// stays matched through wrapping.
func TestCorruptKinds(t *testing.T) {
	for _, kind := range []error{page.ErrCorruptPage, redo.ErrCorruptLog} {
		err := fmt.Errorf("cache: read page 1:2: %w", kind)
		require.ErrorIs(t, err, page.ErrCorrupt)
		require.ErrorIs(t, err, kind)
		require.NotErrorIs(t, page.ErrCorrupt, kind, "the class is no kind")
	}
	require.NotErrorIs(t, page.ErrCorruptPage, redo.ErrCorruptLog)
	require.NotErrorIs(t, store.ErrPageNotFound, page.ErrCorrupt)
	require.Equal(t, "cache: corrupt page", page.ErrCorruptPage.Error())
}
