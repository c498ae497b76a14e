package tpcc

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/engine"
)

// Every pass of 23 cards holds exactly 10 New-Order, 10 Payment and one of
// each other type, so the minimum mix of 5.2.3 holds over any pass.
func TestDeckMix(t *testing.T) {
	d := NewDeck(rand.New(rand.NewPCG(1, 2)))
	var first []TxType
	for pass := range 50 {
		var n [NumTxTypes]int
		for range 23 {
			c := d.Next()
			n[c]++
			if pass == 0 {
				first = append(first, c)
			}
		}
		require.Equal(t, [NumTxTypes]int{10, 10, 1, 1, 1}, n, "pass %d", pass)
	}
	// Passes are shuffled: the first pass is not in declaration order.
	require.NotEqual(t, []TxType{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3, 4}, first)
}

// Think times are negative exponential with the type's mean, truncated at
// ten times the mean [5.2.5.4]: over a seeded sample the truncation holds
// exactly and the mean is the type's (the truncation removes e^-10 of the
// mass, negligible here).
func TestThinkTime(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for tt := range NumTxTypes {
		var sum time.Duration
		const n = 200000
		for range n {
			// Checked by hand, not with require: a million calls of it
			// take seconds.
			if d := ThinkTime(r, tt); d < 0 || d > 10*ThinkMean[tt] {
				t.Fatalf("%s: think time %v outside [0, %v]", tt, d, 10*ThinkMean[tt])
			} else {
				sum += d
			}
		}
		mean := sum / n
		require.InDelta(t, float64(ThinkMean[tt]), float64(mean), 0.01*float64(ThinkMean[tt]), "%s", tt)
	}
}

// Results record latencies in a histogram and sum meters; Merge adds
// terminals' results; tpmC counts New-Orders per minute.
func TestResults(t *testing.T) {
	a, b := NewResults(), NewResults()
	for i := 1; i <= 100; i++ {
		a.Types[NewOrderTx].Record(time.Duration(i)*time.Millisecond, &engine.Meter{RowsExamined: 1})
	}
	b.Types[NewOrderTx].Record(time.Hour, &engine.Meter{RowsExamined: 2}) // beyond the histogram: recorded as its maximum
	b.Types[PaymentTx].Record(time.Microsecond/2, &engine.Meter{})        // below it: recorded as 1 µs
	b.Types[NewOrderTx].Retries = 3
	a.Merge(b)
	no := &a.Types[NewOrderTx]
	require.Equal(t, int64(101), no.Count)
	require.Equal(t, int64(3), no.Retries)
	require.Equal(t, int64(102), no.Meter.RowsExamined)
	// The median of 1..100 ms and one minute is the 51st value.
	require.InDelta(t, float64(51*time.Millisecond), float64(no.Percentile(50)), float64(time.Millisecond/10))
	require.InDelta(t, float64(time.Minute), float64(no.Percentile(100)), float64(time.Minute/500))
	require.Equal(t, time.Microsecond, a.Types[PaymentTx].Percentile(100))
	require.Equal(t, int64(102), a.Total())
	require.InDelta(t, 101.0/2, a.TpmC(2*time.Minute), 1e-9)
	require.Zero(t, a.TpmC(0))
	require.Equal(t, "stock-level", StockLevelTx.String())
}
