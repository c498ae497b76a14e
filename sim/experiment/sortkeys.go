package experiment

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim/hw"
)

// The sort-keys experiment (the README's tenth question): sorting
// VARCHAR(N) with fixed-length against packed sort keys (MDEV-21580).
//
// A table t (id INT primary key, a INT, v VARCHAR(N)) holds the same rows
// for every N: v is a short value (1 to 12 characters). Two queries, as
// the mysqlslap runs behind MDEV-21580 had them:
//
//	SELECT * FROM t ORDER BY v            the key is the varchar
//	SELECT * FROM t ORDER BY a LIMIT 100  the key is the integer
//
// each for N in 10, 50, 100, 200, 500 and 1000, in both key formats, under
// three collations (latin1_swedish_ci, utf8mb4_general_ci,
// utf8mb4_unicode_ci, the seed's latin1, utf8_general_ci and
// utf8_unicode_ci). Each case runs once and its counters are priced on
// the modeled machine (simulated), then runs Repeats times in real mode,
// timed on the wall clock. The expectation: the fixed key grows with N
// (until max_sort_length), so its modeled time does, while the mode (addon
// fields or row references) stays the same; the packed key is the value,
// so its time is flat; ORDER BY a LIMIT 100 is a priority queue, which
// never packs, so both formats do exactly the same work.

// SortKeysName is the experiment's name.
const SortKeysName = "sort-keys"

// SortKeysQuestion is the question it answers.
const SortKeysQuestion = "sorting VARCHAR(N) with fixed-length against packed sort keys (MDEV-21580): fixed grows with N, packed stays flat"

// SortKeysConfig scales the experiment; zero fields take the defaults.
type SortKeysConfig struct {
	Rows       int      // rows in the table (default 100,000)
	Ns         []int    // the VARCHAR lengths (default 10, 50, 100, 200, 500, 1000)
	Collations []string // default latin1_swedish_ci, utf8mb4_general_ci, utf8mb4_unicode_ci
	Repeats    int      // real-mode timings a case (default 5; -1: none)
	Seed       uint64   // the data (default 1)
	// SortBufferSize is sort_buffer_size (default 2 MiB).
	SortBufferSize int64
	Hardware       hw.Spec
	Org            engine.Org // default clustered
}

// SortKeysCase is one case: a query, an N, a collation and a format.
type SortKeysCase struct {
	Query     string `json:"query"`
	N         int    `json:"n"`
	Collation string `json:"collation"`
	Format    string `json:"format"`
	// What the sort chose.
	Mode          string `json:"mode"`
	PackedKeys    bool   `json:"packed_keys"`
	PriorityQueue bool   `json:"priority_queue"`
	SortLength    int    `json:"sort_length"`
	Runs          int    `json:"runs"`
	MergePasses   int    `json:"merge_passes"`
	// Its counters.
	KeyBytes     int64 `json:"key_bytes"`
	Compares     int64 `json:"compares"`
	CompareBytes int64 `json:"compare_bytes"`
	TempBytes    int64 `json:"temp_bytes"`
	Refetched    int64 `json:"rows_refetched"`
	// ModeledMs is the modeled time: the scan's and re-fetches' CPU
	// events on the machine's CPU profile, the sort's counters at
	// hw.DefaultSortCosts, temporary I/O and page reads on its devices.
	ModeledMs float64 `json:"modeled_ms"`
	// Real-mode wall-clock milliseconds of Repeats runs.
	RealMinMs    float64 `json:"real_min_ms,omitempty"`
	RealMedianMs float64 `json:"real_median_ms,omitempty"`
	RealMaxMs    float64 `json:"real_max_ms,omitempty"`
}

// SortKeysReport is what the experiment found.
type SortKeysReport struct {
	Name     string         `json:"name"`
	Question string         `json:"question"`
	Expect   string         `json:"expect"`
	Rows     int            `json:"rows"`
	Machine  string         `json:"machine"`
	Cases    []SortKeysCase `json:"cases"`
	Held     bool           `json:"held"`
	Verdict  string         `json:"verdict"`
	// RealSpread is the largest (max-min)/median of the real-mode
	// timings: the wall-clock noise the counted costs do not have.
	RealSpread float64 `json:"real_spread"`
}

// SortKeysExpect is the experiment's expected direction.
const SortKeysExpect = "ORDER BY v: the fixed key's modeled time grows with N while the mode (addon fields or row references) stays the same, the packed key's stays within 25% across N; ORDER BY a LIMIT 100: a priority queue, the same work in both formats"

func (c *SortKeysConfig) defaults() {
	if c.Rows == 0 {
		c.Rows = 100000
	}
	if len(c.Ns) == 0 {
		c.Ns = []int{10, 50, 100, 200, 500, 1000}
	}
	if len(c.Collations) == 0 {
		c.Collations = []string{"latin1_swedish_ci", "utf8mb4_general_ci", "utf8mb4_unicode_ci"}
	}
	if c.Repeats == 0 {
		c.Repeats = 5
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Org == engine.OrgDefault {
		c.Org = engine.Clustered
	}
}

// Validate refuses a configuration that cannot run, before any work.
func (c *SortKeysConfig) Validate() error {
	d := *c
	d.defaults()
	switch {
	case d.Rows < 1 || d.Rows > 10_000_000:
		return fmt.Errorf("experiment %s: %w: rows %d: want 1 to 10,000,000", SortKeysName, ErrInvalidConfig, d.Rows)
	case d.Repeats < -1 || d.Repeats > 100:
		return fmt.Errorf("experiment %s: %w: repeats %d: want -1 (none) to 100", SortKeysName, ErrInvalidConfig, d.Repeats)
	case d.SortBufferSize != 0 && d.SortBufferSize < engine.MinSortBufferSize:
		return fmt.Errorf("experiment %s: %w: sort buffer %d: want at least %d", SortKeysName, ErrInvalidConfig, d.SortBufferSize, engine.MinSortBufferSize)
	}
	for _, n := range d.Ns {
		if n < 1 || n > engine.MaxStringLength {
			return fmt.Errorf("experiment %s: %w: N %d: want 1 to %d", SortKeysName, ErrInvalidConfig, n, engine.MaxStringLength)
		}
	}
	for _, name := range d.Collations {
		if _, err := engine.LookupCollation(name); err != nil {
			return fmt.Errorf("experiment %s: %w: %w", SortKeysName, ErrInvalidConfig, err)
		}
	}
	if _, err := d.Hardware.Resolve(); err != nil {
		return fmt.Errorf("experiment %s: %w", SortKeysName, err)
	}
	return nil
}

// sortKeysValue is row i's v: 1 to 12 letters, the same for every N
// (cut to N when N is shorter).
func sortKeysValue(r *rand.Rand) string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	n := 1 + r.IntN(12)
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[r.IntN(len(letters))]
	}
	return string(b)
}

// SortKeys runs the experiment. progress, if not nil, hears what runs.
func SortKeys(ctx context.Context, cfg SortKeysConfig, progress func(string)) (*SortKeysReport, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.defaults()
	machine, err := cfg.Hardware.Resolve()
	if err != nil {
		return nil, err
	}
	rep := &SortKeysReport{Name: SortKeysName, Question: SortKeysQuestion, Expect: SortKeysExpect, Rows: cfg.Rows,
		Machine: fmt.Sprintf("cpu %s, store %s", machine.CPUName, machine.StoreName)}
	for _, n := range cfg.Ns {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if progress != nil {
			progress(fmt.Sprintf("%s: VARCHAR(%d): load %d rows", SortKeysName, n, cfg.Rows))
		}
		db, t, err := sortKeysTable(&cfg, n)
		if err != nil {
			return nil, err
		}
		for _, coll := range cfg.Collations {
			for _, q := range []string{"ORDER BY v", "ORDER BY a LIMIT 100"} {
				for _, f := range []engine.KeyFormat{engine.KeyFormatFixed, engine.KeyFormatPacked} {
					c, err := sortKeysCase(ctx, &cfg, &machine, db, t, n, coll, q, f)
					if err != nil {
						_ = db.Close()
						return nil, err
					}
					rep.Cases = append(rep.Cases, c)
				}
			}
		}
		if err := db.Close(); err != nil {
			return nil, err
		}
	}
	rep.judge()
	return rep, nil
}

func sortKeysTable(cfg *SortKeysConfig, n int) (*engine.DB, *engine.TableHandle, error) {
	o := &engine.Options{SkipMemoryCheck: true}
	o.PoolSize = 512 << 20
	db, err := engine.Open(o)
	if err != nil {
		return nil, nil, err
	}
	t, err := db.CreateTable(engine.Table{Name: "t", Org: cfg.Org, PrimaryKey: []string{"id"},
		Columns: []engine.Column{{Name: "id", Type: engine.TypeInt}, {Name: "a", Type: engine.TypeInt},
			{Name: "v", Type: engine.TypeVarchar, Length: n}}})
	if err != nil {
		_ = db.Close()
		return nil, nil, err
	}
	r := rand.New(rand.NewPCG(cfg.Seed, 24))
	tx := db.Begin(nil)
	for i := range cfg.Rows {
		v := sortKeysValue(r)
		if len(v) > n {
			v = v[:n]
		}
		if err := tx.Insert(t, engine.Row{engine.Int(int64(i)), engine.Int(r.Int64N(1 << 30)), engine.Str(v)}); err != nil {
			_ = db.Close()
			return nil, nil, err
		}
		if i%1000 == 999 {
			if err := tx.Commit(); err != nil {
				_ = db.Close()
				return nil, nil, err
			}
			tx = db.Begin(nil)
		}
	}
	if err := tx.Commit(); err != nil {
		_ = db.Close()
		return nil, nil, err
	}
	return db, t, nil
}

// sortKeysCase runs one case: once metered, then timed.
func sortKeysCase(ctx context.Context, cfg *SortKeysConfig, machine *hw.Machine, db *engine.DB, t *engine.TableHandle, n int, coll, q string, f engine.KeyFormat) (SortKeysCase, error) {
	o := engine.SortOptions{OrderBy: []engine.SortKey{{Column: "v", Collation: coll}}, KeyFormat: f,
		SortBufferSize: cfg.SortBufferSize, RowsEstimate: int64(cfg.Rows)}
	if q != "ORDER BY v" {
		o.OrderBy = []engine.SortKey{{Column: "a"}}
		o.Limit = 100
	}
	once := func(m *engine.Meter) (engine.SortStats, error) {
		tx := db.Begin(m)
		s, err := tx.Sort(t, o)
		if err != nil {
			_ = tx.Rollback()
			return engine.SortStats{}, err
		}
		for s.Next() {
		}
		if err := s.Close(); err != nil {
			_ = tx.Rollback()
			return engine.SortStats{}, err
		}
		return s.Stats(), tx.Commit()
	}
	var m engine.Meter
	st, err := once(&m)
	if err != nil {
		return SortKeysCase{}, fmt.Errorf("experiment %s: VARCHAR(%d) %s %s %s: %w", SortKeysName, n, coll, q, f, err)
	}
	c := SortKeysCase{Query: q, N: n, Collation: coll, Format: f.String(), Mode: st.Mode.String(), PackedKeys: st.PackedKeys,
		PriorityQueue: st.PriorityQueue, SortLength: st.SortLength, Runs: st.Runs, MergePasses: st.MergePasses,
		KeyBytes: m.SortKeyBytes, Compares: m.Compares(), TempBytes: m.SortTempWriteBytes + m.SortTempReadBytes,
		Refetched: m.SortRowsRefetched}
	c.CompareBytes = m.SortMemcmpBytes
	for _, b := range m.SortCollBytes {
		c.CompareBytes += b
	}
	cpu, io := hw.SortTime(machine, &hw.DefaultSortCosts, &m.SortCounts)
	total := cpu + io + hw.CPUTime(machine, &m) + hw.StoreReadTime(machine, &m, int64(db.Options().PageSize))
	c.ModeledMs = float64(total) / 1e6
	var times []float64
	for range max(cfg.Repeats, 0) {
		if err := ctx.Err(); err != nil {
			return c, err
		}
		start := time.Now()
		if _, err := once(nil); err != nil {
			return c, err
		}
		times = append(times, float64(time.Since(start))/1e6)
	}
	if len(times) > 0 {
		slices.Sort(times)
		c.RealMinMs, c.RealMaxMs, c.RealMedianMs = times[0], times[len(times)-1], times[len(times)/2]
	}
	return c, nil
}

// judge checks the expected direction.
func (r *SortKeysReport) judge() {
	ok := true
	var notes []string
	find := func(q, coll, f string, n int) *SortKeysCase {
		for i := range r.Cases {
			c := &r.Cases[i]
			if c.Query == q && c.Collation == coll && c.Format == f && c.N == n {
				return c
			}
		}
		return nil
	}
	var colls []string
	var ns []int
	for _, c := range r.Cases {
		if !slices.Contains(colls, c.Collation) {
			colls = append(colls, c.Collation)
		}
		if !slices.Contains(ns, c.N) {
			ns = append(ns, c.N)
		}
	}
	for _, coll := range colls {
		// Fixed grows with N within a mode (until the key stops growing
		// at max_sort_length).
		var prev *SortKeysCase
		lo, hi := math.Inf(1), 0.0
		var plo *SortKeysCase
		for _, n := range ns {
			fx, pk := find("ORDER BY v", coll, "fixed", n), find("ORDER BY v", coll, "packed", n)
			if fx == nil || pk == nil {
				continue
			}
			if prev != nil && prev.Mode == fx.Mode && fx.SortLength > prev.SortLength && fx.ModeledMs <= prev.ModeledMs {
				ok = false
				notes = append(notes, fmt.Sprintf("%s fixed: N %d → %d did not grow (%.2f → %.2f ms)", coll, prev.N, n, prev.ModeledMs, fx.ModeledMs))
			}
			prev = fx
			if plo == nil || plo.Mode == pk.Mode {
				if pk.ModeledMs < lo {
					lo = pk.ModeledMs
				}
				if pk.ModeledMs > hi {
					hi = pk.ModeledMs
				}
				if plo == nil {
					plo = pk
				}
			}
			a, b := find("ORDER BY a LIMIT 100", coll, "fixed", n), find("ORDER BY a LIMIT 100", coll, "packed", n)
			// The integer key has nothing to pack: the same work in both
			// formats (a priority queue when LIMIT is under a third of
			// the rows, check_if_pq_applicable).
			if a != nil && b != nil && (a.ModeledMs != b.ModeledMs || a.Compares != b.Compares || a.KeyBytes != b.KeyBytes || a.PackedKeys || b.PackedKeys) {
				ok = false
				notes = append(notes, fmt.Sprintf("%s N=%d: ORDER BY a LIMIT 100 differs by format (%.3f against %.3f ms)", coll, n, a.ModeledMs, b.ModeledMs))
			}
		}
		if plo != nil && hi > 1.25*lo {
			ok = false
			notes = append(notes, fmt.Sprintf("%s packed: %.2f to %.2f ms across N in mode %s", coll, lo, hi, plo.Mode))
		}
	}
	for _, c := range r.Cases {
		if c.RealMedianMs > 0 {
			r.RealSpread = math.Max(r.RealSpread, (c.RealMaxMs-c.RealMinMs)/c.RealMedianMs)
		}
	}
	r.Held = ok
	if ok {
		r.Verdict = "fixed keys cost more as N grows, packed keys stay flat, and the LIMIT query is the same in both formats"
	} else {
		r.Verdict = strings.Join(notes, "; ")
	}
}

// WriteTable prints the cases, the ratio packed/fixed per N, and the
// verdict.
func (r *SortKeysReport) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "experiment %s: %s\nexpects: %s\n%d rows, v 1 to 12 letters; modeled on %s (sort costs: hw.DefaultSortCosts)\n\n",
		r.Name, r.Question, r.Expect, r.Rows, r.Machine)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "query\tN\tcollation\tformat\tmode\tpq\tsort_len\tkey bytes\tcompares\tcmp bytes\truns\tpasses\ttemp bytes\trefetched\tmodeled ms\treal min\tmedian\tmax ms\t")
	for _, c := range r.Cases {
		pq := ""
		if c.PriorityQueue {
			pq = "pq"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.2f\t%.1f\t%.1f\t%.1f\t\n",
			c.Query, c.N, c.Collation, c.Format, c.Mode, pq, c.SortLength, c.KeyBytes, c.Compares, c.CompareBytes,
			c.Runs, c.MergePasses, c.TempBytes, c.Refetched, c.ModeledMs, c.RealMinMs, c.RealMedianMs, c.RealMaxMs)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("\nratio packed/fixed (modeled; real median in parentheses)\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	var colls []string
	for _, c := range r.Cases {
		if !slices.Contains(colls, c.Collation) {
			colls = append(colls, c.Collation)
		}
	}
	fmt.Fprintf(tw, "query\tN\t%s\t\n", strings.Join(colls, "\t"))
	for i := 0; i+1 < len(r.Cases); i += 2 {
		fx := r.Cases[i]
		if fx.Collation != colls[0] {
			continue
		}
		fmt.Fprintf(tw, "%s\t%d", fx.Query, fx.N)
		for _, coll := range colls {
			for j := 0; j+1 < len(r.Cases); j += 2 {
				a, p := r.Cases[j], r.Cases[j+1]
				if a.Query == fx.Query && a.N == fx.N && a.Collation == coll {
					s := fmt.Sprintf("%.3f", p.ModeledMs/a.ModeledMs)
					if a.RealMedianMs > 0 {
						s += fmt.Sprintf(" (%.2f)", p.RealMedianMs/a.RealMedianMs)
					}
					fmt.Fprintf(tw, "\t%s", s)
				}
			}
		}
		fmt.Fprintln(tw, "\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	held := "held"
	if !r.Held {
		held = "did NOT hold"
	}
	fmt.Fprintf(&b, "\nexpectation %s: %s\n", held, r.Verdict)
	if r.RealSpread > 0 {
		fmt.Fprintf(&b, "real mode: the largest spread of a case's timings, (max-min)/median, is %.0f%%; the modeled times are counted, and repeat exactly\n", 100*r.RealSpread)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
