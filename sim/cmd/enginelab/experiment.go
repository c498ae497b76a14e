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
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim"
	"github.com/enginelab/enginelab/sim/experiment"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/tpcc"
)

// experimentCmd is `enginelab experiment list` and `enginelab experiment
// NAME [flags]`.
func experimentCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" || args[0] == "-help" || args[0] == "help" {
		fmt.Fprint(stdout, "usage: enginelab experiment list\n       enginelab experiment NAME [flags]   (NAME --help lists the flags)\n\n")
		listExperiments(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "list" {
		listExperiments(stdout)
		return 0
	}
	if args[0] == experiment.SortKeysName {
		return sortKeysCmd(args[1:], stdout, stderr)
	}
	if args[0] == "sweep" {
		return sweepCmd(args[1:], stdout, stderr)
	}
	if args[0] == experiment.LadderName {
		return ladderCmd(args[1:], stdout, stderr)
	}
	e, err := experiment.Lookup(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "enginelab experiment: %v (enginelab experiment list)\n", err)
		return 2
	}
	x := newExperimentFlags("enginelab experiment "+e.Name, stderr)
	if err := x.fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "usage: enginelab experiment %s [flags]\n\n%s\nexpects: %s\n\nflags:\n", e.Name, e.Question, e.Expect)
			x.fs.SetOutput(stdout)
			x.fs.PrintDefaults()
			return 0
		}
		fmt.Fprintf(stderr, "run 'enginelab experiment %s --help' for the flags\n", e.Name)
		return 2
	}
	if x.fs.NArg() > 0 {
		fmt.Fprintf(stderr, "enginelab experiment: unexpected argument %q\n", x.fs.Arg(0))
		return 2
	}
	p, err := x.params()
	if err != nil {
		fmt.Fprintf(stderr, "enginelab experiment: %v\n", err)
		return 2
	}
	asJSON, quiet, htmlFile := x.asJSON, x.quiet, x.html
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	progress := experimentProgress(stderr, quiet)
	res, err := experiment.Run(ctx, e, p, progress)
	if err != nil {
		return experimentFailed(stderr, e.Name, err)
	}
	if code := writeExperiment(stdout, stderr, asJSON, res); code != 0 {
		return code
	}
	if htmlFile != "" {
		if code := writeHTML(stderr, htmlFile, experimentPage(res)); code != 0 {
			return code
		}
	}
	for i, r := range res.Sides {
		if !r.Passed() {
			errs := r.Errors
			if r.Run != nil {
				errs = append(errs, r.Run.Errors...)
			}
			fmt.Fprintf(stderr, "enginelab experiment %s: side %q failed: %s\n", e.Name, res.Labels[i], strings.Join(errs, "; "))
			return 1
		}
	}
	return 0
}

func listExperiments(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "experiment\tquestion")
	for _, e := range experiment.All() {
		fmt.Fprintf(tw, "%s\t%s\n", e.Name, e.Question)
	}
	fmt.Fprintf(tw, "%s\t%s\n", experiment.SortKeysName, experiment.SortKeysQuestion)
	fmt.Fprintf(tw, "%s\t%s\n", experiment.LadderName, experiment.LadderQuestion)
	_ = tw.Flush()
}

// experimentProgress returns the progress callback of an experiment: a
// timed line on standard error when it is a terminal and --quiet is not
// given, else nil.
func experimentProgress(stderr io.Writer, quiet bool) func(string) {
	file, ok := stderr.(*os.File)
	if !ok || quiet || !term.IsTerminal(int(file.Fd())) {
		return nil
	}
	start := time.Now()
	return func(s string) { fmt.Fprintf(stderr, "[%5.1fs] %s\n", time.Since(start).Seconds(), s) }
}

// experimentFailed reports an experiment that could not run and returns
// its exit status: 2 for a configuration it refused, else 1.
func experimentFailed(stderr io.Writer, name string, err error) int {
	fmt.Fprintf(stderr, "enginelab experiment %s: %v\n", name, err)
	if errors.Is(err, sim.ErrInvalidConfig) || errors.Is(err, hw.ErrUnknownProfile) {
		return 2
	}
	return 1
}

// writeExperiment prints an experiment's result as one indented JSON
// document or as its table, and returns the exit status.
func writeExperiment(stdout, stderr io.Writer, asJSON bool, res interface{ WriteTable(io.Writer) error }) int {
	var err error
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(res)
	} else {
		err = res.WriteTable(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "enginelab experiment: %v\n", err)
		return 1
	}
	return 0
}

// experimentFlags are the flags of an experiment (and of a sweep, which
// adds its own).
type experimentFlags struct {
	fs                        *flag.FlagSet
	p                         experiment.Params
	pool, remote, memoryLimit size
	scale                     choice
	org, isolation, lockRel   choice
	asJSON, quiet             bool
	html                      string
}

func newExperimentFlags(name string, stderr io.Writer) *experimentFlags {
	x := &experimentFlags{fs: flag.NewFlagSet(name, flag.ContinueOnError), scale: choice{"full", tpcc.ScaleNames()},
		org:       choice{"", []string{"clustered", "heap-rowptr", "heap-pk"}},
		isolation: choice{"repeatable-read", []string{"read-committed", "repeatable-read", "serializable"}},
		lockRel:   choice{"", []string{"true", "false"}}}
	fs, p := x.fs, &x.p
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	fs.IntVar(&p.Warehouses, "warehouses", 0, "W (0: the experiment's, 1 unless it says)")
	fs.Var(&x.scale, "scale", "the population of every side's load: full (the specification's) or small (a tenth: 10,000 items, 300 customers a district; an experiment that sizes its pool against the data sizes it for the small scale)")
	fs.IntVar(&p.Terminals, "terminals", 0, "terminals (0: the experiment's)")
	fs.DurationVar(&p.Duration, "duration", 0, "measured virtual time (0: the experiment's)")
	fs.DurationVar(&p.Warmup, "warmup", 0, "virtual warm-up before it (0: the experiment's)")
	fs.Uint64Var(&p.Seed, "seed", 1, "seed of the load and of every side's run")
	fs.Var(&x.pool, "pool", "buffer pool size (0: the experiment's, per warehouse)")
	fs.Var(&x.remote, "remote-size", "remote tier size where the experiment has one (0: the experiment's, per warehouse)")
	fs.IntVar(&p.IOCapacity, "io-capacity", 0, "the page cleaner's base rate in page writes a second, innodb_io_capacity (0: the experiment's, else 200; at least 100)")
	fs.IntVar(&p.Hardware.Cores, "cores", 0, "modeled CPU cores (0: the experiment's)")
	fs.StringVar(&p.Hardware.CPU, "cpu", "", "CPU cost profile (default: the experiment's)")
	fs.StringVar(&p.Hardware.Store, "store-device", "", "the store's device (default: the experiment's)")
	fs.StringVar(&p.Hardware.Log, "log-device", "", "the log's device (default: the store's)")
	fs.StringVar(&p.Hardware.Network, "network", "", "the network to the remote tier (default: the experiment's)")
	fs.StringVar(&p.Hardware.ProfilesFile, "profiles", "", "a JSON `file` of profiles (README, \"Simulated mode\")")
	fs.Var(&p.TornPages, "torn-pages", "torn-page protection every side pays for (the store writes pages atomically, so it protects nothing here): none, full-page-writes (PostgreSQL's) or doublewrite (InnoDB's doublewrite buffer)")
	fs.Var(&x.org, "org", "the organization of every side that does not set its own (default: clustered)")
	fs.Var(&x.isolation, "isolation", "every side's isolation level: repeatable-read, serializable or read-committed (tpcc --isolation)")
	fs.Var(&x.lockRel, "early-lock-release", "every side's lock release: true (before the commit's log sync, InnoDB) or false (after it, PostgreSQL); empty: the organization's")
	fs.BoolVar(&x.asJSON, "json", false, "print the result as one JSON document")
	fs.BoolVar(&x.quiet, "quiet", false, "no progress lines")
	fs.StringVar(&x.html, "html", "", "also write the result as one self-contained HTML `file` with charts (no script or font fetched; printable)")
	fs.Var(&x.memoryLimit, "memory-limit", "the memory each side may use, such as 8GiB: sides whose estimate is larger are refused before the first loads (0: this process's cgroup limit, else the machine's available memory)")
	fs.BoolVar(&p.IgnoreMemoryLimit, "ignore-memory-limit", false, "run even if a side's memory estimate is larger than --memory-limit")
	fs.StringVar(&p.Dir, "dir", "", "keep each side's database on disk, in a directory of its own under this `directory` (NAME-side-NN, removed when the side is done), instead of in memory: the same simulated figures, and the store's pages take no memory")
	return x
}

// params checks the parsed flags and returns the experiment's parameters.
func (x *experimentFlags) params() (experiment.Params, error) {
	p := x.p
	for _, c := range []struct {
		name string
		bad  bool
	}{{"--warehouses", p.Warehouses < 0}, {"--terminals", p.Terminals < 0}, {"--duration", p.Duration < 0},
		{"--warmup", p.Warmup < 0}, {"--cores", p.Hardware.Cores < 0}, {"--io-capacity", p.IOCapacity < 0}} {
		if c.bad {
			return p, fmt.Errorf("%s must not be negative", c.name)
		}
	}
	p.PoolSize, p.RemoteSize, p.MemoryLimit = x.pool.n, x.remote.n, x.memoryLimit.n
	sc, err := tpcc.ParseScale(x.scale.value)
	if err != nil { // the flag accepted only the scales' names
		return p, fmt.Errorf("--scale: %w", err)
	}
	p.Scale = sc
	if x.org.value != "" {
		if p.Org, err = engine.ParseOrg(x.org.value); err != nil {
			return p, fmt.Errorf("--org: %w", err)
		}
	}
	if p.Isolation, err = engine.ParseIsolation(x.isolation.value); err != nil {
		return p, fmt.Errorf("--isolation: %w", err)
	}
	switch x.lockRel.value {
	case "true":
		p.EarlyLockRelease = engine.EarlyRelease
	case "false":
		p.EarlyLockRelease = engine.LateRelease
	}
	return p, nil
}
