package tpcc

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/engine"
)

// frozenEnv never lets time pass: a run then ends by its transaction
// budget, the same for every terminal.
type frozenEnv struct{ t time.Time }

func (e frozenEnv) Now() time.Time      { return e.t }
func (e frozenEnv) Sleep(time.Duration) {}

// TestRunConsistent runs eight concurrent terminals on a loaded warehouse,
// in each organization and each profile, under Serializable (strict
// two-phase locking: every read locks, shared; deadlocks are retried;
// TestRunConsistentLevels runs the other levels), and requires the
// consistency conditions to hold after the run and every read to have
// locked (no consistent read). It uses the shared W=1 loads at small
// scale (the population test of the small scale, in a file sorted before
// this one, has read the clustered one as loaded by then): what it tests
// is the terminals' concurrency, which the race detector should see, not
// the population's size. A run at another scale than the database's is
// refused before it starts.
func TestRunConsistent(t *testing.T) {
	for _, org := range []engine.Org{engine.Clustered, engine.HeapRowPointer, engine.HeapPrimaryKey} {
		t.Run(org.String(), func(t *testing.T) {
			db, _ := loadSmall(t, org)
			_, err := Run(context.Background(), db, RunConfig{Warehouses: 1, Duration: time.Minute,
				LoadConstants: NewLoadConstants(testSeed), Transactions: 1})
			require.ErrorIs(t, err, ErrInvalidConfig, "a full-scale run on a small database")
			require.ErrorContains(t, err, "a run at full scale on a database loaded at small scale")
			for _, p := range []Profile{Optimized, Sysbench, BenchmarkSQL} {
				stats, err := Run(context.Background(), db, RunConfig{Warehouses: 1, Scale: SmallScale, Terminals: 8, Duration: time.Minute,
					Seed: 7, LoadConstants: NewLoadConstants(testSeed), Profile: p, Isolation: engine.Serializable,
					Env: frozenEnv{time.Unix(1_800_000_000, 0)}, Transactions: 60})
				require.NoError(t, err, "%s", p)
				res := stats.Results
				require.Equal(t, int64(8*60), res.Total(), "%s: every terminal ran its budget", p)
				for k := range NumTxTypes {
					require.Positive(t, res.Types[k].Count, "%s: %s ran", p, k)
					require.Zero(t, res.Types[k].Meter.ConsistentReads, "%s: %s: Serializable reads lock", p, k)
					require.Positive(t, res.Types[k].Meter.LockRequests, "%s: %s locked what it read", p, k)
				}
				t.Logf("%s: %s", p, summary(res))
			}
			rep, err := Check(db, CheckConfig{Scale: SmallScale})
			require.NoError(t, err)
			require.True(t, rep.Passed(), "%s", rep)
		})
	}
}

func summary(r *Results) string {
	s := ""
	for k := range NumTxTypes {
		x := &r.Types[k]
		s += fmt.Sprintf("%s %d (retries %d, rollbacks %d, skipped %d) ", TxType(k), x.Count, x.Retries, x.Rollbacks, x.Skipped)
	}
	return s
}

// The run refuses a bad configuration before it starts.
func TestRunBadConfig(t *testing.T) {
	db, err := engine.Open(&engine.Options{})
	require.NoError(t, err)
	defer db.Close()
	for _, c := range []RunConfig{
		{Warehouses: 0, Duration: time.Second},
		{Warehouses: 1, Terminals: 256, Duration: time.Second},
		{Warehouses: 1, Duration: 0},
		{Warehouses: 1, Duration: time.Second, Warmup: -1},
		{Warehouses: 1, Duration: time.Second, Scale: Scale{Items: -1}},
		{Warehouses: 1, Duration: time.Second, Scale: Scale{CustomersPerDistrict: 301}},
	} {
		_, err := Run(context.Background(), db, c)
		require.ErrorIs(t, err, ErrInvalidConfig, "%+v", c)
	}
	_, err = Run(context.Background(), db, RunConfig{Warehouses: 1, Duration: time.Second})
	require.ErrorIs(t, err, engine.ErrUnknownTable, "a database not loaded")
}

// BenchmarkRun measures whole in-process runs: one warehouse loaded in
// memory (outside the timer), then four terminals without keying or think
// times, each running b.N transactions. It reports tpmC and transactions
// per minute from the elapsed wall time.
//
//	go test -run '^$' -bench BenchmarkRun -benchtime 2000x -count 1 ./tpcc/
func BenchmarkRun(b *testing.B) {
	for _, org := range []engine.Org{engine.Clustered, engine.HeapRowPointer, engine.HeapPrimaryKey} {
		b.Run("org="+org.String(), func(b *testing.B) {
			db, err := engine.Open(&engine.Options{Options: cache.Options{PoolSize: 1 << 30}, Commit: engine.NoSyncCommit})
			require.NoError(b, err)
			defer db.Close()
			_, err = Load(context.Background(), db, LoadConfig{Warehouses: 1, Seed: testSeed, Org: org})
			require.NoError(b, err)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			stats, err := Run(context.Background(), db, RunConfig{Warehouses: 1, Terminals: 4, Duration: time.Hour,
				Seed: 7, LoadConstants: NewLoadConstants(testSeed), Transactions: b.N})
			elapsed := time.Since(start)
			b.StopTimer()
			require.NoError(b, err)
			res := stats.Results
			b.ReportMetric(float64(res.Types[NewOrderTx].Count)/elapsed.Minutes(), "tpmC")
			b.ReportMetric(float64(res.Total())/elapsed.Minutes(), "tx/min")
			b.ReportMetric(float64(res.Types[NewOrderTx].Meter.LogBytes)/float64(max(1, res.Types[NewOrderTx].Count)), "log-bytes/new-order")
		})
	}
}

// BenchmarkRunLevels is BenchmarkRun on the clustered organization at
// 1, 4 and 16 terminals under Serializable and RepeatableRead: how
// throughput scales with terminals when plain reads lock and when they
// read a snapshot. Each terminal runs b.N transactions. Profile one with
// -cpuprofile or -mutexprofile:
//
//	go test -run '^$' -bench 'BenchmarkRunLevels/iso=repeatable-read/terminals=16' -benchtime 2000x -cpuprofile cpu.out ./tpcc/
func BenchmarkRunLevels(b *testing.B) {
	for _, iso := range []engine.Isolation{engine.Serializable, engine.RepeatableRead} {
		for _, terms := range []int{1, 4, 16} {
			b.Run(fmt.Sprintf("iso=%s/terminals=%d", iso, terms), func(b *testing.B) {
				db, err := engine.Open(&engine.Options{Options: cache.Options{PoolSize: 1 << 30}, Commit: engine.NoSyncCommit})
				require.NoError(b, err)
				defer db.Close()
				_, err = Load(context.Background(), db, LoadConfig{Warehouses: 1, Seed: testSeed})
				require.NoError(b, err)
				b.ReportAllocs()
				b.ResetTimer()
				start := time.Now()
				stats, err := Run(context.Background(), db, RunConfig{Warehouses: 1, Terminals: terms, Duration: time.Hour,
					Seed: 7, LoadConstants: NewLoadConstants(testSeed), Isolation: iso, Transactions: b.N})
				elapsed := time.Since(start)
				b.StopTimer()
				require.NoError(b, err)
				res := stats.Results
				var retries int64
				for k := range NumTxTypes {
					retries += res.Types[k].Retries
				}
				b.ReportMetric(float64(res.Types[NewOrderTx].Count)/elapsed.Minutes(), "tpmC")
				b.ReportMetric(float64(retries)/float64(max(1, res.Total())), "retries/tx")
			})
		}
	}
}

// TestRunConsistentLevels runs eight concurrent terminals under
// ReadCommitted and RepeatableRead, in each organization (a profile each,
// so that every profile meets both levels across the organizations), and
// requires the consistency conditions to hold after each run: the
// transactions' locking reads (FOR UPDATE) are what keeps d_next_o_id,
// the year-to-date sums and the balances right when their plain reads
// take no lock. (Serializable is TestRunConsistent's.) The heap
// organizations keep PostgreSQL's row versions (the default), so their
// plain reads read a snapshot too, and a write to a row changed since
// the snapshot fails and is retried.
func TestRunConsistentLevels(t *testing.T) {
	profiles := []Profile{Optimized, Sysbench, BenchmarkSQL}
	for i, org := range []engine.Org{engine.Clustered, engine.HeapRowPointer, engine.HeapPrimaryKey} {
		t.Run(org.String(), func(t *testing.T) {
			db, _ := loadSmall(t, org)
			for j, iso := range []engine.Isolation{engine.ReadCommitted, engine.RepeatableRead} {
				p := profiles[(i+j)%len(profiles)]
				stats, err := Run(context.Background(), db, RunConfig{Warehouses: 1, Scale: SmallScale, Terminals: 8, Duration: time.Minute,
					Seed: 11 + uint64(j), LoadConstants: NewLoadConstants(testSeed), Profile: p, Isolation: iso,
					Env: frozenEnv{time.Unix(1_800_000_000, 0)}, Transactions: 60})
				require.NoError(t, err, "%s %s", iso, p)
				res := stats.Results
				require.Equal(t, int64(8*60), res.Total(), "%s %s: every terminal ran its budget", iso, p)
				var consistent int64
				for k := range NumTxTypes {
					require.Positive(t, res.Types[k].Count, "%s %s: %s ran", iso, p, k)
					consistent += res.Types[k].Meter.ConsistentReads
				}
				// The read-only transactions read without a lock, as the
				// kits' plain SELECTs do.
				require.Zero(t, res.Types[OrderStatusTx].Meter.LockRequests, "%s %s: Order-Status locks nothing", iso, p)
				require.Zero(t, res.Types[StockLevelTx].Meter.LockRequests, "%s %s: Stock-Level locks nothing", iso, p)
				require.Positive(t, consistent, "%s: plain reads are consistent reads (clustered: undo versions; heap: versions in the heap)", iso)
				t.Logf("%s %s: %s", iso, p, summary(res))
				rep, err := Check(db, CheckConfig{Scale: SmallScale})
				require.NoError(t, err)
				require.True(t, rep.Passed(), "%s %s: %s", iso, p, rep)
			}
		})
	}
}

// TestCheckWhileRunning runs Check again and again while eight terminals
// run under RepeatableRead on the clustered organization: it reads one
// snapshot, a committed state of the database, so every condition holds
// in every Check however the terminals' commits fall between its reads,
// and its reads take no lock.
func TestCheckWhileRunning(t *testing.T) {
	// Delivery's NEW_ORDER deletes must stay visible to an older read
	// view (the clustered index delete-marks rows), or condition 5 would
	// break in the snapshot.
	require.True(t, deletesKeepVersions(t), "a consistent read must see a row deleted after its read view")
	checks := 0
	whileRunning(t, func(db *engine.DB) {
		m := &engine.Meter{}
		rep, err := Check(db, CheckConfig{Scale: SmallScale, Meter: m})
		require.NoError(t, err)
		require.True(t, rep.Passed(), "check %d: %s", checks, rep)
		require.Zero(t, m.LockRequests, "a snapshot check takes no lock")
		require.Positive(t, m.ConsistentReads)
		require.Equal(t, int64(1), m.ReadViews, "one read view: one snapshot")
		checks++
	})
	require.GreaterOrEqual(t, checks, 2, "at least one check ran while the terminals ran")
}

// TestExportWhileRunning runs Export again and again while eight
// terminals run under RepeatableRead on the clustered organization: it
// reads one snapshot in chunks, so the exported DISTRICT and ORDERS agree
// (condition 2's d_next_o_id - 1 = max(o_id)) however New-Orders commit
// between its chunks.
func TestExportWhileRunning(t *testing.T) {
	exports := 0
	dir := t.TempDir()
	whileRunning(t, func(db *engine.DB) {
		_, err := Export(db, dir, ExportConfig{RowsPerTx: 500})
		require.NoError(t, err)
		requireExportNextOID(t, dir)
		exports++
	})
	require.GreaterOrEqual(t, exports, 2, "at least one export ran while the terminals ran")
}

// whileRunning loads a small clustered W = 1 database of its own, runs
// eight terminals on it under RepeatableRead, and calls fn again and
// again with it until they have run their budget, and once more after.
func whileRunning(t *testing.T, fn func(db *engine.DB)) {
	t.Helper()
	db, err := engine.Open(&engine.Options{Options: cache.Options{PoolSize: 256 << 20}, Commit: engine.NoSyncCommit})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	_, err = Load(context.Background(), db, LoadConfig{Warehouses: 1, Scale: SmallScale, Seed: testSeed, Org: engine.Clustered})
	require.NoError(t, err)
	done := make(chan error, 1)
	n := 150
	if raceEnabled {
		n = 60
	}
	go func() {
		_, err := Run(context.Background(), db, RunConfig{Warehouses: 1, Scale: SmallScale, Terminals: 8, Duration: time.Minute,
			Seed: 5, LoadConstants: NewLoadConstants(testSeed), Isolation: engine.RepeatableRead,
			Env: frozenEnv{time.Unix(1_800_000_000, 0)}, Transactions: n})
		done <- err
	}()
	for running := true; running; {
		select {
		case err := <-done:
			require.NoError(t, err)
			running = false
		default:
		}
		fn(db)
	}
}

// deletesKeepVersions says whether a consistent read still sees a row
// that another transaction deleted after the read's view was opened, as
// it must for a snapshot Check (Delivery deletes NEW_ORDER rows).
func deletesKeepVersions(t *testing.T) bool {
	db, err := engine.Open(&engine.Options{Options: cache.Options{PoolSize: 8 << 20}})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	tb, err := db.CreateTable(engine.Table{Name: "probe", Columns: []engine.Column{{Name: "id", Type: engine.TypeInt}},
		PrimaryKey: []string{"id"}, Org: engine.Clustered})
	require.NoError(t, err)
	w := db.Begin(nil)
	require.NoError(t, w.Insert(tb, engine.Row{engine.Int(1)}))
	require.NoError(t, w.Insert(tb, engine.Row{engine.Int(2)}))
	require.NoError(t, w.Commit())
	r := db.BeginTx(nil, engine.TxOptions{Isolation: engine.RepeatableRead})
	defer func() { require.NoError(t, r.Commit()) }()
	_, found, err := r.Get(tb, []engine.Value{engine.Int(2)}, nil) // opens the view
	require.NoError(t, err)
	require.True(t, found)
	d := db.Begin(nil)
	require.NoError(t, d.Delete(tb, []engine.Value{engine.Int(1)}))
	require.NoError(t, d.Commit())
	_, found, err = r.Get(tb, []engine.Value{engine.Int(1)}, nil)
	require.NoError(t, err)
	return found
}

// requireExportNextOID reads the spec schema's district.csv and
// orders.csv in dir and requires d_next_o_id - 1 = max(o_id) in every
// district: true of any committed state.
func requireExportNextOID(t *testing.T, dir string) {
	t.Helper()
	read := func(name string) [][]string {
		f, err := os.Open(filepath.Join(dir, name))
		require.NoError(t, err)
		defer f.Close()
		recs, err := csv.NewReader(f).ReadAll()
		require.NoError(t, err)
		return recs
	}
	col := func(hdr []string, name string) int {
		i := slices.Index(hdr, name)
		require.GreaterOrEqual(t, i, 0, "column %s", name)
		return i
	}
	dist := read("district.csv")
	next := map[[2]string]int64{}
	dw, dd, dn := col(dist[0], "d_w_id"), col(dist[0], "d_id"), col(dist[0], "d_next_o_id")
	for _, r := range dist[1:] {
		v, err := strconv.ParseInt(r[dn], 10, 64)
		require.NoError(t, err)
		next[[2]string{r[dw], r[dd]}] = v
	}
	ord := read("orders.csv")
	maxOID := map[[2]string]int64{}
	ow, od, oi := col(ord[0], "o_w_id"), col(ord[0], "o_d_id"), col(ord[0], "o_id")
	for _, r := range ord[1:] {
		v, err := strconv.ParseInt(r[oi], 10, 64)
		require.NoError(t, err)
		k := [2]string{r[ow], r[od]}
		maxOID[k] = max(maxOID[k], v)
	}
	require.Len(t, next, DistrictsPerWarehouse)
	for k, v := range next {
		require.Equal(t, v-1, maxOID[k], "district %v: d_next_o_id - 1 = max(o_id) in the export", k)
	}
}

// TestRunConsistentSingleVersion: heap tables created with
// engine.HeapVersionsOff keep one version of each row, so every plain
// read locks, whatever the level (no consistent read at all), and the
// consistency conditions hold after runs of eight terminals in each
// profile.
func TestRunConsistentSingleVersion(t *testing.T) {
	for _, org := range []engine.Org{engine.HeapRowPointer, engine.HeapPrimaryKey} {
		t.Run(org.String(), func(t *testing.T) {
			db, err := engine.Open(&engine.Options{Options: cache.Options{PoolSize: 256 << 20}, Commit: engine.NoSyncCommit,
				HeapVersions: engine.HeapVersionsOff})
			require.NoError(t, err)
			defer func() { require.NoError(t, db.Close()) }()
			_, err = Load(context.Background(), db, LoadConfig{Warehouses: 1, Scale: SmallScale, Seed: testSeed, Org: org})
			require.NoError(t, err)
			l, err := ReadLoaded(db)
			require.NoError(t, err)
			require.False(t, l.HeapVersions)
			for i, p := range []Profile{Optimized, Sysbench, BenchmarkSQL} {
				stats, err := Run(context.Background(), db, RunConfig{Warehouses: 1, Scale: SmallScale, Terminals: 8, Duration: time.Minute,
					Seed: 21 + uint64(i), LoadConstants: NewLoadConstants(testSeed), Profile: p, Isolation: engine.RepeatableRead,
					Env: frozenEnv{time.Unix(1_800_000_000, 0)}, Transactions: 40})
				require.NoError(t, err, "%s", p)
				res := stats.Results
				require.Equal(t, int64(8*40), res.Total(), "%s: every terminal ran its budget", p)
				for k := range NumTxTypes {
					require.Positive(t, res.Types[k].Count, "%s: %s ran", p, k)
					require.Zero(t, res.Types[k].Meter.ConsistentReads, "%s %s: single-version heap tables lock their plain reads", p, k)
					require.Zero(t, res.Types[k].Meter.HeapVersionsRead, "%s %s: no versions", p, k)
				}
				t.Logf("%s: %s", p, summary(res))
			}
			rep, err := Check(db, CheckConfig{Scale: SmallScale})
			require.NoError(t, err)
			require.True(t, rep.Passed(), "%s", rep)
		})
	}
}
