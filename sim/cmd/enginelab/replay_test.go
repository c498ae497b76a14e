package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/tier"
	"github.com/enginelab/enginelab/sim/replay"
)

// tierReplay runs the command with args and returns its exit status and
// outputs.
func tierReplay(args ...string) (int, string, string) {
	var out, errs bytes.Buffer
	st := tierReplayCmd(args, &out, &errs)
	return st, out.String(), errs.String()
}

// writeTrace records a cyclic scan of 8 pages, 3 rounds, in inclusive
// mode through a TraceTier over a NullTier (each access a miss and its
// push), into a file, and returns its path.
func writeTrace(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pages.trace")
	f, err := os.Create(path)
	require.NoError(t, err)
	tt := tier.NewTraceTier(nil, f, 4096, tier.Inclusive)
	buf := make([]byte, 4096)
	for range 3 {
		for p := range uint32(8) {
			k := tier.Key{DB: 1, Epoch: 1, ID: page.ID{Space: 2, Page: p}}
			found, err := tt.Get(k, 0, buf)
			require.NoError(t, err)
			require.False(t, found)
			_, err = tt.Put(k, 0, buf)
			require.NoError(t, err)
		}
	}
	require.NoError(t, tt.Close())
	require.NoError(t, f.Close())
	return path
}

// The table has a row per policy and a column per size; --json is the
// report; flags may follow the trace.
func TestTierReplayCmd(t *testing.T) {
	path := writeTrace(t)
	st, out, errs := tierReplay("--ristretto-runs", "2", path)
	require.Zero(t, st, errs)
	require.Contains(t, out, "48 events (24 gets, 24 puts, 0 deletes), 8 pages of 4.0 KiB, inclusive mode")
	require.Contains(t, out, "ristretto: mean of 2 runs")
	// 8 pages of 4 KiB: the default sizes are 2, 4, 8, 16 and 32 KiB.
	require.Regexp(t, `(?m)^\s*policy\s+2 KiB\s+4 KiB\s+8 KiB\s+16 KiB\s+32 KiB$`, out)
	for _, p := range replay.Policies {
		require.Regexp(t, `(?m)^\s*`+p+`\s+\d`, out, p)
	}

	st, out, errs = tierReplay(path, "--json", "--sizes", "16KiB,28KiB", "--policies", "belady,lru")
	require.Zero(t, st, errs)
	var rep replay.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, []int64{16 << 10, 28 << 10}, rep.Config.Sizes)
	require.Equal(t, []string{"belady", "lru"}, rep.Config.Policies)
	require.Equal(t, int64(24), rep.Gets)
	require.Len(t, rep.Results, 4)
	// 28 KiB holds 6 pages of 4096+48 bytes: a cyclic scan of 8 misses
	// everything in lru, and belady keeps 6 of 8 each later round: 12
	// hits of 24.
	require.Zero(t, rep.Result("lru", 28<<10).Hits)
	require.Equal(t, int64(12), rep.Result("belady", 28<<10).Hits)
}

// --help documents every flag.
func TestTierReplayHelp(t *testing.T) {
	st, out, _ := tierReplay("--help")
	require.Zero(t, st)
	require.Contains(t, out, "usage: enginelab tier-replay [flags] TRACE")
	for _, f := range []string{"sizes", "policies", "ristretto-runs", "json", "html"} {
		require.Regexp(t, `(?m)^  -`+f+`( |$)`, out, "--%s documented", f)
	}
}

// Bad usage exits 2, naming the flag, before the trace is read.
func TestTierReplayBadFlags(t *testing.T) {
	path := writeTrace(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--sizes", "0", path}, "-sizes: want sizes such as 16MiB"},
		{[]string{"--sizes", "16MiB,lots", path}, "-sizes: want sizes"},
		{[]string{"--sizes", "16MiB,16MiB", path}, "-sizes: size 16MiB given twice"},
		{[]string{"--policies", "lru,arc", path}, `-policies: policy "arc": want some of lru,slru,ristretto,belady`},
		{[]string{"--policies", "lru,lru", path}, `-policies: policy "lru" given twice`},
		{[]string{"--ristretto-runs", "0", path}, "--ristretto-runs 0: want at least 1"},
		{[]string{"--ristretto-runs", "x", path}, "-ristretto-runs"},
		{[]string{"--no-such", path}, "flag provided but not defined: -no-such"},
		{[]string{}, "no TRACE given"},
		{[]string{path, "other"}, `unexpected argument "other"`},
	} {
		st, out, errs := tierReplay(tc.args...)
		require.Equal(t, 2, st, "%v", tc.args)
		require.Contains(t, errs, tc.want, "%v", tc.args)
		require.Empty(t, out, "%v", tc.args)
	}
}

// A trace that cannot be read exits 1, naming the path (and the line of a
// malformed one).
func TestTierReplayBadTrace(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.trace")
	st, out, errs := tierReplay(missing)
	require.Equal(t, 1, st)
	require.Contains(t, errs, missing)
	require.Empty(t, out)

	bad := filepath.Join(t.TempDir(), "bad.trace")
	require.NoError(t, os.WriteFile(bad, []byte("# enginelab page trace v1 page_size=4096 mode=exclusive\ng 1 2 4096\ng 1 x 4096\n"), 0o644))
	st, _, errs = tierReplay(bad)
	require.Equal(t, 1, st)
	require.Contains(t, errs, bad)
	require.Contains(t, errs, `line 3: page "x"`)

	// A trace with no page cannot have default sizes: give some.
	empty := filepath.Join(t.TempDir(), "empty.trace")
	require.NoError(t, os.WriteFile(empty, []byte("# enginelab page trace v1 page_size=4096 mode=exclusive\n"), 0o644))
	st, _, errs = tierReplay(empty)
	require.Equal(t, 2, st)
	require.True(t, strings.Contains(errs, "give some"), errs)
	st, out, errs = tierReplay("--sizes", "1MiB", "--policies", "lru", empty)
	require.Zero(t, st, errs)
	require.Contains(t, out, "0 events")
}
