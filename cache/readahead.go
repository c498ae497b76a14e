package cache

import "github.com/enginelab/enginelab/cache/page"

// Linear read-ahead, as InnoDB's (buf_read_ahead_linear), made
// deterministic: it runs inside the call that triggers it, never on a
// goroutine or timer of its own, and is charged to the background meter
// (no caller waits for it in InnoDB; the simulator prices it as background
// device work).
//
//	extent k:   [64k ............................. 64k+63]   <- a caller first
//	             first touched in ascending order ≥ 56 times      touches 64k+63
//	extent k+1: [64(k+1) ........................ 64(k+1)+63] <- read in, those
//	                                                              not resident
//
// Only the ascending direction is implemented (InnoDB also reads the
// previous extent after a descending pass; B+tree and heap pages here are
// allocated in ascending order, so scans read forward).

// firstAccessLocked stamps f's first access since it was read in, and
// reports whether this was it.
// REQUIRES: p.mu held.
func (p *Pool) firstAccessLocked(f *Page) bool {
	f.readAhead = false
	if f.firstAccess != 0 {
		return false
	}
	p.mu.accesses++
	f.firstAccess = p.mu.accesses
	return true
}

// maybeReadAhead runs after a caller first touched last, the last page of
// its extent: if enough of the extent's pages were first touched in ascending
// order, the next extent's missing pages are read in.
func (p *Pool) maybeReadAhead(last page.ID) {
	first := last.Page - (ExtentPages - 1)
	inOrder, prev := 0, uint64(0)
	p.mu.Lock()
	for no := first; no <= last.Page; no++ {
		f := p.mu.table.get(page.ID{Space: last.Space, Page: no})
		if f == nil || f.firstAccess == 0 || f.firstAccess < prev {
			continue
		}
		inOrder++
		prev = f.firstAccess
	}
	p.mu.Unlock()
	if inOrder < p.opts.ReadAheadThreshold {
		return
	}
	var bg Meter
	for no := last.Page + 1; no <= last.Page+ExtentPages; no++ {
		id := page.ID{Space: last.Space, Page: no}
		if p.Resident(id) {
			continue
		}
		f, _, err := p.load(&bg, nil, id, false, 0, true)
		if err != nil {
			// Past the end of the space, a full pool, a failing store:
			// read-ahead is a hint, never a caller's error.
			break
		}
		f.Unpin(false)
		bg.ReadAheads++
	}
	// The pages count as read ahead, not as pool misses of a caller.
	bg.ReadAheadMisses, bg.PoolMisses = bg.PoolMisses, 0
	p.ChargeBackground(&bg)
}
