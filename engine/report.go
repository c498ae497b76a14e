package engine

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/store"
)

// SpaceKind says what a space of a table holds.
type SpaceKind string

// Space kinds.
const (
	// SpaceClustered is the primary-key B+tree of a Clustered table: its
	// values are the rows.
	SpaceClustered SpaceKind = "clustered"
	// SpacePrimary is the primary-key index of a heap table: primary key →
	// row pointer.
	SpacePrimary SpaceKind = "primary"
	// SpaceSecondary is a secondary index.
	SpaceSecondary SpaceKind = "secondary"
	// SpaceHeap is the heap of a heap table.
	SpaceHeap SpaceKind = "heap"
)

// SpaceStats describes the space one index or heap of a table takes.
//
// The page body is the page less the header that package cache owns
// (PageSize − 32 bytes). Bytes counts what the structure stores in it: for
// a B+tree, the slots and live cells of every node (btree.Shape.Bytes); for
// a heap, the live rows and one 4-byte slot each. The B+tree node header
// (28 bytes), the heap page header (12 bytes), free space, dead cells and
// deleted slots are not in Bytes, so Fill never quite reaches 1.
type SpaceStats struct {
	Table string `json:"table"`
	// Index is "PRIMARY", a secondary index's name, or "heap".
	Index string    `json:"index"`
	Kind  SpaceKind `json:"kind"`
	Space uint32    `json:"space"`
	// Pages counts the tree's nodes, or the heap's heap pages (not its
	// free-space-map pages nor the space's meta page).
	Pages int `json:"pages"`
	// Height is the number of levels of a tree (1: a lone root leaf); 0
	// for a heap.
	Height int `json:"height"`
	// Entries counts the tree's entries, or the heap's live rows.
	Entries int64 `json:"entries"`
	// Bytes is what the entries (or rows) take of the pages, see above.
	Bytes int64 `json:"bytes"`
	// Fill is Bytes / (Pages × page body), 0 when there are no pages.
	Fill float64 `json:"fill"`
}

// heapSlotSize is the slot a heap page keeps for each row: offset (2B) and
// length (2B). The heap does not export it (see heap/page.go).
const heapSlotSize = 4

// SpaceReport walks every table's indexes and heap and describes the space
// each takes: tables by name, then for each its primary index, its
// secondary indexes in declaration order and its heap. It reads every page
// through the buffer pool, charged to no meter, and checks each B+tree's
// invariants on the way (an error wraps btree.ErrCorruptTree). Run it while
// no transaction writes, for an exact answer.
func (db *DB) SpaceReport() ([]SpaceStats, error) {
	db.mu.Lock()
	if db.mu.closed {
		db.mu.Unlock()
		return nil, ErrClosed
	}
	tables := make([]*TableHandle, 0, len(db.mu.tables))
	for _, t := range db.mu.tables {
		tables = append(tables, t)
	}
	db.mu.Unlock()
	slices.SortFunc(tables, func(a, b *TableHandle) int { return strings.Compare(a.Name(), b.Name()) })
	body := db.pool.PageSize() - page.HeaderSize
	var out []SpaceStats
	for _, t := range tables {
		for i, ix := range t.ixs {
			shape, err := ix.tree.Check(nil)
			if err != nil {
				return nil, fmt.Errorf("engine: space report: table %s: index %s: %w", t.Name(), ix.name, err)
			}
			kind := SpaceSecondary
			switch {
			case i == 0 && t.org == Clustered:
				kind = SpaceClustered
			case i == 0:
				kind = SpacePrimary
			}
			out = append(out, newSpaceStats(t.Name(), ix.name, kind, ix.tree.Space(), body,
				shape.Inner+shape.Leaves, shape.Height, int64(shape.Entries), int64(shape.Bytes)))
		}
		if t.heap != nil {
			s, err := heapSpace(t, body)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
	}
	return out, nil
}

func newSpaceStats(table, index string, kind SpaceKind, space uint32, body, pages, height int, entries, bytes int64) SpaceStats {
	s := SpaceStats{Table: table, Index: index, Kind: kind, Space: space, Pages: pages,
		Height: height, Entries: entries, Bytes: bytes}
	if pages > 0 && body > 0 {
		s.Fill = float64(bytes) / (float64(pages) * float64(body))
	}
	return s
}

// heapSpace describes the heap of t: its heap pages, counted by kind among
// pages 1 .. HighWater-1, and its live rows, read by a scan.
func heapSpace(t *TableHandle, body int) (SpaceStats, error) {
	h := t.heap
	fail := func(err error) (SpaceStats, error) {
		return SpaceStats{}, fmt.Errorf("engine: space report: table %s: heap: %w", t.Name(), err)
	}
	pages := 0
	for no := uint32(1); no < h.HighWater(); no++ {
		pg, err := t.db.pool.Fetch(nil, page.ID{Space: h.Space(), Page: no})
		if err != nil {
			return fail(err)
		}
		pg.RLatch()
		if page.KindOf(pg.Data()) == page.KindHeap {
			pages++
		}
		pg.RUnlatch()
		pg.Unpin(false)
	}
	var rows, bytes int64
	s := h.NewScan(nil)
	for s.Next() {
		rows++
		bytes += int64(len(s.Row()) + heapSlotSize)
	}
	if err := s.Close(); err != nil {
		return fail(err)
	}
	return newSpaceStats(t.Name(), "heap", SpaceHeap, h.Space(), body, pages, 0, rows, bytes), nil
}

// FormatSpaceReport writes stats as an aligned text table, one line per
// space, fill as a percentage.
func FormatSpaceReport(w io.Writer, stats []SpaceStats) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "TABLE\tINDEX\tKIND\tSPACE\tPAGES\tHEIGHT\tENTRIES\tBYTES\tFILL\n")
	for _, s := range stats {
		height := "-"
		if s.Kind != SpaceHeap {
			height = fmt.Sprint(s.Height)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%d\t%d\t%.1f%%\n",
			s.Table, s.Index, s.Kind, s.Space, s.Pages, height, s.Entries, s.Bytes, 100*s.Fill)
	}
	return tw.Flush()
}

// FormatFSStats writes what the database wrote through its filesystem
// (DB.FSStats, or the difference of two readings) as an aligned text
// table, one line per class of file and a total, with the bytes per
// committed transaction when commits (DB.Commits over the same span) is
// positive. Background writes (page flushes, checkpoints, pebble's
// compactions) belong to no transaction: the per-transaction figure is
// the span's total over its commits.
func FormatFSStats(w io.Writer, s FSStats, commits int64) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "CLASS\tBYTES\tWRITES\tSYNCS\tCREATED\tREMOVED\tRENAMED\tBYTES/TX\t\n")
	line := func(name string, c store.FSCounts) {
		perTx := "-"
		if commits > 0 {
			perTx = fmt.Sprintf("%.0f", float64(c.Bytes)/float64(commits))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", name, c.Bytes, c.Writes, c.Syncs, c.Created, c.Removed, c.Renamed, perTx)
	}
	for c := range store.NumFSClasses {
		line(c.String(), *s.Class(c))
	}
	line("total", s.Total())
	return tw.Flush()
}

// String is the recovery in one line: what was redone and rolled back,
// and how long each phase took.
func (s RecoveryStats) String() string {
	return fmt.Sprintf("redid %d records (%d bytes of log, LSN %d to %d): %d page changes, %d applied, %d already on their page, %d pages read; rolled back %d transactions; redo %v, rollback %v, checkpoint %v",
		s.Records, s.Bytes, s.CheckpointLSN, s.EndLSN, s.Pages, s.PagesApplied, s.PagesSkipped, s.PagesRead,
		s.RolledBack, s.Redo.Round(time.Microsecond), s.Rollback.Round(time.Microsecond), s.Checkpoint.Round(time.Microsecond))
}
