package memcached

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/tier"

	"github.com/bradfitz/gomemcache/memcache"
)

// Options configure a Tier.
type Options struct {
	// PageSize is the database's page size (required): the tier refuses
	// servers whose items cannot hold a page of this size.
	PageSize int
	// Timeout bounds each connect, read and write, so that a dead or hung
	// server costs a caller at most about this much before its call fails
	// (and the pool goes to the store). Default 100 ms: a loopback or LAN
	// round trip for a page takes well under a millisecond.
	Timeout time.Duration
	// MaxIdleConns is the number of idle connections kept per server, for
	// reuse by the next call: set it to the number of goroutines that may
	// use the tier at once, or calls beyond it open (and close) a
	// connection each. Default 64.
	MaxIdleConns int
}

// DefaultTimeout and DefaultIdleConns are the defaults of Options.
const (
	DefaultTimeout   = 100 * time.Millisecond
	DefaultIdleConns = 64
)

// itemOverhead is what a memcached item holds besides its key and
// value: measured on memcached 1.6 as 59 bytes (item header, CAS, the
// value's CRLF, flags and length suffix), rounded up for older and future
// layouts. A page fits a server if item_size_max ≥ page + longest key +
// this.
const itemOverhead = 128

// maxKeyLen is the length of the longest tier.Key.String().
var maxKeyLen = len(tier.Key{DB: ^uint64(0), Epoch: ^uint64(0), ID: page.ID{Space: ^uint32(0), Page: ^uint32(0)}}.String())

// Tier is a tier.Tier over one or more memcached servers (Waffle
// Grid's remote buffer pool): pages are spread over the servers by the
// client's key hash (CRC-32 of the key, modulo the number of servers), one
// page per item, keyed by tier.Key.String(), with no expiry. The servers
// decide what to evict; they may be shared with other databases (the keys
// carry the database's id and open epoch).
//
// Errors. A Get of a key the server does not hold is a miss, not an error.
// Anything else (a refused connection, a timeout, a server error) is
// returned and counted in Stats().Errors; the pool treats it as a miss.
// No call waits longer than about Timeout per network step, so a dead
// server slows its callers by at most that.
//
// Stats are counted by this client: Items, Bytes and Evictions are not
// known (the servers may hold other clients' items) and are -1, -1 and 0;
// Capacity is the sum of the servers' memory limits at construction.
type Tier struct {
	mc       *memcache.Client
	servers  []string
	pageSize int
	capacity int64
	closed   atomic.Bool

	puts, drops, gets, hits, deletes, errors atomic.Int64
}

var _ tier.Tier = (*Tier)(nil)

// New connects to servers (host:port, or a Unix socket path) and checks,
// on each, that a page of o.PageSize fits in one item; an error wrapping
// tier.ErrTooLarge names a server that cannot hold one, and an unreachable
// server is an error naming it.
func New(servers []string, o *Options) (*Tier, error) {
	if o == nil {
		return nil, fmt.Errorf("cache: %w: memcached tier: options are required (PageSize)", tier.ErrInvalidOptions)
	}
	opts := *o
	if !page.ValidSize(opts.PageSize) {
		return nil, fmt.Errorf("cache: %w: memcached tier page size %d: want a power of two from %d to %d",
			tier.ErrInvalidOptions, opts.PageSize, page.MinSize, page.MaxSize)
	}
	if len(servers) == 0 {
		return nil, fmt.Errorf("cache: %w: memcached tier: no servers", tier.ErrInvalidOptions)
	}
	if opts.Timeout < 0 || opts.MaxIdleConns < 0 {
		return nil, fmt.Errorf("cache: %w: memcached tier: negative Timeout %v or MaxIdleConns %d",
			tier.ErrInvalidOptions, opts.Timeout, opts.MaxIdleConns)
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxIdleConns == 0 {
		opts.MaxIdleConns = DefaultIdleConns
	}

	ss := new(memcache.ServerList)
	if err := ss.SetServers(servers...); err != nil {
		return nil, fmt.Errorf("cache: %w: memcached tier servers %q: %v", tier.ErrInvalidOptions, servers, err)
	}
	t := &Tier{
		servers:  append([]string(nil), servers...),
		pageSize: opts.PageSize,
	}
	need := opts.PageSize + maxKeyLen + itemOverhead
	// Construction happens once; a server slow to answer its first
	// question should not fail it, so the probe gets a longer leash.
	probeTimeout := max(opts.Timeout, time.Second)
	for _, s := range servers {
		set, err := memcachedSettings(s, probeTimeout)
		if err != nil {
			return nil, fmt.Errorf("cache: memcached tier: server %s: %w", s, err)
		}
		limit, err := strconv.ParseInt(set["item_size_max"], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("cache: memcached tier: server %s does not report item_size_max (stats settings): %q",
				s, set["item_size_max"])
		}
		if int64(need) > limit {
			return nil, fmt.Errorf("%w: memcached server %s: item_size_max %d, a %d-byte page needs %d with key and item header (memcached -I)",
				tier.ErrTooLarge, s, limit, opts.PageSize, need)
		}
		if mb, err := strconv.ParseInt(set["maxbytes"], 10, 64); err == nil {
			t.capacity += mb
		}
	}
	t.mc = memcache.NewFromSelector(ss)
	t.mc.Timeout = opts.Timeout
	t.mc.MaxIdleConns = opts.MaxIdleConns
	return t, nil
}

// memcachedSettings asks server for "stats settings", which gomemcache
// does not expose, over a connection of its own, and returns the settings
// by name.
func memcachedSettings(server string, timeout time.Duration) (map[string]string, error) {
	network := "tcp"
	if strings.Contains(server, "/") { // as gomemcache's ServerList
		network = "unix"
	}
	c, err := net.DialTimeout(network, server, timeout)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	if _, err := c.Write([]byte("stats settings\r\n")); err != nil {
		return nil, err
	}
	set := make(map[string]string)
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("stats settings: %w", err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "END" {
			return set, nil
		}
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "STAT" {
			return nil, fmt.Errorf("stats settings: unexpected reply %q", line)
		}
		set[f[1]] = f[2]
	}
}

// Name implements tier.Tier.
func (t *Tier) Name() string { return "memcached" }

// InProcessBytes is 0: the pages live in the servers, other processes
// (tier.InProcessBytes).
func (t *Tier) InProcessBytes() int64 { return 0 }

// Servers returns the servers the tier spreads pages over.
func (t *Tier) Servers() []string { return append([]string(nil), t.servers...) }

// Get implements tier.Tier. lsn is not used (the pool checks the page).
func (t *Tier) Get(k tier.Key, lsn uint64, dst []byte) (bool, error) {
	if t.closed.Load() {
		t.errors.Add(1)
		return false, tier.ErrClosed
	}
	t.gets.Add(1)
	it, err := t.mc.Get(k.String())
	switch {
	case errors.Is(err, memcache.ErrCacheMiss):
		return false, nil
	case err != nil:
		t.errors.Add(1)
		return false, fmt.Errorf("cache: memcached tier: get %s: %w", k.ID, err)
	case len(it.Value) != len(dst):
		t.errors.Add(1)
		return false, fmt.Errorf("cache: memcached tier: page %s holds %d bytes, want %d", k.ID, len(it.Value), len(dst))
	}
	copy(dst, it.Value)
	t.hits.Add(1)
	return true, nil
}

// Put implements tier.Tier. A page longer than the page size checked at
// construction is dropped (stored false) rather than sent to be refused,
// and the page it would have replaced is deleted: no older image outlives
// a failed put.
func (t *Tier) Put(k tier.Key, lsn uint64, page []byte) (bool, error) {
	if t.closed.Load() {
		t.errors.Add(1)
		return false, tier.ErrClosed
	}
	t.puts.Add(1)
	if len(page) > t.pageSize {
		t.drops.Add(1)
		if err := t.mc.Delete(k.String()); err != nil && !errors.Is(err, memcache.ErrCacheMiss) {
			t.errors.Add(1)
			return false, fmt.Errorf("cache: memcached tier: delete %s replaced by a dropped page: %w", k.ID, err)
		}
		return false, nil
	}
	// The client writes page out before Set returns; nothing keeps it.
	if err := t.mc.Set(&memcache.Item{Key: k.String(), Value: page}); err != nil {
		t.errors.Add(1)
		return false, fmt.Errorf("cache: memcached tier: set %s: %w", k.ID, err)
	}
	return true, nil
}

// Delete implements tier.Tier. Deleting a key the server does not hold is not
// an error.
func (t *Tier) Delete(k tier.Key) error {
	if t.closed.Load() {
		t.errors.Add(1)
		return tier.ErrClosed
	}
	t.deletes.Add(1)
	err := t.mc.Delete(k.String())
	if err == nil || errors.Is(err, memcache.ErrCacheMiss) {
		return nil
	}
	t.errors.Add(1)
	return fmt.Errorf("cache: memcached tier: delete %s: %w", k.ID, err)
}

// Stats implements tier.Tier.
func (t *Tier) Stats() tier.Stats {
	return tier.Stats{
		Items:    -1,
		Bytes:    -1,
		Capacity: t.capacity,
		Puts:     t.puts.Load(),
		Drops:    t.drops.Load(),
		Gets:     t.gets.Load(),
		Hits:     t.hits.Load(),
		Deletes:  t.deletes.Load(),
		Errors:   t.errors.Load(),
	}
}

// Close implements tier.Tier: it closes the idle connections; the pages stay on
// the servers (no later open can read them: its epoch differs). Calls
// made after Close fail with tier.ErrClosed; none may be in flight during it.
func (t *Tier) Close() error {
	if t.closed.Swap(true) {
		return nil
	}
	return t.mc.Close()
}
