package replay

import (
	"encoding/json"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/tier"
	"github.com/enginelab/enginelab/cache/tier/lru"
	"github.com/enginelab/enginelab/cache/tier/slru"
)

// replayPage is the page size of the replay tests' traces, and slot what
// one page costs the lru, slru and belady tiers.
const (
	replayPage = 4096
	slot       = replayPage + tier.ItemOverhead
)

// ev is a trace event of a replayPage-sized page of space 1.
func ev(op byte, no uint32) tier.TraceEvent {
	return tier.TraceEvent{Op: op, ID: page.ID{Space: 1, Page: no}, Bytes: replayPage}
}

// parseEvents reads "p1 g1 d2 ..." (op, then page number of space 1).
func parseEvents(t testing.TB, s string) []tier.TraceEvent {
	t.Helper()
	var out []tier.TraceEvent
	for _, f := range strings.Fields(s) {
		var n uint32
		_, err := fmt.Sscanf(f[1:], "%d", &n)
		require.NoError(t, err, f)
		out = append(out, ev(f[0], n))
	}
	return out
}

// cyclicTrace is the pool's demand, in inclusive mode as a NullTier
// records it, of rounds scans over pages 0..n-1: each access a get (the
// pool's miss) followed by the push of the page read from the store.
func cyclicTrace(n, rounds int) *tier.Trace {
	tr := &tier.Trace{PageSize: replayPage, Mode: tier.Inclusive}
	for range rounds {
		for p := range uint32(n) {
			tr.Events = append(tr.Events, ev(tier.TraceGet, p), ev(tier.TracePut, p))
		}
	}
	return tr
}

// A cyclic scan over k+1 pages with room for k: the textbook case where
// LRU gets nothing and the optimum is known by construction.
//
// k = 3 slots, pages 0..3, R = 5 rounds: 20 gets.
//
// LRU: every get misses. The first round's gets are first touches. After
// the push of page p the tier holds the last three pages pushed, p-2..p,
// and the next get is of p+1 (mod 4), pushed four pushes ago and evicted
// by the push after it. Hits: 0.
//
// Optimum: at most k(R-1) = 12 hits. The first round's 4 gets cannot hit
// (a page enters only on the push after its get). Cut the other 16 gets
// into R-1 = 4 windows of k+1 = 4 consecutive gets, one round each: not
// all 4 can hit. If they did, just before the window's first get the pages
// of its first 3 gets would be resident (nothing enters but through a
// get's push) and so would its last page, pushed just before the window
// and needed at its end: 4 pages in 3 slots. So at least one miss per
// window: hits <= 16 - 4 = 12.
//
// Belady reaches it: after the first round it holds 0, 1, 2 and bypasses
// 3 at every push (3's next get is the farthest), so every round after the
// first hits 0, 1, 2 and misses 3: 4 x 3 = 12.
func TestReplayCyclic(t *testing.T) {
	tr := cyclicTrace(4, 5)
	rep, err := Run(tr, Config{Sizes: []int64{3 * slot}, Policies: []string{"lru", "belady", "slru", "ristretto"}, RistrettoRuns: 2})
	require.NoError(t, err)
	require.Equal(t, int64(20), rep.Gets)
	require.Equal(t, int64(20), rep.Puts)
	require.Equal(t, 4, rep.Pages)

	lru := rep.Result("lru", 3*slot)
	require.Equal(t, Result{Policy: "lru", SizeBytes: 3 * slot, Runs: 1, Gets: 20}, *lru)

	opt := rep.Result("belady", 3*slot)
	require.Equal(t, int64(12), opt.Hits, "k(R-1)")
	require.InDelta(t, 0.6, opt.HitRatio, 1e-12)
	require.Equal(t, opt.HitRatio, opt.HitRatioMin)
	require.Equal(t, opt.HitRatio, opt.HitRatioMax)
	require.Equal(t, int64(12), bruteForceHits(tr, 3), "the exhaustive search agrees")

	// No policy beats the optimum (ristretto counts page bytes only, so
	// at this size it too has room for 3 pages and no more).
	for _, p := range []string{"slru", "ristretto"} {
		r := rep.Result(p, 3*slot)
		require.LessOrEqual(t, r.HitRatioMax, opt.HitRatio, p)
	}
	ris := rep.Result("ristretto", 3*slot)
	require.Equal(t, 2, ris.Runs)
	require.Len(t, ris.RunHits, 2)
	require.LessOrEqual(t, ris.HitRatioMin, ris.HitRatio)
	require.LessOrEqual(t, ris.HitRatio, ris.HitRatioMax)

	// With room for all four pages, every get after the first round hits.
	rep, err = Run(tr, Config{Sizes: []int64{4 * slot}, Policies: []string{"lru", "belady"}})
	require.NoError(t, err)
	require.Equal(t, int64(16), rep.Result("lru", 4*slot).Hits)
	require.Equal(t, int64(16), rep.Result("belady", 4*slot).Hits)
}

// exclusiveTrace is a short exclusive-mode trace of pages A=1, B=2, C=3,
// D=4 (space 1): pushes of pages the pool evicted, gets of its misses.
const exclusiveTrace = "p1 p2 g1 p3 p1 g2 g3 p4 p2 g1 g4 g2 g2"

// LRU's hits on exclusiveTrace, worked by hand, and the budget's byte
// accounting: two slots hold two pages, 2 x 4096 bytes only one (each
// page costs 48 bytes more).
//
// Two slots; the tier after each event, most recently used first; in
// exclusive mode a hit deletes the page (the pool takes it back):
//
//	 1 p A  [A]
//	 2 p B  [B A]
//	 3 g A  hit 1, deleted: [B]
//	 4 p C  [C B]
//	 5 p A  evicts B: [A C]
//	 6 g B  miss
//	 7 g C  hit 2, deleted: [A]
//	 8 p D  [D A]
//	 9 p B  evicts A: [B D]
//	10 g A  miss
//	11 g D  hit 3, deleted: [B]
//	12 g B  hit 4, deleted: []
//	13 g B  miss
//
// 4 hits of 7 gets.
//
// One slot: each push evicts the page before it, so only a get right after
// its page's push hits: event 12 (B, pushed at 9; 10 and 11 are gets).
// 1 of 7.
//
// Belady, two slots: at 5 it bypasses A (next get at 10, after B's at 6
// and C's at 7), so 6 (B) hits as well: 5 of 7, the optimum (exhaustive
// search).
//
// In inclusive mode a hit deletes nothing, and cancels the page's next
// event if that is a push:
//
//	 1 p A  [A]
//	 2 p B  [B A]
//	 3 g A  hit 1: [A B], and cancels 5
//	 4 p C  evicts B: [C A]
//	 5 p A  canceled
//	 6 g B  miss
//	 7 g C  hit 2: [C A]
//	 8 p D  evicts A: [D C]
//	 9 p B  evicts C: [B D]
//	10 g A  miss
//	11 g D  hit 3: [D B]
//	12 g B  hit 4: [B D]
//	13 g B  hit 5
//
// 5 hits of 7.
func TestReplayExclusiveByHand(t *testing.T) {
	tr := &tier.Trace{PageSize: replayPage, Mode: tier.Exclusive, Events: parseEvents(t, exclusiveTrace)}
	sizes := []int64{2 * slot, 2 * replayPage}
	rep, err := Run(tr, Config{Sizes: sizes, Policies: []string{"lru", "belady"}})
	require.NoError(t, err)
	require.Equal(t, int64(7), rep.Gets)
	require.Equal(t, int64(4), rep.Result("lru", 2*slot).Hits)
	require.InDelta(t, 4.0/7, rep.Result("lru", 2*slot).HitRatio, 1e-12)
	require.Equal(t, int64(1), rep.Result("lru", 2*replayPage).Hits)
	require.Equal(t, int64(5), rep.Result("belady", 2*slot).Hits)
	require.Equal(t, int64(5), bruteForceHits(tr, 2))
	require.Equal(t, bruteForceHits(tr, 1), rep.Result("belady", 2*replayPage).Hits)

	// The same trace in inclusive mode.
	tr.Mode = tier.Inclusive
	rep, err = Run(tr, Config{Sizes: []int64{2 * slot}, Policies: []string{"lru"}})
	require.NoError(t, err)
	require.Equal(t, int64(5), rep.Result("lru", 2*slot).Hits)
}

// In inclusive mode a hit cancels the push that follows its get (the pool
// reads nothing from the store), and in exclusive mode deletes the page
// (the pool takes it back): the replay makes those calls, not the trace's.
func TestReplayPoolRules(t *testing.T) {
	// Inclusive, one slot: g1 misses, p1 admits; g1 hits and cancels the
	// p1 after it; p2 then evicts 1 and g2 hits. Were the canceled p1
	// replayed, the lru tier would see 3 puts, not 2.
	tr := &tier.Trace{PageSize: replayPage, Mode: tier.Inclusive, Events: parseEvents(t, "g1 p1 g1 p1 p2 g2")}
	lruTier, err := lru.New(slot)
	require.NoError(t, err)
	require.Equal(t, int64(2), drive(t, tr, lruTier))
	require.Equal(t, int64(2), lruTier.Stats().Puts, "the push after the hit was canceled")
	rep, err := Run(tr, Config{Sizes: []int64{slot}})
	require.NoError(t, err)
	for _, p := range Policies {
		require.Equal(t, int64(2), rep.Result(p, slot).Hits, p)
	}

	// Exclusive: g1 hits and deletes, so the second g1 misses even with
	// room; the recorded d1 after it is a no-op.
	tr = &tier.Trace{PageSize: replayPage, Mode: tier.Exclusive, Events: parseEvents(t, "p1 g1 d1 g1")}
	lruTier, err = lru.New(4 * slot)
	require.NoError(t, err)
	require.Equal(t, int64(1), drive(t, tr, lruTier))
	require.Equal(t, int64(2), lruTier.Stats().Deletes, "one after the hit, one recorded")
	rep, err = Run(tr, Config{Sizes: []int64{4 * slot}})
	require.NoError(t, err)
	for _, p := range Policies {
		require.Equal(t, int64(1), rep.Result(p, 4*slot).Hits, p)
	}
}

// drive replays tr into tier by hand, with the pool's rules written out
// separately from Run's, and returns the hits.
func drive(t testing.TB, tr *tier.Trace, tt tier.Tier) int64 {
	t.Helper()
	var hits int64
	canceled := map[page.ID]bool{} // inclusive: the page's next push is canceled
	buf := make([]byte, tr.PageSize)
	for i, e := range tr.Events {
		k := tier.Key{DB: 9, Epoch: 9, ID: e.ID}
		wasCanceled := canceled[e.ID]
		delete(canceled, e.ID) // only the very next event on the page
		switch e.Op {
		case tier.TraceGet:
			found, err := tt.Get(k, 0, buf)
			require.NoError(t, err, i)
			if !found {
				continue
			}
			hits++
			if tr.Mode == tier.Exclusive {
				require.NoError(t, tt.Delete(k))
			} else {
				canceled[e.ID] = true
			}
		case tier.TracePut:
			if !wasCanceled {
				_, err := tt.Put(k, 0, buf)
				require.NoError(t, err, i)
			}
		case tier.TraceDelete:
			require.NoError(t, tt.Delete(k))
		}
	}
	return hits
}

// randomTrace is n events over pages 0..pages-1 with a skewed choice of
// page, in the shape a NullTier records: in exclusive mode pushes and
// gets (and a few deletes); in inclusive mode each get followed by its
// push, with a few lone pushes (write-backs).
func randomTrace(rng *rand.Rand, mode tier.Mode, n, pages int) *tier.Trace {
	tr := &tier.Trace{PageSize: replayPage, Mode: mode}
	page := func() uint32 {
		// the square of a uniform: small pages are hot
		u := rng.Float64()
		return uint32(u * u * float64(pages))
	}
	for len(tr.Events) < n {
		p := page()
		switch r := rng.IntN(10); {
		case mode == tier.Exclusive && r < 5:
			tr.Events = append(tr.Events, ev(tier.TracePut, p))
		case mode == tier.Exclusive && r == 5:
			tr.Events = append(tr.Events, ev(tier.TraceDelete, p))
		case mode == tier.Inclusive && r < 2:
			tr.Events = append(tr.Events, ev(tier.TracePut, p))
		case mode == tier.Inclusive:
			tr.Events = append(tr.Events, ev(tier.TraceGet, p), ev(tier.TracePut, p))
		default:
			tr.Events = append(tr.Events, ev(tier.TraceGet, p))
		}
	}
	return tr
}

// testRand returns a seeded source and logs the seed.
func testRand(t *testing.T, seed uint64) *rand.Rand {
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// The lru and slru policies are the engine's tiers: a replay gives the hits
// that driving lru.New and slru.New by hand gives.
func TestReplayMatchesTiers(t *testing.T) {
	rng := testRand(t, 1)
	for _, mode := range []tier.Mode{tier.Exclusive, tier.Inclusive} {
		tr := randomTrace(rng, mode, 4000, 300)
		sizes := []int64{8 * slot, 40 * slot, 100*slot + 1000}
		rep, err := Run(tr, Config{Sizes: sizes, Policies: []string{"lru", "slru", "belady"}})
		require.NoError(t, err)
		for _, size := range sizes {
			lruTier, err := lru.New(size)
			require.NoError(t, err)
			slruTier, err := slru.New(size, nil)
			require.NoError(t, err)
			lh, sh := drive(t, tr, lruTier), drive(t, tr, slruTier)
			require.Equal(t, lh, rep.Result("lru", size).Hits, "%s lru %d", mode, size)
			require.Equal(t, sh, rep.Result("slru", size).Hits, "%s slru %d", mode, size)
			require.Equal(t, lruTier.Stats().Gets, rep.Gets)
			opt := rep.Result("belady", size).Hits
			require.LessOrEqual(t, lh, opt, "%s %d", mode, size)
			require.LessOrEqual(t, sh, opt, "%s %d", mode, size)
			t.Logf("%s %6d bytes: lru %d, slru %d, belady %d of %d gets", mode, size, lh, sh, opt, rep.Gets)
		}
	}
}

// Belady's hits equal the exhaustive search's on many small traces of the
// shapes the doc comment proves it optimal for.
func TestReplayBeladyOptimal(t *testing.T) {
	rng := testRand(t, 2)
	for i := range 300 {
		mode := tier.Exclusive
		if i%2 == 1 {
			mode = tier.Inclusive
		}
		tr := randomTrace(rng, mode, 8+rng.IntN(16), 2+rng.IntN(6))
		k := 1 + rng.IntN(3)
		rep, err := Run(tr, Config{Sizes: []int64{int64(k) * slot}, Policies: []string{"belady", "lru"}})
		require.NoError(t, err)
		want := bruteForceHits(tr, k)
		require.Equal(t, want, rep.Result("belady", int64(k)*slot).Hits, "trace %d (%s, %d slots): %v", i, mode, k, tr.Events)
		require.LessOrEqual(t, rep.Result("lru", int64(k)*slot).Hits, want)
	}
}

// bruteForceHits is the most hits any cache of k slots gets on tr (pages
// numbered below 64), under the replay's rules, by trying every choice
// of eviction: the reference Belady is checked against.
func bruteForceHits(tr *tier.Trace, k int) int64 {
	type state struct {
		i              int
		resident, skip uint64
	}
	ev := tr.Events
	memo := map[state]int64{}
	nextIsPut := func(i int) bool { // the next event on i's page is a put
		for j := i + 1; j < len(ev); j++ {
			if ev[j].ID == ev[i].ID {
				return ev[j].Op == tier.TracePut
			}
		}
		return false
	}
	var best func(s state) int64
	best = func(s state) int64 {
		if s.i == len(ev) {
			return 0
		}
		if v, ok := memo[s]; ok {
			return v
		}
		e := ev[s.i]
		bit := uint64(1) << e.ID.Page
		next := state{i: s.i + 1, resident: s.resident, skip: s.skip &^ bit}
		var v int64
		switch e.Op {
		case tier.TraceGet:
			if s.resident&bit != 0 {
				if tr.Mode == tier.Exclusive {
					next.resident &^= bit
				} else if nextIsPut(s.i) {
					next.skip |= bit
				}
				v = 1 + best(next)
			} else {
				v = best(next)
			}
		case tier.TracePut:
			if s.skip&bit != 0 {
				v = best(next)
				break
			}
			next.resident |= bit
			if bits.OnesCount64(next.resident) <= k {
				v = best(next)
				break
			}
			for r := next.resident; r != 0; r &= r - 1 {
				victim := r & -r
				alt := next
				alt.resident &^= victim
				v = max(v, best(alt))
			}
		case tier.TraceDelete:
			next.resident &^= bit
			v = best(next)
		}
		memo[s] = v
		return v
	}
	return best(state{})
}

// Default sizes are fractions of the trace's pages; the report carries
// the configuration it ran with; WriteTable prints a row per policy and
// a column per size; the JSON form has the documented names.
func TestReplayReport(t *testing.T) {
	tr := cyclicTrace(32, 2) // 32 pages of 4 KiB: 128 KiB
	rep, err := Run(tr, Config{RistrettoRuns: 1})
	require.NoError(t, err)
	require.Equal(t, []int64{8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10}, rep.Config.Sizes)
	require.Equal(t, Policies, rep.Config.Policies)
	require.Len(t, rep.Results, 4*5)
	require.Equal(t, "lru", rep.Results[0].Policy)
	require.Equal(t, int64(8<<10), rep.Results[0].SizeBytes)
	require.Equal(t, "belady", rep.Results[19].Policy)
	require.Equal(t, int64(128<<10), rep.Results[19].SizeBytes)
	// At 1x the 48 bytes per page leave room for 31 pages, not 32: a
	// cyclic scan then misses everything in lru and belady keeps 31 hits.
	require.Zero(t, rep.Result("lru", 128<<10).Hits)
	require.Equal(t, int64(31), rep.Result("belady", 128<<10).Hits)
	require.Nil(t, rep.Result("lru", 1))

	var b strings.Builder
	require.NoError(t, rep.WriteTable(&b))
	out := b.String()
	t.Log("\n" + out)
	require.Contains(t, out, "128 events (64 gets, 64 puts, 0 deletes), 32 pages of 4.0 KiB, inclusive mode")
	require.NotContains(t, out, "mean of", "one ristretto run: no range")
	require.Regexp(t, `(?m)^\s*policy\s+8 KiB\s+16 KiB\s+32 KiB\s+64 KiB\s+128 KiB$`, out)
	require.Regexp(t, `(?m)^\s*lru\s+0\.00\s+0\.00\s+0\.00\s+0\.00\s+0\.00$`, out)
	require.Regexp(t, `(?m)^\s*belady(\s+\d+\.\d\d){4}\s+48\.44$`, out, "31 of 64")
	for _, p := range Policies {
		require.Regexp(t, `(?m)^\s*`+p+`\s`, out)
	}

	doc, err := json.Marshal(rep)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(doc, &m))
	for _, k := range []string{"config", "page_size", "mode", "events", "gets", "puts", "deletes", "pages", "results"} {
		require.Contains(t, m, k)
	}
	res := m["results"].([]any)[0].(map[string]any)
	for _, k := range []string{"policy", "size_bytes", "runs", "gets", "hits", "hit_ratio", "hit_ratio_min", "hit_ratio_max"} {
		require.Contains(t, res, k)
	}
	require.NotContains(t, res, "run_hits", "lru has no runs to list")
	require.Contains(t, m["results"].([]any)[10].(map[string]any), "run_hits", "ristretto lists its runs")
	cfg := m["config"].(map[string]any)
	require.Contains(t, cfg, "ristretto_runs")

	// Several ristretto runs print their range.
	rep, err = Run(tr, Config{Sizes: []int64{64 << 10}, Policies: []string{"ristretto"}, RistrettoRuns: 3})
	require.NoError(t, err)
	b.Reset()
	require.NoError(t, rep.WriteTable(&b))
	require.Regexp(t, `(?m)^\s*ristretto\s+\d+\.\d\d \(\d+\.\d\d-\d+\.\d\d\)$`, b.String())
	require.Len(t, rep.Results[0].RunHits, 3)
}

// Bad configurations are refused with ErrInvalidConfig before any replay.
func TestReplayBadConfig(t *testing.T) {
	tr := cyclicTrace(4, 1)
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Sizes: []int64{1 << 20, 0}}, "replay size 0 bytes: want more than 0"},
		{Config{Sizes: []int64{-5}}, "replay size -5 bytes"},
		{Config{Sizes: []int64{1 << 20, 1 << 20}}, "given twice"},
		{Config{Policies: []string{"lru", "arc"}}, `replay policy "arc": want one of lru, slru, ristretto, belady`},
		{Config{Policies: []string{"lru", "lru"}}, `replay policy "lru" given twice`},
		{Config{RistrettoRuns: -1}, "ristretto runs -1: want at least 1"},
	} {
		_, err := Run(tr, tc.cfg)
		require.ErrorIs(t, err, ErrInvalidConfig, tc.want)
		require.ErrorContains(t, err, tc.want)
	}
	_, err := Run(nil, Config{})
	require.ErrorIs(t, err, ErrInvalidConfig)
	_, err = Run(&tier.Trace{PageSize: replayPage, Mode: tier.Inclusive}, Config{})
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.ErrorContains(t, err, "no default sizes")
	_, err = Run(&tier.Trace{PageSize: replayPage, Mode: "lru"}, Config{Sizes: []int64{1}})
	require.ErrorIs(t, err, ErrInvalidConfig)
	_, err = Run(&tier.Trace{PageSize: replayPage, Mode: tier.Exclusive, Events: []tier.TraceEvent{{Op: 'x', Bytes: 1}}}, Config{Sizes: []int64{1}})
	require.ErrorIs(t, err, ErrInvalidConfig)

	// An empty trace with sizes is a report of nothing, not an error.
	rep, err := Run(&tier.Trace{PageSize: replayPage, Mode: tier.Inclusive}, Config{Sizes: []int64{slot}, Policies: []string{"lru"}})
	require.NoError(t, err)
	require.Zero(t, rep.Result("lru", slot).HitRatio, "no gets: 0, not NaN")

	// A get of another length than the page put is an error of the
	// replay, naming the event.
	bad := &tier.Trace{PageSize: replayPage, Mode: tier.Inclusive, Events: []tier.TraceEvent{ev(tier.TracePut, 1), {Op: tier.TraceGet, ID: page.ID{Space: 1, Page: 1}, Bytes: 100}}}
	for _, p := range []string{"lru", "belady"} {
		_, err = Run(bad, Config{Sizes: []int64{4 * slot}, Policies: []string{p}})
		require.ErrorContains(t, err, "event 2 (get 1:1, 100 bytes)", p)
	}
}
