package experiment

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/sim/replay"
	"github.com/enginelab/enginelab/sim/report"
	"github.com/enginelab/enginelab/tpcc"
)

// defaultPoolPerWarehouse is the pool per warehouse of the experiments whose
// default pool holds the data: 256 MiB, as tpcc's default was before it
// became sim.DefaultPoolSize, so that their results did not change (at
// their one warehouse the two are the same; at more, an experiment's pool
// keeps room for growth in each warehouse).
const defaultPoolPerWarehouse = 256 << 20

// The experiments, in the order of the README's questions ("The questions
// the experiments answer").
var experiments = []*Experiment{
	// (The seventh question, wide-key, is last in the list.)
	{
		Name:     "count-rewrite",
		Question: "count(c_id) through the customer last-name index: zero row fetches when secondaries carry the primary key, one per match when they carry row pointers, zero again with the count-rewrite option",
		Expect:   "sysbench's by-name Payment fetches no rows for the count in clustered, a row per match in heap-rowptr, and fewer with the count rewrite, which never slows the row-pointer heap (its Payment's engine time, CPU and buffer pool, per attempt, does not grow)",
		Defaults: Params{PoolSize: defaultPoolPerWarehouse},
		// At small scale, one terminal. A district's 300 customers, on
		// which the by-name draws concentrate, make concurrent Payments
		// meet on one customer row; a scan that waits for a row's lock
		// reads the row again by its key, a row fetch in any
		// organization, which would show in clustered's count. Alone, a
		// terminal never waits, and the fetches counted are the
		// lookups' own.
		SmallDefaults: &Params{PoolSize: defaultPoolPerWarehouse, Terminals: 1},
		sides: func(p *Params) []Side {
			c := p.base()
			c.Profile = tpcc.Sysbench
			h := c
			h.Org = engine.HeapRowPointer
			rw := h
			rw.CountRewrite = true
			return []Side{{"clustered", c}, {"heap-rowptr", h}, {"heap-rowptr, count rewrite", rw}}
		},
		held: func(r []*report.Report) (bool, string) {
			fetches := func(r *report.Report) float64 {
				return perTx(r, tpcc.PaymentTx, func(m *engine.Meter) int64 { return m.RowFetches })
			}
			fc, fh, fr := fetches(r[0]), fetches(r[1]), fetches(r[2])
			// "Never slows" is about the engine's own work: a Payment
			// attempt's CPU and buffer-pool time. Its lock waits and
			// queueing depend on how the terminals happen to
			// interleave, and so does how many of its attempts fail
			// with a serialization error and are retried (under
			// RepeatableRead a heap's Payments meet on the warehouse
			// row): a completed Payment's engine time carries its
			// retried attempts', so it is compared per attempt.
			eh, er := engineMsPerAttempt(r[1], tpcc.PaymentTx), engineMsPerAttempt(r[2], tpcc.PaymentTx)
			ok := fc == 0 && fh > 0 && fr < fh && er <= eh
			// The row fetches a clustered consistent read makes to
			// confirm a secondary entry whose leaf's PAGE_MAX_TRX_ID is
			// not below its view (none here: no transaction changes
			// c_last, so the name index's leaves keep the load's ids).
			checks := perTx(r[0], tpcc.PaymentTx, func(m *engine.Meter) int64 { return m.SecondaryClusterChecks })
			return ok, fmt.Sprintf("row fetches per Payment: clustered %.2f (of which %.2f forced by PAGE_MAX_TRX_ID), heap-rowptr %.2f, with the rewrite %.2f; a Payment attempt's engine time %.4f → %.4f ms (response %.3f → %.3f ms, tpmC %.0f → %.0f) with the rewrite",
				fc, checks, fh, fr, eh, er, meanMs(r[1], tpcc.PaymentTx), meanMs(r[2], tpcc.PaymentTx), tpmC(r[1]), tpmC(r[2]))
		},
		headline: func(r []*report.Report) Headline {
			return headline("heap-rowptr's Payment row fetches per transaction, without → with the rewrite",
				perTx(r[1], tpcc.PaymentTx, func(m *engine.Meter) int64 { return m.RowFetches }),
				perTx(r[2], tpcc.PaymentTx, func(m *engine.Meter) int64 { return m.RowFetches }))
		},
	},
	{
		Name:     "delivery-limit",
		Question: "Delivery reading every undelivered order versus LIMIT 1",
		Expect:   "reading every undelivered order of a district (benchmarksql) returns more rows per Delivery than LIMIT 1 (optimized) and takes longer",
		Defaults: Params{PoolSize: defaultPoolPerWarehouse},
		sides: func(p *Params) []Side {
			c := p.base()
			b := c
			b.Profile = tpcc.BenchmarkSQL
			return []Side{{"LIMIT 1 (optimized)", c}, {"every undelivered order (benchmarksql)", b}}
		},
		held: func(r []*report.Report) (bool, string) {
			rows := func(r *report.Report) float64 {
				return perTx(r, tpcc.DeliveryTx, func(m *engine.Meter) int64 { return m.RowsReturned })
			}
			ok := rows(r[1]) > rows(r[0]) && meanMs(r[1], tpcc.DeliveryTx) > meanMs(r[0], tpcc.DeliveryTx)
			return ok, fmt.Sprintf("rows returned per Delivery %.1f → %.1f, Delivery %.3f → %.3f ms",
				rows(r[0]), rows(r[1]), meanMs(r[0], tpcc.DeliveryTx), meanMs(r[1], tpcc.DeliveryTx))
		},
		headline: func(r []*report.Report) Headline {
			return headline("Delivery mean ms (modeled)", meanMs(r[0], tpcc.DeliveryTx), meanMs(r[1], tpcc.DeliveryTx))
		},
	},
	{
		Name:     "stocklevel-bound",
		Question: "StockLevel's range scan with and without its lower bound",
		Expect:   "without its lower bound on ol_o_id, Stock-Level examines more order lines and takes longer",
		Defaults: Params{PoolSize: defaultPoolPerWarehouse},
		sides: func(p *Params) []Side {
			c := p.base()
			n := c
			n.StockLevelNoLowerBound = true
			return []Side{{"with the lower bound", c}, {"without it", n}}
		},
		held: func(r []*report.Report) (bool, string) {
			ex := func(r *report.Report) float64 {
				return perTx(r, tpcc.StockLevelTx, func(m *engine.Meter) int64 { return m.RowsExamined })
			}
			ok := ex(r[1]) > ex(r[0]) && meanMs(r[1], tpcc.StockLevelTx) > meanMs(r[0], tpcc.StockLevelTx)
			return ok, fmt.Sprintf("rows examined per Stock-Level %.1f → %.1f, Stock-Level %.3f → %.3f ms",
				ex(r[0]), ex(r[1]), meanMs(r[0], tpcc.StockLevelTx), meanMs(r[1], tpcc.StockLevelTx))
		},
		headline: func(r []*report.Report) Headline {
			return headline("Stock-Level mean ms (modeled)", meanMs(r[0], tpcc.StockLevelTx), meanMs(r[1], tpcc.StockLevelTx))
		},
	},
	{
		Name: "io-bound",
		Question: "an IO-bound TPC-C (buffer pool a fraction of the data) with and without a remote page cache, " +
			"with and without read-ahead (Waffle Grid's setup, scaled: pool about 30% and tier about 40% of the data, a 2009 disk, gigabit Ethernet, no sync at commit)",
		Expect: "a remote tier raises tpmC on an IO-bound run, and exclusive mode (evicted pages) hits at least as often as inclusive (pages read from the store), which keeps copies of pages the pool still holds",
		Context: "Waffle Grid, DBT2 with 20 warehouses and 16 threads, MySQL 5.1.30, 768 MB buffer pool: 3,218.54 TPM alone; " +
			"with a 768 MB memcached tier 6,575.8 TPM (stock memcached) and 9,371.54 TPM (patched); 16,508.54 TPM with a 1,500 MB local pool " +
			"(bigdbahead.com/?p=80, 2009)",
		// W = 1 loads about 95 MiB: a 28 MiB pool and a 38 MiB tier are
		// Waffle's 768 MB and 1 GB of about 2.5 GB. At small scale W = 1
		// loads about 9.8 MiB: a 3 MiB pool and a 4 MiB tier keep the
		// same fractions.
		Defaults: Params{Terminals: 16, Duration: 5 * time.Minute, Warmup: time.Minute,
			PoolSize: 28 << 20, RemoteSize: 38 << 20, Hardware: hw.Spec{Store: "disk-2009", Network: "gigabit"}},
		SmallDefaults: &Params{Terminals: 16, Duration: 5 * time.Minute, Warmup: time.Minute,
			PoolSize: 3 << 20, RemoteSize: 4 << 20, Hardware: hw.Spec{Store: "disk-2009", Network: "gigabit"}},
		sides: func(p *Params) []Side {
			c := p.base()
			ex := c
			ex.Remote, ex.RemoteMode = sim.RemoteSpec{Backend: "lru"}, "exclusive"
			in := ex
			in.RemoteMode = "inclusive"
			nora := ex
			nora.ReadAhead = false
			return []Side{{"no tier", c}, {"lru tier, exclusive", ex}, {"lru tier, inclusive", in},
				{"lru tier, exclusive, no read-ahead", nora}}
		},
		held: func(r []*report.Report) (bool, string) {
			hit := func(r *report.Report) float64 {
				if r.Tier == nil {
					return 0
				}
				return r.Tier.HitRate
			}
			ok := tpmC(r[1]) > tpmC(r[0]) && hit(r[1]) >= hit(r[2])
			// How much read-ahead did on the exclusive side during the
			// run says how far the last side can differ from it; the
			// background counts are the whole job's, the load's
			// included.
			var b report.Background
			if r[1].Background != nil {
				b = *r[1].Background
			}
			return ok, fmt.Sprintf("tpmC %.0f without a tier, %.0f exclusive (hit rate %.1f%%; read-ahead decisions during the run %d; over the whole job, the load included, %d decisions, %d pages, %d never used), %.0f inclusive (%.1f%%), %.0f exclusive without read-ahead",
				tpmC(r[0]), tpmC(r[1]), 100*hit(r[1]), runReadAheads(&b), b.ReadAheadTriggers, b.ReadAheads, b.ReadAheadUnused, tpmC(r[2]), 100*hit(r[2]), tpmC(r[3]))
		},
		headline: func(r []*report.Report) Headline {
			return headline("tpmC, no tier → exclusive lru tier", tpmC(r[0]), tpmC(r[1]))
		},
	},
	{
		Name: "tier-policy",
		Question: "the eviction policy of the remote tier (LRU versus segmented LRU versus TinyLFU versus the clairvoyant optimum) and its hit rate, " +
			"on a recorded page trace (the io-bound experiment's run, exclusive mode)",
		Expect: "the clairvoyant cache hits at least as often as lru and slru at every size, and in exclusive mode slru hits exactly as often as lru " +
			"(a page enters the tier when evicted and leaves at its first hit, so nothing is ever promoted); ristretto is averaged over runs, " +
			"and counts page bytes only, so it may hold a page more than the others at one size",
		Defaults: Params{Terminals: 16, Duration: 5 * time.Minute, Warmup: time.Minute,
			PoolSize: 28 << 20, Hardware: hw.Spec{Store: "disk-2009", Network: "gigabit"}},
		SmallDefaults: &Params{Terminals: 16, Duration: 5 * time.Minute, Warmup: time.Minute,
			PoolSize: 3 << 20, Hardware: hw.Spec{Store: "disk-2009", Network: "gigabit"}}, // io-bound's, at small scale
		sides: func(p *Params) []Side {
			c := p.base()
			return []Side{{"recording run (no tier; the pool's misses and evictions)", c}}
		},
		replay: &replay.Config{Policies: []string{"lru", "slru", "ristretto", "belady"}, RistrettoRuns: 3},
		replayHeld: func(r *replay.Report) (bool, string, Headline) {
			ok := true
			var worst string
			gap := math.Inf(1)
			var h Headline
			for _, size := range sizesOf(r) {
				l, sl, b := r.Result("lru", size), r.Result("slru", size), r.Result("belady", size)
				if l == nil || sl == nil || b == nil {
					return false, "the replay lacks a policy", h
				}
				if b.Hits < l.Hits || b.Hits < sl.Hits || l.Hits != sl.Hits {
					ok = false
					worst = fmt.Sprintf("at %s: lru %d, slru %d, belady %d hits", report.FormatBytes(size), l.Hits, sl.Hits, b.Hits)
				}
				if d := b.HitRatio - l.HitRatio; d < gap || h.Figure == "" {
					gap = d
				}
				if h.Figure == "" || size <= int64(r.Pages)*int64(r.PageSize)/4 {
					h = headline(fmt.Sprintf("hit ratio at %s (a quarter of the trace's pages or less), lru → belady", report.FormatBytes(size)),
						l.HitRatio, b.HitRatio)
				}
			}
			if ok {
				return true, fmt.Sprintf("belady ≥ lru = slru at every size (the smallest gap %.1f points)", 100*gap), h
			}
			return false, worst, h
		},
		held:     func([]*report.Report) (bool, string) { return false, "" },
		headline: func([]*report.Report) Headline { return Headline{} },
	},
	{
		Name:     "hot-index",
		Question: "the cost of a secondary index on a frequently updated column",
		Expect: "an index on stock.s_quantity, which every New-Order line updates, adds index entries written and deleted per New-Order and makes it slower; " +
			"in the heap organizations with PostgreSQL's versions (heap-rowptr and heap-pk, --heap-versions) it also turns Stock's HOT updates into non-HOT ones: " +
			"some of New-Order's updates are heap-only without the index, and with it none of Stock's can be (each changes s_quantity), so HOT updates per New-Order fall to at most the district's one and non-HOT ones rise",
		Defaults: Params{PoolSize: defaultPoolPerWarehouse},
		sides: func(p *Params) []Side {
			c := p.base()
			x := withStockQuantityIndex(c)
			sides := []Side{{"no index on s_quantity", c}, {"idx_stock_quantity (s_w_id, s_quantity)", x}}
			for _, org := range hotIndexHeapOrgs {
				h := p.base()
				h.Org, h.HeapVersions = org, engine.HeapVersionsOn
				sides = append(sides, Side{org.String() + " with versions, no index", h},
					Side{org.String() + " with versions, idx_stock_quantity", withStockQuantityIndex(h)})
			}
			return sides
		},
		pairs: [][2]int{{0, 1}, {2, 3}, {4, 5}},
		held: func(r []*report.Report) (bool, string) {
			w := func(r *report.Report) float64 {
				return perTx(r, tpcc.NewOrderTx, func(m *engine.Meter) int64 { return m.IndexEntriesWritten })
			}
			ok := w(r[1]) > w(r[0]) && meanMs(r[1], tpcc.NewOrderTx) > meanMs(r[0], tpcc.NewOrderTx)
			verdict := fmt.Sprintf("index entries written per New-Order %.1f → %.1f, New-Order %.3f → %.3f ms",
				w(r[0]), w(r[1]), meanMs(r[0], tpcc.NewOrderTx), meanMs(r[1], tpcc.NewOrderTx))
			for i, org := range hotIndexHeapOrgs {
				a, b := r[2+2*i], r[3+2*i]
				hot := func(r *report.Report) float64 {
					return perTx(r, tpcc.NewOrderTx, func(m *engine.Meter) int64 { return m.HeapHOTUpdates })
				}
				non := func(r *report.Report) float64 {
					return perTx(r, tpcc.NewOrderTx, func(m *engine.Meter) int64 { return m.HeapNonHOTUpdates })
				}
				// With the index every Stock update changes an indexed
				// column, so only the district's update can be HOT: at
				// most one per attempt (a retried New-Order updates its
				// district again, and its meter counts every attempt).
				nb := typeOf(b, tpcc.NewOrderTx)
				attempts := float64(nb.Count+nb.Retries) / float64(max(nb.Count, 1))
				ok = ok && hot(a) > 0 && hot(b) < hot(a) && hot(b) <= attempts && non(b) > non(a) && w(b) > w(a)
				verdict += fmt.Sprintf("; %s with versions: HOT updates per New-Order %.2f → %.2f (with the index at most the district's, %.2f attempts per New-Order), non-HOT %.2f → %.2f, index entries written %.1f → %.1f, New-Order %.3f → %.3f ms",
					org, hot(a), hot(b), attempts, non(a), non(b), w(a), w(b), meanMs(a, tpcc.NewOrderTx), meanMs(b, tpcc.NewOrderTx))
			}
			return ok, verdict
		},
		headline: func(r []*report.Report) Headline {
			return headline("New-Order mean ms (modeled)", meanMs(r[0], tpcc.NewOrderTx), meanMs(r[1], tpcc.NewOrderTx))
		},
	},
	{
		Name:     "wide-key",
		Question: "a wide (varchar) primary key: its cost in every secondary index",
		Expect: "a 64-byte varchar added to CUSTOMER's primary key widens every entry of idx_customer_name where secondaries carry the primary key (clustered: more pages, more node visits per by-name lookup), " +
			"and leaves it unchanged where they carry row pointers (heap-rowptr)",
		Defaults: Params{PoolSize: defaultPoolPerWarehouse},
		sides: func(p *Params) []Side {
			c := p.base()
			c.LoadSpace = true
			if p.Scale == tpcc.SmallScale {
				// A tenth of the customers make shallower indexes: on
				// 16 KiB pages the wide key deepens none of CUSTOMER's
				// (at full scale it deepens heap-rowptr's primary key
				// index), so it costs pages but no node visit, and a
				// by-name lookup, which finds one customer at this
				// scale, crosses no more leaves. On 8 KiB pages it takes
				// clustered's idx_customer_name from two levels to three.
				c.PageSize = 8 << 10
			}
			cw := c
			cw.WideCustomerKey = wideKeyBytes
			h := c
			h.Org = engine.HeapRowPointer
			hwide := h
			hwide.WideCustomerKey = wideKeyBytes
			return []Side{{"clustered", c}, {"clustered, 64-byte key", cw}, {"heap-rowptr", h}, {"heap-rowptr, 64-byte key", hwide}}
		},
		pairs: [][2]int{{0, 1}, {2, 3}},
		// The pages are counted as loaded: the question is what the key
		// does to the index's entries. A run changes heap-rowptr's index
		// whatever the key: a Payment lengthens a "BC" customer's c_data,
		// the row leaves a full heap page, and its entry is deleted and
		// written again with the new pointer, which can merge a leaf; rows
		// 64 bytes wider leave their pages at other moments, so the two
		// heap sides' indexes can end a run a page apart. (At small scale,
		// where each customer is paid ten times as often, they can within
		// a tenth of a virtual second.)
		held: func(r []*report.Report) (bool, string) {
			c, cw, h, hwide := loadedIndexPages(r[0]), loadedIndexPages(r[1]), loadedIndexPages(r[2]), loadedIndexPages(r[3])
			ok := c > 0 && h > 0 && cw > 1.2*c && hwide == h
			return ok, fmt.Sprintf("idx_customer_name pages as loaded: clustered %.0f → %.0f with the wide key, heap-rowptr %.0f → %.0f", c, cw, h, hwide)
		},
		headline: func(r []*report.Report) Headline {
			return headline("clustered idx_customer_name pages as loaded, narrow → wide key", loadedIndexPages(r[0]), loadedIndexPages(r[1]))
		},
	},
	waffleExperiment,
}

// hotIndexHeapOrgs are the heap organizations hot-index runs with
// PostgreSQL's versions, each without and with the index.
var hotIndexHeapOrgs = []engine.Org{engine.HeapRowPointer, engine.HeapPrimaryKey}

// withStockQuantityIndex is c with idx_stock_quantity on STOCK.
func withStockQuantityIndex(c sim.TPCCConfig) sim.TPCCConfig {
	c.ExtraIndexes = map[string][]engine.Index{tpcc.Stock: {tpcc.StockQuantityIndex}}
	return c
}

// wideKeyBytes is the wide-key experiment's c_key: a 64-byte varchar, the
// size of a long natural key or a hex digest.
const wideKeyBytes = 64

// indexPages is the pages of table's index in space.
func indexPages(space []report.Space, table, index string) float64 {
	for _, s := range space {
		if s.Table == table && s.Index == index {
			return float64(s.Pages)
		}
	}
	return 0
}

// loadedIndexPages is idx_customer_name's pages in r's space as loaded
// (sim.TPCCConfig.LoadSpace).
func loadedIndexPages(r *report.Report) float64 {
	if r.Load == nil {
		return 0
	}
	return indexPages(r.Load.Space, tpcc.Customer, tpcc.CustomerByName)
}

// All lists the experiments, in the order of the README's questions.
func All() []*Experiment { return experiments }

// Lookup returns the experiment called name.
func Lookup(name string) (*Experiment, error) {
	var names []string
	for _, e := range experiments {
		if e.Name == name {
			return e, nil
		}
		names = append(names, e.Name)
	}
	return nil, fmt.Errorf("%w: %q: want one of %v", ErrUnknown, name, names)
}

// sizesOf lists a replay's sizes, ascending, as its results hold them.
func sizesOf(r *replay.Report) []int64 {
	var sizes []int64
	for _, x := range r.Results {
		if !slices.Contains(sizes, x.SizeBytes) {
			sizes = append(sizes, x.SizeBytes)
		}
	}
	slices.Sort(sizes)
	return sizes
}

// runReadAheads sums the read-ahead decisions b lists by space, the run's
// (the report takes them from the run's start to its end).
func runReadAheads(b *report.Background) int64 {
	var n int64
	for _, s := range b.ReadAheadBySpace {
		n += s.Linear + s.Random
	}
	return n
}
