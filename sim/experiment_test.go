package sim

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Every experiment runs at a small scale and its stated direction holds.
// The explanation names the counters the question is about.
func TestExperimentsDirectionsHold(t *testing.T) {
	if raceEnabled {
		t.Skip("fourteen W = 1 loads take most of an hour under the race detector; the scheduler's own tests run under it")
	}
	short := ExperimentParams{Duration: 500 * time.Millisecond, Warmup: 100 * time.Millisecond}
	ioShort := ExperimentParams{Duration: 20 * time.Second, Warmup: 5 * time.Second}
	for _, tc := range []struct {
		name    string
		params  ExperimentParams
		counter string // a counter the explanation must name
	}{
		{"count-rewrite", short, "row fetches"},
		{"delivery-limit", short, "rows returned"},
		{"stocklevel-bound", short, "rows examined"},
		{"hot-index", short, "index entries written"},
		{"wide-key", short, "node visits"},
		{"io-bound", ioShort, "store reads"},
		{"tier-policy", ioShort, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := LookupExperiment(tc.name)
			require.NoError(t, err)
			res, err := RunExperiment(context.Background(), e, tc.params, nil)
			require.NoError(t, err)
			require.True(t, res.Held, "%s: %s", tc.name, res.Verdict)
			require.NotEmpty(t, res.Verdict)
			require.NotZero(t, res.Headline.Ratio, "a headline ratio")
			for _, r := range res.Sides {
				require.True(t, r.Passed(), "%v %v", r.Errors, r.Run.Errors)
				require.Equal(t, "sim", r.Config.Mode)
			}
			var table strings.Builder
			require.NoError(t, res.WriteTable(&table))
			require.Contains(t, table.String(), "expectation held")
			require.Contains(t, table.String(), e.Question)
			if tc.counter != "" {
				require.Contains(t, table.String(), tc.counter)
				found := false
				for _, x := range res.Explanations {
					for _, c := range x.Counters {
						found = found || c.Counter == tc.counter
					}
				}
				require.True(t, found, "the explanation names %s", tc.counter)
			} else {
				require.NotNil(t, res.Replay)
			}
			b, err := json.Marshal(res)
			require.NoError(t, err)
			require.Contains(t, string(b), `"held":true`)
		})
	}
}

// An unknown experiment is named with the known ones.
func TestLookupExperiment(t *testing.T) {
	_, err := LookupExperiment("nope")
	require.ErrorIs(t, err, ErrUnknownExperiment)
	require.ErrorContains(t, err, "count-rewrite")
	for _, e := range Experiments() {
		require.NotEmpty(t, e.Question, e.Name)
		require.NotEmpty(t, e.Expect, e.Name)
		got, err := LookupExperiment(e.Name)
		require.NoError(t, err)
		require.Same(t, e, got)
	}
}
