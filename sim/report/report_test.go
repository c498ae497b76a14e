package report

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache/store"
	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/tpcc"
)

// A comparison prints each figure of each side and its ratio to the first
// side's; a side without the figure prints "-".
func TestComparisonTable(t *testing.T) {
	side := func(tpmc, fetches float64, withRun bool) *Report {
		r := &Report{Config: Config{Warehouses: 1, Terminals: 4, DurationSeconds: 30, Profile: "optimized", Org: "clustered"},
			Load:  &Load{RowsPerSecond: 100},
			Space: []Space{{Pages: 10}, {Pages: 30}}}
		if withRun {
			r.Run = &Run{TpmC: tpmc, TxPerMinute: 2 * tpmc}
			for k := range tpcc.NumTxTypes {
				r.Run.Types = append(r.Run.Types, Type{Type: tpcc.TxType(k).String(), Count: 1,
					PerTx: MeterAverages{RowFetches: fetches}})
			}
		}
		return r
	}
	cmp := &Comparison{Setting: "org", Values: []string{"clustered", "heap-rowptr", "heap-pk"},
		Sides: []*Report{side(1000, 2, true), side(900, 3, true), side(0, 0, false)}}
	var b strings.Builder
	require.NoError(t, cmp.WriteTable(&b))
	out := b.String()
	lines := map[string][]string{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) > 5 {
			lines[strings.Join(f[:len(f)-5], " ")] = f[len(f)-5:]
		}
	}
	require.Equal(t, []string{"1000", "900", "0.90", "-", "-"}, lines["tpmC"], out)
	require.Equal(t, []string{"2000", "1800", "0.90", "-", "-"}, lines["transactions/min"], out)
	require.Equal(t, []string{"40", "40", "1.00", "40", "1.00"}, lines["pages"], out)
	require.Equal(t, []string{"2.0", "3.0", "1.50", "-", "-"}, lines["payment row fetches/tx"], out)
	require.Contains(t, out, "ratios are against org=clustered")
	require.Contains(t, out, "org=heap-pk: no check")
	require.True(t, cmp.Passed())
	cmp.Sides[1].Run.Errors = []string{"terminal 0: boom"}
	require.False(t, cmp.Passed())
}

// The table form of a report carries the figures of its JSON form.
func TestReportTable(t *testing.T) {
	eff := 97.5
	r := &Report{Config: Config{Phases: "load+run+check", Mode: "real", Profile: "sysbench", Seed: 9, PoolPolicy: "lru"},
		Database: Database{Warehouses: 2, Org: "heap-pk", PageSize: 8192, PoolBytes: 64 << 20},
		Flags:    map[string]string{"seed": "9", "org": "heap-pk"},
		Load:     &Load{TotalRows: 1200000, ElapsedSeconds: 6, RowsPerSecond: 200000},
		Run: &Run{Terminals: 8, MeasuredSeconds: 30, TpmC: 25.08, TxPerMinute: 55.7, Efficiency: &eff,
			Types: []Type{{Type: "new-order", Count: 12, MixPct: 45, LatencyMs: Percentiles{P50: 1.5, P99: 9.25},
				PerTx: MeterAverages{NodeVisits: 150.5, LogBytes: 24000}},
				{Type: "payment", Count: 10, MixPct: 43, PerTx: MeterAverages{SortsAvoided: 0.6}}}},
		Space: []Space{{Table: "stock", Index: "heap", Pages: 7, Fill: 0.5}},
		Log:   &Log{Records: 5, Bytes: 2048, Syncs: 1, SyncedCommits: 3},
		Notes: []string{IsolationNote},
		Tier: &Tier{Backend: "slru", Mode: "inclusive", SizeBytes: 64 << 20, HitRate: 0.75, Gets: 8, Hits: 6,
			Stale: 1, Errors: 1, Puts: 9, Drops: 2, Deletes: 0, BytesIn: 6 << 14, BytesOut: 7 << 14},
		Background: &Background{ReadAheads: 128, ReadAheadUnused: 3, StoreReads: 129},
		FS: &FS{Load: NewFSSpan(engine.FSStats{Redo: store.FSCounts{Bytes: 3 << 20, Writes: 30}, Tables: store.FSCounts{Bytes: 5 << 20}}, 100, 3<<20, false),
			Run: NewFSSpan(engine.FSStats{Redo: store.FSCounts{Bytes: 2000, Writes: 7, Syncs: 5}, WAL: store.FSCounts{Bytes: 6000}}, 4, 1800, true)},
		Recovery: NewRecovery(engine.RecoveryStats{Records: 12, Pages: 20, PagesApplied: 15, PagesSkipped: 5, PagesRead: 9,
			CheckpointLSN: 32, EndLSN: 4128, Bytes: 4096, RolledBack: 1, Redo: 1500 * time.Millisecond})}
	require.Nil(t, NewRecovery(engine.RecoveryStats{}), "nothing recovered, no section")
	require.Equal(t, &FSBytesPerTx{Redo: 500, WAL: 1500, Total: 2000}, r.FS.Run.BytesPerTx)
	require.Equal(t, 450.0, r.FS.Run.LogBytesPerTx)
	var b strings.Builder
	require.NoError(t, r.WriteTable(&b))
	out := b.String()
	for _, w := range []string{"2 warehouses", "org heap-pk", "profile sysbench", "seed 9", "--org=heap-pk --seed=9",
		"page size 8192, pool 64 MiB (lru)", "1200000 rows in 6.00 s, 200000 rows/s", "new-order", "1.500", "9.250",
		"150.5", "24000", "tpmC 25", "efficiency 97.5% of 12.86 tpmC per warehouse", "SPACE: 7 pages", "50.0%",
		"5 records, 2.0 KiB, 1 syncs for 3 synced commits", "note: isolation: serializable: strict two-phase locking",
		"REMOTE TIER: slru (inclusive), 64 MiB: hit rate 75.0% (6 hits of 8 gets; 1 stale, 0 corrupt, 1 errors), 9 puts (2 dropped)",
		"128 pages read ahead (3 evicted unused)",
		"RECOVERY (the database was not shut down cleanly): 1.50 s (redo 1.50 s, rollback 0 µs, checkpoint 0 µs)",
		"redo: 12 records, 4.0 KiB of log from the checkpoint at LSN 32 to LSN 4128; 20 page changes: 15 applied, 5 already on their page; 9 pages read",
		"rollback: 1 unfinished transactions",
		"files written by the load: 8.0 MiB in 30 writes, 0 syncs (redo 3.0 MiB, wal 0 B, sst 5.0 MiB, pebble-meta 0 B, other 0 B)",
		"files written during the run, by class",
		"redo log: 1.8 KiB logged, 450 per committed transaction, over 4 commits"} {
		require.Contains(t, out, w)
	}
	require.NotContains(t, out, "cores busy", "no CPU time read, no cpu line")
	r.Host = Host{RunSeconds: 15, RunCPUSeconds: 27, RunCoresBusy: 1.8, GOMAXPROCS: 2}
	b.Reset()
	require.NoError(t, r.WriteTable(&b))
	require.Contains(t, b.String(), "\ncpu: 27.0 s over the run's 15.0 s, 1.80 cores busy of GOMAXPROCS 2 (")
	r.Config.LogBytes = 1088 << 20
	b.Reset()
	require.NoError(t, r.WriteTable(&b))
	require.Contains(t, b.String(), "page size 8192, pool 64 MiB (lru), redo log 1.1 GiB, heap update", "the log's capacity beside the pool")
	require.Contains(t, out, "ORDER BY per transaction")
	require.Regexp(t, `(?m)^\s+payment\s+0\.00\s+0\.60\s*$`, out, "payment's by-name reads: sorts avoided")
	require.NotRegexp(t, `(?m)^\s+new-order\s+0\.00\s+0\.00\s*$`, out, "no ORDER BY, no row")
	require.Regexp(t, `(?m)^\s+redo\s+2\.0 KiB\s+7\s+5\s+0\s+0\s+0\s+500\s*$`, out)
	require.Regexp(t, `(?m)^\s+wal\s+5\.9 KiB\s+0\s+0\s+0\s+0\s+0\s+1500\s*$`, out)
	require.Regexp(t, `(?m)^\s+total\s+7\.8 KiB\s+7\s+5\s+0\s+0\s+0\s+2000\s*$`, out)
}

// TestVersionsTable: the multi-versioning table shows the versioned
// heap's figures per transaction type, heap fetches, entries killed and
// pages pruned among them.
func TestVersionsTable(t *testing.T) {
	var b strings.Builder
	writeVersions(&b, []Type{{Type: "payment", SerializationFailures: 7, PerTx: MeterAverages{ConsistentReads: 3, HOTUpdates: 1.5,
		NonHOTUpdates: 0.5, HeapVersionsRead: 12.25, IndexOnlyHeapFetches: 0.75, EntriesKilled: 0.25, PagesPruned: 0.125}}})
	out := b.String()
	require.Contains(t, out, "heap fetches")
	require.Contains(t, out, "entries killed")
	require.Contains(t, out, "pages pruned")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3)
	require.Equal(t, []string{"payment", "0.00", "3.0", "0.00", "0.0", "1.50", "0.50", "12.25", "0.75", "0.25", "0.125", "0.000", "7"}, strings.Fields(lines[2]))
}
