package tpcc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/enginelab/enginelab/engine"
)

// RunConfig says how a run drives a loaded database.
type RunConfig struct {
	// Warehouses is the W the database was loaded with.
	Warehouses int
	// Scale is the scale the database was loaded at (Loaded.Scale; the
	// zero value is full scale): the terminals draw customers, items and
	// last names within it. A database whose ConfigTable states another
	// scale is refused.
	Scale Scale
	// Terminals is the number of terminals; terminal t (0-based) has home
	// warehouse t mod W + 1 and district (t / W) mod 10 + 1 [4.1.3]. At
	// most 255 per warehouse (HistoryID). 0: 10 per warehouse.
	Terminals int
	// Duration is the measured interval; Warmup runs the workload before
	// it, unmeasured.
	Duration, Warmup time.Duration
	// Seed seeds the terminals' inputs; the run's NURand constants are
	// drawn from it against LoadConstants [2.1.6.1].
	Seed          uint64
	LoadConstants Constants
	// Profile and StockLevelNoLowerBound: see Executor.
	Profile                Profile
	StockLevelNoLowerBound bool
	// DeliveryLimit1: see Executor.
	DeliveryLimit1 bool
	// KeyingAndThink waits the specification's keying and think times
	// [5.2.5]; off (throughput runs) a terminal submits its next
	// transaction at once.
	KeyingAndThink bool
	// Isolation is the level the terminals' transactions run at
	// (engine.TxOptions); IsolationDefault: the database's
	// (engine.Options.Isolation). See Executor for what each
	// transaction reads with and without locks.
	Isolation engine.Isolation
	// Env reads time and waits; nil: RealEnv.
	Env Env
	// Transactions, if not 0, stops each terminal after that many
	// transactions (warm-up ones included), whatever the clock says: tests
	// and deterministic runs use it.
	Transactions int
	// Timeline, if set, follows the measured transactions over time (the
	// caller calls its Finish after the run).
	Timeline *Timeline
}

func (c *RunConfig) validate() error {
	switch {
	case c.Warehouses < 1 || c.Warehouses > MaxWarehouses:
		return fmt.Errorf("tpcc: %w: %d warehouses: want 1 to %d", ErrInvalidConfig, c.Warehouses, MaxWarehouses)
	case c.Terminals < 0 || c.Terminals > 255*c.Warehouses:
		return fmt.Errorf("tpcc: %w: %d terminals: want 1 to %d (255 per warehouse)", ErrInvalidConfig, c.Terminals, 255*c.Warehouses)
	case c.Duration <= 0:
		return fmt.Errorf("tpcc: %w: duration %v: want more than zero", ErrInvalidConfig, c.Duration)
	case c.Warmup < 0:
		return fmt.Errorf("tpcc: %w: warm-up %v is negative", ErrInvalidConfig, c.Warmup)
	case c.Profile < 0 || c.Profile >= numProfiles:
		return fmt.Errorf("%w: %v", ErrBadProfile, c.Profile)
	case c.Isolation > engine.Serializable:
		return fmt.Errorf("tpcc: %w: isolation level %v", ErrInvalidConfig, c.Isolation)
	}
	if err := c.Scale.Validate(); err != nil {
		return err
	}
	return CheckRunConstants(c.LoadConstants, NewRunConstants(c.Seed, c.LoadConstants))
}

// RunReport are a run's results.
type RunReport struct {
	Results  *Results
	Measured time.Duration // the measured interval
	Errors   []string      // transactions that failed for another reason than the specification's rollback or a retried deadlock
}

// TpmC is New-Order transactions per minute of the measured interval.
func (s *RunReport) TpmC() float64 { return s.Results.TpmC(s.Measured) }

// Run drives db with cfg.Terminals terminals until the warm-up and the
// measured interval have passed on cfg.Env's clock, and returns what was
// measured. A transaction that ends as a deadlock victim, a lock timeout
// or a serialization failure (engine.Retryable) is retried with the same
// inputs, and counted. Each terminal is a goroutine: real
// mode. A simulator that schedules terminals itself uses NewTerminals.
func Run(ctx context.Context, db *engine.DB, cfg RunConfig) (*RunReport, error) {
	terms, err := NewTerminals(db, cfg)
	if err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	errs := make([]error, len(terms))
	for i, term := range terms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = term.Run(ctx)
		}()
	}
	wg.Wait()
	return Collect(ctx, terms, errs)
}

// NewTerminals prepares the terminals of a run without starting any: each
// runs when its Run is called, on whatever goroutine the caller chooses.
// Every terminal reads time through cfg.Env, or through the Env that
// cfg.Env.ForTerminal returns when it implements TerminalEnvs.
func NewTerminals(db *engine.DB, cfg RunConfig) ([]*Terminal, error) {
	if cfg.Terminals == 0 {
		cfg.Terminals = 10 * cfg.Warehouses
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Env == nil {
		cfg.Env = RealEnv{}
	}
	handles, err := OpenTables(db)
	if err != nil {
		return nil, err
	}
	if err := checkRunScale(db, cfg.Scale); err != nil {
		return nil, err
	}
	runC := NewRunConstants(cfg.Seed, cfg.LoadConstants)
	start := cfg.Env.Now()
	measureFrom := start.Add(cfg.Warmup)
	end := measureFrom.Add(cfg.Duration)
	if cfg.Timeline != nil {
		cfg.Timeline.Start(measureFrom, cfg.Duration)
	}
	c := &cfg
	terms := make([]*Terminal, cfg.Terminals)
	for t := range cfg.Terminals {
		term := &Terminal{
			db: db, cfg: c, num: t, env: cfg.Env,
			w: int64(t%cfg.Warehouses + 1), d: int64((t/cfg.Warehouses)%DistrictsPerWarehouse + 1),
			rnd:  NewRand(cfg.Seed^uint64(t+1)*0x9e3779b97f4a7c15, runC),
			x:    &Executor{T: handles, Profile: cfg.Profile, StockLevelNoLowerBound: cfg.StockLevelNoLowerBound, DeliveryLimit1: cfg.DeliveryLimit1},
			res:  NewResults(),
			from: measureFrom, end: end,
		}
		if te, ok := cfg.Env.(TerminalEnvs); ok {
			term.env = te.ForTerminal(t)
		}
		term.obs, _ = term.env.(TxObserver)
		term.steps = stepClock{env: term.env, m: &term.m, stats: &term.res.Steps}
		term.steps.obs, _ = term.env.(StepObserver)
		term.x.steps = &term.steps
		term.rnd.SetScale(cfg.Scale)
		term.deck = NewDeck(rand.New(rand.NewPCG(cfg.Seed, uint64(t))))
		term.think = rand.New(rand.NewPCG(cfg.Seed^0x7417, uint64(t)))
		term.backoff = rand.New(rand.NewPCG(cfg.Seed^0xbac0ff, uint64(t)))
		if term.hseq, err = lastHistorySeq(db, handles, term.w, t/cfg.Warehouses+1); err != nil {
			return nil, err
		}
		terms[t] = term
	}
	return terms, nil
}

// checkRunScale refuses a run at scale s on a database whose ConfigTable
// states another: its inputs would name customers and items that do not
// exist, or leave most of them untouched. A database without the table
// (one a test built by hand) is taken at its word.
func checkRunScale(db *engine.DB, s Scale) error {
	if _, err := db.Table(ConfigTable); err != nil {
		return nil
	}
	l, err := ReadLoaded(db)
	if err != nil {
		return err
	}
	if l.Scale != s.canonical() {
		return fmt.Errorf("tpcc: %w: a run at %v scale on a database loaded at %v scale", ErrInvalidConfig, s, l.Scale)
	}
	return nil
}

// Collect merges the results of terminals that have run, errs[i] being
// what terms[i].Run returned, into the run's statistics.
func Collect(ctx context.Context, terms []*Terminal, errs []error) (*RunReport, error) {
	total := NewResults()
	var msgs []string
	for i, t := range terms {
		total.Merge(t.res)
		if errs[i] != nil {
			msgs = append(msgs, fmt.Sprintf("terminal %d: %v", t.num, errs[i]))
		}
	}
	var measured time.Duration
	if len(terms) > 0 {
		measured = terms[0].cfg.Duration
	}
	stats := &RunReport{Results: total, Measured: measured, Errors: msgs}
	if len(msgs) > 0 {
		return stats, fmt.Errorf("tpcc: %d terminals stopped on errors, the first: %s", len(msgs), msgs[0])
	}
	return stats, ctx.Err()
}

// TerminalEnvs is an Env that gives each terminal an Env of its own (a
// simulator's per-terminal virtual clock).
type TerminalEnvs interface {
	Env
	ForTerminal(num int) Env
}

// Backoffer, when a terminal's Env implements it, waits a retry's
// backoff (the simulator counts it as lock wait, part of the
// transaction's response time); otherwise the Env's Sleep does.
type Backoffer interface {
	Backoff(d time.Duration)
}

// Retry backoff: before its n-th retry a transaction waits a time drawn
// uniformly below RetryBackoff << min(n-1, maxBackoffShift).
const (
	RetryBackoff    = 100 * time.Microsecond
	maxBackoffShift = 10
)

// TxObserver, when a terminal's Env implements it, hears each transaction
// begin and end: the simulator splits response times by where they went.
// Measured says whether the transaction counts in the results; its meter
// holds every attempt's cost. The meter is the terminal's, reused for its
// next transaction: it is valid during the call only.
type TxObserver interface {
	TxBegin(kind TxType)
	TxEnd(kind TxType, measured bool, m *engine.Meter)
}

// StepObserver, when a terminal's Env implements it, hears each step of
// every transaction as it starts, measured or not (warm-up, retries), with
// the transaction's meter: a client model's view of the statements the
// transaction sends (the simulator's client and server cost layer).
type StepObserver interface {
	Step(s Step, m *engine.Meter)
}

// Terminal is one emulated terminal: a home warehouse and district, its own
// random streams, and its results.
type Terminal struct {
	db        *engine.DB
	cfg       *RunConfig
	num       int
	env       Env
	obs       TxObserver // env's, if it is one
	w, d      int64
	rnd       *Rand
	deck      *Deck
	think     *rand.Rand
	backoff   *rand.Rand // retries' backoffs
	x         *Executor
	res       *Results
	from, end time.Time
	hseq      uint32 // the history rows this terminal has written
	lines     []OrderLineInput
	// m is the meter of the transaction running, reset for each (its
	// per-index counters keep their room).
	m engine.Meter
	// steps times the steps of measured transactions (x marks them).
	steps stepClock
}

// hid returns the next h_id of this terminal: terminal slot t/W+1 of its
// home warehouse (slot 0 is the loader's).
func (t *Terminal) hid() int64 {
	t.hseq++
	return HistoryID(int(t.w), t.num/t.cfg.Warehouses+1, t.hseq)
}

// Num is the terminal's number, from 0.
func (t *Terminal) Num() int { return t.num }

// Results are what the terminal has measured so far.
func (t *Terminal) Results() *Results { return t.res }

// Run submits transactions until the measured interval ends on the
// terminal's clock, the configured count is reached, or ctx is done.
func (t *Terminal) Run(ctx context.Context) error {
	defer t.res.flushSteps()
	env := t.env
	for n := 0; ctx.Err() == nil; n++ {
		now := env.Now()
		if !now.Before(t.end) || (t.cfg.Transactions > 0 && n >= t.cfg.Transactions) {
			return nil
		}
		kind := t.deck.Next()
		if t.cfg.KeyingAndThink {
			env.Sleep(KeyingTime[kind])
		}
		begin := env.Now()
		if t.obs != nil {
			t.obs.TxBegin(kind)
		}
		m := &t.m
		*m = engine.Meter{Index: m.Index[:0]} // the index counters grow again from zero
		measured := !begin.Before(t.from) && begin.Before(t.end)
		t.steps.on = measured
		retries, serial, rolledBack, skipped, err := t.execute(kind, m)
		if t.obs != nil {
			t.obs.TxEnd(kind, measured && err == nil, m)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		if measured {
			now := env.Now()
			t.steps.close(now)
			if tl := t.cfg.Timeline; tl != nil {
				tl.Record(kind, now, now.Sub(begin))
			}
			s := &t.res.Types[kind]
			s.Record(now.Sub(begin), m)
			s.Retries += retries
			s.Skipped += skipped
			s.SerializationFailures += serial
			if rolledBack {
				s.Rollbacks++
			}
		}
		if t.cfg.KeyingAndThink {
			env.Sleep(ThinkTime(t.think, kind))
		}
	}
	return ctx.Err()
}

// retryable says a transaction ended as a deadlock victim, a lock
// timeout or a serialization failure: it is already rolled back and runs
// again.
func retryable(err error) bool { return engine.Retryable(err) }

// execute draws kind's inputs and runs it until it completes, retrying
// deadlock victims, lock timeouts and serialization failures with the
// same inputs (serial counts the last). m is charged every attempt.
func (t *Terminal) execute(kind TxType, m *engine.Meter) (retries, serial int64, rolledBack bool, skipped int64, err error) {
	env := t.env
	r := t.rnd
	W := int64(t.cfg.Warehouses)
	var attempt func(tx *engine.Tx) error
	switch kind {
	case NewOrderTx:
		in := NewOrderInput{WID: t.w, DID: r.Int64(1, 10), CID: int64(r.CustomerID()), EntryD: env.Now()}
		n := r.Int(5, 15)
		unused := r.Percent(1) // 2.4.1.4: the last item id is unused
		t.lines = t.lines[:0]
		for k := range n {
			l := OrderLineInput{IID: int64(r.ItemID()), SupplyWID: t.w, Quantity: r.Int64(1, 10)}
			if k == n-1 && unused {
				l.IID = int64(t.cfg.Scale.NumItems() + 1)
			}
			if W > 1 && r.Percent(1) { // 2.4.1.5: a remote supplier
				l.SupplyWID = t.otherWarehouse()
			}
			t.lines = append(t.lines, l)
		}
		in.Lines = t.lines
		attempt = func(tx *engine.Tx) error { _, err := t.x.NewOrder(tx, &in); return err }
	case PaymentTx:
		in := PaymentInput{WID: t.w, DID: r.Int64(1, 10), Amount: r.Int64(100, 500000), Date: env.Now()}
		in.CWID, in.CDID = t.w, in.DID
		if W > 1 && !r.Percent(85) { // 2.5.1.2: a remote customer
			in.CWID, in.CDID = t.otherWarehouse(), r.Int64(1, 10)
		}
		if r.Percent(60) { // 2.5.1.2: by last name
			in.CLast = r.RandomLastName()
		} else {
			in.CID = int64(r.CustomerID())
		}
		in.HID = t.hid()
		attempt = func(tx *engine.Tx) error { _, err := t.x.Payment(tx, &in); return err }
	case OrderStatusTx:
		in := OrderStatusInput{WID: t.w, DID: r.Int64(1, 10)}
		if r.Percent(60) {
			in.CLast = r.RandomLastName()
		} else {
			in.CID = int64(r.CustomerID())
		}
		attempt = func(tx *engine.Tx) error { _, err := t.x.OrderStatus(tx, &in); return err }
	case DeliveryTx:
		in := DeliveryInput{WID: t.w, CarrierID: r.Int64(1, 10), Date: env.Now()}
		attempt = func(tx *engine.Tx) error {
			n, err := t.x.Delivery(tx, &in)
			skipped = int64(n)
			return err
		}
	case StockLevelTx:
		in := StockLevelInput{WID: t.w, DID: t.d, Threshold: r.Int64(10, 20)}
		attempt = func(tx *engine.Tx) error { _, err := t.x.StockLevel(tx, &in); return err }
	}
	opts := engine.TxOptions{Isolation: t.cfg.Isolation}
	for {
		tx := t.db.BeginTx(m, opts)
		err := attempt(tx)
		switch {
		case err == nil:
			t.x.step(commitStep[kind])
			return retries, serial, false, skipped, tx.Commit()
		case errors.Is(err, ErrUnusedItem):
			return retries, serial, true, skipped, nil // rolled back by the transaction itself
		case retryable(err):
			retries++ // already rolled back
			if errors.Is(err, engine.ErrSerialization) {
				serial++
			}
			t.backOff(retries)
		default:
			_ = tx.Rollback()
			return retries, serial, false, skipped, err
		}
	}
}

// backOff waits before retry n (from 1): a random time, as a client's
// retry loop would, so that two transactions that met in a deadlock do
// not meet again in lockstep. In simulated mode, whose time is
// deterministic, the same inputs retried at once can repeat the same
// interleaving, and so the same deadlock, forever.
func (t *Terminal) backOff(n int64) {
	d := time.Duration(t.backoff.Int64N(int64(RetryBackoff << min(n-1, maxBackoffShift))))
	if b, ok := t.env.(Backoffer); ok {
		b.Backoff(d)
		return
	}
	t.env.Sleep(d)
}

// lastHistorySeq returns the largest sequence number terminal slot of
// warehouse w has used in HISTORY (0 on a fresh load), so that a run on a
// database an earlier run used goes on numbering after it.
func lastHistorySeq(db *engine.DB, h *Handles, w int64, slot int) (uint32, error) {
	tx := db.Begin(nil)
	defer tx.Commit()
	lo, hi := HistoryID(int(w), slot, 0), HistoryID(int(w), slot+1, 0)
	cur, err := tx.Scan(h.History, engine.ScanOptions{Lower: []engine.Value{engine.Int(lo)},
		Upper: []engine.Value{engine.Int(hi)}, UpperExclusive: true, Reverse: true, Limit: 1, Columns: []string{"h_id"}})
	if err != nil {
		return 0, err
	}
	var seq uint32
	if cur.Next() {
		seq = uint32(cur.Row()[HID].I - lo)
	}
	return seq, cur.Close()
}

// otherWarehouse draws a warehouse other than the terminal's.
func (t *Terminal) otherWarehouse() int64 {
	W := int64(t.cfg.Warehouses)
	o := t.rnd.Int64(1, W-1)
	if o >= t.w {
		o++
	}
	return o
}
