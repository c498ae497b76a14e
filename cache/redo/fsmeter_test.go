package redo_test

import (
	"fmt"
	"testing"

	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/stretchr/testify/require"
)

// TestLogFSBytes requires what the log writes to reach the store's
// filesystem meter in the redo class, exactly: the framed records (the
// log's own byte counter) in one write per group write and one sync per
// SyncTo; its checkpoint record in another class.
func TestLogFSBytes(t *testing.T) {
	e := newLogEnv(t, nil)
	// The first write creates the first segment: created under a
	// temporary name (an in-memory file is not zero-filled: it grows as
	// it is written), synced, renamed, the directory synced, then the
	// segment header and the record written and synced.
	before := e.st.FSStats()
	var c redo.Counts
	appendNote(e.l, &c, "first")
	require.NoError(t, e.l.SyncTo(nil, e.l.End()))
	d := e.st.FSStats().Sub(before)
	require.Equal(t, store.FSCounts{Bytes: 32 + c.LogBytes, Writes: 1, Syncs: 3, Created: 1, Renamed: 1}, d.Redo,
		"segment header (32 bytes) and the record")
	require.Zero(t, d.Other, "no checkpoint was saved")

	// Records of known sizes, written and synced once.
	before, c = e.st.FSStats(), redo.Counts{}
	for i := range 50 {
		appendNote(e.l, &c, fmt.Sprintf("record %d %*s", i, i, ""))
	}
	require.NoError(t, e.l.SyncTo(nil, e.l.End()))
	d = e.st.FSStats().Sub(before)
	require.Equal(t, int64(50), c.LogRecords)
	require.Equal(t, store.FSCounts{Bytes: c.LogBytes, Writes: 1, Syncs: 1}, d.Redo)
	require.Zero(t, d.Tables)

	// A checkpoint record goes to the control file: another class.
	before = e.st.FSStats()
	require.NoError(t, e.l.SaveCheckpoint(make([]byte, 24)))
	d = e.st.FSStats().Sub(before)
	require.Positive(t, d.Other.Bytes, "the control file")
	require.Positive(t, d.Other.Syncs)

	// Whatever else happened, the files got at least what the log
	// counted.
	require.GreaterOrEqual(t, e.st.FSStats().Redo.Bytes, e.l.Stats().Bytes)
}
