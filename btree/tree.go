package btree

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
)

// Errors. Every one is prefixed "btree:" and wrapped with context; match
// with errors.Is.
var (
	// ErrKeyTooLarge means key plus value exceed a quarter of a page.
	ErrKeyTooLarge = errors.New("btree: key and value too large")
	// ErrDuplicateKey is returned by Insert for a key already present.
	ErrDuplicateKey = errors.New("btree: duplicate key")
	// ErrKeyNotFound is returned by Update and Delete for a missing key.
	ErrKeyNotFound = errors.New("btree: key not found")
	// ErrCorruptTree means a node did not look like part of this tree.
	// It matches page.ErrCorrupt: a tree's nodes are pages of the store.
	ErrCorruptTree = page.NewCorruptKind("btree: corrupt tree")
)

// Tree is a B+tree in one space of a buffer pool. It is safe for concurrent
// use by many goroutines.
type Tree struct {
	pool     *cache.Pool
	space    uint32
	root     page.ID
	maxEntry int // largest key+value accepted
	// minFill: a non-root node using fewer body bytes is underfull and
	// merges with a sibling if the two fit in one page. Half a page, as
	// InnoDB's default MERGE_THRESHOLD.
	minFill int
	maxSep  int // largest inner cell plus its slot

	// height is the last height seen at the root; it sizes reservations
	// (and is checked again under the root latch).
	height atomic.Int32
}

// Create makes a new, empty tree in space, which must not exist yet. The
// root leaf and the meta page's root pointer are one mini-transaction.
func Create(m Account, pool *cache.Pool, space uint32) (*Tree, error) {
	pm, _ := accounts(m)
	if err := pool.CreateSpace(pm, space); err != nil {
		return nil, fmt.Errorf("btree: create tree in space %d: %w", space, err)
	}
	mt := pool.BeginMtr(pm)
	defer mt.Commit()
	pg, err := pool.AllocPage(mt, nil, space, page.KindBTreeLeaf)
	if err != nil {
		return nil, fmt.Errorf("btree: create root in space %d: %w", space, err)
	}
	initNode(mt, pg, 0)
	root := pg.ID()
	mt.Release(pg, true)
	if err := pool.SetRoot(mt, space, root.Page); err != nil {
		return nil, err
	}
	return newTree(pool, root, 1), nil
}

// Open opens the tree kept in space.
func Open(m Account, pool *cache.Pool, space uint32) (*Tree, error) {
	pm, _ := accounts(m)
	info, err := pool.Space(pm, space)
	if err != nil {
		return nil, fmt.Errorf("btree: open tree in space %d: %w", space, err)
	}
	if info.Root == 0 {
		return nil, fmt.Errorf("%w: space %d has no root page", ErrCorruptTree, space)
	}
	t := newTree(pool, page.ID{Space: space, Page: info.Root}, 1)
	pg, err := pool.Fetch(pm, t.root)
	if err != nil {
		return nil, fmt.Errorf("btree: open tree in space %d: %w", space, err)
	}
	pg.RLatch()
	err = t.checkNode(pg, -1)
	t.height.Store(int32(node(pg.Data()).level() + 1))
	pg.RUnlatch()
	pg.Unpin(false)
	if err != nil {
		return nil, fmt.Errorf("btree: open tree in space %d: %w", space, err)
	}
	return t, nil
}

func newTree(pool *cache.Pool, root page.ID, h int32) *Tree {
	ps := pool.PageSize()
	t := &Tree{
		pool:     pool,
		space:    root.Space,
		root:     root,
		maxEntry: ps / 4,
		minFill:  (ps - nodeHeader) / 2,
	}
	t.maxSep = innerCellHead + t.maxEntry + slotSize
	t.height.Store(h)
	return t
}

// MaxEntry is the largest key+value the tree accepts: a quarter page.
func (t *Tree) MaxEntry() int { return t.maxEntry }

// Space returns the tree's space.
func (t *Tree) Space() uint32 { return t.space }

// Root returns the root page. It never changes: a root split pushes the
// old root's contents down into a new child.
func (t *Tree) Root() page.ID { return t.root }

func (t *Tree) checkSize(key, val []byte) error {
	if n := len(key) + len(val); n > t.maxEntry {
		return fmt.Errorf("%w: key %d bytes + value %d bytes = %d, the limit is %d (a quarter of a %d-byte page)",
			ErrKeyTooLarge, len(key), len(val), n, t.maxEntry, t.pool.PageSize())
	}
	return nil
}

func visit(tc *TreeCounts, depth int) {
	if tc != nil {
		tc.NodeVisits[min(depth, MaxLevels-1)]++
	}
}

func (t *Tree) id(no uint32) page.ID { return page.ID{Space: t.space, Page: no} }

// checkNode verifies, cheaply, that pg looks like a node of a B+tree at
// level wantLevel (-1: any): its kind matches its level, and its slot array
// and cell area fit the page. It keeps a page that is not a node (a wrong
// space, a stale link) from being read as one.
func (t *Tree) checkNode(pg *cache.Page, wantLevel int) error {
	b := pg.Data()
	n := node(b)
	k := page.KindOf(b)
	lvl := n.level()
	switch {
	case k != page.KindBTreeLeaf && k != page.KindBTreeInner,
		(k == page.KindBTreeLeaf) != (lvl == 0),
		wantLevel >= 0 && lvl != wantLevel:
		return fmt.Errorf("%w: page %s has kind %s and level %d, want a node at level %d",
			ErrCorruptTree, pg.ID(), k, lvl, wantLevel)
	case n.slotsEnd() > n.cellStart() || n.cellStart() > len(b):
		return fmt.Errorf("%w: page %s: %d slots end at %d, cells start at %d",
			ErrCorruptTree, pg.ID(), n.count(), n.slotsEnd(), n.cellStart())
	}
	return nil
}

// checkChild verifies that a page reached from a parent at level plevel is
// a node of this tree one level down.
func (t *Tree) checkChild(pg *cache.Page, plevel int) error { return t.checkNode(pg, plevel-1) }

// Descent edges.
const (
	edgeKey = iota
	edgeFirst
	edgeLast
)

// rlatch and runlatch take and release a shared latch: through mt when
// there is one (it skips a page it holds exclusively), else directly.
func rlatch(mt *cache.Mtr, pg *cache.Page) {
	if mt != nil {
		mt.RLatch(pg)
	} else {
		pg.RLatch()
	}
}

func runlatch(mt *cache.Mtr, pg *cache.Page) {
	if mt != nil {
		mt.RUnlatch(pg)
	} else {
		pg.RUnlatch()
	}
}

// descend latch-couples from the root to a leaf: shared latches on inner
// nodes, and on the leaf a shared latch, or, if exclusive, an exclusive one
// taken through mt (which exclusive requires). It returns the leaf pinned
// and latched, and its depth. Shared latches go through mt too when mt is
// not nil, so that a descent never waits for a page its own mtr holds.
// The pool charges pm; the node visits go to tc.
func (t *Tree) descend(pm *cache.Meter, tc *TreeCounts, mt *cache.Mtr, key []byte, edge int, exclusive bool) (*cache.Page, int, error) {
restart:
	pg, err := t.pool.Fetch(pm, t.root)
	if err != nil {
		return nil, 0, err
	}
	rlatch(mt, pg)
	visit(tc, 0)
	if err := t.checkNode(pg, -1); err != nil {
		runlatch(mt, pg)
		pg.Unpin(false)
		return nil, 0, err
	}
	if exclusive && node(pg.Data()).isLeaf() {
		// The root is the leaf: trade the shared latch for an exclusive
		// one and make sure it is still a leaf.
		runlatch(mt, pg)
		mt.Latch(pg)
		if node(pg.Data()).isLeaf() {
			t.setHeight(1)
			return pg, 0, nil
		}
		mt.Release(pg, false)
		goto restart
	}
	depth := 0
	for {
		n := node(pg.Data())
		lvl := n.level()
		if lvl == 0 {
			t.setHeight(depth + 1)
			return pg, depth, nil
		}
		var c uint32
		switch edge {
		case edgeKey:
			c = n.child(n.childIndex(key))
		case edgeFirst:
			c = n.left()
		default:
			c = n.child(n.count() - 1)
		}
		child, err := t.pool.Fetch(pm, t.id(c))
		if err != nil {
			runlatch(mt, pg)
			pg.Unpin(false)
			return nil, 0, err
		}
		leafX := exclusive && lvl == 1
		if leafX {
			mt.Latch(child)
		} else {
			rlatch(mt, child)
		}
		depth++
		visit(tc, depth)
		runlatch(mt, pg)
		pg.Unpin(false)
		if err := t.checkChild(child, lvl); err != nil {
			if leafX {
				mt.Release(child, false)
			} else {
				runlatch(mt, child)
				child.Unpin(false)
			}
			return nil, 0, err
		}
		pg = child
	}
}

// setHeight records the height a descent found. It writes only a
// change: a store on every descent would make the line that holds the
// tree's root, pool and height one that every processor writes, and
// every descent on another processor would then miss it.
func (t *Tree) setHeight(h int) {
	if t.height.Load() != int32(h) {
		t.height.Store(int32(h))
	}
}

// Get looks key up and appends its value to dst[:0]. found is false (and
// err nil) when the key is absent. With a dst of enough capacity it does not
// allocate.
func (t *Tree) Get(m Account, key, dst []byte) (val []byte, found bool, err error) {
	var pos Pos
	return t.GetPos(m, key, dst, &pos)
}

// Pos is where a read found a key: the number of the leaf that held it. A
// write of the same key that follows in the same tree starts from that
// leaf (UpdateAtIn) instead of descending again, as InnoDB's UPDATE
// restores the persistent cursor its search stored
// (btr_pcur_restore_position, optimistic when buf_page_optimistic_get
// finds the block unchanged). The zero Pos is no position.
//
// A position is only a guess, checked under the leaf's exclusive latch: the
// page must still be a leaf and hold the key. Keys are unique in a tree,
// and a page that leaves the tree (merged into its sibling, or copied into
// the root when the root collapses) is emptied in the mini-transaction
// that removes it, then formatted free: so a leaf that holds the key is
// the one a descent would reach. Otherwise the write descends. InnoDB
// checks its block's modify clock instead, bumped whenever a record may
// leave the page; its records stay where they are on an insert, and this
// package's slots move, so the leaf is searched again either way.
type Pos struct{ leaf uint32 }

// GetPos is Get that also records in pos where the key was found (the
// zero Pos when it was not).
func (t *Tree) GetPos(m Account, key, dst []byte, pos *Pos) (val []byte, found bool, err error) {
	pm, tc := accounts(m)
	*pos = Pos{}
	pg, _, err := t.descend(pm, tc, nil, key, edgeKey, false)
	if err != nil {
		return nil, false, err
	}
	n := node(pg.Data())
	if i, eq := n.search(key); eq {
		val = append(dst[:0], n.val(i)...)
		found = true
		*pos = Pos{leaf: pg.ID().Page}
	}
	pg.RUnlatch()
	pg.Unpin(false)
	return val, found, nil
}

// Has reports whether key is present.
func (t *Tree) Has(m Account, key []byte) (bool, error) {
	pm, tc := accounts(m)
	pg, _, err := t.descend(pm, tc, nil, key, edgeKey, false)
	if err != nil {
		return false, err
	}
	_, eq := node(pg.Data()).search(key)
	pg.RUnlatch()
	pg.Unpin(false)
	return eq, nil
}

// Write modes.
const (
	modeInsert = iota // fail if present
	modeUpdate        // fail if absent
	modePut           // insert or overwrite
)

// Insert adds key with val; ErrDuplicateKey if key is present. It is one
// mini-transaction: InsertIn in a new mtr, committed.
func (t *Tree) Insert(m Account, key, val []byte) error {
	pm, tc := accounts(m)
	mt := t.pool.BeginMtr(pm)
	err := t.write(mt, tc, key, val, modeInsert, 0)
	mt.Commit()
	return err
}

// Update replaces the value of key; ErrKeyNotFound if it is absent. It is
// one mini-transaction.
func (t *Tree) Update(m Account, key, val []byte) error {
	pm, tc := accounts(m)
	mt := t.pool.BeginMtr(pm)
	err := t.write(mt, tc, key, val, modeUpdate, 0)
	mt.Commit()
	return err
}

// Put inserts key or replaces its value. It is one mini-transaction.
func (t *Tree) Put(m Account, key, val []byte) error {
	pm, tc := accounts(m)
	mt := t.pool.BeginMtr(pm)
	err := t.write(mt, tc, key, val, modePut, 0)
	mt.Commit()
	return err
}

// Delete removes key; ErrKeyNotFound if it is absent. It is one
// mini-transaction.
func (t *Tree) Delete(m Account, key []byte) error {
	pm, tc := accounts(m)
	mt := t.pool.BeginMtr(pm)
	err := t.del(mt, tc, key)
	mt.Commit()
	return err
}

// InsertIn is Insert inside the caller's mini-transaction: the pool
// charges mt.Meter(), as everything done in mt, and the tree charges
// m.Tree() (m.Pages() is not asked for; it is normally the meter mt was
// begun with). It does not commit mt: the pages it changed (and, after a
// split, the space's meta page) stay exclusively latched until the caller
// commits, so the caller must commit before it touches this tree again and
// must not hold latches on the tree's pages when it calls (see the package
// documentation). On an error nothing was changed, except for errors that
// report a corrupt tree or a failed page read in the middle of a merge.
func (t *Tree) InsertIn(m Account, mt *cache.Mtr, key, val []byte) error {
	if err := t.checkMtr(mt); err != nil {
		return err
	}
	return t.write(mt, treeCounts(m), key, val, modeInsert, 0)
}

// UpdateIn is Update inside the caller's mini-transaction; see InsertIn.
func (t *Tree) UpdateIn(m Account, mt *cache.Mtr, key, val []byte) error {
	if err := t.checkMtr(mt); err != nil {
		return err
	}
	return t.write(mt, treeCounts(m), key, val, modeUpdate, 0)
}

// UpdateAtIn is UpdateIn starting from pos, where a read of key (GetPos)
// found it: when that leaf still holds the key, the update visits that
// node only (one page request, one node visit at the leaf's depth);
// otherwise it descends as UpdateIn does, after the request and the visit
// of that page (the request alone if the page could not be read).
func (t *Tree) UpdateAtIn(m Account, mt *cache.Mtr, key, val []byte, pos Pos) error {
	if err := t.checkMtr(mt); err != nil {
		return err
	}
	tc := treeCounts(m)
	if pos.leaf == 0 {
		return t.write(mt, tc, key, val, modeUpdate, 0)
	}
	if err := t.checkSize(key, val); err != nil {
		return err
	}
	pg, i, ok := t.restore(mt, tc, key, pos)
	if !ok {
		return t.write(mt, tc, key, val, modeUpdate, 0)
	}
	done := replaceVal(mt, pg, i, val)
	mt.Release(pg, done)
	if done {
		return nil
	}
	return t.writePessimistic(mt, tc, key, val, modeUpdate, 0)
}

// restore latches pos's leaf exclusively through mt and finds key in it:
// the optimistic restore of a stored position (see Pos). When the page is
// no longer a leaf of this tree holding key, it lets the page go and
// reports false. A page that cannot be read is left to the descent that
// follows, which reads it too if it is on the key's path and reports the
// error.
func (t *Tree) restore(mt *cache.Mtr, tc *TreeCounts, key []byte, pos Pos) (*cache.Page, int, bool) {
	pg, err := t.pool.Fetch(mt.Meter(), t.id(pos.leaf))
	if err != nil {
		return nil, 0, false
	}
	mt.Latch(pg)
	visit(tc, int(t.height.Load())-1)
	if t.checkNode(pg, 0) != nil {
		mt.Release(pg, false)
		return nil, 0, false
	}
	i, found := node(pg.Data()).search(key)
	if !found {
		mt.Release(pg, false)
		return nil, 0, false
	}
	return pg, i, true
}

// InsertTrxIn is InsertIn by transaction trx: the leaf's max trx id
// (InnoDB's PAGE_MAX_TRX_ID, see node.go) is raised to trx in mt.
func (t *Tree) InsertTrxIn(m Account, mt *cache.Mtr, key, val []byte, trx uint64) error {
	if err := t.checkMtr(mt); err != nil {
		return err
	}
	return t.write(mt, treeCounts(m), key, val, modeInsert, trx)
}

// UpdateTrxIn is UpdateIn by transaction trx; see InsertTrxIn.
func (t *Tree) UpdateTrxIn(m Account, mt *cache.Mtr, key, val []byte, trx uint64) error {
	if err := t.checkMtr(mt); err != nil {
		return err
	}
	return t.write(mt, treeCounts(m), key, val, modeUpdate, trx)
}

// PutIn is Put inside the caller's mini-transaction; see InsertIn.
func (t *Tree) PutIn(m Account, mt *cache.Mtr, key, val []byte) error {
	if err := t.checkMtr(mt); err != nil {
		return err
	}
	return t.write(mt, treeCounts(m), key, val, modePut, 0)
}

// DeleteIn is Delete inside the caller's mini-transaction; see InsertIn.
func (t *Tree) DeleteIn(m Account, mt *cache.Mtr, key []byte) error {
	if err := t.checkMtr(mt); err != nil {
		return err
	}
	return t.del(mt, treeCounts(m), key)
}

// DeleteIfIn is DeleteIn of key if its value satisfies cond, decided
// under the leaf's exclusive latch, so that no writer changes the value
// between the test and the delete (the engine's purge removes a
// delete-marked record only if it is still marked). It reports whether it
// deleted; a key that is absent is no error (false). cond may be called
// twice (on the optimistic path, then again on the pessimistic one) and
// must not retain val.
func (t *Tree) DeleteIfIn(m Account, mt *cache.Mtr, key []byte, cond func(val []byte) bool) (bool, error) {
	if err := t.checkMtr(mt); err != nil {
		return false, err
	}
	err := t.delIf(mt, treeCounts(m), key, cond)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrKeyNotFound), err == errCondFalse:
		return false, nil
	}
	return false, err
}

// errCondFalse says DeleteIfIn's condition did not hold.
var errCondFalse = errors.New("btree: delete condition false")

func (t *Tree) checkMtr(mt *cache.Mtr) error {
	if mt == nil || mt.Pool() != t.pool {
		return fmt.Errorf("btree: write to the tree in space %d needs a mini-transaction on the tree's pool", t.space)
	}
	return nil
}

func modeErr(mode int, found bool, key []byte) error {
	switch {
	case mode == modeInsert && found:
		return fmt.Errorf("%w: %q", ErrDuplicateKey, key)
	case mode == modeUpdate && !found:
		return fmt.Errorf("%w: %q", ErrKeyNotFound, key)
	}
	return nil
}

// write is the optimistic path: shared latches down to an exclusive leaf
// latch, and done if the leaf has room. Otherwise it starts again on the
// pessimistic path, which may split. trx, if not 0, raises the leaf's max
// trx id.
func (t *Tree) write(mt *cache.Mtr, tc *TreeCounts, key, val []byte, mode int, trx uint64) error {
	if err := t.checkSize(key, val); err != nil {
		return err
	}
	pg, _, err := t.descend(mt.Meter(), tc, mt, key, edgeKey, true)
	if err != nil {
		return err
	}
	n := node(pg.Data())
	i, found := n.search(key)
	if err := modeErr(mode, found, key); err != nil {
		mt.Release(pg, false)
		return err
	}
	// insertLeaf and replaceVal change nothing when they report false.
	var ok bool
	if found {
		ok = replaceVal(mt, pg, i, val)
	} else {
		ok = insertLeaf(mt, pg, i, key, val)
	}
	if ok && trx != 0 {
		raiseMaxTrx(mt, pg, trx)
	}
	mt.Release(pg, ok)
	if ok {
		return nil
	}
	return t.writePessimistic(mt, tc, key, val, mode, trx)
}

// del is Delete's optimistic path: done at the leaf if the leaf stays at
// least half full (or is the root), else pessimistic.
func (t *Tree) del(mt *cache.Mtr, tc *TreeCounts, key []byte) error {
	return t.delIf(mt, tc, key, nil)
}

// delIf is del of a key whose value satisfies cond (nil: any), else
// errCondFalse with nothing changed.
func (t *Tree) delIf(mt *cache.Mtr, tc *TreeCounts, key []byte, cond func([]byte) bool) error {
	pg, depth, err := t.descend(mt.Meter(), tc, mt, key, edgeKey, true)
	if err != nil {
		return err
	}
	n := node(pg.Data())
	i, found := n.search(key)
	if !found {
		mt.Release(pg, false)
		return fmt.Errorf("%w: %q", ErrKeyNotFound, key)
	}
	if cond != nil && !cond(n.val(i)) {
		mt.Release(pg, false)
		return errCondFalse
	}
	after := n.used() - n.cellSize(n.slot(i)) - slotSize
	if depth == 0 || (n.count() > 1 && after >= t.minFill) {
		remove(mt, pg, i)
		mt.Release(pg, true)
		return nil
	}
	mt.Release(pg, false)
	return t.deletePessimistic(mt, tc, key, cond)
}

// path is the set of exclusively latched nodes of a pessimistic operation,
// from the highest node that may change down to the leaf, all latched
// through the operation's mtr.
type path struct {
	t     *Tree
	mt    *cache.Mtr
	m     *cache.Meter // mt.Meter(), for the pool
	tc    *TreeCounts
	r     *cache.Reservation // a pessimistic operation's; new each time: pages it paid for may outlive the path (pinned by the mtr), and Unpin refunds through paidBy
	pages []*cache.Page
	idx   []int  // idx[k]: index of pages[k] in pages[k-1] (-1 = leftmost)
	dirty []bool // dirty[k]: pages[k] was changed
	// sibs[k]: the sibling pages[k] would merge with, latched during the
	// descent of a delete when pages[k] may end up underfull (nil: none).
	sibs []*cache.Page
	// frees: pages merged away, still latched; they go to the free list at
	// the end of the operation, after every latch on a node was taken, so
	// that the space's meta page, which the mtr then holds until commit,
	// is latched last.
	frees []*cache.Page
	depth int // depth of pages[0]
}

// pathPool holds released paths (*path) with their slices' room, so that
// a pessimistic operation allocates no path once the pool is warm.
var pathPool sync.Pool

// newPath returns an empty path, from the pool when it has one.
func newPath(t *Tree, mt *cache.Mtr, m *cache.Meter, tc *TreeCounts) *path {
	p, _ := pathPool.Get().(*path)
	if p == nil {
		return &path{t: t, mt: mt, m: m, tc: tc}
	}
	*p = path{t: t, mt: mt, m: m, tc: tc,
		pages: p.pages[:0], idx: p.idx[:0], dirty: p.dirty[:0], sibs: p.sibs[:0], frees: p.frees[:0]}
	return p
}

// recycle puts p, whose pages and reservation are released, in the pool.
// p must not be used after.
func (p *path) recycle() {
	clear(p.pages[:cap(p.pages)])
	clear(p.sibs[:cap(p.sibs)])
	clear(p.frees[:cap(p.frees)])
	*p = path{pages: p.pages[:0], idx: p.idx[:0], dirty: p.dirty[:0], sibs: p.sibs[:0], frees: p.frees[:0]}
	pathPool.Put(p)
}

func (p *path) push(pg *cache.Page, idx int) {
	p.pages = append(p.pages, pg)
	p.idx = append(p.idx, idx)
	p.dirty = append(p.dirty, false)
	p.sibs = append(p.sibs, nil)
}

// insertAt puts pg into the path at position k (a pushed-down root child).
func (p *path) insertAt(k int, pg *cache.Page, idx int) {
	p.pages = slices.Insert(p.pages, k, pg)
	p.idx = slices.Insert(p.idx, k, idx)
	p.dirty = slices.Insert(p.dirty, k, true)
	p.sibs = slices.Insert(p.sibs, k, nil)
}

// removeAt takes position k out of the path, without releasing anything.
func (p *path) removeAt(k int) {
	p.pages = slices.Delete(p.pages, k, k+1)
	p.idx = slices.Delete(p.idx, k, k+1)
	p.dirty = slices.Delete(p.dirty, k, k+1)
	p.sibs = slices.Delete(p.sibs, k, k+1)
}

// releaseSib gives back the sibling latched for position k, if any.
func (p *path) releaseSib(k int, dirty bool) {
	if s := p.sibs[k]; s != nil {
		p.sibs[k] = nil
		p.mt.Release(s, dirty)
	}
}

// releaseAbove releases pages[0:k] and their siblings to the mtr: a page
// that was not changed is unlatched and unpinned now, a changed one when
// the mtr commits.
func (p *path) releaseAbove(k int) {
	for j := 0; j < k; j++ {
		p.mt.Release(p.pages[j], p.dirty[j])
		p.releaseSib(j, false)
	}
	p.depth += k
	p.pages = append(p.pages[:0], p.pages[k:]...)
	p.idx = append(p.idx[:0], p.idx[k:]...)
	p.dirty = append(p.dirty[:0], p.dirty[k:]...)
	p.sibs = append(p.sibs[:0], p.sibs[k:]...)
}

// release gives every page back to the mtr and returns the reservation's
// unused frames. Pages changed (and pages merged away) stay pinned and
// latched by the mtr until it commits, on frames the reservation paid for.
// It ends the path: p goes back to the pool and must not be used after.
func (p *path) release() {
	p.releaseAbove(len(p.pages))
	for _, pg := range p.frees {
		p.mt.Release(pg, true)
	}
	p.frees = p.frees[:0]
	p.r.Release()
	p.recycle()
}

// reserveFor is the number of frames a pessimistic operation on a tree of
// height h reserves.
func reserveFor(h int) int { return 2*h + 6 }

// Safety predicates for pessimistic descents: a safe node will absorb
// whatever its child's change does to it, so its ancestors can be released.
func (t *Tree) safeForInsert(n node) bool { return n.free() >= t.maxSep }

func (t *Tree) safeForDelete(n node, root bool) bool {
	if root {
		return n.count() >= 2
	}
	return n.count() >= 2 && n.used()-t.maxSep >= t.minFill
}

// mergePartner says, for the child at index ci of inner node n (-1: the
// leftmost), which sibling it merges with: the child at index sib (the right
// one when there is one, as latch order prefers), and the index si of the
// separator that goes when they merge (the one before the right page of the
// pair). ok is false when the child has no sibling.
func mergePartner(n node, ci int) (sib, si int, ok bool) {
	switch {
	case ci < n.count()-1:
		return ci + 1, ci + 1, true
	case ci >= 0:
		return ci - 1, ci, true
	}
	return 0, 0, false
}

// mayUnderflow reports whether node n, on the pessimistic delete path of
// key, ends up underfull if the delete reaches it: a leaf loses key's entry
// (if it has it), an inner node the separator that goes when its child on
// the path merges. These are exactly the changes that rebalance then finds
// underfull, so it is the test for latching a sibling in advance.
func (t *Tree) mayUnderflow(n node, key []byte) bool {
	var i int
	if n.isLeaf() {
		var found bool
		if i, found = n.search(key); !found {
			return false
		}
	} else {
		var ok bool
		if _, i, ok = mergePartner(n, n.childIndex(key)); !ok {
			return false
		}
	}
	return n.count() <= 1 || n.used()-n.cellSize(n.slot(i))-slotSize < t.minFill
}

// lockPath reserves frames and exclusively latch-couples from the root to
// the leaf covering key, keeping the ancestors of every unsafe node.
//
// For a delete it also latches, on the way down, the sibling of every node
// of the path that may end up underfull (mayUnderflow), before it latches
// anything below that node: a merge changes pages that the mtr then holds
// until commit, so its siblings cannot be latched afterwards, bottom up,
// without breaking the latch order (top down, left to right), and a left
// sibling cannot be reached by letting go of a changed page. A left sibling
// is latched by letting go of the (still unchanged) node first.
func (t *Tree) lockPath(mt *cache.Mtr, tc *TreeCounts, key []byte, forDelete bool) (*path, error) {
	m := mt.Meter()
	for {
		h := int(t.height.Load())
		p := newPath(t, mt, m, tc)
		// The path, plus a new sibling (or, deleting, a merge sibling) for
		// each node of it (a frame comes back when its page's last pin
		// goes, and a reader may still hold a sibling we let go), a new
		// child of the root, the space's meta page and a neighbour leaf,
		// plus slack for a root that grows by a level meanwhile.
		p.r = new(cache.Reservation)
		if err := t.pool.ReserveInto(p.r, reserveFor(h)); err != nil {
			p.recycle()
			return nil, fmt.Errorf("btree: structural change refused before it started: %w", err)
		}
		root, err := p.r.Fetch(m, t.root)
		if err != nil {
			p.r.Release()
			p.recycle()
			return nil, err
		}
		mt.Latch(root)
		visit(tc, 0)
		if got := node(root.Data()).level() + 1; got > h {
			mt.Release(root, false)
			p.r.Release()
			p.recycle()
			t.height.Store(int32(got))
			continue
		}
		p.push(root, -2)
		for {
			top := node(p.pages[len(p.pages)-1].Data())
			if top.isLeaf() {
				return p, nil
			}
			ci := top.childIndex(key)
			c, err := p.r.Fetch(m, t.id(top.child(ci)))
			if err != nil {
				p.release()
				return nil, err
			}
			mt.Latch(c)
			visit(tc, p.depth+len(p.pages))
			if err := t.checkChild(c, top.level()); err != nil {
				mt.Release(c, false)
				p.release()
				return nil, err
			}
			cn := node(c.Data())
			// A delete may merge (the parent loses a separator) or borrow
			// (the parent's separator is replaced by one that may be
			// longer): its safe nodes must absorb both.
			if t.safeForInsert(cn) && (!forDelete || t.safeForDelete(cn, false)) {
				p.releaseAbove(len(p.pages))
			}
			p.push(c, ci)
			if forDelete && len(p.pages) > 1 && t.mayUnderflow(cn, key) {
				if err := p.latchSibling(); err != nil {
					p.release()
					return nil, err
				}
			}
		}
	}
}

// latchSibling latches the merge sibling of the last node of the path, which
// is unchanged, latched, and not the top of the path.
func (p *path) latchSibling() error {
	k := len(p.pages) - 1
	parent := node(p.pages[k-1].Data())
	sib, _, ok := mergePartner(parent, p.idx[k])
	if !ok {
		return nil // rebalance reports the corrupt parent
	}
	sno := parent.child(sib)
	if sib > p.idx[k] {
		s, err := p.fetchSibling(sno, parent.level())
		if err != nil {
			return err
		}
		p.sibs[k] = s
		return nil
	}
	// Left to right: let go of the node (unchanged), latch its left
	// sibling, then take the node back. The parent's exclusive latch keeps
	// other writers off both meanwhile (a split of the left sibling may
	// only set the node's prev link).
	cid := p.pages[k].ID()
	p.mt.Release(p.pages[k], false)
	s, err := p.fetchSibling(sno, parent.level())
	if err != nil {
		p.removeAt(k)
		return err
	}
	c, err := p.r.Fetch(p.m, cid)
	if err != nil {
		p.mt.Release(s, false)
		p.removeAt(k)
		return err
	}
	p.mt.Latch(c)
	p.pages[k] = c
	p.sibs[k] = s
	return nil
}

// fetchSibling fetches and latches node no, a child of a node at level
// plevel.
func (p *path) fetchSibling(no uint32, plevel int) (*cache.Page, error) {
	s, err := p.r.Fetch(p.m, p.t.id(no))
	if err != nil {
		return nil, err
	}
	p.mt.Latch(s)
	if err := p.t.checkChild(s, plevel); err != nil {
		p.mt.Release(s, false)
		return nil, err
	}
	return s, nil
}

func (t *Tree) writePessimistic(mt *cache.Mtr, tc *TreeCounts, key, val []byte, mode int, trx uint64) error {
	p, err := t.lockPath(mt, tc, key, false)
	if err != nil {
		return err
	}
	defer p.release()
	k := len(p.pages) - 1
	n := node(p.pages[k].Data())
	i, found := n.search(key)
	if err := modeErr(mode, found, key); err != nil {
		return err
	}
	if found {
		if replaceVal(mt, p.pages[k], i, val) {
			raiseMaxTrx(mt, p.pages[k], trx)
			p.dirty[k] = true
			return nil
		}
		// The entry grows past the page: split with the new value in
		// place of the old one (the old one stays until the split).
		return p.splitInsert(k, i, entry{key: key, val: val, replace: true, trx: trx})
	}
	if insertLeaf(mt, p.pages[k], i, key, val) {
		raiseMaxTrx(mt, p.pages[k], trx)
		p.dirty[k] = true
		return nil
	}
	return p.splitInsert(k, i, entry{key: key, val: val, trx: trx})
}

// entry is a cell being placed: a leaf's key and value, or an inner node's
// separator and child.
type entry struct {
	key, val []byte
	child    uint32
	replace  bool   // e replaces entry i of the node instead of going before it
	trx      uint64 // a leaf write's transaction id (the leaf's max trx id; 0: none)
}

// splitInsert splits pages[k] to make room for e at index i, then inserts
// the new separator in the parent, splitting upward as needed.
func (p *path) splitInsert(k, i int, e entry) error {
	t := p.t
	if k == 0 && p.depth == 0 {
		// The root splits: move its contents into a new child first, so
		// that the root page never changes.
		c, err := t.pushDown(p.mt, p.r, p.pages[0])
		if err != nil {
			return err
		}
		p.dirty[0] = true
		p.insertAt(1, c, -1)
		k = 1
	}
	if k == 0 {
		// pages[0] is a node that was judged safe: it must have had room.
		return fmt.Errorf("%w: node %s was safe for an insert but had no room", ErrCorruptTree, p.pages[0].ID())
	}
	pg := p.pages[k]
	n := node(pg.Data())
	kind := page.KindBTreeLeaf
	if !n.isLeaf() {
		kind = page.KindBTreeInner
	}
	// Latch the right neighbour first (left to right, as always), so that
	// nothing can fail once the split has begun.
	var next *cache.Page
	if nx := n.next(); n.isLeaf() && nx != 0 {
		var err error
		if next, err = t.latchLeaf(p.mt, p.r, nx); err != nil {
			return err
		}
	}
	sib, err := t.pool.AllocPage(p.mt, p.r, t.space, kind)
	if err != nil {
		if next != nil {
			p.mt.Release(next, false)
		}
		return err
	}
	sn := node(sib.Data())
	sep := splitNode(n, sn, i, e)
	logSplit(p.mt, pg, sib, i, e)
	if n.isLeaf() {
		// Both halves carry the leaf's max trx id, raised to the
		// writer's (whichever half e went to).
		mx := max(n.maxTrx(), e.trx)
		raiseMaxTrx(p.mt, pg, mx)
		raiseMaxTrx(p.mt, sib, mx)
		setPrev(p.mt, sib, pg.ID().Page)
		setNext(p.mt, sib, n.next())
		if next != nil {
			setPrev(p.mt, next, sib.ID().Page)
			p.mt.Release(next, true)
		}
		setNext(p.mt, pg, sib.ID().Page)
	}
	if p.tc != nil {
		p.tc.Splits++
	}
	sibNo := sib.ID().Page
	p.mt.Release(sib, true)
	p.dirty[k] = true

	pos := p.idx[k] + 1
	p.dirty[k-1] = true
	if insertInner(p.mt, p.pages[k-1], pos, sep, sibNo) {
		return nil
	}
	return p.splitInsert(k-1, pos, entry{key: sep, child: sibNo})
}

// latchLeaf fetches leaf page no and latches it exclusively through mt.
// Leaves are latched left to right, so latching a right neighbour while
// holding a leaf is safe.
func (t *Tree) latchLeaf(mt *cache.Mtr, r *cache.Reservation, no uint32) (*cache.Page, error) {
	pg, err := r.Fetch(mt.Meter(), t.id(no))
	if err != nil {
		return nil, err
	}
	mt.Latch(pg)
	if page.KindOf(pg.Data()) != page.KindBTreeLeaf {
		mt.Release(pg, false)
		return nil, fmt.Errorf("%w: leaf link leads to page %s of kind %s", ErrCorruptTree, pg.ID(), page.KindOf(pg.Data()))
	}
	return pg, nil
}

// pushDown moves the root's contents into a new child and makes the root an
// inner node one level up whose only child is that page. It returns the
// child, pinned and exclusively latched by mt.
func (t *Tree) pushDown(mt *cache.Mtr, r *cache.Reservation, root *cache.Page) (*cache.Page, error) {
	rn := node(root.Data())
	kind := page.KindBTreeInner
	if rn.isLeaf() {
		kind = page.KindBTreeLeaf
	}
	c, err := t.pool.AllocPage(mt, r, t.space, kind)
	if err != nil {
		return nil, err
	}
	copyBody(mt, c, root)
	level := rn.level()
	initNode(mt, root, level+1)
	setLeft(mt, root, c.ID().Page)
	mt.SetKind(root, page.KindBTreeInner)
	t.height.Store(int32(level + 2))
	return c, nil
}

// splitNode redistributes n's entries plus e (at index i) between n and the
// empty page s, balancing their bytes, and returns the separator for the
// parent (a copy): the first key of s for leaves; for inner nodes the middle
// key, which moves up (its child becomes s's leftmost child). n keeps the
// entries before the split point (keepLeft, which redo of a split-keep
// operation runs too), s gets the rest.
func splitNode(n, s node, i int, e entry) []byte {
	bp := compactBuf.Get().(*[]byte)
	defer compactBuf.Put(bp)
	tn := node((*bp)[:len(n)])
	copy(tn, n)
	best := splitPoint(tn, i, e)
	cnt := splitCount(tn, e)
	sep := append([]byte(nil), splitEntry(tn, i, e, best).key...)
	level := tn.level()
	keepLeft(n, tn, i, e, best)
	s.init(level)
	if tn.isLeaf() {
		for j := best; j < cnt; j++ {
			x := splitEntry(tn, i, e, j)
			s.insertLeaf(j-best, x.key, x.val)
		}
		if i >= best {
			s.put16(offLast, i-best+1) // the latest insert is e, as it was
		}
		return sep
	}
	s.setLeft(splitEntry(tn, i, e, best).child)
	for j := best + 1; j < cnt; j++ {
		x := splitEntry(tn, i, e, j)
		s.insertInner(j-best-1, x.key, x.child)
	}
	return sep
}

// splitCount is the number of entries of node tn with e placed.
func splitCount(tn node, e entry) int {
	if e.replace {
		return tn.count()
	}
	return tn.count() + 1
}

// splitEntry returns entry j of node tn with e placed at index i (in place
// of entry i if e.replace).
func splitEntry(tn node, i int, e entry, j int) entry {
	switch {
	case j == i:
		return e
	case j > i && !e.replace:
		j--
	}
	if tn.isLeaf() {
		return entry{key: tn.key(j), val: tn.val(j)}
	}
	return entry{key: tn.key(j), child: tn.child(j)}
}

// splitPoint returns where node tn with e placed at i splits: entries
// [0, best) stay; for a leaf [best, cnt) move, for an inner node best moves
// up and (best, cnt) move. It depends on tn and e alone, so that redo of a
// split-keep finds the same point.
func splitPoint(tn node, i int, e entry) int {
	leaf := tn.isLeaf()
	cnt := splitCount(tn, e)
	size := func(j int) int {
		x := splitEntry(tn, i, e, j)
		if leaf {
			return leafCellSize(x.key, x.val) + slotSize
		}
		return innerCellSize(x.key) + slotSize
	}
	// sides returns the bytes of the two nodes when the split is at s.
	// prefix[j] is the size of entries [0, j).
	var stack [256]int
	prefix := stack[:0]
	if cnt+1 > len(stack) {
		prefix = make([]int, 0, cnt+1)
	}
	prefix = append(prefix, 0)
	for j := 0; j < cnt; j++ {
		prefix = append(prefix, prefix[j]+size(j))
	}
	sides := func(s int) (left, right int) {
		left, right = prefix[s], prefix[cnt]-prefix[s]
		if !leaf {
			right -= prefix[s+1] - prefix[s] // the middle key moves up
		}
		return left, right
	}
	// When this insert goes right after the previous insert into the node,
	// the inserts are ascending (a load in key order, or one of several
	// interleaved ascending streams): split at the insertion point, as
	// InnoDB does, so that the entries before it stay together and the
	// node is left full. (An inner node keeps at least one key on the
	// right.) Otherwise split where the two sides balance best.
	//
	// Where entries follow the insertion point (the end of one district's
	// orders, followed by the next district's), the split keeps the new
	// entry and the one after it on the left and moves the rest, as
	// InnoDB's btr_page_get_split_rec_to_right does ("split all but 1
	// off"): the next ascending insert then lands on the left, after the
	// new entry, and the entries that followed move once, not at every
	// split.
	if !e.replace && i >= 1 && i == tn.lastInsert() {
		cand := i
		if leaf && cnt-i-1 >= 2 {
			cand = i + 2
		}
		if !leaf {
			cand = min(cand, cnt-2)
		}
		if l, r := sides(cand); cand >= 1 && l <= tn.capacity() && r <= tn.capacity() {
			return cand
		}
	}
	best := 1
	bestCost := int(^uint(0) >> 1)
	for s := 1; s < cnt; s++ {
		l, r := sides(s)
		if c := max(l, r); c < bestCost {
			best, bestCost = s, c
		}
	}
	return best
}

// keepLeft rebuilds node n (whose former image is tn) with the entries
// before the split point best of tn with e placed at i; a leaf keeps its
// links, an inner node its leftmost child.
func keepLeft(n, tn node, i int, e entry, best int) {
	level := tn.level()
	if tn.isLeaf() {
		prev, next := tn.prev(), tn.next()
		n.init(0)
		n.setPrev(prev)
		n.setNext(next)
		n.setMaxTrx(tn.maxTrx()) // the left half keeps it (redo too)
		for j := 0; j < best; j++ {
			x := splitEntry(tn, i, e, j)
			n.insertLeaf(j, x.key, x.val)
		}
		if i < best {
			n.put16(offLast, i+1) // the latest insert is e, as it was
		}
		return
	}
	leftmost := tn.left()
	n.init(level)
	n.setLeft(leftmost)
	for j := 0; j < best; j++ {
		x := splitEntry(tn, i, e, j)
		n.insertInner(j, x.key, x.child)
	}
}

func (t *Tree) deletePessimistic(mt *cache.Mtr, tc *TreeCounts, key []byte, cond func([]byte) bool) error {
	p, err := t.lockPath(mt, tc, key, true)
	if err != nil {
		return err
	}
	defer p.release()
	k := len(p.pages) - 1
	n := node(p.pages[k].Data())
	i, found := n.search(key)
	if !found {
		return fmt.Errorf("%w: %q", ErrKeyNotFound, key)
	}
	if cond != nil && !cond(n.val(i)) {
		return errCondFalse // the value changed between the two paths
	}
	remove(mt, p.pages[k], i)
	p.dirty[k] = true
	if err := p.rebalance(k); err != nil {
		return err
	}
	return p.freeMerged()
}

// freeMerged puts the pages merged away on the space's free list. It runs
// last: the meta page it latches is then held by the mtr until commit, and
// must come after every node latch (AllocPage and FreePage latch it after
// the caller's nodes).
func (p *path) freeMerged() error {
	if h := freeMergedHook.Load(); h != nil && len(p.frees) > 0 {
		if err := (*h)(); err != nil {
			return err
		}
	}
	for _, pg := range p.frees {
		if err := p.t.pool.FreePage(p.mt, p.r, pg); err != nil {
			return err
		}
	}
	return nil
}

// freeMergedHook, set by tests only, fails freeMerged before it frees
// anything (when it has a page to free), as a failed read of the space's
// meta page would. An atomic pointer, so that setting it races with no
// tree goroutine.
var freeMergedHook atomic.Pointer[func() error]

func (t *Tree) underfull(n node) bool { return n.count() == 0 || n.used() < t.minFill }

// rebalance fixes pages[k] after it lost an entry. A non-root node that is
// underfull merges with a sibling under the same parent when the two fit in
// one page (the parent then loses a separator, and is fixed in turn). An
// inner node left without keys (one child) whose sibling is too full to
// merge borrows one entry from it through the parent. A root inner node
// left with a single child absorbs that child. Any other underfull node
// stays as it is: so leaves below the root are never empty (an empty leaf
// always fits into its sibling) and inner nodes below the root always have
// a key.
//
// The sibling was latched by lockPath (mayUnderflow foresaw this); the page
// merged away stays latched and goes to the free list at the end
// (freeMerged).
func (p *path) rebalance(k int) error {
	t := p.t
	pg := p.pages[k]
	n := node(pg.Data())
	if k == 0 {
		if p.depth == 0 && !n.isLeaf() && n.count() == 0 {
			return p.collapseRoot()
		}
		return nil
	}
	if !t.underfull(n) {
		return nil
	}
	parent := node(p.pages[k-1].Data())
	ci := p.idx[k]
	sibIdx, si, ok := mergePartner(parent, ci)
	if !ok {
		// The parent has a single child; it cannot, below the root (see
		// above), and a root with one child is collapsed.
		return fmt.Errorf("%w: node %s has no sibling under parent %s", ErrCorruptTree, pg.ID(), p.pages[k-1].ID())
	}
	sib := p.sibs[k]
	if sib == nil || sib.ID().Page != parent.child(sibIdx) {
		return fmt.Errorf("%w: node %s is underfull but its sibling under parent %s was not latched", ErrCorruptTree, pg.ID(), p.pages[k-1].ID())
	}
	p.sibs[k] = nil
	a, b := pg, sib // merge b into a; b is child si of the parent
	if sibIdx < ci {
		a, b = sib, pg
	}
	an, bn := node(a.Data()), node(b.Data())
	need := an.used() + bn.used()
	if !an.isLeaf() {
		need += innerCellSize(parent.key(si)) + slotSize
	}
	if need > an.capacity() {
		// No merge: nothing above changes but through a borrow's split,
		// which needs no sibling; let the unused ones go.
		for j := 0; j < k; j++ {
			p.releaseSib(j, false)
		}
		var err error
		borrowed := !n.isLeaf() && n.count() == 0
		if borrowed {
			err = p.borrow(k, a, b, si)
		}
		p.mt.Release(sib, borrowed)
		return err
	}
	// Latch the leaf after b first, so nothing can fail once pages change.
	var next *cache.Page
	if nx := bn.next(); an.isLeaf() && nx != 0 {
		var err error
		if next, err = t.latchLeaf(p.mt, p.r, nx); err != nil {
			p.mt.Release(sib, false)
			return err
		}
	}
	if an.isLeaf() {
		moveTail(p.mt, b, a, 0)
		raiseMaxTrx(p.mt, a, bn.maxTrx())
		setNext(p.mt, a, bn.next())
		if next != nil {
			setPrev(p.mt, next, a.ID().Page)
			p.mt.Release(next, true)
		}
	} else {
		insertInner(p.mt, a, an.count(), parent.key(si), bn.left())
		moveTail(p.mt, b, a, 0)
	}
	remove(p.mt, p.pages[k-1], si)
	p.dirty[k-1] = true
	if p.tc != nil {
		p.tc.Merges++
	}
	p.frees = append(p.frees, b)
	// The survivor takes pg's place in the path.
	p.pages[k] = a
	p.dirty[k] = true
	if a != pg {
		p.idx[k] = ci - 1
	}
	return p.rebalance(k - 1)
}

// borrow moves one entry into the keyless inner node pages[k] from its
// sibling through the parent (a rotation): the parent's separator si comes
// down into the node, and the sibling's nearest key goes up in its place.
// a and b are the left and right of the pair, si the parent's separator
// between them. The new separator may be longer than the old one; if the
// parent has no room for it, the parent splits (the path holds every node
// that may split: pessimistic deletes keep nodes that are unsafe for an
// insert too).
func (p *path) borrow(k int, a, b *cache.Page, si int) error {
	parent := node(p.pages[k-1].Data())
	an, bn := node(a.Data()), node(b.Data())
	sep := append([]byte(nil), parent.key(si)...)
	var up []byte
	if b == p.pages[k] {
		// From the left sibling a into b: a's last child becomes b's
		// leftmost, and a's last key goes up.
		last := an.count() - 1
		up = append([]byte(nil), an.key(last)...)
		insertInner(p.mt, b, 0, sep, bn.left())
		setLeft(p.mt, b, an.child(last))
		remove(p.mt, a, last)
	} else {
		// From the right sibling b into a: b's leftmost child moves to the
		// end of a, and b's first key goes up.
		up = append([]byte(nil), bn.key(0)...)
		insertInner(p.mt, a, an.count(), sep, bn.left())
		setLeft(p.mt, b, bn.child(0))
		remove(p.mt, b, 0)
	}
	p.dirty[k] = true
	p.dirty[k-1] = true
	child := parent.child(si)
	remove(p.mt, p.pages[k-1], si)
	if insertInner(p.mt, p.pages[k-1], si, up, child) {
		return nil
	}
	return p.splitInsert(k-1, si, entry{key: up, child: child})
}

// collapseRoot replaces a root that has a single child with that child's
// contents, making the tree one level shorter. The child is pages[1] when
// the path holds it, else it is latched here. The child goes to the free
// list at the end of the operation (freeMerged).
func (p *path) collapseRoot() error {
	t := p.t
	root := p.pages[0]
	for {
		rn := node(root.Data())
		if rn.isLeaf() || rn.count() > 0 {
			return nil
		}
		cno := rn.left()
		var c *cache.Page
		held := len(p.pages) > 1 && p.pages[1].ID().Page == cno
		if held {
			c = p.pages[1]
		} else {
			// Not reached in a sound tree: an inner node below the root
			// always has a key, so the root's only child is the node the
			// delete merged into, which the path holds.
			var err error
			c, err = p.r.Fetch(p.m, t.id(cno))
			if err != nil {
				return err
			}
			p.mt.Latch(c)
		}
		copyBody(p.mt, root, c)
		cn := node(c.Data())
		if cn.isLeaf() {
			p.mt.SetKind(root, page.KindBTreeLeaf)
			setPrev(p.mt, root, 0)
			setNext(p.mt, root, 0)
		}
		// c leaves the tree: it is emptied in this mtr, as a page a
		// merge removes is (moveTail), so that no stored position (Pos)
		// finds its keys in it, even if freeing it fails below.
		initNode(p.mt, c, cn.level())
		t.height.Store(int32(rn.level() + 1))
		p.frees = append(p.frees, c)
		if held {
			p.releaseSib(1, false)
			p.removeAt(1)
			if len(p.pages) > 1 {
				p.idx[1] = rn.findChild(p.pages[1].ID().Page)
			}
		}
		p.dirty[0] = true
	}
}
