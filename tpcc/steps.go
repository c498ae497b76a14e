package tpcc

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/enginelab/enginelab/engine"
)

// Step is one engine call of a transaction type, or a run of calls of one
// kind (a scan's open and its Next calls): the unit of the per-step
// statistics, as Juice's Analyze.pl split a run by query. The Executor
// marks the start of each step; a step lasts until the next mark (or the
// transaction's end), so the steps of a transaction cover its time from
// its first engine call to the end of its commit, client work between the
// calls included. Each Step belongs to one transaction type (Step.Tx).
type Step uint8

// The steps, grouped by transaction type in the order the transactions
// run them [2.4.2–2.8.2].
const (
	NOWarehouse       Step = iota // New-Order: read warehouse
	NODistrict                    // read district for update
	NODistrictUpdate              // update district (d_next_o_id)
	NOCustomer                    // read customer
	NOInsertOrder                 // insert order
	NOInsertNewOrder              // insert new-order
	NOItem                        // read item (once a line)
	NOStock                       // read stock for update
	NOStockUpdate                 // update stock
	NOInsertOrderLine             // insert order line
	NORollback                    // roll back (the unused item)
	NOCommit                      // commit
	PWarehouse                    // Payment: read warehouse for update
	PWarehouseUpdate              // update warehouse
	PDistrict                     // read district for update
	PDistrictUpdate               // update district
	PByNameCount                  // count customers by last name
	PByNameScan                   // scan customers by last name
	PCustomer                     // read customer for update
	PCustomerUpdate               // update customer
	PInsertHistory                // insert history
	PCommit                       // commit
	OSByNameCount                 // Order-Status: count customers by last name
	OSByNameScan                  // scan customers by last name
	OSCustomer                    // read customer
	OSOrder                       // read the customer's newest order
	OSOrderLines                  // scan its order lines
	OSCommit                      // commit
	DNewOrder                     // Delivery: scan the district's oldest new-order
	DDeleteNewOrder               // delete new-order
	DOrder                        // read order for update
	DOrderUpdate                  // update order (carrier)
	DOrderLines                   // scan order lines
	DOrderLineUpdate              // update order line (delivery date)
	DCustomer                     // read customer for update
	DCustomerUpdate               // update customer
	DCommit                       // commit
	SLDistrict                    // Stock-Level: read district
	SLOrderLines                  // scan the last 20 orders' lines
	SLStock                       // read stock
	SLCommit                      // commit
	NumSteps
)

var stepInfo = [NumSteps]struct {
	tx   TxType
	name string
}{
	{NewOrderTx, "read warehouse"}, {NewOrderTx, "read district for update"}, {NewOrderTx, "update district"},
	{NewOrderTx, "read customer"}, {NewOrderTx, "insert order"}, {NewOrderTx, "insert new-order"},
	{NewOrderTx, "read item"}, {NewOrderTx, "read stock for update"}, {NewOrderTx, "update stock"},
	{NewOrderTx, "insert order line"}, {NewOrderTx, "roll back (unused item)"}, {NewOrderTx, "commit"},
	{PaymentTx, "read warehouse for update"}, {PaymentTx, "update warehouse"}, {PaymentTx, "read district for update"},
	{PaymentTx, "update district"}, {PaymentTx, "count customers by name"}, {PaymentTx, "scan customers by name"},
	{PaymentTx, "read customer for update"}, {PaymentTx, "update customer"}, {PaymentTx, "insert history"},
	{PaymentTx, "commit"},
	{OrderStatusTx, "count customers by name"}, {OrderStatusTx, "scan customers by name"}, {OrderStatusTx, "read customer"},
	{OrderStatusTx, "read newest order"}, {OrderStatusTx, "scan order lines"}, {OrderStatusTx, "commit"},
	{DeliveryTx, "scan oldest new-order"}, {DeliveryTx, "delete new-order"}, {DeliveryTx, "read order for update"},
	{DeliveryTx, "update order"}, {DeliveryTx, "scan order lines"}, {DeliveryTx, "update order line"},
	{DeliveryTx, "read customer for update"}, {DeliveryTx, "update customer"}, {DeliveryTx, "commit"},
	{StockLevelTx, "read district"}, {StockLevelTx, "scan order lines"}, {StockLevelTx, "read stock"}, {StockLevelTx, "commit"},
}

// commitStep is each type's commit.
var commitStep = [NumTxTypes]Step{NOCommit, PCommit, OSCommit, DCommit, SLCommit}

// Tx is the transaction type the step belongs to.
func (s Step) Tx() TxType { return stepInfo[s].tx }

func (s Step) String() string {
	if s < NumSteps {
		return stepInfo[s].name
	}
	return "unknown step"
}

// Step histograms: nanoseconds up to 10 s and node visits up to a
// million, two significant digits (1%): about 45 KB a step, allocated at a
// terminal's first call of the step, so that recording allocates once per
// terminal and step, never per call. A value above the range is recorded
// as its top (the exact maximum and sum are kept beside: a lock wait of
// 50 s stays 50 s there).
//
// A step's calls reach its histograms stepBatch at a time: between two
// calls of one step a transaction reads megabytes of pages, which leave
// the histograms' counts out of the processor's cache, so that adding
// each call as it came cost a cache miss or two a call (3.6% of the CPU
// of a W1 run at four terminals, with some forty steps a transaction). A
// batch's values fall in a few lines of the counts, read once for all of
// them. The exact count, sum, minimum and maximum are kept at each call.
const (
	stepLatencyMax = int64(10 * time.Second)
	stepNodesMax   = 1_000_000
	stepBatch      = 64
)

// StepStats are one step's calls: exact count, sum, minimum and maximum of
// the latency (nanoseconds) and of the node visits, and their
// distributions for percentiles and the trimmed mean (nil until the first
// call).
type StepStats struct {
	Count                        int64
	LatencySum, LatencyMin       int64 // nanoseconds
	LatencyMax                   int64
	NodesSum, NodesMin, NodesMax int64
	// Latency and Nodes hold every call once the calls pending are
	// flushed: Merge flushes both sides, and a terminal flushes its
	// steps when its Run returns.
	Latency, Nodes *hdrhistogram.Histogram
	pend           *stepPending
}

// stepPending are a step's calls not yet in its histograms.
type stepPending struct {
	n  int
	ns [stepBatch]int64
	nv [stepBatch]int64
}

func newStepStats() StepStats { return StepStats{} }

// histograms allocates s's histograms if it has none.
func (s *StepStats) histograms() {
	if s.Latency == nil {
		s.Latency, s.Nodes = hdrhistogram.New(1, stepLatencyMax, 2), hdrhistogram.New(1, stepNodesMax, 2)
	}
}

// flush adds the calls pending to the histograms.
func (s *StepStats) flush() {
	p := s.pend
	if p == nil {
		return
	}
	for i := range p.n {
		_ = s.Latency.RecordValue(p.ns[i]) // within range by construction
		_ = s.Nodes.RecordValue(p.nv[i])
	}
	p.n = 0
}

// record adds one call that took d and visited nodes B+tree nodes.
func (s *StepStats) record(d time.Duration, nodes int64) {
	s.histograms()
	if s.pend == nil { // only what records calls batches them; a merged total has none
		s.pend = &stepPending{}
	}
	ns, nodes := max(0, int64(d)), max(0, nodes)
	if s.Count == 0 || ns < s.LatencyMin {
		s.LatencyMin = ns
	}
	if s.Count == 0 || nodes < s.NodesMin {
		s.NodesMin = nodes
	}
	s.LatencyMax, s.NodesMax = max(s.LatencyMax, ns), max(s.NodesMax, nodes)
	s.Count++
	s.LatencySum += ns
	s.NodesSum += nodes
	p := s.pend
	p.ns[p.n], p.nv[p.n] = min(ns, stepLatencyMax), min(nodes, stepNodesMax)
	if p.n++; p.n == stepBatch {
		s.flush()
	}
}

// Merge adds o into s, flushing the calls pending on both.
func (s *StepStats) Merge(o *StepStats) {
	if o.Count == 0 {
		return
	}
	s.histograms()
	s.flush()
	o.flush()
	if s.Count == 0 {
		s.LatencyMin, s.NodesMin = o.LatencyMin, o.NodesMin
	}
	s.LatencyMin, s.NodesMin = min(s.LatencyMin, o.LatencyMin), min(s.NodesMin, o.NodesMin)
	s.LatencyMax, s.NodesMax = max(s.LatencyMax, o.LatencyMax), max(s.NodesMax, o.NodesMax)
	s.Count += o.Count
	s.LatencySum += o.LatencySum
	s.NodesSum += o.NodesSum
	s.Latency.Merge(o.Latency)
	s.Nodes.Merge(o.Nodes)
}

// TrimmedMean is the mean of h's values without the lowest and the highest
// frac of them (Analyze.pl's 5%-trimmed average: frac = 0.05), each value
// taken at the middle of its histogram bucket (within h's precision).
func TrimmedMean(h *hdrhistogram.Histogram, frac float64) float64 {
	if h == nil {
		return 0
	}
	n := h.TotalCount()
	if n == 0 {
		return 0
	}
	cut := int64(float64(n) * frac)
	lo, hi := cut, n-cut // keep the values of rank [lo, hi)
	var sum float64
	var kept, rank int64
	for _, b := range h.Distribution() {
		from, to := max(rank, lo), min(rank+b.Count, hi)
		if to > from {
			sum += float64(to-from) * (float64(b.From) + float64(b.To)) / 2
			kept += to - from
		}
		rank += b.Count
	}
	if kept == 0 {
		return 0
	}
	return sum / float64(kept)
}

// stepClock times a terminal's steps: the Executor calls mark at each
// step's start, the terminal end after the commit. It records into the
// terminal's results only while on (a measured transaction). Reading the
// clock is the Env's Now: in simulated mode a yield point like the engine
// call that follows, so the step's time is what the scheduler priced for
// its calls.
type stepClock struct {
	env   Env
	obs   StepObserver // env's, if it is one
	m     *engine.Meter
	stats *[NumSteps]StepStats
	on    bool
	open  bool
	cur   Step
	start time.Time
	nodes int64
}

// stepEpoch anchors the real clock's step times: time.Since(stepEpoch)
// reads the monotonic clock alone, where time.Now reads the wall clock
// too (two clock reads; 2.4% of a one-terminal run's CPU went to the
// step clock's time.Now).
var stepEpoch = time.Now()

// now reads the step clock: the monotonic clock under RealEnv (the
// wall-clock part of the time returned is stepEpoch's, moved by as
// much), the Env's Now otherwise (a simulated run's yield point).
func (c *stepClock) now() time.Time {
	if _, ok := c.env.(RealEnv); ok {
		return stepEpoch.Add(time.Since(stepEpoch))
	}
	return c.env.Now()
}

// mark ends the step running, if any, and starts s.
func (c *stepClock) mark(s Step) {
	if c.obs != nil {
		c.obs.Step(s, c.m)
	}
	if !c.on {
		return
	}
	now := c.now()
	c.close(now)
	c.cur, c.start, c.nodes, c.open = s, now, c.m.NodeVisitsTotal(), true
}

// close ends the step running at now.
func (c *stepClock) close(now time.Time) {
	if c.open {
		c.stats[c.cur].record(now.Sub(c.start), c.m.NodeVisitsTotal()-c.nodes)
		c.open = false
	}
}
