package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim/experiment"
)

// sortKeysCmd is `enginelab experiment sort-keys [flags]`: not a TPC-C
// comparison, so it has flags of its own.
func sortKeysCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("enginelab experiment "+experiment.SortKeysName, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	var c experiment.SortKeysConfig
	var ns, colls, org string
	var buf size
	var asJSON, quiet bool
	var htmlFile string
	fs.IntVar(&c.Rows, "rows", 100000, "rows in the table")
	fs.StringVar(&ns, "n", "10,50,100,200,500,1000", "the VARCHAR(N) lengths, comma-separated")
	fs.StringVar(&colls, "collations", "latin1_swedish_ci,utf8mb4_general_ci,utf8mb4_unicode_ci", "collations, comma-separated: "+strings.Join(engine.Collations(), ", "))
	fs.IntVar(&c.Repeats, "repeats", 5, "real-mode timings of each case (-1: none)")
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of the data")
	fs.Var(&buf, "sort-buffer-size", "sort_buffer_size, such as 256KiB (0: 2 MiB)")
	fs.StringVar(&org, "org", "clustered", "the table's organization: clustered, heap-rowptr, heap-pk")
	fs.StringVar(&c.Hardware.CPU, "cpu", "", "CPU cost profile (default: default)")
	fs.StringVar(&c.Hardware.Store, "store-device", "", "the store's device, where the temporary files are (default: nvme-ssd)")
	fs.StringVar(&c.Hardware.ProfilesFile, "profiles", "", "a JSON `file` of profiles (README, \"Simulated mode\")")
	fs.BoolVar(&asJSON, "json", false, "print the result as one JSON document")
	fs.BoolVar(&quiet, "quiet", false, "no progress lines")
	fs.StringVar(&htmlFile, "html", "", "also write the result as one self-contained HTML `file` with charts (no script or font fetched; printable)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "usage: enginelab experiment %s [flags]\n\n%s\nexpects: %s\n\nflags:\n", experiment.SortKeysName, experiment.SortKeysQuestion, experiment.SortKeysExpect)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintf(stderr, "run 'enginelab experiment %s --help' for the flags\n", experiment.SortKeysName)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "enginelab experiment: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if c.Rows < 1 {
		fmt.Fprintf(stderr, "enginelab experiment %s: --rows %d: want at least 1\n", experiment.SortKeysName, c.Rows)
		return 2
	}
	for _, s := range strings.Split(ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			fmt.Fprintf(stderr, "enginelab experiment %s: -n: %q is not a number\n", experiment.SortKeysName, s)
			return 2
		}
		c.Ns = append(c.Ns, n)
	}
	for _, s := range strings.Split(colls, ",") {
		c.Collations = append(c.Collations, strings.TrimSpace(s))
	}
	o, err := engine.ParseOrg(org)
	if err != nil {
		fmt.Fprintf(stderr, "enginelab experiment %s: --org: %v\n", experiment.SortKeysName, err)
		return 2
	}
	c.Org, c.SortBufferSize = o, buf.n
	if err := c.Validate(); err != nil {
		fmt.Fprintf(stderr, "enginelab experiment %s: %v\n", experiment.SortKeysName, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	progress := experimentProgress(stderr, quiet)
	rep, err := experiment.SortKeys(ctx, c, progress)
	if err != nil {
		return experimentFailed(stderr, experiment.SortKeysName, err)
	}
	if code := writeExperiment(stdout, stderr, asJSON, rep); code != 0 || htmlFile == "" {
		return code
	}
	return writeHTML(stderr, htmlFile, sortKeysPage(rep))
}
