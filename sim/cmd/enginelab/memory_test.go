package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A job larger than the memory is refused with status 2 before anything
// is loaded; the message names the flags, the estimate, the limit and
// what to change.
func TestTPCCMemoryCheck(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	for _, tc := range []struct {
		args []string
		want []string
		not  []string
	}{
		{[]string{"tpcc", "--warehouses", "100000", "--memory-limit", "16GiB"},
			[]string{"not enough memory", "--warehouses 100000 in memory", "the default --pool of 128 MiB a warehouse and 128 MiB for the run's growth (12 TiB)", "needs about ",
				"more than the 16 GiB this process may use (set by --memory-limit)", "keep the database on disk with --dir DIR and make --pool at most",
				"make --warehouses at most", "run anyway with --ignore-memory-limit"}, nil},
		{[]string{"tpcc", "--warehouses", "100000", "--dir", dir, "--pool", "64GiB", "--memory-limit", "16GiB"},
			[]string{"--warehouses 100000 on disk (--dir) with --pool 64 GiB", "To fit, make --pool at most"}, []string{"store "}},
		{[]string{"tpcc", "load", "--warehouses", "100000", "--dir", dir, "--memory-limit", "16GiB"},
			[]string{"--warehouses 100000 on disk (--dir)", "make --pool at most"}, nil},
		{[]string{"tpcc", "--compare", "org", "--warehouses", "100000", "--memory-limit", "16GiB"},
			[]string{"--compare org=clustered", "not enough memory", "make --warehouses at most"}, []string{"--dir"}},
		{[]string{"experiment", "delivery-limit", "--warehouses", "100000", "--memory-limit", "16GiB"},
			[]string{"not enough memory", "in memory with the default --pool of 256 MiB a warehouse (24 TiB)",
				"To fit, keep the database on disk with --dir DIR and make --pool at most", "make --warehouses at most 56 to stay in memory"}, nil},
		{[]string{"experiment", "delivery-limit", "--warehouses", "100000", "--memory-limit", "16GiB", "--dir", dir},
			[]string{"not enough memory", "--warehouses 100000 on disk (--dir) with the default --pool of 256 MiB a warehouse", "To fit, make --pool at most"},
			[]string{"store "}},
	} {
		st, out, errs := enginelab(tc.args...)
		require.Equal(t, 2, st, "%v: %s", tc.args, errs)
		require.Empty(t, out, "%v: no report", tc.args)
		for _, w := range tc.want {
			require.Contains(t, errs, w, "%v", tc.args)
		}
		for _, w := range tc.not {
			require.NotContains(t, errs, w, "%v", tc.args)
		}
	}
	_, err := os.Stat(dir)
	require.ErrorIs(t, err, os.ErrNotExist, "nothing was created")
}

// The default job is accepted; --ignore-memory-limit accepts any.
func TestTPCCMemoryCheckAccepts(t *testing.T) {
	for _, args := range [][]string{
		{"--memory-limit", "4GiB"},
		{"--warehouses", "100000", "--memory-limit", "16GiB", "--ignore-memory-limit"},
	} {
		f := newTPCCFlags("", io.Discard)
		require.NoError(t, f.fs.Parse(args))
		c, err := f.config()
		require.NoError(t, err, "%v", args)
		require.Equal(t, int64(16<<30) == c.MemoryLimit, c.IgnoreMemoryLimit, "%v", args)
	}
}

// The flags are documented wherever a job is.
func TestMemoryFlagsHelp(t *testing.T) {
	for _, args := range [][]string{{"tpcc"}, {"tpcc", "load"}, {"tpcc", "run"}, {"tpcc", "check"}, {"experiment", "io-bound"}} {
		st, out, _ := enginelab(append(args, "--help")...)
		require.Zero(t, st)
		for _, f := range []string{"memory-limit", "ignore-memory-limit"} {
			require.Regexp(t, `(?m)^  -`+f+`( |$)`, out, "%v: --%s documented", args, f)
		}
	}
}
