package cache_test

import (
	"testing"

	"github.com/enginelab/enginelab/cache"
	"github.com/stretchr/testify/require"
)

func TestPoolMemory(t *testing.T) {
	require.Greater(t, cache.FrameOverhead, int64(64), "a Page is more than its links")
	require.Equal(t, 1024*(16<<10+cache.FrameOverhead), cache.PoolMemory(16<<20, 16<<10))
	require.Equal(t, 1024*(16<<10+cache.FrameOverhead), cache.PoolMemory(16<<20+100, 16<<10), "whole frames")
}
