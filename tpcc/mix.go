package tpcc

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/enginelab/enginelab/engine"
)

// TxType names the five transactions.
type TxType int

// The five transactions, in the order reports list them.
const (
	NewOrderTx TxType = iota
	PaymentTx
	OrderStatusTx
	DeliveryTx
	StockLevelTx
	NumTxTypes
)

var txNames = [NumTxTypes]string{"new-order", "payment", "order-status", "delivery", "stock-level"}

func (t TxType) String() string {
	if t >= 0 && t < NumTxTypes {
		return txNames[t]
	}
	return fmt.Sprintf("TxType(%d)", int(t))
}

// Deck draws transaction types the way most kits meet the minimum mix of
// 5.2.3 (Payment 43%, Order-Status 4%, Delivery 4%, Stock-Level 4%): a deck
// of 23 cards, 10 New-Order, 10 Payment and one of each other, shuffled
// before every pass. Over any pass the shares are exactly 43.5% Payment and
// 4.3% for each of the others.
type Deck struct {
	r     *rand.Rand
	cards [23]TxType
	pos   int
}

// NewDeck returns a deck shuffled by r.
func NewDeck(r *rand.Rand) *Deck {
	d := &Deck{r: r}
	for i := range 10 {
		d.cards[i] = NewOrderTx
		d.cards[10+i] = PaymentTx
	}
	d.cards[20], d.cards[21], d.cards[22] = OrderStatusTx, DeliveryTx, StockLevelTx
	d.pos = len(d.cards)
	return d
}

// Next returns the next card, reshuffling after the last one.
func (d *Deck) Next() TxType {
	if d.pos == len(d.cards) {
		d.r.Shuffle(len(d.cards), func(i, j int) { d.cards[i], d.cards[j] = d.cards[j], d.cards[i] })
		d.pos = 0
	}
	c := d.cards[d.pos]
	d.pos++
	return c
}

// Env is how a terminal reads time and waits (keying and think times).
// Real mode implements it with the wall clock (RealEnv); the simulated mode
// supplies virtual time. Terminals never call time.Now or time.Sleep
// themselves.
type Env interface {
	Now() time.Time
	Sleep(d time.Duration)
}

// RealEnv is the wall clock.
type RealEnv struct{}

// Now implements Env.
func (RealEnv) Now() time.Time { return time.Now() }

// Sleep implements Env.
func (RealEnv) Sleep(d time.Duration) { time.Sleep(d) }

// Keying times and mean think times per transaction type [5.2.5.7,
// 5.2.5.4].
var (
	KeyingTime = [NumTxTypes]time.Duration{18 * time.Second, 3 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second}
	ThinkMean  = [NumTxTypes]time.Duration{12 * time.Second, 12 * time.Second, 10 * time.Second, 5 * time.Second, 5 * time.Second}
)

// ThinkTime draws a think time for t: negative exponential with the type's
// mean, truncated at ten times the mean [5.2.5.4].
func ThinkTime(r *rand.Rand, t TxType) time.Duration {
	mean := float64(ThinkMean[t])
	// -ln(u) with u in (0, 1]: 1 - Float64() never is 0.
	d := -math.Log(1-r.Float64()) * mean
	return time.Duration(min(d, 10*mean))
}

// latencyMax is the largest latency a histogram records (longer ones are
// recorded as this): a minute, in microseconds.
const latencyMax = int64(time.Minute / time.Microsecond)

// TypeStats are the results of one transaction type.
type TypeStats struct {
	Count   int64 // completed (committed, or rolled back by the specification's 1%)
	Retries int64 // attempts retried: deadlock victims, lock timeouts, serialization failures
	// SerializationFailures counts the retries that were serialization
	// failures (engine.ErrSerialization: a write or locking read under a
	// snapshot met a row changed since).
	SerializationFailures int64
	Rollbacks             int64 // New-Order's unused-item rollbacks
	Skipped               int64 // Delivery: districts with no undelivered order
	Latency               *hdrhistogram.Histogram
	Meter                 engine.Meter // summed over completed transactions
}

func newTypeStats() TypeStats {
	// Microseconds, three significant digits.
	return TypeStats{Latency: hdrhistogram.New(1, latencyMax, 3)}
}

// Merge adds o into s.
func (s *TypeStats) Merge(o *TypeStats) {
	s.Count += o.Count
	s.Retries += o.Retries
	s.SerializationFailures += o.SerializationFailures
	s.Rollbacks += o.Rollbacks
	s.Skipped += o.Skipped
	s.Latency.Merge(o.Latency)
	s.Meter.Add(&o.Meter)
}

// Record adds one completed transaction that took d.
func (s *TypeStats) Record(d time.Duration, m *engine.Meter) {
	s.Count++
	us := max(1, min(d.Microseconds(), latencyMax))
	_ = s.Latency.RecordValue(us) // within range by construction
	s.Meter.Add(m)
}

// Percentile returns the q-th latency percentile (0 < q <= 100).
func (s *TypeStats) Percentile(q float64) time.Duration {
	return time.Duration(s.Latency.ValueAtQuantile(q)) * time.Microsecond
}

// Results are the per-type statistics of a run.
type Results struct {
	Types [NumTxTypes]TypeStats
	Steps [NumSteps]StepStats // the engine calls of measured transactions, by step
}

// NewResults returns empty results.
func NewResults() *Results {
	r := &Results{}
	for i := range r.Types {
		r.Types[i] = newTypeStats()
	}
	for i := range r.Steps {
		r.Steps[i] = newStepStats()
	}
	return r
}

// Merge adds o into r.
func (r *Results) Merge(o *Results) {
	for i := range r.Types {
		r.Types[i].Merge(&o.Types[i])
	}
	for i := range r.Steps {
		r.Steps[i].Merge(&o.Steps[i])
	}
}

// flushSteps adds every step's pending calls to its histograms.
func (r *Results) flushSteps() {
	for i := range r.Steps {
		r.Steps[i].flush()
	}
}

// Total returns the number of completed transactions of every type.
func (r *Results) Total() int64 {
	var n int64
	for i := range r.Types {
		n += r.Types[i].Count
	}
	return n
}

// TpmC returns New-Order transactions per minute over d (rolled-back ones
// count [5.4.2]).
func (r *Results) TpmC(d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(r.Types[NewOrderTx].Count) / d.Minutes()
}
