package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim/report"
	"github.com/enginelab/enginelab/tpcc"
)

// crashedTPCC loads TPC-C at small scale on pebble's crashable memory
// filesystem, leaves a transaction unfinished that changed a warehouse's
// w_ytd (a consistency condition fails unless it is rolled back), makes
// its change durable, and returns the crash image: what a process killed
// there would leave. Nothing was checkpointed since the database was
// created, so recovery redoes the whole load.
func crashedTPCC(t *testing.T) *vfs.MemFS {
	t.Helper()
	fs := vfs.NewCrashableMem()
	db, err := engine.Open(&engine.Options{FS: fs, Dir: "db"})
	require.NoError(t, err)
	_, err = tpcc.Load(context.Background(), db, tpcc.LoadConfig{Warehouses: 1, Scale: tpcc.SmallScale, Seed: 3})
	require.NoError(t, err)
	wh, err := db.Table(tpcc.Warehouse)
	require.NoError(t, err)
	loser := db.Begin(nil)
	require.NoError(t, loser.Update(wh, []engine.Value{engine.Int(1)}, []engine.Set{{Column: "w_ytd", Value: engine.Dec(1)}}))
	// Creating a table syncs the log: the loser's change is durable.
	_, err = db.CreateTable(engine.Table{Name: "scratch", Columns: []engine.Column{{Name: "k", Type: engine.TypeInt}},
		PrimaryKey: []string{"k"}})
	require.NoError(t, err)
	return fs.CrashClone(vfs.CrashCloneCfg{})
}

// cloneTo copies the database of a memory filesystem into a new directory
// on disk and returns its path.
func cloneTo(t *testing.T, image *vfs.MemFS) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "db")
	ok, err := vfs.Clone(image, vfs.Default, "db", dir)
	require.NoError(t, err)
	require.True(t, ok)
	return dir
}

// A run on a database a crash left reports what opening it recovered, in
// its JSON (recovery) and its table (RECOVERY): the load redone, the
// unfinished transaction rolled back (the consistency check passes). A
// database closed cleanly recovers nothing, and the report says nothing.
// Durations are reported, not checked.
func TestTPCCRecoveryReport(t *testing.T) {
	image := crashedTPCC(t)

	dir := cloneTo(t, image)
	st, out, errs := enginelab("tpcc", "run", "--dir", dir, "--json", "--duration", "500ms", "--terminals", "2")
	require.Zero(t, st, errs)
	var rep report.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	rc := rep.Recovery
	require.NotNil(t, rc, "the database was not shut down cleanly")
	require.Positive(t, rc.Records)
	require.Equal(t, rc.Pages, rc.PagesApplied+rc.PagesSkipped)
	require.Positive(t, rc.PagesApplied, "no page was written since the checkpoint")
	require.Positive(t, rc.Bytes)
	require.Equal(t, int64(rc.EndLSN-rc.CheckpointLSN), rc.Bytes)
	require.EqualValues(t, 1, rc.RolledBack)
	require.True(t, rep.Check.Passed(), "the unfinished change was rolled back: %s", rep.Check)
	// The run's writes, per committed transaction.
	require.NotNil(t, rep.FS)
	require.NotNil(t, rep.FS.Run)
	require.Positive(t, rep.FS.Run.Commits)
	require.NotNil(t, rep.FS.Run.BytesPerTx)
	require.Positive(t, rep.FS.Run.BytesPerTx.Redo)
	require.Equal(t, rep.FS.Run.Classes.Total(), rep.FS.Run.Total)

	// Closed cleanly by that run: nothing to recover.
	st, out, errs = enginelab("tpcc", "run", "--dir", dir, "--json", "--duration", "200ms", "--terminals", "1", "--check=false")
	require.Zero(t, st, errs)
	rep = report.Report{}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Nil(t, rep.Recovery)
	require.NotContains(t, out, `"recovery"`)

	// The table form, on another copy of the crash.
	st, out, errs = enginelab("tpcc", "check", "--dir", cloneTo(t, image))
	require.Zero(t, st, errs)
	require.Contains(t, out, "RECOVERY (the database was not shut down cleanly)")
	require.Regexp(t, `redo: \d+ records, .* of log from the checkpoint at LSN \d+ to LSN \d+; \d+ page changes: \d+ applied, \d+ already on their page; \d+ pages read`, out)
	require.Contains(t, out, "rollback: 1 unfinished transactions")
	require.Contains(t, out, "consistent")
	st, out, errs = enginelab("tpcc", "check", "--dir", dir)
	require.Zero(t, st, errs)
	require.NotContains(t, out, "RECOVERY")

	if raceEnabled {
		return // an export costs half a minute under the race detector
	}
	st, out, errs = enginelab("tpcc", "export", "--dir", cloneTo(t, image), "--out", t.TempDir())
	require.Zero(t, st, errs)
	require.Regexp(t, `^recovery: redid \d+ records .*rolled back 1 transactions`, out)
}
