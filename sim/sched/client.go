package sched

import (
	"github.com/enginelab/enginelab/engine"
	"github.com/enginelab/enginelab/tpcc"
)

// ClientCost is what the client and server layer a terminal's statements
// cross costs, beyond the engine's work: Server is CPU on the modeled
// machine's cores (parsing, planning, the protocol, the server's system
// calls), booked like the engine's; Client is the client's own time (its
// driver and system calls, on a machine of its own); Wire the network
// (round trips and transfer), neither a shared resource here.
type ClientCost struct {
	Server, Client, Wire int64 // virtual nanoseconds
}

// ClientTerminal is a terminal's client model: it hears each engine step
// as the transaction starts it, and the transaction's end, and says what
// the statements that ended cost.
type ClientTerminal interface {
	Step(s tpcc.Step, m *engine.Meter) ClientCost
	End(m *engine.Meter) ClientCost
}

// ClientTime is where the client layer's part of one transaction type's
// measured response times went (TypeTime.Response includes it).
type ClientTime struct {
	Server, Queue, Client, Wire int64
}

// Total is the client layer's whole part.
func (c ClientTime) Total() int64 { return c.Server + c.Queue + c.Client + c.Wire }

// SetClients gives each terminal the client model f returns for its
// number (nil: none, the default, and the engine's time alone). Call it
// before the terminals are made (ForTerminal).
func (s *Scheduler) SetClients(f func(num int) ClientTerminal) { s.clients = f }

// ClientTypes returns the client layer's part of the measured response
// times by type (all zero without SetClients).
func (s *Scheduler) ClientTypes() [tpcc.NumTxTypes]ClientTime { return s.clientTypes }

// Step implements tpcc.StepObserver: with a client model, the statements
// that ended are priced at the step that follows them, inside the
// transaction (its locks are held meanwhile, as on a real server).
func (v *vterm) Step(st tpcc.Step, m *engine.Meter) {
	if v.client == nil {
		return
	}
	v.charge(v.client.Step(st, m))
}

// charge prices c for v: the engine's work so far first, then the client
// and wire delays, then the server's CPU on the core that frees first.
func (v *vterm) charge(c ClientCost) {
	if c == (ClientCost{}) {
		return
	}
	s := v.s
	s.settle(v)
	v.clientSpent.Client += c.Client
	v.clientSpent.Wire += c.Wire
	v.now += c.Client + c.Wire
	if c.Server > 0 {
		s.step(v)
		k := 0
		for i := range s.cores {
			if s.cores[i] < s.cores[k] {
				k = i
			}
		}
		start := max(v.now, s.cores[k])
		v.clientSpent.Queue += start - v.now
		v.clientSpent.Server += c.Server
		s.cores[k] = start + c.Server
		s.cpuBusy += c.Server
		v.now = start + c.Server
	}
	s.switchFrom(v)
}
