package heap

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// syncClog is a commit log safe for concurrent use, with the set of
// transactions in progress (for the horizon).
type syncClog struct {
	mu     sync.Mutex
	st     map[uint64]XidStatus
	active map[uint64]bool
	next   atomic.Uint64
}

func (c *syncClog) XidStatus(xid uint64) (XidStatus, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.st[xid], nil
}

func (c *syncClog) begin() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	x := c.next.Add(1)
	c.active[x] = true
	return x
}

func (c *syncClog) end(x uint64, s XidStatus) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.st[x] = s
	delete(c.active, x)
}

// horizon is the oldest transaction in progress (the next id if none).
func (c *syncClog) horizon() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.next.Load() + 1
	for x := range c.active {
		h = min(h, x)
	}
	return h
}

// checkErrs splits what Check returned into its violations.
func checkErrs(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// TestCheckBesideVersionWriters runs Check over and over while writers
// insert, update (HOT and not, some rows moving), delete, abort, prune,
// vacuum dead line pointers and set pages all-visible, each on its own
// rows' pages, on a pool small enough to evict. One page, filled before
// the writers start with rows too small for any writer's to fit after
// them and never pruned or marked by them, carries injected damage: its
// all-visible bit set in the map without PD_ALL_VISIBLE. Every Check,
// however it interleaves with the writers, reports exactly that one
// violation: no false damage from a page, FSM byte or map bit caught
// between a writer's changes, and the real damage always. Once the
// writers stop, a page's FSM byte set below its category is caught too.
// Run it with -race.
func TestCheckBesideVersionWriters(t *testing.T) {
	const (
		writers = 3
		ops     = 1500
		frames  = 64
	)
	seed := testSeed(t)
	_, pool, h := newHeapForTest(t, 4<<10, frames)
	clog := &syncClog{st: map[uint64]XidStatus{}, active: map[uint64]bool{}}

	// The fenced page: page 1, filled with 4-byte rows (writers' rows
	// have 20 bytes or more) until one goes to another page.
	var fence uint32
	for i := 0; ; i++ {
		x := clog.begin()
		p, err := h.InsertVersion(nil, x, []byte{byte(i), 0, 0, 0})
		require.NoError(t, err)
		clog.end(x, XidCommitted)
		if i == 0 {
			fence = p.Page
		} else if p.Page != fence {
			break
		}
	}
	// The damage: the fence's all-visible bit without PD_ALL_VISIBLE.
	require.NoError(t, h.vmEnsure(nil, fence))
	r, err := h.vmPin(nil, nil, fence)
	require.NoError(t, err)
	mt := pool.BeginMtr(nil)
	mt.Latch(r.pg)
	vmSetBits(mt, r.pg, r.idx, VMAllVisible)
	mt.Release(r.pg, true)
	mt.Commit()
	wantDamage := fmt.Sprintf("heap page %d: all-visible in the visibility map true, PD_ALL_VISIBLE false", fence)
	requireOnly := func(err error, msgs ...string) {
		t.Helper()
		got := checkErrs(err)
		require.Len(t, got, len(msgs), "%v", err)
		for i, m := range msgs {
			require.Contains(t, got[i].Error(), m)
		}
	}
	requireOnly(h.Check(nil), wantDamage)

	errs := make([]error, writers)
	opsDone := make([]int, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			var m Meter
			var rows []RowPtr // the latest version of each live row
			fail := func(format string, args ...any) {
				errs[w] = fmt.Errorf("writer %d, op %d: "+format, append([]any{w, opsDone[w]}, args...)...)
			}
			for ; opsDone[w] < ops; opsDone[w]++ {
				x := clog.begin()
				status := XidCommitted
				if rng.IntN(10) == 0 {
					status = XidAborted
				}
				row := selfRow(w, opsDone[w], 0, 20+rng.IntN(300))
				switch op := rng.IntN(10); {
				case op < 3 || len(rows) == 0:
					p, err := h.InsertVersion(&m, x, row)
					if err != nil {
						fail("insert: %v", err)
						return
					}
					if status == XidCommitted {
						rows = append(rows, p)
					}
				case op < 6:
					k := rng.IntN(len(rows))
					p, _, err := h.UpdateVersion(&m, rows[k], x, row, rng.IntN(2) == 0)
					if err != nil {
						fail("update %s: %v", rows[k], err)
						return
					}
					if status == XidCommitted {
						rows[k] = p
					}
				case op < 7:
					k := rng.IntN(len(rows))
					if err := h.DeleteVersion(&m, rows[k], x); err != nil {
						fail("delete %s: %v", rows[k], err)
						return
					}
					if status == XidCommitted {
						rows = append(rows[:k], rows[k+1:]...)
					}
				case op < 9:
					// Prune one of this writer's pages, then set its dead
					// line pointers unused (no index names them here).
					no := rows[rng.IntN(len(rows))].Page
					if _, err := h.Prune(&m, no, clog.horizon(), clog); err != nil {
						fail("prune %d: %v", no, err)
						return
					}
					lps, _, err := h.PageVersions(&m, no)
					if err != nil {
						fail("page %d: %v", no, err)
						return
					}
					var dead []uint16
					for s, lp := range lps {
						if lp.State == "dead" {
							dead = append(dead, uint16(s))
						}
					}
					if _, err := h.VacuumDeadSlots(&m, no, dead); err != nil {
						fail("vacuum %d: %v", no, err)
						return
					}
				default:
					no := rows[rng.IntN(len(rows))].Page
					if _, err := h.MarkVisible(&m, no, clog.horizon(), clog, rng.IntN(2) == 0); err != nil {
						fail("mark %d visible: %v", no, err)
						return
					}
				}
				clog.end(x, status)
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var checkErr error
	checks := 0
	for running := true; running && checkErr == nil; checks++ {
		select {
		case <-done:
			running = false // one more check, after the last write
		default:
		}
		if err := h.Check(nil); len(checkErrs(err)) != 1 || !strings.Contains(err.Error(), wantDamage) {
			checkErr = fmt.Errorf("check %d beside the writers: %w", checks, err)
		}
	}
	<-done
	require.NoError(t, errors.Join(errs...))
	require.NoError(t, checkErr)
	total := 0
	for _, n := range opsDone {
		total += n
	}
	t.Logf("%d checks beside %d writer operations; high water %d", checks, total, h.HighWater())
	requireOnly(h.Check(nil), wantDamage)

	// Once the writers stop: a page's FSM byte below its category.
	var victim uint32
	var cat uint8
	for no := uint32(1); no < h.HighWater() && victim == 0; no++ {
		if no == fence || h.isFSMPage(no) || h.isVMPage(no) {
			continue
		}
		b := pageCopy(t, h, no)
		if c := h.category(b.free(), b.ndead()); c > 0 {
			victim, cat = no, c
		}
	}
	require.NotZero(t, victim, "a page with room")
	fr, err := h.fsmPin(nil, victim)
	require.NoError(t, err)
	mt = pool.BeginMtr(nil)
	mt.Latch(fr.pg)
	fsmSetByte(mt, fr.pg, fr.idx, 0)
	mt.Release(fr.pg, true)
	mt.Commit()
	requireOnly(h.Check(nil), wantDamage, fmt.Sprintf("FSM byte of heap page %d is 0, below its category %d", victim, cat))
}
