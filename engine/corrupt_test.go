package engine

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/btree"
	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
)

var corruptSeedFlag = flag.Uint64("engine.corruptseed", 20260514, "seed of TestCorruptFiles (workload and damage)")

// TestCorruptFiles damages the files of a small stored database one at a
// time and opens it. The database holds three tables (one per
// organization, each with a unique and a non-unique secondary index) of
// 400 rows each, inserted, updated and deleted in transactions whose
// committed effects the test records. Pebble's memtable is flushed after
// the inserts (and compacted into the bottom level) and after the updates
// and deletes, so that the directory holds sstables of two levels, range
// tombstones (the redo log dropped at checkpoints), old WAL files kept
// for reuse and a MANIFEST with history.
//
// Two copies of it are damaged:
//   - closed: after DB.Close, which flushes pebble's memtable: no file
//     may lose a committed transaction.
//   - crashed: a crash image (pebble's crashable memory filesystem, only
//     synced data kept) taken after transactions that followed the last
//     flush, so that they are in the WAL alone.
//
// For every file in the directory (sstables, MANIFEST and its witness,
// OPTIONS, WAL files, markers, LOCK, and the redo log's segments and
// control file in redo/), on a fresh copy of the pristine
// directory (in memory: the bytes are the same, and a copy on disk costs
// fsyncs): a byte flipped at two seeded positions, the file truncated at
// two seeded lengths (of each, one anywhere and one in the last 64 bytes,
// where an sstable keeps its footer), and the file deleted. Empty files
// (markers, LOCK) are only deleted: a flip or a truncation has nothing to
// act on.
//
// Each case must end one of two ways:
//   - an error matching ErrCorrupt whose message names the directory,
//     from Open or from reading the database after it (Check of every
//     table, a scan of every table, Close): pebble verifies every block
//     when it reads it, so damage in a block Open did not read is found
//     by the first read of it;
//   - or every table passes Check and the rows read back are a state the
//     committed transactions produced: exactly the final state, except
//     for damage to the crashed copy's WAL, where the state after any
//     number of commits from those before the last flush to all of them
//     is accepted (and so for damage to the crashed copy's redo log
//     segments: damage below where the store says the log was synced is
//     an error, past it the log ends there). A WAL cut short, or deleted, loses its last records
//     without an error: pebble cannot tell a WAL cut short from one a
//     crash tore, nor a missing WAL from one never written (a damaged
//     record inside the part the WAL says was synced is an error). What is
//     lost is then a suffix of pebble's writes, which recovery reads as a
//     crash at that point: the state is a prefix of the commits, and never
//     less than what the sstables hold. The closed copy has no such case:
//     its WAL holds nothing that is not in an sstable.
func TestCorruptFiles(t *testing.T) {
	skipUnderRace(t)
	seed := *corruptSeedFlag
	t.Logf("seed %d (rerun with -engine.corruptseed=%d)", seed, seed)
	for _, crashed := range []bool{false, true} {
		name := "closed"
		if crashed {
			name = "crashed"
		}
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, map[bool]uint64{false: 1, true: 2}[crashed]))
			disk := filepath.Join(t.TempDir(), "pristine")
			h := buildCorruptDB(t, r, disk, crashed)
			// Every file, the redo log's (in redo/) with the rest, by its
			// path in the directory.
			var files []string
			require.NoError(t, filepath.WalkDir(disk, func(path string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					rel, rerr := filepath.Rel(disk, path)
					files = append(files, filepath.ToSlash(rel))
					return rerr
				}
				return err
			}))
			// The cases run on copies in memory (vfs.NewMem): a copy and an
			// open on disk cost a dozen fsyncs each, and the damage is the
			// same bytes either way.
			pristine := map[string][]byte{}
			var listing []string
			for _, name := range files {
				b, err := os.ReadFile(filepath.Join(disk, name))
				require.NoError(t, err)
				pristine[name] = b
				listing = append(listing, fmt.Sprintf("%s (%d bytes)", name, len(b)))
			}
			t.Logf("%d commits, %d of them before the last flush; files: %s", len(h.commits), h.flushed, strings.Join(listing, ", "))

			var n corruptCounts
			runCorruptCase(t, h, pristine, "/undamaged", "undamaged", false, "", nil, &n)
			require.Equal(t, 1, n.exact, "the undamaged copy opens to the final state")
			n = corruptCounts{}

			kinds := map[string]bool{}
			for i, name := range files {
				b := pristine[name]
				size := len(b)
				// The redo log's segments are damaged past the last
				// checkpoint like pebble's WAL: damage below the point
				// the store says the log was synced to is an error, and
				// past it reads as the log's end, as a crash there
				// would leave it.
				segment := strings.HasPrefix(name, "redo/") && name != "redo/checkpoint"
				wal := crashed && (strings.HasSuffix(name, ".log") || segment)
				for _, k := range []string{"sst", "MANIFEST", "OPTIONS", "log", "marker", "redo/checkpoint"} {
					if strings.Contains(name, k) {
						kinds[k] = true
					}
				}
				if segment {
					kinds["segment"] = true
				}
				type damage struct {
					what string
					b    []byte // the file's new contents; nil: deleted
				}
				var cases []damage
				if size > 0 {
					tail := min(size, 64)
					for _, off := range []int{r.IntN(size), size - 1 - r.IntN(tail)} {
						mask := byte(1 + r.IntN(255))
						d := slices.Clone(b)
						d[off] ^= mask
						cases = append(cases, damage{fmt.Sprintf("flip byte %d of %d (xor %#02x)", off, size, mask), d})
					}
					for _, n := range []int{r.IntN(size), size - 1 - r.IntN(tail)} {
						cases = append(cases, damage{fmt.Sprintf("truncate to %d of %d bytes", n, size), b[:n:n]})
					}
				}
				cases = append(cases, damage{"delete", nil})
				for j, c := range cases {
					what := fmt.Sprintf("%s: %s", name, c.what)
					dir := fmt.Sprintf("/damaged/case-%02d-%d", i, j)
					runCorruptCase(t, h, pristine, dir, what, wal, name, c.b, &n)
				}
			}
			for _, k := range []string{"sst", "MANIFEST", "OPTIONS", "marker", "redo/checkpoint", "segment"} {
				require.True(t, kinds[k], "the directory has no %s file to damage", k)
			}
			if crashed {
				require.True(t, kinds["log"], "the crash image has no WAL to damage")
			}
			t.Logf("%d cases: %d failed at Open, %d failed after it (Check, scan or Close), %d opened and passed Check with the final state, %d with an earlier state (WAL damage)",
				n.cases, n.openErrs, n.laterErrs, n.exact, n.prefix)
			require.Equal(t, n.cases, n.openErrs+n.laterErrs+n.exact+n.prefix)
			require.Positive(t, n.openErrs)
		})
	}
}

type corruptCounts struct{ cases, openErrs, laterErrs, exact, prefix int }

// rowChange is one row's change in a committed transaction: its new
// rendering, or "" for a delete.
type rowChange struct {
	table string
	key   [2]int64
	row   string
}

// corruptHistory is what buildCorruptDB committed.
type corruptHistory struct {
	tables  []string
	commits [][]rowChange // in commit order
	flushed int           // commits before the last flush of pebble's memtable
}

// renderMetaRow renders a row of metaTable for comparison.
func renderMetaRow(r Row) string {
	s := func(v Value) string {
		if v.IsNull() {
			return "NULL"
		}
		return fmt.Sprintf("%q", v.B)
	}
	i := func(v Value) string {
		if v.IsNull() {
			return "NULL"
		}
		return fmt.Sprint(v.I)
	}
	return strings.Join([]string{s(r[mName]), i(r[mK1]), i(r[mAmount]), i(r[mU]), i(r[mK2]), s(r[mNote])}, "|")
}

// buildCorruptDB builds the test's database in dir: on disk and closed,
// or (crashed) as the crash image of one on pebble's memory filesystem,
// copied to dir.
func buildCorruptDB(t *testing.T, r *rand.Rand, dir string, crashed bool) *corruptHistory {
	// A log of 8 segments of 256 KiB: checkpoints every MiB of log
	// recycle some.
	opts := &Options{Dir: dir, PageSize: 4096, Options: cache.Options{PoolSize: 256 * 4096}, CheckpointBytes: 1 << 20,
		LogSize: 2 << 20}
	var mem *vfs.MemFS
	if crashed {
		mem = vfs.NewCrashableMem()
		opts.FS, opts.Dir = mem, "db"
	}
	db, err := Open(opts)
	require.NoError(t, err)
	h := &corruptHistory{}
	tbs := map[string]*TableHandle{}
	for _, org := range []Org{Clustered, HeapRowPointer, HeapPrimaryKey} {
		tb, err := db.CreateTable(metaTable(org))
		require.NoError(t, err)
		tbs[tb.Name()] = tb
		h.tables = append(h.tables, tb.Name())
	}
	rows := map[string]map[[2]int64]Row{}
	for _, name := range h.tables {
		rows[name] = map[[2]int64]Row{}
	}
	nextU := int64(1)
	note := func() Value {
		if r.IntN(4) == 0 {
			return Null
		}
		return Bytes([]byte(strings.Repeat(string(rune('a'+r.IntN(26))), r.IntN(200))))
	}
	newRow := func(k [2]int64) Row {
		u := Null
		if r.IntN(5) > 0 {
			u, nextU = Int(nextU), nextU+1
		}
		return Row{Str(fmt.Sprintf("n%02d", r.IntN(40))), Int(k[0]), Dec(r.Int64N(1e6)), u, Int(k[1]), note()}
	}
	keysOf := func(name string) [][2]int64 {
		ks := make([][2]int64, 0, len(rows[name]))
		for k := range rows[name] {
			ks = append(ks, k)
		}
		slices.SortFunc(ks, func(a, b [2]int64) int {
			if a[0] != b[0] {
				return int(a[0] - b[0])
			}
			return int(a[1] - b[1])
		})
		return ks
	}
	// txn runs n operations drawn by op on one table in one transaction
	// and records its changes once it has committed.
	txn := func(name string, n int, op func(tx *Tx, tb *TableHandle) rowChange) {
		tx := db.Begin(nil)
		var changes []rowChange
		for range n {
			changes = append(changes, op(tx, tbs[name]))
		}
		require.NoError(t, tx.Commit())
		h.commits = append(h.commits, changes)
	}
	insert := func(name string, k [2]int64) func(tx *Tx, tb *TableHandle) rowChange {
		return func(tx *Tx, tb *TableHandle) rowChange {
			row := newRow(k)
			require.NoError(t, tx.Insert(tb, row))
			rows[name][k] = row
			return rowChange{name, k, renderMetaRow(row)}
		}
	}
	update := func(name string) func(tx *Tx, tb *TableHandle) rowChange {
		return func(tx *Tx, tb *TableHandle) rowChange {
			ks := keysOf(name)
			k := ks[r.IntN(len(ks))]
			row := slices.Clone(rows[name][k])
			var set []Set
			switch r.IntN(3) {
			case 0:
				row[mAmount] = Dec(r.Int64N(1e6))
				set = []Set{{Column: "amount", Value: row[mAmount]}}
			case 1:
				row[mNote] = note()
				set = []Set{{Column: "note", Value: row[mNote]}}
			default:
				row[mU], nextU = Int(nextU), nextU+1
				set = []Set{{Column: "u", Value: row[mU]}}
			}
			require.NoError(t, tx.Update(tb, []Value{Int(k[0]), Int(k[1])}, set))
			rows[name][k] = row
			return rowChange{name, k, renderMetaRow(row)}
		}
	}
	del := func(name string) func(tx *Tx, tb *TableHandle) rowChange {
		return func(tx *Tx, tb *TableHandle) rowChange {
			ks := keysOf(name)
			k := ks[r.IntN(len(ks))]
			require.NoError(t, tx.Delete(tb, []Value{Int(k[0]), Int(k[1])}))
			delete(rows[name], k) // the next draw must not pick it again
			return rowChange{name, k, ""}
		}
	}
	flush := func() {
		require.NoError(t, db.store.DB().Flush())
		h.flushed = len(h.commits)
	}

	const perTable = 400
	for _, name := range h.tables {
		for i := 0; i < perTable; i += 50 {
			next := i
			txn(name, 50, func(tx *Tx, tb *TableHandle) rowChange {
				k := [2]int64{int64(next / 10), int64(next % 10)}
				next++
				return insert(name, k)(tx, tb)
			})
		}
	}
	flush()
	require.NoError(t, db.store.DB().Compact(context.Background(), []byte{0}, []byte{0xff}, false))
	for range 10 {
		for _, name := range h.tables {
			txn(name, 20, update(name))
		}
	}
	for range 5 {
		for _, name := range h.tables {
			txn(name, 20, del(name))
			next := int64(10_000 + len(h.commits)*100)
			txn(name, 10, func(tx *Tx, tb *TableHandle) rowChange {
				next++
				return insert(name, [2]int64{next / 10, next % 10})(tx, tb)
			})
		}
	}
	flush()
	if !crashed {
		// Everything into L6 first: left to itself, pebble may or may not
		// merge the L0 files at Close (its choice depends on table
		// statistics it loads in the background), and the files to
		// damage would vary from run to run.
		require.NoError(t, db.store.DB().Compact(context.Background(), []byte{0}, []byte{0xff}, false))
		require.NoError(t, db.Close())
		return h
	}
	// Commits in the WAL alone, then the crash image: what they synced,
	// no more. The witness is recorded first, so that the image does not
	// depend on when the store's background recording ran.
	for range 3 {
		for _, name := range h.tables {
			txn(name, 20, update(name))
		}
	}
	require.NoError(t, db.store.RecordManifest())
	img := mem.CrashClone(vfs.CrashCloneCfg{})
	require.NoError(t, db.Close())
	require.NoError(t, os.MkdirAll(dir, 0o755))
	var copyDir func(rel string)
	copyDir = func(rel string) {
		names, err := img.List(img.PathJoin("db", rel))
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, rel), 0o755))
		for _, name := range names {
			path := img.PathJoin("db", rel, name)
			if fi, err := img.Stat(path); err == nil && fi.IsDir() {
				copyDir(filepath.Join(rel, name))
				continue
			}
			f, err := img.Open(path)
			require.NoError(t, err)
			b, err := io.ReadAll(f)
			require.NoError(t, err)
			require.NoError(t, f.Close())
			require.NoError(t, os.WriteFile(filepath.Join(dir, rel, name), b, 0o644))
		}
	}
	copyDir("")
	return h
}

// runCorruptCase opens a copy of pristine in memory, in dir, whose file
// name has the contents b (nil: deleted), and judges the outcome (see
// TestCorruptFiles); prefixOK accepts an earlier state.
func runCorruptCase(t *testing.T, h *corruptHistory, pristine map[string][]byte, dir, what string, prefixOK bool,
	name string, b []byte, n *corruptCounts) {
	n.cases++
	fs := vfs.NewMem()
	require.NoError(t, fs.MkdirAll(dir, 0o755))
	for fn, content := range pristine {
		if fn == name {
			if content = b; content == nil {
				continue
			}
		}
		path := fs.PathJoin(dir, fn)
		require.NoError(t, fs.MkdirAll(fs.PathDir(path), 0o755))
		f, err := fs.Create(path, vfs.WriteCategoryUnspecified)
		require.NoError(t, err)
		// A clone: in race builds pebble's memory filesystem scrambles
		// what it was given to write.
		_, err = f.Write(slices.Clone(content))
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	requireDamage := func(err error, when string) {
		require.ErrorIs(t, err, ErrCorrupt, "%s: %s", what, when)
		require.Contains(t, err.Error(), dir, "%s: %s: the error names the directory", what, when)
		t.Logf("%s: %s: %v", what, when, err)
	}
	db, err := Open(&Options{FS: fs, Dir: dir, Options: cache.Options{PoolSize: 1 << 20}})
	if err != nil {
		requireDamage(err, "open")
		n.openErrs++
		return
	}
	state, err := readCorruptDB(db, h.tables)
	if err != nil {
		requireDamage(err, "check and scan")
		_ = db.Close()
		n.laterErrs++
		return
	}
	if err := db.Close(); err != nil {
		requireDamage(err, "close")
		n.laterErrs++
		return
	}
	k := matchCommits(h, state)
	switch {
	case slices.Contains(k, len(h.commits)):
		n.exact++
		t.Logf("%s: the final state", what)
	case prefixOK && slices.ContainsFunc(k, func(c int) bool { return c >= h.flushed }):
		n.prefix++
		t.Logf("%s: the state after %v of %d commits", what, k, len(h.commits))
	default:
		require.Failf(t, "wrong answer", "%s: Check passed, but the rows are the state after %v of %d commits (%d before the last flush)",
			what, k, len(h.commits), h.flushed)
	}
}

// readCorruptDB checks every table of db and reads every row, rendered, by
// table and primary key.
func readCorruptDB(db *DB, tables []string) (map[string]map[[2]int64]string, error) {
	if got, want := db.Tables(), slices.Sorted(slices.Values(tables)); !slices.Equal(got, want) {
		return nil, fmt.Errorf("tables %v, want %v", got, want)
	}
	state := map[string]map[[2]int64]string{}
	for _, name := range tables {
		tb, err := db.Table(name)
		if err != nil {
			return nil, err
		}
		tx := db.Begin(nil)
		err = tb.Check(tx)
		rows := map[[2]int64]string{}
		if err == nil {
			var cur *Cursor
			if cur, err = tx.Scan(tb, ScanOptions{}); err == nil {
				for cur.Next() {
					row := cur.Row()
					rows[[2]int64{row[mK1].I, row[mK2].I}] = renderMetaRow(row)
				}
				err = cur.Close()
			}
		}
		err = errors.Join(err, tx.Commit())
		if err != nil {
			return nil, err
		}
		state[name] = rows
	}
	return state, nil
}

// matchCommits returns every k such that the state after the first k
// commits of h is state. It keeps the set of rows where the two differ
// while it applies the commits one by one.
func matchCommits(h *corruptHistory, state map[string]map[[2]int64]string) []int {
	type key struct {
		table string
		k     [2]int64
	}
	diff := map[key]bool{}
	for name, rows := range state {
		for k := range rows {
			diff[key{name, k}] = true // the empty state has no rows
		}
	}
	var out []int
	if len(diff) == 0 {
		out = append(out, 0)
	}
	for i, c := range h.commits {
		for _, ch := range c {
			kk := key{ch.table, ch.key}
			got := state[ch.table][ch.key] // "" when absent, as a delete
			if got == ch.row {
				delete(diff, kk)
			} else {
				diff[kk] = true
			}
		}
		if len(diff) == 0 {
			out = append(out, i+1)
		}
	}
	return out
}

// The corruption kinds of the packages under the engine, and its own, all
// match ErrCorrupt.
func TestCorruptKinds(t *testing.T) {
	require.Same(t, page.ErrCorrupt, ErrCorrupt)
	for _, kind := range []error{ErrCorruptRow, ErrCorruptKey, btree.ErrCorruptTree, page.ErrCorruptPage, redo.ErrCorruptLog} {
		err := fmt.Errorf("engine: check table t: %w", kind)
		require.ErrorIs(t, err, ErrCorrupt, "%v", kind)
		require.ErrorIs(t, err, kind)
	}
	_, err := decodeRow([]byte{0xff}, metaColumns, nil)
	require.ErrorIs(t, err, ErrCorruptRow)
	require.ErrorIs(t, err, ErrCorrupt)
	_, err = decodeKey([]byte{0x07}, metaColumns, []int{mK1}, make(Row, mCols))
	require.ErrorIs(t, err, ErrCorruptKey)
	require.ErrorIs(t, err, ErrCorrupt)
}
