package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/enginelab/enginelab/sim/experiment"
)

// ladderCmd is "enginelab experiment talk-ladder [flags]": the talk's
// steps in order for two client personalities, with the client and
// server cost layer on (experiment.Ladder).
func ladderCmd(args []string, stdout, stderr io.Writer) int {
	const name = "enginelab experiment " + experiment.LadderName
	x := newExperimentFlags(name, stderr)
	if err := x.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "usage: %s [flags]\n\n%s\n\nflags:\n", name, experiment.LadderQuestion)
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
	p, err := x.params()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := experiment.Ladder(ctx, p, experimentProgress(stderr, x.quiet))
	if err != nil {
		return experimentFailed(stderr, experiment.LadderName, err)
	}
	return writeExperiment(stdout, stderr, x.asJSON, res)
}
