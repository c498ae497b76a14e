package hw

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Every shipped profile is valid and says where its numbers come from.
func TestShippedProfiles(t *testing.T) {
	for name := range Devices {
		hw, err := Spec{Store: name, Log: name}.Resolve()
		require.NoError(t, err, name)
		require.NotEmpty(t, hw.Store.Source, name)
	}
	for name, n := range Networks {
		_, err := Spec{Network: name}.Resolve()
		require.NoError(t, err, name)
		require.NotEmpty(t, n.Source, name)
	}
	hw, err := Spec{}.Resolve()
	require.NoError(t, err)
	require.Equal(t, DefaultCores, hw.Cores)
	require.Equal(t, DefaultStore, hw.StoreName)
	require.Equal(t, DefaultStore, hw.LogName, "the log shares the store's device unless told")
	require.Equal(t, DefaultNetwork, hw.NetworkName)
	require.Equal(t, DefaultCPU, hw.CPU)
}

// A profiles file adds a device and replaces a shipped one; durations
// read as Go durations or nanoseconds; unknown fields and bad values are
// refused with the file named.
func TestProfilesFile(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "p.json")
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	p := write(`{"devices": {"tape": {"read_latency": "30s", "write_latency": 1000, "sync_latency": "1s",
		"iops": 1, "read_bandwidth": 1000000, "write_bandwidth": 1000000}},
		"networks": {"gigabit": {"round_trip": "1ms", "bandwidth": 100000000}}}`)
	hw, err := Spec{Store: "tape", Network: "gigabit", ProfilesFile: p}.Resolve()
	require.NoError(t, err)
	require.Equal(t, Duration(30*time.Second), hw.Store.ReadLatency)
	require.Equal(t, Duration(1000), hw.Store.WriteLatency)
	require.Equal(t, Duration(time.Millisecond), hw.Network.RoundTrip)
	require.Equal(t, Networks["gigabit"].Bandwidth, int64(117e6), "the shipped profile is not changed")

	_, err = Spec{ProfilesFile: write(`{"disks": {}}`)}.Resolve()
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.ErrorContains(t, err, "p.json")
	_, err = Spec{Store: "bad", ProfilesFile: write(`{"devices": {"bad": {"read_bandwidth": 0, "write_bandwidth": 1}}}`)}.Resolve()
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.ErrorContains(t, err, `device "bad": bandwidth`)
	_, err = Spec{Store: "bad", ProfilesFile: write(`{"devices": {"bad": {"read_latency": "2h", "read_bandwidth": 1, "write_bandwidth": 1}}}`)}.Resolve()
	require.ErrorContains(t, err, `device "bad": latencies must be from 0 to 1h0m0s`)
	_, err = Spec{ProfilesFile: write(`{"cpus": {"default": {"node_visit": -1}}}`)}.Resolve()
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.ErrorContains(t, err, `cpu "default"`)
	_, err = Spec{Store: "tape"}.Resolve()
	require.ErrorIs(t, err, ErrUnknownProfile)
	require.ErrorContains(t, err, "disk-10k-x2-2009, disk-2009, nvme-plp, nvme-ssd, ram, sata-ssd")
}

// The cost names are the profile's JSON names, and ProfileOf inverts
// Costs, in the same order.
func TestCostNames(t *testing.T) {
	typ := reflect.TypeFor[CPUProfile]()
	var tags []string
	for i := range typ.NumField() {
		if tag, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ","); tag != "source" {
			tags = append(tags, tag)
		}
	}
	require.Equal(t, tags, CostNames[:])
	c := make([]float64, len(CostNames))
	for i := range c {
		c[i] = float64(i) + 0.5
	}
	p := ProfileOf(c)
	require.Equal(t, c, p.Costs())
}
