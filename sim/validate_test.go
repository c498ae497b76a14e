package sim

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/tier"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/tpcc"
)

// Validate names the setting that is wrong, before anything is opened.
func TestTPCCConfigValidate(t *testing.T) {
	good := TPCCConfig{Phases: Phases{Load: true, Run: true, Check: true}, Warehouses: 1, Terminals: 4, Duration: time.Second}
	require.NoError(t, good.Validate())
	for _, tc := range []struct {
		change func(*TPCCConfig)
		want   string
		is     error
	}{
		{func(c *TPCCConfig) { c.Phases = Phases{} }, "nothing to do", ErrInvalidConfig},
		{func(c *TPCCConfig) { c.Phases.Load = false }, "--dir", ErrInvalidConfig},
		{func(c *TPCCConfig) { c.Warehouses = 0 }, "--warehouses 0", ErrInvalidConfig},
		{func(c *TPCCConfig) { c.Terminals = 0 }, "--terminals 0", ErrInvalidConfig},
		{func(c *TPCCConfig) { c.Duration = 0 }, "--duration 0s", ErrInvalidConfig},
		{func(c *TPCCConfig) { c.Warmup = -time.Second }, "--warmup -1s", ErrInvalidConfig},
		{func(c *TPCCConfig) { c.PageSize = 3000 }, "page size 3000", ErrInvalidConfig},
		{func(c *TPCCConfig) { c.Phases.Load = false; c.Dir = t.TempDir() }, "holds no database", tpcc.ErrNotLoaded},
		{func(c *TPCCConfig) { c.Mode = "fast" }, "--mode fast", ErrInvalidConfig},
		{func(c *TPCCConfig) { c.Scale = tpcc.Scale{CustomersPerDistrict: 25} }, "--scale: tpcc: invalid configuration: scale of 25 customers per district", tpcc.ErrInvalidConfig},
		{func(c *TPCCConfig) { c.Scale = tpcc.Scale{Items: -1} }, "--scale", ErrInvalidConfig},
		{func(c *TPCCConfig) { c.Mode = ModeSim; c.Remote = RemoteSpec{Backend: "ristretto"} }, "--remote ristretto cannot run in simulated mode", ErrInvalidConfig},
		{func(c *TPCCConfig) {
			c.Mode = ModeSim
			c.Remote = RemoteSpec{Backend: "memcached", Servers: []string{"127.0.0.1:11211"}}
		}, "not deterministic", ErrInvalidConfig},
		{func(c *TPCCConfig) { c.Mode = ModeSim; c.Hardware.Store = "floppy" }, `store device "floppy"`, hw.ErrUnknownProfile},
		{func(c *TPCCConfig) { c.Mode = ModeSim; c.Hardware.Network = "carrier-pigeon" }, `network "carrier-pigeon"`, hw.ErrUnknownProfile},
		{func(c *TPCCConfig) { c.Mode = ModeSim; c.Hardware.Cores = -1 }, "--cores -1", ErrInvalidConfig},
		{func(c *TPCCConfig) { c.Mode = ModeSim; c.Hardware.ProfilesFile = "/nonexistent/profiles.json" }, "--profiles", ErrInvalidConfig},
		{func(c *TPCCConfig) { c.Remote = RemoteSpec{Backend: "memcached-1.2.5"}; c.SlabPointerSize = 2 }, "--slab-pointer-size 2", ErrInvalidConfig},
		{func(c *TPCCConfig) { c.Remote = RemoteSpec{Backend: "lru"}; c.SlabMRUPatch = true }, "need a memcached model", ErrInvalidConfig},
		{func(c *TPCCConfig) { c.Waffle = "mru" }, "Waffle mode", ErrInvalidConfig},
		{func(c *TPCCConfig) { c.Flushing = "5.0" }, "flushing", ErrInvalidConfig},
	} {
		c := good
		tc.change(&c)
		err := c.Validate()
		require.ErrorIs(t, err, tc.is, tc.want)
		require.ErrorContains(t, err, tc.want)
		require.True(t, errors.Is(err, tc.is))
	}
}

// The memcached models' parameters: Waffle Grid's 32-bit build unless
// said otherwise (1.6.18, the release installed for the real-server test,
// is 64-bit), the tier's budget as -m, the MRU patch.
func TestSlabParams(t *testing.T) {
	c := TPCCConfig{Remote: RemoteSpec{Backend: "memcached-1.2.5"}, SlabMRUPatch: true}
	p := c.SlabParams(768<<20, nil)
	require.Equal(t, "1.2.5", string(p.Release))
	require.Equal(t, 4, p.PointerSize)
	require.Equal(t, int64(768<<20), p.MaxBytes)
	require.True(t, p.MRUPatch)
	c.Remote.Backend = "memcached-1.6.18"
	require.Equal(t, 8, c.SlabParams(1<<30, nil).PointerSize)
	c.Remote.Backend, c.SlabPointerSize = "memcached-1.3.2", 8
	require.Equal(t, 8, c.SlabParams(1<<30, nil).PointerSize)
	r, err := ParseRemote("memcached-1.3.2")
	require.NoError(t, err)
	require.Equal(t, "memcached-1.3.2", r.String())
}

// The report names the tier mode a run had: Waffle Grid's non-LRU mode
// is inclusive unless --remote-mode says otherwise, as cache.Options
// resolves an empty TierMode (it was reported as exclusive).
func TestRemoteModeReported(t *testing.T) {
	for _, tc := range []struct {
		c    TPCCConfig
		want string
	}{
		{TPCCConfig{}, "exclusive"},
		{TPCCConfig{Waffle: cache.WaffleLRU}, "exclusive"},
		{TPCCConfig{Waffle: cache.WaffleNonLRU}, "inclusive"},
		{TPCCConfig{RemoteMode: tier.Inclusive}, "inclusive"},
	} {
		require.Equal(t, tc.want, remoteMode(&tc.c), "%+v", tc.c)
	}
}
