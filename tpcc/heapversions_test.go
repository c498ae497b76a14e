package tpcc

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/engine"
)

// TestRunHeapVersions runs eight terminals under ReadCommitted and
// RepeatableRead on heap tables that keep PostgreSQL's row versions
// (engine.Options.HeapVersions), after a vacuum of every table as the
// kits run VACUUM after the load, and requires the consistency
// conditions to hold. Plain reads there are snapshot reads
// (ConsistentReads), updates of non-indexed columns HOT.
func TestRunHeapVersions(t *testing.T) {
	for _, org := range []engine.Org{engine.HeapRowPointer, engine.HeapPrimaryKey} {
		t.Run(org.String(), func(t *testing.T) {
			db, err := engine.Open(&engine.Options{Options: cache.Options{PoolSize: 512 << 20}, Commit: engine.NoSyncCommit, HeapVersions: engine.HeapVersionsOn})
			require.NoError(t, err)
			defer func() { require.NoError(t, db.Close()) }()
			_, err = Load(context.Background(), db, LoadConfig{Warehouses: 1, Scale: SmallScale, Seed: testSeed, Org: org})
			require.NoError(t, err)
			allVisible := 0
			for _, name := range db.Tables() {
				tb, err := db.Table(name)
				require.NoError(t, err)
				st, err := db.Vacuum(nil, tb)
				require.NoError(t, err)
				allVisible += st.PagesAllVisible
			}
			require.Positive(t, allVisible)
			for j, iso := range []engine.Isolation{engine.ReadCommitted, engine.RepeatableRead} {
				stats, err := Run(context.Background(), db, RunConfig{Warehouses: 1, Scale: SmallScale, Terminals: 8, Duration: time.Minute,
					Seed: 21 + uint64(j), LoadConstants: NewLoadConstants(testSeed), Isolation: iso,
					Env: frozenEnv{time.Unix(1_800_000_000, 0)}, Transactions: 60})
				require.NoError(t, err, "%s", iso)
				res := stats.Results
				require.Equal(t, int64(8*60), res.Total(), "%s: every terminal ran its budget", iso)
				var m engine.Meter
				var serial int64
				for k := range NumTxTypes {
					require.Positive(t, res.Types[k].Count, "%s: %s ran", iso, k)
					m.Add(&res.Types[k].Meter)
					serial += res.Types[k].SerializationFailures
				}
				require.Positive(t, m.ConsistentReads, "%s: plain reads are snapshot reads", iso)
				require.Positive(t, m.HeapHOTUpdates, "%s", iso)
				t.Logf("%s: %s; consistent reads %d, versions read %d, HOT %d, non-HOT %d, serialization failures %d (meter %d), index-only heap fetches %d, pages pruned %d, versions pruned %d, prunes skipped %d",
					iso, summary(res), m.ConsistentReads, m.HeapVersionsRead, m.HeapHOTUpdates, m.HeapNonHOTUpdates, serial, m.SerializationFailures, m.IndexOnlyHeapFetches,
					m.HeapPrunes, m.HeapTuplesPruned, m.HeapPruneSkipped)
				vm := db.VacuumMeter()
				require.NoError(t, db.VacuumErr())
				t.Logf("%s: background vacuum so far: %d runs, %d pages, %d pruned, %d versions removed, %d index entries removed, %d dead left",
					iso, vm.VacuumRuns, vm.VacuumPages, vm.VacuumPagesPruned, vm.VacuumTuplesRemoved, vm.VacuumIndexEntriesRemoved, vm.VacuumDeadTuples)
				rep, err := Check(db, CheckConfig{Scale: SmallScale})
				require.NoError(t, err)
				require.True(t, rep.Passed(), "%s: %s", iso, rep)
				// The indexes agree with the HOT chains their entries name.
				ctx := db.BeginTx(nil, engine.TxOptions{Isolation: engine.ReadCommitted})
				for _, name := range db.Tables() {
					tb, err := db.Table(name)
					require.NoError(t, err)
					require.NoError(t, tb.Check(ctx), "%s: %s", iso, name)
				}
				require.NoError(t, ctx.Commit())
			}
		})
	}
}

// TestHeapVersionsCheckExportBesideTerminals: on heap tables that keep
// versions, the engine's Check of every table, the consistency check and
// Export run over and over while four terminals run. Every engine Check
// passes, every consistency check passes (the conditions hold in every
// committed state, and the check reads one snapshot), and every export
// is one committed state: the orders it wrote without a carrier are
// exactly the new_order rows it wrote (condition 3.3.2.5, read from the
// files). Run it with -race.
func TestHeapVersionsCheckExportBesideTerminals(t *testing.T) {
	for _, org := range []engine.Org{engine.HeapRowPointer, engine.HeapPrimaryKey} {
		t.Run(org.String(), func(t *testing.T) {
			db, err := engine.Open(&engine.Options{Options: cache.Options{PoolSize: 256 << 20}, Commit: engine.NoSyncCommit, HeapVersions: engine.HeapVersionsOn})
			require.NoError(t, err)
			defer func() { require.NoError(t, db.Close()) }()
			_, err = Load(context.Background(), db, LoadConfig{Warehouses: 1, Scale: SmallScale, Seed: testSeed, Org: org})
			require.NoError(t, err)
			runErr := make(chan error, 1)
			go func() {
				_, err := Run(context.Background(), db, RunConfig{Warehouses: 1, Scale: SmallScale, Terminals: 4, Duration: time.Minute,
					Seed: 31, LoadConstants: NewLoadConstants(testSeed), Isolation: engine.RepeatableRead,
					Env: frozenEnv{time.Unix(1_800_000_000, 0)}, Transactions: 600})
				runErr <- err
			}()
			rounds := 0
			var err2 error
			for running := true; running; rounds++ {
				select {
				case err2 = <-runErr:
					running = false // one more round, after the run
				default:
				}
				ctx := db.BeginTx(nil, engine.TxOptions{Isolation: engine.ReadCommitted})
				for _, name := range db.Tables() {
					tb, err := db.Table(name)
					require.NoError(t, err)
					require.NoError(t, tb.Check(ctx), "round %d: %s", rounds, name)
				}
				require.NoError(t, ctx.Commit())
				rep, err := Check(db, CheckConfig{Scale: SmallScale})
				require.NoError(t, err)
				require.True(t, rep.Passed(), "round %d: %s", rounds, rep)
				dir := t.TempDir()
				_, err = Export(db, dir, ExportConfig{})
				require.NoError(t, err, "round %d", rounds)
				undelivered := csvKeys(t, filepath.Join(dir, Orders+".csv"), "o_carrier_id", "o_w_id", "o_d_id", "o_id")
				newOrders := csvKeys(t, filepath.Join(dir, NewOrder+".csv"), "", "no_w_id", "no_d_id", "no_o_id")
				require.Equal(t, newOrders, undelivered, "round %d: the orders without a carrier are the new_order rows", rounds)
			}
			require.NoError(t, err2)
			t.Logf("%s: %d rounds of Check, consistency check and export beside the terminals", org, rounds)
		})
	}
}

// csvKeys reads the CSV file path (with a header) and returns the keys
// (the named columns, joined) of its rows whose column empty is empty
// ("": every row).
func csvKeys(t *testing.T, path, empty string, key ...string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	col := map[string]int{}
	for i, name := range recs[0] {
		col[name] = i
	}
	keys := map[string]bool{}
	for _, r := range recs[1:] {
		if empty != "" && r[col[empty]] != "" {
			continue
		}
		var k []string
		for _, name := range key {
			k = append(k, r[col[name]])
		}
		keys[strings.Join(k, ",")] = true
	}
	return keys
}
