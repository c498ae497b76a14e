package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/enginelab/enginelab/sim/experiment"
	"github.com/enginelab/enginelab/sim/report/html"
)

// sweepable are the experiment flags a sweep may vary.
var sweepable = []string{"warehouses", "scale", "terminals", "duration", "warmup", "seed", "pool", "remote-size", "io-capacity",
	"cores", "cpu", "store-device", "log-device", "network", "torn-pages", "org", "isolation", "early-lock-release"}

// sweepCmd is "enginelab experiment sweep --base NAME --vary FLAG=V1,V2,...
// [flags]": the experiment once per value, in simulated mode, as a table
// (and with --html, a line chart per side and their ratios).
func sweepCmd(args []string, stdout, stderr io.Writer) int {
	const name = "enginelab experiment sweep"
	x := newExperimentFlags(name, stderr)
	var base, vary string
	x.fs.StringVar(&base, "base", "", "the experiment to sweep (enginelab experiment list)")
	x.fs.StringVar(&vary, "vary", "", "the setting and its values: `FLAG=V1,V2,...`, one of the experiment's flags: "+strings.Join(sweepable, ", "))
	if err := x.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "usage: %s --base NAME --vary FLAG=V1,V2,... [flags]\n\nruns the experiment NAME once per value of FLAG (the pool size, the tier size, the terminals...) and prints each side's tpmC, its ratio to the first side's and the headline, per value.\n\nflags:\n", name)
			x.fs.SetOutput(stdout)
			x.fs.PrintDefaults()
			return 0
		}
		fmt.Fprintf(stderr, "run '%s --help' for the flags\n", name)
		return 2
	}
	if x.fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n", name, x.fs.Arg(0))
		return 2
	}
	e, err := experiment.Lookup(base)
	if base == "" {
		err = errors.New("--base is required")
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v (enginelab experiment list)\n", name, err)
		return 2
	}
	setting, values, err := parseVary(vary)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	}
	// Each value is the command line with the setting appended: the flag
	// package checks each value as it would on its own.
	rest := withoutFlags(args, "base", "vary")
	var params []experiment.Params
	for _, v := range values {
		side := newExperimentFlags(name, stderr)
		if err := side.fs.Parse(append(slices.Clone(rest), "--"+setting+"="+v)); err != nil {
			return 2
		}
		p, err := side.params()
		if err != nil {
			fmt.Fprintf(stderr, "%s: --vary %s=%s: %v\n", name, setting, v, err)
			return 2
		}
		params = append(params, p)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := experiment.Sweep(ctx, e, setting, values, params, experimentProgress(stderr, x.quiet))
	if err != nil {
		return experimentFailed(stderr, "sweep", err)
	}
	if code := writeExperiment(stdout, stderr, x.asJSON, res); code != 0 {
		return code
	}
	if x.html != "" {
		if code := writeHTML(stderr, x.html, sweepPage(res)); code != 0 {
			return code
		}
	}
	if !res.Held() {
		return 1
	}
	return 0
}

// parseVary splits --vary FLAG=V1,V2,... and checks the flag can vary.
func parseVary(spec string) (string, []string, error) {
	name, vals, ok := strings.Cut(spec, "=")
	name = strings.TrimLeft(name, "-")
	switch {
	case spec == "":
		return "", nil, fmt.Errorf("%w: --vary is required: FLAG=V1,V2,...", experiment.ErrInvalidConfig)
	case !slices.Contains(sweepable, name):
		return "", nil, fmt.Errorf("%w: --vary %s: not a setting a sweep varies; want one of %s", experiment.ErrInvalidConfig, spec, strings.Join(sweepable, ", "))
	case !ok || len(strings.Split(vals, ",")) < 2:
		return "", nil, fmt.Errorf("%w: --vary %s: want at least two values, as %s=V1,V2", experiment.ErrInvalidConfig, spec, name)
	}
	values := strings.Split(vals, ",")
	for i, v := range values {
		if slices.Contains(values[:i], v) {
			return "", nil, fmt.Errorf("%w: --vary %s: %s given twice", experiment.ErrInvalidConfig, spec, v)
		}
	}
	return name, values, nil
}

// withoutFlags is args without the named flags (as --name=v or --name v).
func withoutFlags(args []string, names ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := strings.TrimLeft(args[i], "-")
		name, _, hasValue := strings.Cut(a, "=")
		if strings.HasPrefix(args[i], "-") && slices.Contains(names, name) {
			if !hasValue {
				i++ // its value follows
			}
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// sweepX places a sweep's values on a chart's X axis: as numbers when
// every value is one (sizes in MiB, durations in seconds), else 1, 2, ...
// in order; it says which.
func sweepX(values []string) ([]float64, string) {
	parsers := []struct {
		unit  string
		parse func(string) (float64, bool)
	}{
		{"", func(v string) (float64, bool) { f, err := strconv.ParseFloat(v, 64); return f, err == nil }},
		{" (s)", func(v string) (float64, bool) { d, err := time.ParseDuration(v); return d.Seconds(), err == nil }},
		{" (MiB)", func(v string) (float64, bool) {
			n, err := humanize.ParseBytes(v)
			return float64(n) / (1 << 20), err == nil
		}},
	}
	for _, p := range parsers {
		xs := make([]float64, 0, len(values))
		for _, v := range values {
			f, ok := p.parse(v)
			if !ok {
				break
			}
			xs = append(xs, f)
		}
		if len(xs) == len(values) {
			return xs, p.unit
		}
	}
	xs := make([]float64, len(values))
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	return xs, " (the values in order: " + strings.Join(values, ", ") + ")"
}

// sweepPage is a sweep as a page: each side's tpmC over the setting, the
// sides' ratios to the first, the headline, and the table.
func sweepPage(s *experiment.SweepReport) *html.Page {
	xs, unit := sweepX(s.Values)
	xl := "--" + s.Setting + unit
	tpm := html.LineChart{Title: "tpmC by " + s.Setting + ", a line per side", XLabel: xl, YLabel: "tpmC"}
	ratio := html.LineChart{Title: "tpmC against " + first(s.Labels) + ", a line per side", XLabel: xl, YLabel: "ratio"}
	head := html.LineChart{Title: "headline: " + s.Points[0].Headline.Figure, XLabel: xl, YLabel: "value"}
	hb, hs := html.Series{Name: "base", X: xs}, html.Series{Name: "side", X: xs}
	for _, p := range s.Points {
		hb.Y = append(hb.Y, p.Headline.Base)
		hs.Y = append(hs.Y, p.Headline.Side)
	}
	head.Series = []html.Series{hb, hs}
	for k, l := range s.Labels {
		t := html.Series{Name: l, X: xs}
		r := html.Series{Name: l, X: xs}
		for i, p := range s.Points {
			t.Y = append(t.Y, p.TpmC[k])
			r.Y = append(r.Y, s.Ratio(i, k))
		}
		tpm.Series = append(tpm.Series, t)
		if k > 0 {
			ratio.Series = append(ratio.Series, r)
		}
	}
	t := html.Table{Title: "each value"}
	t.Head, t.Rows = s.Cells(true)
	return &html.Page{Title: "enginelab experiment sweep --base " + s.Base + " --vary " + s.Setting + "=" + strings.Join(s.Values, ","),
		Intro:  []string{"Question: " + s.Question, fmt.Sprintf("Simulated, seed %d: the same seed and settings give the same sweep.", s.Seed)},
		Charts: []html.LineChart{tpm, ratio, head}, Tables: []html.Table{t}}
}

func first(labels []string) string {
	if len(labels) == 0 {
		return "the first side"
	}
	return labels[0]
}
