package report

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSeedsInHeader: the header names the seeds the job's data came
// from, by the job's phases: a check has only the stored load's; a run
// on a stored database adds the load's when it differs from its own.
func TestSeedsInHeader(t *testing.T) {
	for _, c := range []struct {
		phases         string
		seed, loadSeed uint64
		want           string
	}{
		{"load+run", 3, 3, "seed 3"},
		{"load+run+check", 3, 3, "seed 3"},
		{"run", 1, 1, "seed 1"},
		{"run", 1, 5, "seed 1 (load seed 5)"},
		{"check", 0, 5, "load seed 5"},
		{"load+check", 5, 5, "load seed 5"},
	} {
		r := &Report{Config: Config{Phases: c.phases, Seed: c.seed}, Database: Database{LoadSeed: c.loadSeed}}
		require.Equal(t, c.want, r.seeds(), "%+v", c)
	}
}
