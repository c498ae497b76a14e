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

// DefaultParams are the shipped prices: estimates, set before the
// calibration script (calibrate/run.sh) measured this machine, to be
// replaced by its output. Each field's source is in DefaultParamSources.
var DefaultParams = Params{
	Parse: 10000, Plan: 12000, PlanCacheHit: 1000, Statement: 6000, Row: 250, TempRow: 500, Cursor: 20000,
	Syscall: 1500, DriverStatement: 8000, DriverRow: 300, ClientSyscall: 1500,
	Source: "estimates (2026), anchored on pgbench 15 with four clients on this machine: select-only 1.39× faster with -M prepared than -M simple; see DefaultParamSources",
}

// DefaultParamSources says where each default came from.
var DefaultParamSources = map[string]string{
	"parse":            "estimate: the part of a short statement's server time that -M prepared saves in pgbench select-only (1.39× over -M simple), less planning",
	"plan":             "estimate: the rest of that saving (a point query's planning is of the order of its parse)",
	"plan_cache_hit":   "estimate: a hash lookup and the plan's validity check",
	"statement":        "estimate: MySQL's dispatch_command and PostgreSQL's exec_* overhead around the executor, a few µs",
	"row":              "estimate: a row's encoding into the send buffer",
	"temp_row":         "estimate: an in-memory temporary table's row insert (MySQL's TempTable engine)",
	"cursor":           "estimate: a temporary table made and dropped",
	"syscall":          "estimate: a small send or recv on loopback TCP, 1-2 µs on current x86 with mitigations",
	"driver_statement": "estimate: a JDBC driver's per-statement work (packet building, result set objects)",
	"driver_row":       "estimate: a row's decoding into Java objects",
	"client_syscall":   "as syscall",
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
