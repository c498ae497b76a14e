package engine

import "testing"

// BenchmarkSort sorts 20,000 rows by a VARCHAR(200) of short values in
// each key format, and reports the comparisons and key bytes a sort.
func BenchmarkSort(b *testing.B) {
	noVerifyRedo(b)
	_, tb := sortTable(b, Clustered, 20000, 200, 1, randWord)
	for _, f := range []KeyFormat{KeyFormatFixed, KeyFormatPacked} {
		b.Run(f.String(), func(b *testing.B) {
			b.ReportAllocs()
			var m Meter
			for b.Loop() {
				tx := tb.db.Begin(&m)
				s, err := tx.Sort(tb, SortOptions{OrderBy: []SortKey{{Column: "v", Collation: "utf8mb4_general_ci"}}, KeyFormat: f})
				if err != nil {
					b.Fatal(err)
				}
				for s.Next() {
				}
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				_ = tx.Commit()
			}
			b.ReportMetric(float64(m.Compares())/float64(b.N), "compares/op")
			b.ReportMetric(float64(m.SortKeyBytes)/float64(b.N), "keybytes/op")
		})
	}
}
