package sim

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/tpcc"
)

// The simulated page cleaner skips a pass only while its last batch is
// still on the store device. When the pool holds the data, terminals send
// the store no request, and the device serves the cleaner's writes in its
// idle time: no pass is skipped, and the writes are priced (the device is
// busy for them). Before the queue was served in idle time, every pass
// after the first was skipped and its writes never priced.
func TestSimCleanerServedWhileIdle(t *testing.T) {
	skipUnderRace(t)
	c := TPCCConfig{Mode: ModeSim, Phases: Phases{Load: true, Run: true}, Warehouses: 1, Scale: tpcc.SmallScale,
		Terminals: 1, Duration: time.Second, Warmup: time.Second, Seed: 1, MaxDirtyPagesPctLWM: 10,
		Hardware: hw.Spec{Store: "sata-ssd", Cores: 2}}
	rep, err := TPCC(context.Background(), c, Hooks{})
	require.NoError(t, err)
	require.Empty(t, rep.Run.Errors)
	require.Zero(t, rep.Run.Types[0].PerTx.StoreReads, "the pool holds the data: no store reads")
	require.Positive(t, rep.Background.StoreWrites, "the cleaner wrote pages")
	t.Logf("busy %.1f%%, skips %d, pending %d, writes %d", rep.Sim.StoreBusyPct, rep.Sim.CleanerSkips, rep.Sim.BackgroundWritesPending, rep.Background.StoreWrites)
	require.Zero(t, rep.Sim.CleanerSkips, "no pass skipped while the device was idle")
	require.Positive(t, rep.Sim.StoreBusyPct, "the cleaner's writes held the device")
}
