package tier_test

import (
	"io"
	"testing"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/tier"
	"github.com/enginelab/enginelab/cache/tier/lru"
	"github.com/enginelab/enginelab/cache/tier/ristretto"
	"github.com/enginelab/enginelab/cache/tier/slru"
	"github.com/stretchr/testify/require"
)

// The memory a tier may hold in this process: its budget in process,
// nothing for none, the inner tier's when recorded.
func TestInProcessBytes(t *testing.T) {
	require.Zero(t, tier.InProcessBytes(nil))
	require.Zero(t, tier.InProcessBytes(tier.NewNullTier()))
	lt, err := lru.New(1 << 20)
	require.NoError(t, err)
	defer lt.Close()
	require.Equal(t, int64(1<<20), tier.InProcessBytes(lt))
	st, err := slru.New(2<<20, nil)
	require.NoError(t, err)
	defer st.Close()
	require.Equal(t, int64(2<<20), tier.InProcessBytes(st))
	rt, err := ristretto.New(4 << 20)
	require.NoError(t, err)
	defer rt.Close()
	require.Equal(t, int64(4<<20), tier.InProcessBytes(rt))
	require.Equal(t, int64(1<<20), tier.InProcessBytes(tier.NewTraceTier(lt, io.Discard, page.DefaultSize, tier.Exclusive)))
	require.Zero(t, tier.InProcessBytes(tier.NewTraceTier(nil, io.Discard, page.DefaultSize, tier.Exclusive)))
}
