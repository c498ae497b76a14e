package client

import (
	"fmt"
	"math"
	"time"

	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/sim/sched"
	"github.com/enginelab/enginelab/tpcc"
)

// Params are the cost layer's prices, in nanoseconds. Server prices are
// CPU on the modeled machine's cores; client prices are the client's own
// time. The network's round trip and bandwidth are the run's hw.Network.
type Params struct {
	// Server.
	Parse        float64 `json:"parse"`          // a statement's parse (text, or its prepare)
	Plan         float64 `json:"plan"`           // a statement's optimization
	PlanCacheHit float64 `json:"plan_cache_hit"` // a plan reused: the lookup and its checks
	Statement    float64 `json:"statement"`      // dispatch, the session's per-statement work, the result's framing
	Row          float64 `json:"row"`            // a result row encoded and sent
	TempRow      float64 `json:"temp_row"`       // a row written to a cursor's temporary table
	Cursor       float64 `json:"cursor"`         // a cursor's temporary table made and dropped
	Syscall      float64 `json:"syscall"`        // a send or a read of the server's
	// Client.
	DriverStatement float64 `json:"driver_statement"` // a JDBC driver's work a statement (none for a C client)
	DriverRow       float64 `json:"driver_row"`       // a row decoded by the driver
	ClientSyscall   float64 `json:"client_syscall"`   // a send or a read of the client's
	Source          string  `json:"source"`
}

// DefaultParamsResults is the calibration output the defaults are fitted
// to, in calibrate/ beside the script that wrote it (run.sh, run on this
// project's 2-core machine on 2026-12-03, shared with other work: each
// figure is the best of four runs).
const DefaultParamsResults = "results-20261203.txt"

// DefaultParams are the shipped prices: this machine's, measured by
// calibrate/run.sh (DefaultParamsResults), rounded to 10 ns. Server prices
// are PostgreSQL 15's backend CPU (from /proc; MariaDB's figures are in
// the file beside them), client prices the JDBC drivers' CPU (pgjdbc and
// MariaDB Connector/J, Debian's) and a read system call. PlanCacheHit,
// TempRow and Cursor are still estimates. Each field's source, the results
// line and the formula, is in DefaultParamSources.
var DefaultParams = Params{
	Parse: 10750, Plan: 14970, PlanCacheHit: 1000, Statement: 28960, Row: 560, TempRow: 500, Cursor: 20000,
	Syscall: 930, DriverStatement: 6270, DriverRow: 380, ClientSyscall: 930,
	Source: "this machine's, measured by calibrate/run.sh (" + DefaultParamsResults + "): PostgreSQL 15's backend CPU a statement, " +
		"pgjdbc's and MariaDB Connector/J's CPU, a loopback read; plan_cache_hit, temp_row and cursor are estimates; see DefaultParamSources",
}

// DefaultParamSources says where each default came from: the results
// lines (their first words) in DefaultParamsResults and the formula; the
// script's fit step computes each fit_* line from the others.
var DefaultParamSources = map[string]string{
	"parse": "measured: fit_parse_ns 10,750 = (pg_parse_plan_ns 24,720 + plan_cache_hit 1,000) × 0.418. pg_parse_plan_ns is " +
		"pgbench select-only's backend CPU a statement with -M simple minus -M prepared (a parse and a plan less a generic plan's " +
		"reuse); 0.418 is the parse's share in PostgreSQL's stage statistics, pg_stages (raw parse 4,382 + analysis 6,483 + " +
		"rewrite 1,292 against plan 16,921 ns; log_parser_stats and log_planner_stats inflate each stage, their shares less)",
	"plan": "measured: fit_plan_ns 14,970 = (pg_parse_plan_ns 24,720 + plan_cache_hit 1,000) × 0.582 (see parse); " +
		"pg_plan_minus_hit_ns, 22,242, is a plan through the plan cache's custom path, which also copies and checks the query",
	"plan_cache_hit": "estimate, fit_plan_cache_hit_ns 1,000: the generic plan's checks and its relations' locks; the measurements give only plan less plan_cache_hit",
	"statement": "measured: fit_statement_ns 28,960 = pg_prepared_stmt_ns 33,078 − plan_cache_hit 1,000 − 2 × split_read_extra_ns 934 − " +
		"the engine's point lookup 1,250 (hw's default CPU: 3 node visits, a heap fetch, a row examined, decoded and returned): " +
		"a prepared point SELECT's backend CPU but for its read, its send and the lookup enginelab prices itself; it keeps the " +
		"backend's wake-up, the transaction, the portal, the executor's start and end and the send's loopback TCP work",
	"row": "measured: fit_row_ns 560 = pg_row_ns: (a 100-row range sent − its count(), both generic plans) / 99, a 4-column row " +
		"of about 100 bytes; MariaDB's my_row_ns, a CHAR(120), is 368",
	"temp_row": "estimate: an in-memory temporary table's row insert (MySQL's TempTable engine); Debian packages no Connector/J to open a cursor with",
	"cursor":   "estimate: a temporary table made and dropped",
	"syscall": "measured: fit_syscall_ns 930 = split_read_extra_ns 934: a 64-byte message already in a loopback socket's buffer " +
		"read with two recv calls rather than one",
	"driver_statement": "measured: fit_driver_statement_ns 6,270 = (java_pgjdbc_statement_ns 8,687 + java_mariadb_statement_ns 4,615) / 2 " +
		"− driver_row 384: a 1-row SELECT's user CPU in the driver, its row read, less that row (Calib.java; pgjdbc 42.5.5 and " +
		"MariaDB Connector/J 2.7.6, Debian's, for all three personalities)",
	"driver_row": "measured: fit_driver_row_ns 380 = (java_pgjdbc_row_ns 470 + java_mariadb_row_ns 297) / 2: a row's user CPU, " +
		"read with getInt and getString, from a 100-row SELECT against a 1-row one",
	"client_syscall": "measured: fit_client_syscall_ns 930 = split_read_extra_ns, as syscall",
}

// Validate checks p: every price from 0 to hw.MaxCPUCost.
func (p *Params) Validate() error {
	for _, v := range []float64{p.Parse, p.Plan, p.PlanCacheHit, p.Statement, p.Row, p.TempRow, p.Cursor, p.Syscall,
		p.DriverStatement, p.DriverRow, p.ClientSyscall} {
		if !(v >= 0 && v <= hw.MaxCPUCost) {
			return fmt.Errorf("%w: every price must be from 0 to %g nanoseconds", ErrInvalidConfig, float64(hw.MaxCPUCost))
		}
	}
	return nil
}

// Config turns the cost layer on for a simulated run: a personality, its
// settings and the prices.
type Config struct {
	Personality string
	// Settings; UseDefaults takes the personality's defaults instead.
	Settings    Settings
	UseDefaults bool
	// Params; the zero value takes DefaultParams.
	Params *Params
}

// Cost prices c: the server's CPU, the client's time and the wire's.
func (p *Params) Cost(c *Counts, net hw.Network, cclient bool) sched.ClientCost {
	server := float64(c.Parses)*p.Parse + float64(c.Plans)*p.Plan + float64(c.PlanCacheHits)*p.PlanCacheHit +
		float64(c.Statements)*p.Statement + float64(c.RowsSent)*p.Row + float64(c.RowsMaterialized)*p.TempRow +
		float64(c.Cursors)*p.Cursor + float64(c.ServerSyscalls)*p.Syscall
	client := float64(c.ClientSyscalls) * p.ClientSyscall
	if !cclient {
		client += float64(c.Statements)*p.DriverStatement + float64(c.RowsSent)*p.DriverRow
	}
	wire := float64(c.RoundTrips)*float64(net.RoundTrip) + float64(c.BytesSent+c.BytesReceived)*1e9/float64(net.Bandwidth)
	return sched.ClientCost{Server: int64(math.Round(server)), Client: int64(math.Round(client)), Wire: int64(math.Round(wire))}
}

// Terminal is one terminal's client: its session, the kit's statements
// and what it sent so far. It implements sched.ClientTerminal.
type Terminal struct {
	sess   *Session
	steps  *[tpcc.NumSteps]StepStatement
	params *Params
	net    hw.Network
	cur    *Statement
	rows0  int64
	prev   tpcc.Step
	inTx   bool
	// Counts is everything sent so far; ByKind split by statement kind.
	Counts Counts
	ByKind [numKinds]Counts
	// Time is the cost so far.
	Time sched.ClientCost
}

// NewTerminal returns a terminal of personality p with settings s,
// sending kit's statements (countStar: the count steps send count(*)),
// priced with params over net.
func NewTerminal(p Personality, s Settings, kit Kit, countStar bool, params *Params, net hw.Network) *Terminal {
	return &Terminal{sess: NewSession(p, s), steps: kit.Steps(countStar), params: params, net: net}
}

// Step implements sched.ClientTerminal: step s starts; the statement in
// progress ends unless s is more of its work.
func (t *Terminal) Step(s tpcc.Step, m *engine.Meter) sched.ClientCost {
	ss := t.steps[s]
	cont := t.inTx && (ss.Join == Merged || (ss.Join == Once && t.prev == s))
	t.prev = s
	if cont || ss.Stmt == nil {
		t.inTx = true
		return sched.ClientCost{}
	}
	c := t.close(m)
	t.cur, t.rows0, t.inTx = ss.Stmt, m.RowsReturned, true
	return c
}

// End implements sched.ClientTerminal: the transaction's last statement
// (its commit or rollback) ends.
func (t *Terminal) End(m *engine.Meter) sched.ClientCost {
	c := t.close(m)
	t.cur, t.inTx = nil, false
	return c
}

func (t *Terminal) close(m *engine.Meter) sched.ClientCost {
	if t.cur == nil {
		return sched.ClientCost{}
	}
	rows := int(m.RowsReturned - t.rows0)
	st := t.cur
	t.cur = nil
	var c Counts
	if st.Kind == Commit {
		// The batch goes before the commit: its counts are the updates'.
		b := t.sess.Flush()
		t.ByKind[Update].Add(&b)
		c.Add(&b)
	}
	one := t.sess.Exec(st, rows)
	t.ByKind[st.Kind].Add(&one)
	c.Add(&one)
	t.Counts.Add(&c)
	cost := t.params.Cost(&c, t.net, t.sess.S.CClient)
	t.Time.Server += cost.Server
	t.Time.Client += cost.Client
	t.Time.Wire += cost.Wire
	return cost
}

// Duration is a helper for reports: nanoseconds as a time.Duration.
func Duration(ns int64) time.Duration { return time.Duration(ns) }
