package sim

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/sim/report"
	"github.com/enginelab/enginelab/tpcc"
)

// copyDir copies a closed database directory.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(dst)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			return err
		}
		return out.Close()
	}))
}

// withoutHost is a report's JSON with the host section (and the database
// directory) taken out.
func withoutHost(t *testing.T, r *report.Report) map[string]any {
	t.Helper()
	b, err := json.Marshal(r)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	require.Contains(t, m, "host")
	delete(m, "host")
	delete(m["config"].(map[string]any), "dir") // each job has its own
	return m
}

// Simulated mode is deterministic: two loads with one seed lay out the
// same pages, and two simulated runs on them with one seed and
// configuration give the same report outside its host section. A run with
// another seed on a copy of the same database gives another report. At
// small scale (about 9.8 MiB: a 2.5 MiB pool and a 1.5 MiB tier, the
// shares of the data a 24 MiB pool and a 16 MiB tier are at full scale),
// so that the race detector sees the scheduler run TPC-C.
func TestSimTPCCDeterministic(t *testing.T) {
	ctx := context.Background()
	base := TPCCConfig{Mode: ModeSim, Warehouses: 1, Scale: tpcc.SmallScale, Terminals: 4, Duration: time.Second,
		Warmup: 200 * time.Millisecond, Seed: 1, SyncCommit: true, PoolSize: 2560 << 10, ReadAhead: true,
		Remote: RemoteSpec{Backend: "slru"}, RemoteSize: 1536 << 10,
		Hardware: hw.Spec{Store: "sata-ssd", Network: "gigabit", Cores: 2}}

	var loads [2]map[string]any
	var dirs [3]string
	for i := range 2 {
		dirs[i] = t.TempDir()
		c := base
		c.Phases, c.Dir = Phases{Load: true}, dirs[i]
		rep, err := TPCC(ctx, c, Hooks{})
		require.NoError(t, err)
		loads[i] = withoutHost(t, rep)
	}
	require.Equal(t, loads[0], loads[1], "two loads with one seed")
	dirs[2] = t.TempDir()
	copyDir(t, dirs[0], dirs[2])

	// A job on the stored database at another scale than its own is
	// refused; one that leaves Scale at zero takes the stored one (below).
	bad := base
	bad.Phases, bad.Dir, bad.Scale = Phases{Run: true}, dirs[0], tpcc.Scale{Items: 5000, CustomersPerDistrict: 300}
	_, err := TPCC(ctx, bad, Hooks{})
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.ErrorContains(t, err, "--scale items=5000 customers_per_district=300, but the database in "+dirs[0]+" was loaded at small scale")

	var runs [3]*report.Report
	var intervals []tpcc.Interval
	for i := range 3 {
		c := base
		c.Phases, c.Dir = Phases{Run: true}, dirs[i]
		hooks := Hooks{}
		if i == 0 {
			c.Interval = 500 * time.Millisecond
			hooks.Interval = func(iv tpcc.Interval) { intervals = append(intervals, iv) }
		}
		if i == 2 {
			c.Seed = 2
		}
		if i == 1 {
			c.Scale = tpcc.FullScale // the default: as stored
		}
		rep, err := TPCC(ctx, c, hooks)
		require.NoError(t, err)
		require.Empty(t, rep.Run.Errors)
		runs[i] = rep
	}
	a, b, other := withoutHost(t, runs[0]), withoutHost(t, runs[1]), withoutHost(t, runs[2])
	require.Equal(t, a, b, "two simulated runs with one seed and configuration")
	require.NotEqual(t, a["run"], other["run"], "a run with another seed")

	// The run did simulate something: transactions of every type, time
	// in virtual seconds, the tier used, the breakdown's shares adding up.
	r := runs[0]
	require.Equal(t, "sim", r.Config.Mode)
	require.Equal(t, "small", r.Config.Scale, "as stored with the load")
	require.Equal(t, "small", r.Database.Scale)
	require.Greater(t, r.Run.TpmC, 0.0)
	require.InDelta(t, 1.2, r.Sim.VirtualSeconds, 0.1)
	require.Greater(t, r.Tier.Gets, int64(0))
	for _, ty := range r.Run.Types {
		require.Greater(t, ty.Count, int64(0), ty.Type)
		require.NotNil(t, ty.Time, ty.Type)
		x := ty.Time
		require.InDelta(t, 100, x.CPU+x.BufferPool+x.RemoteTier+x.Store+x.Log+x.LockWait+x.Queueing, 1e-6, ty.Type)
	}
	require.Zero(t, r.Sim.Stalls)
	require.Greater(t, r.Host.RunSeconds, 0.0, "wall-clock figures go in host")
	// The purge actor ran, and with a pool a quarter of the data some undo
	// or index pages it needed were not in it: its reads are reported.
	require.Positive(t, r.Purge.ActorSteps)
	require.Positive(t, r.Purge.ActorStoreReads, "purge's reads of pages missing from the pool")
	// The store device's time divides among who held it, purge included.
	u := r.Sim.StoreUse
	require.NotNil(t, u)
	require.InDelta(t, r.Sim.StoreBusyPct, u.Reads+u.Writes+u.ReadAhead+u.Background+u.Purge+u.Vacuum, 1e-9)
	require.Positive(t, u.Reads)
	require.Positive(t, u.Purge, "purge's reads held the device")

	// The progress intervals (a run's --interval does not change its
	// report) and the timeline count every measured transaction; the
	// steps of a type take no more than its response time.
	require.Len(t, intervals, 2, "1 s in 500 ms intervals")
	require.Equal(t, 50*time.Millisecond, TimelineStep(time.Second, 0))
	require.Len(t, r.Run.Timeline.Points, 20)
	var newOrders float64
	for _, p := range r.Run.Timeline.Points {
		newOrders += p.TpmC * r.Run.Timeline.IntervalSeconds / 60
	}
	require.InDelta(t, float64(r.Run.Types[0].Count), newOrders, 1e-6)
	for k, ty := range r.Run.Types {
		var n int64
		for _, iv := range intervals {
			n += iv.Types[k].Count
		}
		require.Equal(t, ty.Count, n, ty.Type)
		require.NotEmpty(t, ty.Steps, ty.Type)
		var stepsUs float64
		for _, st := range ty.Steps {
			stepsUs += st.LatencyUs.Mean * float64(st.Count)
		}
		require.LessOrEqual(t, stepsUs/1e3, ty.Time.MeanMs*float64(ty.Count)*1.0001, ty.Type)
		require.Greater(t, stepsUs/1e3, ty.Time.MeanMs*float64(ty.Count)/2, "%s: the steps are most of the time", ty.Type)
	}
}

// The timeline's interval: the progress interval, or a twentieth of a
// short run rounded down to 1, 2 or 5 times a power of ten.
func TestTimelineStep(t *testing.T) {
	for _, c := range []struct{ duration, interval, want time.Duration }{
		{30 * time.Second, 0, time.Second},
		{5 * time.Second, 0, 200 * time.Millisecond},
		{time.Hour, 0, 10 * time.Second},
		{10 * time.Minute, time.Minute, 20 * time.Second},
		{30 * time.Second, 500 * time.Millisecond, 500 * time.Millisecond},
		{100 * time.Millisecond, 0, 10 * time.Millisecond},
		{2 * time.Second, 0, 100 * time.Millisecond},
		{60 * time.Second, 0, 2 * time.Second},
	} {
		require.Equal(t, c.want, TimelineStep(c.duration, c.interval), "%v %v", c.duration, c.interval)
	}
}

// The report's read-ahead by table is the run's: the consistency check
// after it, whose scans read ahead too, does not count. A job with the
// check reports the same as the job without it.
func TestReadAheadBySpaceIsTheRuns(t *testing.T) {
	base := TPCCConfig{Mode: ModeSim, Warehouses: 1, Scale: tpcc.SmallScale, Terminals: 4, Duration: time.Second,
		Warmup: 200 * time.Millisecond, Seed: 1, PoolSize: 2560 << 10, ReadAhead: true,
		ReadAheadLinear: cache.Linear51, RandomReadAhead: true, Flushing: cache.Flushing51,
		Hardware: hw.Spec{Store: "sata-ssd", Cores: 2}}
	var by [2][]report.ReadAheadSpace
	for i, check := range []bool{false, true} {
		c := base
		c.Phases = Phases{Load: true, Run: true, Check: check}
		rep, err := TPCC(context.Background(), c, Hooks{})
		require.NoError(t, err)
		require.True(t, rep.Passed(), "%v", rep.Errors)
		by[i] = rep.Background.ReadAheadBySpace
	}
	require.NotEmpty(t, by[0], "the run reads ahead")
	require.Equal(t, by[0], by[1])
}
