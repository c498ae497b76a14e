package replay

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/tier"
	"github.com/enginelab/enginelab/cache/tier/lru"
	"github.com/enginelab/enginelab/cache/tier/ristretto"
	"github.com/enginelab/enginelab/cache/tier/slru"
	"github.com/enginelab/enginelab/tpcc"
)

// ErrInvalidConfig is wrapped by the errors of a configuration or a trace
// that cannot be replayed; they come before any replay. It is
// tpcc.ErrInvalidConfig, the same value as sim.ErrInvalidConfig.
var ErrInvalidConfig = tpcc.ErrInvalidConfig

// Policies are the policies Run knows, in their default order.
var Policies = []string{"lru", "slru", "ristretto", "belady"}

// Config says which policies to replay a trace into, at which sizes.
// Zero fields take the defaults.
type Config struct {
	// Sizes are the tiers' budgets in bytes, each more than 0. Default:
	// 1/16, 1/8, 1/4, 1/2 and 1 times the trace's distinct pages times its
	// page size. (At 1× the lru, slru and belady tiers hold slightly fewer
	// than all the pages: each costs tier.ItemOverhead on top.)
	Sizes []int64 `json:"sizes"`
	// Policies are names from Policies, each at most once. Default:
	// all of them.
	Policies []string `json:"policies"`
	// RistrettoRuns is how many times ristretto replays each size; its
	// results are the mean, min and max. Default 5; at least 1.
	RistrettoRuns int `json:"ristretto_runs"`
}

// EnsureDefaults fills in the zero fields that do not depend on the trace
// (Policies and RistrettoRuns); Run fills in Sizes.
func (c *Config) EnsureDefaults() {
	if len(c.Policies) == 0 {
		c.Policies = slices.Clone(Policies)
	}
	if c.RistrettoRuns == 0 {
		c.RistrettoRuns = 5
	}
}

// Validate checks the configuration after EnsureDefaults; its errors wrap
// ErrInvalidConfig. Empty Sizes pass (they are the trace's defaults).
func (c *Config) Validate() error {
	for i, s := range c.Sizes {
		if s <= 0 {
			return fmt.Errorf("sim: %w: replay size %d bytes: want more than 0", ErrInvalidConfig, s)
		}
		if slices.Contains(c.Sizes[:i], s) {
			return fmt.Errorf("sim: %w: replay size %d bytes given twice", ErrInvalidConfig, s)
		}
	}
	if len(c.Policies) == 0 {
		return fmt.Errorf("sim: %w: no replay policy: want some of %s", ErrInvalidConfig, strings.Join(Policies, ", "))
	}
	for i, p := range c.Policies {
		if !slices.Contains(Policies, p) {
			return fmt.Errorf("sim: %w: replay policy %q: want one of %s", ErrInvalidConfig, p, strings.Join(Policies, ", "))
		}
		if slices.Contains(c.Policies[:i], p) {
			return fmt.Errorf("sim: %w: replay policy %q given twice", ErrInvalidConfig, p)
		}
	}
	if c.RistrettoRuns < 1 {
		return fmt.Errorf("sim: %w: ristretto runs %d: want at least 1", ErrInvalidConfig, c.RistrettoRuns)
	}
	return nil
}

// Report is what Run measured. Results has one entry per
// policy and size, policies in Config.Policies order, each policy's sizes
// in Config.Sizes order.
type Report struct {
	Config   Config    `json:"config"` // with the defaults filled in
	PageSize int       `json:"page_size"`
	Mode     tier.Mode `json:"mode"`
	Events   int       `json:"events"`
	Gets     int64     `json:"gets"`    // get events: the same for every policy and size
	Puts     int64     `json:"puts"`    // put events recorded
	Deletes  int64     `json:"deletes"` // delete events recorded
	Pages    int       `json:"pages"`   // distinct pages
	Results  []Result  `json:"results"`
}

// Result is one policy at one size.
type Result struct {
	Policy    string `json:"policy"`
	SizeBytes int64  `json:"size_bytes"`
	Runs      int    `json:"runs"` // replays made: RistrettoRuns for ristretto, else 1
	Gets      int64  `json:"gets"` // per run
	// Hits per run: for ristretto, the mean over the runs, rounded to the
	// nearest (RunHits has each).
	Hits int64 `json:"hits"`
	// HitRatio is hits / gets (0 without gets); for ristretto, the mean of
	// the runs' ratios. HitRatioMin and HitRatioMax are the runs' extremes
	// (HitRatio itself for the deterministic policies).
	HitRatio    float64 `json:"hit_ratio"`
	HitRatioMin float64 `json:"hit_ratio_min"`
	HitRatioMax float64 `json:"hit_ratio_max"`
	// RunHits are each run's hits, for ristretto only.
	RunHits []int64 `json:"run_hits,omitempty"`
}

// Result returns the result of policy at size, or nil.
func (r *Report) Result(policy string, size int64) *Result {
	for i := range r.Results {
		if res := &r.Results[i]; res.Policy == policy && res.SizeBytes == size {
			return res
		}
	}
	return nil
}

// replayKey is the DB and epoch of every key a replay uses: a trace does
// not record them (they are constant within a run), and a fresh tier per
// replay holds nothing else.
var replayKey = tier.Key{DB: 1, Epoch: 1}

// Run replays t into a fresh tier of each policy at each size and
// counts the hits. Configuration errors wrap ErrInvalidConfig and come before
// any replay; an error of a tier during a replay (a get of another length
// than the page put, a broken trace) stops it.
//
// A replay calls the tier as the pool would have, event by event in
// order, with the pool's rules for the trace's mode applied to the tier's
// own answers (cache.Pool's tierGet and its store reads):
//
//   - get: Get, counted as a hit or a miss. In exclusive mode a hit is
//     followed by a Delete of the page, as the pool deletes a page it got
//     back. In inclusive mode a hit cancels the put that follows it for
//     that page (the next event on that page, if it is a put): the pool
//     pushes a page it read from the store, which it does not read on a
//     hit.
//   - put: Put. delete: Delete (after a hit in exclusive mode, a no-op).
//
// Over a trace recorded with a tier.NullTier (every get missed) these
// rules give exactly the calls the pool would have made with each policy.
// A trace recorded over another tier carries that tier's answers: in
// exclusive mode it does not matter (its deletes follow its hits, and are
// no-ops or repeats here), in inclusive mode the pushes its hits saved are
// missing.
//
// The lru and slru policies are lru.New and slru.New
// with memcached's shares, so a replay measures the code the engine runs;
// ristretto is ristretto.New, waited for after every Put so that
// no get misses a page only because the put is still queued (its sampled
// admission and eviction remain, hence the runs); belady is the
// clairvoyant cache (see beladyTier) with lru's byte accounting.
func Run(t *tier.Trace, cfg Config) (*Report, error) {
	if t == nil {
		return nil, fmt.Errorf("sim: %w: no trace", ErrInvalidConfig)
	}
	if t.Mode != tier.Exclusive && t.Mode != tier.Inclusive {
		return nil, fmt.Errorf("sim: %w: trace mode %q: want %s or %s", ErrInvalidConfig, t.Mode, tier.Exclusive, tier.Inclusive)
	}
	if len(t.Events) >= math.MaxInt32 {
		return nil, fmt.Errorf("sim: %w: trace of %d events: at most %d", ErrInvalidConfig, len(t.Events), math.MaxInt32-1)
	}
	cfg.Sizes = slices.Clone(cfg.Sizes)
	cfg.Policies = slices.Clone(cfg.Policies)
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rep := &Report{PageSize: t.PageSize, Mode: t.Mode, Events: len(t.Events), Pages: t.Pages()}
	var maxBytes int32
	for _, e := range t.Events {
		switch e.Op {
		case tier.TraceGet:
			rep.Gets++
		case tier.TracePut:
			rep.Puts++
		case tier.TraceDelete:
			rep.Deletes++
		default:
			return nil, fmt.Errorf("sim: %w: trace event op %q: want g, p or d", ErrInvalidConfig, e.Op)
		}
		if e.Bytes <= 0 {
			return nil, fmt.Errorf("sim: %w: trace event of %d bytes: want more than 0", ErrInvalidConfig, e.Bytes)
		}
		maxBytes = max(maxBytes, e.Bytes)
	}
	if len(cfg.Sizes) == 0 {
		base := int64(rep.Pages) * int64(t.PageSize)
		if base == 0 {
			return nil, fmt.Errorf("sim: %w: the trace names no page, so there are no default sizes: give some", ErrInvalidConfig)
		}
		cfg.Sizes = []int64{base / 16, base / 8, base / 4, base / 2, base}
	}
	rep.Config = cfg

	r := &replayer{trace: t, next: nextEvents(t.Events), buf: make([]byte, maxBytes)}
	for _, policy := range cfg.Policies {
		for _, size := range cfg.Sizes {
			runs := 1
			if policy == "ristretto" {
				runs = cfg.RistrettoRuns
			}
			res := Result{Policy: policy, SizeBytes: size, Runs: runs, Gets: rep.Gets}
			var sumHits int64
			for run := range runs {
				hits, err := r.replay(policy, size)
				if err != nil {
					return nil, fmt.Errorf("sim: replay %s at %d bytes (run %d): %w", policy, size, run+1, err)
				}
				ratio := ratioOf(hits, rep.Gets)
				if run == 0 || ratio < res.HitRatioMin {
					res.HitRatioMin = ratio
				}
				if run == 0 || ratio > res.HitRatioMax {
					res.HitRatioMax = ratio
				}
				sumHits += hits
				if policy == "ristretto" {
					res.RunHits = append(res.RunHits, hits)
				}
			}
			// Every run has the same gets, so the mean of the ratios is
			// the ratio of the mean.
			res.Hits = (sumHits + int64(runs)/2) / int64(runs)
			res.HitRatio = ratioOf(sumHits, rep.Gets*int64(runs))
			if runs == 1 {
				res.HitRatioMin, res.HitRatioMax = res.HitRatio, res.HitRatio
			}
			rep.Results = append(rep.Results, res)
		}
	}
	return rep, nil
}

func ratioOf(hits, gets int64) float64 {
	if gets == 0 {
		return 0 // not NaN: the report is JSON
	}
	return float64(hits) / float64(gets)
}

// nextEvents returns, for each event, the index of the next event on the
// same page (len(events) if none): one backward pass.
func nextEvents(events []tier.TraceEvent) []int32 {
	next := make([]int32, len(events))
	last := make(map[page.ID]int32)
	for i := len(events) - 1; i >= 0; i-- {
		id := events[i].ID
		if j, ok := last[id]; ok {
			next[i] = j
		} else {
			next[i] = int32(len(events))
		}
		last[id] = int32(i)
	}
	return next
}

// replayTarget is a tier as a replay drives it: told the position of each
// event, which only the clairvoyant cache uses.
type replayTarget interface {
	get(i int, e tier.TraceEvent) (bool, error)
	put(i int, e tier.TraceEvent) error
	del(i int, e tier.TraceEvent) error
	close() error
}

// replayer replays one trace, again and again.
type replayer struct {
	trace *tier.Trace
	next  []int32 // nextEvents of the trace
	buf   []byte  // pages put and got: the content does not matter
}

// replay runs the trace into a fresh tier of policy and size and returns
// its hits.
func (r *replayer) replay(policy string, size int64) (hits int64, err error) {
	var tgt replayTarget
	switch policy {
	case "lru":
		tt, err := lru.New(size)
		if err != nil {
			return 0, err
		}
		tgt = &tierTarget{tier: tt, buf: r.buf}
	case "slru":
		tt, err := slru.New(size, nil)
		if err != nil {
			return 0, err
		}
		tgt = &tierTarget{tier: tt, buf: r.buf}
	case "ristretto":
		tt, err := ristretto.New(size)
		if err != nil {
			return 0, err
		}
		tgt = &tierTarget{tier: tt, buf: r.buf, wait: tt.Wait}
	case "belady":
		tgt = newBeladyTier(size, r.trace, r.next)
	default: // Validate let it through
		return 0, fmt.Errorf("sim: %w: replay policy %q", ErrInvalidConfig, policy)
	}
	defer func() {
		if cerr := tgt.close(); err == nil {
			err = cerr
		}
	}()

	events := r.trace.Events
	exclusive := r.trace.Mode == tier.Exclusive
	// skip[j] is set when a hit cancels put j (inclusive mode).
	var skip []bool
	if !exclusive {
		skip = make([]bool, len(events))
	}
	for i, e := range events {
		switch e.Op {
		case tier.TraceGet:
			hit, err := tgt.get(i, e)
			if err != nil {
				return 0, fmt.Errorf("event %d (get %s, %d bytes): %w", i+1, e.ID, e.Bytes, err)
			}
			if !hit {
				continue
			}
			hits++
			if exclusive {
				if err := tgt.del(i, e); err != nil {
					return 0, fmt.Errorf("event %d (delete after a hit on %s): %w", i+1, e.ID, err)
				}
			} else if j := r.next[i]; int(j) < len(events) && events[j].Op == tier.TracePut {
				skip[j] = true
			}
		case tier.TracePut:
			if skip != nil && skip[i] {
				continue
			}
			if err := tgt.put(i, e); err != nil {
				return 0, fmt.Errorf("event %d (put %s, %d bytes): %w", i+1, e.ID, e.Bytes, err)
			}
		case tier.TraceDelete:
			if err := tgt.del(i, e); err != nil {
				return 0, fmt.Errorf("event %d (delete %s): %w", i+1, e.ID, err)
			}
		}
	}
	return hits, nil
}

// tierTarget drives a tier.Tier.
type tierTarget struct {
	tier tier.Tier
	buf  []byte
	wait func() // called after every Put, if set
}

func (t *tierTarget) key(e tier.TraceEvent) tier.Key {
	k := replayKey
	k.ID = e.ID
	return k
}

func (t *tierTarget) get(_ int, e tier.TraceEvent) (bool, error) {
	return t.tier.Get(t.key(e), 0, t.buf[:e.Bytes])
}

func (t *tierTarget) put(_ int, e tier.TraceEvent) error {
	_, err := t.tier.Put(t.key(e), 0, t.buf[:e.Bytes])
	if t.wait != nil {
		t.wait()
	}
	return err
}

func (t *tierTarget) del(_ int, e tier.TraceEvent) error { return t.tier.Delete(t.key(e)) }

func (t *tierTarget) close() error { return t.tier.Close() }
