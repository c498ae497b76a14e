package sim

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/tpcc"
)

// A job in memory closes fast (engine.DB.CloseFast): no sharp checkpoint
// writes its dirty pages into a store the process drops. A job on disk,
// or one that writes a page trace, takes it (engine.DB.Close).
func TestJobCloseFastInMemory(t *testing.T) {
	for _, tc := range []struct {
		name, dir, trace string
		checkpoints      int64
	}{
		{"memory", "", "", 0},
		{"disk", t.TempDir(), "", 1},
		{"trace", "", t.TempDir() + "/pages.trace", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := TPCCConfig{Phases: Phases{Load: true}, Warehouses: 1, Scale: tpcc.SmallScale, Seed: 1, Dir: tc.dir, Trace: tc.trace}
			require.NoError(t, c.Validate())
			j, err := open(&c)
			require.NoError(t, err)
			require.NoError(t, j.load(context.Background(), Hooks{}))
			require.Positive(t, j.db.Pool().FlushListLen(), "pages left dirty for the close")
			before := j.db.LogStats().Checkpoints
			j.close()
			require.Equal(t, before+tc.checkpoints, j.db.LogStats().Checkpoints)
		})
	}
}
