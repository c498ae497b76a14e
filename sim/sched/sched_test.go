package sched

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/tpcc"
)

// The scheduler's arithmetic and waiting rules, on small tables with
// hardware whose numbers make every expected time a round figure.

const ms = int64(time.Millisecond)

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

// openSim makes tables of 100 rows (k 1..100, a 1000-byte pad: 15 rows a
// leaf, so a tree of two levels), closes the database and opens it again
// with the scheduler's hooks: the pool starts cold, but for the trees'
// roots, which opening the tables reads.
func openSim(t *testing.T, machine hw.Machine, commit engine.CommitMode, names ...string) *simDB {
	t.Helper()
	return openSimRows(t, machine, commit, 100, false, names...)
}

// openSimRows is openSim with rows rows a table, and read-ahead on or off.
func openSimRows(t *testing.T, machine hw.Machine, commit engine.CommitMode, rows int64, readAhead bool, names ...string) *simDB {
	t.Helper()
	dir := t.TempDir()
	db, err := engine.Open(&engine.Options{Dir: dir, PoolSize: 4 << 20})
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

	o := &engine.Options{Dir: dir, PoolSize: 16 << 20, Commit: commit, LockTimeout: time.Second, ReadAhead: readAhead}
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

func observe(env tpcc.Env) tpcc.TxObserver { return env.(tpcc.TxObserver) }

// readTwo reads rows 1 and 100 (two leaves) of table and commits.
func readTwo(db *engine.DB, tb *engine.TableHandle, m *engine.Meter) error {
	tx := db.Begin(m)
	for _, k := range []int64{1, 100} {
		if _, ok, err := tx.Get(tb, key(k), nil); err != nil || !ok {
			return errors.Join(err, errors.New("row not found"))
		}
	}
	return tx.Commit()
}

// One terminal, a cold pool, two point reads on a two-level tree and a
// commit: the clock moves by exactly the priced sum, and each share gets
// its part.
func TestSimColdGetAdvancesClockByPricedSum(t *testing.T) {
	cpu := hw.CPUProfile{PageRequest: 500, PoolMiss: 2000, NodeVisit: 1000, LockRequest: 300, Commit: 7000}
	sd := openSim(t, testHW(cpu, testDisk), engine.NoSyncCommit, "a")
	var m engine.Meter
	var end int64
	sd.run(t, func(env tpcc.Env) error {
		observe(env).TxBegin(tpcc.OrderStatusTx)
		if err := readTwo(sd.db, sd.t["a"], &m); err != nil {
			return err
		}
		observe(env).TxEnd(tpcc.OrderStatusTx, true, &m)
		end = at(env)
		return nil
	})
	// What the engine did, fixed by the design: root and leaf twice, the
	// two leaves read from the store.
	require.Equal(t, int64(4), m.NodeVisitsTotal())
	require.Equal(t, int64(4), m.PageRequestsTotal())
	require.Equal(t, int64(2), m.PoolMisses)
	require.Equal(t, int64(2), m.StoreReads)
	require.Equal(t, int64(2), m.LockRequests)
	require.Equal(t, int64(1), m.Commits)
	// Two 11 ms reads, one after the other; 4×1000 + 2×300 + 7000 ns of
	// engine CPU; 4×500 + 2×2000 ns of buffer pool CPU.
	store, cpuNs, pool := 22*ms, int64(4*1000+2*300+7000), int64(4*500+2*2000)
	require.Equal(t, store+cpuNs+pool, end)
	tt := sd.s.Types()[tpcc.OrderStatusTx]
	require.Equal(t, int64(1), tt.Count)
	require.Equal(t, end, tt.Response)
	require.Equal(t, [NumTimeKinds]int64{TimeCPU: cpuNs, TimePool: pool, TimeStore: store}, tt.Spent)
}

// Two terminals read two tables at time 0 on one disk: the second
// terminal's reads queue behind the first's, and the wait is queueing.
func TestSimTwoTerminalsQueueOnOneDisk(t *testing.T) {
	sd := openSim(t, testHW(hw.CPUProfile{}, testDisk), engine.NoSyncCommit, "a", "b")
	var ends [2]int64
	read := func(i int, table string) func(env tpcc.Env) error {
		return func(env tpcc.Env) error {
			observe(env).TxBegin(tpcc.TxType(i))
			if err := readTwo(sd.db, sd.t[table], nil); err != nil {
				return err
			}
			observe(env).TxEnd(tpcc.TxType(i), true, nil)
			ends[i] = at(env)
			return nil
		}
	}
	sd.run(t, read(0, "a"), read(1, "b"))
	// Each Get is priced before the next call runs, and the terminal with
	// the earlier clock runs next. Terminal 0 (the lower number wins the
	// tie at 0) reads its first leaf over [0, 11). Terminal 1's first read
	// arrives at 0 and waits for the disk: [11, 22). Terminal 0's second,
	// at 11: [22, 33). Terminal 1's second, at 22: [33, 44). Each waited
	// 11 ms for the disk at every read but terminal 0's first.
	require.Equal(t, [2]int64{33 * ms, 44 * ms}, ends)
	tt := sd.s.Types()
	require.Equal(t, [NumTimeKinds]int64{TimeStore: 22 * ms, TimeQueue: 11 * ms}, tt[0].Spent)
	require.Equal(t, [NumTimeKinds]int64{TimeStore: 22 * ms, TimeQueue: 22 * ms}, tt[1].Spent)
	_, storeBusy, _, _ := sd.s.Busy()
	require.Equal(t, 44*ms, storeBusy)
}

// A page one terminal is still reading is ready for the other only when
// the read completes: the second terminal finds both pages in the pool,
// reads nothing, and waits for the first terminal's reads (buffer pool
// share).
func TestSimPageInFlightIsReadyWhenItsReadCompletes(t *testing.T) {
	sd := openSim(t, testHW(hw.CPUProfile{}, testDisk), engine.NoSyncCommit, "a")
	var ends [2]int64
	var meters [2]engine.Meter
	read := func(i int) func(env tpcc.Env) error {
		return func(env tpcc.Env) error {
			observe(env).TxBegin(tpcc.TxType(i))
			if err := readTwo(sd.db, sd.t["a"], &meters[i]); err != nil {
				return err
			}
			observe(env).TxEnd(tpcc.TxType(i), true, nil)
			ends[i] = at(env)
			return nil
		}
	}
	sd.run(t, read(0), read(1))
	require.Equal(t, int64(2), meters[0].StoreReads)
	require.Equal(t, int64(0), meters[1].StoreReads)
	require.Equal(t, int64(4), meters[1].PoolHits)
	// Terminal 0 reads leaf 1 over [0, 11) and leaf 100 over [11, 22).
	// Terminal 1, at 0, finds leaf 1 in the pool but ready at 11: its
	// Get ends at 11. Its second Get finds leaf 100 ready at 22.
	require.Equal(t, [2]int64{22 * ms, 22 * ms}, ends)
	require.Equal(t, [NumTimeKinds]int64{TimePool: 22 * ms}, sd.s.Types()[1].Spent)
}

// Two terminals update one row (one district): the second waits for the
// lock, which is granted at the end of the priced interval of the call
// that released it (the first terminal's commit), and the wait is
// reported as lock wait, by the engine's meter and by the breakdown.
func TestSimLockGrantedAtEndOfReleasersInterval(t *testing.T) {
	cpu := hw.CPUProfile{LockRequest: 1000, Commit: 10000}
	sd := openSim(t, testHW(cpu, freeDevice), engine.NoSyncCommit, "district")
	var ends [2]int64
	var meters [2]engine.Meter
	update := func(i int) func(env tpcc.Env) error {
		return func(env tpcc.Env) error {
			observe(env).TxBegin(tpcc.TxType(i))
			tx := sd.db.Begin(&meters[i])
			if err := tx.Update(sd.t["district"], key(1), []engine.Set{{Column: "v", Value: engine.Int(int64(i))}}); err != nil {
				return err
			}
			if err := tx.Commit(); err != nil {
				return err
			}
			observe(env).TxEnd(tpcc.TxType(i), true, nil)
			ends[i] = at(env)
			return nil
		}
	}
	sd.run(t, update(0), update(1))
	// Terminal 0: its update's lock request (1 µs), then its commit
	// (10 µs), which releases the lock: 11 µs. Terminal 1 asks for the
	// lock at 0, is priced its request (1 µs) and parks at 1 µs; it is
	// granted at 11 µs, the end of terminal 0's commit, and commits by
	// 21 µs.
	us := int64(time.Microsecond)
	require.Equal(t, [2]int64{11 * us, 21 * us}, ends)
	require.Equal(t, int64(1), meters[1].LockWaits)
	require.Equal(t, 10*us, meters[1].LockWaitNanos)
	tt := sd.s.Types()
	require.Equal(t, [NumTimeKinds]int64{TimeCPU: 11 * us}, tt[0].Spent)
	require.Equal(t, [NumTimeKinds]int64{TimeCPU: 11 * us, TimeLock: 10 * us}, tt[1].Spent)
}

// Commits that reach the log while a sync is in progress wait for it and
// are then served by one more sync, led by the first of them.
func TestSimGroupCommit(t *testing.T) {
	sd := openSim(t, testHW(hw.CPUProfile{}, freeDevice), engine.SyncCommit, "a")
	var ends [3]int64
	var meters [3]engine.Meter
	before := sd.db.LogStats()
	commit := func(i int) func(env tpcc.Env) error {
		return func(env tpcc.Env) error {
			observe(env).TxBegin(tpcc.TxType(i))
			tx := sd.db.Begin(&meters[i])
			if err := tx.Insert(sd.t["a"], engine.Row{engine.Int(int64(1000 + i)), engine.Int(0), engine.Str("x")}); err != nil {
				return err
			}
			if err := tx.Commit(); err != nil {
				return err
			}
			observe(env).TxEnd(tpcc.TxType(i), true, nil)
			ends[i] = at(env)
			return nil
		}
	}
	sd.run(t, commit(0), commit(1), commit(2))
	// Terminal 0 leads a sync over [0, 5 ms). Terminals 1 and 2 commit at
	// 0, find it in progress and wait. At 5 ms terminal 1 leads one sync
	// for both, over [5, 10 ms); terminal 2 waits for it too.
	require.Equal(t, [3]int64{5 * ms, 10 * ms, 10 * ms}, ends)
	require.Equal(t, [3]int64{1, 1, 0}, [3]int64{meters[0].LogSyncs, meters[1].LogSyncs, meters[2].LogSyncs})
	require.Equal(t, [3]int64{0, 1, 2}, [3]int64{meters[0].LogSyncWaits, meters[1].LogSyncWaits, meters[2].LogSyncWaits})
	after := sd.db.LogStats()
	require.Equal(t, int64(2), after.Syncs-before.Syncs)
	require.Equal(t, int64(3), after.SyncedCommits-before.SyncedCommits)
	tt := sd.s.Types()
	for i := range 3 {
		require.Equal(t, [NumTimeKinds]int64{TimeLog: ends[i]}, tt[i].Spent, "terminal %d", i)
	}
	_, _, logBusy, _ := sd.s.Busy()
	require.Equal(t, 10*ms, logBusy)
}

// A lock wait times out in virtual time: the holder thinks for 5 s
// inside its transaction; the waiter gives up at its deadline, 1 s after
// it asked, exactly.
func TestSimLockTimeoutInVirtualTime(t *testing.T) {
	sd := openSim(t, testHW(hw.CPUProfile{}, freeDevice), engine.NoSyncCommit, "district")
	var ends [2]int64
	var waitErr error
	sd.run(t, func(env tpcc.Env) error {
		tx := sd.db.Begin(nil)
		if err := tx.Update(sd.t["district"], key(1), []engine.Set{{Column: "v", Value: engine.Int(1)}}); err != nil {
			return err
		}
		env.Sleep(5 * time.Second)
		if err := tx.Commit(); err != nil {
			return err
		}
		ends[0] = at(env)
		return nil
	}, func(env tpcc.Env) error {
		env.Sleep(time.Millisecond) // let terminal 0 take the lock first
		tx := sd.db.Begin(nil)
		waitErr = tx.Update(sd.t["district"], key(1), []engine.Set{{Column: "v", Value: engine.Int(2)}})
		ends[1] = at(env)
		return nil
	})
	require.ErrorIs(t, waitErr, engine.ErrLockTimeout)
	require.Equal(t, [2]int64{5000 * ms, 1001 * ms}, ends)
}

// Keying and think times pass in virtual time, and the terminal with the
// earliest clock runs first.
func TestSimSleepOrdersTerminals(t *testing.T) {
	sd := openSim(t, testHW(hw.CPUProfile{}, freeDevice), engine.NoSyncCommit, "a")
	var order []int
	var clocks []int64
	step := func(i int, d time.Duration) func(env tpcc.Env) error {
		return func(env tpcc.Env) error {
			for range 3 {
				env.Sleep(d)
				clocks = append(clocks, at(env))
				order = append(order, i)
			}
			return nil
		}
	}
	sd.run(t, step(0, 3*time.Second), step(1, 2*time.Second))
	s := int64(time.Second)
	// Clocks 2 (t1), 3 (t0), 4 (t1), 6 (t1 before t0: tie goes to the
	// lower number, t0), ...
	require.Equal(t, []int{1, 0, 1, 0, 1, 0}, order)
	require.Equal(t, []int64{2 * s, 3 * s, 4 * s, 6 * s, 6 * s, 9 * s}, clocks)
}

// Two terminals run Payment-like transactions on one district: each
// updates the district row and commits with a 5 ms sync, holding the lock
// through the sync. The transactions serialize, and every wait for the
// other terminal's turn is reported as lock wait.
func TestSimOneDistrictSerializes(t *testing.T) {
	sd := openSim(t, testHW(hw.CPUProfile{}, freeDevice), engine.SyncCommit, "district")
	var ends [2]int64
	pay := func(i int) func(env tpcc.Env) error {
		return func(env tpcc.Env) error {
			for n := range 3 {
				observe(env).TxBegin(tpcc.PaymentTx)
				tx := sd.db.Begin(nil)
				if err := tx.Update(sd.t["district"], key(1), []engine.Set{{Column: "v", Value: engine.Int(int64(10*i + n))}}); err != nil {
					return err
				}
				if err := tx.Commit(); err != nil {
					return err
				}
				observe(env).TxEnd(tpcc.PaymentTx, true, nil)
			}
			ends[i] = at(env)
			return nil
		}
	}
	sd.run(t, pay(0), pay(1))
	// The lock passes 0, 1, 0, 1, 0, 1, one 5 ms sync each: terminal 0
	// holds it over [0, 5), [10, 15), [20, 25); terminal 1 over [5, 10),
	// [15, 20), [25, 30). Terminal 1 waits 5 ms before each of its three
	// transactions, terminal 0 before its last two.
	require.Equal(t, [2]int64{25 * ms, 30 * ms}, ends)
	tt := sd.s.Types()[tpcc.PaymentTx]
	require.Equal(t, int64(6), tt.Count)
	require.Equal(t, [NumTimeKinds]int64{TimeLock: 25 * ms, TimeLog: 30 * ms}, tt.Spent)
	require.Equal(t, 55*ms, tt.Response)
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

// Queues are first come, first served by virtual arrival time, even when
// the request that arrived first is priced later: terminal 0 scans seven
// leaves in one call; terminal 1 asks for one page at 1 ms, while
// terminal 0's first read is on the disk, and gets the disk next.
func TestSimQueueInArrivalOrder(t *testing.T) {
	sd := openSim(t, testHW(hw.CPUProfile{}, testDisk), engine.NoSyncCommit, "a", "b")
	var ends [2]int64
	sd.run(t, func(env tpcc.Env) error {
		n, err := scanAll(sd.db, sd.t["a"])
		if err == nil && n != 100 {
			err = errors.New("the scan missed rows")
		}
		ends[0] = at(env)
		return err
	}, func(env tpcc.Env) error {
		env.Sleep(time.Millisecond)
		_, _, err := sd.db.Begin(nil).Get(sd.t["b"], key(1), nil)
		ends[1] = at(env)
		return err
	})
	// Terminal 0's reads: [0, 11), then, arriving at 11 after terminal
	// 1's (at 1), [22, 33) and five more: 88 ms. Terminal 1's: [11, 22).
	require.Equal(t, [2]int64{88 * ms, 22 * ms}, ends)
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

// Background work done before the run (a load's checkpoint) is not the
// run's: the first read of the run finds the disk idle.
func TestSimWorkBeforeRunIsNotPriced(t *testing.T) {
	sd := openSim(t, testHW(hw.CPUProfile{}, testDisk), engine.NoSyncCommit, "a", "b")
	tx := sd.db.Begin(nil)
	for k := int64(1); k <= 100; k++ {
		require.NoError(t, tx.Update(sd.t["a"], key(k), []engine.Set{{Column: "v", Value: engine.Int(k)}}))
	}
	require.NoError(t, tx.Commit())
	require.NoError(t, sd.db.Checkpoint())
	require.Positive(t, sd.db.Pool().BackgroundMeter().StoreWrites, "the checkpoint wrote pages")
	var end int64
	sd.run(t, func(env tpcc.Env) error {
		_, _, err := sd.db.Begin(nil).Get(sd.t["b"], key(1), nil)
		end = at(env)
		return err
	})
	require.Equal(t, 11*ms, end)
}

// A lock can be granted while the terminal that asked for it is still
// being priced for the work before its wait (other terminals run between
// the steps of that pricing): it must then not wait at all. Terminal 0
// updates row 50 (leaf 4) and commits; terminal 1 scans the table under
// shared locks, reads leaves 1 to 3 and finds row 50 locked. Its reads
// are priced in steps, and terminal 0's commit, at 11 ms, runs between
// them and grants the lock.
func TestSimLockGrantedWhileWaiterIsPriced(t *testing.T) {
	sd := openSim(t, testHW(hw.CPUProfile{}, testDisk), engine.NoSyncCommit, "a")
	var ends [2]int64
	sd.run(t, func(env tpcc.Env) error {
		tx := sd.db.Begin(nil)
		if err := tx.Update(sd.t["a"], key(50), []engine.Set{{Column: "v", Value: engine.Int(1)}}); err != nil {
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		ends[0] = at(env)
		return nil
	}, func(env tpcc.Env) error {
		n, err := scanAll(sd.db, sd.t["a"])
		if err == nil && n != 100 {
			err = errors.New("the scan missed rows")
		}
		ends[1] = at(env)
		return err
	})
	// Terminal 0 reads leaf 4 over [0, 11). Terminal 1 waits for leaf 4
	// until 11, then reads leaves 1 to 3 over [11, 44); the lock was
	// granted at 11; leaves 5 to 7 take it to 77 ms.
	require.Equal(t, [2]int64{11 * ms, 77 * ms}, ends)
}

// A checkpoint's writes are background work with a queue of their own: a
// read that arrives while they are pending waits for one of them, not for
// all. Terminal 0 dirties the seven leaves of table a (reading them over
// [0, 77)), checkpoints, and reads a leaf of table b: one 11 ms write goes
// first, then the 11 ms read. The other writes run in the idle time after.
func TestSimBackgroundWritesTakeTurns(t *testing.T) {
	sd := openSim(t, testHW(hw.CPUProfile{}, testDisk), engine.NoSyncCommit, "a", "b")
	var beforeRead, end int64
	var pending int64
	sd.run(t, func(env tpcc.Env) error {
		tx := sd.db.Begin(nil)
		for k := int64(1); k <= 100; k++ {
			if err := tx.Update(sd.t["a"], key(k), []engine.Set{{Column: "v", Value: engine.Int(k)}}); err != nil {
				return err
			}
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		if err := sd.db.Checkpoint(); err != nil {
			return err
		}
		beforeRead = at(env) // prices the commit and queues the checkpoint's writes
		pending = sd.s.bgWrites
		_, _, err := sd.db.Begin(nil).Get(sd.t["b"], key(1), nil)
		end = at(env)
		return err
	})
	require.Equal(t, 77*ms, beforeRead, "seven leaves read")
	require.GreaterOrEqual(t, pending, int64(7), "the checkpoint wrote at least the seven dirty leaves")
	require.Equal(t, beforeRead+22*ms, end, "one background write, then the read")
	require.Equal(t, pending-1, sd.s.PendingBackgroundWrites(), "the others wait for idle time")
}

// A checkpoint that begins while the last one's writes are still queued
// waits for them, in the transaction that triggered it: the log cannot
// move past the last checkpoint before its pages are written.
func TestSimCheckpointWaitsForTheLastOnesWrites(t *testing.T) {
	sd := openSim(t, testHW(hw.CPUProfile{}, testDisk), engine.NoSyncCommit, "a")
	var afterFirst, afterSecond, first int64
	dirty := func(v int64) error {
		tx := sd.db.Begin(nil)
		for k := int64(1); k <= 100; k++ {
			if err := tx.Update(sd.t["a"], key(k), []engine.Set{{Column: "v", Value: engine.Int(v)}}); err != nil {
				return err
			}
		}
		return tx.Commit()
	}
	sd.run(t, func(env tpcc.Env) error {
		if err := dirty(1); err != nil {
			return err
		}
		if err := sd.db.Checkpoint(); err != nil {
			return err
		}
		afterFirst = at(env)
		first = sd.s.PendingBackgroundWrites()
		if err := dirty(2); err != nil { // the leaves are in the pool: no reads, no time
			return err
		}
		if err := sd.db.Checkpoint(); err != nil {
			return err
		}
		afterSecond = at(env)
		return nil
	})
	require.Equal(t, 77*ms, afterFirst)
	require.GreaterOrEqual(t, first, int64(7))
	require.Equal(t, afterFirst+first*11*ms, afterSecond, "the first checkpoint's writes, one after another")
	require.Equal(t, int64(1), sd.s.CheckpointWaits())
	require.Positive(t, sd.s.PendingBackgroundWrites(), "the second checkpoint's writes are queued")
}
