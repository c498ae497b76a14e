package sim

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/tpcc"
)

// A real run reports the process's CPU over its wall time in host, and
// the text form says how many of GOMAXPROCS it kept busy.
func TestRunCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the process's CPU time is read with getrusage on Linux only")
	}
	c := TPCCConfig{Phases: Phases{Load: true, Run: true}, Mode: ModeReal, Warehouses: 1, Scale: tpcc.SmallScale,
		Terminals: 2, Duration: 200 * time.Millisecond, Seed: 1, InMemoryOnly: true}
	rep, err := TPCC(context.Background(), c, Hooks{})
	require.NoError(t, err)
	h := rep.Host
	require.Equal(t, runtime.GOMAXPROCS(0), h.GOMAXPROCS)
	require.Positive(t, h.RunCPUSeconds, "two terminals ran for 200 ms")
	require.InDelta(t, h.RunCPUSeconds/h.RunSeconds, h.RunCoresBusy, 1e-12)
	var b strings.Builder
	require.NoError(t, rep.WriteTable(&b))
	require.Regexp(t, `(?m)^cpu: \d+\.\d s over the run's \d+\.\d s, \d+\.\d\d cores busy of GOMAXPROCS \d+ `, b.String())
}
