package engine

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/enginelab/enginelab/cache"
)

// Benchmarks of the three access paths the issue names, per organization,
// on warm tables of benchRows rows (the pool holds every page):
//
//	go test -run '^$' -bench 'BenchmarkGet|BenchmarkInsert|BenchmarkUpdate|BenchmarkSecondaryLookup' \
//	    -benchtime 100000x -count 3 ./engine/
//
// Goal (issue 3): a primary-key get in a warm clustered table at most
// 1.5 µs and at most 2 allocations.

const benchRows = 100_000

// benchTable is customer-like: an integer primary key, a non-unique
// secondary index on k (a permutation of the ids, so one match each), and
// about 80 bytes of row.
func benchTable(name string, org Org) Table {
	return Table{
		Name: name,
		Columns: []Column{
			{Name: "id", Type: TypeInt},
			{Name: "k", Type: TypeInt},
			{Name: "name", Type: TypeVarchar, Length: 16},
			{Name: "balance", Type: TypeDecimal, Scale: 2},
			{Name: "data", Type: TypeVarchar, Length: 100},
		},
		PrimaryKey: []string{"id"},
		Indexes:    []Index{{Name: "ix_k", Columns: []string{"k"}}},
		Org:        org,
	}
}

// benchK maps an id to its k: a permutation of 0..benchRows-1 (7919 is
// prime and does not divide benchRows).
func benchK(id int64) int64 { return id * 7919 % benchRows }

func benchRow(id int64, data []byte) Row {
	return Row{Int(id), Int(benchK(id)), Str(fmt.Sprintf("NAME%08d", id)), Dec(id % 100000), Bytes(data)}
}

var benchData = []byte(strings.Repeat("x", 50))

var bench struct {
	once sync.Once
	db   *DB
	err  error
	// read[org] is a loaded table that only reads touch; write[org] one
	// that BenchmarkInsert grows.
	read, write map[Org]*TableHandle
}

// benchDB loads, once per process, a read table and a write table of
// benchRows rows in each organization, ids inserted in random order, in
// one database whose pool holds them all (and what inserts add).
func benchDB(b *testing.B) {
	b.Helper()
	bench.once.Do(func() {
		db, err := Open(&Options{Options: cache.Options{PoolSize: 1 << 30}})
		if err != nil {
			bench.err = err
			return
		}
		bench.db = db
		bench.read = make(map[Org]*TableHandle)
		bench.write = make(map[Org]*TableHandle)
		perm := rand.New(rand.NewPCG(1, 2)).Perm(benchRows)
		for _, org := range costOrgs {
			for _, kind := range []string{"read", "write"} {
				tb, err := db.CreateTable(benchTable(fmt.Sprintf("bench_%s_%s", kind, org), org))
				if err != nil {
					bench.err = err
					return
				}
				// Load in transactions of 100 rows, as a loader would:
				// one transaction holding every row's lock and undo
				// would leave the lock table huge and cold.
				tx := db.Begin(nil)
				for i, id := range perm {
					if err := tx.Insert(tb, benchRow(int64(id), benchData)); err != nil {
						bench.err = err
						return
					}
					if i%100 == 99 {
						if err := tx.Commit(); err != nil {
							bench.err = err
							return
						}
						tx = db.Begin(nil)
					}
				}
				if err := tx.Commit(); err != nil {
					bench.err = err
					return
				}
				map[string]map[Org]*TableHandle{"read": bench.read, "write": bench.write}[kind][org] = tb
			}
		}
	})
	if bench.err != nil {
		b.Fatal(bench.err)
	}
}

// benchOrgs runs f as a sub-benchmark per organization.
func benchOrgs(b *testing.B, f func(b *testing.B, org Org)) {
	for _, org := range costOrgs {
		b.Run("org="+org.String(), func(b *testing.B) { f(b, org) })
	}
}

// benchReport reports the meter's counts per operation.
func benchReport(b *testing.B, m *Meter) {
	n := float64(b.N)
	b.ReportMetric(float64(m.RowFetches)/n, "row-fetches/op")
	b.ReportMetric(float64(m.NodeVisitsTotal())/n, "nodes/op")
}

// BenchmarkGet gets random rows by primary key, ten to a transaction, at
// the database's default level (RepeatableRead: each get is a consistent
// read, no row lock). Its B/op is the transactions' handles (Begin
// allocates one, about 480 bytes, every ten gets); the gets themselves
// allocate nothing (TestGetAllocatesNothing).
func BenchmarkGet(b *testing.B) {
	noVerifyRedo(b)
	benchOrgs(b, func(b *testing.B, org Org) {
		benchDB(b)
		tb := bench.read[org]
		var m Meter
		r := rand.New(rand.NewPCG(3, 4))
		pk := make([]Value, 1)
		row := make(Row, len(tb.info.def.Columns))
		benchInTx(b, &m, 10, func(tx *Tx, _ int) {
			id := int64(r.IntN(benchRows))
			pk[0] = Int(id)
			got, found, err := tx.Get(tb, pk, row)
			if err != nil || !found || got[0].I != id {
				b.Fatalf("get %d: found %v, %v", id, found, err)
			}
		})
		benchReport(b, &m)
	})
}

// BenchmarkInsert inserts rows at random keys into a table that starts at
// benchRows rows and keeps what earlier runs inserted.
func BenchmarkInsert(b *testing.B) {
	noVerifyRedo(b)
	next := make(map[Org]uint64)
	benchOrgs(b, func(b *testing.B, org Org) {
		benchDB(b)
		tb := bench.write[org]
		var m Meter
		row := benchRow(0, benchData)
		// Commit every 100 rows, as a loader does (a synced commit).
		benchInTx(b, &m, 100, func(tx *Tx, i int) {
			next[org]++
			// A bijection of the sequence number: random keys that never
			// repeat (and, with odds of 1 in 10^8, meet a loaded id).
			id := int64(benchMix(next[org]) >> 1)
			row[0], row[1] = Int(id), Int(int64(benchMix(^next[org])>>1))
			if err := tx.Insert(tb, row); err != nil {
				b.Fatalf("insert %d: %v", id, err)
			}
		})
		benchReport(b, &m)
		b.ReportMetric(float64(m.IndexEntriesWritten)/float64(b.N), "entries/op")
		b.ReportMetric(float64(m.LogBytes)/float64(b.N), "log-bytes/op")
	})
}

// parallelInsertSeq numbers BenchmarkInsertParallel's rows across its
// runs; they are 2^40 on, apart from BenchmarkInsert's sequence numbers.
var parallelInsertSeq atomic.Uint64

// BenchmarkInsertParallel inserts as BenchmarkInsert does into the
// clustered write table, from GOMAXPROCS goroutines at once, each with
// transactions of its own (a multi-threaded loader's shape). What its
// time per insert adds to BenchmarkInsert's on more than one core is what
// the goroutines share: the log's buffer and its end, the lock table, the
// pool's page table and the tree's upper pages.
func BenchmarkInsertParallel(b *testing.B) {
	noVerifyRedo(b)
	benchDB(b)
	tb := bench.write[Clustered]
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var m Meter
		row := benchRow(0, benchData)
		tx := bench.db.Begin(&m)
		for n := 1; pb.Next(); n++ {
			s := 1<<40 + parallelInsertSeq.Add(1)
			row[0], row[1] = Int(int64(benchMix(s)>>1)), Int(int64(benchMix(^s)>>1))
			if err := tx.Insert(tb, row); err != nil {
				b.Errorf("insert: %v", err)
				_ = tx.Rollback()
				return
			}
			if n%100 == 0 {
				if err := tx.Commit(); err != nil {
					b.Error(err)
					return
				}
				tx = bench.db.Begin(&m)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Error(err)
		}
	})
}

// BenchmarkUpdate updates a non-indexed column (balance) of random rows
// by primary key, ten to a transaction, in the write table (rows that
// BenchmarkInsert added are not touched): a row lock, a read of the row,
// its new image written where it is, and undo. In the clustered
// organization the write starts from the leaf the read found (one node,
// not a second descent), so nodes/op is the tree's height plus one.
func BenchmarkUpdate(b *testing.B) {
	noVerifyRedo(b)
	benchOrgs(b, func(b *testing.B, org Org) {
		benchDB(b)
		tb := bench.write[org]
		var m Meter
		r := rand.New(rand.NewPCG(7, 8))
		pk := make([]Value, 1)
		set := []Set{{Column: "balance"}}
		benchInTx(b, &m, 10, func(tx *Tx, i int) {
			pk[0] = Int(int64(r.IntN(benchRows)))
			set[0].Value = Dec(int64(i % 100000))
			if err := tx.Update(tb, pk, set); err != nil {
				b.Fatalf("update %d: %v", pk[0].I, err)
			}
		})
		benchReport(b, &m)
		b.ReportMetric(float64(m.LogBytes)/float64(b.N), "log-bytes/op")
		b.ReportMetric(float64(m.HeapPrunes)/float64(b.N), "prunes/op")
	})
}

// benchInTx runs op b.N times, timed, in transactions of every
// operations each on meter m (the last one committed inside the timer).
func benchInTx(b *testing.B, m *Meter, every int, op func(tx *Tx, i int)) {
	tx := bench.db.Begin(m)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		op(tx, i)
		if i%every == every-1 {
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
			tx = bench.db.Begin(m)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
}

// benchMix is splitmix64's finalizer, a bijection of uint64.
func benchMix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// BenchmarkSecondaryLookup finds a row by its secondary key k and reads a
// column the index does not hold: one row fetch per lookup, through the
// primary index (Clustered, HeapPrimaryKey) or straight to the heap
// (HeapRowPointer).
func BenchmarkSecondaryLookup(b *testing.B) {
	noVerifyRedo(b)
	benchOrgs(b, func(b *testing.B, org Org) {
		benchDB(b)
		tb := bench.read[org]
		var m Meter
		tx := bench.db.Begin(&m)
		r := rand.New(rand.NewPCG(5, 6))
		key := make([]Value, 1)
		o := ScanOptions{Index: "ix_k", Lower: key, Upper: key, Columns: []string{"id", "balance"}}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			k := int64(r.IntN(benchRows))
			key[0] = Int(k)
			cur, err := tx.Scan(tb, o)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for cur.Next() {
				n++
				if benchK(cur.Row()[0].I) != k {
					b.Fatalf("k %d: got row %v", k, cur.Row())
				}
			}
			if err := cur.Close(); err != nil || n != 1 {
				b.Fatalf("k %d: %d rows, %v", k, n, err)
			}
		}
		b.StopTimer()
		benchReport(b, &m)
	})
}

// BenchmarkCommit measures commit throughput: each transaction updates one
// row (its goroutine's own rows, so no lock waits) and commits, on a real
// directory, in both commit modes, from 1, 4 and 16 goroutines. It reports
// commits per log sync: group commit shows as more than one.
//
//	go test -run '^$' -bench BenchmarkCommit -benchtime 2000x -count 3 ./engine/
func BenchmarkCommit(b *testing.B) {
	noVerifyRedo(b)
	for _, mode := range []CommitMode{SyncCommit, NoSyncCommit} {
		for _, g := range []int{1, 4, 16} {
			b.Run(fmt.Sprintf("mode=%s/goroutines=%d", mode, g), func(b *testing.B) {
				db, err := Open(&Options{Dir: b.TempDir(), Options: cache.Options{PoolSize: 64 << 20}, Commit: mode})
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				tb, err := db.CreateTable(benchTable("commit", Clustered))
				if err != nil {
					b.Fatal(err)
				}
				const perG = 64
				tx := db.Begin(nil)
				for id := int64(0); id < int64(g*perG); id++ {
					if err := tx.Insert(tb, benchRow(id, benchData)); err != nil {
						b.Fatal(err)
					}
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
				before := db.LogStats()
				var mu sync.Mutex
				var total Meter
				b.ReportAllocs()
				b.ResetTimer()
				var wg sync.WaitGroup
				for w := 0; w < g; w++ {
					n := b.N / g
					if w < b.N%g {
						n++
					}
					wg.Add(1)
					go func(w, n int) {
						defer wg.Done()
						var m Meter
						for i := 0; i < n; i++ {
							tx := db.Begin(&m)
							id := int64(w*perG + i%perG)
							if err := tx.Update(tb, []Value{Int(id)}, []Set{{Column: "k", Value: Int(int64(i))}}); err != nil {
								b.Error(err)
								return
							}
							if err := tx.Commit(); err != nil {
								b.Error(err)
								return
							}
						}
						mu.Lock()
						total.Add(&m)
						mu.Unlock()
					}(w, n)
				}
				wg.Wait()
				b.StopTimer()
				after := db.LogStats()
				syncs := after.Syncs - before.Syncs
				if syncs > 0 {
					b.ReportMetric(float64(b.N)/float64(syncs), "commits/sync")
				}
				b.ReportMetric(float64(total.LogBytes)/float64(b.N), "log-bytes/op")
				b.ReportMetric(float64(total.LogRecords)/float64(b.N), "log-records/op")
			})
		}
	}
}
