package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"golang.org/x/term"

	"github.com/enginelab/enginelab/sim/calibrate"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/tpcc"
)

const calibrateAbout = `measures real-mode TPC-C runs of one terminal on this machine (in memory,
no sync at commit; the clustered organization under each client profile,
with and without the count rewrite and Stock-Level's missing lower bound,
then heap-rowptr), fits the CPU cost of each metered event by non-negative
least squares over the transactions' meters and times, prints the costs and
how well they explain each transaction type's times, and writes them as a
profile simulated mode loads (--out). It takes this machine's cores for
about 15 × --duration after two loads: run it on a quiet machine.`

// calibrateCmd is "enginelab calibrate": calibrate.Run, its table or
// JSON, and the profile written to --out. Exit status: 0 done, 1 failed,
// 2 bad usage (refused before any work).
func calibrateCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("enginelab calibrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	duration := fs.Duration("duration", calibrate.DefaultDuration, "length of each of the runs (the heap organization's are half as long)")
	seed := fs.Uint64("seed", 1, "seed of the loads and the terminals' inputs")
	scale := choice{"full", tpcc.ScaleNames()}
	fs.Var(&scale, "scale", "the population of the loads: full (the specification's) or small (a tenth: loads faster; the same events, on shallower trees)")
	out := fs.String("out", "", "write the fitted profile to this `file`, a profiles file for 'enginelab tpcc --mode sim --profiles'")
	name := fs.String("name", "calibrated", "the profile's name in --out (what --cpu takes)")
	asJSON := fs.Bool("json", false, "print the calibration as one JSON document")
	quiet := fs.Bool("quiet", false, "no progress lines")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "usage: enginelab calibrate [flags]\n\nenginelab calibrate %s\n\nflags:\n", calibrateAbout)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintf(stderr, "run 'enginelab calibrate --help' for the flags and their values\n")
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "enginelab calibrate: unexpected argument %q (flags come as --name=value)\n", fs.Arg(0))
		return 2
	}
	if *duration <= 0 {
		// Zero would take the default: refuse it, as the flag's help says.
		fmt.Fprintf(stderr, "enginelab calibrate: --duration %v: want more than zero\n", *duration)
		return 2
	}
	sc, err := tpcc.ParseScale(scale.value)
	if err != nil { // the flag accepted only the scales' names
		fmt.Fprintf(stderr, "enginelab calibrate: --scale: %v\n", err)
		return 2
	}
	cfg := calibrate.Config{Duration: *duration, Seed: *seed, Scale: sc}
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "enginelab calibrate: %v\n", err)
		return 2
	}
	if err := hw.CheckProfileName(*name); err != nil {
		fmt.Fprintf(stderr, "enginelab calibrate: --name: %v\n", err)
		return 2
	}
	if *out != "" {
		if err := checkOut(*out); err != nil {
			fmt.Fprintf(stderr, "enginelab calibrate: --out %s: %v\n", *out, err)
			return 2
		}
	}
	if file, ok := stderr.(*os.File); !*quiet && ok && term.IsTerminal(int(file.Fd())) {
		start := time.Now()
		cfg.Progress = func(s string) {
			fmt.Fprintf(stderr, "%6.1f s  %s\n", time.Since(start).Seconds(), s)
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cal, err := calibrate.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "enginelab calibrate: %v\n", err)
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(cal)
	} else {
		err = cal.WriteTable(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "enginelab calibrate: %v\n", err)
		return 1
	}
	if *out == "" {
		return 0
	}
	var b bytes.Buffer
	if err := cal.WriteProfile(&b, *name); err != nil {
		fmt.Fprintf(stderr, "enginelab calibrate: %v\n", err)
		return 1
	}
	if err := os.WriteFile(*out, b.Bytes(), 0o644); err != nil {
		fmt.Fprintf(stderr, "enginelab calibrate: %v\n", err)
		return 1
	}
	// With --json, stdout holds the document alone.
	note := stdout
	if *asJSON {
		note = stderr
	}
	fmt.Fprintf(note, "\nwrote CPU profile %q to %s; use it with:\n  enginelab tpcc --mode sim --profiles %s --cpu %s\n", *name, *out, *out, *name)
	return 0
}

// checkOut refuses an --out that cannot be written once the work is done:
// a directory, or a file in a directory that does not exist.
func checkOut(out string) error {
	if fi, err := os.Stat(out); err == nil && fi.IsDir() {
		return errors.New("is a directory")
	}
	fi, err := os.Stat(filepath.Dir(out))
	switch {
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", filepath.Dir(out))
	}
	return nil
}
