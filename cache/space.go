package cache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/store"
)

// A database holds numbered spaces; the engine gives each table and each
// index its own. Page 0 of a space is its meta page:
//
//	0            32       36        38        40         44          48         52          56       60       64
//	+------------+--------+---------+---------+----------+-----------+----------+-----------+--------+--------+
//	| page header| magic  | version | unused  | extents  | high water| free head| free count|  root  |  aux   |
//	|  (32B)     | "ELSP" |  (2B)   |  (2B)   |   (4B)   |    (4B)   |   (4B)   |    (4B)   |  (4B)  |  (4B)  |
//	+------------+--------+---------+---------+----------+-----------+----------+-----------+--------+--------+
//
// Pages are handed out in extents of ExtentPages contiguous page numbers:
// "extents" is how many extents the space has taken, "high water" the first
// page number never handed out (pages below it and at or above 1 have been
// allocated at some time). A freed page goes on a free list threaded
// through the free pages themselves (a free page holds the next free page
// number right after its header) and is reused before the space grows.
// "root" belongs to the space's user (a B+tree keeps its root page there),
// and so does "aux", a second page number (a heap keeps its visibility
// map's first page there). Spaces made before aux existed hold 0 in its
// bytes, which means none, so the field needed no new format version.
//
// Version history: 1 — this layout.
const (
	// ExtentPages is the number of contiguous page numbers in an extent.
	// Read-ahead works on extent boundaries, as InnoDB's does.
	ExtentPages = 64

	spaceMagic         = 0x50534c45 // "ELSP" little-endian
	spaceFormatVersion = 1

	offMagic     = page.HeaderSize
	offVersion   = page.HeaderSize + 4
	offExtents   = page.HeaderSize + 8
	offHighWater = page.HeaderSize + 12
	offFreeHead  = page.HeaderSize + 16
	offFreeCount = page.HeaderSize + 20
	offRoot      = page.HeaderSize + 24
	offAux       = page.HeaderSize + 28

	offFreeNext = page.HeaderSize // in a free page
)

// SpaceInfo is the allocation state of a space, read from its meta page.
type SpaceInfo struct {
	Extents   uint32 // extents taken
	HighWater uint32 // first page number never allocated
	FreePages uint32 // pages on the free list
	Root      uint32 // the user's root page (0 = none)
	Aux       uint32 // the user's second page number (0 = none)
}

func le32(b []byte, off int) uint32     { return binary.LittleEndian.Uint32(b[off:]) }
func put32(b []byte, off int, v uint32) { binary.LittleEndian.PutUint32(b[off:], v) }

// CreateSpace creates space with an empty meta page. Callers serialise
// creation of one space id; a space that exists is ErrSpaceExists.
func (p *Pool) CreateSpace(m *Meter, space uint32) error {
	id := page.ID{Space: space}
	pg, err := p.Fetch(m, id)
	if err == nil {
		pg.Unpin(false)
		return fmt.Errorf("%w: space %d", ErrSpaceExists, space)
	}
	if !errors.Is(err, store.ErrPageNotFound) {
		return err
	}
	mt := p.BeginMtr(m)
	pg, err = p.create(m, nil, id, page.KindMeta)
	if err != nil {
		mt.Commit()
		return err
	}
	mt.adopt(pg, true)
	mt.Fresh(pg)
	var hdr [16]byte
	put32(hdr[:], offMagic-offMagic, spaceMagic)
	binary.LittleEndian.PutUint16(hdr[offVersion-offMagic:], spaceFormatVersion)
	put32(hdr[:], offExtents-offMagic, 1)
	put32(hdr[:], offHighWater-offMagic, 1)
	mt.Write(pg, offMagic, hdr[:])
	p.noteSpaceSize(space, 1)
	mt.Release(pg, true)
	mt.Commit()
	return nil
}

// fetchMeta returns space's meta page pinned and latched (exclusively if
// excl), after checking its format.
func (p *Pool) fetchMeta(m *Meter, mt *Mtr, r *Reservation, space uint32, excl bool) (*Page, error) {
	id := page.ID{Space: space}
	var pg *Page
	var err error
	if r != nil {
		pg, err = r.Fetch(m, id)
	} else {
		pg, err = p.Fetch(m, id)
	}
	if errors.Is(err, store.ErrPageNotFound) {
		return nil, fmt.Errorf("%w: space %d", ErrSpaceNotFound, space)
	}
	if err != nil {
		return nil, err
	}
	if excl {
		mt.Latch(pg)
	} else {
		pg.RLatch()
	}
	b := pg.buf
	if page.KindOf(b) != page.KindMeta || le32(b, offMagic) != spaceMagic ||
		binary.LittleEndian.Uint16(b[offVersion:]) != spaceFormatVersion {
		err := fmt.Errorf("%w: space %d meta page: kind %s, magic %08x, version %d (want %d)",
			ErrBadFormat, space, page.KindOf(b), le32(b, offMagic),
			binary.LittleEndian.Uint16(b[offVersion:]), spaceFormatVersion)
		if excl {
			mt.Release(pg, false)
		} else {
			pg.RUnlatch()
			pg.Unpin(false)
		}
		return nil, err
	}
	return pg, nil
}

// noteSpaceSize records that space has extents extents, as its meta page
// says: extents × ExtentPages pages, what InnoDB's fil_space_get_size
// returns (a data file grows an extent at a time, and its pages above the
// space's high water are unused). Read-ahead reads no area that is not
// whole within it (readahead.go). It is called when the meta page is
// created, read in or grown, by a caller that holds the page's latch or
// has it private, so notes of one space are in the page's order; a fetch
// of a resident meta page notes nothing, which keeps the note off
// AllocPage's path but for a new extent.
func (p *Pool) noteSpaceSize(space, extents uint32) {
	n := uint64(extents) * ExtentPages
	v, ok := p.spaceSizes.Load(space)
	if !ok {
		v, _ = p.spaceSizes.LoadOrStore(space, new(atomic.Uint64))
	}
	v.(*atomic.Uint64).Store(n)
}

// noteMetaRead notes the size a space's meta page, just read from the
// store or the tier, gives (a page of another format notes nothing:
// fetchMeta reports it).
func (p *Pool) noteMetaRead(space uint32, b []byte) {
	if le32(b, offMagic) == spaceMagic && binary.LittleEndian.Uint16(b[offVersion:]) == spaceFormatVersion {
		p.noteSpaceSize(space, le32(b, offExtents))
	}
}

// spaceSize returns space's size in pages and whether the pool has seen
// its meta page since it opened: created the space, read the page in, or
// allocated in the space. (Recovery's redo may grow a meta page after it
// was read; the size noted is then smaller than the space until the next
// allocation, which makes read-ahead stop short, never read past the end.)
func (p *Pool) spaceSize(space uint32) (uint64, bool) {
	v, ok := p.spaceSizes.Load(space)
	if !ok {
		return 0, false
	}
	return v.(*atomic.Uint64).Load(), true
}

// Space returns the allocation state of space.
func (p *Pool) Space(m *Meter, space uint32) (SpaceInfo, error) {
	pg, err := p.fetchMeta(m, nil, nil, space, false)
	if err != nil {
		return SpaceInfo{}, err
	}
	b := pg.buf
	info := SpaceInfo{
		Extents:   le32(b, offExtents),
		HighWater: le32(b, offHighWater),
		FreePages: le32(b, offFreeCount),
		Root:      le32(b, offRoot),
		Aux:       le32(b, offAux),
	}
	pg.RUnlatch()
	pg.Unpin(false)
	return info, nil
}

// SetRoot stores the user's root page number in space's meta page, as
// part of mt.
func (p *Pool) SetRoot(mt *Mtr, space, root uint32) error {
	pg, err := p.fetchMeta(mt.m, mt, nil, space, true)
	if err != nil {
		return err
	}
	mt.Write32(pg, offRoot, root)
	mt.Release(pg, true)
	return nil
}

// SetAux stores the user's second page number in space's meta page, as
// part of mt.
func (p *Pool) SetAux(mt *Mtr, space, aux uint32) error {
	pg, err := p.fetchMeta(mt.m, mt, nil, space, true)
	if err != nil {
		return err
	}
	mt.Write32(pg, offAux, aux)
	mt.Release(pg, true)
	return nil
}

// AllocPage allocates a page of kind k in space: from the free list if it
// has one, else the next page number (taking a new extent at an extent
// boundary), as part of mt. The page is returned zeroed, pinned and
// exclusively latched by mt, which logs it as fresh; the caller fills it
// and gives it back with mt.Release(pg, true). r, if not nil, supplies the
// frames (two at most: the meta page and the page).
//
// Latch order: callers may hold latches on pages of the space; the meta page
// is latched after them, and then (from the free list) only a free page,
// which no reader or writer holds. So allocation never deadlocks against
// the caller's latches.
func (p *Pool) AllocPage(mt *Mtr, r *Reservation, space uint32, k page.Kind) (*Page, error) {
	m := mt.m
	meta, err := p.fetchMeta(m, mt, r, space, true)
	if err != nil {
		return nil, err
	}
	b := meta.buf
	var pg *Page
	if head := le32(b, offFreeHead); head != 0 {
		id := page.ID{Space: space, Page: head}
		if r != nil {
			pg, err = r.Fetch(m, id)
		} else {
			pg, err = p.Fetch(m, id)
		}
		if err == nil {
			mt.Latch(pg)
			if page.KindOf(pg.buf) != page.KindFree {
				err = fmt.Errorf("%w: page %s is on the free list but has kind %s",
					page.ErrCorruptPage, id, page.KindOf(pg.buf))
				mt.Release(pg, false)
			}
		}
		if err != nil {
			mt.Release(meta, false)
			return nil, err
		}
		mt.Write32(meta, offFreeHead, le32(pg.buf, offFreeNext))
		mt.Write32(meta, offFreeCount, le32(b, offFreeCount)-1)
		p.format(pg, k)
		mt.Fresh(pg)
	} else {
		no := le32(b, offHighWater)
		if no == 0 { // wrapped: 2^32 pages
			mt.Release(meta, false)
			return nil, fmt.Errorf("cache: space %d is full", space)
		}
		pg, err = p.create(m, r, page.ID{Space: space, Page: no}, k)
		if err != nil {
			mt.Release(meta, false)
			return nil, err
		}
		mt.adopt(pg, true)
		mt.Fresh(pg)
		mt.Write32(meta, offHighWater, no+1)
		if no+1 > le32(b, offExtents)*ExtentPages {
			mt.Write32(meta, offExtents, le32(b, offExtents)+1)
			p.noteSpaceSize(space, le32(b, offExtents))
		}
	}
	mt.Release(meta, true)
	return pg, nil
}

// format rewrites pg as an empty page of kind k. Its LSN is kept for the
// frame's sake; the mtr logs the page as fresh, so redo rebuilds it from
// zeros whatever it held.
// REQUIRES: pg pinned and exclusively latched.
func (p *Pool) format(pg *Page, k page.Kind) {
	lsn := page.LSN(pg.buf)
	page.Init(pg.buf, pg.id, k)
	page.SetLSN(pg.buf, lsn)
	p.mu.Lock()
	pg.kind.Store(uint32(k))
	p.mu.Unlock()
}

// SetKind changes the kind of a page that stays in use (a B+tree root that
// becomes an inner node). REQUIRES: pg pinned and exclusively latched.
func (pg *Page) SetKind(k page.Kind) {
	page.SetKind(pg.buf, k)
	pg.pool.mu.Lock()
	pg.kind.Store(uint32(k))
	pg.pool.mu.Unlock()
}

// FreePage puts pg on its space's free list, as part of mt. The caller has
// latched pg through mt and still releases it afterwards
// (mt.Release(pg, true)). Page 0 (the meta page) cannot be freed.
func (p *Pool) FreePage(mt *Mtr, r *Reservation, pg *Page) error {
	id := pg.id
	if id.Page == 0 {
		return fmt.Errorf("cache: page %s is a meta page and cannot be freed", id)
	}
	if !mt.Holds(pg) {
		return fmt.Errorf("cache: FreePage of page %s, which the mtr has not latched", id)
	}
	meta, err := p.fetchMeta(mt.m, mt, r, id.Space, true)
	if err != nil {
		return err
	}
	b := meta.buf
	p.format(pg, page.KindFree)
	mt.Fresh(pg)
	mt.Write32(pg, offFreeNext, le32(b, offFreeHead))
	mt.Write32(meta, offFreeHead, id.Page)
	mt.Write32(meta, offFreeCount, le32(b, offFreeCount)+1)
	mt.Release(meta, true)
	return nil
}
