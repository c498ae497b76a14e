package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/tpcc"
)

// TestAllPerTx: the report's all-transactions averages are every type's
// meters over every completed transaction (each type's averages weighted
// by its count), and the cost table prints them as its "all" row, the
// JSON as all_per_tx: what a reader comparing pool sizes wants as one
// figure (misses a transaction) instead of five.
func TestAllPerTx(t *testing.T) {
	skipUnderRace(t)
	c := TPCCConfig{Mode: ModeSim, Phases: Phases{Load: true, Run: true}, Warehouses: 1, Scale: tpcc.SmallScale,
		Terminals: 2, Duration: time.Second, Seed: 1, PoolSize: 1 << 20}
	rep, err := TPCC(context.Background(), c, Hooks{})
	require.NoError(t, err)
	all := rep.Run.AllPerTx
	require.NotNil(t, all)
	var n, misses, hits, nodes, logBytes float64
	for _, ty := range rep.Run.Types {
		k := float64(ty.Count)
		n += k
		misses += k * ty.PerTx.PoolMisses
		hits += k * ty.PerTx.PoolHits
		nodes += k * ty.PerTx.NodeVisits
		logBytes += k * ty.PerTx.LogBytes
	}
	require.Positive(t, n)
	require.Positive(t, misses, "a 1 MiB pool misses")
	require.InDelta(t, misses/n, all.PoolMisses, 1e-9)
	require.InDelta(t, hits/n, all.PoolHits, 1e-9)
	require.InDelta(t, nodes/n, all.NodeVisits, 1e-9)
	require.InDelta(t, logBytes/n, all.LogBytes, 1e-9)

	var text bytes.Buffer
	require.NoError(t, rep.WriteTable(&text))
	var row string
	for _, line := range strings.Split(text.String(), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "all" {
			row = line
		}
	}
	require.NotEmpty(t, row, "the cost table's all row:\n%s", text.String())
	f := strings.Fields(row)
	require.Len(t, f, 9, row)
	require.Equal(t, strconv.FormatFloat(all.PoolMisses, 'f', 2, 64), f[6], "pool misses: %s", row)

	js, err := json.Marshal(rep)
	require.NoError(t, err)
	var back struct {
		Run struct {
			AllPerTx struct {
				PoolMisses float64 `json:"pool_misses"`
			} `json:"all_per_tx"`
		} `json:"run"`
	}
	require.NoError(t, json.Unmarshal(js, &back))
	require.InDelta(t, all.PoolMisses, back.Run.AllPerTx.PoolMisses, 1e-9)
}
