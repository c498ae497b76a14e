package report

import (
	"strings"
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

// TestVersionsTableUndoOnly: a type whose only multi-versioning figure is
// its undo records (a clustered Delivery: locking reads, no read view)
// has its row in the multi-versioning table.
func TestVersionsTableUndoOnly(t *testing.T) {
	var b strings.Builder
	writeVersions(&b, []Type{{Type: "delivery", PerTx: MeterAverages{UndoRecords: 130}}, {Type: "order-status"}})
	out := b.String()
	require.Contains(t, out, "index-only heap fetches")
	var rows []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && (f[0] == "delivery" || f[0] == "order-status") {
			rows = append(rows, f[0]+" "+f[4])
		}
	}
	require.Equal(t, []string{"delivery 130.0"}, rows, out)
}
