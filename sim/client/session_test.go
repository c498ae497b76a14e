package client

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/tpcc"
)

// sel is a SELECT of 8 bytes of text, two parameters, one column of 4
// bytes: small enough that every count below is worked by hand.
var sel = Statement{ID: 1, Kind: Select, SQL: "SELECT 1", Params: 2, Columns: 1, RowBytes: 4}

var upd = Statement{ID: 2, Kind: Update, SQL: "UPDATE 1", Params: 2}

var ins = Statement{ID: 3, Kind: Update, SQL: "INSERT 1", Params: 2, Insert: true, Batched: true}

func session(t *testing.T, name string, s Settings) *Session {
	p, err := Lookup(name)
	require.NoError(t, err)
	return NewSession(p, s)
}

func TestMySQLJDBCText(t *testing.T) {
	s := session(t, "mysql-jdbc", Settings{})
	// COM_QUERY: 4 + 1 + 8 + 2×(6−1) = 23 bytes. Response: column count
	// (5), one column definition (52), three rows (8 each), OK (11) = 92
	// bytes in 6 packets; Connector/J reads each packet's header, then
	// its payload: 12 reads and the write.
	want := Counts{Statements: 1, RoundTrips: 1, MessagesSent: 1, MessagesReceived: 6, ClientSyscalls: 13, ServerSyscalls: 2,
		BytesSent: 23, BytesReceived: 92, RowsSent: 3, Parses: 1, Plans: 1}
	require.Equal(t, want, s.Exec(&sel, 3))
	require.Equal(t, want, s.Exec(&sel, 3), "text: the same every time")
	// An UPDATE: its OK.
	require.Equal(t, Counts{Statements: 1, RoundTrips: 1, MessagesSent: 1, MessagesReceived: 1, ClientSyscalls: 3, ServerSyscalls: 2,
		BytesSent: 23, BytesReceived: 11, Parses: 1, Plans: 1}, s.Exec(&upd, 0))
}

func TestMySQLJDBCServerPrepared(t *testing.T) {
	s := session(t, "mysql-jdbc", Settings{ServerPrepare: true})
	// COM_STMT_PREPARE (13 bytes); its OK (16), two parameter and one
	// column definitions (156): 172 bytes in 4 packets. COM_STMT_EXECUTE:
	// 14 + NULL bitmap 1 + bound flag 1 + types 4 + values 16 = 36 bytes.
	// Binary rows of 6 bytes (header, bitmap, value): 5 + 52 + 30 + 11 = 98.
	require.Equal(t, Counts{Statements: 1, RoundTrips: 2, MessagesSent: 2, MessagesReceived: 10, ClientSyscalls: 22, ServerSyscalls: 4,
		BytesSent: 49, BytesReceived: 270, RowsSent: 3, Parses: 1, Plans: 1, Prepares: 1}, s.Exec(&sel, 3))
	// Then no prepare, no parse; planned again (MySQL has no plan cache).
	require.Equal(t, Counts{Statements: 1, RoundTrips: 1, MessagesSent: 1, MessagesReceived: 6, ClientSyscalls: 13, ServerSyscalls: 2,
		BytesSent: 36, BytesReceived: 98, RowsSent: 3, Plans: 1}, s.Exec(&sel, 3))

	s = session(t, "mysql-jdbc", Settings{ServerPrepare: true, PlanCache: true})
	s.Exec(&sel, 3)
	require.Equal(t, Counts{Statements: 1, RoundTrips: 1, MessagesSent: 1, MessagesReceived: 6, ClientSyscalls: 13, ServerSyscalls: 2,
		BytesSent: 36, BytesReceived: 98, RowsSent: 3, PlanCacheHits: 1}, s.Exec(&sel, 3))
}

func TestMySQLJDBCFetchSize(t *testing.T) {
	// Without useCursorFetch the fetch size changes nothing.
	s := session(t, "mysql-jdbc", Settings{FetchSize: 2})
	require.Equal(t, int64(1), s.Exec(&sel, 3).RoundTrips)

	// With it: prepared (forced), the cursor's open (5 + 52 + EOF 9 = 66
	// bytes, 3 packets), then COM_STMT_FETCH (13 bytes) for two rows
	// (2×10 + 11 = 31), and again for the last (10 + 11 = 21).
	s = session(t, "mysql-jdbc", Settings{FetchSize: 2, CursorFetch: true})
	require.Equal(t, Counts{Statements: 1, RoundTrips: 4, MessagesSent: 4, MessagesReceived: 4 + 3 + 3 + 2,
		ClientSyscalls: 4 + 2*12, ServerSyscalls: 8, BytesSent: 13 + 36 + 13 + 13, BytesReceived: 172 + 66 + 31 + 21,
		RowsSent: 3, RowsMaterialized: 3, Parses: 1, Plans: 1, Prepares: 1, Cursors: 1}, s.Exec(&sel, 3))
	// Four rows: fetches of 2, 2 and 0 (a full fetch cannot tell the end).
	require.Equal(t, int64(1+3), s.Exec(&sel, 4).RoundTrips)
	// The first row only (BenchmarkSQL's Delivery): one fetch, whatever
	// the result; the server materialized all of it.
	first := sel
	first.FirstRowOnly = true
	c := s.Exec(&first, 900)
	require.Equal(t, int64(2), c.RoundTrips)
	require.Equal(t, int64(2), c.RowsSent)
	require.Equal(t, int64(900), c.RowsMaterialized)
	// Updates open no cursor.
	require.Equal(t, int64(1), s.Exec(&upd, 0).RoundTrips-1, "the update's prepare and execute")
}

func TestPgJDBC(t *testing.T) {
	p, err := Lookup("pgjdbc")
	require.NoError(t, err)
	s := NewSession(p, p.Defaults)
	// Below prepareThreshold (5): unnamed Parse (25), Bind (41), Describe
	// (7), Execute (10), Sync (5) = 88 bytes; ParseComplete (5),
	// BindComplete (5), RowDescription (36), three DataRows (15 each),
	// CommandComplete (17), ReadyForQuery (6) = 114.
	unnamed := Counts{Statements: 1, RoundTrips: 1, MessagesSent: 5, MessagesReceived: 8, ClientSyscalls: 2, ServerSyscalls: 2,
		BytesSent: 88, BytesReceived: 114, RowsSent: 3, Parses: 1, Plans: 1}
	for range 4 {
		require.Equal(t, unnamed, s.Exec(&sel, 3))
	}
	// The fifth: named Parse (28), Describe statement (10), Bind (44),
	// Execute, Sync; ParameterDescription (15) among the replies.
	require.Equal(t, Counts{Statements: 1, RoundTrips: 1, MessagesSent: 5, MessagesReceived: 9, ClientSyscalls: 2, ServerSyscalls: 2,
		BytesSent: 97, BytesReceived: 129, RowsSent: 3, Parses: 1, Plans: 1, Prepares: 1}, s.Exec(&sel, 3))
	// Then Bind, Execute, Sync; the plan reused.
	require.Equal(t, Counts{Statements: 1, RoundTrips: 1, MessagesSent: 3, MessagesReceived: 6, ClientSyscalls: 2, ServerSyscalls: 2,
		BytesSent: 59, BytesReceived: 73, RowsSent: 3, PlanCacheHits: 1}, s.Exec(&sel, 3))

	// A fetch size of 2: the first Execute brings two rows and
	// PortalSuspended (a named portal: Bind 44, Execute 13, Describe 10),
	// a second Execute and Sync the last row and CommandComplete.
	s = NewSession(p, Settings{FetchSize: 2})
	require.Equal(t, Counts{Statements: 1, RoundTrips: 2, MessagesSent: 7, MessagesReceived: 10, ClientSyscalls: 4, ServerSyscalls: 4,
		BytesSent: 97 + 18, BytesReceived: 87 + 38, RowsSent: 3, Parses: 1, Plans: 1}, s.Exec(&sel, 3))
	first := sel
	first.FirstRowOnly = true
	c := s.Exec(&first, 900)
	require.Equal(t, int64(1), c.RoundTrips, "the first rows come with the first Execute")
	require.Equal(t, int64(2), c.RowsSent)
}

func TestBatches(t *testing.T) {
	for _, x := range []struct {
		name     string
		s        Settings
		st       *Statement
		rts, par int64
	}{
		{"mysql-jdbc", Settings{Batch: true}, &ins, 10, 10},
		{"mysql-jdbc", Settings{Batch: true, RewriteBatched: true}, &ins, 1, 1},
		{"mysql-jdbc", Settings{Batch: true, RewriteBatched: true}, &upd, 1, 10},
		{"mysql-jdbc", Settings{RewriteBatched: true}, &ins, 10, 10}, // the kit sends no batch
		{"mariadb-connector", Settings{Batch: true}, &ins, 1, 10},
		{"mariadb-connector", Settings{Batch: true, BulkStmts: true}, &ins, 2, 1},
		{"pgjdbc", Settings{Batch: true, ServerPrepare: true, PrepareThreshold: 5}, &ins, 1, 5},
	} {
		s := session(t, x.name, x.s)
		var c Counts
		st := *x.st
		st.Batched = true
		for range 10 {
			one := s.Exec(&st, 0)
			c.Add(&one)
		}
		one := s.Exec(&Statement{ID: 99, Kind: Commit, SQL: "COMMIT"}, 0)
		c.Add(&one)
		require.Equal(t, x.rts+1, c.RoundTrips, "%s %+v %s", x.name, x.s, x.st.SQL)
		require.Equal(t, x.par+1, c.Parses, "%s %+v %s", x.name, x.s, x.st.SQL)
		require.Equal(t, int64(11), c.Statements)
	}
	// Three updates or fewer: Connector/J sends them one by one.
	s := session(t, "mysql-jdbc", Settings{Batch: true, RewriteBatched: true})
	st := upd
	st.Batched = true
	for range 3 {
		s.Exec(&st, 0)
	}
	require.Equal(t, int64(3), s.Flush().RoundTrips)
	// A rollback drops the batch.
	s.Exec(&st, 0)
	require.Equal(t, int64(1), s.Exec(&Statement{ID: 98, Kind: Rollback, SQL: "ROLLBACK"}, 0).RoundTrips)
	require.Equal(t, Counts{}, s.Flush())
}

// A BenchmarkSQL Delivery as the engine steps it: seven statements a
// district (the oldest new order, its delete, the order's read and update,
// the lines' sum, one UPDATE of every line, the customer's UPDATE, whose
// read is its own), and the commit.
func TestTerminalDelivery(t *testing.T) {
	p, _ := Lookup("mysql-jdbc")
	term := NewTerminal(p, Settings{}, BenchmarkSQL, false, &DefaultParams, testNet)
	var m engine.Meter
	for range 10 {
		term.Step(tpcc.DNewOrder, &m)
		m.RowsReturned += 900
		for _, s := range []tpcc.Step{tpcc.DDeleteNewOrder, tpcc.DOrder, tpcc.DOrderUpdate, tpcc.DOrderLines} {
			term.Step(s, &m)
			m.RowsReturned++
		}
		m.RowsReturned += 9
		for range 10 {
			term.Step(tpcc.DOrderLineUpdate, &m)
		}
		term.Step(tpcc.DCustomer, &m)
		m.RowsReturned++
		term.Step(tpcc.DCustomerUpdate, &m)
	}
	term.Step(tpcc.DCommit, &m)
	cost := term.End(&m)
	require.Positive(t, cost.Wire)
	require.Equal(t, int64(71), term.Counts.Statements)
	require.Equal(t, int64(71), term.Counts.RoundTrips)
	// New orders 900 a district, an order's row and its sum a district.
	require.Equal(t, int64(10*(900+1+1)), term.Counts.RowsSent)
	require.Equal(t, int64(30), term.ByKind[Select].Statements)
	require.Equal(t, int64(40), term.ByKind[Update].Statements)
	require.Equal(t, int64(1), term.ByKind[Commit].Statements)
}

var testNet = hwNetwork()

func TestParseSpec(t *testing.T) {
	c, err := ParseSpec("pgjdbc,defaults,fetch-size=100,batch")
	require.NoError(t, err)
	require.Equal(t, &Config{Personality: "pgjdbc", Settings: Settings{ServerPrepare: true, PrepareThreshold: 5, PlanCache: true,
		FetchSize: 100, Batch: true}}, c)
	c, err = ParseSpec("mysql-jdbc,prepared,cursor-fetch,fetch-size=10,rewrite-batched")
	require.NoError(t, err)
	require.Equal(t, Settings{ServerPrepare: true, CursorFetch: true, FetchSize: 10, RewriteBatched: true}, c.Settings)
	for _, bad := range []string{"oracle-jdbc", "mysql-jdbc,fetch-size=-1", "mysql-jdbc,fetch-size", "mysql-jdbc,turbo"} {
		_, err := ParseSpec(bad)
		require.ErrorIs(t, err, ErrInvalidConfig, bad)
	}
}

// BenchmarkSQL's New-Order adds a stock update and an order line to two
// batches per line, interleaved: each statement's batch goes as one
// executeBatch at the commit.
func TestNewOrderBatches(t *testing.T) {
	p, _ := Lookup("mysql-jdbc")
	rts := func(s Settings) int64 {
		term := NewTerminal(p, s, BenchmarkSQL, false, &DefaultParams, testNet)
		var m engine.Meter
		for _, st := range []tpcc.Step{tpcc.NOWarehouse, tpcc.NODistrict, tpcc.NODistrictUpdate, tpcc.NOCustomer, tpcc.NOInsertOrder, tpcc.NOInsertNewOrder} {
			term.Step(st, &m)
		}
		for range 10 {
			for _, st := range []tpcc.Step{tpcc.NOItem, tpcc.NOStock, tpcc.NOStockUpdate, tpcc.NOInsertOrderLine} {
				term.Step(st, &m)
			}
		}
		term.Step(tpcc.NOCommit, &m)
		term.End(&m)
		require.Equal(t, int64(46), term.Counts.Statements)
		return term.Counts.RoundTrips
	}
	// 5 statements, 10 lines of 4, the commit: 46 round trips.
	require.Equal(t, int64(46), rts(Settings{}))
	require.Equal(t, int64(46), rts(Settings{Batch: true}), "Connector/J without the rewrite: one by one")
	// Rewritten: each batch one round trip: 5 + 20 + 2 + 1.
	require.Equal(t, int64(28), rts(Settings{Batch: true, RewriteBatched: true}))
}

// MariaDB Connector/J: the same packets as Connector/J's, one read for
// the response (its 16 KiB buffer); a C client likewise.
func TestMariaDBAndCClientReads(t *testing.T) {
	want := Counts{Statements: 1, RoundTrips: 1, MessagesSent: 1, MessagesReceived: 6, ClientSyscalls: 2, ServerSyscalls: 2,
		BytesSent: 23, BytesReceived: 92, RowsSent: 3, Parses: 1, Plans: 1}
	require.Equal(t, want, session(t, "mariadb-connector", Settings{}).Exec(&sel, 3))
	require.Equal(t, want, session(t, "mysql-jdbc", Settings{CClient: true}).Exec(&sel, 3))
	// 2,000 rows of 8 bytes: 16,068 bytes, still one buffer; 2,100 rows
	// (16,868 bytes) take two reads, and the server two writes.
	c := session(t, "mariadb-connector", Settings{}).Exec(&sel, 2100)
	require.Equal(t, int64(5+52+2100*8+11), c.BytesReceived)
	require.Equal(t, int64(1+2), c.ClientSyscalls)
	require.Equal(t, int64(1+2), c.ServerSyscalls)
}

// pgjdbc's commit: Parse, Bind, Execute, Sync of "COMMIT" (6 bytes):
// Parse 5+1+6+1+2 = 15, Bind 5+1+1+2+2+2 = 13, Execute 10, Sync 5;
// ParseComplete, BindComplete, CommandComplete, ReadyForQuery.
func TestPgJDBCCommit(t *testing.T) {
	p, _ := Lookup("pgjdbc")
	s := NewSession(p, p.Defaults)
	commit := Statement{ID: 9, Kind: Commit, SQL: "COMMIT"}
	want := Counts{Statements: 1, RoundTrips: 1, MessagesSent: 4, MessagesReceived: 4, ClientSyscalls: 2, ServerSyscalls: 2,
		BytesSent: 43, BytesReceived: 33, Parses: 1}
	for range 7 {
		require.Equal(t, want, s.Exec(&commit, 0), "never prepared")
	}
}

// Every engine step is a statement or part of one in each kit, and one
// statement id is one SQL text within a kit.
func TestStatementTables(t *testing.T) {
	for _, k := range []Kit{BenchmarkSQL, SysbenchTPCC} {
		for _, star := range []bool{false, true} {
			steps := k.Steps(star)
			sql := map[int]string{}
			for s := range tpcc.NumSteps {
				ss := steps[s]
				if ss.Join == Merged {
					require.Nil(t, ss.Stmt, "%v %v", k, s)
					continue
				}
				require.NotNil(t, ss.Stmt, "%v %v", k, s)
				if prev, ok := sql[ss.Stmt.ID]; ok {
					require.Equal(t, prev, ss.Stmt.SQL, "%v %v: id %d", k, s, ss.Stmt.ID)
				}
				sql[ss.Stmt.ID] = ss.Stmt.SQL
			}
		}
	}
	require.Equal(t, "count(c_id)", strings.Split(strings.Split(SysbenchTPCC.Steps(false)[tpcc.PByNameCount].Stmt.SQL, "SELECT ")[1], " ")[0])
	require.Equal(t, Merged, BenchmarkSQL.Steps(false)[tpcc.PByNameCount].Join, "BenchmarkSQL sends no count")
}
