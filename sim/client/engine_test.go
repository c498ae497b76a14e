package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim/client"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/sim/sched"
	"github.com/enginelab/enginelab/tpcc"
)

// run loads a small warehouse and runs one terminal for n transactions
// under the scheduler, with the cost layer of p (nil: off). It returns
// the results, the virtual time and the client model.
func run(t *testing.T, p *client.Personality, s client.Settings, n int) (*tpcc.RunReport, time.Duration, *client.Terminal) {
	return runPriced(t, p, s, n, &client.DefaultParams, "")
}

// free is a network that costs nothing.
const free = "free"

func runPriced(t *testing.T, p *client.Personality, s client.Settings, n int, params *client.Params, network string) (*tpcc.RunReport, time.Duration, *client.Terminal) {
	t.Helper()
	ctx := context.Background()
	m, err := hw.Spec{}.Resolve()
	require.NoError(t, err)
	net := m.Network
	if network == free {
		net = hw.Network{Bandwidth: 1e15}
	}
	sc := sched.New(m, 16384, false)
	var term *client.Terminal
	if p != nil {
		sc.SetClients(func(int) sched.ClientTerminal {
			term = client.NewTerminal(*p, s, client.BenchmarkSQL, false, params, net)
			return term
		})
	}
	opts := &engine.Options{Options: cache.Options{PoolSize: 64 << 20}}
	sc.Install(opts)
	db, err := engine.Open(opts)
	require.NoError(t, err)
	defer db.Close()
	sc.Attach(db)
	_, err = tpcc.Load(ctx, db, tpcc.LoadConfig{Warehouses: 1, Scale: tpcc.SmallScale, Seed: 1, Workers: 1})
	require.NoError(t, err)
	loaded, err := tpcc.ReadLoaded(db)
	require.NoError(t, err)
	terms, err := tpcc.NewTerminals(db, tpcc.RunConfig{Warehouses: 1, Scale: tpcc.SmallScale, Terminals: 1, Duration: time.Hour,
		Seed: 1, LoadConstants: loaded.Constants, Env: sc, Profile: tpcc.BenchmarkSQL, Transactions: n})
	require.NoError(t, err)
	from := sc.Elapsed()
	stats, err := tpcc.Collect(ctx, terms, sc.RunTPCC(ctx, terms))
	require.NoError(t, err)
	return stats, sc.Elapsed() - from, term
}

// The engine's work is the same with the cost layer on and off. A layer
// that costs nothing changes nothing: the same meters and the same virtual
// time, though it counted every statement. A priced layer runs the same
// transactions with the same foreground work (rows, index entries, locks);
// the pages they touch may differ, since the purge actor runs every
// sched.PurgeInterval of virtual time and the run is longer.
func TestEngineUnchanged(t *testing.T) {
	skipUnderRace(t)
	const n = 300
	off, tOff, _ := run(t, nil, client.Settings{}, n)
	p, err := client.Lookup("mysql-jdbc")
	require.NoError(t, err)
	zero, tZero, termZero := runPriced(t, &p, client.Settings{}, n, &client.Params{}, free)
	require.Equal(t, tOff, tZero)
	require.Positive(t, termZero.Counts.RoundTrips)
	for k := range off.Results.Types {
		require.Equal(t, off.Results.Types[k].Count, zero.Results.Types[k].Count, "%v", tpcc.TxType(k))
		require.Equal(t, off.Results.Types[k].Meter, zero.Results.Types[k].Meter, "%v", tpcc.TxType(k))
	}
	on, tOn, term := run(t, &p, client.Settings{}, n)
	for k := range off.Results.Types {
		a, b := &off.Results.Types[k].Meter, &on.Results.Types[k].Meter
		require.Equal(t, off.Results.Types[k].Count, on.Results.Types[k].Count, "%v", tpcc.TxType(k))
		require.Equal(t, a.RowsReturned, b.RowsReturned, "%v", tpcc.TxType(k))
		require.Equal(t, a.IndexEntriesWritten, b.IndexEntriesWritten, "%v", tpcc.TxType(k))
		require.Equal(t, a.IndexEntriesDeleted, b.IndexEntriesDeleted, "%v", tpcc.TxType(k))
		require.Equal(t, a.LockRequests, b.LockRequests, "%v", tpcc.TxType(k))
		require.Equal(t, a.Commits, b.Commits, "%v", tpcc.TxType(k))
	}
	require.Equal(t, termZero.Counts, term.Counts, "the same statements")
	require.Greater(t, tOn, tOff, "the layer adds time")
	require.Positive(t, term.Counts.RoundTrips)
	require.Equal(t, term.Counts.Statements, term.Counts.RoundTrips, "Connector/J's defaults: a round trip a statement")
	// Every transaction ends in one commit or one rollback.
	require.Equal(t, int64(n), term.ByKind[client.Commit].Statements+term.ByKind[client.Rollback].Statements)

	// Prepared statements and a plan cache: fewer parses and plans, less time.
	pr, tPr, termPr := run(t, &p, client.Settings{ServerPrepare: true, PlanCache: true}, n)
	require.Equal(t, on.Results.Types[tpcc.NewOrderTx].Meter.RowsReturned, pr.Results.Types[tpcc.NewOrderTx].Meter.RowsReturned)
	require.Less(t, termPr.Counts.Parses, term.Counts.Parses)
	require.Less(t, tPr, tOn)
}
