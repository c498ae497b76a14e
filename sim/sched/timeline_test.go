package sched

// The scheduler's timelines, as data: each file under testdata/ builds
// small tables on modeled hardware whose numbers make every time a round
// figure, runs a few terminals through scripted engine calls, and prints
// where every terminal's clock ended and where the time went. The expected
// output is the exact virtual time; go test ./sim/sched -run TestTimeline
// -rewrite writes what the scheduler does now into the files (then read
// the diff: every number in them is a claim about the model).
//
// The command language (github.com/cockroachdb/datadriven: a command line,
// input lines, "----", the expected output; # starts a comment). Each file
// starts on the default hardware, and a file may hold several scenarios,
// each from its open on:
//
//	hardware [cores=N] [store=DEVICE] [log=DEVICE] [COST=NS ...]
//	    The modeled machine for the next open: N cores (default 4), the
//	    store's device (default free) and the log's (default the store's),
//	    a network that costs nothing, and a CPU profile whose costs are 0
//	    but the ones given, by their JSON names (hw.CostNames:
//	    page_request=500 commit=7000). DEVICE is test-disk (one request at
//	    a time: 10 ms of latency and 1 ms to transfer a 16 KiB page, so a
//	    read takes 11 ms and holds the disk 11 ms; a sync takes 5 ms), free
//	    (nothing costs time but a 5 ms sync) or a shipped profile
//	    (hw.Devices). Prints what a page and a sync cost on it.
//
//	open tables=(NAME, ...) [rows=N] [sync-commit] [read-ahead] [doublewrite] [early-lock-release=true|false]
//	    Makes the tables, N rows each (default 100): columns k (the key,
//	    1..N), v (0) and a 1,000-byte pad, 15 rows a leaf, so 100 rows are
//	    a tree of two levels with seven leaves. Then closes the database
//	    and opens it again with the scheduler's hooks, on the last
//	    hardware: the pool is cold but for the trees' roots, which opening
//	    the tables reads. Commits do not wait for the log's sync unless
//	    sync-commit; a lock wait times out after 1 s. With doublewrite,
//	    page writes go through the doublewrite buffer
//	    (cache.TornPagesDoublewrite). A commit releases its locks before
//	    its log sync (early-lock-release=true, the default: the tables are
//	    clustered) or after it (false; engine.LockRelease). Prints each
//	    table's pages.
//
//	setup
//	<step>...
//	    Runs steps before any terminal runs (no virtual time passes: the
//	    scheduler prices nothing outside a run). Prints the pool's
//	    background work so far.
//
//	terminal N
//	<step>...
//	    Declares terminal N's script (terminals are numbered from 0, in
//	    order). A terminal stops at its first failing step.
//
//	run
//	    Runs the declared terminals to their ends, as the scheduler's
//	    coroutines, and forgets their scripts. Prints the marks, in the
//	    order the terminals reached them.
//
//	timeline
//	    Prints, for the last run: each terminal's clock at its end (read
//	    after its last step, a yield point) and the error that stopped it,
//	    its meter (the counters that are not 0); since the open, each
//	    measured transaction type's count, summed response time and its
//	    shares (TimeKindNames, those not 0), how long each shared resource
//	    was held, the background writes still pending, and the checkpoints
//	    that waited for the last one's writes (Scheduler.CheckpointWaits);
//	    the redo log's syncs during the run.
//
// The steps:
//
//	begin [LEVEL]         a transaction, charged to the terminal's meter, at
//	                      the engine's default level (repeatable-read: plain
//	                      reads lock nothing) or LEVEL (serializable: they lock)
//	get TABLE KEY...      point reads (a missing row is an error)
//	update TABLE KEYS v=N set v of the rows KEYS (K, or K1-K2)
//	insert TABLE KEY      a row (KEY, 0, "x")
//	scan TABLE            every row, in one Scan call (a count other than the
//	                      table's rows is an error)
//	commit                the transaction
//	checkpoint            DB.Checkpoint
//	sleep DURATION        a keying or think time (tpcc.Env.Sleep)
//	txbegin TYPE          a measured transaction of TYPE (new-order, payment...)
//	                      begins (tpcc.TxObserver)
//	txend                 it ends
//	mark [NAME] [writes]  logs the terminal's clock (a yield point), and
//	                      with writes the background writes pending

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/tpcc"
)

func TestTimeline(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		tl := &timeline{machine: testHW(hw.CPUProfile{}, freeDevice)}
		datadriven.RunTest(t, path, tl.do)
	})
}

// timeline is one testdata file's state: the hardware, the database, the
// terminals' scripts, and what the last run left.
type timeline struct {
	machine hw.Machine
	sd      *simDB
	scripts [][]string
	log     strings.Builder // the marks of the running run

	ends      []int64
	errs      []error
	meters    []engine.Meter
	logBefore engine.LogStats
	logAfter  engine.LogStats
}

func (tl *timeline) do(t *testing.T, td *datadriven.TestData) string {
	switch td.Cmd {
	case "hardware":
		return tl.hardware(t, td)
	case "open":
		return tl.open(t, td)
	case "setup":
		tl.need(t, td)
		st := &termState{}
		for _, line := range lines(td.Input) {
			if err := tl.step(nil, nil, st, line); err != nil {
				td.Fatalf(t, "%s: %v", line, err)
			}
		}
		bg := tl.sd.db.Pool().BackgroundMeter()
		return fmt.Sprintf("background: %d store writes, %d store reads\n", bg.StoreWrites, bg.StoreReads)
	case "terminal":
		tl.need(t, td)
		n, err := strconv.Atoi(td.CmdArgs[0].Key)
		if err != nil || n != len(tl.scripts) {
			td.Fatalf(t, "terminal %s: want terminal %d next", td.CmdArgs[0].Key, len(tl.scripts))
		}
		tl.scripts = append(tl.scripts, lines(td.Input))
		return ""
	case "run":
		tl.need(t, td)
		return tl.run()
	case "timeline":
		tl.need(t, td)
		return tl.timeline()
	}
	td.Fatalf(t, "unknown command %q", td.Cmd)
	return ""
}

func (tl *timeline) need(t *testing.T, td *datadriven.TestData) {
	if tl.sd == nil {
		td.Fatalf(t, "%s before open", td.Cmd)
	}
}

func lines(input string) []string {
	var out []string
	for _, l := range strings.Split(input, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// testDevices are the devices the files name besides the shipped ones.
var testDevices = map[string]hw.Device{"test-disk": testDisk, "free": freeDevice}

func device(name string) (hw.Device, bool) {
	if d, ok := testDevices[name]; ok {
		return d, true
	}
	d, ok := hw.Devices[name]
	return d, ok
}

func (tl *timeline) hardware(t *testing.T, td *datadriven.TestData) string {
	cores, store, log := 4, "free", ""
	costs := make([]float64, hw.NumCosts)
	for _, a := range td.CmdArgs {
		switch a.Key {
		case "cores":
			var err error
			if cores, err = strconv.Atoi(a.SingleVal(t)); err != nil || cores < 1 {
				td.Fatalf(t, "cores=%s", a.SingleVal(t))
			}
		case "store":
			store = a.SingleVal(t)
		case "log":
			log = a.SingleVal(t)
		default:
			i := slices.Index(hw.CostNames[:], a.Key)
			if i < 0 {
				td.Fatalf(t, "unknown argument %s: want cores, store, log or a cost (%s)", a.Key, strings.Join(hw.CostNames[:], ", "))
			}
			v, err := strconv.ParseFloat(a.SingleVal(t), 64)
			if err != nil {
				td.Fatalf(t, "%s=%s: %v", a.Key, a.SingleVal(t), err)
			}
			costs[i] = v
		}
	}
	if log == "" {
		log = store
	}
	sd, ok1 := device(store)
	ld, ok2 := device(log)
	if !ok1 || !ok2 {
		td.Fatalf(t, "unknown device %s or %s", store, log)
	}
	m := testHW(hw.ProfileOf(costs), sd)
	m.Cores, m.StoreName, m.Log, m.LogName = cores, store, ld, log
	tl.machine = m

	var b strings.Builder
	fmt.Fprintf(&b, "%d cores; cpu:", cores)
	n := 0
	for i, c := range costs {
		switch {
		case c == 0:
			continue
		case c == float64(int64(c)):
			fmt.Fprintf(&b, " %s %v", hw.CostNames[i], time.Duration(c))
		default:
			fmt.Fprintf(&b, " %s %gns", hw.CostNames[i], c)
		}
		n++
	}
	if n == 0 {
		b.WriteString(" free")
	}
	const page = 16384
	gap := int64(0)
	if sd.IOPS > 0 {
		gap = int64(time.Second) / sd.IOPS
	}
	dur := func(ns int64) time.Duration { return time.Duration(ns) }
	xr, xw := hw.TransferNanos(page, sd.ReadBandwidth), hw.TransferNanos(page, sd.WriteBandwidth)
	fmt.Fprintf(&b, "\nstore %s: a page read takes %v and holds the device %v; a write, %v and %v\n", store,
		dur(int64(sd.ReadLatency)+xr), dur(gap+xr), dur(int64(sd.WriteLatency)+xw), dur(gap+xw))
	fmt.Fprintf(&b, "log %s: a sync takes %v\n", log, time.Duration(ld.SyncLatency))
	return b.String()
}

func (tl *timeline) open(t *testing.T, td *datadriven.TestData) string {
	var names []string
	rows := int64(100)
	commit, readAhead, torn := engine.NoSyncCommit, false, cache.TornPagesNone
	release := engine.LockReleaseDefault
	for _, a := range td.CmdArgs {
		switch a.Key {
		case "tables":
			names = a.Vals
		case "rows":
			n, err := strconv.ParseInt(a.SingleVal(t), 10, 64)
			if err != nil || n < 1 {
				td.Fatalf(t, "rows=%s", a.SingleVal(t))
			}
			rows = n
		case "sync-commit":
			commit = engine.SyncCommit
		case "read-ahead":
			readAhead = true
		case "doublewrite":
			torn = cache.TornPagesDoublewrite
		case "early-lock-release":
			switch a.SingleVal(t) {
			case "true":
				release = engine.EarlyRelease
			case "false":
				release = engine.LateRelease
			default:
				td.Fatalf(t, "early-lock-release=%s: want true or false", a.SingleVal(t))
			}
		default:
			td.Fatalf(t, "unknown argument %s: want tables, rows, sync-commit, read-ahead, doublewrite or early-lock-release", a.Key)
		}
	}
	if len(names) == 0 {
		td.Fatalf(t, "open: no tables")
	}
	if tl.sd != nil {
		require.NoError(t, tl.sd.db.Close())
	}
	tl.sd = openSimTorn(t, tl.machine, commit, rows, readAhead, torn, release, names...)
	tl.scripts = nil
	var b strings.Builder
	for _, s := range tl.sd.space {
		fmt.Fprintf(&b, "%s: %d rows in %d pages, height %d\n", s.Table, s.Entries, s.Pages, s.Height)
	}
	return b.String()
}

// termState is what a terminal's script has open.
type termState struct {
	tx   *engine.Tx
	kind tpcc.TxType
}

// step runs one line of a script for terminal num with env (nil for a
// setup, outside any terminal) and meter m.
func (tl *timeline) step(env tpcc.Env, m *engine.Meter, st *termState, line string) error {
	f := strings.Fields(line)
	sd := tl.sd
	table := func() (*engine.TableHandle, error) {
		if len(f) < 2 || sd.t[f[1]] == nil {
			return nil, fmt.Errorf("want a table of %v", slices.Sorted(maps.Keys(sd.t)))
		}
		return sd.t[f[1]], nil
	}
	needTx := func() error {
		if st.tx == nil {
			return errors.New("no transaction: begin first")
		}
		return nil
	}
	needEnv := func() error {
		if env == nil {
			return errors.New("only a terminal can")
		}
		return nil
	}
	switch f[0] {
	case "begin":
		var o engine.TxOptions
		if len(f) > 1 {
			iso, err := engine.ParseIsolation(f[1])
			if err != nil {
				return err
			}
			o.Isolation = iso
		}
		st.tx = sd.db.BeginTx(m, o)
		return nil
	case "commit":
		if err := needTx(); err != nil {
			return err
		}
		err := st.tx.Commit()
		st.tx = nil
		return err
	case "get":
		tb, err := table()
		if err == nil {
			err = needTx()
		}
		if err != nil {
			return err
		}
		for _, k := range f[2:] {
			n, err := strconv.ParseInt(k, 10, 64)
			if err != nil {
				return err
			}
			_, ok, err := st.tx.Get(tb, key(n), nil)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("row %d not found", n)
			}
		}
		return nil
	case "update":
		tb, err := table()
		if err == nil {
			err = needTx()
		}
		if err != nil {
			return err
		}
		var lo, hi, v int64
		if len(f) != 4 || !strings.HasPrefix(f[3], "v=") {
			return errors.New("want update TABLE KEYS v=N")
		}
		if v, err = strconv.ParseInt(f[3][2:], 10, 64); err != nil {
			return err
		}
		a, b, isRange := strings.Cut(f[2], "-")
		if lo, err = strconv.ParseInt(a, 10, 64); err != nil {
			return err
		}
		hi = lo
		if isRange {
			if hi, err = strconv.ParseInt(b, 10, 64); err != nil {
				return err
			}
		}
		for k := lo; k <= hi; k++ {
			if err := st.tx.Update(tb, key(k), []engine.Set{{Column: "v", Value: engine.Int(v)}}); err != nil {
				return err
			}
		}
		return nil
	case "insert":
		tb, err := table()
		if err == nil {
			err = needTx()
		}
		if err != nil {
			return err
		}
		if len(f) != 3 {
			return errors.New("want insert TABLE KEY")
		}
		k, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return err
		}
		return st.tx.Insert(tb, engine.Row{engine.Int(k), engine.Int(0), engine.Str("x")})
	case "scan":
		tb, err := table()
		if err == nil {
			err = needTx()
		}
		if err != nil {
			return err
		}
		cur, err := st.tx.Scan(tb, engine.ScanOptions{})
		if err != nil {
			return err
		}
		n := int64(0)
		for cur.Next() {
			n++
		}
		if err := errors.Join(cur.Err(), cur.Close()); err != nil {
			return err
		}
		if n != sd.rows {
			return fmt.Errorf("the scan read %d rows of %d", n, sd.rows)
		}
		return nil
	case "checkpoint":
		return sd.db.Checkpoint()
	case "sleep":
		if err := needEnv(); err != nil {
			return err
		}
		if len(f) != 2 {
			return errors.New("want sleep DURATION")
		}
		d, err := time.ParseDuration(f[1])
		if err != nil {
			return err
		}
		env.Sleep(d)
		return nil
	case "txbegin":
		if err := needEnv(); err != nil {
			return err
		}
		if len(f) != 2 {
			return errors.New("want txbegin TYPE")
		}
		kind, ok := txType(f[1])
		if !ok {
			return fmt.Errorf("transaction type %q", f[1])
		}
		st.kind = kind
		env.(tpcc.TxObserver).TxBegin(kind)
		return nil
	case "txend":
		if err := needEnv(); err != nil {
			return err
		}
		env.(tpcc.TxObserver).TxEnd(st.kind, true, m)
		return nil
	}
	return fmt.Errorf("unknown step %q", f[0])
}

func txType(name string) (tpcc.TxType, bool) {
	for k := range tpcc.NumTxTypes {
		if k.String() == name {
			return k, true
		}
	}
	return 0, false
}

// run runs the scripts as the scheduler's terminals. The marks are the
// only steps that write to tl.log, one terminal at a time (the one that
// holds the turn).
func (tl *timeline) run() string {
	s := tl.sd.s
	n := len(tl.scripts)
	envs := make([]tpcc.Env, n)
	for i := range n {
		envs[i] = s.ForTerminal(i)
	}
	tl.ends, tl.errs, tl.meters = make([]int64, n), make([]error, n), make([]engine.Meter, n)
	tl.log.Reset()
	tl.logBefore = tl.sd.db.LogStats()
	fs := make([]func() error, n)
	for i, script := range tl.scripts {
		fs[i] = func() error {
			env, st := envs[i], &termState{}
			for _, line := range script {
				if name, ok := strings.CutPrefix(line, "mark"); ok {
					tl.mark(i, env, strings.Fields(name))
					continue
				}
				if err := tl.step(env, &tl.meters[i], st, line); err != nil {
					tl.errs[i] = fmt.Errorf("%s: %s", line, describe(err))
					break
				}
			}
			tl.ends[i] = at(env)
			return nil
		}
	}
	s.Run(fs)
	tl.logAfter = tl.sd.db.LogStats()
	tl.scripts = nil
	return tl.log.String()
}

// describe names the errors a timeline expects by their sentinel, whose
// messages may carry transaction numbers.
func describe(err error) string {
	switch {
	case errors.Is(err, engine.ErrLockTimeout):
		return "lock timeout"
	case errors.Is(err, engine.ErrDeadlock):
		return "deadlock"
	}
	return err.Error()
}

func (tl *timeline) mark(term int, env tpcc.Env, args []string) {
	now := at(env)
	fmt.Fprintf(&tl.log, "t%d", term)
	writes := false
	for _, a := range args {
		if a == "writes" {
			writes = true
		} else {
			fmt.Fprintf(&tl.log, " %s", a)
		}
	}
	fmt.Fprintf(&tl.log, ": %v", time.Duration(now))
	if writes {
		fmt.Fprintf(&tl.log, ", %d background writes pending", tl.sd.s.PendingBackgroundWrites())
	}
	tl.log.WriteString("\n")
}

func (tl *timeline) timeline() string {
	var b strings.Builder
	dur := func(ns int64) time.Duration { return time.Duration(ns) }
	for i, end := range tl.ends {
		fmt.Fprintf(&b, "terminal %d: %v", i, dur(end))
		if err := tl.errs[i]; err != nil {
			fmt.Fprintf(&b, " (stopped: %v)", err)
		}
		b.WriteString("\n")
		m := &tl.meters[i]
		var parts []string
		for _, c := range []struct {
			name string
			n    int64
		}{{"node-visits", m.NodeVisitsTotal()}, {"page-requests", m.PageRequestsTotal()}, {"pool-hits", m.PoolHits},
			{"pool-misses", m.PoolMisses}, {"store-reads", m.StoreReads}, {"store-writes", m.StoreWrites},
			{"lock-requests", m.LockRequests}, {"lock-waits", m.LockWaits}, {"commits", m.Commits}, {"rollbacks", m.Rollbacks},
			{"log-syncs", m.LogSyncs}, {"log-sync-waits", m.LogSyncWaits}} {
			if c.n != 0 {
				parts = append(parts, fmt.Sprintf("%s=%d", c.name, c.n))
			}
		}
		if m.LockWaitNanos != 0 {
			parts = append(parts, fmt.Sprintf("lock-wait=%v", dur(m.LockWaitNanos)))
		}
		if len(parts) > 0 {
			fmt.Fprintf(&b, "  meter: %s\n", strings.Join(parts, " "))
		}
	}
	s := tl.sd.s
	types := s.Types()
	for k := range tpcc.NumTxTypes {
		tt := &types[k]
		if tt.Count == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s: %d measured, response %v:", k, tt.Count, dur(tt.Response))
		for i, name := range TimeKindNames {
			if tt.Spent[i] != 0 {
				fmt.Fprintf(&b, " %s %v", name, dur(tt.Spent[i]))
			}
		}
		b.WriteString("\n")
	}
	cores, store, log, net := s.Busy()
	fmt.Fprintf(&b, "busy: cores %v, store %v, log %v, network %v\n", dur(cores), dur(store), dur(log), dur(net))
	fmt.Fprintf(&b, "log: %d syncs, %d synced commits\n", tl.logAfter.Syncs-tl.logBefore.Syncs,
		tl.logAfter.SyncedCommits-tl.logBefore.SyncedCommits)
	fmt.Fprintf(&b, "background: writes pending %d, checkpoint waits %d\n", s.PendingBackgroundWrites(), s.CheckpointWaits())
	if n := s.Stalls(); n > 0 {
		fmt.Fprintf(&b, "stalls: %d\n", n)
	}
	return b.String()
}
