package cache_test

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/enginelab/enginelab/internal/memcachedtest"

	"github.com/enginelab/enginelab/cache"
	"github.com/stretchr/testify/require"
)

// The two real Tier backends: ristretto (in process) and memcached (real
// servers started by startMemcached).

// tierPage is the page the backend tests store for k at version v: every
// 8-byte word says (k, v), so that a page returned for another key or torn
// between two versions shows.
func tierPage(size int, k cache.TierKey, v uint64) []byte {
	p := make([]byte, size)
	tag := k.DB*31 ^ k.Epoch*37 ^ uint64(k.ID.Space)<<40 ^ uint64(k.ID.Page)<<8 ^ v<<56
	for i := 0; i+8 <= size; i += 8 {
		binary.LittleEndian.PutUint64(p[i:], tag^uint64(i))
	}
	return p
}

// tkey is a short TierKey constructor.
func tkey(db, epoch uint64, space, page uint32) cache.TierKey {
	return cache.TierKey{DB: db, Epoch: epoch, ID: pid(space, page)}
}

// waitTier applies a tier's pending puts if it applies them asynchronously
// (RistrettoTier.Wait), so that a test may read back what it put.
func waitTier(t cache.Tier) {
	if w, ok := t.(interface{ Wait() }); ok {
		w.Wait()
	}
}

// checkTierBasics runs a Tier with room for every page it is given
// through puts, gets, overwrites, deletes and Close, reading back after
// waitTier, and checks its answers and counters exactly (testTierModel
// must treat both backends as inexact: see their Model tests).
func checkTierBasics(t *testing.T, tier cache.Tier, pageSize int) {
	t.Helper()
	dst := make([]byte, pageSize)
	var want cache.TierStats // counters expected so far
	get := func(k cache.TierKey) (bool, []byte) {
		t.Helper()
		clear(dst)
		found, err := tier.Get(k, 0, dst)
		require.NoError(t, err, "get %v", k)
		want.Gets++
		if found {
			want.Hits++
		}
		return found, dst
	}
	put := func(k cache.TierKey, v uint64) {
		t.Helper()
		page := tierPage(pageSize, k, v)
		stored, err := tier.Put(k, v, page)
		require.NoError(t, err, "put %v", k)
		require.True(t, stored, "put %v", k)
		clear(page) // the tier must have taken a copy
		want.Puts++
	}

	k := tkey(7, 1, 1, 10)
	found, _ := get(k)
	require.False(t, found, "empty tier")

	put(k, 1)
	waitTier(tier)
	found, got := get(k)
	require.True(t, found)
	require.Equal(t, tierPage(pageSize, k, 1), got)

	put(k, 2) // overwrite
	waitTier(tier)
	found, got = get(k)
	require.True(t, found)
	require.Equal(t, tierPage(pageSize, k, 2), got, "overwritten page")

	// Keys differing in any one field are other pages.
	for _, other := range []cache.TierKey{tkey(8, 1, 1, 10), tkey(7, 2, 1, 10), tkey(7, 1, 2, 10), tkey(7, 1, 1, 11)} {
		found, _ := get(other)
		require.False(t, found, "%v must not see %v's page", other, k)
	}
	other := tkey(7, 1, 1, 11)
	put(other, 1)
	waitTier(tier)
	found, got = get(other)
	require.True(t, found)
	require.Equal(t, tierPage(pageSize, other, 1), got)
	found, got = get(k)
	require.True(t, found)
	require.Equal(t, tierPage(pageSize, k, 2), got, "a neighbour's put changed the page")

	require.NoError(t, tier.Delete(k))
	require.NoError(t, tier.Delete(tkey(9, 9, 9, 9)), "deleting a missing key")
	want.Deletes += 2
	waitTier(tier)
	found, _ = get(k)
	require.False(t, found, "deleted page")
	found, _ = get(other)
	require.True(t, found, "deleting one page removed another")

	s := tier.Stats()
	require.Equal(t, want.Puts, s.Puts, "Puts")
	require.Equal(t, want.Gets, s.Gets, "Gets")
	require.Equal(t, want.Hits, s.Hits, "Hits")
	require.Equal(t, want.Deletes, s.Deletes, "Deletes")
	require.Zero(t, s.Errors, "Errors")
	require.Zero(t, s.Drops, "Drops")

	require.NoError(t, tier.Close())
	require.NoError(t, tier.Close(), "second Close")
	_, err := tier.Get(k, 0, dst)
	require.ErrorIs(t, err, cache.ErrClosed)
	_, err = tier.Put(k, 0, dst)
	require.ErrorIs(t, err, cache.ErrClosed)
	require.ErrorIs(t, tier.Delete(k), cache.ErrClosed)
	s = tier.Stats()
	require.Equal(t, want.Puts, s.Puts, "Puts after Close")
	require.Equal(t, want.Hits, s.Hits, "Hits after Close")
	require.Equal(t, int64(3), s.Errors, "the calls after Close are errors")
}

// checkTierConcurrent has goroutines put, get and delete pages of a few
// keys at once, and checks that a page found is always one that was put
// for that key, whole. It is mostly for the race detector.
func checkTierConcurrent(t *testing.T, tier cache.Tier, pageSize int) {
	t.Helper()
	const workers, ops, keys = 4, 300, 16
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			dst := make([]byte, pageSize)
			for i := range ops {
				k := tkey(3, 4, 1, uint32((w*7+i)%keys))
				v := uint64(i % 8)
				switch i % 5 {
				case 0, 1:
					if _, err := tier.Put(k, v, tierPage(pageSize, k, v)); err != nil {
						errs <- err
						return
					}
				case 4:
					if err := tier.Delete(k); err != nil {
						errs <- err
						return
					}
				default:
					found, err := tier.Get(k, v, dst)
					if err != nil {
						errs <- err
						return
					}
					if found && !isTierPageOf(dst, k) {
						errs <- fmt.Errorf("get %v returned a page that was never put for it", k)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// isTierPageOf reports whether page is tierPage(len(page), k, v) for some
// version v < 8.
func isTierPageOf(page []byte, k cache.TierKey) bool {
	for v := range uint64(8) {
		if string(page) == string(tierPage(len(page), k, v)) {
			return true
		}
	}
	return false
}

// ---- ristretto ----

func newRistretto(t *testing.T, capacity int64) *cache.RistrettoTier {
	t.Helper()
	tier, err := cache.NewRistrettoTier(capacity)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, tier.Close()) })
	return tier
}

func TestRistrettoTierBasics(t *testing.T) {
	tier := newRistretto(t, 1<<20)
	require.Equal(t, "ristretto", tier.Name())
	require.Equal(t, int64(1<<20), tier.Stats().Capacity)
	checkTierBasics(t, tier, testPageSize)
}

// TestRistrettoTierModel runs the model inexact: ristretto applies a put
// later (a Get right after it may miss) and its admission policy may
// refuse a page after Put reported it stored. "waited" waits after every
// Put and Delete, so that the model's reads find pages and check them.
func TestRistrettoTierModel(t *testing.T) {
	newTier := func(waited bool) tierFactory {
		return func(t testing.TB, capacity int64) cache.Tier {
			tier, err := cache.NewRistrettoTier(capacity)
			require.NoError(t, err)
			if waited {
				return waitedTier{tier}
			}
			return tier
		}
	}
	t.Run("async", func(t *testing.T) { testTierModel(t, newTier(false), false) })
	t.Run("waited", func(t *testing.T) { testTierModel(t, newTier(true), false) })
}

// waitedTier is a RistrettoTier whose Put and Delete return once applied.
type waitedTier struct{ *cache.RistrettoTier }

func (w waitedTier) Put(k cache.TierKey, lsn uint64, page []byte) (bool, error) {
	defer w.Wait()
	return w.RistrettoTier.Put(k, lsn, page)
}

func (w waitedTier) Delete(k cache.TierKey) error {
	defer w.Wait()
	return w.RistrettoTier.Delete(k)
}

func TestRistrettoTierConcurrent(t *testing.T) {
	tier := newRistretto(t, 1<<20)
	checkTierConcurrent(t, tier, testPageSize)
	tier.Wait()
	s := tier.Stats()
	require.Zero(t, s.Errors)
	require.LessOrEqual(t, s.Items, int64(16))
	require.Equal(t, s.Items*testPageSize, s.Bytes)
}

func TestRistrettoTierConfig(t *testing.T) {
	for _, c := range []int64{0, -1} {
		_, err := cache.NewRistrettoTier(c)
		require.ErrorIs(t, err, cache.ErrInvalidConfig, "capacity %d", c)
	}
}

// TestRistrettoTierItemsBytes checks Items and Bytes: page bytes only
// (IgnoreInternalCost), following puts, overwrites and deletes.
func TestRistrettoTierItemsBytes(t *testing.T) {
	tier := newRistretto(t, 1<<20)
	for n := range uint32(10) {
		k := tkey(1, 1, 1, n)
		_, err := tier.Put(k, 1, tierPage(testPageSize, k, 1))
		require.NoError(t, err)
	}
	tier.Wait()
	s := tier.Stats()
	require.Equal(t, int64(10), s.Items)
	require.Equal(t, int64(10*testPageSize), s.Bytes)

	k := tkey(1, 1, 1, 3)
	_, err := tier.Put(k, 2, tierPage(testPageSize, k, 2)) // an overwrite: no new item
	require.NoError(t, err)
	require.NoError(t, tier.Delete(tkey(1, 1, 1, 4)))
	tier.Wait()
	s = tier.Stats()
	require.Equal(t, int64(9), s.Items)
	require.Equal(t, int64(9*testPageSize), s.Bytes)
	require.Zero(t, s.Evictions, "a Delete is not an eviction")
	require.Zero(t, s.Drops)
}

// TestRistrettoTierDrops fills a tier far beyond its capacity: pages are
// evicted or refused, and counted, and the tier stays within its budget.
func TestRistrettoTierDrops(t *testing.T) {
	const pages, fit = 1000, 32
	tier := newRistretto(t, fit*testPageSize)
	dst := make([]byte, testPageSize)
	for n := range uint32(pages) {
		k := tkey(1, 1, 1, n)
		_, err := tier.Put(k, 1, tierPage(testPageSize, k, 1))
		require.NoError(t, err)
		if n%4 == 0 {
			// Some reads, so that TinyLFU has frequencies to compare.
			_, err = tier.Get(tkey(1, 1, 1, n/2), 1, dst)
			require.NoError(t, err)
		}
	}
	tier.Wait()
	s := tier.Stats()
	t.Logf("stats after %d puts into room for %d: %+v", pages, fit, s)
	require.Equal(t, int64(pages), s.Puts)
	require.Positive(t, s.Drops+s.Evictions, "nothing dropped or evicted")
	require.LessOrEqual(t, s.Items, int64(fit))
	require.LessOrEqual(t, s.Bytes, s.Capacity)
	require.Equal(t, s.Items*testPageSize, s.Bytes)
	// Every page put is held, evicted or dropped.
	require.Equal(t, int64(pages), s.Items+s.Evictions+s.Drops)

	held := 0
	for n := range uint32(pages) {
		k := tkey(1, 1, 1, n)
		found, err := tier.Get(k, 1, dst)
		require.NoError(t, err)
		if found {
			held++
			require.Equal(t, tierPage(testPageSize, k, 1), dst)
		}
	}
	require.Equal(t, s.Items, int64(held), "pages found against Items")
}

// TestRistrettoTierRepeatedPut: a key put twice without Wait in between
// holds the second page once the buffer is drained. Ristretto alone would
// mostly keep the first: the second Put, queued as a new key behind the
// first, is refused as a key it already has (RistrettoTier.onReject).
func TestRistrettoTierRepeatedPut(t *testing.T) {
	const pages = 50
	tier := newRistretto(t, 1<<20)
	dst := make([]byte, testPageSize)
	for n := range uint32(pages) {
		k := tkey(1, 1, 1, n)
		for v := uint64(1); v <= 3; v++ {
			stored, err := tier.Put(k, v, tierPage(testPageSize, k, v))
			require.NoError(t, err)
			require.True(t, stored)
		}
	}
	tier.Wait()
	for n := range uint32(pages) {
		k := tkey(1, 1, 1, n)
		found, err := tier.Get(k, 3, dst)
		require.NoError(t, err)
		require.True(t, found, "page %d", n)
		if string(dst) != string(tierPage(testPageSize, k, 3)) {
			require.True(t, isTierPageOf(dst, k), "page %d: a page never put for it", n)
			t.Fatalf("page %d: an older page after the buffer was drained", n)
		}
	}
	s := tier.Stats()
	require.Zero(t, s.Drops)
	require.Equal(t, int64(pages), s.Items)
	require.Equal(t, int64(pages*testPageSize), s.Bytes)
}

// TestRistrettoTierTooLarge: a page larger than the whole budget is
// dropped at once, not sent to the policy, and the page it would have
// replaced goes too.
func TestRistrettoTierTooLarge(t *testing.T) {
	tier := newRistretto(t, testPageSize)
	k := tkey(1, 1, 1, 1)
	stored, err := tier.Put(k, 1, tierPage(testPageSize/2, k, 1))
	require.NoError(t, err)
	require.True(t, stored)
	tier.Wait()
	require.Equal(t, int64(1), tier.Stats().Items)

	stored, err = tier.Put(k, 2, tierPage(2*testPageSize, k, 2))
	require.NoError(t, err)
	require.False(t, stored)
	tier.Wait()
	found, err := tier.Get(k, 1, make([]byte, testPageSize/2))
	require.NoError(t, err)
	require.False(t, found, "the page a dropped put replaced")
	s := tier.Stats()
	require.Equal(t, int64(1), s.Drops)
	require.Zero(t, s.Items)
	require.Zero(t, s.Bytes)
}

// ---- memcached ----

// newMemcached makes a tier over servers with pageSize pages and a short
// timeout, closed at the end of the test.
func newMemcached(t *testing.T, pageSize int, servers ...string) *cache.MemcachedTier {
	t.Helper()
	tier, err := cache.NewMemcachedTier(servers, &cache.MemcachedOptions{PageSize: pageSize, Timeout: 50 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, tier.Close()) })
	return tier
}

func TestMemcachedTierBasics(t *testing.T) {
	addr, _ := memcachedtest.Start(t)
	tier := newMemcached(t, testPageSize, addr)
	require.Equal(t, "memcached", tier.Name())
	require.Equal(t, []string{addr}, tier.Servers())
	s := tier.Stats()
	require.Equal(t, int64(64<<20), s.Capacity, "the server's -m")
	require.Equal(t, int64(-1), s.Items)
	require.Equal(t, int64(-1), s.Bytes)
	checkTierBasics(t, tier, testPageSize)
}

// TestMemcachedTierModel runs the model with a fresh server for each tier,
// so that each starts empty. Inexact: the budget is the server's (-m), not
// the capacity the model asks for, and the server evicts as it likes.
// Pages of up to testPageSize bytes fit the tier's page size.
func TestMemcachedTierModel(t *testing.T) {
	memcachedtest.Require(t)
	testTierModel(t, func(t testing.TB, _ int64) cache.Tier {
		addr, _ := memcachedtest.Start(t)
		tier, err := cache.NewMemcachedTier([]string{addr}, &cache.MemcachedOptions{PageSize: testPageSize})
		require.NoError(t, err)
		return tier
	}, false)
}

func TestMemcachedTierConcurrent(t *testing.T) {
	addr, _ := memcachedtest.Start(t)
	tier := newMemcached(t, testPageSize, addr)
	checkTierConcurrent(t, tier, testPageSize)
	require.Zero(t, tier.Stats().Errors)
}

func TestMemcachedTierConfig(t *testing.T) {
	addr, _ := memcachedtest.Start(t)
	for name, c := range map[string]struct {
		servers []string
		o       *cache.MemcachedOptions
	}{
		"no options":     {[]string{addr}, nil},
		"no page size":   {[]string{addr}, &cache.MemcachedOptions{}},
		"bad page size":  {[]string{addr}, &cache.MemcachedOptions{PageSize: 5000}},
		"no servers":     {nil, &cache.MemcachedOptions{PageSize: testPageSize}},
		"bad address":    {[]string{"127.0.0.1:notaport"}, &cache.MemcachedOptions{PageSize: testPageSize}},
		"negative times": {[]string{addr}, &cache.MemcachedOptions{PageSize: testPageSize, Timeout: -1}},
	} {
		_, err := cache.NewMemcachedTier(c.servers, c.o)
		require.ErrorIs(t, err, cache.ErrInvalidConfig, name)
	}
}

// TestMemcachedTierUnreachable: a server nobody listens on fails the
// construction, by name.
func TestMemcachedTierUnreachable(t *testing.T) {
	addr, _ := memcachedtest.Start(t)
	dead := freeAddr(t)
	_, err := cache.NewMemcachedTier([]string{addr, dead}, &cache.MemcachedOptions{PageSize: testPageSize})
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

	_, err := cache.NewMemcachedTier([]string{small}, &cache.MemcachedOptions{PageSize: 8192})
	require.ErrorIs(t, err, cache.ErrTierTooLarge, "8 KiB pages in 8 KiB items leave no room for key and header")
	require.ErrorContains(t, err, small)
	require.ErrorContains(t, err, "item_size_max 8192")

	_, err = cache.NewMemcachedTier([]string{big, small}, &cache.MemcachedOptions{PageSize: 16384})
	require.ErrorIs(t, err, cache.ErrTierTooLarge, "one server too small refuses the tier")
	require.ErrorContains(t, err, small)

	tier := newMemcached(t, 4096, small) // 4 KiB pages fit in 8 KiB items
	k := tkey(1, 1, 1, 1)
	stored, err := tier.Put(k, 1, tierPage(4096, k, 1))
	require.NoError(t, err)
	require.True(t, stored)
	dst := make([]byte, 4096)
	found, err := tier.Get(k, 1, dst)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, tierPage(4096, k, 1), dst)

	// A page longer than the tier's page size is dropped, not sent, and
	// takes the page it would have replaced with it.
	stored, err = tier.Put(k, 2, make([]byte, 8192))
	require.NoError(t, err)
	require.False(t, stored)
	require.Equal(t, int64(1), tier.Stats().Drops)
	found, err = tier.Get(k, 1, dst)
	require.NoError(t, err)
	require.False(t, found, "the page a dropped put replaced")
}

// TestMemcachedTierServerKilled: once its server is gone, every call fails
// promptly with an error, counted; none hangs.
func TestMemcachedTierServerKilled(t *testing.T) {
	addr, stop := memcachedtest.Start(t)
	tier := newMemcached(t, testPageSize, addr)
	dst := make([]byte, testPageSize)
	for n := range uint32(8) {
		k := tkey(1, 1, 1, n)
		_, err := tier.Put(k, 1, tierPage(testPageSize, k, 1))
		require.NoError(t, err)
	}
	found, err := tier.Get(tkey(1, 1, 1, 0), 1, dst)
	require.NoError(t, err)
	require.True(t, found)

	stop()
	calls := 0
	for n := range uint32(8) {
		k := tkey(1, 1, 1, n)
		requireQuick(t, func() {
			_, err := tier.Get(k, 1, dst)
			require.Error(t, err, "get after the server died")
			_, err = tier.Put(k, 2, tierPage(testPageSize, k, 2))
			require.Error(t, err, "put after the server died")
			require.Error(t, tier.Delete(k), "delete after the server died")
		})
		calls += 3
	}
	s := tier.Stats()
	require.Equal(t, int64(calls), s.Errors)
	require.Equal(t, int64(1), s.Hits, "only the hit before the kill")
}

// TestMemcachedTierServerHung: a server that stops answering costs each
// call about the timeout, then an error. The server is a stand-in that
// answers the tier's construction probe and then nothing, ever.
func TestMemcachedTierServerHung(t *testing.T) {
	addr := startSilentServer(t)
	tier := newMemcached(t, testPageSize, addr) // 50 ms timeout
	k := tkey(1, 1, 1, 1)
	dst := make([]byte, testPageSize)
	requireQuick(t, func() {
		_, err := tier.Get(k, 1, dst)
		require.Error(t, err, "get from a hung server")
		var ne net.Error
		require.True(t, errors.As(err, &ne) && ne.Timeout(), "want a timeout, got %v", err)
	})
	requireQuick(t, func() {
		_, err := tier.Put(k, 2, tierPage(testPageSize, k, 2))
		require.Error(t, err, "put to a hung server")
	})
	requireQuick(t, func() { require.Error(t, tier.Delete(k), "delete on a hung server") })
	require.Equal(t, int64(3), tier.Stats().Errors)
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

// requireQuick runs f, which makes calls to a dead or hung server with a
// 50 ms timeout, and fails if it takes many times that: a hang, not a
// timeout. The bound is loose, for a loaded machine.
func requireQuick(t *testing.T, f func()) {
	t.Helper()
	start := time.Now()
	f()
	require.Less(t, time.Since(start), 5*time.Second, "calls to a dead server must time out, not hang")
}

// TestMemcachedTierTwoServers: pages are spread over both servers, each
// page on exactly one.
func TestMemcachedTierTwoServers(t *testing.T) {
	a, _ := memcachedtest.Start(t)
	b, _ := memcachedtest.Start(t)
	tier := newMemcached(t, testPageSize, a, b)
	require.Equal(t, int64(2*64<<20), tier.Stats().Capacity)
	const pages = 200
	for n := range uint32(pages) {
		k := tkey(5, 6, 1, n)
		stored, err := tier.Put(k, 1, tierPage(testPageSize, k, 1))
		require.NoError(t, err)
		require.True(t, stored)
	}
	// Each server read alone, through a tier of its own.
	onA, onB := newMemcached(t, testPageSize, a), newMemcached(t, testPageSize, b)
	dst := make([]byte, testPageSize)
	var inA, inB int
	for n := range uint32(pages) {
		k := tkey(5, 6, 1, n)
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
		found, err := tier.Get(k, 1, dst)
		require.NoError(t, err)
		require.True(t, found)
		require.Equal(t, tierPage(testPageSize, k, 1), dst)
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
