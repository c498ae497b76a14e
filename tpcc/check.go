package tpcc

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/enginelab/enginelab/engine"
)

// The consistency conditions of clause 3.3.2, checked over every warehouse
// and district present.
//
// # What Check reads, and in which transactions
//
// Check reads each table it needs once, in three parts:
//
//  1. WAREHOUSE and DISTRICT, whole (conditions 1, 8 and 9 compare them
//     with sums computed elsewhere);
//  2. HISTORY, whole: HISTORY has no index by warehouse, district or
//     customer, so one scan sums H_AMOUNT per warehouse (H_W_ID), per
//     district (H_W_ID, H_D_ID) and per customer (H_C_W_ID, H_C_D_ID,
//     H_C_ID);
//  3. one per district: its NEW_ORDER, ORDERS, ORDER_LINE and CUSTOMER rows,
//     each a primary-key range scan on the (warehouse, district) prefix
//     (conditions 2 to 7, 10, 11 and 12).
//
// The districts are checked by CheckConfig.Workers goroutines at once,
// each taking the next district not yet taken. What each district finds
// (its counts, its differences) is kept apart and added to the report in
// key order, as soon as every district before it is done, so the report
// is the same whatever the number of workers.
//
// The parts run in one RepeatableRead transaction: on tables with versions
// (the clustered organization, and the heap organizations with
// engine.Options.HeapVersions) its reads are consistent reads of one read
// view, a snapshot of the committed database that takes no lock, so Check
// can run while terminals run, and what it checks is one committed state,
// in which every condition holds. The district workers read that same
// snapshot, each in a transaction of its own begun with
// engine.Tx.ShareSnapshot (as PostgreSQL's parallel pg_dump workers
// import their leader's snapshot, and InnoDB's parallel reader shares
// one read view among its threads). On tables without versions (the heap
// organizations otherwise) every read locks its row, shared, until its
// transaction ends: from the first part that took a lock, each part then
// commits its transaction, which bounds the locks Check holds at once to
// about one district's rows (some 40,000 after a load) instead of the whole
// database. Such a Check must run while no transaction writes: there are no
// gap locks (phantoms are possible) and its reads span several
// transactions, so a concurrent Payment or Delivery can make a consistent
// database look inconsistent. (snapshotReads decides, from the
// transaction's lock requests.) Such a Check reads its districts one at a
// time, as does a Check of a database on another engine.Runtime than the
// real one (the simulator's, whose scheduler runs one goroutine's calls).
//
// Rows are streamed, never all held: the memory Check keeps is one entry per
// customer with HISTORY rows (the per-customer sums, consumed as each
// district's customers are read), per district being checked its
// orders (id, customer, carrier NULL or not, O_OL_CNT, lines seen) and its
// NEW_ORDER ids, and the findings of districts done before one still
// checked that precedes them.
//
// # What counts as a difference
//
// Each condition is checked as the specification states it, for the rows
// it names: condition 5, 6 and 7 for every ORDERS row and its lines, 10 and
// 12 for every CUSTOMER row. A NEW_ORDER or ORDER_LINE row without its
// ORDERS row, or a HISTORY row of a customer that does not exist, is not a
// difference of those conditions; such rows show up in the district totals
// of conditions 2, 3, 4, 8, 9 and 11 instead. Money is compared exactly, in
// cents.

// ErrNotLoaded is wrapped by Check's error when a table it reads does not
// exist; the message names the table.
var ErrNotLoaded = errors.New("tpcc: database not loaded")

// DeliveredPerDistrictAtLoad is count(ORDERS) − count(NEW_ORDER) of every
// district after the specification's load: orders 1 to 2,100 of 3,000 are
// delivered [4.3.3.1]. It is FullScale.DeliveredPerDistrict(); another
// scale delivers its own (Scale.DeliveredPerDistrict).
const DeliveredPerDistrictAtLoad = 2100

// CheckConfig is what a Check job runs with. The zero value checks a
// database after a run (condition 11 skipped) and lists five differences
// per condition.
type CheckConfig struct {
	// Fresh says the database is freshly loaded: no transaction has run
	// since the load. Condition 11 holds only then (Delivery changes
	// it); when Fresh is false it is reported as skipped.
	Fresh bool
	// Scale is the scale the database was loaded at (Loaded.Scale); the
	// zero value is full scale. Condition 11 expects its
	// DeliveredPerDistrict unless DeliveredPerDistrict says otherwise.
	Scale Scale
	// DeliveredPerDistrict is the count(ORDERS) − count(NEW_ORDER) that
	// condition 11 expects of every district; 0 means
	// Scale.DeliveredPerDistrict() (2,100 at full scale). A database not
	// made by Load, a test's, states its own.
	DeliveredPerDistrict int64
	// MaxDifferences is how many differences a failed condition lists
	// (the first ones met, warehouses, districts, orders and customers in
	// key order); 0 means 5. Every failure is counted in Failures
	// whatever the limit.
	MaxDifferences int
	// Meter is charged for Check's reads; nil: each transaction charges a
	// meter of its own, which is dropped.
	Meter *engine.Meter
	// Workers is how many goroutines check districts at once; 0:
	// GOMAXPROCS. A database whose tables have no versions, or that runs
	// on another engine.Runtime than the real one, is checked by one.
	Workers int
}

// CheckStatus is the outcome of one condition.
type CheckStatus string

// Condition outcomes.
const (
	CheckPass    CheckStatus = "pass"
	CheckFail    CheckStatus = "fail"
	CheckSkipped CheckStatus = "skipped"
)

// ConditionResult is the outcome of one consistency condition. Its JSON
// field names are given in the tags.
type ConditionResult struct {
	// Number is the condition's number, 1 to 12: clause 3.3.2.Number.
	Number int `json:"number"`
	// Statement is the condition in one line.
	Statement string `json:"statement"`
	// Status is "pass", "fail" or "skipped".
	Status CheckStatus `json:"status"`
	// Reason says why a skipped condition was skipped ("holds after load
	// only"); empty otherwise.
	Reason string `json:"reason,omitempty"`
	// Warehouses, Districts, Customers and Orders count the rows of each
	// kind the condition examined (0 for the kinds it does not involve).
	Warehouses int64 `json:"warehouses"`
	Districts  int64 `json:"districts"`
	Customers  int64 `json:"customers"`
	Orders     int64 `json:"orders"`
	// Failures counts the places where the condition does not hold: the
	// warehouses (1, 8), districts (2, 3, 4, 9, 11), orders (5, 6), order
	// lines (7) or customers (10, 12) that break it.
	Failures int64 `json:"failures"`
	// Differences describes the first failures in words, naming the
	// place and both sides, e.g. "warehouse 1 district 3: d_next_o_id - 1
	// = 3000, max(o_id) = 3001, max(no_o_id) = 3001". At most
	// CheckConfig.MaxDifferences of them; absent when it passed.
	Differences []string `json:"differences,omitempty"`
}

// CheckReport is what Check found: the twelve conditions in order. Its JSON
// form is {"fresh": ..., "delivered_per_district": ..., "conditions":
// [ConditionResult, ...]}.
type CheckReport struct {
	// Fresh is CheckConfig.Fresh: whether condition 11 was checked.
	Fresh bool `json:"fresh"`
	// DeliveredPerDistrict is the number condition 11 expected.
	DeliveredPerDistrict int64 `json:"delivered_per_district"`
	// Conditions holds conditions 1 to 12, Conditions[i].Number == i+1.
	Conditions []ConditionResult `json:"conditions"`
}

// Passed reports whether no condition failed (skipped ones do not count).
func (r CheckReport) Passed() bool {
	return len(r.Failed()) == 0
}

// Failed returns the numbers of the conditions that failed, in order.
func (r CheckReport) Failed() []int {
	var nums []int
	for _, c := range r.Conditions {
		if c.Status == CheckFail {
			nums = append(nums, c.Number)
		}
	}
	return nums
}

// Condition returns condition n's result, or nil if the report has none.
func (r CheckReport) Condition(n int) *ConditionResult {
	for i := range r.Conditions {
		if r.Conditions[i].Number == n {
			return &r.Conditions[i]
		}
	}
	return nil
}

// String prints the report as an aligned table, one line per condition,
// followed by the differences of each failed condition.
func (r CheckReport) String() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "cond\tresult\twarehouses\tdistricts\tcustomers\torders\tstatement")
	for _, c := range r.Conditions {
		res := string(c.Status)
		switch c.Status {
		case CheckFail:
			res = fmt.Sprintf("FAIL (%d)", c.Failures)
		case CheckSkipped:
			if c.Reason != "" {
				res += ": " + c.Reason
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%d\t%s\n",
			c.Number, res, c.Warehouses, c.Districts, c.Customers, c.Orders, c.Statement)
	}
	_ = tw.Flush() // a strings.Builder does not fail
	for _, c := range r.Conditions {
		if c.Status != CheckFail {
			continue
		}
		fmt.Fprintf(&b, "condition %d fails in %d %s:\n", c.Number, c.Failures, checkPlural(c.Failures, "place", "places"))
		for _, d := range c.Differences {
			fmt.Fprintf(&b, "  %s\n", d)
		}
		if more := c.Failures - int64(len(c.Differences)); more > 0 {
			fmt.Fprintf(&b, "  and %d more\n", more)
		}
	}
	if r.Passed() {
		b.WriteString("consistent\n")
	} else {
		fmt.Fprintf(&b, "inconsistent: conditions %s fail\n", checkJoin(r.Failed()))
	}
	return b.String()
}

func checkPlural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func checkJoin(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

// checkStatements states the conditions of 3.3.2, by number; 11 takes the
// expected count.
var checkStatements = [13]string{
	1:  "W_YTD = sum(D_YTD) of the warehouse's districts",
	2:  "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) of the district",
	3:  "max(NO_O_ID) - min(NO_O_ID) + 1 = NEW_ORDER rows of the district",
	4:  "sum(O_OL_CNT) = ORDER_LINE rows of the district",
	5:  "O_CARRIER_ID is NULL exactly when the order has a NEW_ORDER row",
	6:  "O_OL_CNT = ORDER_LINE rows of the order",
	7:  "OL_DELIVERY_D is NULL exactly when the order's O_CARRIER_ID is NULL",
	8:  "W_YTD = sum(H_AMOUNT) of the warehouse (H_W_ID)",
	9:  "D_YTD = sum(H_AMOUNT) of the district (H_W_ID, H_D_ID)",
	10: "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT) of the customer",
	11: "count(ORDERS) - count(NEW_ORDER) = %d per district",
	12: "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT) of the customer",
}

// Check runs consistency conditions 1 to 12 of clause 3.3.2 over every
// warehouse and district in db and reports each one: see CheckReport. A
// failed condition is a finding, not an error: the error return is for
// reads that fail (a missing table wraps ErrNotLoaded; a lock error or a
// corrupt page is returned as the engine gives it) and for a scale out of
// range (ErrInvalidConfig).
func Check(db *engine.DB, opts CheckConfig) (CheckReport, error) {
	if err := opts.Scale.Validate(); err != nil {
		return CheckReport{}, err
	}
	workers, err := readWorkers(db, opts.Workers, "check")
	if err != nil {
		return CheckReport{}, err
	}
	opts.Workers = workers
	if opts.DeliveredPerDistrict == 0 {
		opts.DeliveredPerDistrict = int64(opts.Scale.DeliveredPerDistrict())
	}
	if opts.MaxDifferences <= 0 {
		opts.MaxDifferences = 5
	}
	rep := CheckReport{Fresh: opts.Fresh, DeliveredPerDistrict: opts.DeliveredPerDistrict,
		Conditions: newConditions()}
	rep.Conditions[10].Statement = fmt.Sprintf(checkStatements[11], opts.DeliveredPerDistrict)
	ck := &checker{db: db, opts: opts, rep: &rep}
	if err := ck.open(); err != nil {
		return CheckReport{}, err
	}
	if err := ck.run(); err != nil {
		return CheckReport{}, err
	}
	for i := range rep.Conditions {
		c := &rep.Conditions[i]
		switch {
		case c.Number == 11 && !opts.Fresh:
			c.Status, c.Reason = CheckSkipped, "holds after load only"
		case c.Failures > 0:
			c.Status = CheckFail
		default:
			c.Status = CheckPass
		}
	}
	return rep, nil
}

// newConditions returns conditions 1 to 12, numbered and stated, with
// nothing counted.
func newConditions() []ConditionResult {
	conds := make([]ConditionResult, 12)
	for i := range conds {
		c := &conds[i]
		c.Number = i + 1
		c.Statement = checkStatements[i+1]
	}
	return conds
}

// checker holds one Check's state.
type checker struct {
	db   *engine.DB
	opts CheckConfig
	rep  *CheckReport

	warehouse, district, customer, history, newOrder, orders, orderLine *engine.TableHandle

	// Per-warehouse and per-district rows, in key order.
	whs   []checkWarehouse
	dists []checkDistrict

	// HISTORY sums: by H_W_ID, by (H_W_ID, H_D_ID), and by customer,
	// per customer's district (H_C_W_ID, H_C_D_ID), then H_C_ID. A
	// district's customer sums go to the worker that checks it, which
	// deletes each as its customer is checked.
	histW map[int64]checkSum
	histD map[[2]int64]checkSum
	histC map[[2]int64]map[int64]int64
}

// testHookCheckDistrict, if set, is called as a district's check
// begins; an error it returns is the district's (a test's failed read).
var testHookCheckDistrict func(w, d int64) error

// districtCheck is one district's part of a Check: the district, its
// customers' HISTORY sums, and what checking it found, kept apart from
// the report until it is merged in key order (merger).
type districtCheck struct {
	d     checkDistrict
	hist  map[int64]int64
	conds []ConditionResult
}

type checkWarehouse struct {
	id, ytd int64
}

type checkDistrict struct {
	w, d, ytd, nextOID int64
}

type checkSum struct {
	amount, rows int64
}

// checkOrder is what conditions 5, 6, 7, 10 and 12 need of an order.
type checkOrder struct {
	id, cID, olCnt int64
	carrierNull    bool
	carrier        int64
	lines          int64 // ORDER_LINE rows seen
}

func (ck *checker) cond(n int) *ConditionResult { return &ck.rep.Conditions[n-1] }

// fail counts a failure of condition n and keeps its description if there
// is room.
func (ck *checker) fail(n int, format string, args ...any) {
	failIn(ck.rep.Conditions, ck.opts.MaxDifferences, n, format, args...)
}

// failIn counts a failure of condition n in conds and keeps its
// description if conds holds fewer than max.
func failIn(conds []ConditionResult, max, n int, format string, args ...any) {
	c := &conds[n-1]
	c.Failures++
	if len(c.Differences) < max {
		c.Differences = append(c.Differences, fmt.Sprintf(format, args...))
	}
}

// merge adds what one district's check found to the report: its counts,
// and its differences while the report has room for them. Merged in key
// order, the differences kept are the first ones met in key order, as a
// check of one district after another would keep.
func (ck *checker) merge(dc *districtCheck) {
	for i := range dc.conds {
		from, to := &dc.conds[i], &ck.rep.Conditions[i]
		to.Warehouses += from.Warehouses
		to.Districts += from.Districts
		to.Customers += from.Customers
		to.Orders += from.Orders
		to.Failures += from.Failures
		for _, d := range from.Differences {
			if len(to.Differences) < ck.opts.MaxDifferences {
				to.Differences = append(to.Differences, d)
			}
		}
	}
}

// open finds the tables Check reads and checks that their columns are the
// schema's.
func (ck *checker) open() error {
	decl := make(map[string]engine.Table)
	for _, t := range Tables(engine.Clustered) {
		decl[t.Name] = t
	}
	for _, p := range []struct {
		h    **engine.TableHandle
		name string
	}{
		{&ck.warehouse, Warehouse}, {&ck.district, District}, {&ck.customer, Customer},
		{&ck.history, History}, {&ck.newOrder, NewOrder}, {&ck.orders, Orders}, {&ck.orderLine, OrderLine},
	} {
		t, err := ck.db.Table(p.name)
		if err != nil {
			if errors.Is(err, engine.ErrUnknownTable) {
				return fmt.Errorf("%w: no table %s: %w", ErrNotLoaded, p.name, err)
			}
			return fmt.Errorf("tpcc: check: table %s: %w", p.name, err)
		}
		got, want := t.Schema().Columns, decl[p.name].Columns
		if p.name == Customer && len(got) == len(want)+1 && got[len(want)].Name == CKey {
			got = got[:len(want)] // a wide key (LoadConfig.WideCustomerKey) after the specification's columns
		}
		if len(got) != len(want) {
			return fmt.Errorf("tpcc: check: table %s has %d columns, TPC-C's has %d", p.name, len(got), len(want))
		}
		for i := range want {
			if got[i].Name != want[i].Name || got[i].Type != want[i].Type || got[i].Scale != want[i].Scale {
				return fmt.Errorf("tpcc: check: table %s: column %d is %s %s(%d), want %s %s(%d)", p.name, i,
					got[i].Name, got[i].Type, got[i].Scale, want[i].Name, want[i].Type, want[i].Scale)
			}
		}
		*p.h = t
	}
	return nil
}

// checkColumns returns the names of t's columns at positions pos.
func checkColumns(t *engine.TableHandle, pos ...int) []string {
	cols := t.Schema().Columns
	names := make([]string, len(pos))
	for i, p := range pos {
		names[i] = cols[p].Name
	}
	return names
}

// checkScan streams the rows of t's primary key whose first columns equal prefix
// (nil: every row), with the columns cols filled, to fn.
func checkScan(tx *engine.Tx, t *engine.TableHandle, prefix []engine.Value, cols []string, fn func(engine.Row)) error {
	cur, err := tx.Scan(t, engine.ScanOptions{Lower: prefix, Upper: prefix, Columns: cols})
	if err != nil {
		return fmt.Errorf("tpcc: check: scan of %s: %w", t.Name(), err)
	}
	for cur.Next() {
		fn(cur.Row())
	}
	if err := cur.Close(); err != nil {
		return fmt.Errorf("tpcc: check: scan of %s: %w", t.Name(), err)
	}
	return nil
}

func (ck *checker) run() error {
	r := &snapshotReads{db: ck.db, m: ck.opts.Meter}
	defer r.abort()
	if err := r.part(ck.readWarehousesAndDistricts); err != nil {
		return err
	}
	if err := r.part(ck.readHistory); err != nil {
		return err
	}
	ck.checkYTD()
	work := make([]districtCheck, len(ck.dists))
	for i, d := range ck.dists {
		k := [2]int64{d.w, d.d}
		work[i] = districtCheck{d: d, hist: ck.histC[k]}
		delete(ck.histC, k)
	}
	ck.histC = nil // what is left names customers of no district checked
	mg := &merger{ck: ck, work: work, done: make([]bool, len(work))}
	// r.tx is open unless the reads so far took locks (snapshotReads.part
	// ends each part's transaction then).
	if workers := min(ck.opts.Workers, len(work)); workers > 1 && r.tx != nil &&
		readsWithoutLocks(ck.newOrder, ck.orders, ck.orderLine, ck.customer) {
		// The tables read per district: locking reads would hold a
		// worker's shared locks across all the districts it checks.
		err := withSharedSnapshot(r.tx, ck.opts.Meter, "check", workers, len(work), func(wtx *engine.Tx, j int) error {
			if err := ck.checkDistrict(wtx, &work[j]); err != nil {
				return err
			}
			mg.finish(j)
			return nil
		})
		if err != nil {
			return err
		}
	} else {
		for i := range work {
			if err := r.part(func(tx *engine.Tx) error { return ck.checkDistrict(tx, &work[i]) }); err != nil {
				return err
			}
			mg.finish(i)
		}
	}
	return r.end()
}

// merger adds finished districts to the report in key order as soon as
// every district before them has finished, and drops what each held, so
// that the differences kept at once are those of the districts finished
// out of order, not of every district.
type merger struct {
	ck   *checker
	work []districtCheck
	mu   sync.Mutex
	done []bool
	next int // the first district not merged
}

// finish records that district i is checked and merges what can be.
func (mg *merger) finish(i int) {
	mg.mu.Lock()
	defer mg.mu.Unlock()
	mg.done[i] = true
	for mg.next < len(mg.work) && mg.done[mg.next] {
		dc := &mg.work[mg.next]
		mg.ck.merge(dc)
		dc.conds, dc.hist = nil, nil
		mg.next++
	}
}

func (ck *checker) readWarehousesAndDistricts(tx *engine.Tx) error {
	err := checkScan(tx, ck.warehouse, nil, checkColumns(ck.warehouse, WID, WYtd), func(r engine.Row) {
		ck.whs = append(ck.whs, checkWarehouse{id: r[WID].I, ytd: r[WYtd].I})
	})
	if err != nil {
		return err
	}
	return checkScan(tx, ck.district, nil, checkColumns(ck.district, DID, DWID, DYtd, DNextOID), func(r engine.Row) {
		ck.dists = append(ck.dists, checkDistrict{w: r[DWID].I, d: r[DID].I, ytd: r[DYtd].I, nextOID: r[DNextOID].I})
	})
}

func (ck *checker) readHistory(tx *engine.Tx) error {
	ck.histW = make(map[int64]checkSum, len(ck.whs))
	ck.histD = make(map[[2]int64]checkSum, len(ck.dists))
	ck.histC = make(map[[2]int64]map[int64]int64, len(ck.dists))
	cols := checkColumns(ck.history, HCID, HCDID, HCWID, HDID, HWID, HAmount)
	return checkScan(tx, ck.history, nil, cols, func(r engine.Row) {
		amt := r[HAmount].I
		w := ck.histW[r[HWID].I]
		w.amount += amt
		w.rows++
		ck.histW[r[HWID].I] = w
		dk := [2]int64{r[HWID].I, r[HDID].I}
		d := ck.histD[dk]
		d.amount += amt
		d.rows++
		ck.histD[dk] = d
		ck.addHistC(r[HCWID].I, r[HCDID].I, r[HCID].I, amt)
	})
}

// addHistC adds amt to customer (w, d, c)'s HISTORY sum.
func (ck *checker) addHistC(w, d, c, amt int64) {
	k := [2]int64{w, d}
	sums := ck.histC[k]
	if sums == nil {
		sums = make(map[int64]int64)
		ck.histC[k] = sums
	}
	sums[c] += amt
}

// checkYTD checks conditions 1, 8 and 9.
func (ck *checker) checkYTD() {
	// 1: per warehouse, the sum of its districts' D_YTD. Districts are in
	// key order (d_w_id, d_id), so each warehouse's are consecutive.
	sumD := make(map[int64]checkSum, len(ck.whs))
	for _, d := range ck.dists {
		s := sumD[d.w]
		s.amount += d.ytd
		s.rows++
		sumD[d.w] = s
	}
	c1, c8, c9 := ck.cond(1), ck.cond(8), ck.cond(9)
	for _, w := range ck.whs {
		c1.Warehouses++
		c8.Warehouses++
		s := sumD[w.id]
		delete(sumD, w.id)
		c1.Districts += s.rows
		if w.ytd != s.amount {
			ck.fail(1, "warehouse %d: w_ytd = %s, sum(d_ytd) = %s over %d %s", w.id, checkMoney(w.ytd),
				checkMoney(s.amount), s.rows, checkPlural(s.rows, "district", "districts"))
		}
		h := ck.histW[w.id]
		if w.ytd != h.amount {
			ck.fail(8, "warehouse %d: w_ytd = %s, sum(h_amount) = %s over %d HISTORY %s", w.id, checkMoney(w.ytd),
				checkMoney(h.amount), h.rows, checkPlural(h.rows, "row", "rows"))
		}
	}
	// Districts of a warehouse that has no WAREHOUSE row break condition
	// 1 too: their D_YTD sums to more than the missing W_YTD.
	var orphans []int64
	for w := range sumD {
		orphans = append(orphans, w)
	}
	slices.Sort(orphans)
	for _, w := range orphans {
		s := sumD[w]
		c1.Districts += s.rows
		ck.fail(1, "warehouse %d: no WAREHOUSE row, sum(d_ytd) = %s over %d %s", w, checkMoney(s.amount),
			s.rows, checkPlural(s.rows, "district", "districts"))
	}
	for _, d := range ck.dists {
		c9.Districts++
		h := ck.histD[[2]int64{d.w, d.d}]
		if d.ytd != h.amount {
			ck.fail(9, "warehouse %d district %d: d_ytd = %s, sum(h_amount) = %s over %d HISTORY %s", d.w, d.d,
				checkMoney(d.ytd), checkMoney(h.amount), h.rows, checkPlural(h.rows, "row", "rows"))
		}
	}
	ck.histW, ck.histD = nil, nil
}

// checkDistrict checks conditions 2 to 7, 10, 11 and 12 for dc's
// district, reading its NEW_ORDER, ORDERS, ORDER_LINE and CUSTOMER rows
// in tx, into dc's conditions. Workers call it at once, each for a
// district of its own: it reads the checker's tables and options and
// changes nothing but dc.
func (ck *checker) checkDistrict(tx *engine.Tx, dc *districtCheck) error {
	d := dc.d
	if h := testHookCheckDistrict; h != nil {
		if err := h(d.w, d.d); err != nil {
			return err
		}
	}
	dc.conds = newConditions()
	cond := func(n int) *ConditionResult { return &dc.conds[n-1] }
	fail := func(n int, format string, args ...any) {
		failIn(dc.conds, ck.opts.MaxDifferences, n, format, args...)
	}
	prefix := []engine.Value{engine.Int(d.w), engine.Int(d.d)}
	place := fmt.Sprintf("warehouse %d district %d", d.w, d.d)

	// NEW_ORDER ids, ascending (the key is no_w_id, no_d_id, no_o_id).
	var noIDs []int64
	err := checkScan(tx, ck.newOrder, prefix, checkColumns(ck.newOrder, NOOID), func(r engine.Row) {
		noIDs = append(noIDs, r[NOOID].I)
	})
	if err != nil {
		return err
	}
	slices.Sort(noIDs) // already in key order; cheap insurance for the merges below

	// ORDERS, ascending by o_id.
	var orders []checkOrder
	err = checkScan(tx, ck.orders, prefix, checkColumns(ck.orders, OID, OCID, OCarrierID, OOlCnt), func(r engine.Row) {
		orders = append(orders, checkOrder{id: r[OID].I, cID: r[OCID].I, olCnt: r[OOlCnt].I,
			carrierNull: r[OCarrierID].IsNull(), carrier: r[OCarrierID].I})
	})
	if err != nil {
		return err
	}
	slices.SortFunc(orders, func(a, b checkOrder) int { return cmp.Compare(a.id, b.id) })
	nOrders := int64(len(orders))
	nNO := int64(len(noIDs))

	// 2 [3.3.2.2]. Over no rows, max(o_id) is taken as 0 (a district
	// without orders has d_next_o_id 1); with no NEW_ORDER rows (every
	// order delivered) only the first equality is checked.
	maxOID := int64(0)
	if nOrders > 0 {
		maxOID = orders[nOrders-1].id
	}
	c2 := cond(2)
	c2.Districts++
	c2.Orders += nOrders
	if nNO > 0 {
		maxNO := noIDs[nNO-1]
		if d.nextOID-1 != maxOID || maxNO != maxOID {
			fail(2, "%s: d_next_o_id - 1 = %d, max(o_id) = %d, max(no_o_id) = %d", place, d.nextOID-1, maxOID, maxNO)
		}
	} else if d.nextOID-1 != maxOID {
		fail(2, "%s: d_next_o_id - 1 = %d, max(o_id) = %d, max(no_o_id) = none (no NEW_ORDER rows)",
			place, d.nextOID-1, maxOID)
	}

	// 3 [3.3.2.3]: holds trivially with no NEW_ORDER rows.
	cond(3).Districts++
	if nNO > 0 {
		lo, hi := noIDs[0], noIDs[nNO-1]
		if hi-lo+1 != nNO {
			fail(3, "%s: max(no_o_id) - min(no_o_id) + 1 = %d - %d + 1 = %d, NEW_ORDER rows = %d",
				place, hi, lo, hi-lo+1, nNO)
		}
	}

	// 11 [3.3.2.11]
	if ck.opts.Fresh {
		c11 := cond(11)
		c11.Districts++
		c11.Orders += nOrders
		if nOrders-nNO != ck.opts.DeliveredPerDistrict {
			fail(11, "%s: count(ORDERS) - count(NEW_ORDER) = %d - %d = %d, expected %d",
				place, nOrders, nNO, nOrders-nNO, ck.opts.DeliveredPerDistrict)
		}
	}

	// 5 [3.3.2.5]: merge the orders with the NEW_ORDER ids.
	c5 := cond(5)
	c5.Districts++
	c5.Orders += nOrders
	j := 0
	for i := range orders {
		o := &orders[i]
		for j < len(noIDs) && noIDs[j] < o.id {
			j++
		}
		hasNO := j < len(noIDs) && noIDs[j] == o.id
		switch {
		case o.carrierNull && !hasNO:
			fail(5, "%s order %d: o_carrier_id = NULL, no NEW_ORDER row", place, o.id)
		case !o.carrierNull && hasNO:
			fail(5, "%s order %d: o_carrier_id = %d, NEW_ORDER row present", place, o.id, o.carrier)
		}
	}
	noIDs = nil

	// ORDER_LINE: 4 (the district's total), 6 (per order, counted here and
	// compared below), 7 (per line) and the delivered amounts of 10 and
	// 12 per customer.
	c7 := cond(7)
	c7.Districts++
	c7.Orders += nOrders
	var lines int64
	delivered := make(map[int64]int64)
	var prev *checkOrder
	err = checkScan(tx, ck.orderLine, prefix, checkColumns(ck.orderLine, OLOID, OLNumber, OLDeliveryD, OLAmount), func(r engine.Row) {
		lines++
		oid := r[OLOID].I
		o := prev
		if o == nil || o.id != oid {
			i, found := slices.BinarySearchFunc(orders, oid, func(a checkOrder, id int64) int { return cmp.Compare(a.id, id) })
			if !found {
				prev = nil
				return // a line without its order: counted by condition 4 only
			}
			o = &orders[i]
			prev = o
		}
		o.lines++
		dd := r[OLDeliveryD]
		if dd.IsNull() != o.carrierNull {
			carrier := "NULL"
			if !o.carrierNull {
				carrier = fmt.Sprint(o.carrier)
			}
			fail(7, "%s order %d line %d: ol_delivery_d = %s, o_carrier_id = %s",
				place, oid, r[OLNumber].I, dd.Format(engine.TypeTimestamp, 0), carrier)
		}
		if !dd.IsNull() {
			delivered[o.cID] += r[OLAmount].I
		}
	})
	if err != nil {
		return err
	}

	// 4 [3.3.2.4] and 6 [3.3.2.6]
	c4, c6 := cond(4), cond(6)
	c4.Districts++
	c4.Orders += nOrders
	c6.Districts++
	c6.Orders += nOrders
	var sumOlCnt int64
	for i := range orders {
		o := &orders[i]
		sumOlCnt += o.olCnt
		if o.olCnt != o.lines {
			fail(6, "%s order %d: o_ol_cnt = %d, ORDER_LINE rows = %d", place, o.id, o.olCnt, o.lines)
		}
	}
	if sumOlCnt != lines {
		fail(4, "%s: sum(o_ol_cnt) = %d, ORDER_LINE rows = %d", place, sumOlCnt, lines)
	}
	orders = nil

	// 10 [3.3.2.10] and 12 [3.3.2.12], per customer.
	c10, c12 := cond(10), cond(12)
	c10.Districts++
	c10.Orders += nOrders
	c12.Districts++
	c12.Orders += nOrders
	cols := checkColumns(ck.customer, CID, CBalance, CYtdPayment)
	return checkScan(tx, ck.customer, prefix, cols, func(r engine.Row) {
		c10.Customers++
		c12.Customers++
		cid, bal, ytd := r[CID].I, r[CBalance].I, r[CYtdPayment].I
		hist := dc.hist[cid]
		delete(dc.hist, cid)
		del := delivered[cid]
		if bal != del-hist {
			fail(10, "%s customer %d: c_balance = %s, sum(delivered ol_amount) - sum(h_amount) = %s - %s = %s",
				place, cid, checkMoney(bal), checkMoney(del), checkMoney(hist), checkMoney(del-hist))
		}
		if bal+ytd != del {
			fail(12, "%s customer %d: c_balance + c_ytd_payment = %s + %s = %s, sum(delivered ol_amount) = %s",
				place, cid, checkMoney(bal), checkMoney(ytd), checkMoney(bal+ytd), checkMoney(del))
		}
	})
}

// checkMoney formats cents as the engine prints a scale-2 decimal.
func checkMoney(cents int64) string {
	return engine.Dec(cents).Format(engine.TypeDecimal, 2)
}
