package engine

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// reviewScanAll collects (id, w) of every row cursor c returns and
// closes it.
func reviewScanAll(t *testing.T, c *Cursor) map[int64]int64 {
	t.Helper()
	got := map[int64]int64{}
	for c.Next() {
		r := c.Row()
		got[r[0].I] = r[2].I
	}
	require.NoError(t, c.Err())
	require.NoError(t, c.Close())
	return got
}

// TestReviewRCCursorPrunedUnderIt: under ReadCommitted a cursor on a
// versioned heap table reads with tx.hview, filled from tx.view when the
// scan opened. A later statement of the same transaction on a clustered
// table reopens tx.view in place (readView(true)), so the registered view
// (the vacuum horizon's input) moves on while the open cursor's snapshot
// stays old. Vacuum (or a prune on access) then removes a version the
// cursor's snapshot still needs.
//
// The cursor keeps a registered copy of its snapshot (Tx.cursorSnap), so
// it must return both rows at their old values, with and without a
// clustered read in between, with and without the vacuum.
func TestReviewRCCursorPrunedUnderIt(t *testing.T) { reviewRCCursor(t, true) }

// TestReviewRCCursorControlNoVacuum is the same without the vacuum: the
// cursor's rows must not depend on whether a prune ran.
func TestReviewRCCursorControlNoVacuum(t *testing.T) { reviewRCCursor(t, false) }

func reviewRCCursor(t *testing.T, vacuum bool) {
	for _, reopen := range []bool{false, true} {
		name := "no-reopen"
		if reopen {
			name = "clustered-read-reopens-view"
		}
		t.Run(name, func(t *testing.T) {
			db := hvOpen(t)
			tb, err := db.CreateTable(hvTable(HeapRowPointer))
			require.NoError(t, err)
			ct, err := db.CreateTable(mvccTable(Clustered))
			require.NoError(t, err)
			tx := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
			require.NoError(t, tx.Insert(tb, Row{Int(1), Int(10), Int(0)}))
			require.NoError(t, tx.Insert(tb, Row{Int(2), Int(20), Int(0)}))
			require.NoError(t, tx.Insert(ct, Row{Int(1), Int(1)}))
			require.NoError(t, tx.Commit())

			r := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
			c, err := r.Scan(tb, ScanOptions{})
			require.NoError(t, err)

			// A later transaction updates row 2 (HOT) and commits.
			hvUpdateWRow(t, db, tb, 2, 7)

			if reopen {
				_, _, err := r.Get(ct, []Value{Int(1)}, nil)
				require.NoError(t, err)
			}
			if vacuum {
				_, err = db.Vacuum(nil, tb)
				require.NoError(t, err)
			}

			got := reviewScanAll(t, c)
			require.NoError(t, r.Commit())
			require.Equal(t, map[int64]int64{1: 0, 2: 0}, got, "the cursor's snapshot predates the update")
		})
	}
}
