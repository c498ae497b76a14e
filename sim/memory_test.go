package sim

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/tpcc"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/sim/report"
)

// defaultJob is the command's default job: tpcc with no flags.
func defaultJob() TPCCConfig {
	return TPCCConfig{Phases: Phases{Load: true, Run: true, Check: true}, Warehouses: 1, Terminals: 4,
		Duration: 30 * time.Second, Seed: 1, SyncCommit: true, ReadAhead: true}
}

// 100,000 warehouses in memory are refused before anything is loaded,
// naming the flags, the estimate, the limit and what to change.
func TestMemoryCheckRefusesLargeJob(t *testing.T) {
	c := defaultJob()
	c.Warehouses = 100_000
	c.MemoryLimit = 16 << 30
	e := c.MemoryEstimate()
	err := c.Validate()
	require.ErrorIs(t, err, ErrInsufficientMemory)
	require.ErrorIs(t, err, ErrInvalidConfig)
	for _, w := range []string{"--warehouses 100000 in memory", "the default --pool of 128 MiB a warehouse and 128 MiB for the run's growth (12 TiB)",
		"needs about " + report.FormatBytes(e.Total), "more than the 16 GiB this process may use (set by --memory-limit)",
		"To fit, keep the database on disk with --dir DIR and make --pool at most", "run anyway with --ignore-memory-limit"} {
		require.ErrorContains(t, err, w)
	}

	// Through TPCC: no report, nothing created.
	dir := filepath.Join(t.TempDir(), "db")
	c.Dir = dir
	rep, err := TPCC(context.Background(), c, Hooks{LoadProgress: func(int64, int64) { t.Fatal("a load started") }})
	require.Nil(t, rep)
	require.ErrorIs(t, err, ErrInsufficientMemory)
	require.ErrorContains(t, err, "--warehouses 100000 on disk (--dir)")
	require.ErrorContains(t, err, "make --pool at most")
	_, statErr := os.Stat(dir)
	require.ErrorIs(t, statErr, os.ErrNotExist, "nothing was created")

	// The override runs it anyway (here, only as far as Validate).
	c.IgnoreMemoryLimit = true
	require.NoError(t, c.Validate())
}

// The default job fits in a few GiB, and in the memory of the machine
// the tests run on.
func TestMemoryCheckAcceptsDefaultJob(t *testing.T) {
	c := defaultJob()
	c.MemoryLimit = 4 << 30
	require.NoError(t, c.Validate())
	e := c.MemoryEstimate()
	require.Less(t, e.Total, int64(4<<30), "with up to 4 cores (as many as terminals)")
	require.Equal(t, e.Pool+e.Store+e.Tier+e.Fixed+e.Garbage, e.Total)
}

// An on-disk store (--dir) takes no memory for its pages: the estimate
// drops the store, and a job refused in memory fits on disk, the advice
// says so.
func TestMemoryCheckOnDisk(t *testing.T) {
	c := defaultJob()
	c.Warehouses = 10
	mem := c.memoryEstimate(2)
	c.Dir = t.TempDir()
	disk := c.memoryEstimate(2)
	require.Positive(t, mem.Store)
	require.Zero(t, disk.Store)
	require.Equal(t, mem.Pool, disk.Pool)
	require.Less(t, disk.Total, mem.Total)

	c.Dir = ""
	c.MemoryLimit = (mem.Total + disk.Total) / 2
	require.ErrorContains(t, c.Validate(), "keep the database on disk with --dir DIR (its pages then take no memory)")
	c.Dir = t.TempDir()
	require.NoError(t, c.Validate())
}

// The advice names the largest pool that fits, and fewer warehouses when
// no pool does.
func TestMemoryAdvice(t *testing.T) {
	c := defaultJob()
	c.Warehouses = 20
	c.Dir = t.TempDir()
	c.MemoryLimit = 2 << 30
	err := c.Validate()
	require.ErrorIs(t, err, ErrInsufficientMemory)
	require.ErrorContains(t, err, "make --pool at most")
	pool, ok := largestPool(c, c.MemoryLimit, int64(cache.MinFrames)*page.DefaultSize, page.DefaultSize)
	require.True(t, ok)
	c.PoolSize = pool
	require.NoError(t, c.Validate(), "the advised pool fits")
	c.PoolSize = pool + 2<<20
	require.Error(t, c.Validate(), "a larger one does not")

	c = defaultJob()
	c.Warehouses = 50
	c.MemoryLimit = 4 << 30
	err = c.Validate()
	require.ErrorContains(t, err, "keep the database on disk with --dir DIR and make --pool at most")
	m := regexp.MustCompile(`make --warehouses at most (\d+) to stay in memory`).FindStringSubmatch(err.Error())
	require.NotNil(t, m, err.Error())
	n, _ := strconv.Atoi(m[1])
	c.Warehouses = n
	require.NoError(t, c.Validate(), "the advised warehouses fit")
	c.Warehouses = n + 1
	require.Error(t, c.Validate(), "one more does not")
	c.Warehouses = 50

	c.Dir = t.TempDir()
	c.MemoryLimit = 64 << 20
	require.ErrorContains(t, c.Validate(), "give the process more memory: not even the smallest pool fits in 64 MiB")
}

// The in-memory store holds the redo log whole: the error names it, and
// when the engine's smaller log alone makes the job fit, the advice says
// so (and not when the log is that size already, or on disk).
func TestMemoryAdviceLogSize(t *testing.T) {
	c := defaultJob()
	c.Warehouses = 16
	full := c.MemoryEstimate().Total
	small := c
	small.LogSize = redo.DefaultCapacity
	require.Equal(t, DefaultLogSize(16)-redo.DefaultCapacity, full-small.MemoryEstimate().Total, "the log counts whole")

	c.MemoryLimit = (full + small.MemoryEstimate().Total) / 2
	err := c.Validate()
	require.ErrorIs(t, err, ErrInsufficientMemory)
	require.ErrorContains(t, err, "with a redo log of 1.1 GiB,")
	require.ErrorContains(t, err, "or make --log-size 96 MiB, the engine's default")
	c.LogSize = redo.DefaultCapacity
	require.NoError(t, c.Validate(), "the advised log fits")

	c.MemoryLimit = small.MemoryEstimate().Total - 1
	err = c.Validate()
	require.ErrorContains(t, err, "with a redo log of 96 MiB,")
	require.NotContains(t, err.Error(), "--log-size", "the log is the engine's default already")

	c.LogSize = 0
	c.Dir = t.TempDir()
	c.MemoryLimit = c.MemoryEstimate().Total - 1
	err = c.Validate()
	require.ErrorIs(t, err, ErrInsufficientMemory)
	require.NotContains(t, err.Error(), "redo log", "on disk the log takes no memory")
}

// The parts: the pool holds no more than the data can fill, plus every
// frame's overhead; an in-process tier counts (up to the data), memcached
// does not; a longer run grows the data; the collector's headroom follows
// GOGC and doubles only what is in Go's heap.
func TestMemoryEstimateParts(t *testing.T) {
	c := defaultJob()
	c.PoolSize = 64 << 30
	e := c.memoryEstimate(2)
	frames := c.PoolSize / page.DefaultSize
	require.Equal(t, e.Data+frames*cache.FrameOverhead, e.Pool, "a pool larger than the data")
	c.PoolPopulate = true
	require.Equal(t, c.PoolSize+frames*cache.FrameOverhead, c.memoryEstimate(2).Pool, "a populated pool is resident whole")
	c.PoolPopulate = false
	if !cache.ArenaOnGoHeap && !store.FilesOnGoHeap {
		require.Equal(t, int64(memFixedHeap)+frames*cache.FrameOverhead, e.Garbage,
			"the live heap holds the frames' headers and the fixed part, not the arena or the store's files")
	}

	c = defaultJob()
	base := c.memoryEstimate(2)
	require.Zero(t, base.Tier)
	c.Remote = RemoteSpec{Backend: "lru"}
	c.RemoteSize = 64 << 20
	require.Equal(t, int64(64<<20), c.memoryEstimate(2).Tier)
	require.Equal(t, base.Garbage+64<<20*gcPercent()/100, c.memoryEstimate(2).Garbage, "an in-process tier is in Go's heap")
	c.RemoteSize = 0
	c.Duration = 2 * time.Minute
	longer := c.memoryEstimate(2)
	require.Greater(t, longer.Data, int64(DefaultRemoteSize))
	require.Equal(t, int64(DefaultRemoteSize), longer.Tier, "the default 1 GiB, less than the data")
	c.Duration = time.Second
	short := c.memoryEstimate(2)
	require.Less(t, short.Data, int64(DefaultRemoteSize))
	require.Equal(t, short.Data, short.Tier, "the default 1 GiB holds no more than the data")
	c.Duration = defaultJob().Duration
	c.Remote = RemoteSpec{Backend: "memcached", Servers: []string{"127.0.0.1:11211"}}
	require.Zero(t, c.memoryEstimate(2).Tier, "memcached's memory is the servers'")

	c = defaultJob()
	c.Duration = 10 * time.Minute
	long := c.memoryEstimate(2)
	require.Greater(t, long.Growth, base.Growth)
	require.Equal(t, 2*long.Growth, c.memoryEstimate(4).Growth, "growth is bounded per core")
	require.Equal(t, 2*long.Growth, c.memoryEstimate(8).Growth, "no more cores than terminals")
	c.Phases.Run = false
	require.Zero(t, c.memoryEstimate(2).Growth, "a load alone does not grow")

	t.Setenv("GOGC", "200")
	c = defaultJob()
	require.Equal(t, 2*base.Garbage, c.memoryEstimate(2).Garbage)
}

// measuredPeaks are the peak RSS measured (MiB) of the table beside the
// estimate's figures in memory.go: the default pool, made resident from
// the start, as the command's defaults have it (some rows with commits
// not synced, which the estimate does not depend on).
var measuredPeaks = []struct {
	w        int
	org      string
	duration time.Duration
	onDisk   bool
	peakMiB  int64
}{
	{1, "clustered", time.Millisecond, false, 544},
	{1, "heap-rowptr", time.Millisecond, false, 568},
	{1, "heap-pk", time.Millisecond, false, 562},
	{1, "clustered", 10 * time.Second, false, 951},
	{1, "heap-rowptr", 10 * time.Second, false, 822},
	{1, "heap-pk", 10 * time.Second, false, 834},
	{1, "clustered", 30 * time.Second, false, 1209},
	{1, "heap-rowptr", 30 * time.Second, false, 976},
	{1, "heap-pk", 30 * time.Second, false, 873},
	{1, "clustered", time.Minute, false, 1835},
	{4, "clustered", 10 * time.Second, false, 1950},
	{4, "heap-rowptr", 10 * time.Second, false, 2107},
	{4, "heap-pk", 10 * time.Second, false, 2073},
	{4, "clustered", time.Minute, false, 2942},
	{10, "clustered", 10 * time.Second, false, 3923},
	{10, "heap-rowptr", 10 * time.Second, false, 4161},
	{10, "heap-pk", 10 * time.Second, false, 4203},
	{16, "clustered", 10 * time.Second, false, 5606},
	{16, "clustered", 30 * time.Second, false, 6182},
	{1, "clustered", 30 * time.Second, true, 486},
	{4, "clustered", 10 * time.Second, true, 894},
}

// The estimate is at least the peak RSS measured, for the same job on the
// host it was measured on (2 cores).
func TestMemoryEstimateCoversMeasured(t *testing.T) {
	for _, m := range measuredPeaks {
		c := defaultJob()
		c.Warehouses, c.Duration, c.PoolPopulate = m.w, m.duration, true
		org, err := engine.ParseOrg(m.org)
		require.NoError(t, err)
		c.Org = org
		if m.onDisk {
			c.Dir = "DIR"
		}
		e := c.memoryEstimate(2)
		t.Logf("W=%d %s %v disk %v: peak %d MiB, estimate %d MiB", m.w, m.org, m.duration, m.onDisk, m.peakMiB, e.Total>>20)
		require.GreaterOrEqual(t, e.Total, m.peakMiB<<20, "W=%d %s %v on disk %v", m.w, m.org, m.duration, m.onDisk)
	}
}

// Simulated mode counts the modeled cores and the virtual time, faster
// when the pool holds the data than when the run waits on the store.
func TestMemoryEstimateSimulatedGrowth(t *testing.T) {
	c := defaultJob()
	c.Mode = ModeSim
	c.Duration = time.Minute
	cpu := c.memoryEstimate(64)
	require.Equal(t, int64(hw.DefaultCores*memSimTxPerCoreMinute*memGrowthPerTx), cpu.Growth, "the modeled cores, not the host's")
	c.Hardware.Cores = 2
	require.Equal(t, cpu.Growth/2, c.memoryEstimate(64).Growth)
	c.PoolSize = 32 << 20
	require.Equal(t, int64(2*memSimIOTxPerCoreMinute*memGrowthPerTx), c.memoryEstimate(64).Growth, "a pool smaller than the data")
}

// A stored database's run is checked once its warehouses are read.
func TestMemoryCheckStoredDatabase(t *testing.T) {
	c := TPCCConfig{Phases: Phases{Run: true, Check: true}, Terminals: 1, Duration: time.Second, Dir: t.TempDir(), MemoryLimit: 1 << 20}
	require.NoError(t, os.WriteFile(filepath.Join(c.Dir, "x"), nil, 0o644))
	require.NoError(t, c.CheckMemory(), "no warehouses yet: nothing to estimate")
	require.Zero(t, c.MemoryEstimate().Total)
	c.Warehouses = 1
	require.ErrorIs(t, c.Validate(), ErrInsufficientMemory)
}

// The loaded data follows the scale: full scale is the measured figure per
// warehouse plus ITEM; a tenth of the population is a tenth of it.
func TestLoadedBytesScale(t *testing.T) {
	require.Equal(t, int64(memLoadPerWarehouse+memLoadFixed), loadedBytes(1, tpcc.FullScale))
	require.Equal(t, int64(4*memLoadPerWarehouse+memLoadFixed), loadedBytes(4, tpcc.Scale{}))
	small := loadedBytes(1, tpcc.SmallScale)
	require.InDelta(t, float64(memLoadPerWarehouse+memLoadFixed)/10, float64(small), 1<<10)
	full := (&TPCCConfig{Phases: Phases{Load: true}, Warehouses: 1}).MemoryEstimate()
	reduced := (&TPCCConfig{Phases: Phases{Load: true}, Warehouses: 1, Scale: tpcc.SmallScale}).MemoryEstimate()
	require.Less(t, reduced.Data, full.Data)
	require.Equal(t, small, reduced.Data)
}

// The default pool is 128 MiB a warehouse and 128 MiB for the run's
// growth, once: W=1 keeps 256 MiB, W=16 gets 2.1 GiB, not 4 GiB.
func TestDefaultPoolSize(t *testing.T) {
	require.Equal(t, int64(256<<20), DefaultPoolSize(1))
	require.Equal(t, int64(256<<20), DefaultPoolSize(0), "at least one warehouse")
	require.Equal(t, int64(2176<<20), DefaultPoolSize(16))
	c := defaultJob()
	c.Warehouses = 16
	require.Equal(t, DefaultPoolSize(16), c.EngineOptions().PoolSize, "no --pool: the default")
	c.PoolSize = 64 << 20
	require.Equal(t, int64(64<<20), c.EngineOptions().PoolSize, "--pool wins")
}

func TestDefaultLogSize(t *testing.T) {
	require.Equal(t, int64(128<<20), DefaultLogSize(1))
	require.Equal(t, int64(128<<20), DefaultLogSize(0), "at least one warehouse")
	require.Equal(t, int64(320<<20), DefaultLogSize(4))
	require.Equal(t, int64(1088<<20), DefaultLogSize(16))
	for _, w := range []int{1, 4, 16, 100} {
		require.Equal(t, DefaultPoolSize(w)/2, DefaultLogSize(w), "W=%d: half the default pool", w)
	}
	c := defaultJob()
	c.Warehouses = 16
	require.Equal(t, DefaultLogSize(16), c.EngineOptions().LogSize, "no --log-size: the default")
	require.Equal(t, DefaultLogSize(16), newReport(&c).Config.LogBytes, "the report names the default")
	c.PoolSize = 64 << 20
	require.Equal(t, DefaultLogSize(16), c.EngineOptions().LogSize, "--pool leaves the log alone")
	before := c.memoryEstimate(2)
	c.LogSize = 48 << 20
	require.Equal(t, int64(48<<20), c.EngineOptions().LogSize, "--log-size wins")
	after := c.memoryEstimate(2)
	require.Equal(t, DefaultLogSize(16)-48<<20, before.Store-after.Store, "in memory the store counts the log whole")
	c.Dir = "DIR"
	require.Zero(t, c.memoryEstimate(2).Store, "on disk the log takes no memory")
}
