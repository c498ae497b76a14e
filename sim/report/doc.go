// Package report holds what a TPC-C job measured, and prints it: Report
// and its sections, their table form (WriteTable) and their JSON form
// (encoding/json, with the field names the README documents under "The
// report"), and Comparison, several reports side by side.
//
// It only describes and renders. The job runner (package sim) fills a
// Report from its phases; the experiments (package experiment) compare
// and explain several. So report imports nothing of sim but the hardware
// models (hw.Machine, in the simulated section), and any program can read
// a report back from its JSON and print it again.
//
// # Core types
//
// A Report has a section per part of the job, each nil or empty when that
// part did not run: Config (every setting, by its flag name), Host (where
// it ran, and every wall-clock figure of a simulated job), Database (as
// loaded), Load, Run (a Type per transaction type: its count, mix,
// latency percentiles and LatencyDist (the histogram in bins of a tenth of
// a decade and a percentile curve, for charts), averages of the engine's
// meters per transaction, its Steps (each engine call's count, latency and
// node visits: mean, minimum, maximum, p99 and 5%-trimmed mean) and, in
// simulated mode, TimeShares, where its mean response time went; and the
// run's Timeline, tpmC interval by interval),
// Check (tpcc.CheckReport), Space (per index or heap), Log, Tier (the
// remote page tier), Background (work no transaction waited for) and Sim
// (the modeled machine and how busy it was). Notes say what a reader must
// know to compare the figures with another engine's (IsolationNote is in
// every report).
//
// A Comparison is one workload run under several values of one setting:
// Sides[i] ran with Setting = Values[i], and WriteTable prints each figure
// of each side with its ratio to the first side's (Table gives those
// cells), then each side's consistency verdict (Report.Verdict).
// WriteSteps prints a report's steps (the command's --steps); package
// report/html renders reports as an HTML page.
//
// # Usage
//
//	var rep report.Report
//	if err := json.Unmarshal(doc, &rep); err != nil { // a report written with --json
//		return err
//	}
//	_ = rep.WriteTable(os.Stdout)
//	fmt.Println(rep.Passed(), rep.TotalPages(), report.FormatBytes(int64(rep.TotalPages())*int64(rep.Database.PageSize)))
//
// # Caveats
//
// Run.Total and Type.Sum, the summed meters the explanations of
// experiments read, are not part of the JSON form: a report read back
// from JSON has the per-transaction averages (Type.PerTx) but not the
// sums. Reports are plain values: safe to share once their job has
// returned, not while a job still fills one.
package report
