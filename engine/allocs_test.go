package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
)

// Allocations on warm paths. A transaction's operations encode and decode
// into buffers it keeps (and hands to the next transaction), so once they
// have grown, the read paths below allocate exactly what they must.

// TestAllocsWarmGet: a primary-key get in a transaction that holds the
// row's lock already allocates nothing, in every organization, the heap
// tables single-version and versioned (a versioned get reads the row's
// HOT chain through its snapshot instead).
func TestAllocsWarmGet(t *testing.T) {
	for _, v := range []HeapVersioning{HeapVersionsOff, HeapVersionsOn} {
		t.Run("versions="+v.String(), func(t *testing.T) { allocsWarmGet(t, v) })
	}
}

func allocsWarmGet(t *testing.T, v HeapVersioning) {
	db, err := Open(&Options{HeapVersions: v, Options: cache.Options{PoolSize: 8 << 20}})
	require.NoError(t, err)
	defer db.Close()
	for _, org := range costOrgs {
		t.Run(org.String(), func(t *testing.T) {
			tb := costLoad(t, db, org, 300, 50)
			var m Meter
			tx := db.Begin(&m)
			defer tx.Commit()
			pk := []Value{Int(123)}
			row := make(Row, len(tb.info.def.Columns))
			get := func() {
				got, found, err := tx.Get(tb, pk, row)
				if err != nil || !found || got[0].I != 123 {
					panic("get 123 failed")
				}
			}
			get()
			require.Zero(t, testing.AllocsPerRun(100, get))
			got, _, err := tx.Get(tb, pk, row)
			require.NoError(t, err)
			require.Equal(t, costRow(123, 50), got)
		})
	}
}

// TestAllocsWarmScan: a secondary-index lookup (scan, steps, close) in a
// warm transaction allocates its Cursor and nothing else: the iterator,
// the row and the bounds' keys are the transaction's.
func TestAllocsWarmScan(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops pooled iterators: the count is checked by go test without -race")
	}
	db, err := Open(&Options{HeapVersions: HeapVersionsOff, Options: cache.Options{PoolSize: 8 << 20}})
	require.NoError(t, err)
	defer db.Close()
	for _, org := range costOrgs {
		t.Run(org.String(), func(t *testing.T) {
			tb := costLoad(t, db, org, 300, 50)
			var m Meter
			tx := db.Begin(&m)
			defer tx.Commit()
			key := []Value{Str("s041")}
			o := ScanOptions{Index: "ix_s", Lower: key, Upper: key, Columns: []string{"id", "pad"}}
			var ids []int64
			scan := func() {
				cur, err := tx.Scan(tb, o)
				if err != nil {
					panic(err)
				}
				ids = ids[:0]
				for cur.Next() {
					ids = append(ids, cur.Row()[0].I)
				}
				if err := cur.Close(); err != nil {
					panic(err)
				}
			}
			scan()
			require.EqualValues(t, 1, testing.AllocsPerRun(100, scan))
			require.Equal(t, []int64{123, 124, 125}, ids)
		})
	}
}

// TestAllocsReadTransaction: a whole read-only transaction (begin, a get,
// commit) on a meter that has met every index allocates the Tx alone: its
// buffers come from the transactions before it. The race detector's
// sync.Pool drops buffers at random, so the count is checked without it.
func TestAllocsReadTransaction(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops buffers at random under the race detector")
	}
	db, err := Open(&Options{HeapVersions: HeapVersionsOff, Options: cache.Options{PoolSize: 8 << 20}})
	require.NoError(t, err)
	defer db.Close()
	tb := costLoad(t, db, Clustered, 300, 50)
	var m Meter
	pk := []Value{Int(123)}
	row := make(Row, len(tb.info.def.Columns))
	read := func() {
		tx := db.Begin(&m)
		got, found, err := tx.Get(tb, pk, row)
		if err != nil || !found || got[0].I != 123 {
			panic("get 123 failed")
		}
		if err := tx.Commit(); err != nil {
			panic(err)
		}
	}
	read()
	require.EqualValues(t, 1, testing.AllocsPerRun(100, read))
	require.EqualValues(t, 101+1, m.Commits)
}

// A sort the index makes unnecessary (TPC-C's by-name read) allocates its
// cursor and the scan's: the plan's buffers are the transaction's, reused
// from its last sort.
func TestAllocsAvoidedSort(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops pooled iterators: the count is checked by go test without -race")
	}
	db, err := Open(&Options{HeapVersions: HeapVersionsOff, Options: cache.Options{PoolSize: 8 << 20}})
	require.NoError(t, err)
	defer db.Close()
	tb := costLoad(t, db, Clustered, 300, 50)
	var m Meter
	tx := db.Begin(&m)
	defer tx.Commit()
	key := []Value{Str("s041")}
	o := SortOptions{ScanOptions: ScanOptions{Index: "ix_s", Lower: key, Upper: key, Columns: []string{"id"}},
		OrderBy: []SortKey{{Column: "s"}}}
	var n int
	sort := func() {
		s, err := tx.Sort(tb, o)
		if err != nil {
			panic(err)
		}
		for n = 0; s.Next(); n++ {
		}
		if err := s.Close(); err != nil {
			panic(err)
		}
	}
	sort()
	require.True(t, m.SortsAvoided == 1 && m.Sorts == 0, "%s", m.SortCounts.String())
	require.Positive(t, n)
	require.EqualValues(t, 2, testing.AllocsPerRun(100, sort))
}
