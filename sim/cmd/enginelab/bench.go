package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim"
)

// benchCell is one warehouse count and terminal count of `enginelab
// bench`: its runs, each on a database loaded for it.
type benchCell struct {
	Warehouses int        `json:"warehouses"`
	Terminals  int        `json:"terminals"`
	Runs       []benchRun `json:"runs"`
	// BestTpmC and MedianTpmC are over the runs; LoadSeconds and
	// LoadRowsPerSecond are the fastest load's.
	BestTpmC          float64 `json:"best_tpmc"`
	MedianTpmC        float64 `json:"median_tpmc"`
	LoadSeconds       float64 `json:"load_s"`
	LoadRowsPerSecond float64 `json:"load_rows_per_s"`
}

type benchRun struct {
	TpmC              float64 `json:"tpmc"`
	TxPerMinute       float64 `json:"tx_per_min"`
	LoadSeconds       float64 `json:"load_s"`
	LoadRowsPerSecond float64 `json:"load_rows_per_s"`
	// CoresBusy is the process's CPU time over the run's wall time
	// (report.Host.RunCoresBusy; 0 where it cannot be read).
	CoresBusy float64 `json:"cores_busy,omitempty"`
}

// benchResult is what `enginelab bench --json` prints.
type benchResult struct {
	// Settings are the flags every run had, as `enginelab tpcc` takes
	// them; Version, GoVersion, CPUs and CPUModel say what ran where,
	// Started when (UTC).
	Settings  []string    `json:"settings"`
	Version   string      `json:"version"`
	GoVersion string      `json:"go_version"`
	CPUs      int         `json:"cpus"`
	CPUModel  string      `json:"cpu_model"`
	Started   string      `json:"started"`
	Cells     []benchCell `json:"cells"`
}

// benchSettings are the flags bench gives every run before the user's
// (which come later and so win): the measured interval, no consistency
// check, no progress bar, and commits that do not wait for the log's
// sync (the configuration the project's speed targets name; in memory
// a sync costs next to nothing, so the tpmC is the same either way).
func benchSettings(d time.Duration) []string {
	return []string{"--duration=" + d.String(), "--check=false", "--quiet", "--sync-commit=false"}
}

// benchOwnFlags are the flags bench sets itself, refused after --, and why.
var benchOwnFlags = map[string]string{
	"warehouses": "use bench's own --warehouses",
	"terminals":  "use bench's own --terminals",
	"duration":   "use bench's own --duration",
	"json":       "use bench's own --json",
	"mode":       "bench measures real mode",
	"dir":        "bench measures an in-memory database, loaded anew for each run",
	"compare":    "bench runs one setting at a time; run it once per setting",
}

// cpuModel is the processor's name as the system reports it (Linux's
// /proc/cpuinfo "model name"), or "".
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

const benchUsage = `usage: enginelab bench [flags] [-- tpcc flags]

enginelab bench measures this machine: for each warehouse count and each
terminal count, it loads a new in-memory database and runs the README's first
command on it (real mode, commit not synced, repeatable read, the clustered
organization) with --check=false, and prints tpmC and the load's time as a
table, or as JSON with --json. Flags after -- go to every run as they would
to enginelab tpcc (--org heap-rowptr, --isolation serializable, ...).

flags:
`

// benchCmd is `enginelab bench`.
func benchCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("enginelab bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	whs := fs.String("warehouses", "1,4,16", "warehouse counts, comma-separated")
	terms := fs.String("terminals", "1,4,16", "terminal counts, comma-separated")
	duration := fs.Duration("duration", 10*time.Second, "measured interval of each run")
	runs := fs.Int("runs", 1, "runs of each cell, each on a new load: the table shows the best tpmC (and the median with more than one)")
	asJSON := fs.Bool("json", false, "print the result as one JSON document")
	quiet := fs.Bool("quiet", false, "no progress lines")
	fs.Usage = func() {}
	own, extra := args, []string(nil)
	if i := slices.Index(args, "--"); i >= 0 {
		own, extra = args[:i], args[i+1:]
	}
	if err := fs.Parse(own); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, benchUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintln(stderr, "run 'enginelab bench --help' for the flags")
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "enginelab bench: "+format+"\n", a...)
		return 2
	}
	if fs.NArg() > 0 {
		return fail("unexpected argument %q (flags for the runs come after --)", fs.Arg(0))
	}
	ws, err := positiveList("--warehouses", *whs)
	if err != nil {
		return fail("%v", err)
	}
	ts, err := positiveList("--terminals", *terms)
	if err != nil {
		return fail("%v", err)
	}
	if *runs < 1 {
		return fail("--runs %d: want at least 1", *runs)
	}
	if *duration <= 0 {
		return fail("--duration %v: want a positive duration", *duration)
	}
	for _, a := range extra {
		n, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if why, own := benchOwnFlags[n]; own && strings.HasPrefix(a, "-") {
			return fail("%s after --: bench sets it (%s)", a, why)
		}
	}

	// Every configuration is built and checked before the first load.
	settings := append(benchSettings(*duration), extra...)
	type job struct {
		w, t int
		cfg  sim.TPCCConfig
	}
	var jobs []job
	for _, w := range ws {
		for _, t := range ts {
			f := newTPCCFlags("", stderr)
			cell := append([]string{"--warehouses=" + strconv.Itoa(w), "--terminals=" + strconv.Itoa(t)}, settings...)
			if err := f.fs.Parse(cell); err != nil {
				return 2
			}
			cfg, err := f.config()
			if err == nil {
				err = cfg.CheckMemory()
			}
			if err != nil {
				if errors.Is(err, engine.ErrInsufficientMemory) {
					return fail("W%d T%d: %v (bench loads every database in memory: leave this warehouse count out of --warehouses)", w, t, err)
				}
				return fail("W%d T%d: %v", w, t, err)
			}
			jobs = append(jobs, job{w, t, cfg})
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res := benchResult{Settings: settings, GoVersion: runtime.Version(), CPUs: runtime.GOMAXPROCS(0),
		CPUModel: cpuModel(), Started: time.Now().UTC().Format(time.RFC3339)}
	start := time.Now()
	for i, j := range jobs {
		cell := benchCell{Warehouses: j.w, Terminals: j.t}
		for r := range *runs {
			if !*quiet {
				fmt.Fprintf(stderr, "bench: %d/%d: %d warehouse(s), %d terminal(s), run %d of %d (%s so far)\n",
					i+1, len(jobs), j.w, j.t, r+1, *runs, time.Since(start).Round(time.Second))
			}
			rep, err := sim.TPCC(ctx, j.cfg, sim.Hooks{})
			if err == nil && (rep == nil || rep.Run == nil) {
				err = errors.New("the run reported nothing")
			}
			if err != nil {
				fmt.Fprintf(stderr, "enginelab bench: W%d T%d: %v\n", j.w, j.t, err)
				return 1
			}
			res.Version = rep.Version
			cell.Runs = append(cell.Runs, benchRun{TpmC: rep.Run.TpmC, TxPerMinute: rep.Run.TxPerMinute,
				LoadSeconds: rep.Host.LoadSeconds, LoadRowsPerSecond: rep.Host.LoadRowsPerSecond, CoresBusy: rep.Host.RunCoresBusy})
		}
		cell.summarize()
		res.Cells = append(res.Cells, cell)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			fmt.Fprintf(stderr, "enginelab bench: %v\n", err)
			return 1
		}
		return 0
	}
	if err := res.writeTable(stdout, ws, ts, *runs); err != nil {
		fmt.Fprintf(stderr, "enginelab bench: %v\n", err)
		return 1
	}
	return 0
}

// summarize fills the cell's best and median tpmC and its fastest load.
func (c *benchCell) summarize() {
	tpm := make([]float64, len(c.Runs))
	for i, r := range c.Runs {
		tpm[i] = r.TpmC
		if c.LoadSeconds == 0 || r.LoadSeconds < c.LoadSeconds {
			c.LoadSeconds, c.LoadRowsPerSecond = r.LoadSeconds, r.LoadRowsPerSecond
		}
	}
	slices.Sort(tpm)
	c.BestTpmC = tpm[len(tpm)-1]
	if n := len(tpm); n%2 == 1 {
		c.MedianTpmC = tpm[n/2]
	} else {
		c.MedianTpmC = (tpm[n/2-1] + tpm[n/2]) / 2
	}
}

// writeTable prints one row per warehouse count: the load (the fastest
// of its cells'), then the tpmC at each terminal count.
func (r *benchResult) writeTable(w io.Writer, ws, ts []int, runs int) error {
	cpu := r.CPUModel
	if cpu == "" {
		cpu = "processor unknown"
	}
	fmt.Fprintf(w, "enginelab bench: real mode, in memory, %d CPUs (%s), %s, started %s; every run: %s\n",
		r.CPUs, cpu, r.GoVersion, r.Started, strings.Join(r.Settings, " "))
	what := "tpmC"
	if runs > 1 {
		what = fmt.Sprintf("tpmC, best of %d (median)", runs)
	}
	fmt.Fprintf(w, "each cell a new load; %s\n\n", what)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "warehouses\tload s\tload rows/s\t")
	for _, t := range ts {
		fmt.Fprintf(tw, "T%d\t", t)
	}
	fmt.Fprintln(tw)
	for _, wh := range ws {
		var row []benchCell
		for _, c := range r.Cells {
			if c.Warehouses == wh {
				row = append(row, c)
			}
		}
		load := row[0]
		for _, c := range row {
			if c.LoadSeconds < load.LoadSeconds {
				load = c
			}
		}
		fmt.Fprintf(tw, "%d\t%.1f\t%s\t", wh, load.LoadSeconds, thousands(load.LoadRowsPerSecond))
		for _, c := range row {
			if runs > 1 {
				fmt.Fprintf(tw, "%s (%s)\t", thousands(c.BestTpmC), thousands(c.MedianTpmC))
			} else {
				fmt.Fprintf(tw, "%s\t", thousands(c.BestTpmC))
			}
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// positiveList parses a comma-separated list of positive integers.
func positiveList(name, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s %q: want positive whole numbers separated by commas", name, s)
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("%s %q: %d twice", name, s, n)
		}
		out = append(out, n)
	}
	return out, nil
}

// thousands prints v rounded, with commas between thousands.
func thousands(v float64) string {
	s := strconv.FormatInt(int64(v+0.5), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
