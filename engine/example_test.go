package engine_test

import (
	"fmt"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/engine"
)

// The talk's case: SELECT count(c_id) FROM customer WHERE (w, d, last) = ?
// through the (w, d, last, first) index. When secondary entries carry the
// primary key (Clustered, HeapPrimaryKey) the count reads only the index;
// when they carry row pointers (HeapRowPointer), every match fetches its row
// to read c_id. Rewriting count(c_id) as count(*), since c_id is NOT NULL,
// removes the fetches everywhere.
func Example() {
	for _, rewrite := range []bool{false, true} {
		db, _ := engine.Open(&engine.Options{Options: cache.Options{PoolSize: 8 << 20}, CountRewrite: rewrite})
		for _, org := range []engine.Org{engine.Clustered, engine.HeapRowPointer, engine.HeapPrimaryKey} {
			t, _ := db.CreateTable(engine.Table{
				Name: "customer_" + org.String(),
				Columns: []engine.Column{
					{Name: "c_w_id", Type: engine.TypeInt},
					{Name: "c_d_id", Type: engine.TypeInt},
					{Name: "c_id", Type: engine.TypeInt},
					{Name: "c_first", Type: engine.TypeVarchar, Length: 16},
					{Name: "c_last", Type: engine.TypeVarchar, Length: 16},
				},
				PrimaryKey: []string{"c_w_id", "c_d_id", "c_id"},
				Indexes:    []engine.Index{{Name: "idx_customer_name", Columns: []string{"c_w_id", "c_d_id", "c_last", "c_first"}}},
				Org:        org,
			})
			tx := db.Begin(nil)
			for id := int64(1); id <= 100; id++ {
				last := "BARBARBAR"
				if id > 30 {
					last = fmt.Sprintf("NAME%03d", id)
				}
				_ = tx.Insert(t, engine.Row{engine.Int(1), engine.Int(1), engine.Int(id),
					engine.Str(fmt.Sprintf("F%03d", id)), engine.Str(last)})
			}
			_ = tx.Commit()

			var m engine.Meter
			tx = db.Begin(&m)
			key := []engine.Value{engine.Int(1), engine.Int(1), engine.Str("BARBARBAR")}
			n, path, _ := tx.Count(t, engine.CountOptions{
				ScanOptions: engine.ScanOptions{Index: "idx_customer_name", Lower: key, Upper: key},
				Column:      "c_id",
			})
			_ = tx.Commit()
			fmt.Printf("rewrite=%-5v %-12s count=%d index-only=%-5v row fetches=%d\n",
				rewrite, org, n, path.IndexOnly, m.RowFetches)
		}
		_ = db.Close()
	}
	// Output:
	// rewrite=false clustered    count=30 index-only=true  row fetches=0
	// rewrite=false heap-rowptr  count=30 index-only=false row fetches=30
	// rewrite=false heap-pk      count=30 index-only=true  row fetches=0
	// rewrite=true  clustered    count=30 index-only=true  row fetches=0
	// rewrite=true  heap-rowptr  count=30 index-only=true  row fetches=0
	// rewrite=true  heap-pk      count=30 index-only=true  row fetches=0
}
