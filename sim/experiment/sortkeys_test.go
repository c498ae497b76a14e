package experiment

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/enginelab/enginelab/engine"
)

// TestSortKeys runs the experiment small, without timings: its verdict
// holds, the LIMIT query is a priority queue in both formats, and the
// grid crosses from addon fields to row references.
func TestSortKeys(t *testing.T) {
	skipUnderRace(t)
	rep, err := SortKeys(context.Background(), SortKeysConfig{Rows: 3000, Repeats: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Held {
		t.Fatalf("expectation did not hold: %s", rep.Verdict)
	}
	modes := map[string]bool{}
	for _, c := range rep.Cases {
		if c.Query == "ORDER BY v" {
			modes[c.Mode] = true
			if c.Format == "packed" && !c.PackedKeys {
				t.Fatalf("packed case without packed keys: %+v", c)
			}
		} else if !c.PriorityQueue || c.PackedKeys { // 100 < 3000/3: a priority queue
			t.Fatalf("LIMIT case: %+v", c)
		}
		if c.RealMedianMs != 0 {
			t.Fatalf("timed with Repeats -1: %+v", c)
		}
	}
	if !modes["addon-fields"] || !modes["row-refs"] {
		t.Fatalf("modes %v: the grid should cross the switch", modes)
	}
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "expectation held") {
		t.Fatalf("table:\n%s", b.String())
	}
	// The same configuration counts the same.
	again, err := SortKeys(context.Background(), SortKeysConfig{Rows: 3000, Repeats: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rep.Cases {
		if rep.Cases[i] != again.Cases[i] {
			t.Fatalf("case %d differs: %+v against %+v", i, rep.Cases[i], again.Cases[i])
		}
	}
}

func TestSortKeysInvalid(t *testing.T) {
	for _, c := range []SortKeysConfig{{Rows: -1}, {Ns: []int{0}}, {Collations: []string{"nope"}}, {Repeats: -2}, {SortBufferSize: 10}} {
		_, err := SortKeys(context.Background(), c, nil)
		if !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	if _, err := SortKeys(context.Background(), SortKeysConfig{Collations: []string{"nope"}}, nil); !errors.Is(err, engine.ErrUnknownCollation) {
		t.Errorf("collation: %v", err)
	}
}
