package memlimit

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
)

// Limit is the memory this process may use.
type Limit struct {
	// Bytes is the limit; 0 when none could be read (no cgroup limit and
	// no /proc/meminfo: not Linux).
	Bytes int64
	// Source says where Bytes was read, for messages: "cgroup v2 limit
	// in /sys/fs/cgroup/a/memory.max", "MemAvailable in /proc/meminfo".
	Source string
}

// Known says whether a limit was read.
func (l Limit) Known() bool { return l.Bytes > 0 }

// System reads the running process's limit from the real filesystem.
func System() (Limit, error) { return Read(os.DirFS("/")) }

// unlimitedV1 is the smallest value cgroup v1 reports for "no limit"
// (PAGE_COUNTER_MAX in bytes, 9223372036854771712 with 4 KiB pages):
// anything this large is no limit.
const unlimitedV1 = 1 << 62

// Read reads the limit from fsys, a filesystem rooted at "/" (os.DirFS("/")
// in System; tests give sample files): proc/self/cgroup and
// proc/self/mountinfo name this process's cgroups and where they are
// mounted, proc/meminfo has MemAvailable. Files that are missing are no
// limit; a file that is there but cannot be parsed is an error.
func Read(fsys fs.FS) (Limit, error) {
	cg, err := cgroupLimit(fsys)
	if err != nil {
		return Limit{}, err
	}
	avail, err := memAvailable(fsys)
	if err != nil {
		return Limit{}, err
	}
	switch {
	case cg.Known() && (!avail.Known() || cg.Bytes <= avail.Bytes):
		return cg, nil
	case avail.Known():
		return avail, nil
	}
	return Limit{}, nil
}

// memAvailable reads MemAvailable from proc/meminfo ("MemAvailable:
// 24117672 kB").
func memAvailable(fsys fs.FS) (Limit, error) {
	f, err := fsys.Open("proc/meminfo")
	if errors.Is(err, fs.ErrNotExist) {
		return Limit{}, nil
	} else if err != nil {
		return Limit{}, fmt.Errorf("memlimit: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return Limit{}, fmt.Errorf("memlimit: /proc/meminfo: MemAvailable:%s: want a count of kB", rest)
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || kb < 0 {
			return Limit{}, fmt.Errorf("memlimit: /proc/meminfo: MemAvailable:%s: want a count of kB", rest)
		}
		return Limit{Bytes: kb << 10, Source: "MemAvailable in /proc/meminfo"}, nil
	}
	return Limit{}, sc.Err()
}

// mount is a cgroup hierarchy's mount: where it is mounted and which
// cgroup its root is (not "/" inside a container without a cgroup
// namespace).
type mount struct{ root, point string }

// cgroupLimit reads the memory limit of this process's cgroup: v2's
// memory.max where the unified hierarchy has the memory controller, else
// v1's memory.limit_in_bytes.
func cgroupLimit(fsys fs.FS) (Limit, error) {
	paths, err := cgroupPaths(fsys)
	if err != nil || len(paths) == 0 {
		return Limit{}, err
	}
	mounts, err := cgroupMounts(fsys)
	if err != nil {
		return Limit{}, err
	}
	for _, h := range []struct{ key, file, name string }{
		{"v2", "memory.max", "cgroup v2 limit"},
		{"v1", "memory.limit_in_bytes", "cgroup v1 limit"},
	} {
		p, ok1 := paths[h.key]
		m, ok2 := mounts[h.key]
		if !ok1 || !ok2 {
			continue
		}
		lim, found, err := walkUp(fsys, m, p, h.file)
		if err != nil {
			return Limit{}, err
		}
		if !found {
			continue // a v2 hierarchy without the memory controller: try v1
		}
		if lim.Bytes > 0 {
			lim.Source = h.name + " in " + lim.Source
		}
		return lim, nil
	}
	return Limit{}, nil
}

// walkUp reads file in the cgroup directory of path and in each parent up
// to the mount's root, and returns the smallest limit (Bytes 0: none set);
// found says the file was in the cgroup's directory at all.
func walkUp(fsys fs.FS, m mount, cgPath, file string) (Limit, bool, error) {
	rel := cgPath
	if m.root != "/" {
		if r, ok := strings.CutPrefix(cgPath, m.root); ok && (r == "" || r[0] == '/') {
			rel = r
		} else {
			rel = "/" // the cgroup is outside the mount: only the mount's root is visible
		}
	}
	base := strings.TrimPrefix(path.Clean(m.point), "/")
	dir := path.Join(base, rel)
	if _, err := fs.Stat(fsys, path.Join(dir, file)); err != nil {
		// A cgroup namespace shows paths the mount does not have; the
		// mount's root is then this process's cgroup.
		dir = base
	}
	var lim Limit
	found := false
	for {
		b, err := fs.ReadFile(fsys, path.Join(dir, file))
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return Limit{}, false, fmt.Errorf("memlimit: %w", err)
		default:
			found = true
			n, err := parseLimit(string(b))
			if err != nil {
				return Limit{}, false, fmt.Errorf("memlimit: /%s: %w", path.Join(dir, file), err)
			}
			if n > 0 && (lim.Bytes == 0 || n < lim.Bytes) {
				lim = Limit{Bytes: n, Source: "/" + path.Join(dir, file)}
			}
		}
		if dir == base || dir == "." || dir == "" {
			return lim, found, nil
		}
		dir = path.Dir(dir)
	}
}

// parseLimit parses a limit file's content: bytes, or "max"; 0 is no limit.
func parseLimit(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "max" {
		return 0, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("limit %q: want a count of bytes or max", s)
	}
	if n >= unlimitedV1 {
		return 0, nil
	}
	return int64(n), nil
}

// cgroupPaths reads proc/self/cgroup ("0::/a/b" for v2, "4:memory:/a" for
// v1's memory controller): the cgroup of each hierarchy, keyed "v2" and
// "v1".
func cgroupPaths(fsys fs.FS) (map[string]string, error) {
	b, err := fs.ReadFile(fsys, "proc/self/cgroup")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("memlimit: %w", err)
	}
	paths := map[string]string{}
	for line := range strings.Lines(string(b)) {
		line = strings.TrimRight(line, "\n")
		if line == "" {
			continue
		}
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("memlimit: /proc/self/cgroup: line %q: want ID:CONTROLLERS:PATH", line)
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			paths["v2"] = parts[2]
		case hasOption(parts[1], "memory"):
			paths["v1"] = parts[2]
		}
	}
	return paths, nil
}

// cgroupMounts reads proc/self/mountinfo for the cgroup2 mount and v1's
// memory controller mount. A line is "ID PARENT MAJ:MIN ROOT POINT OPTIONS
// [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS".
func cgroupMounts(fsys fs.FS) (map[string]mount, error) {
	b, err := fs.ReadFile(fsys, "proc/self/mountinfo")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("memlimit: %w", err)
	}
	mounts := map[string]mount{}
	for line := range strings.Lines(string(b)) {
		pre, post, ok := strings.Cut(strings.TrimRight(line, "\n"), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 1 {
			continue
		}
		m := mount{root: unescape(f[3]), point: unescape(f[4])}
		switch {
		case g[0] == "cgroup2":
			if _, dup := mounts["v2"]; !dup {
				mounts["v2"] = m
			}
		case g[0] == "cgroup" && len(g) >= 3 && hasOption(g[2], "memory"):
			if _, dup := mounts["v1"]; !dup {
				mounts["v1"] = m
			}
		}
	}
	return mounts, nil
}

func hasOption(list, opt string) bool {
	for o := range strings.SplitSeq(list, ",") {
		if o == opt {
			return true
		}
	}
	return false
}

// unescape undoes mountinfo's octal escapes of space, tab, newline and
// backslash (\040 ...).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
