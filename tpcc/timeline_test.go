package tpcc

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The timeline hands each progress interval on as the first completion
// after it arrives (empty ones too, so the lines keep their rhythm), and
// the last at Finish, cut at the measured interval's end; the series
// counts completions by their end, late ones in the last interval.
func TestTimeline(t *testing.T) {
	_, err := NewTimeline(0, time.Second)
	require.ErrorIs(t, err, ErrInvalidConfig)
	tl, err := NewTimeline(time.Second, 2*time.Second)
	require.NoError(t, err)
	var got []Interval
	tl.OnInterval = func(iv Interval) { got = append(got, iv) }
	t0 := time.Unix(1_800_000_000, 0)
	tl.Record(NewOrderTx, t0, time.Millisecond) // before Start: ignored
	tl.Start(t0, 5*time.Second)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	tl.Record(NewOrderTx, at(100*time.Millisecond), 2*time.Millisecond)
	tl.Record(NewOrderTx, at(1500*time.Millisecond), 4*time.Millisecond)
	tl.Record(PaymentTx, at(1900*time.Millisecond), time.Millisecond)
	require.Empty(t, got)
	tl.Record(NewOrderTx, at(4200*time.Millisecond), 8*time.Millisecond) // ends [0,2) and the empty [2,4)
	require.Len(t, got, 2)
	require.Equal(t, 0, got[0].Index)
	require.Equal(t, 2*time.Second, got[0].End)
	require.Equal(t, int64(2), got[0].Types[NewOrderTx].Count)
	require.InDelta(t, 2*time.Millisecond, got[0].Types[NewOrderTx].P50, float64(10*time.Microsecond))
	require.InDelta(t, 4*time.Millisecond, got[0].Types[NewOrderTx].P99, float64(10*time.Microsecond))
	require.Equal(t, int64(1), got[0].Types[PaymentTx].Count)
	require.Equal(t, 60.0, got[0].PerMinute(2))
	require.Zero(t, got[1].Types[NewOrderTx].Count)
	tl.Record(DeliveryTx, at(6300*time.Millisecond), time.Millisecond) // begun inside, ended after: in the last interval
	tl.Finish()
	require.Len(t, got, 3)
	require.Equal(t, 4*time.Second, got[2].Start)
	require.Equal(t, 5*time.Second, got[2].End, "cut at the measured interval's end")
	require.Equal(t, int64(1), got[2].Types[NewOrderTx].Count)
	require.Equal(t, int64(1), got[2].Types[DeliveryTx].Count)
	require.InDelta(t, 8*time.Millisecond, got[2].Types[NewOrderTx].P90, float64(10*time.Microsecond))
	s := tl.Series()
	require.Len(t, s, 5)
	require.Equal(t, [NumTxTypes]int64{1, 0, 0, 0, 0}, s[0])
	require.Equal(t, [NumTxTypes]int64{1, 1, 0, 0, 0}, s[1])
	require.Equal(t, [NumTxTypes]int64{}, s[2])
	require.Equal(t, [NumTxTypes]int64{1, 0, 0, 1, 0}, s[4])
	require.Equal(t, time.Second, tl.Step())
	tl.Finish() // nothing more: no interval
	require.Len(t, got, 3)
}
