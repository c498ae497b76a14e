package memcached_test

import (
	"bufio"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/tier"
	"github.com/enginelab/enginelab/cache/tier/memcached"
	"github.com/enginelab/enginelab/cache/tier/memcached/memcachedtest"
	"github.com/enginelab/enginelab/cache/tier/tiertest"
	"github.com/stretchr/testify/require"
)

// testPageSize is the page size of the tests: the smallest allowed.
const testPageSize = 4096

// benchPageSize is the benchmarks' page size, the default.
const benchPageSize = 16 << 10

// newMemcached makes a tier over servers with pageSize pages and a short
// timeout, closed at the end of the test.
func newMemcached(t *testing.T, pageSize int, servers ...string) *memcached.Tier {
	t.Helper()
	return newMemcachedTimeout(t, pageSize, calmTimeout, servers...)
}

// calmTimeout is the timeout of tiers whose tests do not test timeouts:
// long enough that a loaded machine (the race detector, other packages'
// tests) never turns a slow answer into an error. The tests of dead and
// hung servers use hungTimeout.
const (
	calmTimeout = 10 * time.Second
	hungTimeout = 50 * time.Millisecond
)

func newMemcachedTimeout(t *testing.T, pageSize int, timeout time.Duration, servers ...string) *memcached.Tier {
	t.Helper()
	tr, err := memcached.New(servers, &memcached.Options{PageSize: pageSize, Timeout: timeout})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, tr.Close()) })
	return tr
}

func TestMemcachedTierBasics(t *testing.T) {
	addr, _ := memcachedtest.Start(t)
	tr := newMemcached(t, testPageSize, addr)
	require.Equal(t, "memcached", tr.Name())
	require.Equal(t, []string{addr}, tr.Servers())
	s := tr.Stats()
	require.Equal(t, int64(64<<20), s.Capacity, "the server's -m")
	require.Equal(t, int64(-1), s.Items)
	require.Equal(t, int64(-1), s.Bytes)
	tiertest.Basics(t, tr, testPageSize)
}

// TestMemcachedTierModel runs the model with a fresh server for each tier,
// so that each starts empty. Inexact: the budget is the server's (-m), not
// the capacity the model asks for, and the server evicts as it likes.
// Pages of up to testPageSize bytes fit the tier's page size.
func TestMemcachedTierModel(t *testing.T) {
	memcachedtest.Require(t)
	tiertest.Model(t, func(t testing.TB, _ int64) tier.Tier {
		addr, _ := memcachedtest.Start(t)
		tr, err := memcached.New([]string{addr}, &memcached.Options{PageSize: testPageSize, Timeout: calmTimeout})
		require.NoError(t, err)
		return tr
	}, false)
}

func TestMemcachedTierConcurrent(t *testing.T) {
	addr, _ := memcachedtest.Start(t)
	tr := newMemcached(t, testPageSize, addr)
	tiertest.Concurrent(t, tr, testPageSize)
	require.Zero(t, tr.Stats().Errors)
}

func TestMemcachedTierConfig(t *testing.T) {
	addr, _ := memcachedtest.Start(t)
	for name, c := range map[string]struct {
		servers []string
		o       *memcached.Options
	}{
		"no options":     {[]string{addr}, nil},
		"no page size":   {[]string{addr}, &memcached.Options{}},
		"bad page size":  {[]string{addr}, &memcached.Options{PageSize: 5000}},
		"no servers":     {nil, &memcached.Options{PageSize: testPageSize}},
		"bad address":    {[]string{"127.0.0.1:notaport"}, &memcached.Options{PageSize: testPageSize}},
		"negative times": {[]string{addr}, &memcached.Options{PageSize: testPageSize, Timeout: -1}},
	} {
		_, err := memcached.New(c.servers, c.o)
		require.ErrorIs(t, err, tier.ErrInvalidOptions, name)
	}
}

// TestMemcachedTierUnreachable: a server nobody listens on fails the
// construction, by name.
func TestMemcachedTierUnreachable(t *testing.T) {
	addr, _ := memcachedtest.Start(t)
	dead := freeAddr(t)
	_, err := memcached.New([]string{addr, dead}, &memcached.Options{PageSize: testPageSize})
	require.Error(t, err)
	require.ErrorContains(t, err, dead)
}

// freeAddr returns a loopback address nothing listens on (it did a moment
// ago; nothing in these tests binds ports other than through the kernel's
// choice).
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// TestMemcachedTierItemSizeLimit: a server whose items are too small for a
// page (memcached -I) is refused at construction with ErrTierTooLarge; one
// whose items hold a page serves it.
func TestMemcachedTierItemSizeLimit(t *testing.T) {
	// memcached 1.6 takes -I down to 1k, with slab_chunk_max no larger.
	small, _ := memcachedtest.Start(t, "-I", "8k", "-o", "slab_chunk_max=4096")
	big, _ := memcachedtest.Start(t)

	_, err := memcached.New([]string{small}, &memcached.Options{PageSize: 8192, Timeout: calmTimeout})
	require.ErrorIs(t, err, tier.ErrTooLarge, "8 KiB pages in 8 KiB items leave no room for key and header")
	require.ErrorContains(t, err, small)
	require.ErrorContains(t, err, "item_size_max 8192")

	_, err = memcached.New([]string{big, small}, &memcached.Options{PageSize: 16384, Timeout: calmTimeout})
	require.ErrorIs(t, err, tier.ErrTooLarge, "one server too small refuses the tier")
	require.ErrorContains(t, err, small)

	tr := newMemcached(t, 4096, small) // 4 KiB pages fit in 8 KiB items
	k := tiertest.Key(1, 1, 1, 1)
	stored, err := tr.Put(k, 1, tiertest.Page(4096, k, 1))
	require.NoError(t, err)
	require.True(t, stored)
	dst := make([]byte, 4096)
	found, err := tr.Get(k, 1, dst)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, tiertest.Page(4096, k, 1), dst)

	// A page longer than the tier's page size is dropped, not sent, and
	// takes the page it would have replaced with it.
	stored, err = tr.Put(k, 2, make([]byte, 8192))
	require.NoError(t, err)
	require.False(t, stored)
	require.Equal(t, int64(1), tr.Stats().Drops)
	found, err = tr.Get(k, 1, dst)
	require.NoError(t, err)
	require.False(t, found, "the page a dropped put replaced")
}

// TestMemcachedTierServerKilled: once its server is gone, every call fails
// promptly with an error, counted; none hangs.
func TestMemcachedTierServerKilled(t *testing.T) {
	addr, stop := memcachedtest.Start(t)
	tr := newMemcachedTimeout(t, testPageSize, hungTimeout, addr)
	dst := make([]byte, testPageSize)
	for n := range uint32(8) {
		k := tiertest.Key(1, 1, 1, n)
		_, err := tr.Put(k, 1, tiertest.Page(testPageSize, k, 1))
		require.NoError(t, err)
	}
	found, err := tr.Get(tiertest.Key(1, 1, 1, 0), 1, dst)
	require.NoError(t, err)
	require.True(t, found)

	stop()
	calls := 0
	for n := range uint32(8) {
		k := tiertest.Key(1, 1, 1, n)
		requireQuick(t, func() {
			_, err := tr.Get(k, 1, dst)
			require.Error(t, err, "get after the server died")
			_, err = tr.Put(k, 2, tiertest.Page(testPageSize, k, 2))
			require.Error(t, err, "put after the server died")
			require.Error(t, tr.Delete(k), "delete after the server died")
		})
		calls += 3
	}
	s := tr.Stats()
	require.Equal(t, int64(calls), s.Errors)
	require.Equal(t, int64(1), s.Hits, "only the hit before the kill")
}

// TestMemcachedTierServerHung: a server that stops answering costs each
// call about the timeout, then an error. The server is a stand-in that
// answers the tier's construction probe and then nothing, ever.
func TestMemcachedTierServerHung(t *testing.T) {
	addr := startSilentServer(t)
	tr := newMemcachedTimeout(t, testPageSize, hungTimeout, addr)
	k := tiertest.Key(1, 1, 1, 1)
	dst := make([]byte, testPageSize)
	requireQuick(t, func() {
		_, err := tr.Get(k, 1, dst)
		require.Error(t, err, "get from a hung server")
		var ne net.Error
		require.True(t, errors.As(err, &ne) && ne.Timeout(), "want a timeout, got %v", err)
	})
	requireQuick(t, func() {
		_, err := tr.Put(k, 2, tiertest.Page(testPageSize, k, 2))
		require.Error(t, err, "put to a hung server")
	})
	requireQuick(t, func() { require.Error(t, tr.Delete(k), "delete on a hung server") })
	require.Equal(t, int64(3), tr.Stats().Errors)
}

// startSilentServer listens on loopback and, on each connection, answers
// "stats settings" as a memcached with 1 MiB items would, and then reads
// whatever comes without ever answering. It stops at the end of the test.
func startSilentServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return // closed
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return // closed
					}
					if line == "stats settings\r\n" {
						_, _ = c.Write([]byte("STAT maxbytes 67108864\r\nSTAT item_size_max 1048576\r\nEND\r\n"))
					}
				}
			})
		}
	})
	return l.Addr().String()
}

// requireQuick runs f, which makes calls to a dead or hung server with
// hungTimeout. Each call must come back with an error (f asserts it); a
// call that hung instead would hold the test until go test's own timeout
// kills the binary, which names this test. No wall-clock bound is asserted:
// how long the timeout takes on a loaded machine is not what is tested.
func requireQuick(t *testing.T, f func()) {
	t.Helper()
	f()
}

// TestMemcachedTierTwoServers: pages are spread over both servers, each
// page on exactly one.
func TestMemcachedTierTwoServers(t *testing.T) {
	a, _ := memcachedtest.Start(t)
	b, _ := memcachedtest.Start(t)
	tr := newMemcached(t, testPageSize, a, b)
	require.Equal(t, int64(2*64<<20), tr.Stats().Capacity)
	const pages = 200
	for n := range uint32(pages) {
		k := tiertest.Key(5, 6, 1, n)
		stored, err := tr.Put(k, 1, tiertest.Page(testPageSize, k, 1))
		require.NoError(t, err)
		require.True(t, stored)
	}
	// Each server read alone, through a tier of its own.
	onA, onB := newMemcached(t, testPageSize, a), newMemcached(t, testPageSize, b)
	dst := make([]byte, testPageSize)
	var inA, inB int
	for n := range uint32(pages) {
		k := tiertest.Key(5, 6, 1, n)
		fa, err := onA.Get(k, 1, dst)
		require.NoError(t, err)
		fb, err := onB.Get(k, 1, dst)
		require.NoError(t, err)
		require.True(t, fa != fb, "page %d: on a %v, on b %v: want exactly one", n, fa, fb)
		if fa {
			inA++
		} else {
			inB++
		}
		found, err := tr.Get(k, 1, dst)
		require.NoError(t, err)
		require.True(t, found)
		require.Equal(t, tiertest.Page(testPageSize, k, 1), dst)
	}
	t.Logf("%d pages: %d on %s, %d on %s", pages, inA, a, inB, b)
	// CRC-32 modulo 2 over 200 keys: far from all on one side.
	require.Greater(t, inA, pages/5)
	require.Greater(t, inB, pages/5)
}

// The memcached tests, rerun with no memcached in PATH, skip one by one
// with the reason (CI unset) and fail under CI=true: a test that starts
// its server from the wrong goroutine would panic here.
func TestNoMemcachedBinary(t *testing.T) {
	memcachedtest.CheckSkipsWithout(t, "^TestMemcachedTier")
}

// BenchmarkTierGetMemcached reads from a memcached on loopback: one round
// trip per page.
func BenchmarkTierGetMemcached(b *testing.B) {
	addr, _ := memcachedtest.Start(b)
	tr, err := memcached.New([]string{addr}, &memcached.Options{PageSize: benchPageSize})
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	tiertest.BenchGetWarm(b, tr)
}

// A memcached tier's budget (its servers' -m) is other processes' memory.
func TestInProcessBytesMemcached(t *testing.T) {
	addr, _ := memcachedtest.Start(t)
	tr, err := memcached.New([]string{addr}, &memcached.Options{PageSize: page.DefaultSize})
	require.NoError(t, err)
	defer tr.Close()
	require.Positive(t, tr.Stats().Capacity)
	require.Zero(t, tier.InProcessBytes(tr))
}
