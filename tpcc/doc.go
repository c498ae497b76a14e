// Package tpcc is the TPC-C workload, in process, against the engine: the
// nine tables and their population, the five transactions, terminals and
// their mix, the client access profiles, the consistency checks of clause
// 3.3.2, and a CSV export. It follows the specification (revision 5.11);
// where a popular kit does something else, the code cites the clause it
// follows (// 2.4.1.5).
//
// # Basics
//
//	db, _ := engine.Open(&engine.Options{PoolSize: 256 << 20})
//	_, _ = tpcc.Load(ctx, db, tpcc.LoadConfig{Warehouses: 1, Seed: 1})
//	loaded, _ := tpcc.ReadLoaded(db)
//	stats, _ := tpcc.Run(ctx, db, tpcc.RunConfig{Warehouses: 1, Terminals: 4,
//		Duration: 30 * time.Second, Seed: 2, LoadConstants: loaded.Constants})
//	report, _ := tpcc.Check(db, tpcc.CheckOptions{})
//	fmt.Println(stats.TpmC(), report.Passed())
//
// Load fills the nine tables (Tables gives their declarations) and writes
// tpcc_config last; ReadLoaded reads it back, so a run on a stored database
// knows its warehouses and the load's NURand constants. Run starts the
// terminals (NewTerminals, one goroutine each, then Collect); a simulator
// drives the same Terminals itself through Env and TxObserver. Check
// verifies the consistency conditions; Export writes every table as CSV.
//
// # The population [4.3.3.1]
//
// Per warehouse: 10 districts; 3,000 customers a district, each with one
// HISTORY row and one order (O_C_ID a random permutation of the customers);
// orders 2101..3000 of each district undelivered (a NEW_ORDER row, no
// carrier, order lines without a delivery date); 5 to 15 order lines an
// order; 100,000 STOCK rows. ITEM has 100,000 rows for all warehouses.
// Last names are three syllables chosen by the digits of a number 0..999
// (LastName): customers 1..1000 of a district take C_ID − 1, the rest
// NURand(255, 0, 999). 10% of ITEM and STOCK rows carry "ORIGINAL" in
// their data.
//
// A Scale shrinks the population for tests and quick experiments, with
// the same transactions and code paths: SmallScale has 10,000 items and
// 300 customers (and orders) a district, the last 30% of them undelivered
// as at full scale, and the run's by-name lookups draw only among the
// last names a district holds. The scale is stored with the load.
//
// # Random inputs [2.1.6]
//
// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y − x + 1)) + x,
// with A = 255 for last names, 1023 for customer ids and 8191 for item
// ids. The load draws one C per A (NewLoadConstants); a run draws its own
// (NewRunConstants), with the last-name C at a distance from the load's
// of 65..119, never 96 or 112 [2.1.6.1]. Every random choice, population
// and inputs, comes from the seed; the loader gives each district (or
// chunk of items) its own stream, so the rows do not depend on how many
// goroutines load them.
//
// # The transactions [2.4–2.8]
//
//   - New-Order: a district of the home warehouse, a customer by NURand,
//     5..15 lines, each supplied by another warehouse with probability 1%
//     (W > 1); in 1% of them the last item does not exist and the whole
//     transaction rolls back (it still counts toward tpmC).
//   - Payment: 85% a customer of the home warehouse and district, 15% of
//     another warehouse; 60% by last name (every match ordered by first
//     name, the one at position ceil(n/2)), else by id.
//   - Order-Status: 60% by last name, else by id; the customer's newest
//     order and its lines. Read-only.
//   - Delivery: for each of the ten districts, the oldest undelivered
//     order: delete its NEW_ORDER row, set its carrier, date its lines,
//     credit the customer. A district with none is skipped and counted.
//     Run in the terminal, not deferred [2.7.2 allows both].
//   - Stock-Level: the terminal's own district; how many distinct items of
//     the last 20 orders have a stock below a threshold of 10..20.
//     Read-only.
//
// Terminals draw their transaction from a deck of 23 cards (10 New-Order,
// 10 Payment, one of each other), reshuffled after each pass: the minimum
// mix of 5.2.3 exactly. Terminal t has home warehouse t mod W + 1 and
// Stock-Level district (t / W) mod 10 + 1. Keying and think times
// [5.2.5.7] are optional (RunConfig.KeyingAndThink); without them a
// terminal runs flat out, as the usual kits do. tpmC counts New-Order
// transactions a minute, rolled-back ones included.
//
// # Client access profiles
//
// The engine has no SQL; a Profile says how a client's queries use it,
// modeled on the kits' public queries: Optimized (count(*), then the
// c_ids up to position ceil(n/2); LIMIT 1 for Delivery), Sysbench
// (count(c_id), then every match), BenchmarkSQL (every match's c_id, then
// the chosen row; Delivery reads every undelivered order of a district).
// The difference between them is what the talk behind this project
// measured: see the README's TPC-C section.
//
// # Consistency [3.3.2]
//
// Check verifies conditions 1 to 12 warehouse by warehouse and district by
// district, each in read transactions of bounded size, and reports the
// first differences of each failing condition. Condition 11 (orders minus
// new orders = 2100 a district) holds only right after a load: Check
// skips it unless told the database is fresh.
//
// # Concurrency and errors
//
// Terminals run concurrently on one *engine.DB; a deadlock victim or a lock
// timeout is retried with the same inputs and counted as a retry. Errors
// of configuration wrap ErrBadConfig and come before any work; a database
// without tpcc_config is ErrNotLoaded.
package tpcc
