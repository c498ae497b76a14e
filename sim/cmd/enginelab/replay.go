package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/enginelab/enginelab/cache/tier"
	"github.com/enginelab/enginelab/sim/replay"
	"github.com/enginelab/enginelab/sim/report/html"
)

// sizeList is --sizes: byte counts with units, comma-separated (16MiB,64MiB).
type sizeList struct{ sizes []int64 }

func (l *sizeList) String() string {
	parts := make([]string, len(l.sizes))
	for i, n := range l.sizes {
		parts[i] = (&size{n}).String()
	}
	return strings.Join(parts, ",")
}

func (l *sizeList) Set(v string) error {
	var out []int64
	for _, f := range strings.Split(v, ",") {
		n, err := humanize.ParseBytes(strings.TrimSpace(f))
		if err != nil || n == 0 || n > 1<<50 {
			return errors.New("want sizes such as 16MiB,64MiB,1GiB, each more than 0")
		}
		if slices.Contains(out, int64(n)) {
			return fmt.Errorf("size %s given twice", f)
		}
		out = append(out, int64(n))
	}
	l.sizes = out
	return nil
}

// policyList is --policies: names from replay.Policies, comma-separated.
type policyList struct{ names []string }

func (l *policyList) String() string { return strings.Join(l.names, ",") }

func (l *policyList) Set(v string) error {
	var out []string
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		if !slices.Contains(replay.Policies, p) {
			return fmt.Errorf("policy %q: want some of %s", p, strings.Join(replay.Policies, ","))
		}
		if slices.Contains(out, p) {
			return fmt.Errorf("policy %q given twice", p)
		}
		out = append(out, p)
	}
	l.names = out
	return nil
}

const tierReplayAbout = `enginelab tier-replay reads a page trace (the calls that reached a run's
remote tier, recorded by tier.TraceTier: a pool's misses and pushes) and
replays it into a fresh tier of each policy at each size, with the pool's
rules for the trace's mode, and prints the hit ratios. lru and slru are the
engine's own tiers; ristretto is not deterministic and is run several times
(mean, min and max); belady is the clairvoyant cache, the best any policy
can do with the same pushes.`

// tierReplayCmd is "enginelab tier-replay [flags] TRACE". It returns the
// exit status: 0 done, 1 the trace could not be read or replayed, 2 bad
// usage.
func tierReplayCmd(args []string, stdout, stderr io.Writer) int {
	const name = "enginelab tier-replay"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		sizes    sizeList
		policies = policyList{slices.Clone(replay.Policies)}
		runs     int
		asJSON   bool
		htmlFile string
	)
	fs.Var(&sizes, "sizes", "comma-separated `list` of tier budgets, such as 16MiB,64MiB,256MiB (default: 1/16, 1/8, 1/4, 1/2 and 1 times the trace's pages)")
	fs.Var(&policies, "policies", "comma-separated `list` of policies to replay, some of "+strings.Join(replay.Policies, ","))
	fs.IntVar(&runs, "ristretto-runs", 5, "`N` replays of ristretto at each size (it is not deterministic): at least 1")
	fs.BoolVar(&asJSON, "json", false, "print the report as one JSON document")
	fs.StringVar(&htmlFile, "html", "", "also write the hit ratios as one self-contained HTML `file` with a chart (no script or font fetched; printable)")
	// The flag package prints a bad flag's error; the whole usage is for
	// --help only.
	fs.Usage = func() {}
	help := func() {
		fmt.Fprintf(stdout, "usage: %s [flags] TRACE\n\n%s\n\nflags:\n", name, tierReplayAbout)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
	}

	// Flags may come before or after TRACE.
	var trace []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				help()
				return 0
			}
			fmt.Fprintf(stderr, "run '%s --help' for the flags and their values\n", name)
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		trace = append(trace, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch len(trace) {
	case 0:
		fmt.Fprintf(stderr, "%s: no TRACE given\nusage: %s [flags] TRACE\n", name, name)
		return 2
	case 1:
	default:
		fmt.Fprintf(stderr, "%s: unexpected argument %q: want one TRACE\n", name, trace[1])
		return 2
	}
	if runs < 1 {
		fmt.Fprintf(stderr, "%s: --ristretto-runs %d: want at least 1\n", name, runs)
		return 2
	}
	cfg := replay.Config{Sizes: sizes.sizes, Policies: policies.names, RistrettoRuns: runs}
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil { // before the trace is read: it may be large
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	}

	f, err := os.Open(trace[0])
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err) // the error names the path
		return 1
	}
	tr, err := tier.ReadTrace(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s: %v\n", name, trace[0], err)
		return 1
	}
	rep, err := replay.Run(tr, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s: %v\n", name, trace[0], err)
		if errors.Is(err, replay.ErrInvalidConfig) {
			return 2
		}
		return 1
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		err = rep.WriteTable(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	if htmlFile != "" {
		c, t := replayParts(rep)
		return writeHTML(stderr, htmlFile, &html.Page{Title: name + " " + trace[0], Intro: []string{tierReplayAbout},
			Charts: []html.LineChart{c}, Tables: []html.Table{t}})
	}
	return 0
}
