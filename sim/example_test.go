package sim_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/tpcc"
)

// A TPC-C job from Go: what `enginelab tpcc --org heap-rowptr --profile
// sysbench --duration 10s` does. (Compiled, not run by go test: a load
// takes seconds.)
func ExampleTPCC() {
	rep, err := sim.TPCC(context.Background(), sim.TPCCConfig{
		Phases:     sim.Phases{Load: true, Run: true, Check: true},
		Warehouses: 1, Terminals: 4, Duration: 10 * time.Second, Seed: 1,
		Org: engine.HeapRowPointer, Profile: tpcc.Sysbench,
	}, sim.Hooks{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("tpmC %.0f, consistent %v\n", rep.Run.TpmC, rep.Check.Passed())
	_ = rep.WriteTable(os.Stdout)
}

// The same job in simulated mode, on a 2009 disk with a fifth of the data
// in the buffer pool and a segmented-LRU tier behind it over gigabit
// Ethernet: `enginelab tpcc --mode sim --pool 19MiB --store-device
// disk-2009 --remote slru --network gigabit`. (Compiled, not run.)
func ExampleTPCC_simulated() {
	rep, err := sim.TPCC(context.Background(), sim.TPCCConfig{
		Phases:     sim.Phases{Load: true, Run: true},
		Mode:       sim.ModeSim,
		Hardware:   hw.Spec{Store: "disk-2009", Network: "gigabit"},
		Warehouses: 1, Terminals: 4, Duration: 10 * time.Minute, Seed: 1,
		PoolSize: 19 << 20, Remote: sim.RemoteSpec{Backend: "slru"}, RemoteSize: 38 << 20,
	}, sim.Hooks{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range rep.Run.Types {
		fmt.Printf("%s: %.1f ms, %.0f%% store, %.0f%% lock wait\n", t.Type, t.Time.MeanMs, t.Time.Store, t.Time.LockWait)
	}
}
