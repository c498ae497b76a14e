package sched

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/tpcc"
)

// The scheduler's arithmetic and waiting rules, on small tables with
// hardware whose numbers make every expected time a round figure: the
// timelines with exact times are data (testdata/, run by TestTimeline in
// timeline_test.go, which says how to read and write them); here are the
// helpers both share, and the test whose claims are orderings rather than
// times.

// testDisk serves one request at a time: 10 ms of latency and 1 ms to
// transfer a 16 KiB page, so a read takes 11 ms and holds the disk for
// 11 ms (10 ms between starts, plus the transfer). A sync takes 5 ms.
var testDisk = hw.Device{ReadLatency: hw.Duration(10 * time.Millisecond), WriteLatency: hw.Duration(10 * time.Millisecond),
	SyncLatency: hw.Duration(5 * time.Millisecond), IOPS: 100, ReadBandwidth: 16384 * 1000, WriteBandwidth: 16384 * 1000}

// freeDevice costs nothing but its syncs (5 ms).
var freeDevice = hw.Device{SyncLatency: hw.Duration(5 * time.Millisecond), ReadBandwidth: 1 << 62, WriteBandwidth: 1 << 62}

func testHW(cpu hw.CPUProfile, store hw.Device) hw.Machine {
	return hw.Machine{Cores: 4, CPUName: "test", CPU: cpu, StoreName: "test", Store: store, LogName: "test", Log: store,
		NetworkName: "test", Network: hw.Network{Bandwidth: 1 << 62}}
}

type simDB struct {
	db *engine.DB
	s  *Scheduler
	t  map[string]*engine.TableHandle
	// rows is the rows of each table, and space the tables' space as
	// loaded (read before the database is opened cold).
	rows  int64
	space []engine.SpaceStats
}

// openSimRows makes tables of rows rows (k 1..rows, v 0, a 1000-byte pad:
// 15 rows a leaf, so 100 rows are a tree of two levels), closes the
// database and opens it again with the scheduler's hooks for machine,
// read-ahead on or off: the pool starts cold, but for the trees' roots,
// which opening the tables reads. Lock waits time out after 1 s.
func openSimRows(t *testing.T, machine hw.Machine, commit engine.CommitMode, rows int64, readAhead bool, names ...string) *simDB {
	t.Helper()
	return openSimTorn(t, machine, commit, rows, readAhead, cache.TornPagesNone, engine.LockReleaseDefault, names...)
}

// openSimTorn is openSimRows with a torn-page protection and a lock
// release for the simulated open.
func openSimTorn(t *testing.T, machine hw.Machine, commit engine.CommitMode, rows int64, readAhead bool, torn cache.TornPages,
	release engine.LockRelease, names ...string) *simDB {
	t.Helper()
	return openSimOpts(t, machine, commit, rows, func(o *engine.Options) {
		o.ReadAhead, o.TornPages, o.EarlyLockRelease = readAhead, torn, release
	}, names...)
}

// openSimOpts is openSimRows with the simulated open's options changed by
// opt.
func openSimOpts(t *testing.T, machine hw.Machine, commit engine.CommitMode, rows int64, opt func(o *engine.Options),
	names ...string) *simDB {
	t.Helper()
	dir := t.TempDir()
	db, err := engine.Open(&engine.Options{Dir: dir, Options: cache.Options{PoolSize: 4 << 20}})
	require.NoError(t, err)
	pad := strings.Repeat("p", 1000)
	for _, n := range names {
		tb, err := db.CreateTable(engine.Table{Name: n, Columns: []engine.Column{
			{Name: "k", Type: engine.TypeInt}, {Name: "v", Type: engine.TypeInt},
			{Name: "pad", Type: engine.TypeVarchar, Length: 1000}}, PrimaryKey: []string{"k"}})
		require.NoError(t, err)
		tx := db.Begin(nil)
		for k := int64(1); k <= rows; k++ {
			require.NoError(t, tx.Insert(tb, engine.Row{engine.Int(k), engine.Int(0), engine.Str(pad)}))
		}
		require.NoError(t, tx.Commit())
	}
	space, err := db.SpaceReport()
	require.NoError(t, err)
	require.NoError(t, db.Close())

	// Clustered tables only: HeapVersionsOff says no heap table will
	// keep versions, so Attach adds no vacuum actor.
	o := &engine.Options{Dir: dir, Options: cache.Options{PoolSize: 16 << 20}, Commit: commit,
		LockTimeout: time.Second, HeapVersions: engine.HeapVersionsOff}
	opt(o)
	s := New(machine, 16384, false)
	s.Install(o)
	db, err = engine.Open(o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	s.Attach(db)
	sd := &simDB{db: db, s: s, t: map[string]*engine.TableHandle{}, rows: rows, space: space}
	for _, n := range names {
		sd.t[n], err = db.Table(n)
		require.NoError(t, err)
	}
	return sd
}

func key(k int64) []engine.Value { return []engine.Value{engine.Int(k)} }

// updateKeys sets v = k in rows 1 to n of tb, a committed transaction
// each.
func (sd *simDB) updateKeys(tb *engine.TableHandle, n int64) error {
	for k := int64(1); k <= n; k++ {
		tx := sd.db.Begin(nil)
		if err := tx.Update(tb, key(k), []engine.Set{{Column: "v", Value: engine.Int(k)}}); err != nil {
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// at reads a terminal's clock (a yield point) as virtual nanoseconds.
func at(env tpcc.Env) int64 { return int64(env.Now().Sub(Epoch)) }

// run runs the terminals' functions, each given its Env, and fails on
// any error.
func (sd *simDB) run(t *testing.T, fs ...func(env tpcc.Env) error) {
	t.Helper()
	envs := make([]tpcc.Env, len(fs))
	for i := range fs {
		envs[i] = sd.s.ForTerminal(i)
	}
	wrapped := make([]func() error, len(fs))
	for i, f := range fs {
		wrapped[i] = func() error { return f(envs[i]) }
	}
	for i, err := range sd.s.Run(wrapped) {
		require.NoError(t, err, "terminal %d", i)
	}
}

// scanAll reads every row of table in one Scan call.
func scanAll(db *engine.DB, tb *engine.TableHandle) (int, error) {
	tx := db.Begin(nil)
	cur, err := tx.Scan(tb, engine.ScanOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for cur.Next() {
		n++
	}
	if err := errors.Join(cur.Err(), cur.Close()); err != nil {
		return n, err
	}
	return n, tx.Commit()
}

// Read-ahead is background work, but a page it brings in is not ready
// before the device has delivered it, even to the scan that caused it
// and used it in the same call: the scan cannot end before the device
// has finished the reads, and read-ahead still beats a read per page
// (one seek per extent instead of one per page).
func TestSimReadAheadPagesAreReadyWhenDelivered(t *testing.T) {
	var ends [2]int64
	for i, ra := range []bool{false, true} {
		sd := openSimRows(t, testHW(hw.CPUProfile{}, testDisk), engine.NoSyncCommit, 3000, ra, "a")
		sd.run(t, func(env tpcc.Env) error {
			_, err := scanAll(sd.db, sd.t["a"])
			ends[i] = at(env)
			return err
		})
		bg := sd.db.Pool().BackgroundMeter()
		_, storeBusy, _, _ := sd.s.Busy()
		if ra {
			require.Positive(t, bg.ReadAheads)
			require.Zero(t, bg.ReadAheadUnused)
		} else {
			require.Zero(t, bg.ReadAheads)
		}
		require.GreaterOrEqual(t, ends[i], sd.s.store.free, "read-ahead %v: the scan ended before the device delivered its pages", ra)
		require.GreaterOrEqual(t, ends[i], storeBusy)
	}
	require.Less(t, ends[1], ends[0], "read-ahead reads whole extents with one seek each")
}

// The purge actor: a step every PurgeInterval of virtual time, at the
// first yield point at or after it, with no terminal current. A read view
// held by terminal 0 keeps the undo logs of terminal 1's three committed
// updates on the history list (the purge after each commit may not free
// them); terminal 0 ends its transaction with a rollback, which purges
// nothing, so the three logs are the actor's: its next step purges all
// three, on its own meter. Twice, the same steps: it is deterministic.
func TestSimPurgeActor(t *testing.T) {
	var first Maintenance
	for run := range 2 {
		sd := openSimRows(t, testHW(hw.CPUProfile{}, freeDevice), engine.NoSyncCommit, 100, false, "a")
		tb := sd.t["a"]
		var rolledBackAt int64
		sd.run(t, func(env tpcc.Env) error {
			tx := sd.db.BeginTx(nil, engine.TxOptions{Isolation: engine.RepeatableRead})
			if _, _, err := tx.Get(tb, key(1), nil); err != nil { // opens the view
				return err
			}
			env.Sleep(3 * time.Millisecond)
			if err := tx.Rollback(); err != nil {
				return err
			}
			rolledBackAt = at(env)
			if lag := sd.db.Purge().Lag; lag != 3 {
				return fmt.Errorf("history length %d after the view closed, want 3: the logs wait for the actor", lag)
			}
			env.Sleep(2 * PurgeInterval)
			at(env)
			return nil
		}, func(env tpcc.Env) error {
			env.Sleep(time.Millisecond)
			return sd.updateKeys(tb, 3)
		})
		p := sd.s.Purge()
		require.NoError(t, p.Err)
		require.Equal(t, int64(3), p.Done, "the actor purged the three logs")
		require.Equal(t, int64(3), p.Meter.UndoLogsPurged)
		require.Equal(t, int64(3), p.MaxHistory)
		require.Zero(t, p.History)
		require.Zero(t, sd.db.Purge().Lag)
		require.Less(t, rolledBackAt, int64(3*PurgeInterval))
		require.Positive(t, p.Steps)
		require.Zero(t, sd.s.Vacuum().Steps, "no vacuum actor without SetVacuum")
		if run == 0 {
			first = p
		} else {
			require.Equal(t, first.Steps, p.Steps, "deterministic")
			require.Equal(t, first.Meter.String(), p.Meter.String(), "deterministic")
		}
	}
}

// The store device's background queues (storeSlot): on a busy device the
// asynchronous writers' queue has a turn before every terminal request,
// and a synchronous requester's (purge's) one per round of the running
// terminals' requests, four here; on an idle device they run back to
// back. Exact start times, and the device's busy time is every request's.
func TestStoreQueuesShare(t *testing.T) {
	s := &Scheduler{left: 4}
	s.store.free = 100
	s.bg.add(7)
	s.bg.add(7)
	for range 3 {
		s.purgeQ.add(10)
	}
	var starts []int64
	for range 8 {
		starts = append(starts, s.storeSlot(0, 1, StoreReads))
	}
	// 1: a write (100-107); 2: a write (108-115); 3: none; 4: purge's
	// turn (117-127); 5, 6, 7: none; 8: purge's turn (131-141).
	require.Equal(t, []int64{107, 115, 116, 127, 128, 129, 130, 141}, starts)
	require.Zero(t, s.bg.pending())
	require.Equal(t, int64(1), s.purgeQ.pending())
	// Idle from 142: the last purge request runs then, before a request
	// at 1,000 that finds the device free.
	require.Equal(t, int64(1000), s.storeSlot(1000, 1, StoreReads))
	require.Zero(t, s.purgeQ.pending())
	_, storeBusy, _, _ := s.Busy()
	require.Equal(t, int64(2*7+3*10+9), storeBusy)
	require.Equal(t, [NumStoreUses]int64{StoreReads: 9, StoreBackground: 2 * 7, StorePurge: 3 * 10}, s.StoreUse())
}

// Merged in-place writes (MySQL 5.1's simulated AIO) hold the store
// device for their transfer alone, spread evenly over the writes: of
// four writes two merged, the second and the fourth.
func TestStoreOpsMergedWrites(t *testing.T) {
	dev := hw.Device{ReadLatency: hw.Duration(4 * time.Millisecond), WriteLatency: hw.Duration(4 * time.Millisecond),
		ReadBandwidth: 16384 * 1000, WriteBandwidth: 16384 * 1000, SyncLatency: hw.Duration(6 * time.Millisecond), IOPS: 200}
	s := New(testHW(hw.CPUProfile{}, dev), 16384, false)
	var d hw.Vector
	d[hw.EventStoreWrite], d[hw.EventStoreWriteMerged] = 4, 2
	var occ []int64
	s.storeOps(&d, func(op storeOp) { occ = append(occ, op.occ) })
	xfer := int64(time.Millisecond)          // a 16 KiB page at 16,384,000 bytes a second
	full := int64(5*time.Millisecond) + xfer // a request's IOPS gap (200 a second) and its transfer
	require.Equal(t, []int64{full, xfer, full, xfer}, occ)
}

// The purge actor is one thread: a step that falls due while its last
// step's reads are still queued on the store device waits for them
// (Maintenance.Waits), and runs once the device has served them.
func TestSimPurgeActorWaitsForItsReads(t *testing.T) {
	s := &Scheduler{left: 1}
	s.storeOcc[0] = 1000
	s.store.free = 1 << 40 // busy: nothing of the queue is served by idle time
	s.purge = func(m *engine.Meter) (int, error) {
		m.StoreReads += 5
		return 1, nil
	}
	s.maintain(0)
	require.Equal(t, int64(5), s.purgeQ.pending())
	s.maintain(int64(PurgeInterval))
	require.Equal(t, Maintenance{Steps: 1, Done: 1, Waits: 1, Meter: engine.Meter{Meter: cache.Meter{StoreReads: 5}}}, s.purgeWork)
	// Five terminal requests serve the five reads (one terminal: a turn
	// each), then the next step runs.
	for range 5 {
		s.storeSlot(0, 1, StoreReads)
	}
	require.Zero(t, s.purgeQ.pending())
	s.maintain(2 * int64(PurgeInterval))
	require.Equal(t, int64(2), s.purgeWork.Steps)
	require.Equal(t, int64(1), s.purgeWork.Waits)
}

// Under MySQL 5.1's flushing, purge is the master thread's: no purge actor
// step every PurgeInterval, and a full purge (steps until one purges
// nothing) in every tenth one-second round, before its checkpoint. The
// undo logs of three committed updates stay on the history list for the
// first nine seconds, and are gone after the tenth.
func TestSimPurge51InMasterThread(t *testing.T) {
	sd := openSimOpts(t, testHW(hw.CPUProfile{}, freeDevice), engine.NoSyncCommit, 100, func(o *engine.Options) {
		o.Flushing = cache.Flushing51
	}, "a")
	tb := sd.t["a"]
	sd.run(t, func(env tpcc.Env) error {
		if err := sd.updateKeys(tb, 3); err != nil {
			return err
		}
		env.Sleep(9500 * time.Millisecond)
		at(env)
		if lag, steps := sd.db.Purge().Lag, sd.s.Purge().Steps; lag != 3 || steps != 0 {
			return fmt.Errorf("at 9.5 s: history %d, purge steps %d; want 3 and 0", lag, steps)
		}
		env.Sleep(time.Second)
		at(env)
		return nil
	})
	p := sd.s.Purge()
	require.NoError(t, p.Err)
	require.Zero(t, sd.db.Purge().Lag)
	require.Equal(t, Maintenance{Steps: 2, Done: 3, MaxHistory: 3, Meter: p.Meter}, p, "one step purged the three, the next nothing")
	require.Equal(t, int64(3), p.Meter.UndoLogsPurged)
}

// SetVacuum's step runs after purge's, at the same points, on a meter of
// its own (the hook the heap organizations' vacuum takes).
func TestSimVacuumHook(t *testing.T) {
	sd := openSimRows(t, testHW(hw.CPUProfile{}, freeDevice), engine.NoSyncCommit, 10, false, "a")
	var order []string
	purge := sd.s.purge
	sd.s.purge = func(m *engine.Meter) (int, error) { order = append(order, "purge"); return purge(m) }
	sd.s.SetVacuum(func(m *engine.Meter) (int, error) {
		order = append(order, "vacuum")
		m.HeapPrunes++
		return 1, nil
	})
	sd.run(t, func(env tpcc.Env) error {
		env.Sleep(PurgeInterval)
		at(env)
		env.Sleep(PurgeInterval)
		at(env)
		return nil
	})
	v := sd.s.Vacuum()
	require.Equal(t, int64(2), v.Steps)
	require.Equal(t, int64(2), v.Done)
	require.Equal(t, int64(2), v.Meter.HeapPrunes)
	require.Equal(t, []string{"purge", "vacuum", "purge", "vacuum"}, order)
}

// A terminal's ORDER BY is priced by hw.SortTime: its CPU on a core and
// its temporary files' requests on the store device. With a CPU profile
// that prices no other event and the table's pages already in the pool,
// the sort's call takes exactly that time.
func TestSimSortPriced(t *testing.T) {
	dev := hw.Device{ReadLatency: hw.Duration(50 * time.Microsecond), WriteLatency: hw.Duration(50 * time.Microsecond),
		SyncLatency: hw.Duration(time.Millisecond), ReadBandwidth: 1 << 62, WriteBandwidth: 1 << 62}
	sd := openSimRows(t, testHW(hw.CPUProfile{}, dev), engine.NoSyncCommit, 300, false, "a")
	tb := sd.t["a"]
	var m engine.Meter
	var took int64
	sd.run(t, func(env tpcc.Env) error {
		tx := sd.db.Begin(&m)
		defer func() { _ = tx.Commit() }()
		c, err := tx.Scan(tb, engine.ScanOptions{}) // brings the pages in
		if err != nil {
			return err
		}
		for c.Next() {
		}
		if err := c.Close(); err != nil {
			return err
		}
		before := m.SortCounts
		start := at(env)
		// A buffer too small for the rows: runs on temporary files.
		s, err := tx.Sort(tb, engine.SortOptions{OrderBy: []engine.SortKey{{Column: "pad", Desc: true}, {Column: "k"}},
			SortBufferSize: engine.MinSortBufferSize, ScanOptions: engine.ScanOptions{Columns: []string{"k", "v"}}})
		if err != nil {
			return err
		}
		for s.Next() {
		}
		if err := s.Close(); err != nil {
			return err
		}
		took = at(env) - start
		m.SortCounts.Sub(&before)
		return nil
	})
	require.Positive(t, m.SortTempWrites, "the sort wrote runs")
	require.Positive(t, m.SortCounts.Compares()+m.SortCounts.SortCollCompareTotal(), "%s", m.SortCounts.String())
	cpu, io := hw.SortTime(&sd.s.machine, &hw.DefaultSortCosts, &m.SortCounts)
	require.Positive(t, io)
	require.Equal(t, int64(cpu+io), took, "sort cpu %v, temporary files %v", cpu, io)
}

// MySQL 5.1's master thread waits for its own batch's writes, not for the
// background requests queued after them: the queue is first in, first
// out, so the batch is done once the requests up to its last are served,
// however many read-ahead reads wait behind it.
func TestMasterWaitsForItsOwnBatch(t *testing.T) {
	s := &Scheduler{left: 1}
	s.store.free = 1 << 40 // busy: only terminal requests' turns serve the queue
	s.bg.add(7)            // a read-ahead read queued before the batch
	for range 3 {          // the master's batch
		s.bg.add(7)
	}
	s.wl.batchEnd = s.bg.added
	for range 5 { // read-ahead reads queued after it
		s.bg.add(7)
	}
	var waits []bool
	for range 5 {
		waits = append(waits, s.masterBusy())
		s.storeSlot(0, 1, StoreReads) // one background turn before each
	}
	require.Equal(t, []bool{true, true, true, true, false}, waits)
	require.Equal(t, int64(4), s.bg.pending(), "the batch is done with four reads still queued")
	s.purgeQ.add(10)
	require.True(t, s.masterBusy(), "its own purge's requests hold it")
}

// A purge step that freed frames with MySQL 5.1's LRU batches queues its
// reads in its own share and the batches' writes with the asynchronous
// writers (posted at once, as buf_flush_batch does); its next step waits
// for both.
func TestSimPurgeBatchWritesQueueAsync(t *testing.T) {
	s := &Scheduler{left: 1}
	s.storeOcc = [2]int64{1000, 1000}
	s.store.free = 1 << 40 // busy: only terminal requests' turns serve the queues
	s.purge = func(m *engine.Meter) (int, error) {
		m.StoreReads += 2
		m.StoreWrites += 3
		m.LRUFlushBatches++
		return 1, nil
	}
	s.maintain(0)
	require.Equal(t, int64(2), s.purgeQ.pending(), "the reads in purge's own queue")
	require.Equal(t, int64(3), s.bg.pending(), "the batch's writes with the asynchronous writers")
	for range 2 { // each terminal request: a turn of each queue
		s.storeSlot(0, 1, StoreReads)
	}
	require.Zero(t, s.purgeQ.pending())
	require.Equal(t, int64(1), s.bg.pending())
	s.maintain(int64(PurgeInterval))
	require.Equal(t, int64(1), s.purgeWork.Steps, "a write of its batch is still queued")
	require.Equal(t, int64(1), s.purgeWork.Waits)
	s.storeSlot(0, 1, StoreReads)
	s.maintain(2 * int64(PurgeInterval))
	require.Equal(t, int64(2), s.purgeWork.Steps)
}

// Under MySQL 5.1's flushing a purge step's LRU batches wait as 5.1's
// do: with the doublewrite buffer the next step waits until every write
// queued so far is done (os_aio_wait_until_no_pending_writes); without
// it, only until the AIO write array has a free slot, so three writes
// over the array's size hold it for three turns.
func TestSimPurgeBatchWrites51(t *testing.T) {
	for _, dw := range []bool{true, false} {
		s := &Scheduler{left: 1}
		s.storeOcc = [2]int64{1000, 1000}
		s.store.free = 1 << 40 // busy: only terminal requests' turns serve the queues
		s.wl.flushing51, s.wl.doublewrite = true, dw
		s.purge = func(m *engine.Meter) (int, error) {
			m.StoreWrites += AIOWriteSlots + 3
			m.LRUFlushBatches++
			return 1, nil
		}
		s.purgeStep(0)
		require.Equal(t, int64(AIOWriteSlots+3), s.bg.pending())
		turns := 0
		for s.actorBusy(&s.purgeQ) {
			s.storeSlot(0, 1, StoreReads)
			turns++
		}
		want := AIOWriteSlots + 3
		if !dw {
			want = 3
		}
		require.Equal(t, want, turns, "doublewrite %v", dw)
	}
}

// MySQL 5.1's full purge is a sequence in time: the master thread takes
// its next step once the last one's reads are served, makes the round's
// checkpoint after the step that purges nothing, and its next round is
// due the round's interval after that.
func TestSimFullPurge51Sequenced(t *testing.T) {
	s := &Scheduler{left: 1}
	s.storeOcc = [2]int64{1000, 1000}
	s.store.free = 1 << 40 // busy: only terminal requests' turns serve the queues
	s.wl.flushing51 = true
	left := 2
	s.purge = func(m *engine.Meter) (int, error) {
		if left == 0 {
			return 0, nil
		}
		left--
		m.StoreReads += 2
		return 1, nil
	}
	// The tenth round ran at 50 and began the purge.
	s.wl.nextMaster, s.wl.masterLast = 50+int64(time.Second), 50
	s.wl.purgeCkpts, s.wl.purgeNext = 1, time.Second
	s.fullPurgeStep(50)
	steps := []int64{s.purgeWork.Steps}
	for _, at := range []int64{100, 200, 300, 400, 500} {
		s.masterWork(at)
		steps = append(steps, s.purgeWork.Steps)
		if at == 100 || at == 300 {
			for range 2 { // its two reads served
				s.storeSlot(0, 1, StoreReads)
			}
		}
	}
	require.Equal(t, []int64{1, 1, 2, 2, 3, 3}, steps, "a step once the last one's reads are served")
	require.Zero(t, s.wl.purgeCkpts, "the purge ended with the third step")
	require.Equal(t, int64(400), s.wl.masterLast)
	require.Equal(t, 400+int64(time.Second), s.wl.nextMaster, "the next round a second after the purge's end")
}

// Under MySQL 5.1's flushing without a doublewrite buffer a terminal's
// LRU batches are posted: their writes hold the store device in the
// asynchronous writers' queue and no terminal's clock waits for them.
// With the buffer the terminal waits for them (StoreWrites), and nothing
// is posted. Updating 2,000 rows (134 leaves) through a pool of 128
// frames makes LRU batches either way; the store's write time is every
// write's, exactly.
func TestSim51LRUBatchesPosted(t *testing.T) {
	dev := hw.Device{ReadLatency: hw.Duration(4 * time.Millisecond), WriteLatency: hw.Duration(4 * time.Millisecond),
		ReadBandwidth: 16384 * 1000, WriteBandwidth: 16384 * 1000, SyncLatency: hw.Duration(6 * time.Millisecond), IOPS: 200}
	for _, torn := range []cache.TornPages{cache.TornPagesNone, cache.TornPagesDoublewrite} {
		t.Run(fmt.Sprint(torn == cache.TornPagesDoublewrite), func(t *testing.T) {
			sd := openSimOpts(t, testHW(hw.CPUProfile{}, dev), engine.NoSyncCommit, 2000, func(o *engine.Options) {
				o.Flushing, o.TornPages, o.PoolSize = cache.Flushing51, torn, 128*16384
			}, "a")
			tb := sd.t["a"]
			var m engine.Meter
			bg0 := sd.s.pool.BackgroundMeter()
			sd.run(t, func(env tpcc.Env) error {
				for k := int64(1); k <= 2000; k++ {
					tx := sd.db.Begin(&m)
					if err := tx.Update(tb, key(k), []engine.Set{{Column: "v", Value: engine.Int(k)}}); err != nil {
						return err
					}
					if err := tx.Commit(); err != nil {
						return err
					}
				}
				return nil
			})
			require.Positive(t, m.LRUFlushBatches)
			require.Equal(t, m.StoreWrites, m.LRUFlushPages, "every write an LRU batch's")
			use := sd.s.StoreUse()
			// A merged write holds the device for its transfer (1 ms),
			// any other for the IOPS gap (5 ms) and its transfer.
			occ := func(m cache.Meter) int64 {
				return (m.StoreWrites-m.StoreWritesMerged)*int64(6*time.Millisecond) + m.StoreWritesMerged*int64(time.Millisecond)
			}
			writes := occ(m.Meter)
			if torn == cache.TornPagesNone {
				require.Equal(t, m.LRUFlushBatches, sd.s.PostedLRUBatches())
				require.Zero(t, use[StoreWrites], "no terminal waited for a write")
				queued := int64(0) // posted and not yet served when the run ended
				for _, r := range sd.s.bg.runs {
					queued += r.n * r.occ
				}
				// The master thread's flush-list batches and its
				// checkpoints' syncs join them.
				bg := sd.s.pool.BackgroundMeter()
				bg.Sub(&bg0)
				require.Positive(t, use[StoreBackground])
				require.Equal(t, writes+occ(bg)+bg.StoreSyncs*int64(6*time.Millisecond), use[StoreBackground]+queued)
				return
			}
			require.Zero(t, sd.s.PostedLRUBatches())
			require.Zero(t, use[StoreBackground])
			require.Greater(t, use[StoreWrites], writes, "the writes, their doublewrite batches and syncs")
		})
	}
}

// Posting a write into a full simulated AIO write array waits for its
// oldest write to be done: with the array full of 7 ns writes, an LRU
// batch of two pages waits for two of them, back to back from the
// device's free time, and leaves the array full.
func TestSim51PostWaitsForASlot(t *testing.T) {
	s := &Scheduler{left: 1}
	s.wl.flushing51 = true
	s.storeOcc = [2]int64{1000, 1000}
	for range AIOWriteSlots {
		s.bg.add(7)
	}
	v := &vterm{s: s, meter: &engine.Meter{}}
	v.meter.LRUFlushBatches, v.meter.LRUFlushPages = 1, 2
	var d hw.Vector
	d[hw.EventStoreWrite] = 2
	s.postLRUWrites(v, &d)
	require.Zero(t, d[hw.EventStoreWrite], "both writes posted")
	require.Equal(t, int64(14), v.now)
	require.Equal(t, int64(14), v.spent[TimeStore])
	require.Equal(t, int64(2), s.PostWaits())
	require.Equal(t, int64(AIOWriteSlots), s.bg.pending())
	require.Equal(t, int64(1), s.PostedLRUBatches())
	// Nothing more to post: the next pricing takes nothing.
	d[hw.EventStoreWrite] = 1
	s.postLRUWrites(v, &d)
	require.Equal(t, int64(1), d[hw.EventStoreWrite], "a write of no LRU batch stays the caller's")
}
