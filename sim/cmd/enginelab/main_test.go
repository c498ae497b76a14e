package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The command's numbers: row fetches only where secondaries carry row
// pointers, and none with the count rewrite.
func TestRun(t *testing.T) {
	for _, rewrite := range []bool{false, true} {
		rs, err := countRun(300, 30, rewrite)
		require.NoError(t, err)
		require.Len(t, rs, 3)
		for _, r := range rs {
			require.EqualValues(t, 30, r.Count, "%+v", r)
			want := int64(0)
			if r.Org == "heap-rowptr" && !rewrite {
				want = 30
			}
			require.Equal(t, want, r.RowFetches, "%+v", r)
			require.Equal(t, want == 0, r.IndexOnly, "%+v", r)
		}
	}
}
