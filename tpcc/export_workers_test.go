package tpcc

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/enginelab/enginelab/engine"
	"github.com/stretchr/testify/require"
)

// exportDirFiles reads every file of dir, by name.
func exportDirFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	files := make(map[string]string, len(entries))
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		files[e.Name()] = string(b)
	}
	return files
}

// TestExportWorkersSameFiles exports the shared W=1 load with one worker
// and with two, in the engine's schema and in BenchmarkSQL's (its config
// file and its history's row numbers), and requires the same files, byte
// for byte, the same report and a Progress call per file.
func TestExportWorkersSameFiles(t *testing.T) {
	skipUnderRace(t) // two exports of W=1 each, and file comparisons
	db := loadOrg(t, engine.Clustered)
	for _, schema := range []ExportSchema{SchemaSpec, SchemaBenchmarkSQL} {
		t.Run(string(schema), func(t *testing.T) {
			var files [2]map[string]string
			var stats [2]ExportReport
			for i, workers := range []int{1, 2} {
				dir := t.TempDir()
				var calls []string
				st, err := Export(db, dir, ExportConfig{Schema: schema, Workers: workers,
					Progress: func(table string, rows int64) { calls = append(calls, fmt.Sprintf("%s=%d", table, rows)) }})
				require.NoError(t, err, "%d workers", workers)
				files[i], stats[i] = exportDirFiles(t, dir), st
				want := make([]string, 0, len(st.Rows))
				for table, rows := range st.Rows {
					want = append(want, fmt.Sprintf("%s=%d", table, rows))
				}
				slices.Sort(want)
				slices.Sort(calls)
				require.Equal(t, want, calls, "%d workers: one Progress call per file", workers)
			}
			require.Len(t, files[0], len(stats[0].Rows))
			require.Equal(t, files[0], files[1])
			stats[0].Elapsed, stats[1].Elapsed = 0, 0
			require.Equal(t, stats[0], stats[1])
		})
	}
}

// TestExportWorkersSnapshot: the workers read the export's snapshot, not
// one of their own. Once their transactions exist and before they read,
// a transaction commits changes to two tables; the files still hold the
// hand-made rows as they were, and the next export shows the changes.
// Workers that began transactions of their own would see the commit (a
// read view opens at a transaction's first consistent read).
func TestExportWorkersSnapshot(t *testing.T) {
	db := exportTinyDB(t)
	wh, err := db.Table(Warehouse)
	require.NoError(t, err)
	no, err := db.Table(NewOrder)
	require.NoError(t, err)
	called := 0
	testHookShared = func() {
		called++
		if called > 1 {
			return
		}
		tx := db.Begin(nil)
		require.NoError(t, tx.Update(wh, []engine.Value{engine.Int(2)}, []engine.Set{{Column: "w_city", Value: engine.Str("changed")}}))
		require.NoError(t, tx.Insert(no, engine.Row{engine.Int(4), engine.Int(2), engine.Int(1)}))
		require.NoError(t, tx.Commit())
	}
	t.Cleanup(func() { testHookShared = nil })

	dir := t.TempDir()
	_, err = Export(db, dir, ExportConfig{Workers: 2})
	require.NoError(t, err)
	require.Equal(t, 1, called)
	want := exportTinyFiles("")
	for name, body := range want {
		require.Equal(t, body, exportDirFiles(t, dir)[name+".csv"], name)
	}

	dir = t.TempDir()
	_, err = Export(db, dir, ExportConfig{Workers: 2})
	require.NoError(t, err)
	got := exportDirFiles(t, dir)
	require.Equal(t, strings.Replace(want[Warehouse], ",ok,NULL,", ",ok,changed,", 1), got[Warehouse+".csv"])
	require.Equal(t, want[NewOrder]+"4,2,1\n", got[NewOrder+".csv"])
	rw, views := db.ActiveTransactions()
	require.Equal(t, [2]int{0, 0}, [2]int{rw, views}, "nothing left open")
}

// TestExportWorkersLargestFirst: the workers take the files in the order
// of their tables' data pages, largest first, ties in the schema's order:
// ORDER_LINE with 3,000 rows, then CUSTOMER with 300 wide ones, then the
// rest, a root page each, as TableNames lists them.
func TestExportWorkersLargestFirst(t *testing.T) {
	db := exportTinyDB(t)
	tbl := func(name string) *engine.TableHandle {
		h, err := db.Table(name)
		require.NoError(t, err)
		return h
	}
	i, s, d := engine.Int, engine.Str, engine.Dec
	tx := db.Begin(nil)
	for o := int64(1); o <= 300; o++ {
		for n := int64(1); n <= 10; n++ {
			require.NoError(t, tx.Insert(tbl(OrderLine), engine.Row{i(100 + o), i(3), i(1), i(n), i(n), i(1), engine.Null, i(5), d(100), s(strings.Repeat("x", 24))}))
		}
	}
	ts := engine.Time(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	for c := int64(1); c <= 300; c++ {
		require.NoError(t, tx.Insert(tbl(Customer), engine.Row{i(c), i(1), i(1), s("first"), s("OE"), s("BARBARBAR"),
			s("street1"), s("street2"), s("city"), s("ST"), s("123411111"), s("0123456789012345"), ts, s("GC"),
			d(5000000), d(1000), d(-1000), d(1000), i(1), i(0), s(strings.Repeat("d", 400))}))
	}
	require.NoError(t, tx.Commit())
	pages := func(name string) int64 {
		n, err := tbl(name).DataPages()
		require.NoError(t, err)
		return n
	}
	require.Greater(t, pages(OrderLine), pages(Customer))
	require.Greater(t, pages(Customer), pages(Item))

	var order []string
	testHookExportWorkers = func(o []string) { order = o }
	t.Cleanup(func() { testHookExportWorkers = nil })
	_, err := Export(db, t.TempDir(), ExportConfig{Workers: 2})
	require.NoError(t, err)
	want := []string{OrderLine, Customer}
	for _, name := range TableNames {
		if name != OrderLine && name != Customer {
			require.Equal(t, pages(Item), pages(name), "%s: one root page, as ITEM", name)
			want = append(want, name)
		}
	}
	require.Equal(t, want, order)
}

// TestSharedSnapshotNoLocks: a part of a shared snapshot's reads that
// takes row locks fails, rather than ending the transaction and going on
// in a snapshot of its own, as a job's own reads do on such tables.
func TestSharedSnapshotNoLocks(t *testing.T) {
	db, err := engine.Open(&engine.Options{Commit: engine.NoSyncCommit, HeapVersions: engine.HeapVersionsOff})
	require.NoError(t, err)
	defer db.Close()
	var h *engine.TableHandle
	for _, def := range Tables(engine.HeapRowPointer) {
		if def.Name == Warehouse {
			h, err = db.CreateTable(def)
			require.NoError(t, err)
		}
	}
	tx := db.Begin(nil)
	require.NoError(t, tx.Insert(h, engine.Row{engine.Int(1), engine.Str("w"), engine.Str("s1"), engine.Str("s2"),
		engine.Str("c"), engine.Str("st"), engine.Str("123411111"), engine.Dec(500), engine.Dec(0)}))
	require.NoError(t, tx.Commit())
	read := func(tx *engine.Tx) error {
		_, _, err := tx.Get(h, []engine.Value{engine.Int(1)}, nil)
		return err
	}

	own := &snapshotReads{db: db}
	require.NoError(t, own.part(read))
	require.True(t, own.locking, "a locking read: the job's own transaction commits")
	require.Nil(t, own.tx)

	src := db.BeginTx(nil, engine.TxOptions{Isolation: engine.RepeatableRead})
	defer func() { _ = src.Rollback() }()
	wtx, err := src.ShareSnapshot(nil)
	require.NoError(t, err)
	shared := &snapshotReads{db: db, tx: wtx, locks: wtx.Meter().LockRequests, shared: true}
	defer shared.abort()
	err = shared.part(read)
	require.ErrorContains(t, err, "shared snapshot took row locks")
	require.Same(t, wtx, shared.tx, "no other transaction begun")
}

// TestExportWorkersOneAtATime: tables read with locks (heap tables
// without versions), and a database on another Runtime, are exported by
// one goroutine whatever Workers says: no worker starts, and the files
// come in the schema's order.
func TestExportWorkersOneAtATime(t *testing.T) {
	testHookExportWorkers = func([]string) { t.Error("workers started") }
	t.Cleanup(func() { testHookExportWorkers = nil })
	for _, tc := range []struct {
		name string
		org  engine.Org
		opts engine.Options
	}{
		{"locking reads", engine.HeapRowPointer, engine.Options{Commit: engine.NoSyncCommit, HeapVersions: engine.HeapVersionsOff}},
		{"other runtime", engine.Clustered, engine.Options{Commit: engine.NoSyncCommit, Runtime: otherRuntime{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := engine.Open(&tc.opts)
			require.NoError(t, err)
			defer db.Close()
			for _, def := range Tables(tc.org) {
				h, err := db.CreateTable(def)
				require.NoError(t, err)
				if def.Name == Warehouse {
					tx := db.Begin(nil)
					require.NoError(t, tx.Insert(h, engine.Row{engine.Int(1), engine.Str("w"), engine.Str("s1"), engine.Str("s2"),
						engine.Str("c"), engine.Str("st"), engine.Str("123411111"), engine.Dec(500), engine.Dec(0)}))
					require.NoError(t, tx.Commit())
				}
			}
			if tc.org != engine.Clustered {
				h, err := db.Table(Warehouse)
				require.NoError(t, err)
				require.False(t, h.Versioned())
			}
			var calls []string
			_, err = Export(db, t.TempDir(), ExportConfig{Workers: 2, Progress: func(table string, _ int64) { calls = append(calls, table) }})
			require.NoError(t, err)
			require.Equal(t, TableNames, calls)
		})
	}
}

// TestExportWorkerError: a file that fails while a worker writes it fails
// the export with that error (naming the file), the failed file is
// removed, and no transaction or read view is left open.
func TestExportWorkerError(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("skipped: no /dev/full")
	}
	db := exportTinyDB(t)
	dir := t.TempDir()
	path := filepath.Join(dir, Warehouse+".csv")
	require.NoError(t, os.Symlink("/dev/full", path))
	var done []string
	_, err := Export(db, dir, ExportConfig{Workers: 2, Progress: func(table string, _ int64) { done = append(done, table) }})
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.ErrorContains(t, err, path)
	_, err = os.Lstat(path)
	require.ErrorIs(t, err, os.ErrNotExist, "the failed file is removed")
	require.NotContains(t, done, Warehouse)
	for _, table := range done {
		require.FileExists(t, filepath.Join(dir, table+".csv"))
	}
	rw, views := db.ActiveTransactions()
	require.Equal(t, [2]int{0, 0}, [2]int{rw, views}, "nothing left open")
}

// BenchmarkExport exports the shared W=1 load (clustered, one snapshot)
// with one worker and with two: the rows written per export are the same
// (rows/op), the wall time is what more workers change.
func BenchmarkExport(b *testing.B) {
	db, _ := loadW1(b)
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			dir := b.TempDir()
			var rows int64
			b.ReportAllocs()
			for range b.N {
				st, err := Export(db, dir, ExportConfig{Workers: workers})
				if err != nil {
					b.Fatal(err)
				}
				rows += st.TotalRows
			}
			b.ReportMetric(float64(rows)/float64(b.N), "rows/op")
		})
	}
}
