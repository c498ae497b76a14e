package sim

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/sim/sched"
	"github.com/enginelab/enginelab/tpcc"
)

// Report is what a TPC-C job did and measured. Its JSON form is documented
// in the README ("The report"); WriteTable prints the same figures.
type Report struct {
	// Config holds every setting of the job by its flag name, and Flags
	// the command line's own form of them when the job came from the
	// command.
	Config  ConfigReport      `json:"config"`
	Flags   map[string]string `json:"flags,omitempty"`
	Version string            `json:"version"` // the module's version (VCS revision when built from a clone)
	Host    HostReport        `json:"host"`

	Database   DatabaseReport    `json:"database"`
	Load       *LoadReport       `json:"load,omitempty"`
	Run        *RunReport        `json:"run,omitempty"`
	Check      *tpcc.CheckReport `json:"check,omitempty"`
	Space      []SpaceReport     `json:"space,omitempty"`
	Log        *LogReport        `json:"log,omitempty"`
	Tier       *TierReport       `json:"tier,omitempty"`
	Background *BackgroundReport `json:"background,omitempty"`
	// Sim is simulated mode's own section: the modeled hardware and how
	// busy it was.
	Sim    *SimReport `json:"sim,omitempty"`
	Errors []string   `json:"errors,omitempty"`
	// Notes say what a reader must know to compare the figures with other
	// engines' (the isolation the locks give, for one).
	Notes []string `json:"notes"`
}

// isolationNote is in every report (the README's "Isolation").
const isolationNote = "isolation: strict two-phase locking on rows, reads take shared locks (InnoDB's SERIALIZABLE) and there is no MVCC, so lock waits are higher than a multi-version engine would show"

// rowPointerNote goes with reports on the row-pointer heap.
const rowPointerNote = "heap-rowptr: an index-only scan is PostgreSQL's best case (every page all-visible, no visibility-map misses)"

// ConfigReport is TPCCConfig in report form.
type ConfigReport struct {
	Mode                   string  `json:"mode"` // "real" or "sim"
	Phases                 string  `json:"phases"`
	Warehouses             int     `json:"warehouses"`
	Scale                  string  `json:"scale"` // "full", "small" (tpcc.Scale's String)
	Terminals              int     `json:"terminals"`
	DurationSeconds        float64 `json:"duration_s"`
	WarmupSeconds          float64 `json:"warmup_s"`
	Profile                string  `json:"profile"`
	StockLevelNoLowerBound bool    `json:"stocklevel_no_lower_bound"`
	KeyingAndThink         bool    `json:"keying_and_think"`
	Seed                   uint64  `json:"seed"`
	Org                    string  `json:"org"`
	CountRewrite           bool    `json:"count_rewrite"`
	PageSize               int     `json:"page_size"`
	PoolBytes              int64   `json:"pool_bytes"`
	PoolPolicy             string  `json:"pool_policy"`
	ReadAhead              bool    `json:"read_ahead"`
	Remote                 string  `json:"remote"`
	RemoteMode             string  `json:"remote_mode"`
	HeapUpdate             string  `json:"heap_update"`
	SyncCommit             bool    `json:"sync_commit"`
	Dir                    string  `json:"dir"` // "" in memory
}

// HostReport says where the job ran and how long it took there: every
// wall-clock figure of a simulated job is here, so that everything outside
// this section is identical for identical inputs.
type HostReport struct {
	GoVersion string `json:"go_version"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPUs      int    `json:"cpus"`
	// LoadSeconds and LoadRowsPerSecond time the load on this machine.
	LoadSeconds       float64 `json:"load_s,omitempty"`
	LoadRowsPerSecond float64 `json:"load_rows_per_s,omitempty"`
	// RunSeconds is the run's wall time here (warm-up included), and
	// TxPerSecond the transactions it completed per wall second.
	RunSeconds  float64 `json:"run_s,omitempty"`
	TxPerSecond float64 `json:"tx_per_s,omitempty"`
	// VirtualPerWall is simulated seconds per wall second (simulated
	// mode).
	VirtualPerWall float64 `json:"virtual_per_wall,omitempty"`
}

// DatabaseReport describes the database the job ran on (as loaded, which
// for a run on a stored database may differ from the flags).
type DatabaseReport struct {
	Warehouses int    `json:"warehouses"`
	Scale      string `json:"scale"` // as stored with the load: "full", "small"
	Org        string `json:"org"`
	LoadSeed   uint64 `json:"load_seed"`
	PageSize   int    `json:"page_size"`
	PoolBytes  int64  `json:"pool_bytes"`
}

// LoadReport is the load's figures.
type LoadReport struct {
	Rows           map[string]int64 `json:"rows"` // by table
	TotalRows      int64            `json:"total_rows"`
	ElapsedSeconds float64          `json:"elapsed_s,omitempty"` // real mode (simulated: host.load_s)
	RowsPerSecond  float64          `json:"rows_per_s,omitempty"`
	LogBytes       int64            `json:"log_bytes"`
	// Space is the database's space as the load left it, before any run
	// (TPCCConfig.LoadSpace); the report's own space section is the
	// job's end.
	Space []SpaceReport `json:"space,omitempty"`
}

// RunReport is the run's figures.
type RunReport struct {
	Terminals       int     `json:"terminals"`
	MeasuredSeconds float64 `json:"measured_s"` // the measured interval
	WarmupSeconds   float64 `json:"warmup_s"`
	ElapsedSeconds  float64 `json:"elapsed_s"` // time of warm-up and measurement: wall time, or virtual in simulated mode
	// TpmC is New-Order transactions per minute of the measured interval
	// (rolled-back ones count); TxPerMinute counts every type.
	TpmC        float64 `json:"tpmc"`
	TxPerMinute float64 `json:"tx_per_min"`
	// Efficiency is TpmC / (12.86 × W) in percent [5.4.3], only with
	// keying and think times (without them the figure means nothing).
	Efficiency *float64     `json:"efficiency_pct,omitempty"`
	Types      []TypeReport `json:"types"`
	Errors     []string     `json:"errors,omitempty"`

	total engine.Meter // every type's meters summed
}

// TypeReport is one transaction type's figures.
type TypeReport struct {
	Type      string  `json:"type"`
	Count     int64   `json:"count"`
	MixPct    float64 `json:"mix_pct"` // share of all completed transactions
	Retries   int64   `json:"retries"`
	Rollbacks int64   `json:"rollbacks"`
	Skipped   int64   `json:"skipped,omitempty"` // Delivery: districts without a new order
	// Latency in milliseconds, from an HDR histogram of microseconds
	// (three significant digits).
	LatencyMs Percentiles `json:"latency_ms"`
	// PerTx averages the meters over the completed transactions (retried
	// attempts included in their cost).
	PerTx MeterAverages `json:"per_tx"`
	// Time splits the mean response time by where it went (simulated
	// mode only).
	Time *TimeReport `json:"time,omitempty"`

	sum engine.Meter // the type's meters summed, for explanations
}

// TimeReport is a transaction type's mean response time and its shares,
// in percent, as "OLTP Through the Looking Glass" splits it: engine CPU,
// the buffer pool (its CPU, and waits for pages other terminals or
// read-ahead were still reading), the remote tier (round trips and
// transfers), the store device, the log (syncs, and waits for a group
// sync), lock waits, and queueing for a busy core or device.
type TimeReport struct {
	MeanMs     float64 `json:"mean_ms"`
	CPU        float64 `json:"cpu_pct"`
	BufferPool float64 `json:"buffer_pool_pct"`
	RemoteTier float64 `json:"remote_tier_pct"`
	Store      float64 `json:"store_pct"`
	Log        float64 `json:"log_pct"`
	LockWait   float64 `json:"lock_wait_pct"`
	Queueing   float64 `json:"queueing_pct"`
}

// SimReport is a simulated job's hardware and how busy its shared
// resources were over the run (warm-up included).
type SimReport struct {
	Hardware hw.Machine `json:"hardware"`
	// VirtualSeconds is the run's virtual time, warm-up included.
	VirtualSeconds float64 `json:"virtual_s"`
	// Busy percentages: the cores' (summed over the cores), and each
	// device's and the network's.
	CoresBusyPct   float64 `json:"cores_busy_pct"`
	StoreBusyPct   float64 `json:"store_busy_pct"`
	LogBusyPct     float64 `json:"log_busy_pct"`
	NetworkBusyPct float64 `json:"network_busy_pct"`
	// Stalls counts waits the scheduler had to break (zero in a sound
	// run; see sched.Scheduler).
	Stalls int64 `json:"stalls,omitempty"`
	// BackgroundWritesPending is how many background writes (checkpoint
	// flushes) the store device had not yet served at the end.
	BackgroundWritesPending int64 `json:"background_writes_pending,omitempty"`
	// CheckpointWaits counts checkpoints that began while the last one's
	// writes were still queued, so that a transaction waited for them.
	CheckpointWaits int64 `json:"checkpoint_waits,omitempty"`
}

// fill adds the run's figures from the scheduler.
func (r *SimReport) fill(s *sched.Scheduler, elapsed time.Duration, run *RunReport) {
	r.VirtualSeconds = elapsed.Seconds()
	cores, store, log, net := s.Busy()
	pct := func(busy int64, n int) float64 {
		if elapsed <= 0 {
			return 0
		}
		return 100 * float64(busy) / float64(elapsed) / float64(n)
	}
	r.CoresBusyPct = pct(cores, r.Hardware.Cores)
	r.StoreBusyPct, r.LogBusyPct, r.NetworkBusyPct = pct(store, 1), pct(log, 1), pct(net, 1)
	r.Stalls = s.Stalls()
	r.BackgroundWritesPending = s.PendingBackgroundWrites()
	r.CheckpointWaits = s.CheckpointWaits()
	types := s.Types()
	for i := range run.Types {
		tt := &types[i]
		if tt.Count == 0 || tt.Response == 0 {
			continue
		}
		share := func(k int) float64 { return 100 * float64(tt.Spent[k]) / float64(tt.Response) }
		run.Types[i].Time = &TimeReport{MeanMs: float64(tt.Response) / float64(tt.Count) / 1e6,
			CPU: share(sched.TimeCPU), BufferPool: share(sched.TimePool), RemoteTier: share(sched.TimeTier), Store: share(sched.TimeStore),
			Log: share(sched.TimeLog), LockWait: share(sched.TimeLock), Queueing: share(sched.TimeQueue)}
	}
}

// Percentiles of a latency distribution.
type Percentiles struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// MeterAverages are per-transaction averages of the engine's meters.
type MeterAverages struct {
	NodeVisits    float64 `json:"node_visits"`   // B+tree nodes visited, every level and index
	RowFetches    float64 `json:"row_fetches"`   // rows read through a pointer from an index entry
	HeapFetches   float64 `json:"heap_fetches"`  // rows fetched from a heap by row pointer
	RowsExamined  float64 `json:"rows_examined"` // index entries or rows looked at
	RowsReturned  float64 `json:"rows_returned"` // rows handed to the transaction
	EntriesWrite  float64 `json:"index_entries_written"`
	PoolHits      float64 `json:"pool_hits"`
	PoolMisses    float64 `json:"pool_misses"`
	LogBytes      float64 `json:"log_bytes"`
	LockRequests  float64 `json:"lock_requests"`
	LockWaits     float64 `json:"lock_waits"`
	PageRequests  float64 `json:"page_requests"`
	StoreReads    float64 `json:"store_reads"`
	StoreWrites   float64 `json:"store_writes"`
	TierGets      float64 `json:"tier_gets"`
	TierHits      float64 `json:"tier_hits"`
	HeapRowsScans float64 `json:"heap_rows_scanned"`
}

// TierReport is the remote tier's activity during the run: what the
// transactions asked of it (from their meters) and the backend's own
// counters.
type TierReport struct {
	Backend   string `json:"backend"`
	Mode      string `json:"mode"`
	SizeBytes int64  `json:"size_bytes"` // the in-process budget (memcached: the servers' own)
	// HitRate is Hits / Gets of the run's transactions: the share of pool
	// misses the tier answered with a usable page.
	HitRate      float64         `json:"hit_rate"`
	Gets         int64           `json:"gets"`
	Hits         int64           `json:"hits"`
	Misses       int64           `json:"misses"`
	Stale        int64           `json:"stale"`
	Corrupt      int64           `json:"corrupt"`
	Errors       int64           `json:"errors"`
	Puts         int64           `json:"puts"`
	Drops        int64           `json:"drops"`
	Deletes      int64           `json:"deletes"`
	BytesIn      int64           `json:"bytes_in"`
	BytesOut     int64           `json:"bytes_out"`
	BackendStats cache.TierStats `json:"backend_stats"`
}

func newTierReport(c *TPCCConfig, size int64, t cache.Tier, run *RunReport) *TierReport {
	mode := string(c.RemoteMode)
	if mode == "" {
		mode = string(cache.TierExclusive)
	}
	r := &TierReport{Backend: t.Name(), Mode: mode, SizeBytes: size, BackendStats: t.Stats()}
	if run != nil {
		m := &run.total
		r.Gets, r.Hits, r.Misses, r.Stale, r.Corrupt, r.Errors = m.TierGets, m.TierHits, m.TierMisses, m.TierStale, m.TierCorrupt, m.TierErrors
		r.Puts, r.Drops, r.Deletes, r.BytesIn, r.BytesOut = m.TierPuts, m.TierDrops, m.TierDeletes, m.TierBytesIn, m.TierBytesOut
		if r.Gets > 0 {
			r.HitRate = float64(r.Hits) / float64(r.Gets)
		}
	}
	return r
}

// BackgroundReport is the work no transaction waited for, since the
// database was opened (the pool's background meter).
type BackgroundReport struct {
	ReadAheads      int64 `json:"read_aheads"`       // pages read ahead
	ReadAheadUnused int64 `json:"read_ahead_unused"` // of those, evicted before any use
	StoreReads      int64 `json:"store_reads"`
	StoreWrites     int64 `json:"store_writes"`
	TierPuts        int64 `json:"tier_puts"`
}

// LogReport is the redo log's activity since the database was opened.
type LogReport struct {
	Records       int64 `json:"records"`
	Bytes         int64 `json:"bytes"`
	Syncs         int64 `json:"syncs"`
	SyncedCommits int64 `json:"synced_commits"` // commits that waited for durability
	Checkpoints   int64 `json:"checkpoints"`
}

// SpaceReport is one index or heap's space.
type SpaceReport struct {
	Table   string  `json:"table"`
	Index   string  `json:"index"` // PRIMARY, a secondary's name, or heap
	Pages   int     `json:"pages"`
	Height  int     `json:"height"` // 0 for a heap
	Entries int64   `json:"entries"`
	Fill    float64 `json:"fill"`
}

// SpecTpmCPerWarehouse is the most tpmC a warehouse can give with the
// specification's keying and think times [5.4.3]: the base of efficiency.
const SpecTpmCPerWarehouse = 12.86

func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+modified"
			}
		}
	}
	if rev != "" {
		v += " " + rev[:min(12, len(rev))] + modified
	}
	return v
}

func newReport(c *TPCCConfig) *Report {
	var phases []string
	for _, p := range []struct {
		on   bool
		name string
	}{{c.Phases.Load, "load"}, {c.Phases.Run, "run"}, {c.Phases.Check, "check"}} {
		if p.on {
			phases = append(phases, p.name)
		}
	}
	o := c.EngineOptions()
	heapUpdate := "in-place"
	if c.HeapUpdate == engine.NewVersion {
		heapUpdate = "new-version"
	}
	policy := string(c.PoolPolicy)
	if policy == "" {
		policy = "midpoint"
	}
	pageSize := c.PageSize
	if pageSize == 0 {
		pageSize = cache.DefaultPageSize
	}
	mode := c.Mode
	if mode == "" {
		mode = ModeReal
	}
	return &Report{
		Config: ConfigReport{Mode: string(mode), Phases: strings.Join(phases, "+"), Warehouses: c.Warehouses,
			Scale: c.Scale.String(), Terminals: c.Terminals, DurationSeconds: c.Duration.Seconds(), WarmupSeconds: c.Warmup.Seconds(),
			Profile: c.Profile.String(), StockLevelNoLowerBound: c.StockLevelNoLowerBound,
			KeyingAndThink: c.KeyingAndThink, Seed: c.Seed, Org: orgName(c.Org), CountRewrite: c.CountRewrite,
			PageSize: pageSize, PoolBytes: o.PoolSize, PoolPolicy: policy, HeapUpdate: heapUpdate,
			ReadAhead: c.ReadAhead, Remote: c.Remote.String(), RemoteMode: remoteMode(c.RemoteMode),
			SyncCommit: c.SyncCommit, Dir: c.Dir},
		Flags:   c.Flags,
		Version: version(),
		Host:    HostReport{GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU()},
		Notes:   []string{isolationNote},
	}
}

// scaleNote is " at small scale" (or another scale's name) for a
// header line; nothing at full scale, the default, or for a report
// without a scale.
func scaleNote(scale string) string {
	if scale == "" || scale == tpcc.FullScale.String() {
		return ""
	}
	return " at " + scale + " scale"
}

func orgName(o engine.Org) string {
	if o == engine.OrgDefault {
		return engine.Clustered.String()
	}
	return o.String()
}

func newLoadReport(s *tpcc.LoadStats) *LoadReport {
	return &LoadReport{Rows: s.Rows, TotalRows: s.TotalRows, ElapsedSeconds: s.Elapsed.Seconds(),
		RowsPerSecond: s.RowsPerSecond, LogBytes: s.Meter.LogBytes}
}

func newRunReport(c *TPCCConfig, s *tpcc.RunStats, elapsed time.Duration) *RunReport {
	res := s.Results
	total := res.Total()
	r := &RunReport{Terminals: c.Terminals, MeasuredSeconds: s.Measured.Seconds(), WarmupSeconds: c.Warmup.Seconds(),
		ElapsedSeconds: elapsed.Seconds(), TpmC: s.TpmC(), Errors: s.Errors}
	if s.Measured > 0 {
		r.TxPerMinute = float64(total) / s.Measured.Minutes()
	}
	if c.KeyingAndThink {
		e := 100 * r.TpmC / (SpecTpmCPerWarehouse * float64(c.Warehouses))
		r.Efficiency = &e
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for k := range tpcc.NumTxTypes {
		ts := &res.Types[k]
		r.total.Add(&ts.Meter)
		t := TypeReport{Type: tpcc.TxType(k).String(), Count: ts.Count, Retries: ts.Retries,
			Rollbacks: ts.Rollbacks, Skipped: ts.Skipped, sum: ts.Meter.Clone()}
		if total > 0 {
			t.MixPct = 100 * float64(ts.Count) / float64(total)
		}
		if ts.Count > 0 {
			t.LatencyMs = Percentiles{P50: ms(ts.Percentile(50)), P90: ms(ts.Percentile(90)),
				P95: ms(ts.Percentile(95)), P99: ms(ts.Percentile(99)),
				Max: float64(ts.Latency.Max()) / 1000}
			n := float64(ts.Count)
			m := &ts.Meter
			t.PerTx = MeterAverages{
				NodeVisits: float64(m.NodeVisitsTotal()) / n, RowFetches: float64(m.RowFetches) / n,
				HeapFetches: float64(m.HeapFetches) / n, RowsExamined: float64(m.RowsExamined) / n,
				RowsReturned: float64(m.RowsReturned) / n, EntriesWrite: float64(m.IndexEntriesWritten) / n,
				PoolHits: float64(m.PoolHits) / n, PoolMisses: float64(m.PoolMisses) / n,
				LogBytes: float64(m.LogBytes) / n, LockRequests: float64(m.LockRequests) / n,
				LockWaits: float64(m.LockWaits) / n, PageRequests: float64(m.PageRequestsTotal()) / n,
				StoreReads: float64(m.StoreReads) / n, StoreWrites: float64(m.StoreWrites) / n,
				HeapRowsScans: float64(m.HeapRowsScanned) / n,
				TierGets:      float64(m.TierGets) / n, TierHits: float64(m.TierHits) / n,
			}
		}
		r.Types = append(r.Types, t)
	}
	return r
}

func newSpaceReport(s []engine.SpaceStats) []SpaceReport {
	out := make([]SpaceReport, 0, len(s))
	for _, x := range s {
		out = append(out, SpaceReport{Table: x.Table, Index: x.Index, Pages: x.Pages, Height: x.Height,
			Entries: x.Entries, Fill: x.Fill})
	}
	return out
}

// Passed says the job ran without errors and its consistency check (if
// any) passed.
func (r *Report) Passed() bool {
	if len(r.Errors) > 0 || (r.Run != nil && len(r.Run.Errors) > 0) {
		return false
	}
	return r.Check == nil || r.Check.Passed()
}

// TotalPages sums the pages of every index and heap.
func (r *Report) TotalPages() int {
	n := 0
	for _, s := range r.Space {
		n += s.Pages
	}
	return n
}

// WriteTable prints the report as aligned tables.
func (r *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	c := &r.Config
	fmt.Fprintf(&b, "enginelab tpcc (%s): %d warehouse%s%s, %s, org %s, profile %s, seed %d\n",
		c.Phases, r.Database.Warehouses, plural(r.Database.Warehouses), scaleNote(r.Database.Scale), c.Mode, r.Database.Org, c.Profile, c.Seed)
	fmt.Fprintf(&b, "version %s, %s %s/%s, %d CPUs\n", r.Version, r.Host.GoVersion, r.Host.OS, r.Host.Arch, r.Host.CPUs)
	if len(r.Flags) > 0 {
		names := make([]string, 0, len(r.Flags))
		for k := range r.Flags {
			names = append(names, k)
		}
		slices.Sort(names)
		var parts []string
		for _, k := range names {
			parts = append(parts, "--"+k+"="+r.Flags[k])
		}
		fmt.Fprintf(&b, "flags: %s\n", strings.Join(parts, " "))
	}
	fmt.Fprintf(&b, "engine: page size %d, pool %s (%s), heap update %s, count rewrite %v, sync commit %v, %s\n",
		r.Database.PageSize, FormatBytes(r.Database.PoolBytes), c.PoolPolicy, c.HeapUpdate, c.CountRewrite, c.SyncCommit,
		storage(c.Dir))

	if sr := r.Sim; sr != nil {
		m := &sr.Hardware
		fmt.Fprintf(&b, "simulated hardware: %d cores (cpu profile %s), store %s, log %s, network %s\n",
			m.Cores, m.CPUName, m.StoreName, m.LogName, m.NetworkName)
	}
	if l := r.Load; l != nil {
		secs, rate := l.ElapsedSeconds, l.RowsPerSecond
		if r.Sim != nil {
			secs, rate = r.Host.LoadSeconds, r.Host.LoadRowsPerSecond
		}
		fmt.Fprintf(&b, "\nLOAD: %d rows in %.2f s, %.0f rows/s, %s of redo\n", l.TotalRows, secs, rate,
			FormatBytes(l.LogBytes))
	}
	if run := r.Run; run != nil {
		clock := ""
		if r.Sim != nil {
			clock = fmt.Sprintf(" (virtual time; simulated in %.1f s here, %.2f virtual s per wall s)", r.Host.RunSeconds, r.Host.VirtualPerWall)
		}
		fmt.Fprintf(&b, "\nRUN: %d terminals, %.0f s measured after %.0f s of warm-up%s\n", run.Terminals, run.MeasuredSeconds, run.WarmupSeconds, clock)
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "type\tcount\tmix %\tretries\trollbacks\tp50 ms\tp90 ms\tp95 ms\tp99 ms\tmax ms\t")
		for _, t := range run.Types {
			fmt.Fprintf(tw, "%s\t%d\t%.1f\t%d\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t\n", t.Type, t.Count, t.MixPct, t.Retries, t.Rollbacks,
				t.LatencyMs.P50, t.LatencyMs.P90, t.LatencyMs.P95, t.LatencyMs.P99, t.LatencyMs.Max)
		}
		_ = tw.Flush()
		fmt.Fprintf(&b, "\nengine cost per transaction (averages of the meters)\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "type\tnode visits\trow fetches\theap fetches\trows examined\tpool hits\tpool misses\tlog bytes\tlock waits\t")
		for _, t := range run.Types {
			p := &t.PerTx
			fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.2f\t%.0f\t%.3f\t\n", t.Type, p.NodeVisits, p.RowFetches, p.HeapFetches,
				p.RowsExamined, p.PoolHits, p.PoolMisses, p.LogBytes, p.LockWaits)
		}
		_ = tw.Flush()
		if sr := r.Sim; sr != nil {
			fmt.Fprintf(&b, "\nwhere the response time went (percent of the mean, modeled)\n")
			tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "type\tmean ms\tcpu\tbuffer pool\tremote tier\tstore\tlog\tlock wait\tqueueing\t")
			for _, t := range run.Types {
				if x := t.Time; x != nil {
					fmt.Fprintf(tw, "%s\t%.3f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t\n", t.Type, x.MeanMs, x.CPU, x.BufferPool,
						x.RemoteTier, x.Store, x.Log, x.LockWait, x.Queueing)
				}
			}
			_ = tw.Flush()
			fmt.Fprintf(&b, "busy: cores %.1f%%, store %.1f%%, log %.1f%%, network %.1f%% of %.1f virtual s; %d checkpoints waited for the last one's writes, %d background writes pending at the end\n",
				sr.CoresBusyPct, sr.StoreBusyPct, sr.LogBusyPct, sr.NetworkBusyPct, sr.VirtualSeconds, sr.CheckpointWaits, sr.BackgroundWritesPending)
			if sr.Stalls > 0 {
				fmt.Fprintf(&b, "warning: the scheduler broke %d stalled waits\n", sr.Stalls)
			}
		}
		fmt.Fprintf(&b, "\ntpmC %.0f   transactions/min %.0f", run.TpmC, run.TxPerMinute)
		if run.Efficiency != nil {
			fmt.Fprintf(&b, "   efficiency %.1f%% of %.2f tpmC per warehouse", *run.Efficiency, SpecTpmCPerWarehouse)
		}
		b.WriteString("\n")
		for _, e := range run.Errors {
			fmt.Fprintf(&b, "error: %s\n", e)
		}
	}
	if r.Check != nil {
		fmt.Fprintf(&b, "\nCONSISTENCY (clause 3.3.2)\n%s", r.Check.String())
	}
	if len(r.Space) > 0 {
		fmt.Fprintf(&b, "\nSPACE: %d pages of %d bytes\n", r.TotalPages(), r.Database.PageSize)
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "table\tindex\tpages\theight\tentries\tfill")
		for _, s := range r.Space {
			h := "-"
			if s.Height > 0 {
				h = fmt.Sprint(s.Height)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%.1f%%\n", s.Table, s.Index, s.Pages, h, s.Entries, 100*s.Fill)
		}
		_ = tw.Flush()
	}
	if t := r.Tier; t != nil {
		fmt.Fprintf(&b, "\nREMOTE TIER: %s (%s), %s: hit rate %.1f%% (%d hits of %d gets; %d stale, %d corrupt, %d errors), %d puts (%d dropped), %d deletes, %s in, %s out\n",
			t.Backend, t.Mode, FormatBytes(t.SizeBytes), 100*t.HitRate, t.Hits, t.Gets, t.Stale, t.Corrupt, t.Errors,
			t.Puts, t.Drops, t.Deletes, FormatBytes(t.BytesIn), FormatBytes(t.BytesOut))
	}
	if bg := r.Background; bg != nil && (bg.ReadAheads > 0 || bg.StoreWrites > 0) {
		fmt.Fprintf(&b, "\nBACKGROUND: %d pages read ahead (%d evicted unused), %d store reads, %d store writes, %d tier puts\n",
			bg.ReadAheads, bg.ReadAheadUnused, bg.StoreReads, bg.StoreWrites, bg.TierPuts)
	}
	if l := r.Log; l != nil {
		fmt.Fprintf(&b, "\nREDO LOG: %d records, %s, %d syncs for %d synced commits, %d checkpoints\n",
			l.Records, FormatBytes(l.Bytes), l.Syncs, l.SyncedCommits, l.Checkpoints)
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "note: %s\n", n)
		}
	}
	for _, e := range r.Errors {
		fmt.Fprintf(&b, "error: %s\n", e)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func storage(dir string) string {
	if dir == "" {
		return "in memory"
	}
	return "in " + dir
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func remoteMode(m cache.TierMode) string {
	if m == "" {
		return string(cache.TierExclusive)
	}
	return string(m)
}
