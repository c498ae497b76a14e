// Package html renders what a TPC-C job or an experiment measured as one
// self-contained HTML document: its charts are inline SVG drawn by
// gonum.org/v1/plot, its style an inline stylesheet, and it loads nothing
// (no script, font, image or stylesheet from anywhere), so that it reads
// the same offline, mailed or printed.
//
// It only renders. A Page says what to show: one report (package
// report), or a comparison of several (its sides), and any further line
// charts and tables the caller has (an experiment's explanations, a
// sweep's curves, a replay's hit ratios). Every figure comes from the
// reports as they are, so the numbers in the page are the JSON report's.
//
// # The page
//
//	summary              tpmC, transactions/min, the consistency verdict, per side
//	side by side         (several sides) tpmC and each type's p90 as grouped bars, and
//	                     the comparison table: each figure with its ratio to the first side
//	tpmC over time       a line per side (the report's timeline)
//	per transaction type latency table, histogram and percentile curve (a line per side)
//	engine cost          per type and side, stacked: where page requests were served
//	                     (pool, tier, store), row and index work, redo bytes, lock waits
//	modeled time         (simulated) per type and side, the mean split by where it went
//	steps                per type and side: each engine call's count, latency and node visits
//	configuration        each setting, a column per side
//	further charts, tables
//	host, notes          where it ran, wall-clock figures; what to keep in mind
//
// Cells holding a report's figure carry data-figure (and data-side,
// data-type) attributes naming it, so that a test can read them back.
//
// # Usage
//
//	f, _ := os.Create("report.html")
//	err := html.Render(f, &html.Page{Title: "enginelab tpcc", Report: rep})
package html
