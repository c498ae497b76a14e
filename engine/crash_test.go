package engine

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/stretchr/testify/require"
)

var (
	crashSeedFlag   = flag.Uint64("engine.crashseed", 20261130, "first seed of the crash tests")
	crashTrialsFlag = flag.Int("engine.crashtrials", 6, "crash points per configuration of TestCrashMemFS")
)

// TestCrashMemFS runs seeded transactions (the transaction model's
// generator: commits, rollbacks, moving heap rows, a pool small enough
// that uncommitted changes are written out) on pebble's crashable memory
// filesystem, and at a seeded random point takes a crash image: everything
// not synced is dropped (or, in some trials, a random part of it kept).
// Opening the image must recover:
//   - in SyncCommit mode, exactly the transactions whose Commit returned;
//   - in NoSyncCommit mode, the transactions of some prefix of the commit
//     order that includes every commit before the last checkpoint;
//
// and every index must agree with its table. Some crash points fall
// inside a Rollback, between two undo steps, and some right after the redo
// log moved to a new segment. The log is the smallest allowed
// (redo.MinCapacity: eight segments of 32 KiB), so that its segments
// switch and are recycled (or, when a checkpoint comes late, added past
// the capacity) during a trial.
func TestCrashMemFS(t *testing.T) {
	for _, org := range []Org{Clustered, HeapRowPointer, HeapPrimaryKey} {
		for _, mode := range []CommitMode{SyncCommit, NoSyncCommit} {
			t.Run(fmt.Sprintf("%s/%s", org, mode), func(t *testing.T) {
				var rolledBack, atSwitch, recycled int64
				for trial := range *crashTrialsFlag {
					seed := *crashSeedFlag + uint64(trial)
					res := crashTrial(t, org, mode, seed)
					rolledBack += res.rolledBack
					recycled += res.recycled
					if res.atSwitch {
						atSwitch++
					}
				}
				if *crashTrialsFlag >= 4 {
					require.NotZero(t, rolledBack, "no trial left a transaction to roll back: the test lost its point")
					require.NotZero(t, atSwitch, "no trial crashed at a segment switch: the test lost its point")
					require.NotZero(t, recycled, "no trial recycled a segment: the test lost its point")
				}
			})
		}
	}
}

// crashLogSize is the crash tests' redo log capacity: the smallest.
const crashLogSize = redo.MinCapacity

// crashResult is what one crash trial did.
type crashResult struct {
	rolledBack int64 // transactions recovery rolled back
	atSwitch   bool  // the crash came right after a segment switch
	recycled   int64 // segments the crashed database recycled
}

// crashTrial runs one crash and recovery.
func crashTrial(t *testing.T, org Org, mode CommitMode, seed uint64) crashResult {
	r := rand.New(rand.NewPCG(seed, uint64(org)<<8|uint64(mode)))
	what := fmt.Sprintf("seed %d (rerun with -engine.crashseed=%d -engine.crashtrials=1)", seed, seed)
	fs := vfs.NewCrashableMem()
	// A third of the seeds (multiples of 3) write pages through the
	// doublewrite buffer: recovery then restores a page the test tears
	// from its doublewrite copy before redo. Of the others, odd seeds pay
	// for full-page writes: recovery then restores page images as well as
	// redoing operations. The page cleaner runs where the test says
	// (steppedRuntime: no goroutine), so that a seed gives the same writes
	// every time.
	torn := cache.TornPagesNone
	switch {
	case seed%3 == 0:
		torn = cache.TornPagesDoublewrite
	case seed%2 == 1:
		torn = cache.TornPagesFullPageWrites
	}
	opts := &Options{FS: fs, Dir: "db", PageSize: 4096, Options: cache.Options{PoolSize: 48 * 4096, TornPages: torn}, Commit: mode,
		CheckpointBytes: int64(64<<10 + r.IntN(256<<10)), LogSize: crashLogSize, Runtime: steppedRuntime{}}
	db, err := Open(opts)
	require.NoError(t, err, what)
	tb, err := db.CreateTable(metaTable(org))
	require.NoError(t, err, what)

	model := newTxModel()
	// states[i] is the committed state after i commits; durable is the
	// number of commits known durable (before the last checkpoint).
	states := [][]string{model.render()}
	durable := 0
	crashAt := 1 + r.IntN(400) // operations until the crash
	inRollback := r.IntN(3) == 0
	// A third of the trials crash right after the operation that moved
	// the log to a new segment (the switch's write may be torn across the
	// two files), the first switch after a seeded number of them; at
	// operation 400 if none comes.
	switchAt := int64(-1)
	if r.IntN(3) == 0 {
		switchAt, crashAt, inRollback = int64(1+r.IntN(4)), 400, false
	}
	atSwitch := false
	ops := 0
	var image *vfs.MemFS
	// Half the crashes come right after a checkpoint: the unfinished
	// transaction's steps (and a rollback's compensations) are then
	// durable, and recovery must undo them.
	ckptFirst := r.IntN(2) == 0
	// Some crashes come inside the page cleaner's work (after a seeded
	// number of its page writes, before any checkpoint counts them) or
	// inside a fuzzy checkpoint (the store synced, the checkpoint record
	// not yet written).
	where := []string{"op", "op", "op", "cleaner", "fuzzy"}[r.IntN(5)]
	if where != "op" {
		ckptFirst = false // a sharp checkpoint first would hide them
	}
	crash := func() {
		if ckptFirst {
			require.NoError(t, db.Checkpoint(), what)
			if mode == NoSyncCommit {
				durable = len(states) - 1
			}
		}
		image = fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: []int{0, 0, 50}[r.IntN(3)],
			RNG: rand.New(rand.NewPCG(r.Uint64(), 0))})
	}
	// A background transaction works on keys of its own (k1 from 100)
	// beside the others: its steps reach the log between their commits,
	// so when the crash finds it unfinished, recovery must redo past its
	// steps and then undo them.
	var bg *Tx
	var bgRows []Row
	bgNext := int64(0)
	bgStep := func() {
		if bg == nil {
			bg, bgRows = db.Begin(nil), nil
		}
		if len(bgRows) > 0 && r.IntN(2) == 0 {
			i := r.IntN(len(bgRows))
			note := Bytes(make([]byte, r.IntN(600)))
			require.NoError(t, bg.Update(tb, []Value{bgRows[i][mK1], bgRows[i][mK2]}, []Set{{Column: "note", Value: note}}), what)
			bgRows[i] = slices.Clone(bgRows[i])
			bgRows[i][mNote] = note
			return
		}
		row := Row{Str("bg"), Int(100 + bgNext/4), Dec(bgNext), Null, Int(bgNext % 4), Null}
		bgNext++
		require.NoError(t, bg.Insert(tb, row), what)
		bgRows = append(bgRows, row)
	}
	if where == "fuzzy" {
		testHookCrashPoint = func(point string) {
			if point == "checkpoint-synced" && ops >= crashAt && image == nil {
				crash()
			}
		}
		defer func() { testHookCrashPoint = nil }()
	}
	cleanerStep := func(budget int) {
		_, err := db.Pool().CleanStep(nil, budget, true)
		require.NoError(t, err, what)
	}
	for image == nil {
		if where == "fuzzy" && ops >= crashAt+300 {
			crash() // no checkpoint came: crash anyway
			break
		}
		if r.IntN(3) == 0 {
			cleanerStep(1 + r.IntN(8))
		}
		if r.IntN(3) == 0 {
			bgStep()
		}
		if bg != nil && r.IntN(15) == 0 {
			require.NoError(t, bg.Commit(), what)
			for _, row := range bgRows {
				model.rows[[2]int64{row[mK1].I, row[mK2].I}] = row
			}
			states = append(states, model.render())
			if mode == SyncCommit {
				durable = len(states) - 1
			}
			bg = nil
		}
		view := model.clone()
		txOps := genTx(r, view)
		tx := db.Begin(nil)
		for _, op := range txOps {
			require.NoError(t, applyOp(tx, tb, op), what)
			ops++
			if r.IntN(6) == 0 {
				// The background transaction may begin in the middle of
				// this one: a checkpoint then keeps the log from its
				// first record, after this one's first.
				bgStep()
			}
			if switchAt > 0 && db.LogStats().Switches >= switchAt {
				atSwitch = true
				crash()
				break
			}
			if ops == crashAt && !inRollback && where != "fuzzy" {
				if where == "cleaner" {
					// Inside a pass: some of its writes done, none
					// synced, no checkpoint after them.
					cleanerStep(1 + r.IntN(12))
				}
				crash()
				break
			}
			if image != nil {
				break // a fuzzy checkpoint's crash point, inside the op
			}
		}
		if image != nil {
			break
		}
		if r.IntN(4) == 0 {
			if ops >= crashAt && inRollback {
				// Crash after a seeded number of undo steps.
				steps := r.IntN(len(tx.steps) + 1)
				testHookUndoStep = func() {
					if steps == 0 && image == nil {
						crash()
					}
					steps--
				}
			}
			require.NoError(t, tx.Rollback(), what)
			testHookUndoStep = nil
			if image == nil && ops >= crashAt {
				crash()
			}
			continue
		}
		ckpts := db.LogStats().Checkpoints
		require.NoError(t, tx.Commit(), what)
		model = view
		states = append(states, model.render())
		if mode == SyncCommit {
			durable = len(states) - 1
		} else if db.LogStats().Checkpoints != ckpts && image == nil {
			// This commit crossed the mark: the checkpoint after it
			// made it, and everything before, durable (unless the
			// crash image was taken inside that checkpoint).
			durable = len(states) - 1
		}
	}
	// The running database is abandoned, as a crashed process would be.
	recycled := db.LogStats().Recycled
	var tornPage bool
	if torn == cache.TornPagesDoublewrite {
		tornPage = tearDoublewritten(t, image, r, what)
	}

	db2, err := Open(&Options{FS: image, Dir: "db", PageSize: 4096, Options: cache.Options{PoolSize: 48 * 4096}, Commit: mode,
		LogSize: crashLogSize})
	require.NoError(t, err, what)
	tb2, err := db2.Table(tb.Name())
	require.NoError(t, err, what)
	rec := db2.Recovery()
	require.Equal(t, rec.Pages, rec.PagesApplied+rec.PagesSkipped, what)
	require.Equal(t, int64(rec.EndLSN-rec.CheckpointLSN), rec.Bytes, what)
	if tornPage {
		require.Equal(t, 1, db2.DoublewriteRecovery().Restored, "%s: the torn page was not restored from its doublewrite copy", what)
	}
	t.Logf("seed %d (torn pages: %s%s): crash (%s) after %d commits (%d durable)%s; redid %d records, rolled back %d; the log had switched segments %d times, recycled %d, overrun %d",
		seed, torn, map[bool]string{true: ", a page torn and restored"}[tornPage], where, len(states)-1, durable, map[bool]string{true: " at a segment switch"}[atSwitch], rec.Records, rec.RolledBack,
		db.LogStats().Switches, recycled, db.LogStats().Overruns)
	got := scanAllRows(t, db2, tb2)
	found := -1
	for i := len(states) - 1; i >= durable; i-- {
		if slices.Equal(states[i], got) {
			found = i
			break
		}
	}
	if mode == SyncCommit {
		require.Equal(t, states[len(states)-1], got, "%s: every commit that returned must survive, nothing else", what)
	} else {
		require.GreaterOrEqual(t, found, durable, "%s: recovered state is not the state after any prefix of %d..%d commits", what, durable, len(states)-1)
	}
	check := db2.Begin(nil)
	require.NoError(t, tb2.Check(check), what)
	require.NoError(t, check.Commit())

	// The recovered database goes on working and reopens cleanly.
	tx := db2.Begin(nil)
	require.NoError(t, tx.Insert(tb2, Row{Str("after"), Int(1000), Dec(1), Null, Int(0), Null}), what)
	require.NoError(t, tx.Commit(), what)
	require.NoError(t, db2.Close(), what)
	db3, err := Open(&Options{FS: image, Dir: "db", PageSize: 4096, Options: cache.Options{PoolSize: 48 * 4096}, LogSize: crashLogSize})
	require.NoError(t, err, what)
	tb3, err := db3.Table(tb.Name())
	require.NoError(t, err, what)
	require.Equal(t, len(got)+1, len(scanAllRows(t, db3, tb3)), what)
	require.Zero(t, db3.Recovery().RolledBack, "%s: a clean close leaves nothing to roll back", what)
	require.Zero(t, db3.Recovery().Records, "%s: a clean close leaves nothing to redo", what)
	require.NoError(t, db3.Close())
	return crashResult{rolledBack: rec.RolledBack, atSwitch: atSwitch, recycled: recycled}
}

// tearDoublewritten tears, in the crash image, a page of the doublewrite
// file's last batch that the store holds (its in-place write, as a torn
// write would leave it: its checksum fails), and reports whether it found
// one. pebble writes a page whole, so a torn page cannot happen otherwise.
func tearDoublewritten(t *testing.T, image vfs.FS, r *rand.Rand, what string) bool {
	dw, err := cache.OpenDoublewrite(image, "db", 4096, false)
	require.NoError(t, err, what)
	require.NotNil(t, dw, what)
	_, ids, err := dw.Batch()
	require.NoError(t, err, what)
	require.NoError(t, dw.Close())
	st, err := store.OpenPebble(store.PebbleOptions{FS: image, Dir: "db"})
	require.NoError(t, err, what)
	defer func() { require.NoError(t, st.Close(), what) }()
	buf := make([]byte, st.PageSize())
	for _, i := range r.Perm(len(ids)) {
		if err := st.ReadPage(ids[i], buf); err != nil {
			continue // not in the store (its write was lost with the crash)
		}
		buf[page.HeaderSize+r.IntN(len(buf)-page.HeaderSize)] ^= 1 << r.IntN(8)
		k := store.PageKey(ids[i])
		require.NoError(t, st.Set("tear page", k[:], buf, true), what)
		return true
	}
	return false
}

// TestCrashKill runs a child process (this test binary) that commits
// transactions in SyncCommit mode on a real directory and reports each
// commit on stdout once Commit returns; the parent kills it with SIGKILL
// after a seeded number of reports, reopens the database, and requires
// every reported transaction and nothing but them (the one in flight at
// the kill may have committed or not). Each transaction inserts a row and
// updates a counter row, so the counter must equal the number of rows.
// Another transaction in the child inserts rows and never commits: none
// of its rows may survive.
// The same directory is crashed and recovered several times.
func TestCrashKill(t *testing.T) {
	if os.Getenv("ENGINELAB_CRASH_CHILD") != "" {
		crashChild()
		return
	}
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := t.TempDir()
	seed := *crashSeedFlag
	r := rand.New(rand.NewPCG(seed, 77))
	committed := map[int64]bool{}
	const rounds = 4
	for round := range rounds {
		org := []Org{Clustered, HeapRowPointer, HeapPrimaryKey}[round%3]
		killAfter := 5 + r.IntN(60)
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashKill$")
		cmd.Env = append(os.Environ(), "ENGINELAB_CRASH_CHILD=1", "ENGINELAB_CRASH_DIR="+dir,
			"ENGINELAB_CRASH_ORG="+strconv.Itoa(int(org)), "ENGINELAB_CRASH_ROUND="+strconv.Itoa(round))
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		sc := bufio.NewScanner(out)
		var inflight int64 = -1
		reports := 0
		read := func() bool {
			if !sc.Scan() {
				return false
			}
			f := strings.Fields(sc.Text())
			require.Len(t, f, 2, "child printed %q", sc.Text())
			id, err := strconv.ParseInt(f[1], 10, 64)
			require.NoError(t, err)
			switch f[0] {
			case "begin":
				inflight = id
			case "committed":
				committed[id] = true
				inflight = -1
				reports++
			}
			return true
		}
		for reports < killAfter && read() {
		}
		require.Equal(t, killAfter, reports, "child stopped early")
		require.NoError(t, cmd.Process.Kill())
		// What the child wrote before it died counts as reported.
		for read() {
		}
		_ = cmd.Wait()

		db, err := Open(&Options{Dir: dir})
		require.NoError(t, err)
		tb, err := db.Table("killed")
		require.NoError(t, err)
		tx := db.Begin(nil)
		cur, err := tx.Scan(tb, ScanOptions{})
		require.NoError(t, err)
		rows := map[int64]bool{}
		var counter int64 = -1
		for cur.Next() {
			row := cur.Row()
			if row[0].I == 0 {
				counter = row[1].I
				continue
			}
			require.Positive(t, row[0].I, "round %d: a row of a transaction that never committed survived", round)
			rows[row[0].I] = true
		}
		require.NoError(t, cur.Close())
		require.NoError(t, tb.Check(tx))
		require.NoError(t, tx.Commit())
		for id := range committed {
			require.True(t, rows[id], "round %d: transaction %d reported committed is lost", round, id)
		}
		for id := range rows {
			if !committed[id] {
				require.Equal(t, inflight, id, "round %d: transaction %d was never reported committed", round, id)
				committed[id] = true // it did commit; later rounds must keep it
			}
		}
		require.Equal(t, int64(len(rows)), counter, "round %d: the counter disagrees with the rows", round)
		// What recovery did: at least the last reported commit was redone
		// (it was synced, and no checkpoint passed it before the kill),
		// every page change was applied or found on its page, and the
		// log was scanned from the checkpoint to its end.
		rec := db.Recovery()
		t.Logf("round %d (%s): killed after %d commits; %d rows; recovery redid %d records (%d bytes, LSN %d to %d; %d page changes: %d applied, %d skipped; %d pages read), rolled back %d; redo %v, rollback %v, checkpoint %v",
			round, org, killAfter, len(rows), rec.Records, rec.Bytes, rec.CheckpointLSN, rec.EndLSN, rec.Pages,
			rec.PagesApplied, rec.PagesSkipped, rec.PagesRead, rec.RolledBack, rec.Redo, rec.Rollback, rec.Checkpoint)
		require.True(t, rec.Recovered(), "round %d", round)
		require.GreaterOrEqual(t, rec.Records, int64(1), "round %d", round)
		require.Equal(t, rec.Pages, rec.PagesApplied+rec.PagesSkipped, "round %d", round)
		require.Positive(t, rec.Bytes, "round %d", round)
		require.Equal(t, int64(rec.EndLSN-rec.CheckpointLSN), rec.Bytes, "round %d", round)
		require.NoError(t, db.Close())
		// A clean close leaves nothing to recover.
		db, err = Open(&Options{Dir: dir})
		require.NoError(t, err)
		rec = db.Recovery()
		require.False(t, rec.Recovered(), "round %d: reopened after a clean close", round)
		require.Zero(t, rec.Records, "round %d", round)
		require.Zero(t, rec.Bytes, "round %d", round)
		require.NoError(t, db.Close())
	}
}

// crashChild is the process TestCrashKill kills.
func crashChild() {
	dir := os.Getenv("ENGINELAB_CRASH_DIR")
	org, _ := strconv.Atoi(os.Getenv("ENGINELAB_CRASH_ORG"))
	round, _ := strconv.Atoi(os.Getenv("ENGINELAB_CRASH_ROUND"))
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(2)
	}
	db, err := Open(&Options{Dir: dir, PageSize: 4096, Options: cache.Options{PoolSize: 32 * 4096}, CheckpointBytes: 128 << 10})
	if err != nil {
		fail(err)
	}
	tb, err := db.Table("killed")
	if err != nil {
		tb, err = db.CreateTable(Table{Name: "killed", Org: Org(org),
			Columns:    []Column{{Name: "id", Type: TypeInt}, {Name: "n", Type: TypeInt}, {Name: "pad", Type: TypeVarchar, Length: 400}},
			PrimaryKey: []string{"id"},
			Indexes:    []Index{{Name: "by_n", Columns: []string{"n"}}}})
		if err != nil {
			fail(err)
		}
		tx := db.Begin(nil)
		if err := tx.Insert(tb, Row{Int(0), Int(0), Str("")}); err != nil {
			fail(err)
		}
		if err := tx.Commit(); err != nil {
			fail(err)
		}
	}
	pad := strings.Repeat("p", 300)
	// Beside the committing loop, a transaction that never commits keeps
	// inserting rows with negative ids; the loop's syncs make its steps
	// durable, so the kill usually leaves it for recovery to roll back.
	go func() {
		for k := int64(1); ; k++ {
			tx := db.Begin(nil)
			for j := int64(0); j < 50; j++ {
				if err := tx.Insert(tb, Row{Int(-(k*100 + j)), Int(-1), Str(pad[:j])}); err != nil {
					fail(err)
				}
			}
			if err := tx.Rollback(); err != nil {
				fail(err)
			}
		}
	}()
	for i := int64(1); ; i++ {
		id := int64(round)*1_000_000 + i
		fmt.Printf("begin %d\n", id)
		tx := db.Begin(nil)
		row, _, err := tx.Get(tb, []Value{Int(0)}, nil)
		if err != nil {
			fail(err)
		}
		n := row[1].I
		if err := tx.Insert(tb, Row{Int(id), Int(n + 1), Str(pad[:i%300])}); err != nil {
			fail(err)
		}
		if err := tx.Update(tb, []Value{Int(0)}, []Set{{Column: "n", Value: Int(n + 1)}}); err != nil {
			fail(err)
		}
		if i%7 == 0 {
			// A rolled-back transaction now and then.
			if err := tx.Rollback(); err != nil {
				fail(err)
			}
			continue
		}
		if err := tx.Commit(); err != nil {
			fail(err)
		}
		fmt.Printf("committed %d\n", id)
	}
}
