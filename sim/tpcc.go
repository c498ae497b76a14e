package sim

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/tier"
	"github.com/enginelab/enginelab/cache/tier/slab"
	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim/client"
	"github.com/enginelab/enginelab/sim/report"
	"github.com/enginelab/enginelab/sim/sched"
	"github.com/enginelab/enginelab/tpcc"
)

// Hooks let a caller show progress. Every field may be nil.
type Hooks struct {
	// LoadProgress is tpcc.LoadConfig.Progress.
	LoadProgress func(done, total int64)
	// RunBegin is called as the terminals start, with the warm-up and
	// measured time ahead and a function that tells how much of it has
	// passed (virtual time in simulated mode; safe to call from another
	// goroutine); RunEnd when they have stopped.
	RunBegin func(warmup, duration time.Duration, elapsed func() time.Duration)
	RunEnd   func()
	// Interval hears each progress interval of the measured run as it
	// ends (TPCCConfig.Interval; tpcc.Timeline.OnInterval), the last one
	// before RunEnd.
	Interval func(tpcc.Interval)
}

// DefaultInterval is the progress interval when TPCCConfig.Interval is 0,
// go-tpc's.
const DefaultInterval = 10 * time.Second

// TimelineStep is the interval of the report's timeline for a run of
// duration with progress interval (0: DefaultInterval): that interval, or
// for a run shorter than 20 of them about a twentieth of the run, rounded
// down to 1, 2 or 5 times a power of ten, at least 10 ms.
func TimelineStep(duration, interval time.Duration) time.Duration {
	if interval <= 0 {
		interval = DefaultInterval
	}
	want := duration / 20
	if want >= interval {
		return interval
	}
	// 10 ms, 20 ms, 50 ms, 100 ms, ...: the largest not above want.
	step := 10 * time.Millisecond
	for p := step; p <= want; p *= 10 {
		for _, m := range []time.Duration{1, 2, 5} {
			if p*m <= want {
				step = p * m
			}
		}
	}
	return min(step, interval)
}

// TPCC runs the phases of cfg on one database and reports. On an error
// after the work began, the report holds what was done.
//
// The phases, each a method of the job that open returns: open (the
// remote tier, the page trace, the scheduler, the database), load, the
// database as loaded (describe), run, the tier's activity (reportTier,
// before the check, whose reads would count in the backend's counters),
// check, and the end of the report (reportEnd: space, background work,
// redo log). close releases what open opened, in the reverse order.
func TPCC(ctx context.Context, cfg TPCCConfig, hooks Hooks) (*report.Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// A stored database is opened first to read how it was loaded: that
	// Open is the one that recovers what a crash left.
	var recovered engine.RecoveryStats
	if !cfg.Phases.Load {
		var err error
		if recovered, err = cfg.adoptStored(); err != nil {
			return nil, err
		}
	}
	j, err := open(&cfg)
	if err != nil {
		return nil, err
	}
	defer j.close()
	j.reportRecovery(recovered)
	if cfg.Phases.Load {
		if err := j.load(ctx, hooks); err != nil {
			return j.rep, err
		}
	}
	if err := j.describe(); err != nil {
		return j.rep, err
	}
	if cfg.Phases.Run {
		if err := j.run(ctx, hooks); err != nil {
			return j.rep, err
		}
	}
	j.reportTier()
	if cfg.Phases.Check {
		if err := j.check(); err != nil {
			return j.rep, err
		}
	}
	return j.rep, j.reportEnd()
}

// adoptStored takes the warehouses and the scale of the stored database
// a job without a load runs on, so that the default pool and the terminal
// limit follow it, and validates the job again. A Warehouses or a Scale
// other than full that differs from the stored one is refused. It returns
// what opening the database recovered.
func (c *TPCCConfig) adoptStored() (engine.RecoveryStats, error) {
	l, rec, err := peekLoaded(c.EngineOptions())
	if err != nil {
		return rec, err
	}
	if c.Warehouses != 0 && c.Warehouses != l.Warehouses {
		return rec, fmt.Errorf("sim: %w: --warehouses %d, but the database in %s holds %d", ErrInvalidConfig, c.Warehouses, c.Dir, l.Warehouses)
	}
	c.Warehouses = l.Warehouses
	if c.Org == engine.OrgDefault {
		// The stored organization: the lock release's default and the
		// report's configuration follow it.
		c.Org = l.Org
	}
	if !c.Scale.IsFull() && c.Scale != l.Scale {
		return rec, fmt.Errorf("sim: %w: --scale %v, but the database in %s was loaded at %v scale", ErrInvalidConfig, c.Scale, c.Dir, l.Scale)
	}
	c.Scale = l.Scale
	// The tables keep the choice they were created with (the catalog
	// records it), whatever the options of a later open say.
	switch {
	case c.HeapVersions == engine.HeapVersionsOn && !l.HeapVersions:
		return rec, fmt.Errorf("sim: %w: HeapVersions on (--heap-versions), but the database in %s was loaded without heap versions: its tables keep the choice they were created with", ErrInvalidConfig, c.Dir)
	case c.HeapVersions == engine.HeapVersionsOff && l.HeapVersions:
		return rec, fmt.Errorf("sim: %w: HeapVersions off (--heap-versions=false), but the database in %s was loaded with heap versions: its tables keep the choice they were created with", ErrInvalidConfig, c.Dir)
	case l.HeapVersions:
		c.HeapVersions = engine.HeapVersionsOn
	default:
		c.HeapVersions = engine.HeapVersionsOff
	}
	return rec, c.Validate()
}

// peekLoaded opens the stored database of o and reads its load's
// settings, and returns what the Open recovered. If the database was not
// shut down cleanly this Open is the one that recovers it, so it has the
// job's pool (the user's --pool, else the default for the warehouses the
// user named, else for one): with a small pool, redo evicts and reads the
// same pages again and again. Its redo log is the job's too (--log-size,
// else DefaultLogSize of the warehouses named, else of one): redo reads
// the segments the database has, whatever their size, and its closing
// checkpoint lets segments of another size go, which the job's own Open
// makes again at its size.
func peekLoaded(o *engine.Options) (tpcc.Loaded, engine.RecoveryStats, error) {
	db, err := engine.Open(o)
	if err != nil {
		return tpcc.Loaded{}, engine.RecoveryStats{}, err
	}
	l, err := tpcc.ReadLoaded(db)
	return l, db.Recovery(), errors.Join(err, db.Close())
}

// reportRecovery adds the recovery section when an Open of the job
// recovered something: the first, which read how the database was loaded
// (rec), or the job's own. The phases' wall times go in host in simulated
// mode, whose report outside host depends on its inputs alone.
func (j *job) reportRecovery(rec engine.RecoveryStats) {
	if !rec.Recovered() {
		rec = j.db.Recovery()
	}
	r := report.NewRecovery(rec)
	if r == nil {
		return
	}
	if j.sched != nil {
		j.rep.Host.RecoverySeconds = r.RedoSeconds + r.RollbackSeconds + r.CheckpointSeconds
		r.RedoSeconds, r.RollbackSeconds, r.CheckpointSeconds = 0, 0, 0
	}
	j.rep.Recovery = r
}

// fsMark is a reading of the database's write counters: the start of a
// span of the job whose writes to files the report gives.
type fsMark struct {
	fs                engine.FSStats
	commits, logBytes int64
}

func (j *job) markFS() fsMark {
	return fsMark{fs: j.db.FSStats(), commits: j.db.Commits(), logBytes: j.db.LogStats().Bytes}
}

// fsSpan returns the writes since from, per committed transaction if
// perTx.
func (j *job) fsSpan(from fsMark, perTx bool) *report.FSSpan {
	now := j.markFS()
	return report.NewFSSpan(now.fs.Sub(from.fs), now.commits-from.commits, now.logBytes-from.logBytes, perTx)
}

// fsSection is the report's fs section, made if need be: in host in
// simulated mode, since pebble flushes, compacts and writes its WAL on
// its own goroutines, on the host's timing.
func (j *job) fsSection() *report.FS {
	p := &j.rep.FS
	if j.sched != nil {
		p = &j.rep.Host.FS
	}
	if *p == nil {
		*p = &report.FS{}
	}
	return *p
}

// job is one TPCC call: what open built, and the report the phases fill.
type job struct {
	cfg      *TPCCConfig
	rep      *report.Report
	pageSize int
	// tierSize is the in-process tier's budget (RemoteSize or its
	// default).
	tierSize int64
	// tier is what the pool calls: the backend, or the page trace over it
	// (over a tier that keeps nothing when there is no backend); nil:
	// neither. backend says there is a backend.
	tier    tier.Tier
	backend bool
	// trace and traceFile record the page trace (TPCCConfig.Trace); nil
	// without one.
	trace     *tier.TraceTier
	traceFile *os.File
	// slab is the backend when it is a memcached model, nil otherwise;
	// slabAtRun its stats as the run began.
	slab      *slab.Tier
	slabAtRun slab.Stats
	// raAtRun and raAtEnd are the pool's read-ahead decisions by space as
	// the run began and as it ended (before the check and the space
	// report, whose scans would count as the run's otherwise).
	raAtRun, raAtEnd map[uint32]cache.SpaceReadAhead
	// sched is simulated mode's scheduler; nil in real mode.
	sched *sched.Scheduler
	// started is when open began: a memcached model's clock in real
	// mode.
	started time.Time
	opts    *engine.Options
	db      *engine.DB
	loaded  tpcc.Loaded
	// clients are the terminals' client models when the cost layer is on
	// (TPCCConfig.Client), by terminal number; person their personality.
	clients []*client.Terminal
	person  client.Personality
}

// open starts c's job: its report, the remote tier and the page trace
// (openTier), the scheduler in simulated mode, and the database. On an
// error it closes what it opened and returns no job.
func open(c *TPCCConfig) (*job, error) {
	j := &job{cfg: c, rep: newReport(c), opts: c.EngineOptions(), pageSize: c.PageSize, tierSize: c.RemoteSize, started: time.Now()}
	if j.pageSize == 0 {
		j.pageSize = page.DefaultSize
	}
	if j.tierSize == 0 {
		j.tierSize = DefaultRemoteSize
	}
	if err := j.openTier(); err != nil {
		return nil, err
	}
	if j.tier != nil {
		j.opts.Tier = j.tier
	}
	if c.Mode == ModeSim {
		machine, err := c.Hardware.Resolve()
		if err != nil {
			j.close()
			return nil, err
		}
		j.sched = sched.New(machine, j.pageSize, j.backend) // a trace's null tier costs nothing
		j.sched.Install(j.opts)
		if j.slab != nil {
			// memcached's worker threads (-t) serve the requests.
			j.sched.SetTierServer(j.slab.MemcachedStats().Threads)
		}
		j.rep.Sim = &report.Sim{Hardware: machine}
		if c.Client != nil {
			j.setClients(machine.Network)
		}
	}
	db, err := engine.Open(j.opts)
	if err != nil {
		j.close()
		return nil, err
	}
	j.db = db
	if j.sched != nil {
		j.sched.Attach(db)
	}
	return j, nil
}

// close closes the database, then the tier (so that the pages the
// database pushes as it closes are in the trace), then writes out the
// trace; an error of the trace's goes into the report. An in-memory
// database without a trace closes fast (engine.DB.CloseFast, InnoDB's
// innodb_fast_shutdown=2): its store goes with the process, and a sharp
// checkpoint would write every page the cleaner left dirty into it
// first, seconds at W=16 with the log's default (DefaultLogSize).
func (j *job) close() {
	if j.db != nil {
		if j.cfg.Dir == "" && j.trace == nil {
			_ = j.db.CloseFast()
		} else {
			_ = j.db.Close()
		}
	}
	if j.tier != nil {
		_ = j.tier.Close()
	}
	if j.trace != nil {
		if err := errors.Join(j.trace.Flush(), j.traceFile.Close()); err != nil {
			j.rep.Errors = append(j.rep.Errors, fmt.Sprintf("page trace %s: %v", j.cfg.Trace, err))
		}
	}
}

// load creates and loads the tables; its figures go in the report's load
// section (wall-clock ones in host only, in simulated mode).
func (j *job) load(ctx context.Context, hooks Hooks) error {
	c := j.cfg
	lc := tpcc.LoadConfig{Warehouses: c.Warehouses, Scale: c.Scale, Seed: c.Seed, Org: c.Org, Progress: hooks.LoadProgress,
		ExtraIndexes: c.ExtraIndexes, WideCustomerKey: c.WideCustomerKey}
	if j.sched != nil {
		// One loader: the pages every row lands in, and so the whole
		// run, then depend on the seed alone.
		lc.Workers = 1
	}
	mark := j.markFS()
	stats, err := tpcc.Load(ctx, j.db, lc)
	if err != nil {
		return err
	}
	if j.sched != nil {
		// The load is not priced (its clock stands at zero), so no page
		// cleaner pass falls due during it, and its checkpoints are fuzzy:
		// it would leave the run its checkpoint age to pay for (the log
		// free check). A sharp checkpoint ends it instead, unpriced like
		// the rest of the load.
		if err := j.db.Checkpoint(); err != nil {
			return err
		}
	}
	rep := j.rep
	rep.Load = newLoadReport(&stats)
	j.fsSection().Load = j.fsSpan(mark, false)
	if c.LoadSpace {
		space, err := j.db.SpaceReport()
		if err != nil {
			return err
		}
		rep.Load.Space = newSpaceReport(space)
	}
	rep.Host.LoadSeconds, rep.Host.LoadRowsPerSecond = stats.Elapsed.Seconds(), stats.RowsPerSecond
	if j.sched != nil {
		rep.Load.ElapsedSeconds, rep.Load.RowsPerSecond = 0, 0 // wall-clock: in host only
	}
	return nil
}

// describe reads what the load stored (tpcc.ReadLoaded), which the run and
// the check follow, into the report's database section.
func (j *job) describe() error {
	loaded, err := tpcc.ReadLoaded(j.db)
	if err != nil {
		return err
	}
	j.loaded = loaded
	if loaded.Org == engine.HeapRowPointer && !loaded.HeapVersions {
		// A versioned heap's index-only scans consult its visibility
		// map, and the report counts the heap fetches they make.
		j.rep.Notes = append(j.rep.Notes, report.RowPointerNote)
	}
	j.rep.Database = report.Database{Warehouses: loaded.Warehouses, Scale: loaded.Scale.String(), Org: loaded.Org.String(),
		LoadSeed: loaded.Seed, PageSize: j.db.Pool().PageSize(), PoolBytes: j.opts.PoolSize}
	return nil
}

// run runs the terminals: goroutines in wall time (tpcc.Run), or the
// scheduler's coroutines in virtual time. Its figures go in the report's
// run section, and in simulated mode its sim section; the wall time, in
// host. On an error the report keeps what was measured.
func (j *job) run(ctx context.Context, hooks Hooks) error {
	c, l := j.cfg, &j.loaded
	rc := tpcc.RunConfig{Warehouses: l.Warehouses, Scale: l.Scale, Terminals: c.Terminals, Duration: c.Duration,
		Warmup: c.Warmup, Seed: c.Seed, LoadConstants: l.Constants, Profile: c.Profile,
		StockLevelNoLowerBound: c.StockLevelNoLowerBound, DeliveryLimit1: c.DeliveryLimit1, KeyingAndThink: c.KeyingAndThink, Isolation: c.IsolationLevel()}
	interval := c.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	tl, err := tpcc.NewTimeline(TimelineStep(c.Duration, interval), interval)
	if err != nil {
		return err
	}
	tl.OnInterval = hooks.Interval
	rc.Timeline = tl
	mark := j.markFS()
	if j.slab != nil {
		j.slabAtRun = j.slab.MemcachedStats()
	}
	j.raAtRun = j.db.Pool().ReadAheadTriggersBySpace()
	purged := j.db.Purge().Purged
	vacuumed := j.vacuumWork()
	start, cpu := time.Now(), report.ProcessCPU()
	var stats *tpcc.RunReport
	var elapsed time.Duration
	if s := j.sched; s == nil {
		if hooks.RunBegin != nil {
			hooks.RunBegin(c.Warmup, c.Duration, func() time.Duration { return time.Since(start) })
		}
		stats, err = tpcc.Run(ctx, j.db, rc)
		elapsed = time.Since(start)
	} else {
		rc.Env = s
		from := s.Elapsed()
		if hooks.RunBegin != nil {
			hooks.RunBegin(c.Warmup, c.Duration, func() time.Duration { return s.Progress() - from })
		}
		var terms []*tpcc.Terminal
		if terms, err = tpcc.NewTerminals(j.db, rc); err == nil {
			errs := s.RunTPCC(ctx, terms)
			stats, err = tpcc.Collect(ctx, terms, errs)
		}
		elapsed = s.Elapsed() - from
	}
	tl.Finish()
	j.raAtEnd = j.db.Pool().ReadAheadTriggersBySpace()
	if hooks.RunEnd != nil {
		hooks.RunEnd()
	}
	wall, cpu := time.Since(start), report.ProcessCPU()-cpu
	if stats != nil {
		rep := j.rep
		rep.Run = newRunReport(c, stats, elapsed)
		rep.Run.Timeline = newTimeline(tl)
		j.fsSection().Run = j.fsSpan(mark, true)
		rep.Host.RunSeconds = wall.Seconds()
		if wall > 0 {
			rep.Host.TxPerSecond = float64(stats.Results.Total()) / wall.Seconds()
			if cpu > 0 {
				rep.Host.RunCPUSeconds = cpu.Seconds()
				rep.Host.RunCoresBusy = cpu.Seconds() / wall.Seconds()
			}
		}
		p := j.db.Purge()
		rep.Purge = &report.Purge{Purged: p.Purged - purged, HistoryLength: p.Lag}
		if j.db.HasVersionedTables() {
			v := j.vacuumWork()
			v.Meter.Sub(&vacuumed.Meter)
			rep.Vacuum = report.NewVacuum(&v.Meter, v.Steps-vacuumed.Steps)
		}
		if j.sched != nil {
			fillSim(rep.Sim, j.sched, elapsed, rep.Run)
			if j.clients != nil {
				rep.Sim.Client = j.clientReport()
			}
			rep.Host.VirtualPerWall = elapsed.Seconds() / wall.Seconds()
			a := j.sched.Purge()
			rep.Purge.ActorSteps, rep.Purge.ActorPurged, rep.Purge.MaxHistoryLength = a.Steps, a.Done, a.MaxHistory
			rep.Purge.ActorStoreReads, rep.Purge.ActorStoreWrites = a.Meter.StoreReads, a.Meter.StoreWrites
			rep.Purge.ActorWaits = a.Waits
			if a.Err != nil {
				err = errors.Join(err, fmt.Errorf("sim: the purge actor: %w", a.Err))
			}
		}
	}
	return err
}

// vacuumWork is autovacuum's work so far: the scheduler's vacuum actor in
// simulated mode, the database's background vacuum in real mode.
func (j *job) vacuumWork() sched.Maintenance {
	if j.sched != nil {
		return j.sched.Vacuum()
	}
	return sched.Maintenance{Meter: j.db.VacuumMeter()}
}

// reportTier adds the remote tier's section, if there is a backend: what
// the run's transactions asked of it and its own counters so far.
func (j *job) reportTier() {
	if j.backend {
		j.rep.Tier = newTierReport(j.cfg, j.tierSize, j.tier, j.rep.Run)
		if j.slab != nil {
			j.rep.Tier.Memcached = newMemcachedStats(j.slab, j.slabAtRun)
		}
	}
}

// check checks the consistency conditions; condition 11 only on a
// database no run has changed since its load.
func (j *job) check() error {
	p := j.cfg.Phases
	chk, err := tpcc.Check(j.db, tpcc.CheckConfig{Fresh: !p.Run && p.Load, Scale: j.loaded.Scale})
	if err != nil {
		return err
	}
	j.rep.Check = &chk
	return nil
}

// reportEnd adds what the database says at the end of the job: its space,
// the pool's background work and the redo log's activity.
func (j *job) reportEnd() error {
	space, err := j.db.SpaceReport()
	if err != nil {
		return err
	}
	rep := j.rep
	rep.Space = newSpaceReport(space)
	bg := j.db.Pool().BackgroundMeter()
	rep.Background = &report.Background{ReadAheads: bg.ReadAheads, ReadAheadUnused: bg.ReadAheadUnused,
		StoreReads: bg.StoreReads, StoreWrites: bg.StoreWrites, StoreSyncs: bg.StoreSyncs, TierPuts: bg.TierPuts,
		DoublewriteWrites: bg.DoublewriteWrites, DoublewritePages: bg.DoublewritePages, DoublewriteBytes: bg.DoublewriteBytes,
		DoublewriteSyncs: bg.DoublewriteSyncs, ReadAheadTriggers: bg.ReadAheadTriggers, RandomReadAheadTriggers: bg.RandomReadAheadTriggers,
		RandomReadAheads: bg.RandomReadAheads, RandomReadAheadUnused: bg.RandomReadAheadUnused,
		MasterRounds: bg.MasterRounds, MasterFlushListPages: bg.MasterFlushListPages, MasterCheckpoints: bg.MasterCheckpoints,
		ReadAheadBySpace: readAheadBySpace(space, j.readAheadAtEnd(), j.raAtRun)}
	l := j.db.LogStats()
	rep.Log = &report.Log{Records: l.Records, Bytes: l.Bytes, Syncs: l.Syncs, SyncedCommits: l.SyncedCommits, Checkpoints: l.Checkpoints}
	rep.Host.StoreBytes = j.db.StoreMemoryBytes()
	rep.Host.MaxRSSBytes = report.MaxRSS()
	return nil
}

// newMemcachedStats is a memcached model's stats for the report: its
// counters since from (the run's start; the load's SETs and evictions
// are not the run's), its levels as they are.
func newMemcachedStats(t *slab.Tier, from slab.Stats) *report.MemcachedStats {
	st := t.MemcachedStats()
	st.TotalItems -= from.TotalItems
	st.Evictions -= from.Evictions
	st.CmdGet -= from.CmdGet
	st.CmdSet -= from.CmdSet
	st.GetHits -= from.GetHits
	st.GetMisses -= from.GetMisses
	st.DeleteHits -= from.DeleteHits
	r := &report.MemcachedStats{Release: string(t.Params().Release), PointerSize: st.PointerSize, Threads: st.Threads,
		LimitMaxbytes: st.LimitMaxbytes, CurrItems: st.CurrItems, TotalItems: st.TotalItems, Bytes: st.Bytes,
		Evictions: st.Evictions, CmdGet: st.CmdGet, CmdSet: st.CmdSet, GetHits: st.GetHits, GetMisses: st.GetMisses,
		DeleteHits: st.DeleteHits}
	if st.CmdGet > 0 {
		r.HitRate = float64(st.GetHits) / float64(st.CmdGet)
	}
	return r
}

// readAheadAtEnd is the pool's read-ahead decisions by space at the end
// of the run, or now if the job ran none.
func (j *job) readAheadAtEnd() map[uint32]cache.SpaceReadAhead {
	if j.raAtEnd != nil {
		return j.raAtEnd
	}
	return j.db.Pool().ReadAheadTriggersBySpace()
}

// readAheadBySpace names the spaces of by, less from (the run's start),
// with their tables and indexes (space, the database's space report), in
// the space report's order.
func readAheadBySpace(space []engine.SpaceStats, by, from map[uint32]cache.SpaceReadAhead) []report.ReadAheadSpace {
	for k, v := range by {
		v.Linear -= from[k].Linear
		v.Random -= from[k].Random
		if v == (cache.SpaceReadAhead{}) {
			delete(by, k)
		} else {
			by[k] = v
		}
	}
	var out []report.ReadAheadSpace
	for _, s := range space {
		if c, ok := by[s.Space]; ok {
			out = append(out, report.ReadAheadSpace{Table: s.Table, Index: s.Index, Linear: c.Linear, Random: c.Random})
			delete(by, s.Space)
		}
	}
	for _, sp := range slices.Sorted(maps.Keys(by)) {
		c := by[sp]
		out = append(out, report.ReadAheadSpace{Table: fmt.Sprintf("space %d", sp), Linear: c.Linear, Random: c.Random})
	}
	return out
}
