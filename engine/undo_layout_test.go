package engine

import (
	"encoding/binary"
	"testing"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/heap"
	"github.com/stretchr/testify/require"
)

// TestUndoRecordLayout pins an undo record's body to the diagram beside
// encodeStep: a change to the encoding must change it too.
func TestUndoRecordLayout(t *testing.T) {
	s := step{group: 2, kind: stepHeapUpdate, flags: valEdit, space: 300, val: []byte("old"),
		ptr: heap.RowPtr{Page: 7, Slot: 1}, ptr2: heap.RowPtr{Page: 0x01020304, Slot: 0x0506}}
	want := []byte{
		2, 'U', valEdit, 0xac, 0x02, // group, kind, flags, space 300 as a uvarint
		0, 0, 0, 7, 0, 1, // ptr (7,1)
		1, 2, 3, 4, 5, 6, // ptr2
		3, 'o', 'l', 'd'} // val
	got := encodeStep(nil, &s)
	require.Equal(t, want, got)
	back, err := decodeStep(got)
	require.NoError(t, err)
	require.Equal(t, s, back)

	tree := encodeStep(nil, &step{kind: stepTreeInsert, flags: remapKeyTail, space: 5, key: []byte{9}})
	require.Equal(t, []byte{0, 'i', 1, 5, 1, 9}, tree, "a tree insert carries its key only")

	_, err = decodeStep(append(got, 0))
	require.ErrorIs(t, err, errBadUndo, "a byte after the last field")
	require.ErrorIs(t, err, ErrCorrupt)
	for n := range len(got) {
		_, err := decodeStep(got[:n])
		require.ErrorIs(t, err, errBadUndo, "cut at %d", n)
	}
}

// TestUndoEdit: an update's undo holds an edit from the new value back to
// the old when that is shorter than the old value, and applied to the new
// value it gives the old one back.
func TestUndoEdit(t *testing.T) {
	old := []byte("quantity=0042;ytd=00000100;cnt=07;dist=abcdefghijklmnopqrstuvwx")
	nw := []byte("quantity=0037;ytd=000001005;cnt=08;dist=abcdefghijklmnopqrstuvwx")
	e := undoEdit(nil, old, nw)
	require.NotNil(t, e)
	require.Less(t, len(e), 20, "three small changes")
	back, err := applyUndoEdit(nw, e)
	require.NoError(t, err)
	require.Equal(t, old, back)
	require.Nil(t, undoEdit(nil, []byte("ab"), []byte("xy")), "the old value is shorter than an edit")
	_, err = applyUndoEdit(nw[:5], e)
	require.ErrorIs(t, err, errBadUndo, "an edit that reaches past the value")
}

// TestCheckpointRecordLayout pins the checkpoint record to the diagram
// beside checkpointLocked.
func TestCheckpointRecordLayout(t *testing.T) {
	db, err := Open(&Options{Options: cache.Options{PoolSize: 8 << 20}})
	require.NoError(t, err)
	defer db.Close()
	// A transaction id is taken at the first write (a read-only
	// transaction takes none): one writer.
	tb, err := db.CreateTable(mvccTable(Clustered))
	require.NoError(t, err)
	tx := db.Begin(nil)
	require.NoError(t, tx.Insert(tb, Row{Int(1), Int(1)}))
	require.NoError(t, tx.Commit())
	require.NoError(t, db.Checkpoint())
	rec, err := db.log.LoadCheckpoint()
	require.NoError(t, err)
	require.Len(t, rec, 24)
	redo := binary.LittleEndian.Uint64(rec[0:])
	require.Equal(t, db.log.End(), redo, "nothing logged since the checkpoint began")
	require.Equal(t, redo, binary.LittleEndian.Uint64(rec[8:]), "keep is redo: undo lives on undo pages")
	require.Equal(t, db.txSeq.Load(), binary.LittleEndian.Uint64(rec[16:]))
	require.Equal(t, uint64(1), binary.LittleEndian.Uint64(rec[16:]))
}
