package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim"
	"github.com/enginelab/enginelab/sim/report"
)

// TestTPCCHeapVersionsClustered: --heap-versions with the clustered
// organization (given or the default) is refused before any work, with
// the invalid-configuration exit status and no report.
func TestTPCCHeapVersionsClustered(t *testing.T) {
	for _, args := range [][]string{
		{"tpcc", "--heap-versions", "--scale", "small", "--duration", "1s"},
		{"tpcc", "--org", "clustered", "--heap-versions", "--scale", "small", "--duration", "1s"},
	} {
		st, out, errs := enginelab(args...)
		require.Equal(t, 2, st, "%v: %s", args, errs)
		require.Empty(t, out, "%v", args)
		require.Contains(t, errs, "invalid configuration: --heap-versions needs a heap organization", "%v", args)
	}
}

// TestTPCCHeapVersionsDir: a heap database loaded into a directory keeps
// versioned tables by default; a later run on it takes the stored tables'
// choice (the catalog records it per table), so its report says heap
// versions and has the vacuum section, and the check after it passes. One
// loaded with --heap-versions=false is single-version, and asking a stored
// database for the other choice is refused before any work: the flag
// cannot change stored tables.
func TestTPCCHeapVersionsDir(t *testing.T) {
	dir := t.TempDir() + "/db"
	st, _, errs := enginelab("tpcc", "load", "--org", "heap-rowptr", "--dir", dir, "--scale", "small", "--sync-commit=false")
	require.Equal(t, 0, st, errs)
	st, out, errs := enginelab("tpcc", "run", "--mode", "sim", "--dir", dir, "--duration", "1s", "--json")
	require.Equal(t, 0, st, errs)
	var rep report.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.True(t, rep.Config.HeapVersions, "the stored tables' choice")
	require.NotNil(t, rep.Vacuum, "the vacuum section")
	require.Positive(t, rep.Vacuum.Runs)
	require.NotNil(t, rep.Check, "the check after the run")
	require.True(t, rep.Check.Passed(), "%+v", rep.Check.Failed())
	_, err := sim.TPCC(context.Background(), sim.TPCCConfig{Dir: dir, Phases: sim.Phases{Run: true}, HeapVersions: engine.HeapVersionsOff,
		Terminals: 1, Duration: time.Second}, sim.Hooks{})
	require.ErrorIs(t, err, sim.ErrInvalidConfig)
	require.ErrorContains(t, err, "HeapVersions off (--heap-versions=false), but the database in "+dir+" was loaded with heap versions")

	plain := t.TempDir() + "/db"
	st, _, errs = enginelab("tpcc", "load", "--org", "heap-rowptr", "--heap-versions=false", "--dir", plain, "--scale", "small", "--sync-commit=false")
	require.Equal(t, 0, st, errs)
	st, out, errs = enginelab("tpcc", "run", "--mode", "sim", "--dir", plain, "--duration", "1s", "--json")
	require.Equal(t, 0, st, errs)
	rep = report.Report{}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.False(t, rep.Config.HeapVersions, "the stored tables' choice")
	require.Nil(t, rep.Vacuum, "nothing to vacuum")
	st, _, errs = enginelab("tpcc", "run", "--heap-versions", "--dir", plain, "--duration", "1s")
	require.Equal(t, 2, st, "run takes the stored choice, it has no --heap-versions: %s", errs)
	_, err = sim.TPCC(context.Background(), sim.TPCCConfig{Dir: plain, Phases: sim.Phases{Run: true}, HeapVersions: engine.HeapVersionsOn,
		Terminals: 1, Duration: time.Second}, sim.Hooks{})
	require.ErrorIs(t, err, sim.ErrInvalidConfig)
	require.ErrorContains(t, err, "HeapVersions on (--heap-versions), but the database in "+plain+" was loaded without heap versions")
}

// TestTPCCHeapVersionsJSON: a short simulated run with heap versions on
// records them in the report's config, and the report has autovacuum's
// section: the scheduler's vacuum actor took steps and vacuumed pages (a
// district's ten rows pass autovacuum's threshold of 52 dead versions
// within the run). The clustered organization keeps no heap versions, so
// its report has no such section.
func TestTPCCHeapVersionsJSON(t *testing.T) {
	st, out, errs := enginelab("tpcc", "--mode", "sim", "--org", "heap-rowptr", "--heap-versions", "--isolation", "repeatable-read",
		"--scale", "small", "--duration", "1s", "--json")
	require.Equal(t, 0, st, errs)
	require.Contains(t, out, `"heap_versions": true`)
	var rep report.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.NotNil(t, rep.Vacuum, "the vacuum section")
	require.Positive(t, rep.Vacuum.ActorSteps)
	require.Positive(t, rep.Vacuum.Runs)
	require.Positive(t, rep.Vacuum.Pages)
	require.GreaterOrEqual(t, rep.Vacuum.Pages, rep.Vacuum.PagesPruned)
	require.Positive(t, rep.Vacuum.IndexEntriesRemoved, "the index pass removed the entries of dead line pointers")

	st, out, errs = enginelab("tpcc", "--mode", "sim", "--scale", "small", "--duration", "100ms", "--json")
	require.Equal(t, 0, st, errs)
	rep = report.Report{}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Nil(t, rep.Vacuum, "clustered: no heap versions, no vacuum section")
}

// TestTPCCHeapVersionsDeterministic: with --heap-versions, two simulated
// runs with one seed print the same report outside its host section (the
// wall-clock figures), in both heap organizations; another seed prints
// another run.
func TestTPCCHeapVersionsDeterministic(t *testing.T) {
	skipUnderRace(t)
	run := func(org, seed string) map[string]any {
		t.Helper()
		st, out, errs := enginelab("tpcc", "--mode", "sim", "--org", org, "--heap-versions", "--scale", "small",
			"--duration", "300ms", "--seed", seed, "--json")
		require.Equal(t, 0, st, errs)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &m))
		require.Contains(t, m, "host")
		delete(m, "host")
		return m
	}
	for _, org := range []string{"heap-rowptr", "heap-pk"} {
		a, b, other := run(org, "7"), run(org, "7"), run(org, "8")
		require.Equal(t, a, b, "%s: two runs with one seed", org)
		require.NotEqual(t, a["run"], other["run"], "%s: another seed", org)
		require.Equal(t, true, a["config"].(map[string]any)["heap_versions"], org)
	}
}
