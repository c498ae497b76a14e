package sched

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/tier/slab"
	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/tpcc"
)

// Waffle Grid's requests as the scheduler prices them (waffle.go): exact
// times on a network whose numbers are round, and the requests the tier
// server serves against the meters' counts, for each mode.

// waffleNet: a 100 µs round trip, 1 ms to carry a 16 KiB page, 50 µs of
// a memcached worker thread a request.
var waffleNet = hw.Network{RoundTrip: hw.Duration(100 * time.Microsecond), Bandwidth: 16384 * 1000,
	ServerRequest: hw.Duration(50 * time.Microsecond)}

// openWaffle makes table "a" of 3000 rows (200 leaves), then opens it
// with the scheduler's hooks, a pool of 32 frames and a memcached 1.2.5
// model of threads worker threads and a limit of memcachedBytes behind it
// in the given Waffle mode, on
// a CPU and a store that cost nothing, and scans the table once outside
// any run (no virtual time passes): the pool ends holding the last
// leaves, the tier (in LRU mode) the pages the scan evicted.
func openWaffle(t *testing.T, net hw.Network, threads int, memcachedBytes int64, o cache.Options) (*simDB, *slab.Tier) {
	t.Helper()
	dir := t.TempDir()
	db, err := engine.Open(&engine.Options{Dir: dir, Options: cache.Options{PoolSize: 4 << 20}})
	require.NoError(t, err)
	tb, err := db.CreateTable(engine.Table{Name: "a", Columns: []engine.Column{
		{Name: "k", Type: engine.TypeInt}, {Name: "v", Type: engine.TypeInt},
		{Name: "pad", Type: engine.TypeVarchar, Length: 1000}}, PrimaryKey: []string{"k"}})
	require.NoError(t, err)
	tx := db.Begin(nil)
	pad := strings.Repeat("p", 1000)
	for k := int64(1); k <= 3000; k++ {
		require.NoError(t, tx.Insert(tb, engine.Row{engine.Int(k), engine.Int(0), engine.Str(pad)}))
	}
	require.NoError(t, tx.Commit())
	require.NoError(t, db.Close())

	p := slab.Memcached125(4, memcachedBytes)
	p.Threads = threads
	tr, err := slab.NewTier(p)
	require.NoError(t, err)
	machine := testHW(hw.CPUProfile{}, freeDevice)
	machine.Network = net
	o.PoolSize, o.Tier = 32*16384, tr
	eo := &engine.Options{Dir: dir, Options: o, Commit: engine.NoSyncCommit, LockTimeout: time.Second}
	s := New(machine, 16384, true)
	s.SetTierServer(tr.MemcachedStats().Threads)
	s.Install(eo)
	db, err = engine.Open(eo)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close(); _ = tr.Close() })
	s.Attach(db)
	sd := &simDB{db: db, s: s, t: map[string]*engine.TableHandle{}, rows: 3000}
	sd.t["a"], err = db.Table("a")
	require.NoError(t, err)
	n, err := scanAll(db, sd.t["a"])
	require.NoError(t, err)
	require.Equal(t, 3000, n)
	return sd, tr
}

// get reads key k in a transaction charged to m.
func (sd *simDB) get(m *engine.Meter, k int64) error {
	tx := sd.db.Begin(m)
	if _, _, err := tx.Get(sd.t["a"], key(k), nil); err != nil {
		return err
	}
	return tx.Commit()
}

// One read of a page in memcached, LRU mode, synchronous SETs: the GET
// brings the page (a round trip and its transfer: 1.1 ms), the eviction
// that made room SETs the victim on the reader's path (1.1 ms more), and
// the page read back is deleted (a round trip: 0.1 ms). 2.3 ms, three
// requests served.
func TestSimWaffleLRUPricesGetSetDelete(t *testing.T) {
	sd, _ := openWaffle(t, waffleNet, 1, 64<<20, cache.Options{Waffle: cache.WaffleLRU})
	var m engine.Meter
	var end int64
	sd.run(t, func(env tpcc.Env) error {
		err := sd.get(&m, 1)
		end = at(env)
		return err
	})
	require.Equal(t, int64(1), m.TierGets)
	require.Equal(t, int64(1), m.TierHits)
	require.Equal(t, int64(1), m.TierPuts)
	require.Equal(t, int64(1), m.TierDeletes)
	require.Equal(t, int64(2300*time.Microsecond), end)
	require.Equal(t, int64(3), sd.s.TierRequests())
	_, _, _, net := sd.s.Busy()
	require.Equal(t, int64(2*time.Millisecond), net, "two pages carried")
}

// With WaffleKeepOnRead (the 2008 releases) the page stays in memcached:
// no DELETE, 2.2 ms.
func TestSimWaffleKeepOnReadNoDelete(t *testing.T) {
	sd, _ := openWaffle(t, waffleNet, 1, 64<<20, cache.Options{Waffle: cache.WaffleLRU, WaffleKeepOnRead: true})
	var m engine.Meter
	var end int64
	sd.run(t, func(env tpcc.Env) error {
		err := sd.get(&m, 1)
		end = at(env)
		return err
	})
	require.Equal(t, int64(0), m.TierDeletes)
	require.Equal(t, int64(1), m.TierPuts)
	require.Equal(t, int64(2200*time.Microsecond), end)
	require.Equal(t, int64(2), sd.s.TierRequests())
}

// With a SET queue the eviction's SET leaves the reader's path: it is
// queued (TierSetsQueued) and the sender sends it in the background; the
// reader pays the GET and the DELETE only (1.2 ms).
func TestSimWaffleSetQueueSendsInBackground(t *testing.T) {
	sd, _ := openWaffle(t, waffleNet, 1, 64<<20, cache.Options{Waffle: cache.WaffleLRU, WaffleSetQueue: 8})
	var m engine.Meter
	var end int64
	// The scan's evictions filled the queue: send them first.
	require.Equal(t, 8, sd.db.Pool().QueuedSets())
	sd.db.Pool().SendStep(nil, 8)
	bg0 := sd.db.Pool().BackgroundMeter()
	sd.run(t, func(env tpcc.Env) error {
		err := sd.get(&m, 1)
		end = at(env)
		_ = env.Now() // a later yield point: the sender's turn
		return err
	})
	require.Equal(t, int64(0), m.TierPuts)
	require.Equal(t, int64(1), m.TierSetsQueued)
	require.Equal(t, int64(1), m.TierDeletes)
	require.Equal(t, int64(1200*time.Microsecond), end)
	bg := sd.db.Pool().BackgroundMeter()
	require.Equal(t, int64(1), bg.TierPuts-bg0.TierPuts, "the sender's SET, on the background meter")
	require.Equal(t, int64(1), sd.s.SenderSETs())
	require.Zero(t, sd.db.Pool().QueuedSets())
	require.Equal(t, int64(3), sd.s.TierRequests())
}

// Non-LRU mode: a page read back is a GET hit and nothing more (no
// DELETE; the eviction of a clean page SETs nothing): 1.1 ms. A page
// memcached no longer holds (1 MiB of it keeps the scan's last 60 pages)
// is a GET miss and a store read, whose SET is off the foreground path,
// on the background meter: the reader pays the round trip, 0.1 ms.
func TestSimWaffleNonLRU(t *testing.T) {
	for _, tc := range []struct {
		name       string
		bytes      int64
		hits, sets int64
		end        time.Duration
	}{{"hit", 64 << 20, 1, 0, 1100 * time.Microsecond}, {"miss", 1 << 20, 0, 1, 100 * time.Microsecond}} {
		sd, _ := openWaffle(t, waffleNet, 1, tc.bytes, cache.Options{Waffle: cache.WaffleNonLRU})
		var m engine.Meter
		var end int64
		bg0 := sd.db.Pool().BackgroundMeter()
		sd.run(t, func(env tpcc.Env) error {
			err := sd.get(&m, 1)
			end = at(env)
			return err
		})
		require.Equal(t, int64(1), m.TierGets, tc.name)
		require.Equal(t, tc.hits, m.TierHits, tc.name)
		require.Zero(t, m.TierPuts, tc.name)
		require.Zero(t, m.TierDeletes, tc.name)
		require.Equal(t, int64(tc.end), end, tc.name)
		bg := sd.db.Pool().BackgroundMeter()
		require.Equal(t, tc.sets, bg.TierPuts-bg0.TierPuts, tc.name)
		require.Equal(t, 1+tc.sets, sd.s.TierRequests(), tc.name)
	}
}

// memcached's worker threads are a resource. Two readers of pages in
// memcached, on a link that carries pages for free: each pays a GET and
// its eviction's SET (a round trip each, 200 µs alone). The second
// reader's descent meets a frame whose read the first reader made (ready
// at 100 µs, the end of its GET) and waits for it, so its own GET
// arrives at 100 µs; with
// one thread its GET waits for the first reader's SET (100 to 150 µs),
// so it ends at 350 µs; with four threads nothing waits: 300 µs.
func TestSimWaffleServerThreads(t *testing.T) {
	net := waffleNet
	net.Bandwidth = 1 << 62
	var got [2][2]int64
	for i, threads := range []int{1, 4} {
		sd, _ := openWaffle(t, net, threads, 64<<20, cache.Options{Waffle: cache.WaffleLRU, WaffleKeepOnRead: true})
		var ms [2]engine.Meter
		read := func(n int, k int64) func(env tpcc.Env) error {
			return func(env tpcc.Env) error {
				tx := sd.db.Begin(&ms[n])
				_, _, err := tx.Get(sd.t["a"], key(k), nil)
				got[i][n] = at(env)
				return err
			}
		}
		sd.run(t, read(0, 1), read(1, 500))
		for n := range ms {
			require.Equal(t, int64(1), ms[n].TierHits, "%d threads, reader %d", threads, n)
			require.Equal(t, int64(1), ms[n].TierPuts, "%d threads, reader %d", threads, n)
		}
		require.Equal(t, int64(4), sd.s.TierRequests())
	}
	us := int64(time.Microsecond)
	require.Equal(t, [2][2]int64{{200 * us, 350 * us}, {200 * us, 300 * us}}, got)
}
