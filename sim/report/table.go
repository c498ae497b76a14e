package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/enginelab/enginelab/cache/store"
)

// seeds names the seeds the job's data came from: the run's (which a
// load in the same job shares), and the stored load's when it differs; a
// job without a run (check, export) has only the load's.
func (r *Report) seeds() string {
	c := &r.Config
	hasRun, hasLoad := strings.Contains(c.Phases, "run"), strings.Contains(c.Phases, "load")
	switch {
	case !hasRun:
		return fmt.Sprintf("load seed %d", r.Database.LoadSeed)
	case !hasLoad && r.Database.LoadSeed != c.Seed:
		return fmt.Sprintf("seed %d (load seed %d)", c.Seed, r.Database.LoadSeed)
	}
	return fmt.Sprintf("seed %d", c.Seed)
}

// WriteTable prints the report as aligned tables.
func (r *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	c := &r.Config
	fmt.Fprintf(&b, "enginelab tpcc (%s): %d warehouse%s%s, %s, org %s, profile %s, %s\n",
		c.Phases, r.Database.Warehouses, plural(r.Database.Warehouses), ScaleNote(r.Database.Scale), c.Mode, r.Database.Org, c.Profile, r.seeds())
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
	redoLog := ""
	if c.LogBytes > 0 {
		redoLog = ", redo log " + FormatBytes(c.LogBytes)
	}
	fmt.Fprintf(&b, "engine: page size %d, pool %s (%s)%s, heap update %s, count rewrite %v, sync commit %v, %s\n",
		r.Database.PageSize, FormatBytes(r.Database.PoolBytes), c.PoolPolicy, redoLog, c.HeapUpdate, c.CountRewrite, c.SyncCommit,
		storage(c.Dir))
	if c.Isolation != "" {
		fmt.Fprintf(&b, "isolation %s, early lock release %v\n", c.Isolation, c.EarlyLockRelease)
	}

	if rc := r.Recovery; rc != nil {
		secs := rc.RedoSeconds + rc.RollbackSeconds + rc.CheckpointSeconds
		phases := fmt.Sprintf("redo %s, rollback %s, checkpoint %s", seconds(rc.RedoSeconds), seconds(rc.RollbackSeconds),
			seconds(rc.CheckpointSeconds))
		if r.Host.RecoverySeconds > 0 {
			secs, phases = r.Host.RecoverySeconds, "wall time"
		}
		fmt.Fprintf(&b, "\nRECOVERY (the database was not shut down cleanly): %s (%s)\n", seconds(secs), phases)
		fmt.Fprintf(&b, "  redo: %d records, %s of log from the checkpoint at LSN %d to LSN %d; %d page changes: %d applied, %d already on their page; %d pages read\n",
			rc.Records, FormatBytes(rc.Bytes), rc.CheckpointLSN, rc.EndLSN, rc.Pages, rc.PagesApplied, rc.PagesSkipped, rc.PagesRead)
		fmt.Fprintf(&b, "  rollback: %d unfinished transactions\n", rc.RolledBack)
	}
	fs := r.FS
	if fs == nil {
		fs = r.Host.FS
	}
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
		if fs != nil && fs.Load != nil {
			f := fs.Load
			c := &f.Classes
			fmt.Fprintf(&b, "files written by the load: %s in %d writes, %d syncs (redo %s, wal %s, sst %s, pebble-meta %s, other %s)\n",
				FormatBytes(f.Total.Bytes), f.Total.Writes, f.Total.Syncs, FormatBytes(c.Redo.Bytes), FormatBytes(c.WAL.Bytes),
				FormatBytes(c.Tables.Bytes), FormatBytes(c.PebbleMeta.Bytes), FormatBytes(c.Other.Bytes))
		}
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
		if p := run.AllPerTx; p != nil {
			fmt.Fprintf(tw, "all\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.2f\t%.0f\t%.3f\t\n", p.NodeVisits, p.RowFetches, p.HeapFetches,
				p.RowsExamined, p.PoolHits, p.PoolMisses, p.LogBytes, p.LockWaits)
		}
		_ = tw.Flush()
		writeVersions(&b, run.Types)
		writeSorts(&b, run.Types)
		if fs != nil && fs.Run != nil {
			writeFSSpan(&b, fs.Run)
		}
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
			fmt.Fprintf(&b, "busy: cores %.1f%%, store %.1f%%, log %.1f%%, network %.1f%% of %.1f virtual s; %d checkpoints waited for the last one's writes, %d background writes pending at the end, %d cleaner passes skipped (its last batch still queued)\n",
				sr.CoresBusyPct, sr.StoreBusyPct, sr.LogBusyPct, sr.NetworkBusyPct, sr.VirtualSeconds, sr.CheckpointWaits, sr.BackgroundWritesPending, sr.CleanerSkips)
			if u := sr.StoreUse; u != nil && sr.StoreBusyPct > 0 {
				fmt.Fprintf(&b, "store device held by: terminals' reads %.1f%%, their writes and syncs %.1f%%, read-ahead %.1f%%, background writes %.1f%%, purge %.1f%%, vacuum %.1f%% of the virtual time\n",
					u.Reads, u.Writes, u.ReadAhead, u.Background, u.Purge, u.Vacuum)
			}
			if sr.PostedLRUBatches > 0 {
				fmt.Fprintf(&b, "LRU batches posted without waiting for their writes: %d; writes that waited for a free slot to post: %d\n",
					sr.PostedLRUBatches, sr.PostWaits)
			}
			if sr.Stalls > 0 {
				fmt.Fprintf(&b, "warning: the scheduler broke %d stalled waits\n", sr.Stalls)
			}
			if c := sr.Client; c != nil {
				writeClient(&b, c)
			}
		}
		fmt.Fprintf(&b, "\ntpmC %.0f   transactions/min %.0f", run.TpmC, run.TxPerMinute)
		if run.Efficiency != nil {
			fmt.Fprintf(&b, "   efficiency %.1f%% of %.2f tpmC per warehouse", *run.Efficiency, SpecTpmCPerWarehouse)
		}
		b.WriteString("\n")
		if h := &r.Host; r.Sim == nil && h.RunCPUSeconds > 0 {
			fmt.Fprintf(&b, "cpu: %.1f s over the run's %.1f s, %.2f cores busy of GOMAXPROCS %d (terminals, page cleaner, purge, pebble and the garbage collector)\n",
				h.RunCPUSeconds, h.RunSeconds, h.RunCoresBusy, h.GOMAXPROCS)
		}
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
		if m := t.Memcached; m != nil {
			fmt.Fprintf(&b, "memcached %s (%d-bit, threads %d, limit_maxbytes %d), over the run (warm-up and read-ahead included): get_hits %d, get_misses %d (%.1f%%), cmd_set %d, evictions %d, delete_hits %d; curr_items %d, bytes %d\n",
				m.Release, m.PointerSize, m.Threads, m.LimitMaxbytes, m.GetHits, m.GetMisses, 100*m.HitRate, m.CmdSet, m.Evictions, m.DeleteHits, m.CurrItems, m.Bytes)
		}
	}
	if bg := r.Background; bg != nil && (bg.ReadAheads > 0 || bg.StoreWrites > 0 || bg.StoreSyncs > 0) {
		fmt.Fprintf(&b, "\nBACKGROUND: %d pages read ahead (%d evicted unused), %d store reads, %d store writes, %d store syncs, %d tier puts\n",
			bg.ReadAheads, bg.ReadAheadUnused, bg.StoreReads, bg.StoreWrites, bg.StoreSyncs, bg.TierPuts)
		if bg.DoublewriteWrites > 0 {
			fmt.Fprintf(&b, "doublewrite: %d batches of %d pages (%s), %d syncs\n",
				bg.DoublewriteWrites, bg.DoublewritePages, FormatBytes(bg.DoublewriteBytes), bg.DoublewriteSyncs)
		}
		if bg.MasterRounds > 0 {
			fmt.Fprintf(&b, "MySQL 5.1's master thread: %d rounds, %d flush-list pages, %d checkpoints\n", bg.MasterRounds, bg.MasterFlushListPages, bg.MasterCheckpoints)
		}
		if bg.RandomReadAheadTriggers > 0 {
			fmt.Fprintf(&b, "random read-ahead: %d decisions, %d pages (%d evicted unused)\n", bg.RandomReadAheadTriggers, bg.RandomReadAheads, bg.RandomReadAheadUnused)
		}
		if len(bg.ReadAheadBySpace) > 0 {
			var parts []string
			for _, s := range bg.ReadAheadBySpace {
				name := s.Table
				if s.Index != "" {
					name += "." + s.Index
				}
				parts = append(parts, fmt.Sprintf("%s %d/%d", name, s.Linear, s.Random))
			}
			fmt.Fprintf(&b, "read-ahead decisions during the run (linear/random): %s\n", strings.Join(parts, ", "))
		}
	}
	if p := r.Purge; p != nil && (p.Purged > 0 || p.HistoryLength > 0 || p.ActorSteps > 0) {
		fmt.Fprintf(&b, "\nPURGE: %d undo logs purged during the run, history length %d at its end", p.Purged, p.HistoryLength)
		if p.ActorSteps > 0 {
			fmt.Fprintf(&b, "; the purge actor took %d steps, purged %d, met a history of %d at most, read %d pages from the store and wrote %d",
				p.ActorSteps, p.ActorPurged, p.MaxHistoryLength, p.ActorStoreReads, p.ActorStoreWrites)
			if p.ActorWaits > 0 {
				fmt.Fprintf(&b, "; %d steps fell due while its requests were still queued and waited", p.ActorWaits)
			}
		}
		b.WriteString("\n")
	}
	if v := r.Vacuum; v != nil {
		fmt.Fprintf(&b, "\nVACUUM: %d table passes scanned %d heap pages, pruned %d, removed %d versions and %d index entries, and found %d dead versions they could not remove yet (a sum over the passes)",
			v.Runs, v.Pages, v.PagesPruned, v.TuplesRemoved, v.IndexEntriesRemoved, v.DeadTuples)
		if v.ActorSteps > 0 {
			fmt.Fprintf(&b, " (the vacuum actor took %d steps)", v.ActorSteps)
		}
		b.WriteString("\n")
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

// writeVersions prints the multi-versioning figures per transaction of
// the types that have any (a clustered Delivery's undo records among
// them; none at Serializable on clustered tables without versioned
// heaps, where it prints nothing). Its "index-only heap fetches" are
// PostgreSQL's Heap Fetches of an index-only scan (the visibility map
// did not say all-visible), not the cost table's heap fetches.
func writeVersions(b *strings.Builder, types []Type) {
	var rows []Type
	for _, t := range types {
		p := &t.PerTx
		if t.SerializationFailures > 0 || p.ReadViews > 0 || p.ConsistentReads > 0 || p.UndoVersionsRead > 0 || p.UndoRecords > 0 || p.HOTUpdates > 0 ||
			p.NonHOTUpdates > 0 || p.HeapVersionsRead > 0 || p.DurableReadWaits > 0 || p.IndexOnlyHeapFetches > 0 || p.PagesPruned > 0 || p.EntriesKilled > 0 {
			rows = append(rows, t)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "\nmulti-versioning per transaction (averages; serialization failures: retries in all)\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "type\tread views\tconsistent reads\tversions read\tundo records\tHOT updates\tnon-HOT updates\theap versions read\tindex-only heap fetches\tentries killed\tpages pruned\tdurable-read waits\tserialization failures\t")
	for _, t := range rows {
		p := &t.PerTx
		fmt.Fprintf(tw, "%s\t%.2f\t%.1f\t%.2f\t%.1f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.3f\t%.3f\t%d\t\n", t.Type, p.ReadViews, p.ConsistentReads, p.UndoVersionsRead,
			p.UndoRecords, p.HOTUpdates, p.NonHOTUpdates, p.HeapVersionsRead, p.IndexOnlyHeapFetches, p.EntriesKilled, p.PagesPruned, p.DurableReadWaits, t.SerializationFailures)
	}
	_ = tw.Flush()
}

// writeSorts prints the ORDER BYs per transaction of the types that have
// any: sorts run and sorts an index made unnecessary.
func writeSorts(b *strings.Builder, types []Type) {
	var rows []Type
	for _, t := range types {
		if t.PerTx.Sorts > 0 || t.PerTx.SortsAvoided > 0 {
			rows = append(rows, t)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "\nORDER BY per transaction (averages; avoided: an index gave the order, no sort ran)\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "type\tsorts\tsorts avoided\t")
	for _, t := range rows {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t\n", t.Type, t.PerTx.Sorts, t.PerTx.SortsAvoided)
	}
	_ = tw.Flush()
}

// writeFSSpan prints a run's writes to files: a line per class of file,
// and the redo log's own counter beside them.
func writeFSSpan(b *strings.Builder, f *FSSpan) {
	fmt.Fprintf(b, "\nfiles written during the run, by class (whole run, warm-up included: background writes belong to no transaction type)\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "class\tbytes\twrites\tsyncs\tcreated\tremoved\trenamed\tbytes/tx\t")
	perTx := func(n int64) string {
		if f.Commits == 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f", float64(n)/float64(f.Commits))
	}
	line := func(name string, c store.FSCounts) {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t\n", name, FormatBytes(c.Bytes), c.Writes, c.Syncs, c.Created,
			c.Removed, c.Renamed, perTx(c.Bytes))
	}
	for c := range store.NumFSClasses {
		line(c.String(), *f.Classes.Class(c))
	}
	line("total", f.Total)
	_ = tw.Flush()
	fmt.Fprintf(b, "redo log: %s logged, %s per committed transaction, over %d commits\n", FormatBytes(f.LogBytes), perTx(f.LogBytes), f.Commits)
}

// seconds prints a duration in seconds with a unit that suits it.
func seconds(s float64) string {
	switch {
	case s >= 1:
		return fmt.Sprintf("%.2f s", s)
	case s >= 1e-3:
		return fmt.Sprintf("%.1f ms", s*1e3)
	}
	return fmt.Sprintf("%.0f µs", s*1e6)
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

// writeClient prints the client and server cost layer's section.
func writeClient(b *strings.Builder, c *Client) {
	fmt.Fprintf(b, "\nclient and server layer: %s (%s), %s's statements, settings %+v\n", c.Personality, c.Driver, c.Kit, c.Settings)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "type\tmean ms\tserver ms\tcore queue ms\tclient ms\twire ms\toutside engine %\t")
	for _, t := range c.Types {
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.1f\t\n", t.Type, t.MeanMs, t.ServerMs, t.QueueMs, t.ClientMs, t.WireMs, t.OutsidePct)
	}
	_ = tw.Flush()
	tw = tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "statements\tkind\tround trips\tmsgs sent\tmsgs recv\tclient syscalls\tserver syscalls\tbytes sent\tbytes recv\trows sent\tparses\tplans\tplan hits\t")
	for _, k := range []string{"select", "update", "commit", "rollback"} {
		x := c.ByKind[k]
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", x.Statements, k, x.RoundTrips, x.MessagesSent, x.MessagesReceived,
			x.ClientSyscalls, x.ServerSyscalls, x.BytesSent, x.BytesReceived, x.RowsSent, x.Parses, x.Plans, x.PlanCacheHits)
	}
	_ = tw.Flush()
	fmt.Fprintf(b, "outside the engine: %.1f%% of the measured response time (warm-up included in the counts)\n", c.OutsidePct)
}
