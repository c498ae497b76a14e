package main

import (
	"testing"

	"github.com/stretchr/testify/require"
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

// TestTPCCHeapVersionsJSON: a short sim-mode run with heap versions on
// records them in the report's config.
func TestTPCCHeapVersionsJSON(t *testing.T) {
	st, out, errs := enginelab("tpcc", "--org", "heap-rowptr", "--heap-versions", "--isolation", "repeatable-read",
		"--scale", "small", "--duration", "1s", "--json")
	require.Equal(t, 0, st, errs)
	require.Contains(t, out, `"heap_versions": true`)
}
