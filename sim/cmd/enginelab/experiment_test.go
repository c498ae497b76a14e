package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// experiment list names every experiment with its question; bad names and
// flags are refused before any work.
func TestExperimentCommand(t *testing.T) {
	st, out, _ := enginelab("experiment", "list")
	require.Zero(t, st)
	for _, name := range []string{"count-rewrite", "delivery-limit", "stocklevel-bound", "io-bound", "tier-policy", "hot-index", "wide-key"} {
		require.Contains(t, out, name)
	}
	require.Contains(t, out, "Delivery reading every undelivered order versus LIMIT 1")

	st, out, _ = enginelab("experiment", "io-bound", "--help")
	require.Zero(t, st)
	for _, f := range []string{"warehouses", "terminals", "duration", "warmup", "seed", "pool", "remote-size", "cores", "store-device", "network", "json"} {
		require.Regexp(t, `(?m)^  -`+f+`( |$)`, out, "--%s documented", f)
	}
	require.Contains(t, out, "expects:")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"experiment", "nope"}, `unknown experiment: "nope"`},
		{[]string{"experiment", "io-bound", "--pool", "lots"}, "-pool"},
		{[]string{"experiment", "io-bound", "--terminals", "-1"}, "--terminals must not be negative"},
		{[]string{"experiment", "io-bound", "--store-device", "floppy"}, `store device "floppy"`},
		{[]string{"experiment", "io-bound", "stray"}, `unexpected argument "stray"`},
		{[]string{"experiment"}, "usage: enginelab experiment list"},
	} {
		st, out, errs := enginelab(tc.args...)
		require.Equal(t, 2, st, "%v: %s", tc.args, errs)
		require.Contains(t, out+errs, tc.want, "%v", tc.args)
	}
}
