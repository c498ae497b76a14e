package sim

import (
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/enginelab/enginelab/cache/tier"
	"github.com/enginelab/enginelab/cache/tier/lru"
	"github.com/enginelab/enginelab/cache/tier/memcached"
	"github.com/enginelab/enginelab/cache/tier/ristretto"
	"github.com/enginelab/enginelab/cache/tier/slab"
	"github.com/enginelab/enginelab/cache/tier/slru"
	"github.com/enginelab/enginelab/sim/sched"
)

// The memcached models (cache/tier/slab) as --remote backends: one
// server of that release, its -m the tier's budget (--remote-size), its
// pointer size --slab-pointer-size, with or without Waffle Grid's MRU
// patch (--slab-mru-patch). Deterministic, so simulated mode takes them.
const (
	slabBackend125  = "memcached-" + string(slab.Release125)
	slabBackend132  = "memcached-" + string(slab.Release132)
	slabBackend1618 = "memcached-" + string(slab.Release1618)
)

// isSlab says whether backend is a memcached model.
func isSlab(backend string) bool {
	switch backend {
	case slabBackend125, slabBackend132, slabBackend1618:
		return true
	}
	return false
}

// SlabParams returns the memcached model's parameters for c's backend
// (which must be one, isSlab), with a limit of size bytes and the clock
// now (nil: a clock that stands still).
func (c *TPCCConfig) SlabParams(size int64, now func() time.Duration) slab.Params {
	p := slab.Params{Release: slab.Release(strings.TrimPrefix(c.Remote.Backend, "memcached-")), PointerSize: c.SlabPointerSize,
		MaxBytes: size, MRUPatch: c.SlabMRUPatch, Now: now}
	if p.PointerSize == 0 {
		p.PointerSize = 4 // Waffle Grid's 32-bit build
		if p.Release == slab.Release1618 {
			p.PointerSize = 8
		}
	}
	return p
}

// RemoteSpec is the remote page tier of a job (--remote): a backend and,
// for memcached, its servers.
type RemoteSpec struct {
	Backend string   // "none", "ristretto", "lru", "slru" or "memcached"
	Servers []string // memcached's host:port list
}

// RemoteBackends lists --remote's accepted forms.
const RemoteBackends = "none, ristretto, lru, slru, memcached=host:port[,host:port...], memcached-1.2.5, memcached-1.3.2, memcached-1.6.18 (models of one memcached server: its slab allocator)"

// ParseRemote parses --remote's value.
func ParseRemote(s string) (RemoteSpec, error) {
	name, servers, hasServers := strings.Cut(s, "=")
	switch name {
	case "none", "ristretto", "lru", "slru", slabBackend125, slabBackend132, slabBackend1618:
		if hasServers {
			return RemoteSpec{}, fmt.Errorf("sim: %w: --remote %s: only memcached takes servers", ErrInvalidConfig, s)
		}
		return RemoteSpec{Backend: name}, nil
	case "memcached":
		if !hasServers || servers == "" {
			return RemoteSpec{}, fmt.Errorf("sim: %w: --remote %s: name the servers, as memcached=127.0.0.1:11211", ErrInvalidConfig, s)
		}
		spec := RemoteSpec{Backend: name}
		for _, a := range strings.Split(servers, ",") {
			if _, _, err := net.SplitHostPort(a); err != nil {
				return RemoteSpec{}, fmt.Errorf("sim: %w: --remote %s: server %q: want host:port", ErrInvalidConfig, s, a)
			}
			spec.Servers = append(spec.Servers, a)
		}
		return spec, nil
	}
	return RemoteSpec{}, fmt.Errorf("sim: %w: --remote %s: want one of %s", ErrInvalidConfig, s, RemoteBackends)
}

// String is the spec in --remote's form.
func (r RemoteSpec) String() string {
	if r.Backend == "" {
		return "none"
	}
	if len(r.Servers) > 0 {
		return r.Backend + "=" + strings.Join(r.Servers, ",")
	}
	return r.Backend
}

// openTier opens the backend of spec with a budget of size bytes for pages
// of pageSize bytes; nil for none. A memcached model takes slabParams.
func openTier(spec RemoteSpec, size int64, pageSize int, slabParams func() slab.Params) (tier.Tier, error) {
	switch spec.Backend {
	case "", "none":
		return nil, nil
	case slabBackend125, slabBackend132, slabBackend1618:
		return slab.NewTier(slabParams())
	case "ristretto":
		return ristretto.New(size)
	case "lru":
		return lru.New(size)
	case "slru":
		return slru.New(size, nil)
	case "memcached":
		return memcached.New(spec.Servers, &memcached.Options{PageSize: pageSize})
	}
	return nil, fmt.Errorf("sim: %w: remote tier %q", ErrInvalidConfig, spec.Backend)
}

// openTier opens the job's remote tier, and the page trace over it.
func (j *job) openTier() error {
	c := j.cfg
	// memcached's clock is virtual time in simulated mode (its LRU's
	// 60-second update rule): the scheduler, made after the tier.
	now := func() time.Duration {
		if j.sched != nil {
			return j.sched.Now().Sub(sched.Epoch)
		}
		return time.Since(j.started)
	}
	remote, err := openTier(c.Remote, j.tierSize, j.pageSize, func() slab.Params { return c.SlabParams(j.tierSize, now) })
	if err != nil {
		return fmt.Errorf("sim: %w: --remote %s: %w", ErrInvalidConfig, c.Remote, err)
	}
	j.tier, j.backend = remote, remote != nil
	j.slab, _ = remote.(*slab.Tier)
	if c.Trace == "" {
		return nil
	}
	// The page trace records the calls the pool makes to its tier; with
	// no tier, to a tier that keeps nothing, so the stream is the pool's
	// own (misses and evictions), whatever a tier would have answered.
	f, err := os.Create(c.Trace)
	if err != nil {
		j.close()
		return fmt.Errorf("sim: %w: --trace: %w", ErrInvalidConfig, err)
	}
	inner := remote
	if inner == nil {
		inner = tier.NewNullTier()
	}
	mode := c.RemoteMode
	if mode == "" {
		mode = tier.Exclusive
	}
	j.traceFile = f
	j.trace = tier.NewTraceTier(inner, f, j.pageSize, mode)
	j.tier = j.trace
	return nil
}
