package cache

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/cache/tier"
)

// Page writes go out in batches (InnoDB's flush batches): a page cleaner
// pass's LRU pages, then its flush-list pages; a flush for log space; a
// checkpoint's writes (FlushAll); a single page (FlushPage, or a fetch
// writing back a dirty victim). Each page of a batch is taken (its frame
// busy), copied under its shared latch and made to honour the write-ahead
// rule as it is added (prepare); the batch is written when it is full or
// its caller is done (flush):
//
//   - without a doublewrite buffer a batch holds one page, so each page is
//     written as soon as it is copied;
//   - with one (TornPagesDoublewrite) a batch holds up to
//     DoublewriteSlots pages: their images go to the doublewrite file and
//     are synced, then to the store, which is synced before the next
//     batch may use the file (Doublewrite.Write).
//
// A batch never waits while it holds pages it has not written: before it
// would block (a page's latch held by another, a frame another flusher is
// writing, no frame slot for a claim) it writes what it holds, so that a
// writer that holds a latch and waits for one of its frames is never
// waited for in turn. The one wait it may make holding pages is the
// write-ahead rule's log sync, which waits for no page. Its unpinned pages
// each hold a slot of the pool (claim) while they are busy; a batch stops
// growing once it holds half the frames, so that callers still find
// frames to evict.

// pageWrite is one page of a batch: the frame, the page it held when
// taken, the image's LSN, the sealed image, the meter counter its
// success adds one to (nil: none), and whether the batch took the frame
// (add) and releases it, or its caller did (an eviction's write-back).
type pageWrite struct {
	f     *Page
	id    page.ID
	lsn   uint64
	bp    *[]byte
	count *int64
	taken bool
	// claimed: the page was unpinned when taken and holds a slot of the
	// pool while the batch holds it.
	claimed bool
}

// batcher collects and writes a caller's batches, charging m (not nil).
type batcher struct {
	p      *Pool
	m      *Meter
	ws     []pageWrite
	claims int // pages of ws that hold a slot (pageWrite.claimed)
	// unpinnedOnly gives up a page that is pinned when add takes it: an
	// LRU batch's (freeMargin), whose caller may hold page latches and
	// locks, must not wait for a page latch. InnoDB's LRU flush writes
	// only pages nobody buffer-fixes, checked again as it takes each
	// (buf_flush_ready_for_flush), for this reason.
	unpinnedOnly bool
	n            int // pages written
	// ids and images are Doublewrite.Write's arguments, kept for reuse.
	ids    []page.ID
	images [][]byte
	// merge is the pages written since merged writes were last counted
	// (Flushing51; finish).
	merge []page.ID
}

func (p *Pool) newBatcher(m *Meter) *batcher { return &batcher{p: p, m: m} }

// limit is how many pages a batch holds.
func (b *batcher) limit() int {
	if b.p.dw == nil {
		return 1
	}
	return DoublewriteSlots
}

// finish counts the merged writes of the pages written since the last
// count (Flushing51 without a doublewrite buffer, where each page is
// written as soon as it is taken, but the requests of one call, an LRU
// batch or a flush-list batch, are queued together and merged). With a
// doublewrite buffer each batch is counted as it is written: its store
// sync separates it from the next.
func (b *batcher) finish() {
	b.m.StoreWritesMerged += mergeCount(b.merge)
	b.merge = b.merge[:0]
}

// mergeCount is how many of ids (a batch's written pages) go out in the
// request of another: MySQL 5.1's simulated AIO serves a write thread's
// queued requests lowest offset first and merges those at consecutive
// offsets into one (os_aio_simulated_handle, at most 64), so a batch
// sorted by page is one request per run of consecutive pages of a space.
// It sorts ids.
func mergeCount(ids []page.ID) int64 {
	slices.SortFunc(ids, func(a, b page.ID) int {
		if c := cmp.Compare(a.Space, b.Space); c != 0 {
			return c
		}
		return cmp.Compare(a.Page, b.Page)
	})
	var merged int64
	run := 1
	for i := 1; i < len(ids); i++ {
		if ids[i].Space == ids[i-1].Space && ids[i].Page == ids[i-1].Page+1 && run < simAIOMerge {
			merged++
			run++
		} else {
			run = 1
		}
	}
	return merged
}

// simAIOMerge is the most requests MySQL 5.1's simulated AIO merges into
// one (OS_AIO_MERGE_N_CONSECUTIVE).
const simAIOMerge = 64

// add takes page id, which frame f held when it was chosen, into the
// batch if it is still resident and dirty, and writes the batch if that
// fills it. wait says to wait for a write of f under way (else a busy
// frame is given up) and that a frame with no slot for it is an error
// (else it is given up). count, if not nil, is a counter of m to add one
// to once the page is written.
func (b *batcher) add(f *Page, id page.ID, wait bool, count *int64) error {
	p := b.p
	claimed := false
	p.mu.Lock()
	for {
		if f.busy {
			if !wait {
				p.mu.Unlock()
				return nil
			}
			if len(b.ws) > 0 {
				p.mu.Unlock()
				if err := b.flush(); err != nil {
					return err
				}
				p.mu.Lock()
				continue
			}
			p.waiters.Add(1)
			p.mu.cond.Wait()
			p.waiters.Add(-1)
			continue
		}
		if !f.resident || f.id != id || !f.dirty.Load() || (b.unpinnedOnly && f.pinCount() != 0) {
			p.mu.Unlock()
			return nil
		}
		if f.pinCount() == 0 {
			// An unpinned page needs a slot while it is busy, so that the
			// flush never eats a frame promised to a reservation.
			if ok, _ := p.takeLocked(nil); !ok {
				if len(b.ws) > 0 {
					p.mu.Unlock()
					if err := b.flush(); err != nil {
						return err
					}
					p.mu.Lock()
					continue
				}
				p.mu.Unlock()
				if !wait {
					return nil
				}
				return fmt.Errorf("%w: no frame free to flush page %s", ErrPoolExhausted, f.id)
			}
			// Share-latch it now, while the pool's lock shows it unpinned.
			if !p.shareUnpinnedLocked(f) {
				p.free.Add(1) // pinned since the look: a pinned page now
				continue
			}
			f.claim = true
			claimed = true
		}
		f.busy = true
		break
	}
	if claimed {
		runWriteUnpinnedHook(f)
	}
	p.mu.Unlock()
	w, err := b.prepare(f, id, claimed)
	if err != nil {
		p.endWrite(f)
		// Nothing the batch holds may stay busy: write it, and report
		// both errors.
		return errors.Join(err, b.flush())
	}
	w.count, w.taken, w.claimed = count, true, claimed
	b.ws = append(b.ws, w)
	if claimed {
		b.claims++
	}
	if len(b.ws) >= b.limit() || 2*b.claims >= len(p.frames) {
		return b.flush()
	}
	return nil
}

// prepare copies f's page under its shared latch, honours the write-ahead
// rule and seals the copy. f is busy (the caller's), so it keeps its page;
// its I/O mutex stays held until the write is done (finish). latched says
// the caller holds f's shared latch already (an unpinned page, latched
// under the pool's lock: shareUnpinnedLocked); prepare releases it. On
// failure the page is dirty again and nothing is held.
func (b *batcher) prepare(f *Page, id page.ID, latched bool) (pageWrite, error) {
	p := b.p
	bp := p.scratch.Get().(*[]byte)
	buf := *bp
	f.ioMu.Lock()
	if latched {
		// Held since the pool's lock showed the page unpinned.
	} else if len(b.ws) == 0 {
		f.latch.RLock()
	} else if !f.latch.TryRLock() {
		// Someone holds the page exclusively and may wait for a frame of
		// this batch: write the batch first.
		if err := b.flush(); err != nil {
			f.ioMu.Unlock()
			p.scratch.Put(bp)
			return pageWrite{}, err
		}
		f.latch.RLock()
	}
	f.dirty.Store(false)
	copy(buf, f.buf)
	f.latch.RUnlock()
	fail := func(err error) (pageWrite, error) {
		f.dirty.Store(true)
		f.ioMu.Unlock()
		p.scratch.Put(bp)
		return pageWrite{}, err
	}
	// The frame's id names the store key; a header that disagrees (a layer
	// above wrote over it) must not overwrite another page.
	if got := page.IDOf(buf); got != id {
		return fail(fmt.Errorf("%w: frame of page %s holds a header naming page %s; not written", page.ErrCorruptPage, id, got))
	}
	lsn := page.LSN(buf)
	if p.log != nil && lsn >= p.log.Durable() {
		// The write-ahead rule: the record that made this image must be
		// durable before the image reaches the store (the log may live
		// in files of its own, which a crash can leave behind the
		// store's). A wait in SyncTo is group-committed with the
		// transactions' syncs.
		var c *redo.Counts
		if b.m != nil {
			c = &b.m.Counts
		}
		if p.rt != nil {
			p.rt.PageWriteWait(true)
		}
		err := p.log.SyncTo(c, lsn+1)
		if p.rt != nil {
			p.rt.PageWriteWait(false)
		}
		if err != nil {
			return fail(fmt.Errorf("cache: write page %s: %w", id, err))
		}
	}
	page.Seal(buf)
	return pageWrite{f: f, id: id, lsn: lsn, bp: bp}, nil
}

// flush writes the batch: through the doublewrite file if the pool has
// one, then in place. Every page of it is released; a page whose write
// failed (or whose batch's doublewrite or store sync failed) is dirty
// again, and the first error is returned.
func (b *batcher) flush() error {
	ws := b.ws
	if len(ws) == 0 {
		return nil
	}
	b.ws, b.claims = nil, 0
	p, m := b.p, b.m
	errs := make([]error, len(ws))
	inPlace := func() error {
		wrote := false
		for i := range ws {
			w := &ws[i]
			errs[i] = p.store.WritePage(w.id, *w.bp)
			m.StoreWrites++
			if errs[i] == nil {
				m.StoreWriteBytes += int64(p.pageSize)
				wrote = true
				if p.opts.Flushing == Flushing51 {
					b.merge = append(b.merge, w.id)
				}
			}
		}
		if p.dw != nil {
			b.finish()
		}
		if p.dw == nil || !wrote {
			return nil
		}
		// The doublewrite slots are reused only once the batch's pages
		// are durable in place (write_completed: fil_flush_file_spaces).
		m.StoreSyncs++
		return p.store.Sync()
	}
	var err error
	if p.dw != nil {
		b.ids, b.images = b.ids[:0], b.images[:0]
		for _, w := range ws {
			b.ids = append(b.ids, w.id)
			b.images = append(b.images, *w.bp)
		}
		err = p.dw.Write(m, b.ids, b.images, inPlace)
	} else {
		err = inPlace()
	}
	var first error
	if err != nil {
		first = fmt.Errorf("cache: write pages %s..: %w", ws[0].id, err)
	}
	for i := range ws {
		w := &ws[i]
		werr := err
		if werr == nil {
			werr = errs[i]
		}
		if werr != nil {
			w.f.dirty.Store(true)
			if first == nil {
				first = fmt.Errorf("cache: write page %s: %w", w.id, werr)
			}
		} else {
			// Off the flush list only now that the write is done (a
			// checkpoint taken meanwhile counted the page as dirty),
			// and only if no change came after the copy.
			p.fl.written(w.f, w.lsn)
			p.noteLSN(w.id, w.lsn)
			if p.opts.Tier != nil && p.opts.TierMode == tier.Inclusive {
				p.tierStoreCopy(m, w.id, *w.bp) // sealed
			}
			b.n++
			if w.count != nil {
				*w.count++
			}
		}
		w.f.ioMu.Unlock()
		p.scratch.Put(w.bp)
		if w.taken {
			p.endWrite(w.f)
		}
	}
	return first
}

// writeOne writes f, which its caller has made busy and share-latched (an
// eviction's victim: shareUnpinnedLocked), as a batch of its own, charging
// m (nil: nobody).
func (p *Pool) writeOne(m *Meter, f *Page) error {
	if m == nil {
		m = &Meter{}
	}
	b := batcher{p: p, m: m}
	w, err := b.prepare(f, f.id, true)
	if err != nil {
		return err
	}
	b.ws = append(b.ws, w)
	return b.flush()
}

// endWrite releases f after a write the pool took it for: no longer busy,
// and its slot, if it held one, given back.
func (p *Pool) endWrite(f *Page) {
	p.mu.Lock()
	f.busy = false
	if f.claim {
		f.claim = false
		p.free.Add(1)
	}
	if p.waiters.Load() > 0 {
		p.mu.cond.Broadcast()
	}
	p.mu.Unlock()
}
