package sim

import (
	"context"
	"testing"
	"time"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/sim/sched"
	"github.com/enginelab/enginelab/tpcc"
)

// benchDB is one loaded W = 1 database per mode, kept across the
// benchmark's calls (a load takes seconds).
type benchDB struct {
	db     *engine.DB
	sched  *sched.Scheduler
	loaded tpcc.Loaded
}

var benchDBs = map[Mode]*benchDB{}

func loadedFor(b *testing.B, mode Mode) *benchDB {
	if d := benchDBs[mode]; d != nil {
		return d
	}
	b.StopTimer()
	defer b.StartTimer()
	o := &engine.Options{Options: cache.Options{PoolSize: DefaultPoolSize(1), ReadAhead: true}, Commit: engine.NoSyncCommit, LogSize: DefaultLogSize(1)}
	d := &benchDB{}
	if mode == ModeSim {
		machine, err := hw.Spec{}.Resolve()
		if err != nil {
			b.Fatal(err)
		}
		d.sched = sched.New(machine, 16384, false)
		d.sched.Install(o)
	}
	db, err := engine.Open(o)
	if err != nil {
		b.Fatal(err)
	}
	if d.sched != nil {
		d.sched.Attach(db)
	}
	if _, err := tpcc.Load(context.Background(), db, tpcc.LoadConfig{Warehouses: 1, Seed: 1, Workers: 1}); err != nil {
		b.Fatal(err)
	}
	if d.loaded, err = tpcc.ReadLoaded(db); err != nil {
		b.Fatal(err)
	}
	d.db = db
	benchDBs[mode] = d
	return d
}

// One terminal's transactions, in real mode (a goroutine, wall time) and
// in simulated mode (a coroutine, every call priced): the wall-clock cost
// of simulating. The goal: simulated at least half as fast.
//
//	go test -run '^$' -bench BenchmarkOneTerminal -benchtime 20000x -count 5 ./sim/
func BenchmarkOneTerminal(b *testing.B) {
	for _, mode := range []Mode{ModeReal, ModeSim} {
		b.Run(string(mode), func(b *testing.B) {
			d := loadedFor(b, mode)
			rc := tpcc.RunConfig{Warehouses: 1, Terminals: 1, Duration: 1000 * time.Hour, Seed: uint64(b.N),
				LoadConstants: d.loaded.Constants, Transactions: b.N}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			var stats *tpcc.RunReport
			var err error
			if d.sched == nil {
				stats, err = tpcc.Run(context.Background(), d.db, rc)
			} else {
				rc.Env = d.sched
				var terms []*tpcc.Terminal
				if terms, err = tpcc.NewTerminals(d.db, rc); err == nil {
					stats, err = tpcc.Collect(context.Background(), terms, d.sched.RunTPCC(context.Background(), terms))
				}
			}
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(stats.Results.Total())/time.Since(start).Seconds(), "tx/s")
		})
	}
}
