package sim

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/cache/store"
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
// heap after a collection (GODEBUG=gctrace=1) and the in-memory store's
// files at the end (the report's host.store_bytes) of
//
//	go build -o enginelab ./sim/cmd/enginelab
//	GODEBUG=gctrace=1 /usr/bin/time -v ./enginelab tpcc --warehouses W --org ORG --duration D --check=false --quiet --json
//
// with the command's defaults (the default pool, DefaultPoolSize, made
// resident from the start; 4 terminals; commits synced) on 2 cores and
// 24 GiB, Go 1.26, GOGC=100, on 2026-12-06; in memory unless --dir; D
// 1ms is the load alone. Other work shared the machine in some runs, so
// the transactions vary; the W=1 60 s row and the W=16 rows had commits
// not synced (--sync-commit=false), the most transactions. The estimate
// is MemoryEstimate's for the same job on 2 cores (measuredPeaks in
// memory_test.go holds the same rows, and a test checks the estimate
// covers each). The rows marked * were measured again that afternoon
// with the redo log the command now sizes with the data (DefaultLogSize:
// 128 MiB at W=1, 320 MiB at W=4, 704 MiB at W=10, 1,088 MiB at W=16);
// the others had the engine's 96 MiB log, 32 MiB less than a W=1 job's
// now, and the estimates are the current code's. Every row ended with a sharp
// checkpoint, which wrote the pages the cleaner left dirty into the
// store; an in-memory job now closes fast (engine.DB.CloseFast), which
// took W=16's 10 s peak (4 terminals) from 5.5 to 4.6 GiB, so the peaks
// in memory are upper bounds:
//
//	W   org          D     store   transactions  live heap  store files  peak RSS   estimate
//	1   clustered    1ms   memory             0      13 MB      188 MiB    544 MiB   1465 MiB
//	1   heap-rowptr  1ms   memory             0      11 MB      208 MiB    568 MiB   1465 MiB
//	1   heap-pk      1ms   memory             0      14 MB      175 MiB    562 MiB   1465 MiB
//	1   clustered    10s   memory       153,113      21 MB      409 MiB    951 MiB   1831 MiB *
//	1   heap-rowptr  10s   memory        63,659      23 MB      337 MiB    822 MiB   1831 MiB
//	1   heap-pk      10s   memory        34,050      24 MB      310 MiB    834 MiB   1831 MiB
//	1   clustered    30s   memory       418,856      23 MB      687 MiB   1209 MiB   2564 MiB
//	1   heap-rowptr  30s   memory       185,649      25 MB      441 MiB    976 MiB   2564 MiB
//	1   heap-pk      30s   memory        93,393      22 MB      362 MiB    873 MiB   2564 MiB
//	1   clustered    60s   memory       880,607      22 MB     1235 MiB   1835 MiB   3662 MiB *
//	4   clustered    10s   memory       123,116      29 MB      757 MiB   1950 MiB   2887 MiB *
//	4   heap-rowptr  10s   memory        67,388      31 MB      987 MiB   2107 MiB   2887 MiB *
//	4   heap-pk      10s   memory        56,604      29 MB      816 MiB   2073 MiB   2887 MiB *
//	4   clustered    60s   memory       773,609      31 MB     1717 MiB   2942 MiB   4718 MiB *
//	10  clustered    10s   memory       136,630      43 MB     1746 MiB   3923 MiB   4999 MiB *
//	10  heap-rowptr  10s   memory        54,121      42 MB     1683 MiB   4161 MiB   4999 MiB *
//	10  heap-pk      10s   memory        59,412      45 MB     1715 MiB   4203 MiB   4999 MiB *
//	16  clustered    10s   memory       147,128      56 MB     2196 MiB   5606 MiB   7111 MiB *
//	16  clustered    30s   memory       365,312      54 MB     2787 MiB   6182 MiB   7844 MiB *
//	1   clustered    30s   disk         126,153      36 MB            -    486 MiB    592 MiB
//	4   clustered    10s   disk          30,602      49 MB            -    894 MiB    988 MiB
//
// Simulated mode, the experiments at their defaults (W=1, 4 modeled
// cores; peak RSS of /usr/bin/time -v ./enginelab experiment NAME, the
// same day):
//
//	experiment      sides  pool     virtual time   peak RSS
//	delivery-limit  2      256 MiB  1 s + 5 s       819 MiB
//	io-bound        4      28 MiB   1 min + 5 min   646 MiB
//
// What a peak holds: the pool's frames (all of them, made resident), the
// store's files and the spare chunks it keeps for its next files (up to a
// quarter of the files), pebble's memtables and block cache, and a Go
// heap of a few tens of MB (the frames' headers, the lock table, undo
// and read views, buffers) with the collector's headroom over it. The
// pool's arena, the store's files and pebble's memtables are mappings
// outside Go's heap on Linux (the cache and store packages' docs), which
// the headroom does not double. Until 2026-12-06 the estimate kept
// figures measured when the arena and the files were on Go's heap,
// doubled by the headroom, and a
// growth bound of 60,000 transactions a core-minute from an engine a
// fifteenth as fast: it was far above short jobs' peaks and below long
// ones' (a ten-minute run at W=1 grows its store by about 11 GiB).
//
// With these figures and the default pool and log, each warehouse adds
// about 352 MiB to the estimate in memory (its 128 MiB of the pool's
// frames with their overhead, its 104 MiB of pages at 1.5 in the store
// and its 64 MiB of redo log) and 132 MiB on disk; the default W=1 job (30 s) is estimated at 2.5 GiB
// in memory and 592 MiB on disk. The run's growth is at most 732 MiB of
// pages a minute per core of this machine in real mode (up to one per
// terminal), and per modeled core and virtual minute 293 MiB in
// simulated mode when the pool holds the data, 7 MiB when it does not.
// The estimates are above the peaks measured by 11% to 194%.
const (
	// memLoadPerWarehouse and memLoadFixed are the loaded pages: about
	// 101 MiB a warehouse at W=10 (the loaders' interleaved inserts
	// leave STOCK's pages 82% full), 86 to 92 at W=1, rounded up; ITEM's
	// 100,000 rows (9 MiB) are loaded once, whatever W.
	memLoadPerWarehouse = 104 << 20
	memLoadFixed        = 9 << 20

	// memGrowthPerTx and memTxPerCoreMinute bound the pages a core adds
	// to the data in a minute of a real-mode run, their product: 732 MiB.
	// Measured on 2026-12-06 (W=1, four terminals, 60 s, commits not
	// synced), the clustered organization ran 460,000 transactions a
	// core-minute (920,593 on the development machine's 2 cores) and
	// added 1.1 KiB of pages each (ORDERS, ORDER_LINE, NEW_ORDER and
	// HISTORY grow; splits leave room in pages; 1.6 KiB was measured at
	// W=4 before), 494 MiB a core-minute; the heap organizations add up
	// to 1.6 KiB a transaction (heap-pk's new row versions) but run a
	// fifth as many. The bound leaves half as much again for faster
	// cores. (Until then the rate was 60,000, measured when the engine
	// ran a fifteenth as many, and a long in-memory run grew far past
	// its estimate.)
	memGrowthPerTx     = 1536
	memTxPerCoreMinute = 500_000
	// In simulated mode the transactions of a virtual minute depend on
	// the modeled hardware, which the estimate cannot know before the
	// run. Measured before 2026-12-06 (experiment delivery-limit and
	// io-bound, defaults):
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
	// store's bytes beside the redo log's segments (counted at the log's
	// capacity, engine.Options.LogSize): 1.5 per byte of pages (the
	// files' slack, the versions not yet compacted, and the chunks
	// store.MemFS keeps as spares for its next files, which hold what the
	// files held at their largest: with 1.25 the estimate of W=10
	// heap-rowptr for 10 s was 4,187 MiB against a peak of 4,066) and a
	// churn that does not follow the data (page versions waiting for
	// compaction): with a 96 MiB log, up to about 500 MiB of the store
	// followed neither the pages nor the log (W=4, 60 s, before the rows
	// marked * above); more transactions a second make more.
	memStorePerByte = 12
	memStoreChurn   = 672 << 20

	// memFixedHeap is the rest of the live heap: the runtime, the
	// loader's and the terminals' buffers, the lock table, the undo and
	// the read views (the largest live heap after a collection, in the
	// runs of the table above: 13 to 49 MB, the most on disk at W=4).
	// The store's budget (engine.Options.StoreBudget: pebble's memtables
	// and block cache, allocated outside Go's heap) is counted beside it,
	// without the collector's headroom.
	memFixedHeap = 96 << 20
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
	// written, and the redo log's segments, counted at its capacity): 0
	// with a database directory (Dir).
	Store int64 `json:"store_bytes"`
	// Tier is the in-process remote tier (ristretto, lru, slru): its
	// budget, no more than the data can fill. A memcached tier lives in
	// other processes and costs nothing here.
	Tier int64 `json:"tier_bytes"`
	// Fixed is what does not grow with the data: memFixedHeap and the
	// store's memtables and block cache (engine.Options.StoreBudget).
	Fixed int64 `json:"fixed_bytes"`
	// Garbage is the collector's headroom: at GOGC=100 (or $GOGC) Go
	// lets garbage grow as large as the live heap before it collects.
	// The live heap counts the frames' headers, an in-process tier and
	// memFixedHeap; on Linux the pool's arena and the in-memory store's
	// files are mappings outside it (elsewhere it counts them too, the
	// arena whole, allocated at once). A job allocates and drops memory
	// all along (rows, log records), so it reaches this.
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
		e.Store = e.Data*memStorePerByte/8 + o.LogSize + memStoreChurn
	}
	if c.tierInProcess() {
		e.Tier = min(c.remoteSize(), e.Data)
	}
	e.Fixed = memFixedHeap + o.StoreBudget()
	// Go's heap holds the frames' headers, an in-process tier and the
	// fixed part; the pool's arena, the in-memory store's files and
	// pebble's memtables are mappings outside it on Linux, which the
	// collector's headroom does not double (elsewhere the arena and the
	// files are on the heap: cache.ArenaOnGoHeap, store.FilesOnGoHeap).
	live := headers + e.Tier + memFixedHeap
	if cache.ArenaOnGoHeap {
		live += capacity
	}
	if store.FilesOnGoHeap {
		live += e.Store
	}
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
	if e.Store > 0 {
		// The in-memory store holds the redo log whole: name it, since
		// its default grows with the warehouses and --log-size shrinks it.
		parts[0] += fmt.Sprintf(" with a redo log of %s", report.FormatBytes(c.EngineOptions().LogSize))
	}
	fmt.Fprintf(&b, "; %s), more than the %s this process may use (%s)", strings.Join(parts, ", "), report.FormatBytes(limit), source)
	fmt.Fprintf(&b, ". To fit, %s; or run anyway with --ignore-memory-limit", c.memoryAdvice(limit))
	return fmt.Errorf("sim: %w: %w: %s", ErrInvalidConfig, ErrInsufficientMemory, b.String())
}

// memoryAdvice says which flags to change so that c fits in limit: --dir
// (an on-disk store, with the largest --pool that fits there if need be;
// not for an InMemoryOnly job), the largest --pool that fits in memory,
// the engine's smaller --log-size if that alone fits, the most
// --warehouses that fit with the other settings as they are.
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
		// The log is in memory whole, and its default grows with the
		// warehouses: the engine's own default may be what tips it.
		if d := *c; c.EngineOptions().LogSize > redo.DefaultCapacity {
			d.LogSize = redo.DefaultCapacity
			if d.MemoryEstimate().Total <= limit {
				alts = append(alts, fmt.Sprintf("make --log-size %s, the engine's default (the page cleaner then writes more pages to free log space)",
					report.FormatBytes(redo.DefaultCapacity)))
			}
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
