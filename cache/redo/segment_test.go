package redo_test

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/stretchr/testify/require"
)

// The tests of the log's files: segments of 32 KiB (the smallest
// capacity, redo.MinCapacity, eight of them), records of noteLen-byte
// notes, so that a segment holds recsPerSeg frames of frameLen bytes.
const (
	noteLen  = 1000
	frameLen = 8 + 1 + 2 + noteLen // header, npages, note length (2-byte uvarint), note
	segLen   = redo.MinCapacity / 8
	// recsPerSeg frames fit after a segment's 32-byte header.
	recsPerSeg = (segLen - redo.FirstLSN) / frameLen
)

var smallLog = &redo.LogOptions{Capacity: redo.MinCapacity}

// note is record i's note: noteLen bytes, its number first. cycle tells
// apart notes of the same number written at different times.
func note(i int, cycle string) string {
	s := fmt.Sprintf("%s%06d ", cycle, i)
	return s + strings.Repeat(string(rune('a'+i%26)), noteLen-len(s))
}

// openStoreOn opens a store in fs's "enginelab" directory, closed when
// the test ends.
func openStoreOn(t testing.TB, fs vfs.FS) *store.PebbleStore {
	t.Helper()
	st, err := store.OpenPebble(store.PebbleOptions{FS: fs, PageSize: testPageSize})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// openLog opens the log of st, closed when the test ends.
func openLog(t testing.TB, st *store.PebbleStore, lo *redo.LogOptions) *redo.Log {
	t.Helper()
	l, err := redo.Open(st, lo)
	require.NoError(t, err)
	t.Cleanup(l.Close)
	return l
}

// notes scans l from from and returns the notes of its records.
func notes(t testing.TB, l *redo.Log, from uint64) []string {
	t.Helper()
	var out []string
	for _, r := range scanLog(t, l, from) {
		_, n, err := redo.Decode(r.body, nil)
		require.NoError(t, err)
		out = append(out, string(n))
	}
	return out
}

func segPath(st *store.PebbleStore, start uint64) string {
	return st.FS().PathJoin(st.Dir(), "redo", fmt.Sprintf("%016x", start))
}

func readAll(t testing.TB, fs vfs.FS, path string) []byte {
	t.Helper()
	f, err := fs.Open(path)
	require.NoError(t, err)
	defer f.Close()
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	return b
}

// rewrite replaces the file at path with b.
func rewrite(t testing.TB, fs vfs.FS, path string, b []byte) {
	t.Helper()
	f, err := fs.Create(path, vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	_, err = f.Write(slices.Clone(b)) // the memory filesystem may scribble on it
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
}

// TestLogSegmentSwitch: records fill 32 KiB segments; a frame that does not
// fit in the rest of one starts the next (after its header), so no frame
// spans two; the files are named by their first LSN and have the segment's
// size; a frame larger than a segment gets a segment of its own. The log
// reads back, and reopens where it ended, across the switches.
func TestLogSegmentSwitch(t *testing.T) {
	fs := vfs.NewCrashableMem()
	st := openStoreOn(t, fs)
	l := openLog(t, st, smallLog)
	require.EqualValues(t, segLen, l.SegmentSize())
	require.EqualValues(t, redo.MinCapacity, l.Capacity())
	const n = 3*recsPerSeg + 5
	var lsns []uint64
	var want []string
	for i := range n {
		lsns = append(lsns, appendNote(l, nil, note(i, "")))
		want = append(want, note(i, ""))
	}
	for i, lsn := range lsns {
		seg, off := lsn/segLen, lsn%segLen
		require.Equal(t, uint64(i/recsPerSeg), seg, "record %d", i)
		require.Equal(t, uint64(redo.FirstLSN+(i%recsPerSeg)*frameLen), off, "record %d: frames follow each other from the header on", i)
		require.Equal(t, seg, (lsn+frameLen-1)/segLen, "record %d spans two segments", i)
	}
	require.NoError(t, l.SyncTo(nil, l.End()))
	require.Equal(t, []uint64{0, segLen, 2 * segLen, 3 * segLen}, logSegments(t, st))
	for _, s := range logSegments(t, st) {
		fi, err := fs.Stat(segPath(st, s))
		require.NoError(t, err)
		require.LessOrEqual(t, fi.Size(), int64(segLen))
	}
	s := l.Stats()
	require.EqualValues(t, 3, s.Switches)
	require.EqualValues(t, 4, s.Created)
	require.Zero(t, s.Overruns)
	require.Equal(t, want, notes(t, l, 0))
	require.Equal(t, want[recsPerSeg+1:], notes(t, l, lsns[recsPerSeg+1]), "a scan from inside a segment")

	// A record larger than a segment: a segment of its own, rounded up
	// to 4 KiB; a small record after it fits in its rest.
	big := strings.Repeat("B", 40<<10)
	bigLSN := appendNote(l, nil, big)
	require.Equal(t, uint64(4*segLen+redo.FirstLSN), bigLSN)
	bigFrame := uint64(8 + 1 + 3 + len(big))
	bigSeg := (redo.FirstLSN + bigFrame + 4095) &^ 4095
	require.Equal(t, bigLSN+bigFrame, appendNote(l, nil, "after the big one"))
	require.NoError(t, l.SyncTo(nil, l.End()))
	end := l.End()
	l.Close()

	l2 := openLog(t, st, smallLog)
	require.Equal(t, end, l2.End())
	got := notes(t, l2, 0)
	require.Equal(t, append(slices.Clone(want), big, "after the big one"), got)
	require.Equal(t, []uint64{0, segLen, 2 * segLen, 3 * segLen, 4 * segLen}, logSegments(t, st))
	fi, err := st.FS().Stat(segPath(st, 4*segLen))
	require.NoError(t, err)
	require.LessOrEqual(t, fi.Size(), int64(bigSeg))
	require.Equal(t, end, appendNote(l2, nil, "continues"), "the reopened log continues where it ended")
	next := appendNote(l2, nil, strings.Repeat("n", 5000)) // more than the big segment has left
	require.Equal(t, 4*segLen+bigSeg+redo.FirstLSN, next, "a record that does not fit starts the next segment")

	// Once a checkpoint passes the big segment, its file is removed, not
	// recycled: a spare has the segment size.
	require.NoError(t, l2.SaveCheckpoint([]byte("c")))
	require.NoError(t, l2.Checkpointed(next, next))
	segs := logSegments(t, st)
	require.NotContains(t, segs, uint64(4*segLen))
	require.Contains(t, segs, 4*segLen+bigSeg)
	require.EqualValues(t, 4, l2.Stats().Recycled, "segments 0 to 3")
	require.Len(t, segs, 5)
}

// TestLogRecycledSegmentNotReplayed: a checkpoint recycles the segments
// below keep (renamed to future names); when the log reaches one, it
// overwrites it in place (no file is created), and the frames of its
// previous cycle that lie past the new end, intact, at the same offsets and
// with the same lengths, are not read as records: their checksums cover
// the LSN they were written at.
func TestLogRecycledSegmentNotReplayed(t *testing.T) {
	st := openStoreOn(t, vfs.NewMem())
	l := openLog(t, st, smallLog)
	var lsns []uint64
	for i := range 5 * recsPerSeg {
		lsns = append(lsns, appendNote(l, nil, note(i, "old")))
	}
	require.NoError(t, l.SyncTo(nil, l.End()))
	require.Equal(t, []uint64{0, segLen, 2 * segLen, 3 * segLen, 4 * segLen}, logSegments(t, st))
	keep := lsns[3*recsPerSeg] // the first record of segment 3
	require.NoError(t, l.SaveCheckpoint([]byte("ckpt")))
	require.NoError(t, l.Checkpointed(l.End(), keep))
	require.Equal(t, []uint64{3 * segLen, 4 * segLen, 5 * segLen, 6 * segLen, 7 * segLen}, logSegments(t, st),
		"segments 0, 1, 2 renamed to the next three names")
	require.EqualValues(t, 3, l.Stats().Recycled)
	old := readAll(t, st.FS(), segPath(st, 5*segLen)) // segment 0's bytes
	require.Equal(t, note(3, "old"), string(old[redo.FirstLSN+3*frameLen+11:][:noteLen]), "the spare keeps its previous cycle")

	// Three records into segment 5, segment 0's file.
	var fresh []string
	for i := range 3 {
		fresh = append(fresh, note(i, "new"))
		appendNote(l, nil, fresh[i])
	}
	require.NoError(t, l.SyncTo(nil, l.End()))
	end := l.End()
	require.Equal(t, uint64(5*segLen+redo.FirstLSN+3*frameLen), end)
	s := l.Stats()
	require.EqualValues(t, 5, s.Created, "the log reused the recycled file")
	require.EqualValues(t, 5, s.Switches)
	b := readAll(t, st.FS(), segPath(st, 5*segLen))
	require.Equal(t, fresh[2], string(b[redo.FirstLSN+2*frameLen+11:][:noteLen]))
	stale := b[redo.FirstLSN+3*frameLen:]
	require.EqualValues(t, frameLen, binary.LittleEndian.Uint32(stale), "an intact frame of the previous cycle follows the new ones")
	require.Equal(t, note(3, "old"), string(stale[11:][:noteLen]))
	l.Close()

	l2 := openLog(t, st, smallLog)
	require.Equal(t, end, l2.End(), "the previous cycle's frame ends the log")
	var want []string
	for i := 3 * recsPerSeg; i < 5*recsPerSeg; i++ {
		want = append(want, note(i, "old"))
	}
	require.Equal(t, append(want, fresh...), notes(t, l2, keep))
}

// tornLog writes six records of equal length: the first synced, the other
// five only written, and takes a crash image that kept everything. It
// returns the image and the records' LSNs.
func tornLog(t *testing.T) (*vfs.MemFS, []uint64) {
	fs := vfs.NewCrashableMem()
	st := openStoreOn(t, fs)
	l := openLog(t, st, &redo.LogOptions{Capacity: redo.MinCapacity, BufferBytes: 1})
	var lsns []uint64
	lsns = append(lsns, appendNote(l, nil, note(0, "")))
	require.NoError(t, l.SyncTo(nil, l.End()))
	for i := 1; i < 6; i++ {
		lsns = append(lsns, appendNote(l, nil, note(i, "")))
	}
	require.NoError(t, l.MaybeWrite())
	require.Zero(t, l.Buffered())
	require.Equal(t, lsns[1], l.Durable())
	img := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 100, RNG: rand.New(rand.NewPCG(1, 2))})
	return img, lsns
}

// TestLogTornTail: after a crash, the log ends at its first frame that
// does not verify, the torn tail of its last write, and the next record
// overwrites it there: a byte flipped in the last frame, or the file cut
// short inside it.
func TestLogTornTail(t *testing.T) {
	for _, torn := range []string{"flip", "truncate"} {
		t.Run(torn, func(t *testing.T) {
			img, lsns := tornLog(t)
			st := openStoreOn(t, img)
			path := segPath(st, 0)
			b := readAll(t, img, path)
			last := lsns[5] // segment 0 starts at LSN 0: LSN = offset
			if torn == "flip" {
				b[last+100] ^= 0x40
			} else {
				b = b[:last+100]
			}
			rewrite(t, img, path, b)
			l := openLog(t, st, smallLog)
			require.Equal(t, last, l.End(), "the log ends at the torn frame")
			want := []string{note(0, ""), note(1, ""), note(2, ""), note(3, ""), note(4, "")}
			require.Equal(t, want, notes(t, l, 0))
			lsn := appendNote(l, nil, "after the crash")
			require.Equal(t, last, lsn, "the next record overwrites the torn one")
			require.NoError(t, l.SyncTo(nil, l.End()))
			end := l.End()
			l.Close()
			l2 := openLog(t, st, smallLog)
			require.Equal(t, end, l2.End())
			require.Equal(t, append(want, "after the crash"), notes(t, l2, 0))
		})
	}
}

// TestLogStaleFrameAfterTornTail: a crash tears a frame in the middle of
// the last write; the frames after it survive, intact. The log continues
// over the torn one with a record of the same length, so that the next old
// frame starts exactly where the log now ends: it verifies on its own
// (right LSN, right length) but chains to the torn frame's checksum, not
// the new record's, and is not read.
func TestLogStaleFrameAfterTornTail(t *testing.T) {
	img, lsns := tornLog(t)
	st := openStoreOn(t, img)
	path := segPath(st, 0)
	b := readAll(t, img, path)
	b[lsns[3]+200] ^= 0x01
	rewrite(t, img, path, b)
	l := openLog(t, st, smallLog)
	require.Equal(t, lsns[3], l.End())
	require.Equal(t, lsns[3], appendNote(l, nil, note(3, "N")))
	require.Equal(t, lsns[4], l.End())
	require.NoError(t, l.SyncTo(nil, l.End()))
	l.Close()
	b = readAll(t, img, path)
	require.Equal(t, note(4, ""), string(b[lsns[4]+11:][:noteLen]), "the old frame 4 is intact after the new frame 3")
	l2 := openLog(t, st, smallLog)
	require.Equal(t, lsns[4], l2.End(), "the stale frame 4 ends the log")
	require.Equal(t, []string{note(0, ""), note(1, ""), note(2, ""), note(3, "N")}, notes(t, l2, 0))
}

// TestLogControlFile: the checkpoint record lives in redo/checkpoint's two
// slots, written in turn; the newer slot that verifies wins, so damage to
// the newer one falls back on the older; both damaged, or the file
// missing, is an error naming it.
func TestLogControlFile(t *testing.T) {
	fs := vfs.NewMem()
	st := openStoreOn(t, fs)
	l := openLog(t, st, smallLog)
	rec, err := l.LoadCheckpoint()
	require.NoError(t, err)
	require.Nil(t, rec)
	appendNote(l, nil, "x")
	require.NoError(t, l.SaveCheckpoint([]byte("first")))  // slot 1
	require.NoError(t, l.SaveCheckpoint([]byte("second"))) // slot 0
	l.Close()
	path := fs.PathJoin(st.Dir(), "redo", "checkpoint")
	b := readAll(t, fs, path)
	require.Len(t, b, 1024)

	load := func() ([]byte, error) {
		l, err := redo.Open(st, smallLog)
		if err != nil {
			return nil, err
		}
		defer l.Close()
		return l.LoadCheckpoint()
	}
	rec, err = load()
	require.NoError(t, err)
	require.Equal(t, "second", string(rec))

	d := slices.Clone(b)
	d[40] ^= 1 // the newer slot's record
	rewrite(t, fs, path, d)
	rec, err = load()
	require.NoError(t, err)
	require.Equal(t, "first", string(rec), "the older slot, when the newer does not verify")

	d[512+8] ^= 1 // and the older one's number
	rewrite(t, fs, path, d)
	_, err = load()
	require.ErrorIs(t, err, redo.ErrCorruptLog)
	require.ErrorIs(t, err, page.ErrCorrupt)
	require.Contains(t, err.Error(), path)

	rewrite(t, fs, path, b[:300])
	_, err = load()
	require.ErrorIs(t, err, redo.ErrCorruptLog, "a control file cut short")
	require.Contains(t, err.Error(), path)

	require.NoError(t, fs.Remove(path))
	_, err = load()
	require.ErrorIs(t, err, redo.ErrCorruptLog, "segments but no control file")
	require.Contains(t, err.Error(), path)

	// A record too large for a slot is refused.
	rewrite(t, fs, path, b)
	l = openLog(t, st, smallLog)
	require.ErrorIs(t, l.SaveCheckpoint(make([]byte, redo.MaxCheckpointRecord+1)), page.ErrInvalidOptions)
	require.NoError(t, l.SaveCheckpoint(make([]byte, redo.MaxCheckpointRecord)))
}

// TestLogCapacityOverrun: with no checkpoint, the log never overwrites a
// segment: past the capacity (eight segments) it creates more, each
// counted as an overrun, and every record stays readable. A checkpoint
// then removes the files beyond the capacity and recycles the rest, which
// the log reuses: the directory is back to eight files.
func TestLogCapacityOverrun(t *testing.T) {
	st := openStoreOn(t, vfs.NewMem())
	l := openLog(t, st, smallLog)
	var want []string
	for i := range 10 * recsPerSeg {
		want = append(want, note(i, ""))
		appendNote(l, nil, want[i])
	}
	require.NoError(t, l.SyncTo(nil, l.End()))
	s := l.Stats()
	require.EqualValues(t, 10, s.Created)
	require.EqualValues(t, 9, s.Switches)
	require.EqualValues(t, 2, s.Overruns)
	require.Len(t, logSegments(t, st), 10)
	require.Equal(t, want, notes(t, l, 0))
	require.Equal(t, l.End()-redo.FirstLSN, l.Age())

	ckpt := l.End()
	require.NoError(t, l.SaveCheckpoint([]byte("c")))
	require.NoError(t, l.Checkpointed(ckpt, ckpt))
	require.Zero(t, l.Age())
	segs := logSegments(t, st)
	require.Len(t, segs, 8, "the files beyond the capacity are removed")
	require.Equal(t, uint64(9*segLen), segs[0], "the segment holding the end stays")
	require.EqualValues(t, 7, l.Stats().Recycled)

	for i := range 7 * recsPerSeg {
		appendNote(l, nil, note(i, "again"))
	}
	require.NoError(t, l.SyncTo(nil, l.End()))
	require.Equal(t, l.End()-ckpt, l.Age())
	s = l.Stats()
	require.EqualValues(t, 10, s.Created, "the spares were reused")
	require.EqualValues(t, 2, s.Overruns)
	require.Len(t, logSegments(t, st), 8)
}

// TestLogMissingSegment: Open checks that the segments from the first to
// the one holding the end follow each other, and names the one missing.
func TestLogMissingSegment(t *testing.T) {
	for _, ckpt := range []bool{false, true} {
		t.Run(fmt.Sprintf("checkpoint=%v", ckpt), func(t *testing.T) {
			st := openStoreOn(t, vfs.NewMem())
			l := openLog(t, st, smallLog)
			for i := range 4 * recsPerSeg {
				appendNote(l, nil, note(i, ""))
			}
			require.NoError(t, l.SyncTo(nil, l.End()))
			if ckpt {
				// The control file then says the log reaches segment
				// 3: Open reads from there.
				require.NoError(t, l.SaveCheckpoint([]byte("c")))
			}
			l.Close()
			require.NoError(t, st.FS().Remove(segPath(st, segLen)))
			_, err := redo.Open(st, smallLog)
			require.ErrorIs(t, err, redo.ErrCorruptLog)
			require.ErrorIs(t, err, page.ErrCorrupt)
			require.Contains(t, err.Error(), segPath(st, segLen)+" is missing")
		})
	}
}

// TestLogCutBelowSync: the store records how far the log was synced, in
// pebble's order with the pages: a log that ends before that point lost
// records the pages may depend on, and Open says so, naming the segment,
// rather than take the cut for a torn tail.
func TestLogCutBelowSync(t *testing.T) {
	st := openStoreOn(t, vfs.NewMem())
	l := openLog(t, st, smallLog)
	var lsns []uint64
	for i := range 2*recsPerSeg + 3 {
		lsns = append(lsns, appendNote(l, nil, note(i, "")))
	}
	require.NoError(t, l.Flush(lsns[len(lsns)-1]))
	require.EqualValues(t, 1, l.Stats().FlushSyncs)
	l.Close()
	path := segPath(st, 2*segLen)
	b := readAll(t, st.FS(), path)
	rewrite(t, st.FS(), path, b[:lsns[len(lsns)-2]-2*segLen+5])
	_, err := redo.Open(st, smallLog)
	require.ErrorIs(t, err, redo.ErrCorruptLog)
	require.Contains(t, err.Error(), path)
	require.Contains(t, err.Error(), "synced")
}

// TestLogOptionsValidate: a capacity below the minimum, or negative, is
// refused before anything is opened.
func TestLogOptionsValidate(t *testing.T) {
	st := newStore(t)
	for _, c := range []int64{-1, 1, redo.MinCapacity - 1} {
		_, err := redo.Open(st, &redo.LogOptions{Capacity: c})
		require.ErrorIs(t, err, page.ErrInvalidOptions, "capacity %d", c)
	}
	require.NoError(t, (&redo.LogOptions{Capacity: redo.MinCapacity}).Validate())
	require.NoError(t, (&redo.LogOptions{}).Validate())
	// Segment sizes: an eighth of the capacity, clamped.
	for _, c := range []struct{ capacity, seg int64 }{
		{redo.MinCapacity, 32 << 10}, {4 << 20, 512 << 10}, {8 << 20, 1 << 20}, {48 << 20, 6 << 20},
		{redo.DefaultCapacity, 12 << 20}, {1 << 30, 64 << 20},
	} {
		l, err := redo.Open(newStore(t), &redo.LogOptions{Capacity: c.capacity})
		require.NoError(t, err)
		require.EqualValues(t, c.seg, l.SegmentSize(), "capacity %d", c.capacity)
		l.Close()
	}
}

// TestLogFrameChecksumCoversLSN: a segment's frames copied whole into the
// file of another segment, with a header that names that segment and
// carries the copied one's chain value, so that only the frames' place
// differs, do not verify: a frame's checksum covers the LSN it was
// written at (the chain alone would take them).
func TestLogFrameChecksumCoversLSN(t *testing.T) {
	st := openStoreOn(t, vfs.NewMem())
	l := openLog(t, st, smallLog)
	for i := range 2*recsPerSeg + 3 {
		appendNote(l, nil, note(i, ""))
	}
	require.NoError(t, l.SyncTo(nil, l.End()))
	end := l.End()
	l.Close()
	b := readAll(t, st.FS(), segPath(st, segLen))
	binary.LittleEndian.PutUint64(b[8:], 3*segLen)
	binary.LittleEndian.PutUint32(b[28:], crc32.Checksum(b[:28], crc32.MakeTable(crc32.Castagnoli)))
	rewrite(t, st.FS(), segPath(st, 3*segLen), b)

	l2 := openLog(t, st, smallLog)
	require.Equal(t, end, l2.End(), "the copy's header does not chain to the log's end")
	require.Empty(t, notes(t, l2, 3*segLen), "the copied frames do not verify at their new LSNs")
	require.Equal(t, note(recsPerSeg, ""), notes(t, l2, segLen)[0], "the original still does")
}

// TestLogAppendAllocates: Append allocates nothing once the buffer has
// grown (its checksum's scratch is the log's).
func TestLogAppendAllocates(t *testing.T) {
	e := newLogEnv(t, &redo.LogOptions{BufferBytes: 1 << 20})
	body := redo.NoteRecord([]byte("a commit note"))
	for range 1000 {
		e.l.Append(nil, body, nil) // grow the buffer
	}
	require.NoError(t, e.l.Flush(e.l.End()))
	require.Zero(t, testing.AllocsPerRun(1000, func() { e.l.Append(nil, body, nil) }))
}

// TestLogLost: a store that holds pages, or whose record says its log was
// synced, but has no log directory has lost its log: Open says so rather
// than start a new log whose LSNs would go back.
func TestLogLost(t *testing.T) {
	st := openStoreOn(t, vfs.NewMem())
	l := openLog(t, st, smallLog)
	require.NoError(t, l.SyncTo(nil, appendNote(l, nil, "x")+1))
	l.Close()
	require.NoError(t, st.FS().RemoveAll(st.FS().PathJoin(st.Dir(), "redo")))
	_, err := redo.Open(st, smallLog)
	require.ErrorIs(t, err, redo.ErrCorruptLog, "the store's record of the log's sync")
	require.Contains(t, err.Error(), "checkpoint")

	st2 := openStoreOn(t, vfs.NewMem())
	buf := make([]byte, testPageSize)
	id := page.ID{Space: 1, Page: 0}
	page.Init(buf, id, page.KindHeap)
	page.Seal(buf)
	require.NoError(t, st2.WritePage(id, buf))
	_, err = redo.Open(st2, smallLog)
	require.ErrorIs(t, err, redo.ErrCorruptLog, "a store with pages")
	require.ErrorIs(t, err, page.ErrCorrupt)
}

// capacityRun appends n notes to the log of st opened with capacity c,
// saving a checkpoint and recycling what it no longer needs every
// segment's worth, as the engine does; it returns the LSN of the last
// checkpoint's oldest needed record and the notes from there on.
func capacityRun(t *testing.T, st *store.PebbleStore, c int64, n int, cycle string) (keep uint64, kept []string) {
	t.Helper()
	l, err := redo.Open(st, &redo.LogOptions{Capacity: c})
	require.NoError(t, err)
	defer l.Close()
	var lsns []uint64
	var all []string
	per := int(l.SegmentSize()) / frameLen
	from := 0
	for i := range n {
		all = append(all, note(i, cycle))
		lsns = append(lsns, appendNote(l, nil, all[i]))
		if i%per == per-1 && i >= per {
			require.NoError(t, l.SyncTo(nil, l.End()))
			require.NoError(t, l.SaveCheckpoint([]byte(cycle)))
			from = i - per
			require.NoError(t, l.Checkpointed(l.End(), lsns[from]))
		}
	}
	require.NoError(t, l.SyncTo(nil, l.End()))
	// No file named inside the log is another segment's: every old
	// spare the log passed is gone.
	for _, s := range logSegments(t, st) {
		if s < l.End() {
			b := readAll(t, st.FS(), segPath(st, s))
			require.Equal(t, s, binary.LittleEndian.Uint64(b[8:]), "file %s, below the end at LSN %d, holds segment %d", segPath(st, s), l.End(), binary.LittleEndian.Uint64(b[8:]))
		}
	}
	return lsns[from], all[from:]
}

// TestLogCapacityChange: a log reopened with another capacity has
// segments of another size, whose names do not fall where the old
// spares' do; the log removes each old spare as its end passes the name,
// so the next Open does not meet a recycled file inside the log (it
// refused the database as damaged: "segment file ..., before the log's
// end ..., has no valid header"). Each capacity, then the first again,
// reopens and reads back every record from the last checkpoint on.
func TestLogCapacityChange(t *testing.T) {
	st := openStoreOn(t, vfs.NewMem())
	caps := []int64{8 * 48 << 10, redo.MinCapacity, 8 * 80 << 10, 8 * 48 << 10} // segments of 48, 32, 80 and 48 KiB
	for i, c := range caps {
		cycle := fmt.Sprintf("c%d", i)
		keep, kept := capacityRun(t, st, c, 30*int(redo.MinCapacity)/frameLen, cycle)
		for _, reopen := range caps {
			l, err := redo.Open(st, &redo.LogOptions{Capacity: reopen})
			require.NoError(t, err, "written with capacity %d, opened with %d", c, reopen)
			require.Equal(t, kept, notes(t, l, keep), "written with capacity %d, opened with %d", c, reopen)
			l.Close()
		}
		size := int64(0)
		for _, s := range logSegments(t, st) {
			fi, err := st.FS().Stat(segPath(st, s))
			require.NoError(t, err)
			size += fi.Size()
		}
		require.LessOrEqual(t, size, 3*c, "no old spares pile up")
	}
}

// TestLogStaleFileInside: a file named inside the log whose header names
// another segment (a recycled file left there by a capacity change,
// before the log removed such spares) holds nothing of the log: none of
// its frames verifies at the LSNs its name gives. Open passes over it,
// below the last checkpoint's end or between there and the log's end,
// and removes it. A file there whose header does not verify at all is
// damage, and Open still says so, naming it.
func TestLogStaleFileInside(t *testing.T) {
	for _, damaged := range []bool{false, true} {
		t.Run(fmt.Sprintf("damaged=%v", damaged), func(t *testing.T) {
			st := openStoreOn(t, vfs.NewMem())
			l := openLog(t, st, smallLog)
			var lsns []uint64
			var want []string
			add := func(n int) {
				for range n {
					want = append(want, note(len(want), ""))
					lsns = append(lsns, appendNote(l, nil, want[len(want)-1]))
				}
				require.NoError(t, l.SyncTo(nil, l.End()))
			}
			add(6 * recsPerSeg)
			require.NoError(t, l.SaveCheckpoint([]byte("c"))) // the log ends in segment 5
			keep := lsns[recsPerSeg]                          // segment 1's first record
			require.NoError(t, l.Checkpointed(l.End(), keep))
			add(2 * recsPerSeg) // into segment 7, through segment 0's recycled file
			l.Close()
			require.Equal(t, []uint64{segLen, 2 * segLen, 3 * segLen, 4 * segLen, 5 * segLen, 6 * segLen, 7 * segLen}, logSegments(t, st))

			seg2 := readAll(t, st.FS(), segPath(st, 2*segLen)) // a header naming segment 2
			below := uint64(3*segLen + 4096)                   // inside segment 3, below the checkpoint's end
			past := uint64(6*segLen + 4096)                    // inside segment 6, past it
			rewrite(t, st.FS(), segPath(st, below), seg2)
			if damaged {
				rewrite(t, st.FS(), segPath(st, past), make([]byte, len(seg2)))
			} else {
				rewrite(t, st.FS(), segPath(st, past), seg2)
			}

			l2, err := redo.Open(st, smallLog)
			if damaged {
				require.ErrorIs(t, err, redo.ErrCorruptLog)
				require.ErrorContains(t, err, segPath(st, past)+", before the log's end")
				require.ErrorContains(t, err, "has no valid header")
				return
			}
			require.NoError(t, err)
			t.Cleanup(l2.Close)
			require.Equal(t, want[recsPerSeg:], notes(t, l2, keep))
			require.Equal(t, []uint64{segLen, 2 * segLen, 3 * segLen, 4 * segLen, 5 * segLen, 6 * segLen, 7 * segLen}, logSegments(t, st),
				"the stale files are gone")
		})
	}
}

// TestLogStaleFileAtCheckpointEnd: a stale file named exactly at the last
// checkpoint's end, inside the segment holding the log's end (a scan for
// recovery starts at that name), is passed over and removed too.
func TestLogStaleFileAtCheckpointEnd(t *testing.T) {
	st := openStoreOn(t, vfs.NewMem())
	l := openLog(t, st, smallLog)
	for i := range recsPerSeg + 3 { // into segment 1
		appendNote(l, nil, note(i, ""))
	}
	require.NoError(t, l.SyncTo(nil, l.End()))
	from := l.End()
	require.NoError(t, l.SaveCheckpoint([]byte("c")))
	var want []string
	for i := range 5 { // still in segment 1
		want = append(want, note(1000+i, ""))
		appendNote(l, nil, want[i])
	}
	require.NoError(t, l.SyncTo(nil, l.End()))
	require.Less(t, l.End(), uint64(2*segLen))
	l.Close()
	rewrite(t, st.FS(), segPath(st, from), readAll(t, st.FS(), segPath(st, 0))) // a header naming segment 0

	l2, err := redo.Open(st, smallLog)
	require.NoError(t, err)
	t.Cleanup(l2.Close)
	require.Equal(t, want, notes(t, l2, from))
	require.Equal(t, []uint64{0, segLen}, logSegments(t, st), "the stale file is gone")
}

// TestLogLargeFrameOverSpares: with no change of capacity, a frame larger
// than a segment gets a segment of its own, whose range steps over the
// names of spares recycled ahead of the end; they are removed as it
// passes them, and the log reopens with every record from its checkpoint.
func TestLogLargeFrameOverSpares(t *testing.T) {
	st := openStoreOn(t, vfs.NewMem())
	l := openLog(t, st, smallLog)
	var lsns []uint64
	var all []string
	add := func(s string) {
		all = append(all, s)
		lsns = append(lsns, appendNote(l, nil, s))
	}
	for i := range 6 * recsPerSeg {
		add(note(i, ""))
	}
	require.NoError(t, l.SyncTo(nil, l.End()))
	require.NoError(t, l.SaveCheckpoint([]byte("c")))
	keep := 4 * recsPerSeg
	require.NoError(t, l.Checkpointed(l.End(), lsns[keep])) // segments 0 to 3: spares 6 to 9
	require.Equal(t, []uint64{4 * segLen, 5 * segLen, 6 * segLen, 7 * segLen, 8 * segLen, 9 * segLen}, logSegments(t, st))
	add(strings.Repeat("L", 3*segLen)) // from segment 6 over the names 7, 8 and 9
	for i := range 2 * recsPerSeg {
		add(note(10000+i, ""))
	}
	require.NoError(t, l.SyncTo(nil, l.End()))
	require.NoError(t, l.SaveCheckpoint([]byte("c2")))
	l.Close()

	l2, err := redo.Open(st, smallLog)
	require.NoError(t, err)
	t.Cleanup(l2.Close)
	require.Equal(t, all[keep:], notes(t, l2, lsns[keep]))
}
