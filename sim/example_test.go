package sim_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim"
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
