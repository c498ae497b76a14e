package tiertest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/tier"
	"github.com/stretchr/testify/require"
)

// MaxOverhead is the most an exact backend may charge a page on top of
// its length: the model sizes its "everything fits" budget with it.
const MaxOverhead = 1024

// modelHeader is the self-description at the start of every model page:
// the key (DB, Epoch, Space, Page) and the LSN.
const modelHeader = 32

// ModelPage is the image the model tests put under k at version lsn, n
// bytes long (n >= modelHeader): the key and the LSN, then bytes derived
// from both. A page returned for another key, another version, or torn or
// aliased by the backend therefore shows (CheckModelPage).
func ModelPage(k tier.Key, lsn uint64, n int) []byte {
	p := make([]byte, n)
	binary.LittleEndian.PutUint64(p[0:], k.DB)
	binary.LittleEndian.PutUint64(p[8:], k.Epoch)
	binary.LittleEndian.PutUint32(p[16:], k.ID.Space)
	binary.LittleEndian.PutUint32(p[20:], k.ID.Page)
	binary.LittleEndian.PutUint64(p[24:], lsn)
	x := k.DB*0x9e3779b97f4a7c15 ^ k.Epoch*0xbf58476d1ce4e5b9 ^
		uint64(k.ID.Space)<<32 ^ uint64(k.ID.Page) ^ lsn*0x94d049bb133111eb
	var w [8]byte
	for i := modelHeader; i < n; i += 8 {
		x += 0x9e3779b97f4a7c15 // splitmix64
		z := x
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		binary.LittleEndian.PutUint64(w[:], z^z>>31)
		copy(p[i:], w[:])
	}
	return p
}

// CheckModelPage checks that got, which a tier returned for k, is an intact
// image put under k, and returns that image's LSN.
func CheckModelPage(k tier.Key, got []byte) (uint64, error) {
	if len(got) < modelHeader {
		return 0, fmt.Errorf("page for %s: %d bytes, shorter than a model page", k, len(got))
	}
	var g tier.Key
	g.DB = binary.LittleEndian.Uint64(got[0:])
	g.Epoch = binary.LittleEndian.Uint64(got[8:])
	g.ID.Space = binary.LittleEndian.Uint32(got[16:])
	g.ID.Page = binary.LittleEndian.Uint32(got[20:])
	lsn := binary.LittleEndian.Uint64(got[24:])
	if g != k {
		return 0, fmt.Errorf("page for %s holds the bytes of %s (lsn %d)", k, g, lsn)
	}
	if !bytes.Equal(got, ModelPage(k, lsn, len(got))) {
		return 0, fmt.Errorf("page for %s (lsn %d) is not an image that was put: torn or overwritten", k, lsn)
	}
	return lsn, nil
}

// scribble overwrites b, as a caller reusing its buffer would.
func scribble(b []byte) {
	for i := range b {
		b[i] = 0xee
	}
}

// modelKey is the model's knowledge of one key.
type modelKey struct {
	n      int             // page length used for this key
	latest uint64          // LSN of the page the tier should hold; 0: none (never stored, deleted, dropped)
	given  map[uint64]bool // LSN of every page ever put under the key
}

// tierModel runs one tier against the model, single-threaded: every call
// is checked at once and the counters after each.
type tierModel struct {
	t        *testing.T
	tr       tier.Tier
	exact    bool
	capacity int64
	keys     map[tier.Key]*modelKey
	lsn      uint64
	want     tier.Stats // the call counters and Errors expected (and Drops, when exact)
	prev     tier.Stats // the last Stats seen, for monotonic counters
}

func newTierModel(t *testing.T, newTier Factory, capacity int64, exact bool) *tierModel {
	tr := newTier(t, capacity)
	t.Cleanup(func() { require.NoError(t, tr.Close()) })
	return &tierModel{t: t, tr: tr, exact: exact, capacity: capacity, keys: make(map[tier.Key]*modelKey)}
}

func (m *tierModel) key(k tier.Key, n int) *modelKey {
	mk := m.keys[k]
	if mk == nil {
		mk = &modelKey{n: n, given: make(map[uint64]bool)}
		m.keys[k] = mk
	}
	return mk
}

// put puts a new version of k, n bytes long, and returns whether the tier
// stored it.
func (m *tierModel) put(k tier.Key, n int) bool {
	t := m.t
	t.Helper()
	mk := m.key(k, n)
	m.lsn++
	page := ModelPage(k, m.lsn, n)
	stored, err := m.tr.Put(k, m.lsn, page)
	require.NoError(t, err, "put %s", k)
	scribble(page) // the tier must have taken a copy
	m.settle()
	m.want.Puts++
	mk.given[m.lsn] = true
	if stored {
		mk.latest = m.lsn
	} else {
		mk.latest = 0
		m.want.Drops++
	}
	if m.exact && int64(n) <= m.capacity/2 {
		require.True(t, stored, "an exact tier of %d bytes dropped a page of %d", m.capacity, n)
	}
	m.checkStats()
	return stored
}

// putTooLarge puts under k a page one byte larger than the budget the
// tier reports. It must not be stored: either Put says so, and the drop is
// counted, or it fails, and the error is. The model then expects no page
// under k.
func (m *tierModel) putTooLarge(k tier.Key) {
	t := m.t
	t.Helper()
	before := m.tr.Stats()
	require.Positive(t, before.Capacity, "the budget is unknown")
	m.lsn++
	big := int(before.Capacity) + 1
	stored, err := m.tr.Put(k, m.lsn, ModelPage(k, m.lsn, big))
	m.settle()
	m.want.Puts++
	require.False(t, stored, "a page of %d bytes stored in a tier of %d", big, before.Capacity)
	if mk := m.keys[k]; mk != nil {
		mk.latest = 0
	}
	after := m.tr.Stats()
	switch {
	case m.exact:
		require.NoError(t, err, "an exact tier drops a page too large, it does not fail the put")
		require.Equal(t, before.Drops+1, after.Drops, "a dropped page not counted")
		m.want.Drops++
	case err != nil:
		require.Equal(t, before.Errors+1, after.Errors, "an error not counted: %v", err)
		m.want.Errors++
	default:
		require.Greater(t, after.Drops, before.Drops, "a dropped page not counted")
	}
	m.checkStats()
}

// get gets k (pages of n bytes) and checks what it returns: an intact image
// of k; when exact, its newest stored version and nothing after a delete.
func (m *tierModel) get(k tier.Key, n int) bool {
	t := m.t
	t.Helper()
	mk := m.key(k, n)
	dst := make([]byte, n)
	scribble(dst)
	found, err := m.tr.Get(k, mk.latest, dst)
	require.NoError(t, err, "get %s", k)
	m.want.Gets++
	if found {
		m.want.Hits++
		lsn, err := CheckModelPage(k, dst)
		require.NoError(t, err)
		if m.exact {
			require.NotZero(t, mk.latest, "get %s: found lsn %d, but the tier should hold no page", k, lsn)
			require.Equal(t, mk.latest, lsn, "get %s: a stale version", k)
		} else {
			require.True(t, mk.given[lsn], "get %s: lsn %d was never put under this key", k, lsn)
		}
	}
	scribble(dst) // the tier must not share dst
	m.checkStats()
	return found
}

func (m *tierModel) del(k tier.Key) {
	t := m.t
	t.Helper()
	require.NoError(t, m.tr.Delete(k), "delete %s", k)
	m.settle()
	m.want.Deletes++
	if mk := m.keys[k]; mk != nil {
		mk.latest = 0
	}
	m.checkStats()
}

// live counts the keys the tier should hold if it evicted nothing.
func (m *tierModel) live() int64 {
	n := int64(0)
	for _, mk := range m.keys {
		if mk.latest != 0 {
			n++
		}
	}
	return n
}

// checkStats checks the counters after a call: the call counts always; the
// budget whenever the backend reports it; when exact, the sizes.
func (m *tierModel) checkStats() {
	t := m.t
	t.Helper()
	s := m.tr.Stats()
	require.Equal(t, m.want.Puts, s.Puts, "Puts")
	require.Equal(t, m.want.Gets, s.Gets, "Gets")
	require.Equal(t, m.want.Hits, s.Hits, "Hits")
	require.Equal(t, m.want.Deletes, s.Deletes, "Deletes")
	require.Equal(t, m.want.Errors, s.Errors, "Errors")
	require.GreaterOrEqual(t, s.Evictions, m.prev.Evictions, "Evictions went down")
	require.GreaterOrEqual(t, s.Drops, m.prev.Drops, "Drops went down")
	m.prev = s
	require.GreaterOrEqual(t, s.Items, int64(-1), "Items")
	require.GreaterOrEqual(t, s.Bytes, int64(-1), "Bytes")
	if s.Capacity > 0 && s.Bytes >= 0 {
		require.LessOrEqual(t, s.Bytes, s.Capacity, "over budget: %+v", s)
	}
	if !m.exact {
		return
	}
	require.Equal(t, m.want.Drops, s.Drops, "Drops")
	if s.Items >= 0 {
		require.LessOrEqual(t, s.Items, m.live(), "Items: more pages than were put and not deleted")
	}
	if s.Items == 0 && s.Bytes >= 0 {
		require.Zero(t, s.Bytes, "Bytes with no items")
	}
}

// settle waits, if the tier applies Puts and Deletes asynchronously and
// can say when it is done (a Wait method, as ristretto.Tier has), until
// the last call has been applied, so that the model's checks see it.
func (m *tierModel) settle() {
	if w, ok := m.tr.(interface{ Wait() }); ok {
		w.Wait()
	}
}

// probeAll gets every key the model knows and, when exact, checks that the
// hits are as many as Items and their pages fit in Bytes.
func (m *tierModel) probeAll() {
	t := m.t
	t.Helper()
	before := m.tr.Stats()
	var hits, sum int64
	for k, mk := range m.keys {
		if m.get(k, mk.n) {
			hits++
			sum += int64(mk.n)
		}
	}
	if m.exact && before.Items >= 0 {
		require.Equal(t, before.Items, hits, "Items %d, but %d keys hit", before.Items, hits)
	}
	if m.exact && before.Bytes >= 0 {
		require.GreaterOrEqual(t, before.Bytes, sum, "Bytes below the pages' lengths")
	}
}

// modelKeys makes n keys that differ in every field of tier.Key: DB, Epoch,
// space and page number, so that a backend mixing any two up shows.
func modelKeys(n int) []tier.Key {
	ks := make([]tier.Key, n)
	for i := range ks {
		ks[i] = tier.Key{
			DB:    0xd0 + uint64(i&1),
			Epoch: 1 + uint64(i>>1&1),
			ID:    page.ID{Space: 1 + uint32(i>>2&1), Page: uint32(i >> 3)},
		}
	}
	return ks
}

// Factory makes a fresh, empty tier of about capacity bytes for the
// test t that will use it: a factory that cannot (no memcached binary, say)
// skips or fails t itself, which must be the test running the factory.
type Factory func(t testing.TB, capacity int64) tier.Tier

// modelLens are the page lengths of the model tests: a database has one
// page size, but a backend should not rely on it.
var modelLens = []int{256, 768, 1280, 1792}

// Model checks a Tier against a reference model: what Get returns,
// Delete, replacing Puts, the counters, the byte budget, a page too large
// for the budget, and concurrent use. Every backend runs it; newTier makes
// a fresh, empty tier of about capacity bytes (a backend whose budget is
// not its own, such as a memcached server's, reports that one in Stats).
// Pages are 256 to 3000 bytes long, and each key keeps one length except
// where exact says otherwise. After each Put and Delete the model calls
// the tier's Wait method, if it has one, so that a backend applying them
// asynchronously is checked once they are applied (Concurrent does not).
//
// With exact false it checks what the Tier contract promises: a Get may
// miss at any time, but what it returns is an intact image that was put
// under that key (possibly an older version: the pool judges staleness);
// a page larger than the budget is never stored (Put says so and counts a
// drop, or fails and counts an error); the call counters (Puts, Gets,
// Hits, Deletes, Errors) are exact; Items and Bytes are -1 or more; Bytes
// stays within Capacity when both are known. With exact true it also
// checks what a synchronous backend with exact eviction does (lru.Tier,
// slru.Tier): a Get returns the newest stored version or misses, never a
// deleted or dropped one, and hits right after a Put; a page of at most
// half the budget is stored; a page too large is dropped, not an error,
// and takes the page it replaces with it; Drops counts exactly the drops
// Put reported; Items and Bytes, when known, agree with what Get finds;
// while every page fits, counting MaxOverhead bytes each on top of
// its length, nothing is evicted. A backend whose admission policy may
// refuse a page that fits (TinyLFU) is not exact.
func Model(t *testing.T, newTier Factory, exact bool) {
	t.Run("Basics", func(t *testing.T) { tierModelBasics(t, newTier, exact) })
	t.Run("TooLarge", func(t *testing.T) { tierModelTooLarge(t, newTier, exact) })
	t.Run("Random", func(t *testing.T) {
		// About a quarter of the pages fit: evictions all along.
		tierModelRandom(t, newTier, exact, 16<<10, 4000)
	})
	t.Run("Fits", func(t *testing.T) {
		if !exact {
			t.Skip("an inexact backend may evict before it is full")
		}
		const keys = 48
		capacity := int64(keys * (modelLens[len(modelLens)-1] + MaxOverhead))
		m := tierModelRandom(t, newTier, exact, capacity, 2000)
		s := m.tr.Stats()
		require.Zero(t, s.Evictions, "evictions while everything fits")
		if s.Items >= 0 {
			require.Equal(t, m.live(), s.Items, "Items while everything fits")
		}
		for k, mk := range m.keys {
			if mk.latest != 0 {
				require.True(t, m.get(k, mk.n), "%s evicted while everything fits", k)
			}
		}
	})
	t.Run("Concurrent", func(t *testing.T) { tierModelConcurrent(t, newTier, exact) })
}

func tierModelBasics(t *testing.T, newTier Factory, exact bool) {
	m := newTierModel(t, newTier, 1<<20, exact)
	ks := modelKeys(16)
	a := ks[0]

	require.False(t, m.get(a, 1000), "a new tier holds nothing")
	m.put(a, 1000)
	hit := m.get(a, 1000)
	if exact {
		require.True(t, hit, "get after put")
	}
	// The page is checked again: the first get must not have changed it
	// (get scribbles over its dst, the model page over its source).
	hit = m.get(a, 1000)
	if exact {
		require.True(t, hit, "second get after put")
	}

	// Replacing puts: same length, then another length.
	m.put(a, 1000)
	m.get(a, 1000)
	if exact {
		m.put(a, 3000)
		require.True(t, m.get(a, 3000), "get after a replacing put of another length")
		m.put(a, 1000)
	}

	// Keys that differ in one field each (DB, Epoch, space, page) are
	// different pages.
	for _, k := range ks[1:] {
		m.put(k, 1000)
	}
	for _, k := range ks {
		found := m.get(k, 1000)
		if exact {
			require.True(t, found, "get %s", k)
		}
	}

	// Delete, and delete of a key the tier does not hold.
	m.del(a)
	if exact {
		require.False(t, m.get(a, 1000), "get after delete")
	} else {
		m.get(a, 1000)
	}
	m.del(a)
	m.del(tier.Key{DB: 0xdead, Epoch: 1, ID: page.ID{Space: 9, Page: 9}})
	m.probeAll()

	// A closed tier finds nothing.
	require.NoError(t, m.tr.Close())
	dst := make([]byte, 1000)
	found, _ := m.tr.Get(ks[1], 0, dst)
	require.False(t, found, "get after close")
}

func tierModelTooLarge(t *testing.T, newTier Factory, exact bool) {
	m := newTierModel(t, newTier, 16<<10, exact)
	budget := m.tr.Stats().Capacity
	if budget <= 0 {
		t.Skip("the backend does not know its budget")
	}
	ks := modelKeys(2)

	m.putTooLarge(ks[0])
	dst := make([]byte, 1000)
	found, err := m.tr.Get(ks[0], 0, dst)
	m.want.Gets++
	require.NoError(t, err)
	require.False(t, found, "a dropped page found")

	// Over a page already held: when exact, the old page goes too, so that
	// no older image outlives a failed put.
	m.put(ks[1], 1000)
	m.putTooLarge(ks[1])
	if exact {
		require.False(t, m.get(ks[1], 1000), "the page a dropped put replaced is still there")
		if s := m.tr.Stats(); s.Items >= 0 {
			require.Zero(t, s.Items)
		}
	}
}

// tierModelRandom runs ops random puts, gets and deletes over 48 keys
// against a tier of capacity bytes, with a page too large for the budget
// now and then.
func tierModelRandom(t *testing.T, newTier Factory, exact bool, capacity int64, ops int) *tierModel {
	r := Seed(t)
	m := newTierModel(t, newTier, capacity, exact)
	// Pages too large for the budget, but only for a budget of model size:
	// a backend whose budget is a server's would make each one huge.
	budget := m.tr.Stats().Capacity
	tooLarge := budget > 0 && budget <= 4*capacity
	ks := modelKeys(48)
	lenOf := func(i int) int { return modelLens[i%len(modelLens)] }
	for range ops {
		i := r.IntN(len(ks))
		k, n := ks[i], lenOf(i)
		switch p := r.IntN(100); {
		case p < 45:
			m.get(k, n)
		case p < 85:
			if m.put(k, n) && exact && r.IntN(4) == 0 {
				require.True(t, m.get(k, n), "get right after a put")
			}
		case p < 98 || !tooLarge:
			m.del(k)
		default:
			// Too large: dropped, and the page it replaces goes too.
			m.key(k, n)
			m.putTooLarge(k)
			if exact {
				require.False(t, m.get(k, n), "the page a dropped put replaced is still there")
			}
		}
	}
	m.probeAll()
	return m
}

// tierModelConcurrent runs goroutines against one tier, each with keys of
// its own (checked like the sequential model) and keys all of them share
// (checked to be intact images of the right key). The counters must add
// up afterwards.
func tierModelConcurrent(t *testing.T, newTier Factory, exact bool) {
	const (
		workers = 4
		ops     = 1500
		own     = 8
		shared  = 8
	)
	capacity := int64(32 << 10)
	tr := newTier(t, capacity)
	t.Cleanup(func() { require.NoError(t, tr.Close()) })
	base := Seed(t)
	var lsn atomic.Uint64
	sharedKeys := make([]tier.Key, shared)
	for i := range sharedKeys {
		sharedKeys[i] = tier.Key{DB: 0xd0, Epoch: 1, ID: page.ID{Space: 99, Page: uint32(i)}}
	}

	type counts struct{ puts, gets, hits, deletes int64 }
	results := make([]counts, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		r := rand.New(rand.NewPCG(base.Uint64(), base.Uint64()))
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = func() error {
				c := &results[w]
				latest := make(map[tier.Key]uint64)
				given := make(map[uint64]bool)
				for op := range ops {
					var k tier.Key
					mine := r.IntN(3) != 0
					n := 768
					if mine {
						i := r.IntN(own)
						k = tier.Key{DB: 0xd0, Epoch: 1, ID: page.ID{Space: 10 + uint32(w), Page: uint32(i)}}
						n = modelLens[i%len(modelLens)]
					} else {
						k = sharedKeys[r.IntN(shared)]
					}
					switch p := r.IntN(100); {
					case p < 55:
						dst := make([]byte, n)
						found, err := tr.Get(k, latest[k], dst)
						c.gets++
						if err != nil {
							return fmt.Errorf("get %s: %w", k, err)
						}
						if !found {
							break
						}
						c.hits++
						got, err := CheckModelPage(k, dst)
						switch {
						case err != nil:
							return err
						case !mine:
						case exact && got != latest[k]:
							return fmt.Errorf("get %s: lsn %d, want %d", k, got, latest[k])
						case !given[got]:
							return fmt.Errorf("get %s: lsn %d never put under it", k, got)
						}
					case p < 90:
						v := lsn.Add(1)
						stored, err := tr.Put(k, v, ModelPage(k, v, n))
						c.puts++
						if err != nil {
							return fmt.Errorf("put %s: %w", k, err)
						}
						given[v] = true
						if stored {
							latest[k] = v
						} else {
							latest[k] = 0
						}
					default:
						if !mine {
							break // another worker may be reading it back
						}
						if err := tr.Delete(k); err != nil {
							return fmt.Errorf("delete %s: %w", k, err)
						}
						c.deletes++
						latest[k] = 0
					}
					if op%100 == 0 {
						if s := tr.Stats(); s.Capacity > 0 && s.Bytes > s.Capacity {
							return fmt.Errorf("over budget: %+v", s)
						}
					}
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))

	var sum counts
	for _, c := range results {
		sum.puts += c.puts
		sum.gets += c.gets
		sum.hits += c.hits
		sum.deletes += c.deletes
	}
	s := tr.Stats()
	require.Equal(t, sum.puts, s.Puts, "Puts")
	require.Equal(t, sum.gets, s.Gets, "Gets")
	require.Equal(t, sum.hits, s.Hits, "Hits")
	require.Equal(t, sum.deletes, s.Deletes, "Deletes")
	require.Zero(t, s.Errors, "Errors")
	if s.Capacity > 0 && s.Bytes >= 0 {
		require.LessOrEqual(t, s.Bytes, s.Capacity)
	}
	if exact {
		require.LessOrEqual(t, s.Items, int64(workers*own+shared))
		require.Zero(t, s.Drops, "an exact tier dropped a page that fits")
	}
}
