package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/engine"
)

// result is one run of the count.
type result struct {
	Org          string `json:"org"`
	CountRewrite bool   `json:"count_rewrite"`
	Count        int64  `json:"count"`
	IndexOnly    bool   `json:"index_only"`
	RowFetches   int64  `json:"row_fetches"`
	PageRequests int64  `json:"page_requests"`
	NodeVisits   int64  `json:"node_visits"`
}

// countCmd is "enginelab count": SELECT count(c_id) FROM customer WHERE
// (w, d, c_last) = ? through the (w, d, c_last, c_first) index, in the three
// table organizations, with and without rewriting count(c_id) as count(*).
func countCmd(args []string) int {
	fs := flag.NewFlagSet("enginelab count", flag.ContinueOnError)
	customers := fs.Int("customers", 3000, "customers in the district (1 to 100000)")
	matches := fs.Int("matches", 30, "customers sharing the counted last name (1 to -customers)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *customers < 1 || *customers > 100000 || *matches < 1 || *matches > *customers {
		fmt.Fprintf(os.Stderr, "enginelab: -customers %d, -matches %d: want 1 <= matches <= customers <= 100000\n", *customers, *matches)
		return 2
	}
	var results []result
	for _, rewrite := range []bool{false, true} {
		r, err := countRun(*customers, *matches, rewrite)
		if err != nil {
			fmt.Fprintln(os.Stderr, "enginelab:", err)
			return 1
		}
		results = append(results, r...)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(results); err != nil {
			fmt.Fprintln(os.Stderr, "enginelab:", err)
			return 1
		}
		return 0
	}
	fmt.Printf("count(c_id) of %d customers named BARBARBAR among %d, through (w, d, c_last, c_first)\n\n", *matches, *customers)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ORGANIZATION\tREWRITE\tCOUNT\tINDEX-ONLY\tROW FETCHES\tPAGE REQUESTS\tNODE VISITS")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%v\t%d\t%v\t%d\t%d\t%d\n", r.Org, r.CountRewrite, r.Count, r.IndexOnly, r.RowFetches, r.PageRequests, r.NodeVisits)
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "enginelab:", err)
		return 1
	}
	return 0
}

// countRun loads the customers into one in-memory database per rewrite setting
// and counts in each organization.
func countRun(customers, matches int, rewrite bool) ([]result, error) {
	db, err := engine.Open(&engine.Options{Options: cache.Options{PoolSize: 64 << 20}, CountRewrite: rewrite})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var out []result
	for _, org := range []engine.Org{engine.Clustered, engine.HeapRowPointer, engine.HeapPrimaryKey} {
		t, err := db.CreateTable(engine.Table{
			Name: "customer_" + org.String(),
			Columns: []engine.Column{
				{Name: "c_w_id", Type: engine.TypeInt},
				{Name: "c_d_id", Type: engine.TypeInt},
				{Name: "c_id", Type: engine.TypeInt},
				{Name: "c_first", Type: engine.TypeVarchar, Length: 16},
				{Name: "c_last", Type: engine.TypeVarchar, Length: 16},
				{Name: "c_data", Type: engine.TypeVarchar, Length: 500},
			},
			PrimaryKey: []string{"c_w_id", "c_d_id", "c_id"},
			Indexes:    []engine.Index{{Name: "idx_customer_name", Columns: []string{"c_w_id", "c_d_id", "c_last", "c_first"}}},
			Org:        org,
		})
		if err != nil {
			return nil, err
		}
		tx := db.Begin(nil)
		for id := 1; id <= customers; id++ {
			last := "BARBARBAR"
			if id > matches {
				last = fmt.Sprintf("NAME%06d", id)
			}
			row := engine.Row{engine.Int(1), engine.Int(1), engine.Int(int64(id)),
				engine.Str(fmt.Sprintf("FIRST%06d", id)), engine.Str(last), engine.Str("customer data")}
			if err := tx.Insert(t, row); err != nil {
				return nil, err
			}
			if id%100 == 0 { // load in small transactions, as a loader would
				if err := tx.Commit(); err != nil {
					return nil, err
				}
				tx = db.Begin(nil)
			}
		}
		if err := tx.Commit(); err != nil {
			return nil, err
		}

		var m engine.Meter
		tx = db.Begin(&m)
		key := []engine.Value{engine.Int(1), engine.Int(1), engine.Str("BARBARBAR")}
		n, path, err := tx.Count(t, engine.CountOptions{
			ScanOptions: engine.ScanOptions{Index: "idx_customer_name", Lower: key, Upper: key},
			Column:      "c_id",
		})
		if err != nil {
			return nil, err
		}
		if err := tx.Commit(); err != nil {
			return nil, err
		}
		out = append(out, result{Org: org.String(), CountRewrite: rewrite, Count: n, IndexOnly: path.IndexOnly,
			RowFetches: m.RowFetches, PageRequests: m.PageRequestsTotal(), NodeVisits: m.NodeVisitsTotal()})
	}
	return out, nil
}
