package experiment

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/sim/report"
	"github.com/enginelab/enginelab/tpcc"
)

// A sweep checks every value's sides before the first loads, and wants
// two values at least.
func TestSweepRefusesFirst(t *testing.T) {
	e, err := Lookup("stocklevel-bound")
	require.NoError(t, err)
	ok := Params{Scale: tpcc.SmallScale}
	bad := ok
	bad.Hardware.Store = "floppy"
	var ran []string
	_, err = Sweep(context.Background(), e, "store-device", []string{"nvme-ssd", "floppy"}, []Params{ok, bad},
		func(s string) { ran = append(ran, s) })
	require.Error(t, err)
	require.True(t, errors.Is(err, hw.ErrUnknownProfile) || errors.Is(err, ErrInvalidConfig), "%v", err)
	require.Contains(t, err.Error(), "store-device=floppy")
	require.Empty(t, ran, "nothing ran")
	_, err = Sweep(context.Background(), e, "terminals", []string{"1"}, []Params{ok}, nil)
	require.ErrorIs(t, err, ErrInvalidConfig)
}

// The table: a line per value, each side's tpmC and its ratio to the
// first side's, the headline, and the values where the expectation did
// not hold.
func TestSweepTable(t *testing.T) {
	s := &SweepReport{Base: "x", Setting: "pool", Values: []string{"16MiB", "64MiB"}, Question: "q?"}
	side := func(tpm float64) *report.Report { return &report.Report{Run: &report.Run{TpmC: tpm}} }
	s.Add("16MiB", &Report{Labels: []string{"a", "b"}, Params: Params{Seed: 3}, Sides: []*report.Report{side(1000), side(500)},
		Headline: Headline{Figure: "tpmC", Base: 1000, Side: 500, Ratio: 0.5}, Held: true})
	s.Add("64MiB", &Report{Labels: []string{"a", "b"}, Sides: []*report.Report{side(0), side(700)},
		Headline: Headline{Figure: "tpmC", Base: 0, Side: 700}, Verdict: "no base"})
	require.Equal(t, 0.5, s.Ratio(0, 1))
	require.Zero(t, s.Ratio(1, 1), "no ratio against nothing")
	require.False(t, s.Held())
	var b strings.Builder
	require.NoError(t, s.WriteTable(&b))
	require.Equal(t, `sweep of experiment x over --pool (simulated, seed 3; ratios against a)
question: q?
headline: tpmC

   pool  a tpmC  b tpmC  ratio  headline base  side  ratio  held
  16MiB    1000     500   0.50           1000   500  0.500   yes
  64MiB       0     700   0.00              0   700  0.000    NO
pool=64MiB: the expectation did NOT hold: no base
`, b.String())
}
