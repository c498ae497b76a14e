// Command enginelab runs enginelab's workloads in process, on an embedded
// database (in memory unless told a directory), and reports what the
// storage engine cost.
//
//	enginelab tpcc [flags]                  load and run TPC-C, check it, report
//	enginelab tpcc load|run|check [flags]   the same steps on a stored database (--dir)
//	enginelab tpcc export --dir D --out O   the tables of a stored database as CSV (--schema: a kit's)
//	enginelab count [flags]                 the count(c_id) case, in the three organizations
//	enginelab experiment list|NAME [flags]  the design's questions, answered in simulated mode
//	enginelab experiment sweep --base NAME --vary FLAG=V1,V2,...
//	                                        one of them at each value of a setting
//	enginelab tier-replay [flags] TRACE     a page trace replayed into every tier policy
//	enginelab calibrate [flags]             CPU costs fitted to real-mode runs here
//
// The first line is the one to start with: `go run ./sim/cmd/enginelab tpcc`
// loads one warehouse into memory, runs four terminals for 30 seconds in
// real mode, checks the consistency conditions and prints the report.
//
// Every command takes --help. Flags map one to one onto the job's
// configuration in package sim (sim.TPCCConfig and the experiment,
// calibration and replay configurations), which is validated before any
// work starts: a bad flag, a configuration that cannot fit in this
// machine's memory, or a damaged database directory ends the command with
// a message naming what was wrong and exit status 2 (bad input) or 1 (the
// work failed), never a stack trace.
//
// Reports print as aligned tables, or as JSON with --json; --html FILE
// also writes one self-contained HTML page with charts (package
// sim/report/html), and --steps adds the per-step table. Progress bars go
// to standard error when it is a terminal; a run's progress lines
// (go-tpc's [Current] and [Summary] lines, every --interval) go to
// standard output when it is a terminal, or whenever --interval is given
// (to standard error with --json).
package main
