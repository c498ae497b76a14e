package engine

import (
	"encoding/binary"
	"testing"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/heap"
	"github.com/stretchr/testify/require"
)

// TestNoteLayout pins the transaction notes' bytes to the diagrams beside
// noteStep and encodeStep: a change to the encoding must change them too.
func TestNoteLayout(t *testing.T) {
	s := step{group: 2, kind: stepHeapUpdate, space: 300, key: []byte{}, val: []byte("old"),
		ptr: heap.RowPtr{Page: 7, Slot: 1}, ptr2: heap.RowPtr{Page: 0x01020304, Slot: 0x0506}}
	want := []byte{'S', 0x81, 0x01, // tx 129 as a uvarint
		2, 'U', 0, 0xac, 0x02, // group, kind, flags, space 300 as a uvarint
		0,                // key: empty
		3, 'o', 'l', 'd', // val
		0, 0, 0, 7, 0, 1, // ptr (7,1)
		1, 2, 3, 4, 5, 6} // ptr2
	got := encodeStep(nil, 129, &s)
	require.Equal(t, want, got)
	n, err := decodeNote(got)
	require.NoError(t, err)
	require.Equal(t, uint64(129), n.tx)
	require.Equal(t, s, n.step)

	tree := encodeStep(nil, 1, &step{kind: stepTreeInsert, flags: remapKeyTail, space: 5, key: []byte{9}})
	require.Equal(t, []byte{'S', 1, 0, 'i', 1, 5, 1, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, tree,
		"a tree step still carries both (zero) row pointers")

	require.Equal(t, []byte{'K', 0x81, 0x01}, commitNote(nil, 129))
	require.Equal(t, []byte{'E', 0x81, 0x01}, endNote(129))

	// The compensation note, as undoer.undo writes it.
	clr := []byte{'C', 0x81, 0x01, 4, 0, 0, 0, 9, 0, 3}
	n, err = decodeNote(clr)
	require.NoError(t, err)
	require.Equal(t, txNote{kind: noteCLR, tx: 129, n: 4, ptr: heap.RowPtr{Page: 9, Slot: 3}}, n)
	_, err = decodeNote(append(clr, 0))
	require.ErrorIs(t, err, errBadNote, "a byte after the last field")
}

// TestCheckpointRecordLayout pins the checkpoint record to the diagram
// beside checkpointLocked.
func TestCheckpointRecordLayout(t *testing.T) {
	db, err := Open(&Options{Options: cache.Options{PoolSize: 8 << 20}})
	require.NoError(t, err)
	defer db.Close()
	tx := db.Begin(nil)
	require.NoError(t, tx.Commit())
	require.NoError(t, db.Checkpoint())
	rec, err := db.log.LoadCheckpoint()
	require.NoError(t, err)
	require.Len(t, rec, 24)
	redo := binary.LittleEndian.Uint64(rec[0:])
	require.Equal(t, db.log.End(), redo, "nothing logged since the checkpoint began")
	require.Equal(t, redo, binary.LittleEndian.Uint64(rec[8:]), "no transaction active: keep is redo")
	require.Equal(t, db.txSeq.Load(), binary.LittleEndian.Uint64(rec[16:]))
	require.Equal(t, uint64(1), binary.LittleEndian.Uint64(rec[16:]))
}
