package sim

import (
	"math"
	"runtime/debug"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/tier"
	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim/report"
	"github.com/enginelab/enginelab/sim/sched"
	"github.com/enginelab/enginelab/tpcc"
)

// Building a job's report (package report) from what its phases measured.

// fillSim adds to r the simulated run's figures from its scheduler: how
// busy each resource was over elapsed, and each type's time shares (in
// run's types).
func fillSim(r *report.Sim, s *sched.Scheduler, elapsed time.Duration, run *report.Run) {
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
	u := s.StoreUse()
	r.StoreUse = &report.StoreUse{Reads: pct(u[sched.StoreReads], 1), Writes: pct(u[sched.StoreWrites], 1),
		ReadAhead: pct(u[sched.StoreReadAhead], 1), Background: pct(u[sched.StoreBackground], 1),
		Purge: pct(u[sched.StorePurge], 1), Vacuum: pct(u[sched.StoreVacuum], 1)}
	r.Stalls = s.Stalls()
	r.BackgroundWritesPending = s.PendingBackgroundWrites()
	r.CleanerSkips = s.CleanerSkips()
	r.PostedLRUBatches, r.PostWaits = s.PostedLRUBatches(), s.PostWaits()
	r.CheckpointWaits = s.CheckpointWaits()
	types := s.Types()
	for i := range run.Types {
		tt := &types[i]
		if tt.Count == 0 || tt.Response == 0 {
			continue
		}
		share := func(k int) float64 { return 100 * float64(tt.Spent[k]) / float64(tt.Response) }
		run.Types[i].Time = &report.TimeShares{MeanMs: float64(tt.Response) / float64(tt.Count) / 1e6,
			CPU: share(sched.TimeCPU), BufferPool: share(sched.TimePool), RemoteTier: share(sched.TimeTier), Store: share(sched.TimeStore),
			Log: share(sched.TimeLog), LockWait: share(sched.TimeLock), Queueing: share(sched.TimeQueue)}
	}
}

// newTierReport is the tier section: the backend t of size bytes, what
// the run's transactions asked of it (their meters; none without a run),
// and its own counters.
func newTierReport(c *TPCCConfig, size int64, t tier.Tier, run *report.Run) *report.Tier {
	r := &report.Tier{Backend: t.Name(), Mode: remoteMode(c), SizeBytes: size, BackendStats: t.Stats()}
	if run != nil {
		m := &run.Total
		r.Gets, r.Hits, r.Misses, r.Stale, r.Corrupt, r.Errors = m.TierGets, m.TierHits, m.TierMisses, m.TierStale, m.TierCorrupt, m.TierErrors
		r.Puts, r.Drops, r.Deletes, r.BytesIn, r.BytesOut = m.TierPuts, m.TierDrops, m.TierDeletes, m.TierBytesIn, m.TierBytesOut
		if r.Gets > 0 {
			r.HitRate = float64(r.Hits) / float64(r.Gets)
		}
	}
	return r
}

// version is the module's version, with the VCS revision when built from
// a clone.
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

// newReport is c's report before any phase: its settings, the host, the
// notes every report carries.
func newReport(c *TPCCConfig) *report.Report {
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
	so := o.StoreOptions()
	heapUpdate := "in-place"
	if c.HeapUpdate == engine.NewVersion {
		heapUpdate = "new-version"
	}
	policy := string(c.PoolPolicy)
	if policy == "" {
		policy = "midpoint"
	}
	ioCapacity, logSize := c.IOCapacity, o.LogSize // DefaultLogSize applied
	if ioCapacity == 0 {
		ioCapacity = 200 // cache.Options' default
	}
	pageSize := c.PageSize
	if pageSize == 0 {
		pageSize = page.DefaultSize
	}
	mode := c.Mode
	if mode == "" {
		mode = ModeReal
	}
	return &report.Report{
		Config: report.Config{Mode: string(mode), Phases: strings.Join(phases, "+"), Warehouses: c.Warehouses,
			Scale: c.Scale.String(), Terminals: c.Terminals, DurationSeconds: c.Duration.Seconds(), WarmupSeconds: c.Warmup.Seconds(),
			Profile: c.Profile.String(), StockLevelNoLowerBound: c.StockLevelNoLowerBound, DeliveryLimit1: c.DeliveryLimit1, Client: c.clientName(),
			KeyingAndThink: c.KeyingAndThink, Seed: c.Seed, Org: orgName(c.Org), CountRewrite: c.CountRewrite,
			PageSize: pageSize, PoolBytes: o.PoolSize, PoolPolicy: policy, PoolPopulate: c.PoolPopulate,
			MemTableBytes: so.MemTableSize, BlockCacheBytes: so.BlockCacheSize, HeapUpdate: heapUpdate,
			ReadAhead: c.ReadAhead, TornPages: c.TornPages.String(),
			IOCapacity: ioCapacity, MaxDirtyPagesPctLWM: c.MaxDirtyPagesPctLWM, LogBytes: logSize, Remote: c.Remote.String(), RemoteMode: remoteMode(c),
			SyncCommit: c.SyncCommit, Dir: c.Dir, Isolation: c.IsolationLevel().String(), EarlyLockRelease: c.LockRelease() == engine.EarlyRelease, HeapVersions: c.Versioned()},
		Flags:   c.Flags,
		Version: version(),
		Host:    report.LocalHost(),
		Notes:   []string{isolationNote(c)},
	}
}

// orgName is o as the report names it: the default is clustered.
func orgName(o engine.Org) string {
	if o == engine.OrgDefault {
		return engine.Clustered.String()
	}
	return o.String()
}

// newLoadReport is the load section.
func newLoadReport(s *tpcc.LoadReport) *report.Load {
	return &report.Load{Rows: s.Rows, TotalRows: s.TotalRows, ElapsedSeconds: s.Elapsed.Seconds(),
		RowsPerSecond: s.RowsPerSecond, LogBytes: s.Meter.LogBytes}
}

// newRunReport is the run section of c's job: s's figures, over elapsed
// (wall or virtual) time.
func newRunReport(c *TPCCConfig, s *tpcc.RunReport, elapsed time.Duration) *report.Run {
	res := s.Results
	total := res.Total()
	r := &report.Run{Terminals: c.Terminals, MeasuredSeconds: s.Measured.Seconds(), WarmupSeconds: c.Warmup.Seconds(),
		ElapsedSeconds: elapsed.Seconds(), TpmC: s.TpmC(), Errors: s.Errors}
	if s.Measured > 0 {
		r.TxPerMinute = float64(total) / s.Measured.Minutes()
	}
	if c.KeyingAndThink {
		e := 100 * r.TpmC / (report.SpecTpmCPerWarehouse * float64(c.Warehouses))
		r.Efficiency = &e
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for k := range tpcc.NumTxTypes {
		ts := &res.Types[k]
		r.Total.Add(&ts.Meter)
		t := report.Type{Type: tpcc.TxType(k).String(), Count: ts.Count, Retries: ts.Retries,
			SerializationFailures: ts.SerializationFailures, Rollbacks: ts.Rollbacks, Skipped: ts.Skipped, Sum: ts.Meter.Clone()}
		if total > 0 {
			t.MixPct = 100 * float64(ts.Count) / float64(total)
		}
		if ts.Count > 0 {
			t.LatencyMs = report.Percentiles{P50: ms(ts.Percentile(50)), P90: ms(ts.Percentile(90)),
				P95: ms(ts.Percentile(95)), P99: ms(ts.Percentile(99)),
				Max: float64(ts.Latency.Max()) / 1000}
			t.LatencyDist = newLatencyDist(ts.Latency)
			t.PerTx = meterAverages(&ts.Meter, float64(ts.Count))
		}
		t.Steps = newSteps(res, tpcc.TxType(k), ts.Count)
		r.Types = append(r.Types, t)
	}
	if total > 0 {
		all := meterAverages(&r.Total, float64(total))
		r.AllPerTx = &all
	}
	return r
}

// meterAverages is m's counts over n completed transactions.
func meterAverages(m *engine.Meter, n float64) report.MeterAverages {
	return report.MeterAverages{
		NodeVisits: float64(m.NodeVisitsTotal()) / n, RowFetches: float64(m.RowFetches) / n,
		HeapFetches: float64(m.HeapFetches) / n, RowsExamined: float64(m.RowsExamined) / n,
		RowsReturned: float64(m.RowsReturned) / n, EntriesWrite: float64(m.IndexEntriesWritten) / n,
		PoolHits: float64(m.PoolHits) / n, PoolMisses: float64(m.PoolMisses) / n,
		LogBytes: float64(m.LogBytes) / n, LockRequests: float64(m.LockRequests) / n,
		LockWaits: float64(m.LockWaits) / n, PageRequests: float64(m.PageRequestsTotal()) / n,
		StoreReads: float64(m.StoreReads) / n, StoreWrites: float64(m.StoreWrites) / n,
		StoreSyncs: float64(m.StoreSyncs) / n, DoublewriteWrites: float64(m.DoublewriteWrites) / n,
		DoublewriteBytes: float64(m.DoublewriteBytes) / n,
		HeapRowsScans:    float64(m.HeapRowsScanned) / n,
		TierGets:         float64(m.TierGets) / n, TierHits: float64(m.TierHits) / n,
		ReadViews: float64(m.ReadViews) / n, ConsistentReads: float64(m.ConsistentReads) / n,
		UndoVersionsRead: float64(m.UndoVersionsRead) / n, UndoRecords: float64(m.UndoRecords) / n,
		HOTUpdates: float64(m.HeapHOTUpdates) / n, NonHOTUpdates: float64(m.HeapNonHOTUpdates) / n,
		HeapVersionsRead: float64(m.HeapVersionsRead) / n, DurableReadWaits: float64(m.DurableReadWaits) / n,
		IndexOnlyHeapFetches: float64(m.IndexOnlyHeapFetches) / n, PagesPruned: float64(m.HeapPrunes) / n,
		EntriesKilled: float64(m.IndexEntriesKilled) / n,
		Sorts:         float64(m.Sorts) / n, SortsAvoided: float64(m.SortsAvoided) / n,
	}
}

// newSpaceReport is a space section.
func newSpaceReport(s []engine.SpaceStats) []report.Space {
	out := make([]report.Space, 0, len(s))
	for _, x := range s {
		out = append(out, report.Space{Table: x.Table, Index: x.Index, Pages: x.Pages, Height: x.Height,
			Entries: x.Entries, Fill: x.Fill})
	}
	return out
}

// remoteMode is the tier mode c runs with, as the pool resolves it
// (cache.Options.EffectiveTierMode).
func remoteMode(c *TPCCConfig) string {
	o := cache.Options{TierMode: c.RemoteMode, Waffle: c.Waffle}
	return string(o.EffectiveTierMode())
}

// newTimeline is the report's timeline: tpmC and transactions per minute
// in each interval of tl's series.
func newTimeline(tl *tpcc.Timeline) *report.Timeline {
	step := tl.Step()
	r := &report.Timeline{IntervalSeconds: step.Seconds()}
	for i, counts := range tl.Series() {
		var all int64
		for _, n := range counts {
			all += n
		}
		r.Points = append(r.Points, report.TimelinePoint{StartSeconds: (time.Duration(i) * step).Seconds(),
			TpmC: float64(counts[tpcc.NewOrderTx]) / step.Minutes(), TxPerMinute: float64(all) / step.Minutes()})
	}
	return r
}

// newSteps is type k's steps that ran, in the order the transaction runs
// them, over count completed transactions.
func newSteps(res *tpcc.Results, k tpcc.TxType, count int64) []report.Step {
	var out []report.Step
	for s := range tpcc.NumSteps {
		st := &res.Steps[s]
		if s.Tx() != k || st.Count == 0 {
			continue
		}
		n := float64(st.Count)
		us := func(ns float64) float64 { return ns / 1e3 }
		step := report.Step{Step: s.String(), Count: st.Count,
			LatencyUs: report.StepFigures{Mean: us(float64(st.LatencySum) / n), Min: us(float64(st.LatencyMin)),
				Max: us(float64(st.LatencyMax)), P99: us(float64(st.Latency.ValueAtQuantile(99))),
				TrimmedMean: us(tpcc.TrimmedMean(st.Latency, 0.05))},
			NodeVisits: report.StepFigures{Mean: float64(st.NodesSum) / n, Min: float64(st.NodesMin),
				Max: float64(st.NodesMax), P99: float64(st.Nodes.ValueAtQuantile(99)),
				TrimmedMean: tpcc.TrimmedMean(st.Nodes, 0.05)}}
		if count > 0 {
			step.PerTx = n / float64(count)
		}
		out = append(out, step)
	}
	return out
}

// newLatencyDist is the chart form of a latency histogram of
// microseconds: its counts in bins of a tenth of a decade, from the bin
// of its smallest value to that of its largest, and its percentile curve.
func newLatencyDist(h *hdrhistogram.Histogram) *report.LatencyDist {
	if h.TotalCount() == 0 {
		return nil
	}
	d := &report.LatencyDist{}
	// Bin i holds values in (10^((i-1)/10), 10^(i/10)] µs.
	bin := func(us int64) int { return int(math.Ceil(10 * math.Log10(float64(max(1, us))))) }
	lo := bin(h.Min())
	counts := make([]int64, bin(h.Max())-lo+1)
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			counts[min(max(0, bin(b.To)-lo), len(counts)-1)] += b.Count
		}
	}
	for i, n := range counts {
		le := math.Pow(10, float64(lo+i)/10) / 1000
		d.Buckets = append(d.Buckets, report.LatencyBucket{LeMs: math.Round(le*1e6) / 1e6, Count: n})
	}
	for _, p := range report.DistPercentiles {
		v := h.ValueAtQuantile(p)
		if p == 0 {
			v = h.Min()
		}
		d.Percentiles = append(d.Percentiles, report.LatencyPercentile{Pct: p, Ms: float64(v) / 1000})
	}
	return d
}

// isolationNote is the report's isolation note: the clustered text, the
// heap-versions text when the heap tables keep versions, the
// single-version heap text when they do not.
func isolationNote(c *TPCCConfig) string {
	level := c.IsolationLevel().String()
	switch {
	case c.Org == engine.Clustered || c.Org == engine.OrgDefault:
		return report.IsolationNoteFor(level)
	case c.Versioned():
		return report.HeapVersionsNoteFor(level)
	}
	return report.SingleVersionHeapNoteFor(level)
}
