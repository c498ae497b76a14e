package calibrate

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/engine/memlimit"
	"github.com/enginelab/enginelab/sim"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/tpcc"
)

// The profile WriteProfile writes loads through hw.Spec.Resolve
// unchanged, fractions included; a name --cpu could not take is refused.
func TestCalibrationWriteProfile(t *testing.T) {
	want := truth()
	samples := synthetic(rand.New(rand.NewPCG(5, 1)), 2000, &want, 0.02)
	prof, fit, err := FitCPU(samples)
	require.NoError(t, err)
	prof.Source = "calibrated on test"
	cal := &Report{Profile: prof, Fit: fit, Config: Config{Warehouses: 1, Duration: DefaultDuration}}
	var b bytes.Buffer
	require.NoError(t, cal.WriteProfile(&b, "this-box"))
	require.True(t, strings.HasPrefix(b.String(), "{\n  \"cpus\": {\n    \"this-box\": {"), b.String())
	file := filepath.Join(t.TempDir(), "profiles.json")
	require.NoError(t, os.WriteFile(file, b.Bytes(), 0o644))
	machine, err := hw.Spec{ProfilesFile: file, CPU: "this-box"}.Resolve()
	require.NoError(t, err)
	require.Equal(t, prof, machine.CPU)
	require.Equal(t, "this-box", machine.CPUName)
	// The shipped profiles are still there beside it.
	machine, err = hw.Spec{ProfilesFile: file}.Resolve()
	require.NoError(t, err)
	require.Equal(t, hw.DefaultCPU, machine.CPU)

	for _, bad := range []string{"", "two words", "-dash", "a/b", "ü"} {
		require.ErrorIs(t, cal.WriteProfile(&b, bad), sim.ErrInvalidConfig, bad)
	}

	var table strings.Builder
	require.NoError(t, cal.WriteTable(&table))
	for _, w := range []string{"fit: R² 0.9", "page_request", "not observed (the profile keeps the default's cost): store_request, tier_request",
		"new-order", "stock-level", "residual %"} {
		require.Contains(t, table.String(), w)
	}
}

// Config is checked before any work.
func TestCalibrateConfig(t *testing.T) {
	var c Config
	c.EnsureDefaults()
	require.Equal(t, Config{Warehouses: 1, Duration: DefaultDuration}, c)
	require.NoError(t, c.Validate())
	for _, bad := range []Config{{Warehouses: 1, Duration: -1}, {Warehouses: -1, Duration: 1}, {Warehouses: tpcc.MaxWarehouses + 1, Duration: 1}} {
		require.ErrorIs(t, bad.Validate(), sim.ErrInvalidConfig)
		_, err := Run(t.Context(), bad)
		require.ErrorIs(t, err, sim.ErrInvalidConfig)
	}
}

// A calibration's loads keep the engine's own check (the pool at its
// capacity), there being no job's.
func TestCalibrateMemoryCheck(t *testing.T) {
	if l, err := memlimit.System(); err != nil || !l.Known() {
		t.Skip("no memory limit can be read here: nothing is checked")
	}
	_, err := Run(context.Background(), Config{Warehouses: 100_000, Duration: time.Second})
	require.ErrorIs(t, err, sim.ErrInsufficientMemory)
	require.ErrorIs(t, err, engine.ErrInvalidOptions)
}

// Events a calibration did not observe keep the default profile's costs;
// the others keep the fitted ones.
func TestWithDefaults(t *testing.T) {
	fitted := hw.CPUProfile{NodeVisit: 123, Commit: 4567, Source: "fit"}
	got := withDefaults(fitted, []string{"store_request", "tier_request", "pool_miss"})
	require.Equal(t, 123.0, got.NodeVisit)
	require.Equal(t, 4567.0, got.Commit)
	require.Equal(t, hw.DefaultCPU.StoreRequest, got.StoreRequest)
	require.Equal(t, hw.DefaultCPU.TierRequest, got.TierRequest)
	require.Equal(t, hw.DefaultCPU.PoolMiss, got.PoolMiss)
	require.Zero(t, got.Split, "observed and fitted to zero")
	require.Equal(t, "fit", got.Source)
}
