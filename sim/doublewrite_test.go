package sim

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/tpcc"
)

// An io-bound simulated run (a pool of a tenth of the data, a 2009 disk)
// is priced slower with the doublewrite buffer than without: each batch of
// page writes is written twice and synced twice on the store device. The
// comparison is of modeled time, deterministic.
func TestSimDoublewritePriced(t *testing.T) {
	skipUnderRace(t)
	ctx := context.Background()
	base := TPCCConfig{Mode: ModeSim, Phases: Phases{Load: true, Run: true}, Warehouses: 1, Scale: tpcc.SmallScale,
		Terminals: 4, Duration: 3 * time.Second, Warmup: time.Second, Seed: 1, PoolSize: 1 << 20, ReadAhead: true,
		Hardware: hw.Spec{Store: "disk-2009", Cores: 2}}
	none, err := TPCC(ctx, base, Hooks{})
	require.NoError(t, err)
	dw := base
	dw.TornPages = cache.TornPagesDoublewrite
	with, err := TPCC(ctx, dw, Hooks{})
	require.NoError(t, err)
	require.Empty(t, none.Run.Errors)
	require.Empty(t, with.Run.Errors)
	require.Equal(t, "doublewrite", with.Config.TornPages)

	// Without the buffer nothing goes through it; with it, every
	// background page write does, a batch at a time, one sync a batch
	// and a store sync after each.
	require.Zero(t, none.Background.DoublewritePages)
	bg := with.Background
	require.Positive(t, bg.DoublewriteWrites)
	require.Equal(t, bg.StoreWrites, bg.DoublewritePages)
	require.Equal(t, bg.DoublewritePages*int64(with.Database.PageSize), bg.DoublewriteBytes)
	require.Equal(t, bg.DoublewriteWrites, bg.DoublewriteSyncs)
	require.GreaterOrEqual(t, bg.StoreSyncs, bg.DoublewriteWrites)

	t.Logf("tpmC %.0f without, %.0f with the doublewrite buffer; store busy %.1f%% and %.1f%%",
		none.Run.TpmC, with.Run.TpmC, none.Sim.StoreBusyPct, with.Sim.StoreBusyPct)
	require.Less(t, with.Run.TpmC, none.Run.TpmC, "the doublewrite buffer costs device time")
}
