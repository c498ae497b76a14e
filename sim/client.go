package sim

import (
	"fmt"

	"github.com/enginelab/enginelab/sim/client"
	"github.com/enginelab/enginelab/sim/hw"
	"github.com/enginelab/enginelab/sim/report"
	"github.com/enginelab/enginelab/sim/sched"
	"github.com/enginelab/enginelab/tpcc"
)

// clientName is the cost layer's personality and settings for the
// report's configuration ("" when off).
func (c *TPCCConfig) clientName() string {
	if c.Client == nil {
		return ""
	}
	return fmt.Sprintf("%s %+v", c.Client.Personality, c.Client.Settings)
}

// setClients turns the cost layer on: each terminal the scheduler makes
// gets a client model of the configured personality, sending the
// profile's kit's statements over net. Validate has checked the
// personality.
func (j *job) setClients(net hw.Network) {
	cc := j.cfg.Client
	j.person, _ = client.Lookup(cc.Personality)
	settings := cc.Settings
	if cc.UseDefaults {
		settings = j.person.Defaults
	}
	params := cc.Params
	if params == nil {
		params = &client.DefaultParams
	}
	kit := client.KitOf(j.cfg.Profile)
	countStar := j.cfg.Profile == tpcc.Optimized
	j.sched.SetClients(func(num int) sched.ClientTerminal {
		for len(j.clients) <= num {
			j.clients = append(j.clients, nil)
		}
		t := client.NewTerminal(j.person, settings, kit, countStar, params, net)
		j.clients[num] = t
		return t
	})
}

// clientReport sums the terminals' client models for the report.
func (j *job) clientReport() *report.Client {
	cc := j.cfg.Client
	r := &report.Client{Personality: j.person.Name, Driver: j.person.Driver, Kit: client.KitOf(j.cfg.Profile).String(),
		Settings: cc.Settings, ByKind: map[string]client.Counts{}}
	if cc.UseDefaults {
		r.Settings = j.person.Defaults
	}
	if cc.Params != nil {
		r.Params = *cc.Params
	} else {
		r.Params = client.DefaultParams
	}
	for _, t := range j.clients {
		if t == nil {
			continue
		}
		r.Counts.Add(&t.Counts)
		for k := range t.ByKind {
			name := client.Kind(k).String()
			c := r.ByKind[name]
			c.Add(&t.ByKind[k])
			r.ByKind[name] = c
		}
	}
	types := j.sched.Types()
	ct := j.sched.ClientTypes()
	var resp, outside int64
	ms := func(ns int64, n int64) float64 { return float64(ns) / float64(n) / 1e6 }
	for i := range types {
		tt, c := &types[i], ct[i]
		if tt.Count == 0 || tt.Response == 0 {
			continue
		}
		resp += tt.Response
		outside += c.Total()
		r.Types = append(r.Types, report.ClientType{Type: tpcc.TxType(i).String(), MeanMs: ms(tt.Response, tt.Count),
			ServerMs: ms(c.Server, tt.Count), QueueMs: ms(c.Queue, tt.Count), ClientMs: ms(c.Client, tt.Count), WireMs: ms(c.Wire, tt.Count),
			OutsidePct: 100 * float64(c.Total()) / float64(tt.Response)})
	}
	if resp > 0 {
		r.OutsidePct = 100 * float64(outside) / float64(resp)
	}
	return r
}
