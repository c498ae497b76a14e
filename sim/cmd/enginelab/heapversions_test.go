package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

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

// With --dir, --heap-versions is refused before any work: a stored
// database's report would not say which of its tables keep versions.
func TestTPCCHeapVersionsDir(t *testing.T) {
	dir := t.TempDir()
	st, out, errs := enginelab("tpcc", "--org", "heap-rowptr", "--heap-versions", "--dir", dir, "--scale", "small", "--duration", "1s")
	require.Equal(t, 2, st, errs)
	require.Empty(t, out)
	require.Contains(t, errs, "invalid configuration: --heap-versions runs in memory only for now, not with --dir")
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
