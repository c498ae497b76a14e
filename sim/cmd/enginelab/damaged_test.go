package main

import (
	"context"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/store"
)

// A stored database with a damaged file: check and run refuse it with an
// error that names the directory (status 1), and never with a panic or a
// stack trace. The damage: bytes flipped across the largest sstable of
// pages (found when a page there is read: by Open, the run, or the space
// report that reads every page), the smallest sstable deleted, the redo
// log's control file deleted and the MANIFEST cut short (all found by
// Open).
func TestTPCCDamagedDatabase(t *testing.T) {
	const seed = 20260515
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	pristine := filepath.Join(t.TempDir(), "db")
	st, _, errs := enginelab("tpcc", "load", "--dir", pristine, "--scale", "small", "--seed", "3", "--sync-commit=false")
	require.Zero(t, st, errs)

	ents, err := os.ReadDir(pristine)
	require.NoError(t, err)
	// The largest sstable of pages: the largest of all may hold nothing
	// but redo log that a checkpoint dropped, bytes that nothing reads
	// again and whose damage is harmless.
	var largest, smallest, manifest string
	var maxSize, minSize int64
	for _, e := range ents {
		fi, err := e.Info()
		require.NoError(t, err)
		switch n := e.Name(); {
		case strings.HasSuffix(n, ".sst"):
			if (largest == "" || fi.Size() > maxSize) && holdsPages(t, filepath.Join(pristine, n)) {
				largest, maxSize = n, fi.Size()
			}
			if smallest == "" || fi.Size() < minSize {
				smallest, minSize = n, fi.Size()
			}
		case strings.HasPrefix(n, "MANIFEST-"):
			manifest = n
		}
	}
	require.NotEmpty(t, largest)
	require.NotEmpty(t, manifest)

	for _, tc := range []struct {
		what, file string
		damage     func(path string)
	}{
		{"flip 16 bytes across the largest sstable of pages " + largest, largest, func(p string) {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			for i := range 16 {
				// One in each 16th of the file, so that some page whose
				// latest version is here is damaged.
				b[len(b)*i/16+r.IntN(len(b)/16)] ^= byte(1 + r.IntN(255))
			}
			require.NoError(t, os.WriteFile(p, b, 0o644))
		}},
		{"delete the smallest sstable " + smallest, smallest, func(p string) { require.NoError(t, os.Remove(p)) }},
		{"delete the redo log's control file", filepath.Join("redo", "checkpoint"), func(p string) { require.NoError(t, os.Remove(p)) }},
		{"truncate " + manifest, manifest, func(p string) {
			fi, err := os.Stat(p)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(p, r.Int64N(fi.Size())))
		}},
	} {
		dir := filepath.Join(t.TempDir(), "damaged")
		copyDatabase(t, pristine, dir, tc.file)
		tc.damage(filepath.Join(dir, tc.file))
		for _, args := range [][]string{
			{"tpcc", "check", "--dir", dir},
			{"tpcc", "run", "--dir", dir, "--duration", "1s", "--terminals", "2", "--sync-commit=false"},
		} {
			st, out, errs := enginelab(args...)
			t.Logf("%s: %s: status %d: %s", tc.what, strings.Join(args[:2], " "), st, strings.TrimSpace(errs))
			require.Equal(t, 1, st, "%s: %v", tc.what, args)
			require.Contains(t, errs, dir, "%s: %v: the error names the directory", tc.what, args)
			require.Contains(t, errs, "is damaged", "%s: %v: the error says what is wrong", tc.what, args)
			for _, s := range []string{out, errs} {
				require.NotContains(t, s, "panic", "%s: %v", tc.what, args)
				require.NotContains(t, s, "goroutine ", "%s: %v", tc.what, args)
				require.NotRegexp(t, regexp.MustCompile(`\.go:\d+`), s, "%s: %v: a stack trace", tc.what, args)
			}
		}
	}
}

// copyDatabase copies the database in src to a new directory dst. The
// sstables other than damaged are hard links: pebble never writes an
// sstable in place, while it reuses old WAL files and damage is written
// into its file.
func copyDatabase(t *testing.T, src, dst, damaged string) {
	require.NoError(t, os.MkdirAll(dst, 0o755))
	ents, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range ents {
		from, to := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		if e.IsDir() {
			// The redo log's directory, redo/.
			copyDatabase(t, from, to, strings.TrimPrefix(damaged, e.Name()+string(filepath.Separator)))
			continue
		}
		if strings.HasSuffix(e.Name(), ".sst") && e.Name() != damaged {
			require.NoError(t, os.Link(from, to))
			continue
		}
		in, err := os.Open(from)
		require.NoError(t, err)
		out, err := os.Create(to)
		require.NoError(t, err)
		_, err = io.Copy(out, in)
		require.NoError(t, err)
		require.NoError(t, in.Close())
		require.NoError(t, out.Close())
	}
}

// holdsPages says whether the sstable at path holds only pages: its first
// key is a page's.
func holdsPages(t *testing.T, path string) bool {
	f, err := vfs.Default.Open(path)
	require.NoError(t, err)
	readable, err := sstable.NewSimpleReadable(f)
	require.NoError(t, err)
	rd, err := sstable.NewReader(context.Background(), readable, sstable.ReaderOptions{})
	require.NoError(t, err)
	defer rd.Close()
	it, err := rd.NewIter(sstable.NoTransforms, nil, nil, sstable.AssertNoBlobHandles)
	require.NoError(t, err)
	defer it.Close()
	kv := it.First()
	return kv != nil && len(kv.K.UserKey) > 0 && kv.K.UserKey[0] == store.PageKey(page.ID{})[0]
}
