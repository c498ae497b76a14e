package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/btree"
	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/store"
)

// reportTable declares a small table with two secondary indexes.
func reportTable(name string, org Org) Table {
	return Table{
		Name: name,
		Columns: []Column{
			{Name: "id", Type: TypeInt},
			{Name: "k", Type: TypeInt},
			{Name: "s", Type: TypeVarchar, Length: 32},
			{Name: "pad", Type: TypeVarchar, Length: 200, Nullable: true},
		},
		PrimaryKey: []string{"id"},
		Indexes: []Index{
			{Name: "ix_s", Columns: []string{"s"}},
			{Name: "ix_k", Columns: []string{"k"}, Unique: true},
		},
		Org: org,
	}
}

// reportTreeBytes sums what the entries of a one-node tree take: a 6-byte
// slot, a 4-byte cell header, the key and the value each.
func reportTreeBytes(t *testing.T, tr *btree.Tree) (entries, n int64) {
	t.Helper()
	it := tr.NewIter(nil, &btree.IterOptions{})
	for ok := it.First(); ok; ok = it.Next() {
		entries++
		n += int64(6 + 4 + len(it.Key()) + len(it.Value()))
	}
	require.NoError(t, it.Close())
	return entries, n
}

func TestSpaceReportOrderAndBytes(t *testing.T) {
	db, err := Open(&Options{Options: cache.Options{PoolSize: 8 << 20}})
	require.NoError(t, err)
	defer db.Close()
	// Created out of name order: the report sorts by table name.
	orgs := map[string]Org{"c_heappk": HeapPrimaryKey, "a_clustered": Clustered, "b_rowptr": HeapRowPointer}
	for _, name := range []string{"c_heappk", "a_clustered", "b_rowptr"} {
		tb, err := db.CreateTable(reportTable(name, orgs[name]))
		require.NoError(t, err)
		tx := db.Begin(nil)
		for i := int64(1); i <= 20; i++ {
			require.NoError(t, tx.Insert(tb, Row{Int(i), Int(100 + i), Str(fmt.Sprintf("s%02d", i%7)), Str(strings.Repeat("p", int(i)))}))
		}
		require.NoError(t, tx.Commit())
	}
	_, err = db.CreateTable(reportTable("d_empty", HeapRowPointer))
	require.NoError(t, err)

	stats, err := db.SpaceReport()
	require.NoError(t, err)
	type row struct {
		table, index string
		kind         SpaceKind
	}
	var got []row
	for _, s := range stats {
		got = append(got, row{s.Table, s.Index, s.Kind})
	}
	require.Equal(t, []row{
		{"a_clustered", "PRIMARY", SpaceClustered}, {"a_clustered", "ix_s", SpaceSecondary}, {"a_clustered", "ix_k", SpaceSecondary},
		{"b_rowptr", "PRIMARY", SpacePrimary}, {"b_rowptr", "ix_s", SpaceSecondary}, {"b_rowptr", "ix_k", SpaceSecondary}, {"b_rowptr", "heap", SpaceHeap},
		{"c_heappk", "PRIMARY", SpacePrimary}, {"c_heappk", "ix_s", SpaceSecondary}, {"c_heappk", "ix_k", SpaceSecondary}, {"c_heappk", "heap", SpaceHeap},
		{"d_empty", "PRIMARY", SpacePrimary}, {"d_empty", "ix_s", SpaceSecondary}, {"d_empty", "ix_k", SpaceSecondary}, {"d_empty", "heap", SpaceHeap},
	}, got)

	body := float64(db.Pool().PageSize() - page.HeaderSize)
	for _, s := range stats {
		tb, err := db.Table(s.Table)
		require.NoError(t, err)
		if s.Kind == SpaceHeap {
			require.Equal(t, tb.entry.Heap, s.Space)
			require.Zero(t, s.Height)
			var rows, n int64
			sc := tb.heap.NewScan(nil)
			for sc.Next() {
				rows++
				n += int64(len(sc.Row()) + 4)
			}
			require.NoError(t, sc.Close())
			require.Equal(t, rows, s.Entries)
			require.Equal(t, n, s.Bytes)
			if s.Table == "d_empty" {
				require.Zero(t, s.Pages)
				require.Zero(t, s.Fill)
			} else {
				require.Equal(t, 1, s.Pages) // 20 short rows: one heap page
				require.EqualValues(t, 20, s.Entries)
				require.InDelta(t, float64(s.Bytes)/body, s.Fill, 1e-12)
			}
			continue
		}
		ix, err := tb.index(s.Index)
		require.NoError(t, err)
		require.Equal(t, ix.tree.Space(), s.Space)
		// Every tree here is a lone root leaf: Bytes is exactly its
		// entries' slots and cells.
		require.Equal(t, 1, s.Pages, "%+v", s)
		require.Equal(t, 1, s.Height)
		entries, n := reportTreeBytes(t, ix.tree)
		require.Equal(t, entries, s.Entries)
		require.Equal(t, n, s.Bytes, "%+v", s)
		require.InDelta(t, float64(n)/body, s.Fill, 1e-12)
		if s.Table == "d_empty" {
			require.Zero(t, s.Bytes)
		} else {
			require.EqualValues(t, 20, s.Entries)
		}
	}

	// JSON: plain fields, no NaN for the empty heap.
	raw, err := json.Marshal(stats)
	require.NoError(t, err)
	var back []SpaceStats
	require.NoError(t, json.Unmarshal(raw, &back))
	require.Equal(t, stats, back)
	require.Contains(t, string(raw), `{"table":"a_clustered","index":"PRIMARY","kind":"clustered","space":`)

	// Text: a header and one aligned line per space.
	var b bytes.Buffer
	require.NoError(t, FormatSpaceReport(&b, stats))
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	require.Len(t, lines, 1+len(stats))
	require.Equal(t, []string{"TABLE", "INDEX", "KIND", "SPACE", "PAGES", "HEIGHT", "ENTRIES", "BYTES", "FILL"}, strings.Fields(lines[0]))
	col := strings.Index(lines[0], "KIND")
	for i, s := range stats {
		f := strings.Fields(lines[1+i])
		require.Len(t, f, 9, lines[1+i])
		require.Equal(t, []string{s.Table, s.Index, string(s.Kind)}, f[:3])
		require.Equal(t, string(s.Kind), lines[1+i][col:col+len(s.Kind)], "columns aligned")
		require.Equal(t, fmt.Sprintf("%.1f%%", 100*s.Fill), f[8])
		if s.Kind == SpaceHeap {
			require.Equal(t, "-", f[5])
		}
	}
}

// TestSpaceReportMultiLevel checks the report against a tree that splits:
// pages and height from the tree's shape, fill between half and full.
func TestSpaceReportMultiLevel(t *testing.T) {
	db, err := Open(&Options{Options: cache.Options{PoolSize: 16 << 20}, PageSize: 4096})
	require.NoError(t, err)
	defer db.Close()
	for _, org := range []Org{Clustered, HeapRowPointer, HeapPrimaryKey} {
		tb, err := db.CreateTable(reportTable("t_"+org.String(), org))
		require.NoError(t, err)
		tx := db.Begin(nil)
		for i := int64(1); i <= 3000; i++ {
			require.NoError(t, tx.Insert(tb, Row{Int(i), Int(i), Str(fmt.Sprintf("s%06d", i*7919%3001)), Str(strings.Repeat("p", 40))}))
		}
		require.NoError(t, tx.Commit())
	}
	stats, err := db.SpaceReport()
	require.NoError(t, err)
	require.Len(t, stats, 3+4+4)
	for _, s := range stats {
		require.EqualValues(t, 3000, s.Entries, "%+v", s)
		require.Greater(t, s.Pages, 1, "%+v", s)
		if s.Kind != SpaceHeap {
			require.GreaterOrEqual(t, s.Height, 2, "%+v", s)
		}
		// Sequential inserts leave B+tree leaves about half full at
		// worst; the heap packs its pages.
		require.Greater(t, s.Fill, 0.4, "%+v", s)
		require.Less(t, s.Fill, 1.0, "%+v", s)
	}
	var b bytes.Buffer
	require.NoError(t, FormatSpaceReport(&b, stats))
	t.Logf("\n%s", b.String())
}

func TestSpaceReportClosed(t *testing.T) {
	db, err := Open(&Options{Options: cache.Options{PoolSize: 4 << 20}})
	require.NoError(t, err)
	_, err = db.CreateTable(reportTable("t", Clustered))
	require.NoError(t, err)
	require.NoError(t, db.Close())
	_, err = db.SpaceReport()
	require.ErrorIs(t, err, ErrClosed)
}

func TestFormatFSStats(t *testing.T) {
	s := FSStats{Redo: store.FSCounts{Bytes: 1000, Writes: 10, Syncs: 4, Created: 1, Renamed: 1},
		WAL: store.FSCounts{Bytes: 3000, Writes: 3, Syncs: 2}}
	var b strings.Builder
	require.NoError(t, FormatFSStats(&b, s, 10))
	want := `        CLASS  BYTES  WRITES  SYNCS  CREATED  REMOVED  RENAMED  BYTES/TX
         redo   1000      10      4        1        0        1       100
          wal   3000       3      2        0        0        0       300
          sst      0       0      0        0        0        0         0
  pebble-meta      0       0      0        0        0        0         0
        other      0       0      0        0        0        0         0
        total   4000      13      6        1        0        1       400
`
	require.Equal(t, want, b.String())
	b.Reset()
	require.NoError(t, FormatFSStats(&b, s, 0))
	require.Contains(t, b.String(), "  4000      13      6        1        0        1         -\n", "no commits: no per-transaction figure")
}

// TestDataPages: a table's data pages are those of the space holding its
// rows, meta page included: for a clustered table the primary tree's nodes
// and the meta page; for a heap table the heap pages, the one page of its
// free-space map and the meta page. They grow with the rows, and the
// indexes of a heap table do not count.
func TestDataPages(t *testing.T) {
	db, err := Open(&Options{Options: cache.Options{PoolSize: 8 << 20}})
	require.NoError(t, err)
	defer db.Close()
	for _, org := range []Org{Clustered, HeapRowPointer, HeapPrimaryKey} {
		t.Run(org.String(), func(t *testing.T) {
			tb, err := db.CreateTable(reportTable("t_"+org.String(), org))
			require.NoError(t, err)
			pagesOf := func() (data int64, spaces map[SpaceKind]int) {
				t.Helper()
				data, err := tb.DataPages()
				require.NoError(t, err)
				stats, err := db.SpaceReport()
				require.NoError(t, err)
				spaces = map[SpaceKind]int{}
				for _, s := range stats {
					if s.Table == tb.Name() {
						spaces[s.Kind] += s.Pages
					}
				}
				return data, spaces
			}
			extra := int64(1) // the meta page
			if org != Clustered {
				extra = 2 // and the free-space map's page
			}
			rows := func() int64 {
				data, spaces := pagesOf()
				if org == Clustered {
					require.Equal(t, int64(spaces[SpaceClustered])+extra, data)
					return int64(spaces[SpaceClustered])
				}
				require.Equal(t, int64(spaces[SpaceHeap])+extra, data)
				return int64(spaces[SpaceHeap])
			}
			empty := int64(1) // the root, a leaf
			if org != Clustered {
				empty = 0 // no heap page yet
			}
			require.Equal(t, empty, rows())
			tx := db.Begin(nil)
			for i := int64(1); i <= 400; i++ {
				require.NoError(t, tx.Insert(tb, Row{Int(i), Int(i), Str(fmt.Sprintf("s%03d", i)), Str(strings.Repeat("p", 200))}))
			}
			require.NoError(t, tx.Commit())
			full := rows()
			require.Greater(t, full, int64(4)) // 400 rows of some 220 bytes
			if org != Clustered {
				return // a heap keeps its pages, as PostgreSQL's does
			}
			// Emptied and purged, the tree frees its leaves: a space's
			// high water never falls, so only the free pages' count
			// brings the data pages down.
			tx = db.Begin(nil)
			for i := int64(1); i <= 400; i++ {
				require.NoError(t, tx.Delete(tb, []Value{Int(i)}))
			}
			require.NoError(t, tx.Commit())
			_, err = db.PurgeStep(nil, 0)
			require.NoError(t, err)
			require.Less(t, rows(), full)
		})
	}
}
