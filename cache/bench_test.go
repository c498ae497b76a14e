package cache_test

import (
	"testing"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/stretchr/testify/require"
)

// BenchmarkPoolFetchHit is the buffer pool's hot path: a resident page
// pinned and unpinned. It must not allocate.
func BenchmarkPoolFetchHit(b *testing.B) {
	for _, policy := range []cache.PolicyKind{cache.PolicyMidpoint, cache.PolicyLRU} {
		b.Run("policy="+string(policy), func(b *testing.B) {
			st := newStore(b)
			putPages(b, st, 1, 1, 8)
			p := newPool(b, st, 16, cache.Options{Policy: policy})
			for n := uint32(1); n <= 8; n++ {
				touch(b, p, nil, pid(1, n))
			}
			var m cache.Meter
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				pg, err := p.Fetch(&m, pid(1, uint32(i%8)+1))
				if err != nil {
					b.Fatal(err)
				}
				pg.Unpin(false)
			}
			if m.PoolMisses != 0 {
				b.Fatalf("hit benchmark missed: %s", m.String())
			}
			b.ReportMetric(float64(m.PoolHits)/float64(b.N), "hits/op")
		})
	}
}

// BenchmarkPoolFetchHitParallel is BenchmarkPoolFetchHit from every
// GOMAXPROCS goroutine at once, on eight pages they share: what a pool
// hit costs when terminals on every core fetch the same hot pages (B+tree
// roots, the warehouse and district rows).
func BenchmarkPoolFetchHitParallel(b *testing.B) {
	for _, policy := range []cache.PolicyKind{cache.PolicyMidpoint, cache.PolicyLRU} {
		b.Run("policy="+string(policy), func(b *testing.B) {
			st := newStore(b)
			putPages(b, st, 1, 1, 8)
			p := newPool(b, st, 16, cache.Options{Policy: policy})
			for n := uint32(1); n <= 8; n++ {
				touch(b, p, nil, pid(1, n))
			}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				var m cache.Meter
				for i := 0; pb.Next(); i++ {
					pg, err := p.Fetch(&m, pid(1, uint32(i%8)+1))
					if err != nil {
						b.Error(err)
						return
					}
					pg.Unpin(false)
				}
				if m.PoolMisses != 0 {
					b.Errorf("hit benchmark missed: %s", m.String())
				}
			})
		})
	}
}

// BenchmarkPoolFetchMiss cycles through four times more pages than the pool
// holds, so that every fetch reads a page from the (in-memory) store and
// evicts a clean one.
func BenchmarkPoolFetchMiss(b *testing.B) {
	const frames, pages = 16, 64
	st := newStore(b)
	putPages(b, st, 1, 1, pages)
	p := newPool(b, st, frames, cache.Options{Policy: cache.PolicyLRU})
	var m cache.Meter
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		pg, err := p.Fetch(&m, pid(1, uint32(i%pages)+1))
		if err != nil {
			b.Fatal(err)
		}
		pg.Unpin(false)
	}
	if m.PoolHits != 0 {
		b.Fatalf("miss benchmark hit: %s", m.String())
	}
	b.ReportMetric(float64(m.StoreReads)/float64(b.N), "store-reads/op")
	b.ReportMetric(float64(m.Evictions)/float64(b.N), "evictions/op")
}

// TestMtrCommitDoesNotAllocate: an mtr that logs one Write32 on a
// resident page and commits allocates nothing (the mtr, its page list, its
// record and the log's buffer are reused) while the log's buffer has room;
// BenchmarkMtrCommit measures it with the buffer's writes to pebble.
func TestMtrCommitDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops mtrs under the race detector")
	}
	cache.VerifyRedo(false)
	defer cache.VerifyRedo(true)
	e := newLogEnv(t, 16, nil)
	require.NoError(t, e.p.CreateSpace(nil, 1))
	id := allocRandom(t, e.p, seed(t), 1)
	var m cache.Meter
	i := 0
	commit := func() {
		mt := e.p.BeginMtr(&m)
		pg, err := e.p.Fetch(&m, id)
		if err != nil {
			panic(err)
		}
		mt.Latch(pg)
		mt.Write32(pg, page.HeaderSize+4*(i%64), uint32(i))
		mt.Release(pg, true)
		mt.Commit()
		i++
	}
	commit()
	require.Zero(t, testing.AllocsPerRun(100, commit))
	require.Zero(t, m.PoolMisses)
	require.EqualValues(t, 102, m.LogRecords, "a warm-up, AllocsPerRun's own and 100")
}

// BenchmarkMtrCommit is the write path's unit: an mtr that fetches a hot
// page, latches it, logs one Write32 and commits (its record appended to
// the log's buffer, which reaches pebble every LogOptions.BufferBytes, as
// BeginMtr's MaybeWrite finds it full). VerifyRedo, on for the tests, is
// off here.
func BenchmarkMtrCommit(b *testing.B) {
	cache.VerifyRedo(false)
	defer cache.VerifyRedo(true)
	e := newLogEnv(b, 16, nil)
	if err := e.p.CreateSpace(nil, 1); err != nil {
		b.Fatal(err)
	}
	mt := e.p.BeginMtr(nil)
	pg, err := e.p.AllocPage(mt, nil, 1, page.KindHeap)
	if err != nil {
		b.Fatal(err)
	}
	id := pg.ID()
	mt.Release(pg, true)
	mt.Commit()
	var m cache.Meter
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		mt := e.p.BeginMtr(&m)
		pg, err := e.p.Fetch(&m, id)
		if err != nil {
			b.Fatal(err)
		}
		mt.Latch(pg)
		mt.Write32(pg, page.HeaderSize+4*(i%64), uint32(i))
		mt.Release(pg, true)
		mt.Commit()
	}
	if m.PoolMisses != 0 {
		b.Fatalf("the page was not hot: %s", m.String())
	}
	b.ReportMetric(float64(m.LogBytes)/float64(b.N), "log-bytes/op")
}
