package main

import (
	"fmt"
	"io"
	"os"
)

const usage = `usage: enginelab <command> [arguments]

commands:
  tpcc [flags]            load TPC-C into an in-memory database, run it, check it, report
  tpcc load --dir D       load a database into directory D
  tpcc run --dir D        run the terminals on the database in D
  tpcc check --dir D      check the consistency conditions of the database in D
  tpcc export --dir D --out O [--schema spec|go-tpc|benchmarksql]
                          write the tables of the database in D as CSV files into O, for the
                          engine's tables or a kit's, and print the statements that load them
  count [flags]           count(c_id) by last name in the three table organizations
  experiment list         the experiments: each answers one of the design's questions
  experiment NAME [flags] run one in simulated mode, sides side by side, and say why they differ
  experiment sweep --base NAME --vary FLAG=V1,V2,...
                          run one at each value of a setting: each side's tpmC and the ratios
  tier-replay [flags] TRACE
                          replay a page trace (tpcc --trace) into every tier policy at several sizes
  calibrate [flags]       fit simulated mode's CPU costs to real-mode runs on this machine
  bench [flags]           tpmC at 1, 4 and 16 warehouses and terminals, in memory, with the load's time:
                          this machine's speed as a table (or --json)

"enginelab <command> --help" lists a command's flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command with its arguments (after the program name); it
// returns the exit status: 0 done, 1 failed (or inconsistent), 2 bad usage.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "tpcc":
		return tpccCmd(args[1:], stdout, stderr)
	case "count":
		return countCmd(args[1:])
	case "experiment":
		return experimentCmd(args[1:], stdout, stderr)
	case "tier-replay":
		return tierReplayCmd(args[1:], stdout, stderr)
	case "calibrate":
		return calibrateCmd(args[1:], stdout, stderr)
	case "bench":
		return benchCmd(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "enginelab: unknown command %q: want tpcc, count, experiment, tier-replay, calibrate or bench\n\n%s", args[0], usage)
		return 2
	}
}
