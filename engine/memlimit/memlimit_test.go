package memlimit

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

const meminfo = `MemTotal:       24683548 kB
MemFree:        23000000 kB
MemAvailable:   24117672 kB
Buffers:           10000 kB
`

// mountinfo of a hybrid host: v1 controllers under /sys/fs/cgroup, the
// unified hierarchy (no controllers) under /sys/fs/cgroup/unified.
const hybridMounts = `22 1 0:21 / /sys rw,nosuid - sysfs sysfs rw
30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`

const hybridCgroup = `9:name=systemd:/
4:memory:/jobs/42
1:cpu:/
0::/
`

// A v2 host: one unified hierarchy at /sys/fs/cgroup.
const v2Mounts = `25 22 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate
`

func TestReadV2(t *testing.T) {
	fsys := fstest.MapFS{
		"proc/meminfo":                                  {Data: []byte(meminfo)},
		"proc/self/cgroup":                              {Data: []byte("0::/user.slice/job.scope\n")},
		"proc/self/mountinfo":                           {Data: []byte(v2Mounts)},
		"sys/fs/cgroup/memory.max":                      {Data: []byte("max\n")},
		"sys/fs/cgroup/user.slice/memory.max":           {Data: []byte("8589934592\n")},
		"sys/fs/cgroup/user.slice/job.scope/memory.max": {Data: []byte("max\n")},
	}
	l, err := Read(fsys)
	require.NoError(t, err)
	require.Equal(t, Limit{Bytes: 8 << 30, Source: "cgroup v2 limit in /sys/fs/cgroup/user.slice/memory.max"}, l,
		"a parent's limit holds for its children")

	// "max" all the way up: no cgroup limit, so MemAvailable.
	fsys["sys/fs/cgroup/user.slice/memory.max"] = &fstest.MapFile{Data: []byte("max\n")}
	l, err = Read(fsys)
	require.NoError(t, err)
	require.Equal(t, Limit{Bytes: 24117672 << 10, Source: "MemAvailable in /proc/meminfo"}, l)

	// A cgroup limit above what the machine has available: MemAvailable.
	fsys["sys/fs/cgroup/user.slice/job.scope/memory.max"] = &fstest.MapFile{Data: []byte("68719476736\n")}
	l, err = Read(fsys)
	require.NoError(t, err)
	require.Equal(t, int64(24117672<<10), l.Bytes)
}

// A cgroup namespace: /proc/self/cgroup says "/", the mount's root is the
// process's cgroup.
func TestReadV2Namespace(t *testing.T) {
	l, err := Read(fstest.MapFS{
		"proc/meminfo":             {Data: []byte(meminfo)},
		"proc/self/cgroup":         {Data: []byte("0::/\n")},
		"proc/self/mountinfo":      {Data: []byte(v2Mounts)},
		"sys/fs/cgroup/memory.max": {Data: []byte("2147483648\n")},
	})
	require.NoError(t, err)
	require.Equal(t, Limit{Bytes: 2 << 30, Source: "cgroup v2 limit in /sys/fs/cgroup/memory.max"}, l)
}

func TestReadV1(t *testing.T) {
	fsys := fstest.MapFS{
		"proc/meminfo":        {Data: []byte(meminfo)},
		"proc/self/cgroup":    {Data: []byte(hybridCgroup)},
		"proc/self/mountinfo": {Data: []byte(hybridMounts)},
		// v1's "no limit" is the largest page-rounded value.
		"sys/fs/cgroup/memory/memory.limit_in_bytes":         {Data: []byte("9223372036854771712\n")},
		"sys/fs/cgroup/memory/jobs/memory.limit_in_bytes":    {Data: []byte("9223372036854771712\n")},
		"sys/fs/cgroup/memory/jobs/42/memory.limit_in_bytes": {Data: []byte("4294967296\n")},
		"sys/fs/cgroup/unified/cgroup.procs":                 {Data: []byte("1\n")},
	}
	l, err := Read(fsys)
	require.NoError(t, err)
	require.Equal(t, Limit{Bytes: 4 << 30, Source: "cgroup v1 limit in /sys/fs/cgroup/memory/jobs/42/memory.limit_in_bytes"}, l,
		"the unified hierarchy has no memory controller: v1's limit")

	fsys["sys/fs/cgroup/memory/jobs/42/memory.limit_in_bytes"] = &fstest.MapFile{Data: []byte("9223372036854771712\n")}
	l, err = Read(fsys)
	require.NoError(t, err)
	require.Equal(t, "MemAvailable in /proc/meminfo", l.Source, "no limit set anywhere")
}

// Nothing to read (not Linux): no limit known, no error.
func TestReadNothing(t *testing.T) {
	l, err := Read(fstest.MapFS{})
	require.NoError(t, err)
	require.False(t, l.Known())
}

func TestReadBadFiles(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{
		"meminfo": {"proc/meminfo": {Data: []byte("MemAvailable: lots\n")}},
		"limit": {
			"proc/self/cgroup":         {Data: []byte("0::/\n")},
			"proc/self/mountinfo":      {Data: []byte(v2Mounts)},
			"sys/fs/cgroup/memory.max": {Data: []byte("a lot\n")},
		},
		"cgroup": {"proc/self/cgroup": {Data: []byte("nonsense\n")}},
	} {
		_, err := Read(fsys)
		require.Error(t, err, name)
	}
}

func TestUnescape(t *testing.T) {
	require.Equal(t, "/mnt/my cgroup", unescape(`/mnt/my\040cgroup`))
	require.Equal(t, `/a\b`, unescape(`/a\b`))
	require.Equal(t, `/a\04`, unescape(`/a\04`))
}
