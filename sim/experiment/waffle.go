package experiment

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/sim"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/sim/report"
)

// The waffle experiment: Waffle Grid's published DBT2 figures (MySQL 5.1's
// InnoDB spilling its buffer pool to memcached over gigabit Ethernet, 2008
// and 2009), each configuration run in simulated mode at the published
// scale with one set of parameters, and compared with the figure by its
// ratio against the same post's baseline (or, for a pair published without
// a baseline, by the pair's own ratio).
//
//	row ──► side (identical configurations share one run)
//	         │
//	         ▼
//	tpmC ──► ratio against the row's reference row ──► verdict:
//	         same direction as published and within ±25% of the published
//	         ratio; a pair published as equal: within 10% of each other
//
// Every parameter is a documented figure, the same for every row
// (waffleParams, with its source); the rows change only what the
// published configurations changed. The report prints a hash of the
// parameter set, so that a change to any of them shows.

// WaffleRow is one row of the waffle experiment's table.
type WaffleRow struct {
	Label  string `json:"label"`
	Group  string `json:"group"`
	Source string `json:"source"`
	// Against is the label of the row this row's ratios are against (its
	// post's baseline, or its pair's first row); "" for a reference row.
	Against   string  `json:"against,omitempty"`
	Equal     bool    `json:"published_equal,omitempty"` // the pair was published as equal
	Published float64 `json:"published_notpm"`
	// PublishedRatio and SimRatio are this row's figure over Against's.
	PublishedRatio float64 `json:"published_ratio,omitempty"`
	SimTpmC        float64 `json:"sim_tpmc"`
	SimRatio       float64 `json:"sim_ratio,omitempty"`
	// HitRate and Evictions are memcached's (get_hits / cmd_get,
	// evictions) over the run; HitRate -1 without a tier.
	HitRate   float64 `json:"hit_rate"`
	Evictions int64   `json:"evictions"`
	// Held says whether the row's ratio held (reference rows: true);
	// Verdict says how.
	Held    bool   `json:"held"`
	Verdict string `json:"verdict"`
	// Side is the index of the side that ran the row's configuration.
	Side int `json:"side"`
}

// WaffleTable is the waffle experiment's own result: its rows, the
// parameters every row shares and their hash.
type WaffleTable struct {
	Rows       []WaffleRow `json:"rows"`
	Parameters []string    `json:"parameters"`
	Hash       string      `json:"parameter_hash"`
	// ReadAhead is which tables' accesses triggered read-ahead in the
	// run of each side named, by kind.
	ReadAhead []WaffleReadAhead `json:"read_ahead"`
}

// WaffleReadAhead is one side's read-ahead decisions during its run, by
// table and index.
type WaffleReadAhead struct {
	Side   string                  `json:"side"`
	Spaces []report.ReadAheadSpace `json:"spaces"`
	Pages  int64                   `json:"pages"`  // pages read ahead (linear and random)
	Unused int64                   `json:"unused"` // of those, evicted before any use
}

// The verdict's tolerances (the issue's): a ratio within 25% of the
// published one, a pair published as equal within 10%.
const (
	waffleRatioTolerance = 0.25
	waffleEqualTolerance = 0.10
)

// The published sizes, at the published scale (20 warehouses, full
// population); waffleSizes scales them with the base pool.
const (
	wafflePool      = 768 << 20  // innodb_buffer_pool_size=768M (every post)
	waffleBigPool   = 1500 << 20 // "everything in a 1.5 GB local buffer pool": innodb_buffer_pool_size 1,500 MB (bigdbahead.com/?p=80)
	waffleHugePool  = 5 << 30    // the double-write post's 5 GB pool
	waffleMemcached = 768 << 20  // memcached -m 768 (limit_maxbytes 805,306,368)
	waffleTier1G    = 1 << 30    // the modes post's 1 GB of memcached
	waffleTierAll   = 3 << 30    // "a tier that holds everything": more than the database's pages in 17,192-byte chunks, within a 32-bit process
	waffleSlabPtr   = 4          // a 32-bit build (1.2.5's published stats)
	// The redo log: innodb_log_file_size=256M in innodb_log_files_in_group=3,
	// the log group of MySQL 5.1's own sample configuration for an
	// InnoDB server (support-files/my-innodb-heavy-4G.cnf: "the combined
	// size of log files to about 25%-100% of your buffer pool size"). The
	// posts do not give theirs; 5.1's default, two files of 5 MB, would
	// have made every run a checkpoint flush.
	waffleLog = 768 << 20
)

// waffleSizes are the experiment's sizes for params p: the published
// ones times p's base pool over 768 MB (1 at the published scale; the
// small defaults keep every size's share of the data).
type waffleSizes struct{ pool, bigPool, hugePool, memcached, tier1G, tierAll, log int64 }

func newWaffleSizes(p *Params) waffleSizes {
	scale := func(n int64) int64 { return int64(math.Round(float64(n) * float64(p.PoolSize) / wafflePool)) }
	return waffleSizes{pool: p.PoolSize, bigPool: scale(waffleBigPool), hugePool: scale(waffleHugePool),
		memcached: scale(waffleMemcached), tier1G: scale(waffleTier1G), tierAll: scale(waffleTierAll),
		log: max(scale(waffleLog), redo.MinCapacity)}
}

// waffleParams are the parameters every row shares, each with its
// source; the hash is of their text and the sizes and scale.
func waffleParams(p *Params, z waffleSizes, m hw.Machine) []string {
	return []string{
		fmt.Sprintf("workload: %d warehouses, %d terminals, no keying or think time, TPC-C's mix (DBT2's), %v measured after %v of warm-up, seed %d; DBT2 at 20 warehouses with 16 connections and no think time (bigdbahead.com/?p=80)",
			p.Warehouses, p.Terminals, p.Duration, p.Warmup, p.Seed),
		fmt.Sprintf("buffer pool %s (innodb_buffer_pool_size=768M, every post), InnoDB's midpoint insertion at 3/8 (5.1's built-in LRU, buf0lru.c); a page made young at a touch once 1 + pool pages/1024 pages left the pool since it last moved (5.1's buf_block_make_young; the plugin rows: a quarter of the young sublist, buf_page_peek_if_too_old with innodb_old_blocks_time 0, its default)", report.FormatBytes(z.pool)),
		"flushing: MySQL 5.1's master thread, 100 pages a round past innodb_max_dirty_pages_pct 90, a checkpoint every tenth round; foreground LRU flushes (srv0srv.c, buf0flu.c)",
		fmt.Sprintf("redo log %s: innodb_log_file_size=256M, innodb_log_files_in_group=3 (MySQL 5.1's support-files/my-innodb-heavy-4G.cnf; the posts do not give theirs)", report.FormatBytes(z.log)),
		"read-ahead: 5.1's linear (24 of a 64-page area) and random (13 recent pages of an area), buf0rea.c; the plugin row: the plugin's linear at innodb_read_ahead_threshold 56, no random",
		"doublewrite on (innodb_doublewrite's default) except the rows about it",
		"commit: no sync at commit (the experiments' default; the posts do not give innodb_flush_log_at_trx_commit)",
		fmt.Sprintf("isolation: %v (InnoDB's default transaction_isolation; DBT2 does not set one): consistent reads from undo; purge is the master thread's, a full purge every tenth round (5.1 has no purge thread; srv0srv.c), one synchronous requester on the disk",
			(&sim.TPCCConfig{Isolation: p.Isolation}).IsolationLevel()),
		fmt.Sprintf("memcached: one server, a %d-bit build (1.2.5's published stats), -f 1.25, -n 48, 1 worker thread for 1.2.5, 4 for 1.3.2 (slab.Params); sizes %s (-m 768), %s (1 GB), %s (holds everything)",
			8*waffleSlabPtr, report.FormatBytes(z.memcached), report.FormatBytes(z.tier1G), report.FormatBytes(z.tierAll)),
		fmt.Sprintf("store and log: %s: %s", m.StoreName, m.Store.Source),
		fmt.Sprintf("network: %s: %s", m.NetworkName, m.Network.Source),
		fmt.Sprintf("cpu: %d cores (the simulator's default: the posts do not say), profile %s: %s", m.Cores, m.CPUName, m.CPU.Source),
	}
}

// waffleRowSpec is one published row: its figure, the row its ratio is
// against (an index into waffleRows; -1: a reference row) and the
// configuration it changes from the shared one.
type waffleRowSpec struct {
	label, group, source string
	published            float64
	against              int
	equal                bool
	config               func(c sim.TPCCConfig, z waffleSizes) sim.TPCCConfig
}

// Configuration changes of the rows.
func waffleTier(release string, size func(z waffleSizes) int64, mode cache.WaffleMode, keep, mru bool) func(sim.TPCCConfig, waffleSizes) sim.TPCCConfig {
	return func(c sim.TPCCConfig, z waffleSizes) sim.TPCCConfig {
		c.Remote = sim.RemoteSpec{Backend: "memcached-" + release}
		c.RemoteSize, c.Waffle, c.WaffleKeepOnRead, c.SlabMRUPatch = size(z), mode, keep, mru
		c.SlabPointerSize = waffleSlabPtr
		return c
	}
}

func waffleSame(c sim.TPCCConfig, _ waffleSizes) sim.TPCCConfig { return c }

func wafflePlugin(c sim.TPCCConfig) sim.TPCCConfig {
	c.ReadAheadLinear, c.RandomReadAhead = cache.LinearPlugin, false
	c.Promotion = cache.PromotePlugin
	return c
}

func waffleNoDoublewrite(c sim.TPCCConfig) sim.TPCCConfig {
	c.TornPages = cache.TornPagesNone
	return c
}

var (
	tierMemcached = func(z waffleSizes) int64 { return z.memcached }
	tier1G        = func(z waffleSizes) int64 { return z.tier1G }
	tierAll       = func(z waffleSizes) int64 { return z.tierAll }
)

const (
	srcP80   = "MySQL 5.1.30, bigdbahead.com/?p=80 (2009)"
	srcMRU   = "\"We need a MRU not an LRU!\", bigdbahead.com (2008-11-27)"
	srcModes = "Waffle Grid's LRU and non-LRU modes, bigdbahead.com (2009)"
	srcCream = "Waffle Grid \"Cream\", bigdbahead.com (2009)"
	srcVer   = "memcached 1.2.5 against 1.3.2, bigdbahead.com (2009)"
	srcDW    = "double-write on InnoDB plugin 1.0.3, bigdbahead.com (2009)"
)

// waffleRows are the published rows, in the order. Rows whose
// configuration is the same run once.
var waffleRows = []waffleRowSpec{
	/* 0 */ {"no tier", "5.1.30", srcP80, 3218.54, -1, false, waffleSame},
	/* 1 */ {"memcached 1.2.5 768 MB, stock LRU", "5.1.30", srcP80, 6575.8, 0, false,
		waffleTier("1.2.5", tierMemcached, cache.WaffleLRU, true, false)},
	/* 2 */ {"memcached 1.2.5 768 MB, MRU patch", "5.1.30", srcP80 + "; " + srcMRU, 9371.54, 0, false,
		waffleTier("1.2.5", tierMemcached, cache.WaffleLRU, true, true)},
	/* 3 */ {"1.5 GB pool, no tier", "5.1.30", srcP80, 16508.54, 0, false,
		func(c sim.TPCCConfig, z waffleSizes) sim.TPCCConfig { c.PoolSize = z.bigPool; return c }},
	/* 4 */ {"LRU mode (exclusive), 1 GB", "modes, 1 GB", srcModes, 6300, -1, false,
		waffleTier("1.2.5", tier1G, cache.WaffleLRU, false, false)},
	/* 5 */ {"non-LRU mode (inclusive), 1 GB", "modes, 1 GB", srcModes, 10700, 4, false,
		waffleTier("1.2.5", tier1G, cache.WaffleNonLRU, false, false)},
	/* 6 */ {"LRU mode, tier holds everything", "modes, all", srcModes, 10700, -1, false,
		waffleTier("1.2.5", tierAll, cache.WaffleLRU, false, false)},
	/* 7 */ {"non-LRU mode, tier holds everything", "modes, all", srcModes, 10800, 6, true,
		waffleTier("1.2.5", tierAll, cache.WaffleNonLRU, false, false)},
	/* 8 */ {"no tier (read-ahead, double-write on)", "Cream", srcCream, 3245.79, -1, false, waffleSame},
	/* 9 */ {"LRU mode 1 GB, read-ahead on", "Cream", srcCream, 15000, 8, false,
		waffleTier("1.2.5", tier1G, cache.WaffleLRU, false, false)},
	/* 10 */ {"plugin, LRU mode 1 GB, read-ahead off", "Cream", srcCream, 20000, 8, false,
		func(c sim.TPCCConfig, z waffleSizes) sim.TPCCConfig {
			c = waffleTier("1.2.5", tier1G, cache.WaffleLRU, false, false)(wafflePlugin(c), z)
			c.ReadAhead = false
			return c
		}},
	/* 11 */ {"memcached 1.2.5, MRU patch", "releases", srcVer, 10290.89, -1, false,
		waffleTier("1.2.5", tierMemcached, cache.WaffleLRU, true, true)},
	/* 12 */ {"memcached 1.3.2, MRU patch", "releases", srcVer, 6695.67, 11, false,
		waffleTier("1.3.2", tierMemcached, cache.WaffleLRU, true, true)},
	/* 13 */ {"plugin, double-write off", "double-write, IO-bound", srcDW, 0, -1, false,
		func(c sim.TPCCConfig, _ waffleSizes) sim.TPCCConfig { return waffleNoDoublewrite(wafflePlugin(c)) }},
	// 30-35% overhead: off is 1.30-1.35 times on; on/off = 1/1.325.
	/* 14 */ {"plugin, double-write on (30-35% overhead)", "double-write, IO-bound", srcDW, 0, 13, false,
		func(c sim.TPCCConfig, _ waffleSizes) sim.TPCCConfig { return wafflePlugin(c) }},
	/* 15 */ {"plugin, 5 GB pool, double-write off", "double-write, 5 GB pool", srcDW, 0, -1, false,
		func(c sim.TPCCConfig, z waffleSizes) sim.TPCCConfig {
			c = waffleNoDoublewrite(wafflePlugin(c))
			c.PoolSize = z.hugePool
			return c
		}},
	/* 16 */ {"plugin, 5 GB pool, double-write on (up to 7% faster)", "double-write, 5 GB pool", srcDW, 0, 15, false,
		func(c sim.TPCCConfig, z waffleSizes) sim.TPCCConfig {
			c = wafflePlugin(c)
			c.PoolSize = z.hugePool
			return c
		}},
}

// wafflePublishedRatios are the ratios published without figures: the
// double-write rows' (on over off).
var wafflePublishedRatios = map[int]float64{14: 1 / 1.325, 16: 1.07}

// waffleShared is the configuration every row starts from: p's base
// (simulated, the experiment's hardware and sizes) with MySQL 5.1's
// built-in InnoDB (its read-ahead, its flushing, its LRU's promotion, the
// doublewrite buffer).
func waffleShared(p *Params) sim.TPCCConfig {
	c := p.base()
	c.ReadAhead, c.ReadAheadLinear, c.RandomReadAhead = true, cache.Linear51, true
	c.Flushing = cache.Flushing51
	c.Promotion = cache.Promote51
	c.TornPages = cache.TornPagesDoublewrite
	return c
}

// waffleSides builds the experiment's sides, one per distinct row
// configuration, and each row's side.
func waffleSides(p *Params) ([]Side, []int) {
	z := newWaffleSizes(p)
	shared := waffleShared(p)
	shared.LogSize = z.log
	var sides []Side
	idx := make([]int, len(waffleRows))
	for i, r := range waffleRows {
		c := r.config(shared, z)
		idx[i] = -1
		for j, s := range sides {
			if sameConfig(s.Config, c) {
				idx[i] = j
				s.Label += " = " + r.label
				sides[j] = s
				break
			}
		}
		if idx[i] < 0 {
			idx[i] = len(sides)
			sides = append(sides, Side{Label: r.label, Config: c})
		}
	}
	return sides, idx
}

// sameConfig says whether two row configurations are the same job (their
// printed form: every field is a value).
func sameConfig(a, b sim.TPCCConfig) bool { return fmt.Sprintf("%+v", a) == fmt.Sprintf("%+v", b) }

// waffleTable judges the rows on the sides' reports (res.Sides, in the
// order of waffleSides).
func waffleTable(res *Report) {
	p := res.Params
	_, idx := waffleSides(&p)
	z := newWaffleSizes(&p)
	machine, _ := p.Hardware.Resolve()
	t := &WaffleTable{Parameters: waffleParams(&p, z, machine)}
	h := sha256.New()
	for _, s := range t.Parameters {
		fmt.Fprintln(h, s)
	}
	fmt.Fprintf(h, "%+v %v\n", z, p.Scale)
	t.Hash = hex.EncodeToString(h.Sum(nil))[:16]
	rows := make([]WaffleRow, len(waffleRows))
	for i, spec := range waffleRows {
		r := &rows[i]
		rep := res.Sides[idx[i]]
		*r = WaffleRow{Label: spec.label, Group: spec.group, Source: spec.source, Published: spec.published,
			Equal: spec.equal, SimTpmC: round(tpmC(rep), 1), HitRate: -1, Side: idx[i]}
		if rep.Tier != nil && rep.Tier.Memcached != nil {
			r.HitRate, r.Evictions = round(rep.Tier.Memcached.HitRate, 4), rep.Tier.Memcached.Evictions
		}
		if spec.against < 0 {
			r.Held, r.Verdict = true, "reference"
			continue
		}
		ref := &rows[spec.against]
		r.Against = ref.Label
		if ref.SimTpmC > 0 {
			r.SimRatio = round(r.SimTpmC/ref.SimTpmC, 3)
		}
		pub, ok := wafflePublishedRatios[i]
		if !ok && ref.Published > 0 {
			pub = spec.published / ref.Published
		}
		r.PublishedRatio = round(pub, 3)
		r.Held, r.Verdict = waffleVerdict(pub, r.SimRatio, spec.equal)
	}
	t.Rows = rows
	for _, k := range []int{0, 10, 14} { // 5.1's read-ahead, the plugin's off, the plugin's on
		rep := res.Sides[idx[k]]
		ra := WaffleReadAhead{Side: res.Labels[idx[k]]}
		if b := rep.Background; b != nil {
			ra.Spaces, ra.Pages, ra.Unused = b.ReadAheadBySpace, b.ReadAheads+b.RandomReadAheads, b.ReadAheadUnused+b.RandomReadAheadUnused
		}
		t.ReadAhead = append(t.ReadAhead, ra)
	}
	res.Waffle = t
}

// waffleVerdict judges a simulated ratio against the published one.
func waffleVerdict(pub, sim float64, equal bool) (bool, string) {
	if sim == 0 {
		return false, "miss: no simulated figure"
	}
	if equal {
		d := math.Abs(sim - 1)
		if d <= waffleEqualTolerance {
			return true, fmt.Sprintf("hit: equal within %.0f%% (%.1f%%)", 100*waffleEqualTolerance, 100*d)
		}
		return false, fmt.Sprintf("miss: published equal, %.1f%% apart", 100*d)
	}
	dir := func(x float64) int {
		switch {
		case x > 1:
			return 1
		case x < 1:
			return -1
		}
		return 0
	}
	off := sim/pub - 1
	switch {
	case dir(sim) != dir(pub):
		return false, fmt.Sprintf("miss: direction (published ×%.2f, simulated ×%.2f)", pub, sim)
	case math.Abs(off) > waffleRatioTolerance:
		return false, fmt.Sprintf("miss: ratio %+.0f%% off", 100*off)
	}
	return true, fmt.Sprintf("hit: ratio %+.0f%% off", 100*off)
}

// waffleHeld is the experiment's verdict: how many rows held.
func waffleHeld(res *Report) (bool, string) {
	t := res.Waffle
	n, held := 0, 0
	var missed []string
	for _, r := range t.Rows {
		if r.Against == "" {
			continue
		}
		n++
		if r.Held {
			held++
		} else {
			missed = append(missed, r.Label)
		}
	}
	v := fmt.Sprintf("%d of %d published ratios reproduced (parameter set %s)", held, n, t.Hash)
	if len(missed) > 0 {
		v += "; missed: " + strings.Join(missed, "; ")
	}
	return held == n, v
}

// WriteWaffle prints the waffle table: the parameters and their hash, one
// line a row, and the read-ahead decisions by table.
func (t *WaffleTable) WriteWaffle(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "parameters (every row; hash %s):\n", t.Hash)
	for _, s := range t.Parameters {
		fmt.Fprintf(&b, "  - %s\n", s)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "group\trow\tpublished\tsim tpmC\tpublished ratio\tsim ratio\tmemcached hit\tevictions\tverdict\t")
	for _, r := range t.Rows {
		pub, pr, sr, hit := "-", "-", "-", "-"
		if r.Published > 0 {
			pub = fmt.Sprintf("%.0f", r.Published)
		}
		if r.Against != "" {
			pr, sr = fmt.Sprintf("%.3f", r.PublishedRatio), fmt.Sprintf("%.3f", r.SimRatio)
		}
		if r.HitRate >= 0 {
			hit = fmt.Sprintf("%.1f%%", 100*r.HitRate)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t%s\t%s\t%s\t%d\t%s\t\n", r.Group, r.Label, pub, r.SimTpmC, pr, sr, hit, r.Evictions, r.Verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("ratios: a row over its group's first row (its post's baseline, or its pair's first); sources:\n")
	seen := map[string]bool{}
	for _, r := range t.Rows {
		if !seen[r.Group] {
			seen[r.Group] = true
			fmt.Fprintf(&b, "  %s: %s\n", r.Group, r.Source)
		}
	}
	b.WriteString("\nread-ahead decisions during the run, by table and index (linear / random):\n")
	for _, ra := range t.ReadAhead {
		var parts []string
		for _, s := range ra.Spaces {
			name := s.Table
			if s.Index != "" {
				name += "." + s.Index
			}
			parts = append(parts, fmt.Sprintf("%s %d/%d", name, s.Linear, s.Random))
		}
		if len(parts) == 0 {
			parts = []string{"none"}
		}
		fmt.Fprintf(&b, "  %s: %s; %d pages read ahead, %d never used\n", ra.Side, strings.Join(parts, ", "), ra.Pages, ra.Unused)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// waffleExperiment is the experiment's entry in the list.
var waffleExperiment = &Experiment{
	Name: "waffle",
	Question: "Waffle Grid's published DBT2 table reproduced: MySQL 5.1's InnoDB with memcached behind its buffer pool (LRU and non-LRU modes, the MRU patch, " +
		"memcached 1.2.5 against 1.3.2), read-ahead on and off, double-write on and off, a larger pool; each configuration at the published scale on the 2009 hardware",
	Expect: "each row's tpmC over its post's baseline (or its pair's first row) in the published direction and within ±25% of the published ratio; " +
		"pairs published as equal within 10% of each other",
	Context: "Waffle Grid's posts on bigdbahead.com (2008-2009); the figures are DBT2 NOTPM at 20 warehouses with a 768 MB buffer pool",
	Defaults: Params{Warehouses: 20, Terminals: 16, Duration: 5 * time.Minute, Warmup: 5 * time.Minute,
		PoolSize: wafflePool / 20, Hardware: hw.Spec{Store: "disk-10k-x2-2009", Network: "gigabit-2009"}},
	// At small scale a warehouse loads about a tenth of the data: the pool
	// and every tier keep their share of it.
	SmallDefaults: &Params{Warehouses: 1, Terminals: 16, Duration: 5 * time.Minute, Warmup: 5 * time.Minute,
		PoolSize: wafflePool / 200, Hardware: hw.Spec{Store: "disk-10k-x2-2009", Network: "gigabit-2009"}},
	sides: func(p *Params) []Side {
		s, _ := waffleSides(p)
		return s
	},
	held: func([]*report.Report) (bool, string) { return false, "" },
	headline: func(r []*report.Report) Headline {
		return headline("tpmC, no tier → memcached 1.2.5 768 MB with the MRU patch", tpmC(r[0]), tpmC(r[2]))
	},
	finish: func(res *Report) {
		waffleTable(res)
		res.Held, res.Verdict = waffleHeld(res)
	},
	pairs: [][2]int{{0, 1}, {0, 2}, {0, 3}, {4, 5}},
}
