package cache_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/stretchr/testify/require"
)

// TestPoolStress runs goroutines that fetch, change, read, flush and
// reserve random pages of a space six times the pool's size, half of the
// time from a hot set smaller than the pool. Each page
// carries a counter, changed only under the exclusive latch. Checked:
// no goroutine ever sees a page's counter go backwards (a stale image read
// back from the store would), no image is torn, and after a final flush a
// fresh pool finds every counter equal to the increments made to it.
func TestPoolStress(t *testing.T) {
	const (
		frames  = 16
		pages   = maxStressPages
		workers = 6 // each holds at most 2 frames: never exhausted
		ops     = 600
	)
	for _, policy := range []cache.PolicyKind{cache.PolicyLRU, cache.PolicyMidpoint} {
		t.Run(string(policy), func(t *testing.T) {
			rng := seed(t)
			st := newStore(t)
			createCounterPages(t, st, frames, pages)

			// OldBlocksTime 1ns on the wall clock: pages move between the
			// sublists all the time.
			p := newPool(t, st, frames, cache.Options{Policy: policy, OldBlocksTime: 1})
			incs := make([][maxStressPages + 1]uint64, workers)
			meters := make([]cache.Meter, workers)
			errs := make([]error, workers)
			var wg sync.WaitGroup
			for w := range workers {
				wr := rand.New(rand.NewPCG(rng.Uint64(), uint64(w)))
				wg.Go(func() {
					errs[w] = stressWorker(p, wr, &meters[w], &incs[w], pages, ops)
				})
			}
			wg.Wait()
			for _, err := range errs {
				require.NoError(t, err)
			}
			var sum cache.Meter
			for i := range meters {
				sum.Add(&meters[i])
			}
			t.Logf("workers: %s", sum.String())
			bg := p.BackgroundMeter()
			t.Logf("background: %s", bg.String())
			require.Positive(t, sum.Evictions)
			require.Positive(t, sum.DirtyWriteBacks)
			require.Equal(t, sum.PoolHits+sum.PoolMisses, sum.PageRequests[page.KindHeap])

			require.NoError(t, p.FlushAll(nil))
			s := p.Stats()
			require.Equal(t, cache.Stats{Frames: frames, Resident: frames}, s)

			fresh := newPool(t, st, frames, cache.Options{})
			for n := uint32(1); n <= pages; n++ {
				var want uint64
				for w := range workers {
					want += incs[w][n]
				}
				pg, err := fresh.Fetch(nil, pid(1, n))
				require.NoError(t, err)
				pg.RLatch()
				require.Equal(t, want, getCounter(t, pg), "page %d", n)
				pg.RUnlatch()
				pg.Unpin(false)
			}
		})
	}
}

const maxStressPages = 96

// stressWorker is one goroutine of TestPoolStress. It returns the first
// inconsistency it sees.
func stressWorker(p *cache.Pool, rng *rand.Rand, m *cache.Meter, incs *[maxStressPages + 1]uint64, pages, ops int) error {
	var seen [maxStressPages + 1]uint64 // newest counter this worker saw on each page
	pick := func() page.ID {
		if rng.IntN(2) == 0 {
			return pid(1, uint32(rng.IntN(12)+1))
		}
		return pid(1, uint32(rng.IntN(pages)+1))
	}
	check := func(pg *cache.Page) (uint64, error) {
		d := pg.Data()
		id := pg.ID()
		if got := page.IDOf(d); got != id {
			return 0, fmt.Errorf("frame of %s holds page %s", id, got)
		}
		a, b := counterOf(d)
		if a != b {
			return 0, fmt.Errorf("page %s: torn counter %d/%d", id, a, b)
		}
		if a < seen[id.Page] {
			return 0, fmt.Errorf("page %s: counter went back from %d to %d (stale image)", id, seen[id.Page], a)
		}
		seen[id.Page] = a
		return a, nil
	}
	inc := func(pg *cache.Page) error {
		pg.Latch()
		defer pg.Unlatch()
		c, err := check(pg)
		if err != nil {
			return err
		}
		setCounter(pg, c+1)
		seen[pg.ID().Page] = c + 1
		incs[pg.ID().Page]++
		return nil
	}
	read := func(pg *cache.Page) error {
		pg.RLatch()
		defer pg.RUnlatch()
		_, err := check(pg)
		return err
	}

	for range ops {
		switch op := rng.IntN(100); {
		case op < 55: // change one page
			pg, err := p.Fetch(m, pick())
			if err != nil {
				return err
			}
			err = inc(pg)
			pg.Unpin(true)
			if err != nil {
				return err
			}
		case op < 80: // read one page
			pg, err := p.Fetch(m, pick())
			if err != nil {
				return err
			}
			err = read(pg)
			pg.Unpin(false)
			if err != nil {
				return err
			}
		case op < 90: // hold one page while changing another
			a, b := pick(), pick()
			pa, err := p.Fetch(m, a)
			if err != nil {
				return err
			}
			pb, err := p.Fetch(m, b)
			if err != nil {
				pa.Unpin(false)
				return err
			}
			err = errors.Join(read(pa), inc(pb))
			pb.Unpin(true)
			pa.Unpin(false)
			if err != nil {
				return err
			}
		case op < 95:
			if err := p.FlushPage(nil, pick()); err != nil {
				return err
			}
		case op < 97:
			if err := p.FlushAll(nil); err != nil {
				return err
			}
		default: // change two pages under a reservation
			r, err := p.Reserve(2)
			if err != nil {
				return err
			}
			for range 2 {
				pg, err := r.Fetch(m, pick())
				if err != nil {
					r.Release()
					return err
				}
				err = inc(pg)
				r.Unpin(pg, true)
				if err != nil {
					r.Release()
					return err
				}
			}
			r.Release()
		}
	}
	return nil
}

func counterOf(d []byte) (a, b uint64) {
	le := func(b []byte) uint64 {
		return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
	}
	return le(d[page.HeaderSize:]), le(d[len(d)-8:])
}
