package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim/report"
	"github.com/enginelab/enginelab/tpcc"
)

// enginelab runs the command with args and returns its exit status and
// outputs.
func enginelab(args ...string) (int, string, string) {
	var out, errs bytes.Buffer
	st := run(args, &out, &errs)
	return st, out.String(), errs.String()
}

// --help documents every flag of each subcommand.
func TestTPCCHelp(t *testing.T) {
	for sub, flags := range map[string][]string{
		"": {"warehouses", "scale", "terminals", "duration", "warmup", "org", "profile", "count-rewrite", "page-size", "pool", "pool-policy", "heap-update", "sync-commit", "seed", "dir", "json", "compare", "keying-think", "stocklevel-no-lower-bound", "check", "quiet", "remote", "remote-mode", "remote-size", "read-ahead",
			"read-ahead-linear", "read-ahead-threshold", "random-read-ahead", "flushing", "waffle", "waffle-set-queue", "waffle-keep-on-read",
			"slab-pointer-size", "slab-mru-patch",
			"pool-populate", "memtable-size", "block-cache", "mode", "cores", "cpu", "store-device", "log-device", "network", "profiles",
			"isolation", "early-lock-release", "cpuprofile", "html", "steps", "interval"},
		"load":   {"warehouses", "scale", "org", "page-size", "pool", "seed", "dir", "json", "mode"},
		"run":    {"terminals", "duration", "warmup", "profile", "count-rewrite", "seed", "dir", "json", "mode", "store-device", "network", "isolation", "early-lock-release", "html", "steps", "interval"},
		"check":  {"dir", "json"},
		"export": {"dir", "out", "null", "schema"},
	} {
		args := []string{"tpcc"}
		if sub != "" {
			args = append(args, sub)
		}
		st, out, _ := enginelab(append(args, "--help")...)
		require.Zero(t, st, sub)
		for _, f := range flags {
			require.Regexp(t, `(?m)^  -`+f+`( |$)`, out, "%s: --%s documented", sub, f)
		}
	}
	st, out, _ := enginelab("help")
	require.Zero(t, st)
	require.Contains(t, out, "tpcc export --dir D --out O")
	st, _, errs := enginelab()
	require.Equal(t, 2, st)
	require.Contains(t, errs, "usage: enginelab <command>")
}

// Bad flags are refused before anything is loaded, naming the flag and
// what it accepts.
func TestTPCCBadFlags(t *testing.T) {
	full := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(full, "x"), nil, 0o644))
	empty := t.TempDir()
	bare := t.TempDir() // a database without the TPC-C tables
	db, err := engine.Open(&engine.Options{Dir: bare})
	require.NoError(t, err)
	require.NoError(t, db.Close())
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--org", "myisam"}, []string{"-org", "clustered, heap-rowptr, heap-pk"}},
		{[]string{"--scale", "huge"}, []string{"-scale", "want one of full, small"}},
		{[]string{"load", "--scale", "tiny", "--dir", empty}, []string{"-scale", "want one of full, small"}},
		{[]string{"run", "--scale", "small", "--dir", empty}, []string{"flag provided but not defined: -scale"}},
		{[]string{"--profile", "hammerdb"}, []string{"-profile", "optimized, sysbench, benchmarksql"}},
		{[]string{"--mode", "sim", "--client", "odbc"}, []string{"--client", "odbc", "mariadb-connector, mysql-jdbc, pgjdbc"}},
		{[]string{"--mode", "sim", "--client", "pgjdbc,fetch-size=-3"}, []string{"--client pgjdbc,fetch-size=-3", "fetch-size=N"}},
		{[]string{"--client", "mysql-jdbc"}, []string{"--client", "--mode sim"}},
		{[]string{"--pool", "12XB"}, []string{"-pool", "64MiB"}},
		{[]string{"--pool-policy", "fifo"}, []string{"-pool-policy", "midpoint, lru"}},
		{[]string{"--heap-update", "hot"}, []string{"-heap-update", "in-place, new-version"}},
		{[]string{"--warehouses", "0"}, []string{"--warehouses 0", "want 1 to"}},
		{[]string{"--warehouses", "x"}, []string{"-warehouses", "parse error"}},
		{[]string{"--terminals", "0"}, []string{"--terminals 0", "want 1 to 255"}},
		{[]string{"--terminals", "256"}, []string{"--terminals 256", "255 per warehouse"}},
		{[]string{"--duration", "0s"}, []string{"--duration 0s", "more than zero"}},
		{[]string{"--warmup", "-1s"}, []string{"--warmup -1s"}},
		{[]string{"--page-size", "1000"}, []string{"page size 1000", "power of two"}},
		{[]string{"--pool", "1KiB"}, []string{"pool"}},
		{[]string{"--memtable-size", "1KiB"}, []string{"--memtable-size", "memtable size 1024", "want 1048576 to"}},
		{[]string{"--memtable-size", "8GiB"}, []string{"--memtable-size", "memtable size 8589934592"}},
		{[]string{"--block-cache", "lots"}, []string{"-block-cache", "64MiB"}},
		{[]string{"--remote", "redis"}, []string{"-remote", "none, ristretto, lru, slru, memcached=host:port"}},
		{[]string{"--remote", "memcached"}, []string{"-remote", "memcached=host:port"}},
		{[]string{"--remote", "memcached=127.0.0.1:1"}, []string{"--remote memcached=127.0.0.1:1", "127.0.0.1:1"}},
		{[]string{"--remote-mode", "both"}, []string{"-remote-mode", "exclusive, inclusive"}},
		{[]string{"--remote-size", "lots"}, []string{"-remote-size", "64MiB"}},
		{[]string{"--read-ahead", "yes"}, []string{"-read-ahead", "on, off"}},
		{[]string{"--waffle", "mru"}, []string{"-waffle", "none, lru, non-lru"}},
		{[]string{"--flushing", "5.0"}, []string{"-flushing", "cleaner, 5.1"}},
		{[]string{"--read-ahead-linear", "5.0"}, []string{"-read-ahead-linear", "pool, 5.1, plugin"}},
		{[]string{"--remote", "memcached-1.2.5", "--slab-pointer-size", "5"}, []string{"--slab-pointer-size 5", "want 4"}},
		{[]string{"--remote", "lru", "--slab-mru-patch"}, []string{"need a memcached model", "not lru"}},
		{[]string{"--remote", "lru", "--waffle", "non-lru", "--waffle-set-queue", "4"}, []string{"WaffleSetQueue"}},
		{[]string{"--remote", "lru", "--waffle", "lru", "--remote-mode", "inclusive"}, []string{"contradicts"}},
		{[]string{"--isolation", "snapshot"}, []string{"-isolation", "read-committed, repeatable-read, serializable"}},
		{[]string{"--early-lock-release", "maybe"}, []string{"-early-lock-release", "true, false"}},
		{[]string{"--compare", "org", "--cpuprofile", filepath.Join(empty, "cpu.out")}, []string{"--cpuprofile of one run"}},
		{[]string{"--compare", "bogus"}, []string{"--compare bogus", "org, ", "profile"}},
		{[]string{"--compare", "pool"}, []string{"--compare pool", "pool=V1,V2"}},
		{[]string{"--compare", "terminals=4"}, []string{"at least two values"}},
		{[]string{"--compare", "org", "--dir", empty}, []string{"no --dir"}},
		{[]string{"--compare", "terminals=1,0"}, []string{"--compare terminals=0", "--terminals 0"}},
		{[]string{"--dir", full}, []string{"not empty", full}},
		{[]string{"stray"}, []string{"unknown subcommand \"stray\""}},
		{[]string{"--json", "stray"}, []string{"unexpected argument \"stray\""}},
		{[]string{"run"}, []string{"--dir is required"}},
		{[]string{"run", "--dir", empty}, []string{"holds no database", "tpcc load --dir"}},
		{[]string{"check", "--dir", empty}, []string{"holds no database"}},
		{[]string{"load", "--dir", full}, []string{"not empty"}},
		{[]string{"export", "--dir", empty}, []string{"--dir and --out are required"}},
		{[]string{"export", "--dir", empty, "--out", t.TempDir()}, []string{"holds no database"}},
		{[]string{"export", "--dir", full, "--out", t.TempDir(), "--schema", "hammerdb"}, []string{"-schema", "spec, go-tpc, benchmarksql"}},
		{[]string{"export", "--dir", full, "--out", t.TempDir(), "--null", "a,b"}, []string{"NullString \"a,b\""}},
		{[]string{"export", "--dir", bare, "--out", filepath.Join(empty, "out")}, []string{"not loaded", "no table item"}},
		{[]string{"--mode", "fast"}, []string{"-mode", "real, sim"}},
		{[]string{"--mode", "sim", "--remote", "ristretto"}, []string{"--remote ristretto cannot run in simulated mode", "lru or slru"}},
		{[]string{"--mode", "sim", "--remote", "memcached=127.0.0.1:11211"}, []string{"cannot run in simulated mode"}},
		{[]string{"--mode", "sim", "--store-device", "floppy"}, []string{`store device "floppy"`, "disk-2009, nvme-plp, nvme-ssd, ram, sata-ssd"}},
		{[]string{"--mode", "sim", "--log-device", "floppy"}, []string{`log device "floppy"`}},
		{[]string{"--mode", "sim", "--network", "carrier-pigeon"}, []string{`network "carrier-pigeon"`, "10-gigabit, gigabit"}},
		{[]string{"--mode", "sim", "--cores", "0"}, []string{"--cores 0"}},
		{[]string{"--mode", "sim", "--cpu", "z80"}, []string{`cpu "z80"`}},
		{[]string{"--mode", "sim", "--profiles", filepath.Join(empty, "none.json")}, []string{"--profiles", "none.json"}},
	} {
		st, out, errs := enginelab(append([]string{"tpcc"}, tc.args...)...)
		require.Equal(t, 2, st, "%v: %s", tc.args, errs)
		require.Empty(t, out, "%v: no report", tc.args)
		for _, w := range tc.want {
			require.Contains(t, errs, w, "%v", tc.args)
		}
	}
	ents, err := os.ReadDir(empty)
	require.NoError(t, err)
	require.Empty(t, ents, "nothing was created")
}

// A stored database: load, run, check and export it as separate commands,
// as a user would; each report passes its consistency check. The load is
// at small scale, which the database keeps: run and check follow it
// without being told.
func TestTPCCStoredDatabase(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	var rep report.Report
	st, out, errs := enginelab("tpcc", "load", "--dir", dir, "--json", "--seed", "3", "--sync-commit=false", "--scale", "small")
	require.Zero(t, st, errs)
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.NotNil(t, rep.Load)
	require.EqualValues(t, 10_000, rep.Load.Rows[tpcc.Item])
	require.EqualValues(t, 3_000, rep.Load.Rows[tpcc.Customer])
	require.EqualValues(t, 900, rep.Load.Rows[tpcc.NewOrder])
	require.Equal(t, "small", rep.Config.Scale)
	require.Equal(t, "small", rep.Database.Scale)
	require.Equal(t, "small", rep.Flags["scale"])
	require.EqualValues(t, 210, rep.Check.DeliveredPerDistrict)
	require.Positive(t, rep.Load.RowsPerSecond)
	require.True(t, rep.Check.Passed(), "%s", rep.Check)
	require.True(t, rep.Check.Fresh, "a fresh load checks condition 11")
	require.Nil(t, rep.Run)
	require.Equal(t, "load+check", rep.Config.Phases)
	require.Equal(t, "3", rep.Flags["seed"])
	require.NotEmpty(t, rep.Space)
	require.Nil(t, rep.Recovery, "a new database recovers nothing")
	require.NotNil(t, rep.FS)
	require.NotNil(t, rep.FS.Load, "the files the load wrote")
	require.Positive(t, rep.FS.Load.Classes.Redo.Bytes)
	require.Equal(t, rep.FS.Load.Classes.Total(), rep.FS.Load.Total)
	require.Nil(t, rep.FS.Load.BytesPerTx, "per transaction: the run's only")

	st, _, errs = enginelab("tpcc", "load", "--dir", dir)
	require.Equal(t, 2, st)
	require.Contains(t, errs, "not empty")

	st, _, errs = enginelab("tpcc", "run", "--dir", dir, "--warehouses", "2", "--duration", "1s")
	require.Equal(t, 2, st)
	require.Contains(t, errs, "--warehouses 2, but the database")

	rep = report.Report{}
	st, out, errs = enginelab("tpcc", "run", "--dir", dir, "--json", "--duration", "1s", "--terminals", "2",
		"--profile", "benchmarksql", "--sync-commit=false", "--isolation", "repeatable-read")
	require.Zero(t, st, errs)
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, "repeatable-read", rep.Config.Isolation)
	require.True(t, rep.Config.EarlyLockRelease, "the stored organization's default: clustered, InnoDB's early release")
	require.NotNil(t, rep.Purge)
	require.Contains(t, rep.Notes[0], "isolation: repeatable-read")
	require.Equal(t, "order-status", rep.Run.Types[tpcc.OrderStatusTx].Type)
	require.NotNil(t, rep.Run)
	require.Nil(t, rep.Load)
	require.Equal(t, 1, rep.Database.Warehouses, "as loaded")
	require.Equal(t, "small", rep.Database.Scale, "as loaded")
	require.Equal(t, "small", rep.Config.Scale)
	require.EqualValues(t, 3, rep.Database.LoadSeed)
	require.Len(t, rep.Run.Types, 5)
	var total int64
	for _, ty := range rep.Run.Types {
		total += ty.Count
	}
	require.Positive(t, total, "transactions ran")
	// Plain reads are consistent reads: New-Order's warehouse, customer
	// and items, a by-name lookup, Order-Status and Stock-Level take no
	// lock. (Summed over the types: in a one-second run under the race
	// detector a type of a 4% share may not complete once.)
	consistent := 0.0
	for _, ty := range rep.Run.Types {
		consistent += ty.PerTx.ConsistentReads * float64(ty.Count)
	}
	require.Positive(t, consistent, "plain reads take no lock")
	require.True(t, rep.Check.Passed(), "%s", rep.Check)
	require.False(t, rep.Check.Fresh)

	// The same database in simulated mode, through the command: the
	// table shows where the time went, on the hardware named. (A pool of
	// a sixth of the small database, so that the tier serves.)
	st, out, errs = enginelab("tpcc", "run", "--dir", dir, "--mode", "sim", "--duration", "500ms", "--terminals", "2",
		"--store-device", "sata-ssd", "--remote", "lru", "--pool", "1600KiB", "--check=false")
	require.Zero(t, st, errs)
	for _, w := range []string{"1 warehouse at small scale, sim", "simulated hardware: 4 cores (cpu profile default), store sata-ssd, log sata-ssd, network 10-gigabit",
		"virtual time; simulated in", "where the response time went", "remote tier", "lock wait", "queueing", "busy: cores",
		"REMOTE TIER: lru"} {
		require.Contains(t, out, w)
	}
	require.Regexp(t, `(?m)^\s+new-order\s+[0-9.]+(\s+[0-9.]+){7}\s*$`, out, "a breakdown row for new-order")

	st, out, errs = enginelab("tpcc", "check", "--dir", dir)
	require.Zero(t, st, errs)
	require.Contains(t, out, "consistent")
	require.NotContains(t, out, "inconsistent")

	csv := filepath.Join(t.TempDir(), "csv")
	st, out, errs = enginelab("tpcc", "export", "--dir", dir, "--out", csv)
	require.Zero(t, st, errs)
	require.Contains(t, out, "wrote ")
	head, err := os.ReadFile(filepath.Join(csv, "warehouse.csv"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(head), "w_id,w_name,w_street_1,"), string(head))
	require.Contains(t, out, "\\copy warehouse (w_id, w_name, ")
	require.Contains(t, out, "FROM '"+filepath.Join(csv, "warehouse.csv")+"' WITH (FORMAT csv, HEADER)\n")

	// The kits' schemas, into a relative --out: the statements name the
	// files by absolute path, and NULL is written as the kits write it.
	work := t.TempDir()
	t.Chdir(work)
	st, out, errs = enginelab("tpcc", "export", "--dir", dir, "--out", "go-tpc", "--schema", "go-tpc")
	require.Zero(t, st, errs)
	orders := filepath.Join(work, "go-tpc", "test.orders.0.csv")
	require.Contains(t, out, "\\copy orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) FROM '"+
		orders+"' WITH (FORMAT csv, NULL 'NULL')\n")
	require.Contains(t, out, "LOAD DATA LOCAL INFILE '"+orders+"' INTO TABLE orders ")
	data, err := os.ReadFile(orders)
	require.NoError(t, err)
	require.Regexp(t, `(?m)^\d+,\d+,1,\d+,\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,NULL,\d+,[01]$`, string(data), "no header, go-tpc's NULL and timestamps")

	if raceEnabled {
		return // another W = 1 export costs half a minute under the race detector
	}
	st, out, errs = enginelab("tpcc", "export", "--dir", dir, "--out", "bmsql", "--schema", "benchmarksql", "--null", "")
	require.Zero(t, st, errs)
	require.Contains(t, errs, "bmsql_config: 4 rows")
	require.Contains(t, out, "\\copy bmsql_history (hist_id, h_c_id, ")
	data, err = os.ReadFile(filepath.Join(work, "bmsql", "bmsql_oorder.csv"))
	require.NoError(t, err)
	require.Regexp(t, `(?m)^1,\d+,\d+,\d+,,\d+,[01],\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}$`, string(data), "--null \"\" as told")
}

// --compare runs each side on its own load and prints them side by side,
// with ratios against the first; --json gives the sides' reports. At small
// scale, so that five loads are affordable under the race detector.
func TestTPCCCompare(t *testing.T) {
	st, out, errs := enginelab("tpcc", "--compare", "org", "--duration", "1s", "--terminals", "2", "--sync-commit=false", "--scale", "small")
	require.Zero(t, st, errs)
	for _, w := range []string{"--compare org: 1 warehouse at small scale,", "clustered", "heap-rowptr", "heap-pk", "ratio", "tpmC", "new-order row fetches/tx",
		"org=clustered: consistent", "org=heap-rowptr: consistent", "org=heap-pk: consistent"} {
		require.Contains(t, out, w)
	}
	var cmp report.Comparison
	st, out, errs = enginelab("tpcc", "--compare", "profile=optimized,benchmarksql", "--duration", "1s", "--terminals", "1", "--json", "--scale", "small")
	require.Zero(t, st, errs)
	require.NoError(t, json.Unmarshal([]byte(out), &cmp))
	require.Equal(t, "profile", cmp.Setting)
	require.Equal(t, []string{"optimized", "benchmarksql"}, cmp.Values)
	require.Len(t, cmp.Sides, 2)
	require.Equal(t, "optimized", cmp.Sides[0].Config.Profile)
	require.Equal(t, "benchmarksql", cmp.Sides[1].Config.Profile)
	for _, side := range cmp.Sides {
		require.Equal(t, "small", side.Config.Scale)
		require.EqualValues(t, 3_000, side.Load.Rows[tpcc.Customer])
	}
}

// Waffle Grid's options run in simulated mode through the flags: the
// memcached model's stats in memcached's terms (a 32-bit 1.2.5 with one
// thread), LRU mode's DELETE for every hit, MySQL 5.1's master thread's
// rounds, read-ahead decisions by table.
func TestTPCCWaffleFlags(t *testing.T) {
	st, out, errs := enginelab("tpcc", "--mode", "sim", "--scale", "small", "--pool", "3MiB", "--remote", "memcached-1.2.5", "--remote-size", "4MiB",
		"--waffle", "lru", "--flushing", "5.1", "--random-read-ahead", "--read-ahead-linear", "5.1", "--store-device", "disk-10k-x2-2009",
		"--network", "gigabit-2009", "--terminals", "8", "--duration", "2s", "--warmup", "1s", "--check=false", "--quiet", "--json")
	require.Zero(t, st, errs)
	var r report.Report
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.NotNil(t, r.Tier)
	require.Equal(t, "exclusive", r.Tier.Mode)
	require.Positive(t, r.Tier.Hits)
	require.Equal(t, r.Tier.Hits, r.Tier.Deletes, "LRU mode expires every page read back")
	mc := r.Tier.Memcached
	require.NotNil(t, mc)
	require.Equal(t, "1.2.5", mc.Release)
	require.Equal(t, 32, mc.PointerSize)
	require.Equal(t, 1, mc.Threads)
	require.Equal(t, int64(4<<20), mc.LimitMaxbytes)
	require.Equal(t, mc.GetHits, mc.DeleteHits)
	require.Positive(t, r.Background.MasterRounds)
	require.NotEmpty(t, r.Background.ReadAheadBySpace)
	require.Equal(t, "disk-10k-x2-2009", r.Sim.Hardware.StoreName)
}

// TestTPCCFlagsOfMode: a real run's report lists the simulator's own
// flags (help beginning "sim:") only when given another value than the
// default, and a simulated run lists them all.
func TestTPCCFlagsOfMode(t *testing.T) {
	run := func(args ...string) map[string]string {
		t.Helper()
		st, out, errs := enginelab(append([]string{"tpcc", "--scale", "small", "--duration", "100ms", "--terminals", "1", "--sync-commit=false", "--check=false", "--json"}, args...)...)
		require.Zero(t, st, errs)
		var rep report.Report
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		return rep.Flags
	}
	rl := run()
	require.Equal(t, "real", rl["mode"])
	require.Equal(t, "1", rl["terminals"])
	for _, sim := range []string{"cores", "cpu", "network", "store-device", "client"} {
		require.NotContains(t, rl, sim, "a simulator flag left at its default")
	}
	require.Equal(t, "8", run("--cores", "8")["cores"], "a simulator flag given: listed")
	sim := run("--mode", "sim")
	for _, name := range []string{"cores", "cpu", "network", "store-device", "client"} {
		require.Contains(t, sim, name)
	}
}
