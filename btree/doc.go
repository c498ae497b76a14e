// Package btree is a B+tree of variable-length byte keys and values on
// buffer-pool pages.
//
// # Basics
//
// A Tree lives in one space of a cache.Pool: Create makes the space and an
// empty root leaf, Open finds the root again through the space's meta page.
// Keys compare with bytes.Compare. Get, Insert (ErrDuplicateKey if present),
// Update (ErrKeyNotFound if absent), Put (either) and Delete are point
// operations; NewIter returns an iterator bounded by a lower and an upper
// Bound, each Inclusive, Exclusive or Unbounded, that moves forward
// (First, SeekGE, Next) and backward (Last, SeekLT, Prev). "The largest key
// below X" is Last on an iterator with Upper: Excl(X); "the first key at or
// above X" is First with Lower: Incl(X).
//
// # Meters
//
// Every call takes an Account, where it charges its work: the pool counts
// page requests, hits, misses and store I/O in Account.Pages() (a
// *cache.Meter), and the tree counts its own events in Account.Tree() (a
// *TreeCounts): node visits by depth (NodeVisits[0] is the root), splits
// and merges. A point get in a tree of height h visits exactly h nodes; on
// a cold pool it reads h pages from the store. Meter, which embeds
// cache.Meter and TreeCounts, is the ready-made Account for a caller of
// the tree alone:
//
//	var m btree.Meter
//	_, _, err := tree.Get(&m, key, nil)
//	// m.NodeVisits, m.NodeVisitsTotal(), m.PoolHits, m.StoreReads
//
// A nil Account counts nothing. The In methods charge the pages to their
// mtr's meter and only the tree's counts to the Account.
//
// Account is an interface, not a struct of two pointers, so that the
// caller's own meter is the argument: a transaction's meter, which embeds
// cache.Meter, TreeCounts and other layers' counts, implements it (and
// theirs) with nil-safe methods, and is passed as &meter with no
// allocation (a pointer fits in an interface) and no handle to build at
// every call; nil still means "count nothing"; and a user of the tree alone
// writes &m for a Meter. An operation asks for the two halves once, when
// it starts (an iterator once, in NewIter), so the interface costs two
// indirect calls per operation, never one per page.
//
// # Nodes
//
// A node is one page (layout drawn in node.go): a slot array of cell
// offsets in key order and cells packed from the end of the page. Leaves
// hold key/value cells and link to both neighbours; inner nodes hold
// separator/child cells plus a leftmost child. A separator is the first key
// of its right child at the time of the split (no suffix truncation).
// Key plus value may use at most a quarter of a page (ErrKeyTooLarge), so
// a split always leaves both halves within a page.
//
// The root page never moves: when it splits, its contents move down into a
// new child and the root becomes an inner node one level up; when an inner
// root is left with a single child, it absorbs that child. So the root
// pointer in the space's meta page is written once.
//
// A non-root node whose entries use less than half of its body (InnoDB's
// default MERGE_THRESHOLD) merges with a sibling under the same parent
// when both fit in one page, and its page goes back to the space's free
// list. A node that cannot merge stays as it is; non-root leaves are never
// empty (an empty leaf always fits into its sibling) and inner nodes always
// have at least one child. There is no redistribution between siblings.
//
// # Concurrency
//
// A Tree is safe for concurrent use. Operations latch-couple: readers take
// shared latches from the root down, releasing each parent once the child
// is latched; writers do the same with an exclusive latch on the leaf and
// finish there when the leaf has room (or, for deletes, stays at least half
// full). Otherwise they start again pessimistically: exclusive latches
// from the root, releasing all ancestors whenever a node is safe (an
// insert cannot split it, a delete cannot empty it below the threshold).
// Before a pessimistic descent the writer reserves twice the height plus
// six pool frames, so a split or merge never meets cache.ErrPoolExhausted
// half way: it is refused before anything changes.
//
// Latch order is parent before child and left before right. Moving left
// (reverse scans) goes against it, so an iterator only tries the left
// leaf's latch; if that would wait, it lets go of its leaf, waits, checks
// that the left leaf is still its neighbour, and otherwise descends again.
// An iterator holds a pin but no latch between calls; if its leaf changed
// meanwhile, it finds its place again by key.
//
// A point write that follows a read of the same key need not descend
// again: GetPos records the leaf where the key was found (a Pos), and
// UpdateAtIn latches that leaf alone, exclusively, and writes there if it is
// still a leaf holding the key (one page request and one node visit,
// counted at the leaf's depth); otherwise it descends. This is InnoDB's
// UPDATE, which writes through the persistent cursor its search positioned
// (btr_pcur_restore_position, optimistic when the block's modify clock is
// unchanged) rather than searching the tree twice. Keys are unique in a
// tree, so a leaf that holds the key is the leaf a descent would reach; a
// page that leaves the tree (a merge, a root collapse) is emptied in the
// mini-transaction that removes it, and then formatted free.
//
// # Mini-transactions and the redo log
//
// Every write is one mini-transaction (cache.Mtr): Insert, Update, Put and
// Delete begin an mtr, do their work in it and commit it, and InsertIn,
// UpdateIn, PutIn and DeleteIn do the same work inside the caller's mtr
// without committing it (the engine adds its own note to the record and
// commits). Create builds its root leaf and records it in the space's meta
// page in one mtr. With a log attached to the pool, an mtr is one redo
// record holding every page it changed, so a split (the node, its new
// sibling, the right neighbour leaf's back link, the parent's new separator,
// the space's meta page, up to a root that grows by a level) or a merge
// (both nodes, the neighbour leaf, the parent, the freed page and the meta
// page, up to a root that shrinks) is logged as one record: recovery
// replays it whole or not at all. A write refused (a duplicate or missing
// key, an entry too large, a structural change refused for want of pool
// frames) changes nothing and logs nothing.
//
// Pages are latched for writing through the mtr. A page released unchanged
// is unlatched at once, as in plain latch coupling, but a changed page
// stays exclusively latched (and pinned) until the mtr commits, so the
// tree takes care that no step of an operation needs a latch out of order
// once it has changed a page:
//
//   - a pessimistic delete latches, on the way down, the sibling that each
//     node of its path would merge with if the delete may leave it
//     underfull (a left sibling before the node: it lets go of the
//     unchanged node, latches the sibling, and takes the node back);
//     merging later, bottom up, would mean latching an upper sibling while
//     holding changed pages below it;
//   - pages merged away go to the free list only at the end of the
//     operation, and splits allocate only after their last node latch, so
//     the space's meta page, which the mtr holds from the first
//     allocation or free until commit, is always the last page latched.
//
// An In method's caller must not hold latches on the tree's pages (nor
// call into the tree again) before it commits: the operation starts from
// the root as usual, and its changed pages block every other access until
// the commit.
//
// # Caveats
//
// Check verifies every invariant and is meant for tests.
package btree
