// Package client is simulated mode's client and server cost layer: the
// costs enginelab's in-process design removes (the protocol, the network,
// the server's parse and plan, the driver), put back on demand, statement
// by statement, as a named driver with named settings would pay them.
//
// # Statements
//
// Each TPC-C transaction is the statement sequence a kit sends
// (Kit.Steps): BenchmarkSQL 5.0's (jTPCCConnection.java) or
// sysbench-tpcc's (tpcc_run.lua; tpcc-mysql sends the same count(c_id)).
// The engine runs each statement as one or more engine steps
// (tpcc.Step): a step is Own (it starts a statement), Merged (more work of
// the statement in progress: a join's other table, an UPDATE's read of
// its row) or Once (the first of a run of the same step starts one
// UPDATE that changes every row of the run). The rows a statement returns
// are the engine's rows returned over its steps, but for aggregates (one
// row). BenchmarkSQL, statement by statement, with the engine calls it
// becomes:
//
//	New-Order
//	  SELECT c_discount, c_last, c_credit, w_tax FROM customer JOIN warehouse ... c_id = ?
//	                                               Get(warehouse); Get(customer) [merged]
//	  SELECT d_tax, d_next_o_id FROM district ... FOR UPDATE      GetForUpdate(district)
//	  UPDATE district SET d_next_o_id = d_next_o_id + 1 ...       Update(district)
//	  INSERT INTO oorder ...                                      Insert(orders)
//	  INSERT INTO new_order ...                                   Insert(new_order)
//	  per line: SELECT i_price, i_name, i_data FROM item ...      Get(item)
//	            SELECT s_quantity, s_data, s_dist_NN ... FOR UPDATE  GetForUpdate(stock)
//	            UPDATE stock ... (addBatch)                       Update(stock)
//	            INSERT INTO order_line ... (addBatch)             Insert(order_line)
//	  executeBatch ×2, COMMIT (ROLLBACK for the unused item)      Commit / Rollback
//	Payment
//	  SELECT w_name, ... FROM warehouse                           GetForUpdate(warehouse)
//	  UPDATE warehouse SET w_ytd = w_ytd + ?                      Update(warehouse)
//	  SELECT d_name, ... FROM district                            GetForUpdate(district)
//	  UPDATE district SET d_ytd = d_ytd + ?                       Update(district)
//	  by name: SELECT c_id FROM customer ... ORDER BY c_first     Sort(customer by name): every match
//	  SELECT c_first, ..., c_data FROM customer ... FOR UPDATE    GetForUpdate(customer)
//	  UPDATE customer SET c_balance = ..., c_data = ?             Update(customer)
//	  INSERT INTO history ...                                     Insert(history)
//	  COMMIT
//	Order-Status
//	  by name: SELECT c_id FROM customer ... ORDER BY c_first     Sort(customer by name)
//	  SELECT c_first, c_middle, c_last, c_balance FROM customer   Get(customer)
//	  SELECT o_id, ... FROM oorder ... o_id = (SELECT max(o_id) ...)  Scan(orders by customer, reverse, limit 1): 1 row
//	  SELECT ol_i_id, ... FROM order_line ... ORDER BY ...        Scan(order_line): the order's lines
//	  COMMIT
//	Delivery, per district
//	  SELECT no_o_id FROM new_order ... ORDER BY no_o_id ASC      Scan(new_order): every undelivered order
//	                                                              (the kit reads the first row only)
//	  DELETE FROM new_order ...                                   Delete(new_order)
//	  SELECT o_c_id FROM oorder ...                               GetForUpdate(orders)
//	  UPDATE oorder SET o_carrier_id = ?                          Update(orders)
//	  SELECT sum(ol_amount) FROM order_line ...                   Scan(order_line): 1 row
//	  UPDATE order_line SET ol_delivery_d = ? ... ol_o_id = ?     Update(order_line) per line [once]
//	  UPDATE customer SET c_balance = c_balance + ?, ...          GetForUpdate(customer) [merged]; Update(customer)
//	  then COMMIT
//	Stock-Level
//	  SELECT count(*) AS low_stock FROM (SELECT ... FROM stock WHERE ... s_i_id IN
//	    (SELECT ol_i_id FROM district JOIN order_line ...))       Get(district); Scan(order_line) [merged];
//	                                                              Get(stock) per item [merged]: 1 row
//	  COMMIT
//
// sysbench-tpcc differs: New-Order and Payment the same statements (its
// SELECT of the warehouse FOR UPDATE); by name it first sends SELECT
// count(c_id) namecnt FROM customer WHERE ... (Count(customer, c_id): the
// engine counts every match, and with the count rewrite as count(*)),
// then Order-Status's list carries c_balance, c_first, c_middle, c_id, so
// that it reads no customer row after it; Delivery's new order is
// SELECT no_o_id ... ORDER BY no_o_id ASC LIMIT 1 FOR UPDATE (one row);
// Stock-Level is three statements: the district's d_next_o_id, SELECT
// DISTINCT ol_i_id FROM order_line ..., and per item SELECT count(*) FROM
// stock WHERE s_w_id = ? AND s_i_id = ? AND s_quantity < ?. Its
// statements are text (con:query of a formatted string); it is a C client.
// The Optimized profile sends BenchmarkSQL's statements and, by name,
// sysbench-tpcc's count with count(*).
//
// # Personalities
//
// A Personality is a driver pinned to one version (Personalities:
// mysql-jdbc, MySQL Connector/J 8.0.33; mariadb-connector, MariaDB
// Connector/J 3.3.3; pgjdbc, PostgreSQL JDBC 42.7.3), and Settings the
// driver's and the server's settings a terminal runs with. A Session
// counts each statement as the driver sends it: round trips, messages
// each way, the client's and the server's system calls, bytes each way,
// rows on the wire and in a cursor's temporary table, parses, plans,
// plan-cache hits and prepares (Counts).
//
//   - mysql-jdbc: text COM_QUERY unless useServerPrepStmts (then
//     COM_STMT_PREPARE once per statement and connection, COM_STMT_EXECUTE
//     after; MySQL plans every execution unless the server has a plan
//     cache). The whole result is read whatever the fetch size, unless
//     useCursorFetch (which forces server-side prepared statements): then
//     a SELECT opens a cursor whose result the server materializes in a
//     temporary table, and its rows come with COM_STMT_FETCH round trips,
//     a fetch size at a time, until a fetch returns fewer rows than asked
//     (BenchmarkSQL's Delivery reads the first row and fetches once).
//     Each packet is read with two system calls, its 4-byte length prefix
//     and its payload. rewriteBatchedStatements makes an INSERT batch one
//     multi-row INSERT and a batch of more than three other statements one
//     multi-statement query (text: each statement parsed and planned);
//     without it a batch is one executeUpdate after another.
//   - mariadb-connector: the MySQL protocol; one read fills a 16 KiB
//     buffer; a batch is pipelined (every statement written, then every
//     result read: one round trip), or with useBulkStmts (off by default
//     since 3.2.0) one COM_STMT_BULK_EXECUTE.
//   - pgjdbc: the extended protocol. A PreparedStatement runs unnamed
//     (Parse, Bind, Describe, Execute, Sync; parsed and planned each time)
//     until its prepareThreshold-th execution (default 5), which prepares
//     it named; after that Bind, Execute, Sync. A fetch size is honoured
//     with autocommit off (BenchmarkSQL's setting, assumed here): the
//     first rows come with the first Execute, each further batch with an
//     Execute and a Sync. A batch is every Bind/Execute before one Sync:
//     one round trip. One read fills an 8 KiB buffer.
//
// A C client (Settings.CClient: sysbench, tpcc-mysql, pgbench) reads a
// response with one system call per buffer and costs no driver CPU.
//
// # The cost layer
//
// In simulated mode, with sim.TPCCConfig.Client set, each terminal is a
// Terminal (a sched.ClientTerminal): at each engine step that starts a
// statement the statement before it ends, and is counted and priced
// (Params.Cost): the server's CPU (parses, plans, plan-cache hits, the
// per-statement overhead, rows sent, a cursor's temporary table, the
// server's system calls) books the modeled machine's cores like the
// engine's CPU; the client's time (the driver's work and its system
// calls) and the wire's (a round trip each, hw.Network.RoundTrip, and the
// bytes at its Bandwidth) pass on the terminal's clock. The time is
// charged inside the transaction, so its locks are held meanwhile, as on
// a server. The engine's work is not changed: its meters are the same
// with the layer on and off, for the same transactions. Off by default.
//
// The prices (DefaultParams) are this machine's, fitted by
// calibrate/run.sh to real servers on it (calibrate/results-20261203.txt):
// PostgreSQL 15's backend CPU a statement (the parse and plan that
// prepared statements save, split by PostgreSQL's own stage statistics;
// the rest of a prepared point SELECT but its lookup; a row sent), the
// JDBC drivers' CPU a statement and a row (pgjdbc and MariaDB
// Connector/J, timed by calibrate/Calib.java), and one read system call
// on loopback. A plan cache hit, a cursor and its temporary table's rows
// are estimates. DefaultParamSources gives each price's results line and
// formula. One set of prices serves both protocols: MariaDB's figures,
// in the same file, are a check, not an input.
//
// What it leaves out: a retried attempt's ROLLBACK (the engine rolled it
// back), session setup, the server's network stack beyond its system
// calls, and the client machine's own limits (its CPU is not a shared
// resource).
package client
