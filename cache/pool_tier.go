package cache

import (
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/tier"
)

// The pool's side of the remote tier (Options.Tier). Every call to the
// tier happens without the pool's lock: a memcached round trip must not
// stall the other callers. A tier that fails is a miss, counted; no caller
// ever fails because of the tier.

func (p *Pool) tierKey(id page.ID) tier.Key {
	return tier.Key{DB: p.tierDB, Epoch: p.tierEp, ID: id}
}

// tierGet asks the tier for page id into buf (a private frame) and reports
// whether buf now holds a page the pool may use: found, with a checksum
// and header that hold, and the newest LSN the pool knows for the page.
// In exclusive mode the tier's copy is deleted once read back (unless
// WaffleKeepOnRead), and a page whose WaffleLRU SET is still queued is
// taken back from the queue without asking the tier (Meter.TierQueueHits).
func (p *Pool) tierGet(m *Meter, id page.ID, buf []byte) bool {
	t := p.opts.Tier
	want := p.KnownLSN(id)
	if p.takeQueued(id, buf) {
		if page.Verify(id, buf, p.pageSize) == nil && page.LSN(buf) == want {
			if m != nil {
				m.TierQueueHits++
			}
			return true
		}
		// Cannot happen (the queue holds the image the pool evicted);
		// ask the tier as if it had not been queued.
	}
	found, err := t.Get(p.tierKey(id), want, buf)
	if m != nil {
		m.TierGets++
	}
	switch {
	case err != nil:
		if m != nil {
			m.TierErrors++
		}
		return false
	case !found:
		if m != nil {
			m.TierMisses++
		}
		return false
	}
	if page.Verify(id, buf, p.pageSize) != nil {
		if m != nil {
			m.TierCorrupt++
		}
		return false
	}
	if page.LSN(buf) != want {
		// An image older than what the pool has seen (a late push that
		// overtook a newer one, a copy left behind by a write-back the
		// tier lost), or one the pool cannot vouch for.
		if m != nil {
			m.TierStale++
		}
		return false
	}
	if m != nil {
		m.TierHits++
		m.TierBytesIn += int64(p.pageSize)
	}
	if p.opts.TierMode == tier.Exclusive && !p.opts.WaffleKeepOnRead {
		err := t.Delete(p.tierKey(id))
		if m != nil {
			m.TierDeletes++
			if err != nil {
				m.TierErrors++
			}
		}
	}
	return true
}

// tierPush pushes the image of a frame (not sealed: the frame's checksum is
// set only on copies written out) to the tier, through a sealed copy.
func (p *Pool) tierPush(m *Meter, id page.ID, frame []byte) {
	bp := p.scratch.Get().(*[]byte)
	defer p.scratch.Put(bp)
	buf := *bp
	copy(buf, frame)
	page.Seal(buf)
	p.tierPut(m, id, buf)
}

// tierPut stores a sealed page image in the tier, replacing its copy.
func (p *Pool) tierPut(m *Meter, id page.ID, sealed []byte) {
	stored, err := p.opts.Tier.Put(p.tierKey(id), page.LSN(sealed), sealed)
	if m == nil {
		return
	}
	m.TierPuts++
	switch {
	case err != nil:
		m.TierErrors++
	case !stored:
		m.TierDrops++
	default:
		m.TierBytesOut += int64(p.pageSize)
	}
}
