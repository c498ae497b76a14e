package redo_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/stretchr/testify/require"
)

// TestLogCrashCapacityChanges writes a log in phases, each opened with a
// capacity drawn from crashCaps (segments of 32 to 128 KiB, some sizes
// dividing others and some not), with now and then a record larger than
// a segment, syncs, and checkpoints that recycle what they no longer
// need. Before some of the log's file operations (creating, writing,
// syncing, renaming or removing a file under redo/) it takes a crash
// image, keeping none, half or all of the unsynced bytes, and opens it
// with another drawn capacity: the log must read back, from the last
// saved checkpoint's oldest needed record, a prefix of what was appended
// that holds every record below the durable LSN at the crash, and that
// checkpoint must be the last one saved or a later one. A phase ends in a
// clean close or in a crash whose image the next phase continues on. At
// the end the log opens under every capacity.
//
// The log's files are on a crashable memory filesystem hidden behind
// hookFS, so the log takes the path of a disk (zero-filled segment files,
// synced renames). Crash points skip the temporary files a segment is
// made under, which a background preallocation may also write: the
// points drawn are then the same at every run.
func TestLogCrashCapacityChanges(t *testing.T) {
	for seed := range uint64(2) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { crashCapacityRun(t, seed, 10, 8) })
	}
}

var crashCaps = []int64{
	redo.MinCapacity, // 32 KiB segments
	8 * 48 << 10,
	8 * 36 << 10,
	8 * 80 << 10,
	8 * 44 << 10,
	8 * 128 << 10,
	8 * 64 << 10,
}

// crashCapacityRun runs phases phases, taking a crash image at one in
// every sample file operations.
func crashCapacityRun(t *testing.T, seed uint64, phases, sample int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	hookRng := rand.New(rand.NewPCG(seed, 2))
	base := vfs.NewCrashableMem()
	m := &crashModel{keeps: map[uint64]bool{}}
	var (
		hmu      sync.Mutex // the hook's state: the prealloc goroutine calls it too
		cur      *redo.Log
		failures []string
		images   int
	)
	hook := func(op, name string) {
		hmu.Lock()
		defer hmu.Unlock()
		if cur == nil || strings.HasSuffix(name, ".tmp") || hookRng.IntN(sample) != 0 {
			return
		}
		pct := []int{0, 0, 50, 100}[hookRng.IntN(4)]
		durable := cur.Durable()
		img := base.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: pct, RNG: rand.New(rand.NewPCG(hookRng.Uint64(), 1))})
		c := crashCaps[hookRng.IntN(len(crashCaps))]
		images++
		st, l, _, _, err := m.check(img, c, durable, fmt.Sprintf("before %s %s (%d%% of unsynced bytes kept)", op, name, pct))
		if l != nil {
			l.Close()
		}
		if st != nil {
			_ = st.Close()
		}
		if err != nil {
			failures = append(failures, err.Error())
		}
	}
	open := func(fs vfs.FS) *store.PebbleStore {
		st, err := store.OpenPebble(store.PebbleOptions{FS: &hookFS{FS: fs, hook: hook}, PageSize: testPageSize})
		require.NoError(t, err)
		return st
	}
	st := open(base)
	n := 0
	for phase := range phases {
		c := crashCaps[rng.IntN(len(crashCaps))]
		l, err := redo.Open(st, &redo.LogOptions{Capacity: c, Prealloc: true})
		require.NoError(t, err, "phase %d, capacity %d", phase, c)
		hmu.Lock()
		cur = l
		hmu.Unlock()
		seg := int(l.SegmentSize())
		for range (2 + rng.IntN(20)) * seg / frameLen {
			s := note(n, fmt.Sprintf("p%d-", phase))
			if rng.IntN(60) == 0 {
				s = fmt.Sprintf("big%06d ", n) + strings.Repeat("B", seg+rng.IntN(2*seg))
			}
			n++
			m.mu.Lock()
			m.recs = append(m.recs, s)
			m.mu.Unlock()
			lsn := appendNote(l, nil, s)
			m.mu.Lock()
			m.lsns = append(m.lsns, lsn)
			m.mu.Unlock()
			if rng.IntN(10) == 0 {
				require.NoError(t, l.SyncTo(nil, l.End()))
			}
			if rng.IntN(seg/frameLen) == 0 {
				// A checkpoint that needs the last one to three
				// segments' records.
				m.mu.Lock()
				back := rng.IntN(3*seg/frameLen + 1)
				keep := max(m.lsns[max(len(m.lsns)-1-back, 0)], m.minKeep)
				m.keeps[keep] = true
				m.mu.Unlock()
				require.NoError(t, l.SaveCheckpoint(binary.LittleEndian.AppendUint64(nil, keep)))
				m.mu.Lock()
				m.minKeep = keep
				m.mu.Unlock()
				require.NoError(t, l.Checkpointed(l.End(), keep))
			}
		}
		hmu.Lock()
		cur = nil
		hmu.Unlock()
		if rng.IntN(2) == 0 {
			require.NoError(t, l.SyncTo(nil, l.End()))
			l.Close()
			continue
		}
		// A crash: the next phase continues on its image.
		pct := []int{0, 30, 100}[rng.IntN(3)]
		durable := l.Durable()
		img := base.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: pct, RNG: rand.New(rand.NewPCG(rng.Uint64(), 2))})
		l.Close()
		require.NoError(t, st.Close())
		st2, l2, got, gotLSNs, err := m.check(img, crashCaps[rng.IntN(len(crashCaps))], durable, fmt.Sprintf("phase %d's crash", phase))
		require.NoError(t, err)
		l2.Close()
		require.NoError(t, st2.Close())
		m.mu.Lock()
		m.recs, m.lsns = got, gotLSNs // what the next phase continues from
		m.mu.Unlock()
		base = img
		st = open(base)
	}
	for _, c := range crashCaps {
		l, err := redo.Open(st, &redo.LogOptions{Capacity: c})
		require.NoError(t, err, "the last open, capacity %d", c)
		l.Close()
	}
	require.NoError(t, st.Close())
	t.Logf("%d crash images checked", images)
	require.Positive(t, images)
	require.Empty(t, failures, "%d crash images checked", images)
}

// crashModel is what TestLogCrashCapacityChanges appended since its last
// crash: every record and its LSN, the checkpoints' keeps ever saved,
// and the keep of the last checkpoint saved.
type crashModel struct {
	mu      sync.Mutex
	recs    []string
	lsns    []uint64
	keeps   map[uint64]bool
	minKeep uint64
}

// check opens a store and a log of capacity c on img and compares the
// log with the model: a scan from the recovered checkpoint's keep gives
// a prefix of the records appended from there, which holds every record
// below durable. It returns what the scan read, and the open store and
// log for the caller to close.
func (m *crashModel) check(img vfs.FS, c int64, durable uint64, where string) (*store.PebbleStore, *redo.Log, []string, []uint64, error) {
	st, err := store.OpenPebble(store.PebbleOptions{FS: img, PageSize: testPageSize})
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("%s: open the store: %w", where, err)
	}
	l, err := redo.Open(st, &redo.LogOptions{Capacity: c})
	if err != nil {
		_ = st.Close()
		return nil, nil, nil, nil, fmt.Errorf("%s: open the log, capacity %d: %w", where, c, err)
	}
	fail := func(format string, args ...any) (*store.PebbleStore, *redo.Log, []string, []uint64, error) {
		return st, l, nil, nil, fmt.Errorf("%s: "+format, append([]any{where}, args...)...)
	}
	rec, err := l.LoadCheckpoint()
	if err != nil {
		return fail("load the checkpoint: %v", err)
	}
	keep := uint64(redo.FirstLSN)
	if len(rec) == 8 {
		keep = binary.LittleEndian.Uint64(rec)
	}
	m.mu.Lock()
	if keep < m.minKeep {
		m.mu.Unlock()
		return fail("recovered keep %d is below the last saved, %d", keep, m.minKeep)
	}
	if keep != redo.FirstLSN && !m.keeps[keep] {
		m.mu.Unlock()
		return fail("recovered keep %d was never saved", keep)
	}
	i := len(m.lsns)
	for j, x := range m.lsns {
		if x >= keep {
			i = j
			break
		}
	}
	wantLSNs := append([]uint64(nil), m.lsns[i:]...)
	wantRecs := append([]string(nil), m.recs[i:len(m.lsns)]...)
	m.mu.Unlock()
	var got []string
	var gotLSNs []uint64
	if err := l.Scan(keep, func(lsn uint64, body []byte) error {
		_, n, err := redo.Decode(body, nil)
		got = append(got, string(n))
		gotLSNs = append(gotLSNs, lsn)
		return err
	}); err != nil {
		return fail("scan from %d: %v", keep, err)
	}
	if len(got) > len(wantRecs) {
		return fail("the scan read %d records, of %d appended", len(got), len(wantRecs))
	}
	for j := range got {
		if got[j] != wantRecs[j] || gotLSNs[j] != wantLSNs[j] {
			return fail("record %d differs (LSN %d, appended at %d)", j, gotLSNs[j], wantLSNs[j])
		}
	}
	if j := len(got); j < len(wantRecs) && wantLSNs[j] < durable {
		return fail("the record at LSN %d, below the durable %d, is lost: the scan ended after %d records", wantLSNs[j], durable, len(got))
	}
	return st, l, got, gotLSNs, nil
}

// hookFS hides a crashable memory filesystem (so that the log takes a
// disk's path: it zero-fills and preallocates segment files) and calls
// hook before each change to a file under redo/.
type hookFS struct {
	vfs.FS
	hook func(op, name string)
}

// Unwrap hides the memory filesystem from the log's check for one.
func (h *hookFS) Unwrap() vfs.FS { return nil }

func (h *hookFS) call(op, name string) {
	if strings.Contains(name, "redo") {
		h.hook(op, name)
	}
}

func (h *hookFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	h.call("create", name)
	f, err := h.FS.Create(name, c)
	if err != nil {
		return nil, err
	}
	return &hookFile{File: f, fs: h, name: name}, nil
}

func (h *hookFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := h.FS.OpenReadWrite(name, c, opts...)
	if err != nil {
		return nil, err
	}
	return &hookFile{File: f, fs: h, name: name}, nil
}

func (h *hookFS) OpenDir(name string) (vfs.File, error) {
	f, err := h.FS.OpenDir(name)
	if err != nil {
		return nil, err
	}
	return &hookFile{File: f, fs: h, name: name}, nil
}

func (h *hookFS) Remove(name string) error {
	h.call("remove", name)
	return h.FS.Remove(name)
}

func (h *hookFS) Rename(from, to string) error {
	h.call("rename", from)
	return h.FS.Rename(from, to)
}

type hookFile struct {
	vfs.File
	fs   *hookFS
	name string
}

func (f *hookFile) Write(p []byte) (int, error) {
	f.fs.call("write", f.name)
	return f.File.Write(p)
}

func (f *hookFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.call("write", f.name)
	return f.File.WriteAt(p, off)
}

func (f *hookFile) Sync() error {
	f.fs.call("sync", f.name)
	return f.File.Sync()
}

func (f *hookFile) SyncData() error {
	f.fs.call("sync", f.name)
	return f.File.SyncData()
}
