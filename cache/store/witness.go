package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"sync"

	"github.com/enginelab/enginelab/cache/page"

	"github.com/cockroachdb/pebble/v2/record"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// The MANIFEST witness.
//
// Pebble reads its MANIFEST (the list of live sstables, as a log of
// edits) up to the first record that does not verify, and takes what it
// read as the database: a torn last record is what a crash in the middle
// of an edit leaves, so pebble cannot refuse one. But a MANIFEST cut short
// or with a flipped byte reads the same way, and then pebble opens an
// older version of the database without a word: sstables written since
// are deleted as obsolete, and the WAL files that held their data are long
// gone. A database that loses its last flush, or all of them, would open
// as a consistent but earlier, or empty, database.
//
// So the store keeps, beside pebble's files, a witness: the current
// MANIFEST's name and how many of its bytes hold complete records that are
// durable, with a checksum. It is recorded after pebble's flushes and
// compactions (in the background: pebble calls its listener holding its
// own mutex), after Open and at Close. Opening a database checks the
// MANIFEST against it first: when the marker names the witnessed MANIFEST,
// every record that starts before the witnessed length must verify, and
// one must end exactly there. Bytes past it are not judged (pebble's
// leniency is right for them: they may be an edit a crash tore). A witness
// naming another MANIFEST is stale (pebble moved to a new MANIFEST, at its
// first edit after an open, and the store crashed before recording it)
// and is not judged either. A missing witness (a database from before it,
// or a lost file) checks nothing; a damaged one is damage.
const witnessFile = "ENGINELAB-MANIFEST"

// witness records and checks the MANIFEST witness of one directory.
type witness struct {
	fs  vfs.FS
	dir string

	mu   sync.Mutex // one recording at a time; guards the fields below
	cond *sync.Cond // signalled when pending, busy or stopped change
	// pending asks the background recorder for a recording; busy says it
	// is making one.
	pending, busy, stopped bool
}

func newWitness(fsys vfs.FS, dir string) *witness {
	w := &witness{fs: fsys, dir: dir}
	w.cond = sync.NewCond(&w.mu)
	return w
}

// start runs the background recorder until stop.
func (w *witness) start() {
	go func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		for {
			for !w.pending && !w.stopped {
				w.cond.Wait()
			}
			if w.stopped {
				return
			}
			w.pending, w.busy = false, true
			w.mu.Unlock()
			// An error leaves the last witness in place: it lags, which is
			// safe; the next recording tries again.
			_ = w.record()
			w.mu.Lock()
			w.busy = false
			w.cond.Broadcast()
		}
	}()
}

// kick asks the background recorder for a recording, without waiting: it
// is called from pebble's listener, under pebble's mutex.
func (w *witness) kick() {
	w.mu.Lock()
	w.pending = true
	w.cond.Broadcast()
	w.mu.Unlock()
}

// settle waits until the background recorder has no recording asked for
// or in progress.
func (w *witness) settle() {
	w.mu.Lock()
	for (w.pending || w.busy) && !w.stopped {
		w.cond.Wait()
	}
	w.mu.Unlock()
}

// stop ends the background recorder, after the recording in progress.
func (w *witness) stop() {
	w.mu.Lock()
	w.stopped = true
	w.cond.Broadcast()
	for w.busy {
		w.cond.Wait()
	}
	w.mu.Unlock()
}

// currentManifest returns the name of the MANIFEST that pebble's marker
// names in a directory listing ("" if there is no marker). A crash while
// the marker moves can leave two; pebble takes the newer.
func currentManifest(ls []string) string {
	var best uint64
	name := ""
	for _, n := range ls {
		rest, ok := strings.CutPrefix(n, "marker.manifest.")
		if !ok {
			continue
		}
		iter, value, ok := strings.Cut(rest, ".")
		if !ok {
			continue
		}
		i, err := strconv.ParseUint(iter, 10, 64)
		if err != nil || (name != "" && i <= best) {
			continue
		}
		best, name = i, value
	}
	return name
}

// completeRecords returns the end of the last complete record of a
// MANIFEST that verifies, reading from its start.
func completeRecords(r io.Reader) int64 {
	rr := record.NewReader(r, 0)
	for {
		off := rr.Offset()
		rec, err := rr.Next()
		if err != nil {
			return off
		}
		if _, err := io.Copy(io.Discard, rec); err != nil {
			return off
		}
	}
}

// witnessLine is the witness's content without its checksum.
func witnessLine(manifest string, n int64) string {
	return fmt.Sprintf("%s %d", manifest, n)
}

// record makes the current MANIFEST's complete records durable and
// records their length in the witness, replacing it atomically.
func (w *witness) record() error {
	ls, err := w.fs.List(w.dir)
	if err != nil {
		return err
	}
	manifest := currentManifest(ls)
	if manifest == "" {
		return nil
	}
	f, err := w.fs.Open(w.fs.PathJoin(w.dir, manifest))
	if err != nil {
		return err
	}
	n := completeRecords(f)
	// Pebble syncs every edit it has applied; an edit another of its
	// goroutines is writing at this moment may be complete but not yet
	// synced, and must not be witnessed before it is durable.
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	line := witnessLine(manifest, n)
	body := fmt.Sprintf("%s %08x\n", line, page.CRC32C([]byte(line)))
	tmp := w.fs.PathJoin(w.dir, witnessFile+".tmp")
	t, err := w.fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	_, err = t.Write([]byte(body))
	if err == nil {
		err = t.Sync()
	}
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := w.fs.Rename(tmp, w.fs.PathJoin(w.dir, witnessFile)); err != nil {
		return err
	}
	// A crash that loses the rename leaves an older witness, which is
	// safe; the sync makes a recording's effect on a crash image
	// definite.
	d, err := w.fs.OpenDir(w.dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// check verifies the MANIFEST against the witness, before pebble opens
// it; ls is the directory's listing. A mismatch returns a description of
// the damage and the file it is in (also named with an error reading it).
func (w *witness) check(ls []string) (file string, err error) {
	f, err := w.fs.Open(w.fs.PathJoin(w.dir, witnessFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return witnessFile, err
	}
	b, err := io.ReadAll(io.LimitReader(f, 1<<10))
	_ = f.Close()
	if err != nil {
		return witnessFile, err
	}
	var manifest string
	var n int64
	var sum uint32
	_, perr := fmt.Sscanf(string(b), "%s %d %x\n", &manifest, &n, &sum)
	if perr != nil || string(b) != fmt.Sprintf("%s %08x\n", witnessLine(manifest, n), sum) ||
		page.CRC32C([]byte(witnessLine(manifest, n))) != sum {
		return witnessFile, fmt.Errorf("the MANIFEST witness %q does not verify", b)
	}
	if currentManifest(ls) != manifest {
		return "", nil // stale, or no marker: pebble's open judges
	}
	mf, err := w.fs.Open(w.fs.PathJoin(w.dir, manifest))
	if err != nil {
		return manifest, err
	}
	defer mf.Close()
	rr := record.NewReader(mf, 0)
	for {
		off := rr.Offset()
		if off >= n {
			if off > n {
				return manifest, fmt.Errorf("no record ends at byte %d, the length known durable (one ends at %d)", n, off)
			}
			return "", nil
		}
		rec, err := rr.Next()
		if err == nil {
			_, err = io.Copy(io.Discard, rec)
		}
		if errors.Is(err, io.EOF) {
			return manifest, fmt.Errorf("ends at byte %d, but %d bytes of it were known durable", off, n)
		}
		if err != nil {
			return manifest, fmt.Errorf("the record at byte %d does not verify (%v), but %d bytes were known durable", off, err, n)
		}
	}
}
