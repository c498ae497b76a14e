package tpcc

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/enginelab/enginelab/engine"
)

// MaxWarehouses is the largest W Load accepts: HistoryID keeps 23 bits for
// the warehouse.
const MaxWarehouses = 1<<23 - 1

// DefaultLoadTime is the load's timestamp (C_SINCE, H_DATE, O_ENTRY_D and
// the delivered OL_DELIVERY_D) when LoadConfig.LoadTime is zero. It is
// fixed, not the wall clock, so that a load is a function of its config.
var DefaultLoadTime = time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC)

// ErrInvalidConfig is wrapped by the errors of a job's configuration that
// cannot be used: here a LoadConfig, RunConfig, CheckConfig or
// ExportConfig, a Scale or Constants. Load returns it before it creates
// anything.
//
// It is the one invalid-configuration error of every job: tpcc is the
// lowest layer that runs jobs, and the job packages above (sim, sim/hw,
// sim/replay, sim/calibrate, sim/experiment) export this same value under
// the same name, so that errors.Is against any of them tells a refused
// configuration from a failed job whichever package refused it. Its text
// names no package: the package that refuses puts its own name in front
// ("tpcc: invalid configuration: ...", "sim: invalid configuration:
// ...").
var ErrInvalidConfig = errors.New("invalid configuration")

// HistoryID returns the h_id of row seq written by terminal t (0: the
// loader) of warehouse w.
//
// HISTORY has no key in the specification [1.3]; schema.go gives it the
// surrogate h_id, which must be unique across the loader and every
// terminal without coordination. HistoryID packs the writer into it:
//
//	h_id = w << 40 | t << 32 | seq
//	  w   H_W_ID, 1..MaxWarehouses (23 bits)
//	  t   0 for the loader, 1..255 for a terminal of warehouse w
//	  seq the writer's own counter, 1..2^32-1
//
// The loader writes t = 0, seq = (d − 1) × C + c for customer c of
// district d, C being the scale's customers per district (1..30,000 at
// full scale). A terminal numbers its rows from 1, or, on a
// database a run has already used, from one past the largest h_id in its
// range [HistoryID(w, t, 0), HistoryID(w, t+1, 0)).
func HistoryID(w, t int, seq uint32) int64 {
	return int64(w)<<40 | int64(t&0xff)<<32 | int64(seq)
}

// LoadConfig says what Load loads, and how.
type LoadConfig struct {
	// Warehouses is W, 1..MaxWarehouses.
	Warehouses int
	// Scale is the population's size; the zero value is the
	// specification's full scale. It is stored with the load
	// (ConfigTable), for runs and checks to follow.
	Scale Scale
	// Seed decides every random value of the population and the load's
	// NURand constants (NewLoadConstants(Seed)). The same Seed, Scale and
	// Warehouses give the same rows, whatever the organization, Workers
	// and BatchRows.
	Seed uint64
	// Org is the organization of the nine tables; OrgDefault takes the
	// database's default.
	Org engine.Org
	// LoadTime is the timestamp of the load's dates; zero:
	// DefaultLoadTime. Stored to the microsecond.
	LoadTime time.Time
	// Workers is how many goroutines load; 0: GOMAXPROCS. The rows do not
	// depend on it; with W > 1, the pages they land in may (see Load).
	Workers int
	// BatchRows is how many rows a load transaction inserts before it
	// commits; 0: 500. A transaction holds its rows' locks and undo until
	// it commits, so one huge transaction is slow.
	BatchRows int
	// Progress, if not nil, is called with the rows loaded so far and the
	// total the load will insert (exact, known before the first row):
	// once with done = 0 before loading, then whenever a commit takes done
	// at least ProgressEvery past the last call, and once with done =
	// total at the end of a successful load. Calls come from the loading
	// goroutines but one at a time, with done increasing; keep them quick,
	// they hold up a loader.
	Progress func(done, total int64)
	// ProgressEvery is the least number of rows between two Progress
	// calls; 0: 5000.
	ProgressEvery int64
	// WideCustomerKey, if not 0, widens CUSTOMER's primary key by a
	// varchar of that many bytes (TablesWith): the experiment on the
	// cost of a wide primary key in every secondary index. At most
	// engine.MaxStringLength.
	WideCustomerKey int
	// ExtraIndexes adds secondary indexes to the nine tables, by table
	// name: experiments that ask what an index costs (StockQuantityIndex).
	// The workload does not use them; the engine maintains them.
	ExtraIndexes map[string][]engine.Index
}

// StockQuantityIndex is an index on a column every New-Order line updates
// (s_quantity): the experiment on the cost of a secondary index on a
// frequently updated column adds it to STOCK.
var StockQuantityIndex = engine.Index{Name: "idx_stock_quantity", Columns: []string{"s_w_id", "s_quantity"}}

func (c *LoadConfig) validate() error {
	switch {
	case c.Warehouses < 1 || c.Warehouses > MaxWarehouses:
		return fmt.Errorf("tpcc: %w: %d warehouses, want 1..%d", ErrInvalidConfig, c.Warehouses, MaxWarehouses)
	case c.Org > engine.HeapPrimaryKey:
		return fmt.Errorf("tpcc: %w: unknown table organization %d", ErrInvalidConfig, c.Org)
	case c.WideCustomerKey < 0 || c.WideCustomerKey > 200:
		return fmt.Errorf("tpcc: %w: wide customer key of %d bytes: want 0 (none) to 200", ErrInvalidConfig, c.WideCustomerKey)
	case c.Workers < 0:
		return fmt.Errorf("tpcc: %w: %d workers is negative", ErrInvalidConfig, c.Workers)
	case c.BatchRows < 0:
		return fmt.Errorf("tpcc: %w: batch of %d rows is negative", ErrInvalidConfig, c.BatchRows)
	case c.ProgressEvery < 0:
		return fmt.Errorf("tpcc: %w: progress every %d rows is negative", ErrInvalidConfig, c.ProgressEvery)
	}
	return c.Scale.Validate()
}

// LoadReport describe a finished load.
type LoadReport struct {
	Warehouses int
	// Rows holds the rows inserted per table, by table name.
	Rows map[string]int64
	// TotalRows is the sum of Rows.
	TotalRows int64
	// ItemOriginal and StockOriginal count the ITEM and STOCK rows whose
	// data the generator marked "ORIGINAL" [4.3.3.1].
	ItemOriginal, StockOriginal int64
	// Constants are the NURand constants the load used (C_LAST's is the
	// one a run's must keep its distance from: NewRunConstants).
	Constants Constants
	// Elapsed is the wall time of the load (creating the tables included);
	// RowsPerSecond is TotalRows / Elapsed.
	Elapsed       time.Duration
	RowsPerSecond float64
	// Meter is what the load's transactions cost, summed.
	Meter engine.Meter
}

// Load creates the nine tables (Tables(cfg.Org)) in db and loads the
// population of cfg.Warehouses warehouses [4.3.3.1]; it writes ConfigTable
// last. db should hold no
// table of those names.
//
// # Lanes and streams
//
// The work is cut into lanes: ITEM, and for each warehouse one lane per
// table (WAREHOUSE with its DISTRICT rows as one). A lane inserts its rows
// in primary-key order and commits every BatchRows rows; workers take lanes
// in a fixed order, the longest first; with four or more warehouses per
// worker, they pass over a lane whose table another worker is loading
// while a lane of another table is left (lanePicker). Inside a lane, each
// district (or chunk of 10,000 items) draws from its own random stream,
// derived from the seed, the table and those coordinates, so the rows do
// not depend on scheduling, Workers or BatchRows.
//
// One lane per table and warehouse also keeps each B+tree a single
// ascending stream of inserts: pages fill as a sequential load fills them
// (the B+tree splits at the insertion point; 98 to 99% full), not as
// interleaved ranges of one tree leave them (80 to 90% in a trial of
// district-sized parts). With W = 1, or Workers = 1, only one goroutine
// ever writes a table, so its trees and heap take the same shape from load
// to load (DB.SpaceReport agrees); with more warehouses the lanes of one
// table for different warehouses may run at once.
//
// A bad config returns an error wrapping ErrInvalidConfig before anything is
// created. If loading fails or ctx is cancelled, Load stops every worker
// and returns the first error; the transactions committed so far stay.
func Load(ctx context.Context, db *engine.DB, cfg LoadConfig) (LoadReport, error) {
	if err := cfg.validate(); err != nil {
		return LoadReport{}, err
	}
	if db == nil {
		return LoadReport{}, fmt.Errorf("tpcc: %w: no database", ErrInvalidConfig)
	}
	if err := ctx.Err(); err != nil {
		return LoadReport{}, err
	}
	start := time.Now()
	l := newLoader(db, cfg)
	cfg = l.cfg
	// The database's default organization, resolved here, so that the
	// heap tables get their fill factors (TablesWith) however the heap
	// organization was chosen.
	org := cfg.Org
	if org == engine.OrgDefault {
		org = db.Options().DefaultOrg
	}
	for _, def := range TablesWith(org, cfg.WideCustomerKey) {
		def.Indexes = append(def.Indexes, cfg.ExtraIndexes[def.Name]...)
		h, err := db.CreateTable(def)
		if err != nil {
			return LoadReport{}, fmt.Errorf("tpcc: load: create table %s: %w", def.Name, err)
		}
		l.t[tableIndex(def.Name)] = h
	}

	lanes := l.plan()
	var total int64
	for _, ln := range lanes {
		total += ln.rows
	}
	l.prog = progress{fn: cfg.Progress, total: total, every: cfg.ProgressEvery}
	l.prog.report(0)

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	workers := min(cfg.Workers, len(lanes))
	pick := newLanePicker(lanes, cfg.Warehouses, workers)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex // guards stats
		stats = LoadReport{Warehouses: cfg.Warehouses, Rows: make(map[string]int64), Constants: l.c}
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &worker{loader: l, ctx: ctx, row: make(engine.Row, 0, CKeyPos+1), buf: make([]byte, 0, 4096)}
			k := -1
			for ctx.Err() == nil {
				if k = pick.next(k); k < 0 {
					break
				}
				if err := w.load(lanes[k]); err != nil {
					cancel(err)
					break
				}
			}
			w.rollback()
			mu.Lock()
			defer mu.Unlock()
			for i, n := range w.rows {
				stats.Rows[tableNames[i]] += n
				stats.TotalRows += n
			}
			stats.ItemOriginal += w.itemOriginal
			stats.StockOriginal += w.stockOriginal
			stats.Meter.Add(&w.meter)
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return LoadReport{}, err
	}
	if stats.TotalRows != total { // a bug in plan or in a lane, not in the data
		return LoadReport{}, fmt.Errorf("tpcc: load: inserted %d rows, planned %d", stats.TotalRows, total)
	}
	if err := writeLoaded(db, Loaded{Warehouses: cfg.Warehouses, Scale: cfg.Scale.canonical(), Seed: cfg.Seed,
		Constants: l.c, Org: org, LoadTime: cfg.LoadTime}); err != nil {
		return LoadReport{}, err
	}
	stats.Elapsed = time.Since(start)
	if s := stats.Elapsed.Seconds(); s > 0 {
		stats.RowsPerSecond = float64(stats.TotalRows) / s
	}
	return stats, nil
}

// Table numbers of loader.t and worker.rows, in TableNames' order.
const (
	tItem = iota
	tWarehouse
	tDistrict
	tCustomer
	tHistory
	tOrders
	tNewOrder
	tOrderLine
	tStock
	numTables
)

var tableNames = [numTables]string{Item, Warehouse, District, Customer, History, Orders, NewOrder, OrderLine, Stock}

func tableIndex(name string) int {
	for i, n := range tableNames {
		if n == name {
			return i
		}
	}
	panic("tpcc: load: unknown table " + name)
}

// loader is one Load's shared, read-only state (and its progress).
type loader struct {
	cfg  LoadConfig
	sc   Scale // cfg.Scale
	db   *engine.DB
	c    Constants
	now  engine.Value
	t    [numTables]*engine.TableHandle
	prog progress
}

// newLoader returns the loader of cfg, defaults applied.
func newLoader(db *engine.DB, cfg LoadConfig) *loader {
	if cfg.LoadTime.IsZero() {
		cfg.LoadTime = DefaultLoadTime
	}
	if cfg.Workers == 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	if cfg.BatchRows == 0 {
		cfg.BatchRows = 500
	}
	if cfg.ProgressEvery == 0 {
		cfg.ProgressEvery = 5000
	}
	return &loader{cfg: cfg, sc: cfg.Scale, db: db, c: NewLoadConstants(cfg.Seed), now: engine.Time(cfg.LoadTime)}
}

// chunk is how many items a stream of ITEM or STOCK covers; the last
// chunk of a scale whose items are not a multiple of it is short.
const chunk = 10_000

// chunks is the number of chunks of s's items.
func chunks(s Scale) int { return (s.NumItems() + chunk - 1) / chunk }

// lane is the rows of one table (tWarehouse: WAREHOUSE and DISTRICT) of
// one warehouse (w = 0 for ITEM), loaded in key order by one worker.
type lane struct {
	table int
	w     int
	rows  int64 // rows it inserts
}

// laneOrder is the order lanes start in: the most work first, so that the
// last lanes to start are short and the workers finish together
// (lanePicker passes over lanes only where that stays nearly so). (A CPU
// profile of a W = 1 load: ORDER_LINE 44% of the loading work, STOCK 20%,
// ITEM 14%, CUSTOMER 10%, ORDERS 7%, the rest 5%.)
var laneOrder = []int{tOrderLine, tStock, tItem, tCustomer, tOrders, tHistory, tNewOrder, tWarehouse}

// lanePicker hands lanes to workers in plan order, except that, with at
// least four warehouses a worker (avoidBusyWarehouses), a worker passes
// over a lane whose table another worker is loading while a lane of
// another table is left. Two workers on lanes of one table (ORDER_LINE
// of two warehouses, the longest lanes, which plan order starts
// together) descend the same root and upper nodes for every row and take
// turns at the cache lines of their pins and latches; on lanes of
// different tables they share only the log, the lock table and the pool.
// W16 in memory on two cores, alternating runs: 13.9, 13.9, 12.5 and
// 12.3 s against 20.9, 15.4, 16.2 and 15.2 s in plan order. With fewer
// warehouses a worker, passing over the longest lanes starts some of
// them last and the load ends later: in a model where a lane takes as
// long as it has rows, W2 with four workers ends half as late again,
// and no case of TestLanePickerKeepsTheTail with the threshold ends more
// than 8% later than plan order. With one warehouse no table has two
// lanes, and with one worker no table is busy: plan order.
type lanePicker struct {
	mu    sync.Mutex
	lanes []lane
	avoid bool           // pass over lanes of busy tables
	taken []bool         // handed out
	busy  [numTables]int // lanes of each table being loaded
}

// avoidBusyWarehouses is how many warehouses a worker the loader needs
// before its workers pass over lanes of busy tables (lanePicker).
const avoidBusyWarehouses = 4

func newLanePicker(lanes []lane, warehouses, workers int) *lanePicker {
	return &lanePicker{lanes: lanes, avoid: warehouses >= avoidBusyWarehouses*workers, taken: make([]bool, len(lanes))}
}

// next records that lane done (-1: none) is finished and returns the
// lane to load next, or -1 when every lane is handed out.
func (p *lanePicker) next(done int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if done >= 0 {
		p.busy[p.lanes[done].table]--
	}
	k := -1
	for i, ln := range p.lanes {
		if p.taken[i] {
			continue
		}
		if k < 0 {
			k = i
			if !p.avoid {
				break
			}
		}
		if p.busy[ln.table] == 0 {
			k = i
			break
		}
	}
	if k >= 0 {
		p.taken[k] = true
		p.busy[p.lanes[k].table]++
	}
	return k
}

// plan lists the lanes in laneOrder, warehouses in order within a table.
func (l *loader) plan() []lane {
	var ls []lane
	for _, t := range laneOrder {
		if t == tItem {
			ls = append(ls, lane{table: tItem, rows: int64(l.sc.NumItems())})
			continue
		}
		for w := 1; w <= l.cfg.Warehouses; w++ {
			ln := lane{table: t, w: w}
			switch t {
			case tOrderLine:
				for d := 1; d <= DistrictsPerWarehouse; d++ {
					for _, c := range olCounts(l.cfg.Seed, w, d, l.sc.Orders()) {
						ln.rows += int64(c)
					}
				}
			case tStock:
				ln.rows = int64(l.sc.NumItems())
			case tCustomer, tHistory:
				ln.rows = int64(DistrictsPerWarehouse * l.sc.Customers())
			case tOrders:
				ln.rows = int64(DistrictsPerWarehouse * l.sc.Orders())
			case tNewOrder:
				ln.rows = int64(DistrictsPerWarehouse * l.sc.NewOrders())
			case tWarehouse:
				ln.rows = 1 + DistrictsPerWarehouse
			}
			ls = append(ls, ln)
		}
	}
	return ls
}

// olCounts returns O_OL_CNT, random within [5 .. 15] [4.3.3.1], of the
// orders 1..n of district d of warehouse w. ORDERS and ORDER_LINE both
// draw them, from their own stream; a smaller n gives the first n of
// them.
func olCounts(seed uint64, w, d, n int) []int8 {
	g := newStream(seed, tagOLCount, uint64(w), uint64(d))
	cnt := make([]int8, n)
	for i := range cnt {
		cnt[i] = int8(g.Int(5, 15))
	}
	return cnt
}

// progress reports rows done to LoadConfig.Progress.
type progress struct {
	fn           func(done, total int64)
	total, every int64

	mu   sync.Mutex // guards done, last; held across fn
	done int64
	last int64
}

func (p *progress) report(n int64) {
	if p.fn == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += n
	if n == 0 || p.done-p.last >= p.every || p.done == p.total {
		p.last = p.done
		p.fn(p.done, p.total)
	}
}

// worker loads parts, one transaction of at most BatchRows rows at a
// time. It reuses its row and byte buffers: the engine encodes a row
// during Insert and keeps none of its bytes.
type worker struct {
	*loader
	ctx   context.Context
	meter engine.Meter
	tx    *engine.Tx
	n     int // rows in tx

	row engine.Row
	buf []byte

	rows                        [numTables]int64
	itemOriginal, stockOriginal int64

	// emit, when set (by tests), receives each row instead of the
	// database: the generator without the engine.
	emit func(table int, row engine.Row)
}

// insert adds w.row to table t, committing every BatchRows rows.
func (w *worker) insert(t int) error {
	if w.emit != nil {
		w.emit(t, w.row)
		w.rows[t]++
		return nil
	}
	if w.tx == nil {
		if err := w.ctx.Err(); err != nil {
			return context.Cause(w.ctx)
		}
		// The load's batches do not wait for their log syncs: the log
		// is one sequence, so writeLoaded's synced commit, the load's
		// last, makes every batch durable with it. Until then a crash
		// leaves a load without its ConfigTable row, which ReadLoaded
		// refuses, as it refuses a load cut short anywhere else.
		w.tx = w.db.BeginTx(&w.meter, engine.TxOptions{NoSync: true})
	}
	if err := w.tx.Insert(w.t[t], w.row); err != nil {
		w.rollback()
		return fmt.Errorf("tpcc: load: insert into %s: %w", tableNames[t], err)
	}
	w.rows[t]++
	w.n++
	if w.n >= w.cfg.BatchRows {
		return w.commit()
	}
	return nil
}

func (w *worker) commit() error {
	if w.tx == nil {
		return nil
	}
	err := w.tx.Commit()
	w.tx = nil
	if err != nil {
		return fmt.Errorf("tpcc: load: commit: %w", err)
	}
	w.prog.report(int64(w.n))
	w.n = 0
	return nil
}

// rollback ends an unfinished transaction; its rows no longer count.
func (w *worker) rollback() {
	if w.tx == nil {
		return
	}
	_ = w.tx.Rollback() // the transaction may already be rolled back (deadlock, timeout)
	w.tx = nil
	w.n = 0
}

// load loads one lane, and commits what is left of it.
func (w *worker) load(ln lane) error {
	var each func(d int) error // one district's rows
	switch ln.table {
	case tItem:
		each = w.items
	case tStock:
		each = func(k int) error { return w.stock(ln.w, k) }
	case tWarehouse:
		each = func(d int) error {
			if d > 1 {
				return nil
			}
			return w.warehouse(ln.w)
		}
	case tCustomer:
		each = func(d int) error { return w.customers(ln.w, d) }
	case tHistory:
		each = func(d int) error { return w.history(ln.w, d) }
	case tOrders:
		each = func(d int) error { return w.orders(ln.w, d) }
	case tOrderLine:
		each = func(d int) error { return w.orderLines(ln.w, d) }
	case tNewOrder:
		each = func(d int) error { return w.newOrders(ln.w, d) }
	}
	var err error
	if ln.table == tItem || ln.table == tStock {
		for k := 0; k < chunks(w.sc) && err == nil; k++ {
			err = each(k) // by chunks of 10,000 items
		}
	} else {
		for d := 1; d <= DistrictsPerWarehouse && err == nil; d++ {
			err = each(d)
		}
	}
	if err != nil {
		return fmt.Errorf("%w (loading %s of warehouse %d)", err, tableNames[ln.table], ln.w)
	}
	return w.commit()
}

// start begins a row of n columns, all NULL.
func (w *worker) start(n int) {
	w.row = w.row[:n]
	clear(w.row)
	w.buf = w.buf[:0]
}

// The helpers below append to w.buf and return the new bytes as a value.
// Values keep pointing into the buffer they were made in even if a later
// append moves w.buf, and w.buf is only reset between rows.

func (w *worker) astr(g *Rand, x, y int) engine.Value {
	s := len(w.buf)
	w.buf = g.AppendAString(w.buf, x, y)
	return engine.Bytes(w.buf[s:len(w.buf):len(w.buf)])
}

func (w *worker) nstr(g *Rand, x, y int) engine.Value {
	s := len(w.buf)
	w.buf = g.AppendNString(w.buf, x, y)
	return engine.Bytes(w.buf[s:len(w.buf):len(w.buf)])
}

func (w *worker) zip(g *Rand) engine.Value {
	s := len(w.buf)
	w.buf = g.AppendZip(w.buf)
	return engine.Bytes(w.buf[s:len(w.buf):len(w.buf)])
}

func (w *worker) data(g *Rand) (engine.Value, bool) {
	s := len(w.buf)
	var orig bool
	w.buf, orig = g.AppendData(w.buf)
	return engine.Bytes(w.buf[s:len(w.buf):len(w.buf)]), orig
}

// address fills the five address columns from at: street 1, street 2,
// city (a-strings [10 .. 20]), state (a-string of 2 letters) and zip
// [4.3.3.1, 4.3.2.7].
func (w *worker) address(g *Rand, at int) {
	w.row[at] = w.astr(g, 10, 20)
	w.row[at+1] = w.astr(g, 10, 20)
	w.row[at+2] = w.astr(g, 10, 20)
	w.row[at+3] = w.astr(g, 2, 2)
	w.row[at+4] = w.zip(g)
}

// i64 is engine.Int of an int.
func i64(v int) engine.Value { return engine.Int(int64(v)) }

// chunkEnd is the last item of chunk k.
func (w *worker) chunkEnd(k int) int { return min((k+1)*chunk, w.sc.NumItems()) }

// items loads items k×chunk+1 .. chunkEnd(k) of ITEM [4.3.3.1].
func (w *worker) items(k int) error {
	g := newStream(w.cfg.Seed, tagItem, uint64(k))
	for id := k*chunk + 1; id <= w.chunkEnd(k); id++ {
		w.start(5)
		w.row[IID] = i64(id)
		w.row[IImID] = i64(g.Int(1, 10_000))
		w.row[IName] = w.astr(g, 14, 24)
		w.row[IPrice] = engine.Dec(g.Int64(100, 10_000)) // 1.00 .. 100.00
		v, orig := w.data(g)
		w.row[IData] = v
		if orig {
			w.itemOriginal++
		}
		if err := w.insert(tItem); err != nil {
			return err
		}
	}
	return nil
}

// warehouse loads warehouse wid and its ten districts, from one stream
// [4.3.3.1].
func (w *worker) warehouse(wid int) error {
	g := newStream(w.cfg.Seed, tagWarehouse, uint64(wid))
	w.start(WYtd + 1)
	w.row[WID] = i64(wid)
	w.row[WName] = w.astr(g, 6, 10)
	w.address(g, WStreet1)
	w.row[WTax] = engine.Dec(g.Int64(0, 2000))                            // 0.0000 .. 0.2000
	w.row[WYtd] = engine.Dec(w.sc.historyCents() * DistrictsPerWarehouse) // 300,000.00 at full scale
	if err := w.insert(tWarehouse); err != nil {
		return err
	}
	for d := 1; d <= DistrictsPerWarehouse; d++ {
		w.start(DNextOID + 1)
		w.row[DID] = i64(d)
		w.row[DWID] = i64(wid)
		w.row[DName] = w.astr(g, 6, 10)
		w.address(g, DStreet1)
		w.row[DTax] = engine.Dec(g.Int64(0, 2000))    // 0.0000 .. 0.2000
		w.row[DYtd] = engine.Dec(w.sc.historyCents()) // 30,000.00 at full scale
		w.row[DNextOID] = i64(w.sc.Orders() + 1)
		if err := w.insert(tDistrict); err != nil {
			return err
		}
	}
	return nil
}

// stock loads items k×chunk+1 .. chunkEnd(k) of warehouse wid's STOCK
// [4.3.3.1].
func (w *worker) stock(wid, k int) error {
	g := newStream(w.cfg.Seed, tagStock, uint64(wid), uint64(k))
	for id := k*chunk + 1; id <= w.chunkEnd(k); id++ {
		w.start(SData + 1)
		w.row[SIID] = i64(id)
		w.row[SWID] = i64(wid)
		w.row[SQuantity] = i64(g.Int(10, 100))
		for d := range DistrictsPerWarehouse {
			w.row[SDist01+d] = w.astr(g, 24, 24)
		}
		w.row[SYtd] = i64(0)
		w.row[SOrderCnt] = i64(0)
		w.row[SRemoteCnt] = i64(0)
		v, orig := w.data(g)
		w.row[SData] = v
		if orig {
			w.stockOriginal++
		}
		if err := w.insert(tStock); err != nil {
			return err
		}
	}
	return nil
}

// customers loads the customers (3,000 at full scale) of district d of
// warehouse wid [4.3.3.1].
func (w *worker) customers(wid, d int) error {
	g := newStream(w.cfg.Seed, tagCustomer, uint64(wid), uint64(d))
	g.c = w.c
	for c := 1; c <= w.sc.Customers(); c++ {
		if k := w.cfg.WideCustomerKey; k > 0 {
			w.start(CKeyPos + 1)
			w.row[CKeyPos] = engine.Str(WideCustomerKey(int64(wid), int64(d), int64(c), k))
		} else {
			w.start(CData + 1)
		}
		w.row[CID] = i64(c)
		w.row[CDID] = i64(d)
		w.row[CWID] = i64(wid)
		// C_LAST: the number C_ID − 1 for the first 1,000 customers,
		// NURand(255, 0, 999) for the others [4.3.3.1, 4.3.2.3]. (A
		// scale of fewer customers has only the first kind.)
		n := c - 1
		if c > 1000 {
			n = g.NURand(ALast, 0, 999)
		}
		s := len(w.buf)
		w.buf = AppendLastName(w.buf, n)
		w.row[CLast] = engine.Bytes(w.buf[s:len(w.buf):len(w.buf)])
		w.row[CMiddle] = engine.Str("OE")
		w.row[CFirst] = w.astr(g, 8, 16)
		w.address(g, CStreet1)
		w.row[CPhone] = w.nstr(g, 16, 16)
		w.row[CSince] = w.now
		// C_CREDIT "GC" for 90%, "BC" for 10% [4.3.3.1].
		if g.Percent(10) {
			w.row[CCredit] = engine.Str("BC")
		} else {
			w.row[CCredit] = engine.Str("GC")
		}
		w.row[CCreditLim] = engine.Dec(5_000_000)       // 50,000.00
		w.row[CDiscount] = engine.Dec(g.Int64(0, 5000)) // 0.0000 .. 0.5000
		w.row[CBalance] = engine.Dec(-1000)             // -10.00
		w.row[CYtdPayment] = engine.Dec(1000)           // 10.00
		w.row[CPaymentCnt] = i64(1)
		w.row[CDeliveryCnt] = i64(0)
		w.row[CData] = w.astr(g, 300, 500)
		if err := w.insert(tCustomer); err != nil {
			return err
		}
	}
	return nil
}

// history loads one HISTORY row per customer of district d of warehouse
// wid [4.3.3.1]; h_id is HistoryID(wid, 0, (d − 1) × C + c), C the
// customers per district.
func (w *worker) history(wid, d int) error {
	g := newStream(w.cfg.Seed, tagHistory, uint64(wid), uint64(d))
	nc := w.sc.Customers()
	for c := 1; c <= nc; c++ {
		w.start(HData + 1)
		w.row[HID] = engine.Int(HistoryID(wid, 0, uint32((d-1)*nc+c)))
		w.row[HCID] = i64(c)
		w.row[HCDID] = i64(d)
		w.row[HCWID] = i64(wid)
		w.row[HDID] = i64(d)
		w.row[HWID] = i64(wid)
		w.row[HDate] = w.now
		w.row[HAmount] = engine.Dec(1000) // 10.00
		w.row[HData] = w.astr(g, 12, 24)
		if err := w.insert(tHistory); err != nil {
			return err
		}
	}
	return nil
}

// orders loads the orders (3,000 at full scale) of district d of
// warehouse wid [4.3.3.1].
func (w *worker) orders(wid, d int) error {
	g := newStream(w.cfg.Seed, tagOrder, uint64(wid), uint64(d))
	n, first := w.sc.Orders(), w.sc.FirstNewOrder()
	cnt := olCounts(w.cfg.Seed, wid, d, n)
	cids := g.Perm(1, w.sc.Customers()) // O_C_ID: a random permutation of the customers
	for o := 1; o <= n; o++ {
		w.start(OAllLocal + 1)
		w.row[OID] = i64(o)
		w.row[ODID] = i64(d)
		w.row[OWID] = i64(wid)
		w.row[OCID] = i64(cids[o-1])
		w.row[OEntryD] = w.now
		if o < first {
			w.row[OCarrierID] = i64(g.Int(1, 10))
		} // else NULL
		w.row[OOlCnt] = i64(int(cnt[o-1]))
		w.row[OAllLocal] = i64(1)
		if err := w.insert(tOrders); err != nil {
			return err
		}
	}
	return nil
}

// orderLines loads the order lines of the orders of district d of
// warehouse wid, O_OL_CNT each [4.3.3.1].
func (w *worker) orderLines(wid, d int) error {
	g := newStream(w.cfg.Seed, tagOrderLine, uint64(wid), uint64(d))
	orders, first, items := w.sc.Orders(), w.sc.FirstNewOrder(), w.sc.NumItems()
	cnt := olCounts(w.cfg.Seed, wid, d, orders)
	for o := 1; o <= orders; o++ {
		for n := 1; n <= int(cnt[o-1]); n++ {
			w.start(OLDistInfo + 1)
			w.row[OLOID] = i64(o)
			w.row[OLDID] = i64(d)
			w.row[OLWID] = i64(wid)
			w.row[OLNumber] = i64(n)
			w.row[OLIID] = i64(g.Int(1, items))
			w.row[OLSupplyWID] = i64(wid)
			w.row[OLQuantity] = i64(5)
			if o < first {
				w.row[OLDeliveryD] = w.now // = O_ENTRY_D
				w.row[OLAmount] = engine.Dec(0)
			} else { // OL_DELIVERY_D NULL
				w.row[OLAmount] = engine.Dec(g.Int64(1, 999_999)) // 0.01 .. 9,999.99
			}
			w.row[OLDistInfo] = w.astr(g, 24, 24)
			if err := w.insert(tOrderLine); err != nil {
				return err
			}
		}
	}
	return nil
}

// newOrders loads the NEW_ORDER rows of district d of warehouse wid: one
// for each of the orders FirstNewOrder..Orders (2101..3000 at full scale)
// [4.3.3.1].
func (w *worker) newOrders(wid, d int) error {
	for o := w.sc.FirstNewOrder(); o <= w.sc.Orders(); o++ {
		w.start(NOWID + 1)
		w.row[NOOID] = i64(o)
		w.row[NODID] = i64(d)
		w.row[NOWID] = i64(wid)
		if err := w.insert(tNewOrder); err != nil {
			return err
		}
	}
	return nil
}
