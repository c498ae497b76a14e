package sim

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/engine/memlimit"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/sim/report"
	"github.com/enginelab/enginelab/tpcc"
)

// ErrInsufficientMemory is engine's sentinel (one for both checks): a job
// whose memory estimate (TPCCConfig.MemoryEstimate) is more than the
// process may use. TPCCConfig.Validate's error wraps it and ErrInvalidConfig:
// the job is refused before anything is opened or loaded.
var ErrInsufficientMemory = engine.ErrInsufficientMemory

// The figures of the memory estimate come from measurements: the peak
// RSS (/usr/bin/time -v, "Maximum resident set size"), the largest live
// heap after a collection (GODEBUG=gctrace=1) and the pages of the
// report's space section (after the run) of
//
//	go build -o enginelab ./sim/cmd/enginelab
//	GODEBUG=gctrace=1 /usr/bin/time -v ./enginelab tpcc --warehouses W --org ORG --duration D --quiet --json
//
// with the default pool of the time (256 MiB a warehouse, not today's
// DefaultPoolSize) and 4 terminals, on 2 cores
// (shared with other work, so the transactions vary) and 24 GiB, Go
// 1.26, GOGC=100; in memory unless --dir; D 1ms (with --check=false)
// is the load alone. The
// estimate is MemoryEstimate's for the same job on 2 cores
// (measuredPeaks in memory_test.go holds the same rows, and a test checks
// the estimate covers each):
//
//	W   org          D     store   pages     transactions  live heap  peak RSS   estimate
//	1   clustered    1ms   memory    94 MiB             0     530 MB    864 MiB   2458 MiB
//	1   heap-rowptr  1ms   memory    98 MiB             0     540 MB    930 MiB   2458 MiB
//	1   heap-pk      1ms   memory   100 MiB             0     542 MB    998 MiB   2458 MiB
//	1   clustered    10s   memory   111 MiB         14100     836 MB   1710 MiB   2595 MiB
//	1   heap-rowptr  10s   memory   106 MiB          7643     928 MB   1782 MiB   2595 MiB
//	1   heap-pk      10s   memory   101 MiB          2173     672 MB   1332 MiB   2595 MiB
//	1   clustered    30s   memory   120 MiB         22182    1101 MB   2270 MiB   2868 MiB
//	1   heap-rowptr  30s   memory   112 MiB         12782    1037 MB   2143 MiB   2868 MiB
//	1   heap-pk      30s   memory   111 MiB         14284     853 MB   1735 MiB   2868 MiB
//	1   clustered    60s   memory   155 MiB         58866     732 MB   1577 MiB   3187 MiB
//	4   clustered    10s   memory   398 MiB          6059    1752 MB   2988 MiB   4476 MiB
//	4   heap-rowptr  10s   memory   373 MiB          3583    1804 MB   3137 MiB   4476 MiB
//	4   heap-pk      10s   memory   393 MiB          4080    1805 MB   3122 MiB   4476 MiB
//	4   clustered    60s   memory   485 MiB         48872    2267 MB   4430 MiB   5159 MiB
//	10  clustered    10s   memory  1025 MiB          8563    4028 MB   6428 MiB   8238 MiB
//	10  heap-rowptr  10s   memory   957 MiB          4720    4117 MB   6193 MiB   8238 MiB
//	10  heap-pk      10s   memory   958 MiB          3132    3937 MB   6412 MiB   8238 MiB
//	1   clustered    30s   disk     113 MiB         15277     300 MB    558 MiB    757 MiB
//	4   clustered    10s   disk     426 MiB          6012    1103 MB   1556 MiB   1780 MiB
//
// Simulated mode, the experiments at their defaults (W=1, 4 modeled
// cores; peak RSS of /usr/bin/time -v ./enginelab experiment NAME):
//
//	experiment      sides  pool     virtual time  transactions/min  peak RSS   estimate (a side)
//	delivery-limit  2      256 MiB  1 s + 5 s     742,620           1981 MiB   2992 MiB
//	io-bound        4      28 MiB   1 min + 5 min 1,923             1146 MiB   2801 MiB
//
// The figures above, and the parts of the estimate below, were measured
// when the pool's arena and the in-memory store's files were on Go's
// heap, where the collector's headroom doubled them. Both are outside it
// now (the cache and store packages' docs), and the same jobs peak far
// lower: W=1 clustered 30 s, 704 MiB in memory (292 MiB of it the
// store's files) and 468 MiB on disk, with the command's --pool-populate
// (the whole pool resident from the start). The estimate keeps the old
// figures, which bound the new peaks from above, until the table is
// measured again.
//
// What the live heap held, from heap profiles (W=1): the pool's arena
// (allocated whole: 258 MB at W=1) and pebble's in-memory files (360 MB
// after a 10 s run, 460 MB at the peak of a 30 s one, for 110 to 125 MiB
// of pages: every page written, the versions compactions have not yet
// dropped, the redo log flushed before its checkpoint deleted it, and the
// files' slack); little else. The peak RSS is about twice the live heap,
// less the arena's frames never used: the collector's headroom (see
// MemoryEstimate.Garbage).
//
// With these figures and the default pool, each warehouse adds about
// 627 MiB to the estimate in memory (104 MiB of pages, in the pool and
// at 1.25 in the store, its 256 MiB of pool's frames with their
// overhead, and the collector's headroom over the live part) and 367 MiB
// on disk; the rest is about 1.8 GiB in memory (the store's churn and
// the fixed part, with their headroom) and 270 MiB on disk, plus the
// run's growth: at most about 117 MiB of pages a minute per core of this
// machine in real mode (up to one per terminal), and per modeled core
// and virtual minute 390 MiB in simulated mode when the pool holds the
// data, 10 MiB when it does not. The estimates are above the peaks
// measured by 14% to 150%.
const (
	// memLoadPerWarehouse and memLoadFixed are the loaded pages: about
	// 101 MiB a warehouse at W=10 (the loaders' interleaved inserts
	// leave STOCK's pages 82% full), 86 to 92 at W=1, rounded up; ITEM's
	// 100,000 rows (9 MiB) are loaded once, whatever W.
	memLoadPerWarehouse = 104 << 20
	memLoadFixed        = 9 << 20

	// memGrowthPerTx is the pages a transaction of the default mix adds
	// (ORDERS, ORDER_LINE, NEW_ORDER and HISTORY grow; splits leave room
	// in pages): 1.1 KiB measured at W=1 over 60 s, 1.6 KiB at W=4,
	// rounded up.
	memGrowthPerTx = 2 << 10
	// memTxPerCoreMinute bounds the transactions a core runs in a minute
	// in real mode: at most about 29,000 were measured; twice that leaves
	// room for faster cores. With memGrowthPerTx, a core grows the data
	// by at most about 117 MiB a minute.
	memTxPerCoreMinute = 60_000
	// In simulated mode the transactions of a virtual minute depend on
	// the modeled hardware, which the estimate cannot know before the
	// run. Measured (experiment delivery-limit and io-bound, defaults):
	// about 185,000 a modeled core in a virtual minute when the pool
	// holds the data (the run is CPU-bound), and under 500 when it holds
	// a quarter of it (the run waits on the modeled disk-2009 store or
	// the tier). The estimate takes memSimTxPerCoreMinute when the pool
	// can hold the loaded data, else memSimIOTxPerCoreMinute, ten times
	// the IO-bound figure: a pool only a little smaller than the data,
	// or a fast modeled store, runs faster than that, and a long
	// simulated run of that kind can grow beyond the estimate.
	memSimTxPerCoreMinute   = 200_000
	memSimIOTxPerCoreMinute = 5_000

	// memStorePerByte, in eighths, and memStoreChurn are the in-memory
	// store's bytes: 1.25 per byte of pages (the files' slack, versions
	// not yet compacted) and a churn that does not follow the data (the
	// redo log and page versions waiting for compaction): up to about
	// 600 MiB was measured (W=4, 60 s, the most transactions a second
	// per warehouse); more transactions a second make more.
	memStorePerByte = 10
	memStoreChurn   = 768 << 20

	// memFixedHeap is the rest of the live heap: the runtime, the
	// loader's and the terminals' buffers, the lock table (30 MB
	// measured on disk at W=1, where the store's files are not in the
	// heap). The store's budget (engine.Options.StoreBudget: pebble's
	// memtables and block cache, allocated outside Go's heap) is counted
	// beside it, without the collector's headroom.
	memFixedHeap = 64 << 20
)

// MemoryEstimate is what a job is expected to need at its peak, part by
// part (TPCCConfig.MemoryEstimate).
type MemoryEstimate struct {
	// Data is the pages the estimate assumes the database holds at its
	// largest: the load's and the run's Growth.
	Data   int64 `json:"data_bytes"`
	Growth int64 `json:"growth_bytes"`
	// Pool is the buffer pool: the frames the data fills (no more than
	// its capacity: a frame takes memory only once a page is read into
	// it; all of them with PoolPopulate) and every frame's overhead
	// (cache.FrameOverhead).
	Pool int64 `json:"pool_bytes"`
	// Store is the in-memory store (pebble in memory holds every page
	// written): 0 with a database directory (Dir).
	Store int64 `json:"store_bytes"`
	// Tier is the in-process remote tier (ristretto, lru, slru): its
	// budget, no more than the data can fill. A memcached tier lives in
	// other processes and costs nothing here.
	Tier int64 `json:"tier_bytes"`
	// Fixed is what does not grow with the data: memFixedHeap and the
	// store's memtables and block cache (engine.Options.StoreBudget).
	Fixed int64 `json:"fixed_bytes"`
	// Garbage is the collector's headroom: at GOGC=100 (or $GOGC) Go
	// lets garbage grow as large as the live heap before it collects,
	// and the live heap counts the pool's whole arena, allocated at once
	// though only the frames used take memory. A job allocates and drops
	// memory all along (rows, log records, sstables), so it reaches this.
	Garbage int64 `json:"garbage_bytes"`
	// Total is the sum of the parts: the estimated peak RSS.
	Total int64 `json:"total_bytes"`
}

// loadedBytes is the pages a load of w warehouses at scale sc leaves: at
// full scale w × memLoadPerWarehouse + memLoadFixed. A smaller scale
// shrinks STOCK (a row per item and warehouse, about 40% of a warehouse's
// pages) and ITEM with its items, and the rest of a warehouse (CUSTOMER,
// HISTORY, ORDERS, NEW_ORDER, ORDER_LINE) with its customers. Measured at
// W=1 small scale (a tenth of both): 9.8 MiB loaded; this gives 11.
func loadedBytes(w int, sc tpcc.Scale) int64 {
	items := float64(sc.NumItems()) / tpcc.Items
	customers := float64(sc.Customers()) / tpcc.CustomersPerDistrict
	perWarehouse := float64(memLoadPerWarehouse) * (0.4*items + 0.6*customers)
	return int64(float64(w)*perWarehouse + float64(memLoadFixed)*items)
}

// MemoryEstimate estimates the peak memory (resident set) of the job c,
// from figures measured per warehouse (memLoadPerWarehouse and the rest):
// the data is W loaded warehouses and the run's growth, bounded by the
// transactions its cores can run in its warm-up and measured time
// (memTxPerCoreMinute; in simulated mode, in virtual time on the modeled
// cores, memSimTxPerCoreMinute). A job with no warehouses yet (a run on a
// stored database, before it is read) has an estimate of 0.
func (c *TPCCConfig) MemoryEstimate() MemoryEstimate {
	return c.memoryEstimate(runtime.GOMAXPROCS(0))
}

// memoryEstimate is MemoryEstimate on a host with hostCores cores.
func (c *TPCCConfig) memoryEstimate(hostCores int) MemoryEstimate {
	var e MemoryEstimate
	if c.Warehouses < 1 {
		return e
	}
	e.Data = loadedBytes(c.Warehouses, c.Scale)
	o := c.EngineOptions()
	ps := int64(o.PageSize)
	if ps == 0 {
		ps = page.DefaultSize
	}
	capacity := o.PoolSize / ps * ps
	headers := capacity / ps * cache.FrameOverhead
	if c.Phases.Run {
		cores, rate := hostCores, memTxPerCoreMinute
		if c.Mode == ModeSim {
			cores = c.Hardware.Cores
			if cores == 0 {
				cores = hw.DefaultCores
			}
			rate = memSimTxPerCoreMinute
			if capacity < e.Data {
				rate = memSimIOTxPerCoreMinute
			}
		}
		cores = max(1, min(cores, c.Terminals))
		minutes := (c.Warmup + c.Duration).Minutes()
		e.Growth = int64(float64(cores) * minutes * float64(rate) * memGrowthPerTx)
		e.Data += e.Growth
	}
	e.Pool = min(capacity, e.Data) + headers
	if c.PoolPopulate {
		e.Pool = capacity + headers
	}
	if c.Dir == "" {
		e.Store = e.Data*memStorePerByte/8 + memStoreChurn
	}
	if c.tierInProcess() {
		e.Tier = min(c.remoteSize(), e.Data)
	}
	e.Fixed = memFixedHeap + c.EngineOptions().StoreBudget()
	// The live heap holds the whole arena; the resident parts above hold
	// only the frames filled. The store's memtables are not in Go's heap.
	live := capacity + headers + e.Store + e.Tier + memFixedHeap
	e.Garbage = live * gcPercent() / 100
	e.Total = e.Pool + e.Store + e.Tier + e.Fixed + e.Garbage
	return e
}

// tierInProcess says whether c's remote tier keeps its pages in this
// process (tier.InProcessBytes: memcached's are the servers').
func (c *TPCCConfig) tierInProcess() bool {
	switch c.Remote.Backend {
	case "", "none", "memcached":
		return false
	}
	return true
}

// remoteSize is the in-process tier's budget (RemoteSize or its default).
func (c *TPCCConfig) remoteSize() int64 {
	if c.RemoteSize > 0 {
		return c.RemoteSize
	}
	return DefaultRemoteSize
}

// gcPercent is the collector's GOGC as the runtime read it at start: the
// environment's GOGC when it is a number, else 100 ("off" has no bound:
// the estimate then keeps 100).
func gcPercent() int64 {
	if n, err := strconv.Atoi(os.Getenv("GOGC")); err == nil && n > 0 {
		return int64(n)
	}
	return 100
}

// memoryLimit is what c's check compares with: MemoryLimit, else what
// the process may use (engine/memlimit: the smaller of the cgroup's
// limit, v2 memory.max or v1 memory.limit_in_bytes, and MemAvailable);
// bytes 0: unknown, nothing is checked.
func (c *TPCCConfig) memoryLimit() (int64, string, error) {
	if c.MemoryLimit > 0 {
		return c.MemoryLimit, "set by --memory-limit", nil
	}
	l, err := memlimit.System()
	return l.Bytes, l.Source, err
}

// CheckMemory refuses a job whose MemoryEstimate is more than the memory
// the process may use, with an error wrapping ErrInvalidConfig and
// ErrInsufficientMemory that names the flags, the estimate, the limit and
// which flag to change: --dir (an on-disk store costs no memory for its
// pages), --pool, or --warehouses. IgnoreMemoryLimit skips it. Validate
// calls it, so every job (tpcc, its --compare sides, experiments) is
// checked before anything is loaded.
//
// The engine's own check (engine.Options.SkipMemoryCheck) counts the pool
// at its capacity, as if the data could fill it, and not the store; this
// one counts both from the data, so EngineOptions turns the engine's off.
func (c *TPCCConfig) CheckMemory() error {
	if c.IgnoreMemoryLimit || c.Warehouses < 1 {
		return nil
	}
	limit, source, err := c.memoryLimit()
	if err != nil {
		return fmt.Errorf("sim: %w: reading the memory limit (--ignore-memory-limit skips the check): %w", ErrInvalidConfig, err)
	}
	e := c.MemoryEstimate()
	if limit <= 0 || e.Total <= limit {
		return nil
	}
	var b strings.Builder
	where := "in memory"
	if c.Dir != "" {
		where = "on disk (--dir)"
	}
	pool := "--pool " + report.FormatBytes(c.PoolSize)
	switch {
	case c.PoolSize == 0:
		pool = fmt.Sprintf("the default --pool of %s a warehouse and %s for the run's growth (%s)", report.FormatBytes(PoolPerWarehouse), report.FormatBytes(PoolGrowth), report.FormatBytes(c.EngineOptions().PoolSize))
	case c.ScaledPool > 0:
		pool = fmt.Sprintf("the default --pool of %s a warehouse (%s)", report.FormatBytes(c.ScaledPool), report.FormatBytes(c.PoolSize))
	}
	fmt.Fprintf(&b, "--warehouses %d %s with %s", c.Warehouses, where, pool)
	if c.tierInProcess() {
		fmt.Fprintf(&b, " and --remote %s --remote-size %s", c.Remote, report.FormatBytes(c.remoteSize()))
	}
	fmt.Fprintf(&b, " needs about %s (data %s", report.FormatBytes(e.Total), report.FormatBytes(e.Data))
	if e.Growth > 0 {
		fmt.Fprintf(&b, " with the run's growth of %s", report.FormatBytes(e.Growth))
	}
	var parts []string
	for _, p := range []struct {
		name string
		n    int64
	}{{"store", e.Store}, {"pool", e.Pool}, {"tier", e.Tier}, {"fixed", e.Fixed}, {"collector's headroom", e.Garbage}} {
		if p.n > 0 {
			parts = append(parts, p.name+" "+report.FormatBytes(p.n))
		}
	}
	fmt.Fprintf(&b, "; %s), more than the %s this process may use (%s)", strings.Join(parts, ", "), report.FormatBytes(limit), source)
	fmt.Fprintf(&b, ". To fit, %s; or run anyway with --ignore-memory-limit", c.memoryAdvice(limit))
	return fmt.Errorf("sim: %w: %w: %s", ErrInvalidConfig, ErrInsufficientMemory, b.String())
}

// memoryAdvice says which flags to change so that c fits in limit: --dir
// (an on-disk store, with the largest --pool that fits there if need be;
// not for an InMemoryOnly job), the largest --pool that fits in memory,
// the most --warehouses that fit with the other settings as they are.
func (c *TPCCConfig) memoryAdvice(limit int64) string {
	ps := int64(c.PageSize)
	if ps == 0 {
		ps = page.DefaultSize
	}
	minPool := int64(cache.MinFrames) * ps
	var alts []string
	onDisk := *c
	if onDisk.Dir == "" {
		onDisk.Dir = "DIR"
	}
	diskPool, diskFits := largestPool(onDisk, limit, minPool, ps)
	switch {
	case c.InMemoryOnly:
	case c.Dir != "" && diskFits:
		alts = append(alts, fmt.Sprintf("make --pool at most %s", report.FormatBytes(diskPool)))
	case c.Dir != "":
		alts = append(alts, fmt.Sprintf("give the process more memory: not even the smallest pool fits in %s", report.FormatBytes(limit)))
	case onDisk.MemoryEstimate().Total <= limit:
		alts = append(alts, "keep the database on disk with --dir DIR (its pages then take no memory)")
	case diskFits:
		alts = append(alts, fmt.Sprintf("keep the database on disk with --dir DIR and make --pool at most %s", report.FormatBytes(diskPool)))
	}
	if c.Dir == "" {
		if pool, ok := largestPool(*c, limit, minPool, ps); ok {
			alts = append(alts, fmt.Sprintf("make --pool at most %s", report.FormatBytes(pool)))
		}
		// The most warehouses that fit in memory (the default pool
		// follows them).
		lo, hi := 0, c.Warehouses-1
		for lo < hi {
			mid := lo + (hi-lo+1)/2
			d := *c
			d.Warehouses = mid
			if c.ScaledPool > 0 {
				d.PoolSize = c.ScaledPool * int64(mid)
			}
			if d.MemoryEstimate().Total <= limit {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		if lo > 0 && c.InMemoryOnly {
			alts = append(alts, fmt.Sprintf("make --warehouses at most %d", lo))
		} else if lo > 0 {
			alts = append(alts, fmt.Sprintf("make --warehouses at most %d to stay in memory", lo))
		}
	}
	if len(alts) == 0 {
		alts = append(alts, "give the process more memory")
	}
	return strings.Join(alts, "; or ")
}

// largestPool is the largest pool (whole pages, at least minPool) with
// which c fits in limit.
func largestPool(c TPCCConfig, limit, minPool, ps int64) (int64, bool) {
	c.PoolSize = minPool
	if c.MemoryEstimate().Total > limit {
		return 0, false
	}
	lo, hi := minPool/ps, limit/ps
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		c.PoolSize = mid * ps
		if c.MemoryEstimate().Total <= limit {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	// Round down to a MiB, as a user would write it.
	pool := lo * ps
	if pool >= 2<<20 {
		pool = pool >> 20 << 20
	}
	return pool, true
}
