package sim

import (
	"container/heap"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/sim/report"
)

// Replaying a page trace (cache.Trace) into tier policies: the eviction
// policy experiment. A run records what reached its tier once; each policy
// then sees exactly that demand at each size, and the clairvoyant cache
// (belady) says how far from the best possible each one is. Ristretto,
// whose admission and eviction sample and depend on its goroutines, is
// measured here, averaged over runs, and never inside a simulated run,
// whose report must not depend on timing.

// ReplayPolicies are the policies ReplayTrace knows, in their default
// order.
var ReplayPolicies = []string{"lru", "slru", "ristretto", "belady"}

// ReplayConfig says which policies to replay a trace into, at which sizes.
// Zero fields take the defaults.
type ReplayConfig struct {
	// Sizes are the tiers' budgets in bytes, each more than 0. Default:
	// 1/16, 1/8, 1/4, 1/2 and 1 times the trace's distinct pages times its
	// page size. (At 1× the lru, slru and belady tiers hold slightly fewer
	// than all the pages: each costs cache.TierItemOverhead on top.)
	Sizes []int64 `json:"sizes"`
	// Policies are names from ReplayPolicies, each at most once. Default:
	// all of them.
	Policies []string `json:"policies"`
	// RistrettoRuns is how many times ristretto replays each size; its
	// results are the mean, min and max. Default 5; at least 1.
	RistrettoRuns int `json:"ristretto_runs"`
}

// EnsureDefaults fills in the zero fields that do not depend on the trace
// (Policies and RistrettoRuns); ReplayTrace fills in Sizes.
func (c *ReplayConfig) EnsureDefaults() {
	if len(c.Policies) == 0 {
		c.Policies = slices.Clone(ReplayPolicies)
	}
	if c.RistrettoRuns == 0 {
		c.RistrettoRuns = 5
	}
}

// Validate checks the configuration after EnsureDefaults; its errors wrap
// ErrBadConfig. Empty Sizes pass (they are the trace's defaults).
func (c *ReplayConfig) Validate() error {
	for i, s := range c.Sizes {
		if s <= 0 {
			return fmt.Errorf("%w: replay size %d bytes: want more than 0", ErrBadConfig, s)
		}
		if slices.Contains(c.Sizes[:i], s) {
			return fmt.Errorf("%w: replay size %d bytes given twice", ErrBadConfig, s)
		}
	}
	if len(c.Policies) == 0 {
		return fmt.Errorf("%w: no replay policy: want some of %s", ErrBadConfig, strings.Join(ReplayPolicies, ", "))
	}
	for i, p := range c.Policies {
		if !slices.Contains(ReplayPolicies, p) {
			return fmt.Errorf("%w: replay policy %q: want one of %s", ErrBadConfig, p, strings.Join(ReplayPolicies, ", "))
		}
		if slices.Contains(c.Policies[:i], p) {
			return fmt.Errorf("%w: replay policy %q given twice", ErrBadConfig, p)
		}
	}
	if c.RistrettoRuns < 1 {
		return fmt.Errorf("%w: ristretto runs %d: want at least 1", ErrBadConfig, c.RistrettoRuns)
	}
	return nil
}

// ReplayReport is what ReplayTrace measured. Results has one entry per
// policy and size, policies in Config.Policies order, each policy's sizes
// in Config.Sizes order.
type ReplayReport struct {
	Config   ReplayConfig   `json:"config"` // with the defaults filled in
	PageSize int            `json:"page_size"`
	Mode     cache.TierMode `json:"mode"`
	Events   int            `json:"events"`
	Gets     int64          `json:"gets"`    // get events: the same for every policy and size
	Puts     int64          `json:"puts"`    // put events recorded
	Deletes  int64          `json:"deletes"` // delete events recorded
	Pages    int            `json:"pages"`   // distinct pages
	Results  []ReplayResult `json:"results"`
}

// ReplayResult is one policy at one size.
type ReplayResult struct {
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
func (r *ReplayReport) Result(policy string, size int64) *ReplayResult {
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
var replayKey = cache.TierKey{DB: 1, Epoch: 1}

// ReplayTrace replays t into a fresh tier of each policy at each size and
// counts the hits. Configuration errors wrap ErrBadConfig and come before
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
// Over a trace recorded with a cache.NullTier (every get missed) these
// rules give exactly the calls the pool would have made with each policy.
// A trace recorded over another tier carries that tier's answers: in
// exclusive mode it does not matter (its deletes follow its hits, and are
// no-ops or repeats here), in inclusive mode the pushes its hits saved are
// missing.
//
// The lru and slru policies are cache.NewLRUTier and cache.NewSLRUTier
// with memcached's shares, so a replay measures the code the engine runs;
// ristretto is cache.NewRistrettoTier, waited for after every Put so that
// no get misses a page only because the put is still queued (its sampled
// admission and eviction remain, hence the runs); belady is the
// clairvoyant cache (see beladyTier) with lru's byte accounting.
func ReplayTrace(t *cache.Trace, cfg ReplayConfig) (*ReplayReport, error) {
	if t == nil {
		return nil, fmt.Errorf("%w: no trace", ErrBadConfig)
	}
	if t.Mode != cache.TierExclusive && t.Mode != cache.TierInclusive {
		return nil, fmt.Errorf("%w: trace mode %q: want %s or %s", ErrBadConfig, t.Mode, cache.TierExclusive, cache.TierInclusive)
	}
	if len(t.Events) >= math.MaxInt32 {
		return nil, fmt.Errorf("%w: trace of %d events: at most %d", ErrBadConfig, len(t.Events), math.MaxInt32-1)
	}
	cfg.Sizes = slices.Clone(cfg.Sizes)
	cfg.Policies = slices.Clone(cfg.Policies)
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rep := &ReplayReport{PageSize: t.PageSize, Mode: t.Mode, Events: len(t.Events), Pages: t.Pages()}
	var maxBytes int32
	for _, e := range t.Events {
		switch e.Op {
		case cache.TraceGet:
			rep.Gets++
		case cache.TracePut:
			rep.Puts++
		case cache.TraceDelete:
			rep.Deletes++
		default:
			return nil, fmt.Errorf("%w: trace event op %q: want g, p or d", ErrBadConfig, e.Op)
		}
		if e.Bytes <= 0 {
			return nil, fmt.Errorf("%w: trace event of %d bytes: want more than 0", ErrBadConfig, e.Bytes)
		}
		maxBytes = max(maxBytes, e.Bytes)
	}
	if len(cfg.Sizes) == 0 {
		base := int64(rep.Pages) * int64(t.PageSize)
		if base == 0 {
			return nil, fmt.Errorf("%w: the trace names no page, so there are no default sizes: give some", ErrBadConfig)
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
			res := ReplayResult{Policy: policy, SizeBytes: size, Runs: runs, Gets: rep.Gets}
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
func nextEvents(events []cache.TraceEvent) []int32 {
	next := make([]int32, len(events))
	last := make(map[cache.PageID]int32)
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
	get(i int, e cache.TraceEvent) (bool, error)
	put(i int, e cache.TraceEvent) error
	del(i int, e cache.TraceEvent) error
	close() error
}

// replayer replays one trace, again and again.
type replayer struct {
	trace *cache.Trace
	next  []int32 // nextEvents of the trace
	buf   []byte  // pages put and got: the content does not matter
}

// replay runs the trace into a fresh tier of policy and size and returns
// its hits.
func (r *replayer) replay(policy string, size int64) (hits int64, err error) {
	var tgt replayTarget
	switch policy {
	case "lru":
		tier, err := cache.NewLRUTier(size)
		if err != nil {
			return 0, err
		}
		tgt = &tierTarget{tier: tier, buf: r.buf}
	case "slru":
		tier, err := cache.NewSLRUTier(size, nil)
		if err != nil {
			return 0, err
		}
		tgt = &tierTarget{tier: tier, buf: r.buf}
	case "ristretto":
		tier, err := cache.NewRistrettoTier(size)
		if err != nil {
			return 0, err
		}
		tgt = &tierTarget{tier: tier, buf: r.buf, wait: tier.Wait}
	case "belady":
		tgt = newBeladyTier(size, r.trace, r.next)
	default: // Validate let it through
		return 0, fmt.Errorf("%w: replay policy %q", ErrBadConfig, policy)
	}
	defer func() {
		if cerr := tgt.close(); err == nil {
			err = cerr
		}
	}()

	events := r.trace.Events
	exclusive := r.trace.Mode == cache.TierExclusive
	// skip[j] is set when a hit cancels put j (inclusive mode).
	var skip []bool
	if !exclusive {
		skip = make([]bool, len(events))
	}
	for i, e := range events {
		switch e.Op {
		case cache.TraceGet:
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
			} else if j := r.next[i]; int(j) < len(events) && events[j].Op == cache.TracePut {
				skip[j] = true
			}
		case cache.TracePut:
			if skip != nil && skip[i] {
				continue
			}
			if err := tgt.put(i, e); err != nil {
				return 0, fmt.Errorf("event %d (put %s, %d bytes): %w", i+1, e.ID, e.Bytes, err)
			}
		case cache.TraceDelete:
			if err := tgt.del(i, e); err != nil {
				return 0, fmt.Errorf("event %d (delete %s): %w", i+1, e.ID, err)
			}
		}
	}
	return hits, nil
}

// tierTarget drives a cache.Tier.
type tierTarget struct {
	tier cache.Tier
	buf  []byte
	wait func() // called after every Put, if set
}

func (t *tierTarget) key(e cache.TraceEvent) cache.TierKey {
	k := replayKey
	k.ID = e.ID
	return k
}

func (t *tierTarget) get(_ int, e cache.TraceEvent) (bool, error) {
	return t.tier.Get(t.key(e), 0, t.buf[:e.Bytes])
}

func (t *tierTarget) put(_ int, e cache.TraceEvent) error {
	_, err := t.tier.Put(t.key(e), 0, t.buf[:e.Bytes])
	if t.wait != nil {
		t.wait()
	}
	return err
}

func (t *tierTarget) del(_ int, e cache.TraceEvent) error { return t.tier.Delete(t.key(e)) }

func (t *tierTarget) close() error { return t.tier.Close() }

// beladyTier is the clairvoyant cache (Belady's MIN, with bypass): it
// knows the whole trace, and when a put leaves it over budget it evicts
// the page whose next get comes last, or never, which may be the page just
// put (then it was not worth admitting). Gets hit if the page is resident;
// deletes remove it; a put over a resident page replaces it. Each page
// costs its bytes plus cache.TierItemOverhead, as in cache.LRUTier, so the
// two are compared on the same budget; and as there, a page that alone
// exceeds the budget is dropped, with its older copy.
//
// A resident page's next use is the position of the next event on its
// page if that is a get, and never (math.MaxInt32) if it is a put or a
// delete or there is none: a put replaces the page and a delete removes
// it, so only a get before either can hit this copy. After a hit in
// inclusive mode that cancels the next event, a put (see ReplayTrace), the
// page's next use is that put's.
//
// Why this is the optimum for the number of hits, given the put stream.
// Suppose every page has one size (the pool's do), so that the budget is
// a number of slots, and that a copy of a page can serve at most one get
// before its page is put again or deleted. That holds in exclusive mode,
// where the pool deletes a page it got back, and in inclusive mode for a
// trace recorded over a cache.NullTier, where each get is followed by the
// push of its page (which a hit cancels: the same as a push that replaces
// the copy). A hit needs the page resident at its get, and a page enters
// only on a put. Take any cache's decisions on the same events, and the
// first eviction where it keeps a page a that this one evicts, and evicts
// (or bypasses) a page b that this one keeps: b's next get t_b comes
// before a's, t_a (or neither comes). Change that cache to keep b in a's
// place until t_b, then drop b. It gains the hit at t_b (it had evicted b,
// which cannot come back before t_b: its next event is that get) and
// loses at most the one hit a's copy could serve, at t_a, after which it
// may hold what the original holds again; in between, it holds a subset
// of the original's pages. So the change loses no hit, and repeating it at
// each first difference turns any cache into this one, which therefore
// has as many hits as any (Belady 1966). Where a copy can serve several
// gets (an inclusive trace whose gets are not followed by their pushes)
// or pages have mixed sizes (then the choice is a knapsack problem), the
// rule is a strong heuristic, not the optimum. TestReplayBeladyOptimal
// checks it against an exhaustive search.
//
// Each put, get and delete costs O(log n) in the resident pages n, through
// a heap ordered by next use.
type beladyTier struct {
	capacity, bytes int64
	events          []cache.TraceEvent
	next            []int32
	inclusive       bool
	items           map[cache.PageID]*beladyItem
	heap            beladyHeap
}

// beladyItem is a resident page. Invariant: heap[index] is this item.
type beladyItem struct {
	id      cache.PageID
	cost    int64
	nextUse int32 // event index of its next get; math.MaxInt32: never
	index   int
}

func newBeladyTier(capacity int64, t *cache.Trace, next []int32) *beladyTier {
	return &beladyTier{capacity: capacity, events: t.Events, next: next,
		inclusive: t.Mode == cache.TierInclusive, items: make(map[cache.PageID]*beladyItem)}
}

// nextUse is the next get of event i's page that can hit the copy
// resident after event i.
func (b *beladyTier) nextUse(i int) int32 {
	j := b.next[i]
	if int(j) < len(b.events) && b.events[j].Op == cache.TraceGet {
		return j
	}
	return math.MaxInt32
}

func (b *beladyTier) get(i int, e cache.TraceEvent) (bool, error) {
	it := b.items[e.ID]
	if it == nil {
		return false, nil
	}
	if it.nextUse != int32(i) {
		// A broken invariant, not bad input: every resident page's next
		// use is the next get on it, and the gets come in order.
		return false, fmt.Errorf("sim: belady: page %s resident for event %d, found at event %d", e.ID, it.nextUse, i)
	}
	if it.cost != int64(e.Bytes)+cache.TierItemOverhead {
		return false, fmt.Errorf("sim: belady: page %s holds %d bytes, get of %d", e.ID, it.cost-cache.TierItemOverhead, e.Bytes)
	}
	it.nextUse = b.nextUse(i)
	if j := b.next[i]; b.inclusive && int(j) < len(b.events) && b.events[j].Op == cache.TracePut {
		it.nextUse = b.nextUse(int(j)) // the replay skips put j: this copy lives on
	}
	heap.Fix(&b.heap, it.index)
	return true, nil
}

func (b *beladyTier) put(i int, e cache.TraceEvent) error {
	if old := b.items[e.ID]; old != nil {
		b.remove(old)
	}
	cost := int64(e.Bytes) + cache.TierItemOverhead
	if cost > b.capacity {
		return nil // dropped, as LRUTier drops it
	}
	it := &beladyItem{id: e.ID, cost: cost, nextUse: b.nextUse(i)}
	b.items[e.ID] = it
	b.bytes += cost
	heap.Push(&b.heap, it)
	for b.bytes > b.capacity {
		b.remove(b.heap[0]) // farthest next use: possibly it (a bypass)
	}
	return nil
}

func (b *beladyTier) del(_ int, e cache.TraceEvent) error {
	if it := b.items[e.ID]; it != nil {
		b.remove(it)
	}
	return nil
}

func (b *beladyTier) remove(it *beladyItem) {
	heap.Remove(&b.heap, it.index)
	delete(b.items, it.id)
	b.bytes -= it.cost
}

func (b *beladyTier) close() error { return nil }

// beladyHeap is a max-heap of resident pages by next use; ties go to the
// lower page id, so that a replay does not depend on map or heap order.
type beladyHeap []*beladyItem

func (h beladyHeap) Len() int { return len(h) }
func (h beladyHeap) Less(i, j int) bool {
	if h[i].nextUse != h[j].nextUse {
		return h[i].nextUse > h[j].nextUse
	}
	a, b := h[i].id, h[j].id
	return a.Space < b.Space || (a.Space == b.Space && a.Page < b.Page)
}
func (h beladyHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *beladyHeap) Push(x any) {
	it := x.(*beladyItem)
	it.index = len(*h)
	*h = append(*h, it)
}
func (h *beladyHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	it.index = -1
	return it
}

// WriteTable prints the hit ratios as a table, a row per policy and a
// column per size, in percent of the gets.
func (r *ReplayReport) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "tier policies on a page trace: %d events (%d gets, %d puts, %d deletes), %d pages of %s, %s mode\n",
		r.Events, r.Gets, r.Puts, r.Deletes, r.Pages, report.FormatBytes(int64(r.PageSize)), r.Mode)
	note := ""
	if slices.Contains(r.Config.Policies, "ristretto") && r.Config.RistrettoRuns > 1 {
		note = fmt.Sprintf("; ristretto: mean of %d runs (min-max)", r.Config.RistrettoRuns)
	}
	// The cells are right-aligned; names padded to one width read left-aligned.
	width := len("policy")
	for _, p := range r.Config.Policies {
		width = max(width, len(p))
	}
	fmt.Fprintf(&b, "hit ratio, percent of the gets%s\n", note)
	if slices.Contains(r.Config.Policies, "ristretto") {
		fmt.Fprintf(&b, "(ristretto counts page bytes only; the others add %d bytes a page, so ristretto may hold more pages at one size)\n",
			cache.TierItemOverhead)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\t", width, "policy")
	for _, s := range r.Config.Sizes {
		fmt.Fprintf(tw, "%s\t", exactBytes(s))
	}
	fmt.Fprintln(tw)
	for _, p := range r.Config.Policies {
		fmt.Fprintf(tw, "%-*s\t", width, p)
		for _, s := range r.Config.Sizes {
			res := r.Result(p, s)
			switch {
			case res == nil:
				fmt.Fprint(tw, "-\t")
			case res.Runs > 1:
				fmt.Fprintf(tw, "%.2f (%.2f-%.2f)\t", 100*res.HitRatio, 100*res.HitRatioMin, 100*res.HitRatioMax)
			default:
				fmt.Fprintf(tw, "%.2f\t", 100*res.HitRatio)
			}
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// exactBytes prints n in the largest binary unit that divides it, so that
// two sizes never print alike (report.FormatBytes rounds).
func exactBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	u := 0
	for u < len(units)-1 && n != 0 && n%1024 == 0 {
		n /= 1024
		u++
	}
	return fmt.Sprintf("%d %s", n, units[u])
}
