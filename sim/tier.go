package sim

import (
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/enginelab/enginelab/cache/tier"
	"github.com/enginelab/enginelab/cache/tier/lru"
	"github.com/enginelab/enginelab/cache/tier/memcached"
	"github.com/enginelab/enginelab/cache/tier/ristretto"
	"github.com/enginelab/enginelab/cache/tier/slru"
)

// RemoteSpec is the remote page tier of a job (--remote): a backend and,
// for memcached, its servers.
type RemoteSpec struct {
	Backend string   // "none", "ristretto", "lru", "slru" or "memcached"
	Servers []string // memcached's host:port list
}

// RemoteBackends lists --remote's accepted forms.
const RemoteBackends = "none, ristretto, lru, slru, memcached=host:port[,host:port...]"

// ParseRemote parses --remote's value.
func ParseRemote(s string) (RemoteSpec, error) {
	name, servers, hasServers := strings.Cut(s, "=")
	switch name {
	case "none", "ristretto", "lru", "slru":
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
// of pageSize bytes; nil for none.
func openTier(spec RemoteSpec, size int64, pageSize int) (tier.Tier, error) {
	switch spec.Backend {
	case "", "none":
		return nil, nil
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
	remote, err := openTier(c.Remote, j.tierSize, j.pageSize)
	if err != nil {
		return fmt.Errorf("sim: %w: --remote %s: %w", ErrInvalidConfig, c.Remote, err)
	}
	j.tier, j.backend = remote, remote != nil
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
