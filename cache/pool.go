package cache

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/enginelab/enginelab/cache/tier"
)

// Clock tells the time to anything whose behaviour depends on it (the
// midpoint policy's old-blocks delay). Real mode uses the wall clock,
// simulated mode a virtual clock, tests a fake.
type Clock interface {
	Now() time.Time
}

// RealClock is the real time: the wall clock.
type RealClock struct{}

// Now implements Clock.
func (RealClock) Now() time.Time { return time.Now() }

// PolicyKind selects the buffer pool's eviction policy.
type PolicyKind string

// Eviction policies.
const (
	// PolicyLRU is plain least-recently-used.
	PolicyLRU PolicyKind = "lru"
	// PolicyMidpoint is InnoDB's midpoint-insertion LRU (old sublist,
	// old-blocks time).
	PolicyMidpoint PolicyKind = "midpoint"
)

// Promotion is when the midpoint policy makes a page young at a touch
// (Options.Promotion; policy.go tells each rule).
type Promotion string

// The promotion rules.
const (
	// PromoteOldBlocksTime (the default): an old page once
	// Options.OldBlocksTime has passed since its read
	// (innodb_old_blocks_time, MySQL 5.6's default of 1 s), a young page
	// once a quarter of the young sublist left the pool since it last
	// moved.
	PromoteOldBlocksTime Promotion = "time"
	// Promote51: any page once 1 + frames/1024 pages left the pool since
	// it entered the list or last moved (MySQL 5.1's built-in InnoDB,
	// buf_block_make_young).
	Promote51 Promotion = "5.1"
	// PromotePlugin: any page once a quarter of the young sublist left
	// the pool since it entered the list or last moved (the InnoDB
	// plugin with innodb_old_blocks_time 0, its default until MySQL
	// 5.6.6: buf_page_peek_if_too_old).
	PromotePlugin Promotion = "plugin"
)

// MinFrames is the smallest pool that works: a B+tree split reserves about
// twice the tree's height in frames, and a scan pins one or two more.
const MinFrames = 16

// FrameTimer is the simulator's seam into the pool. A page read runs for
// real and at once, but in virtual time it completes later, when the
// device would have delivered it; until then the page is not ready for
// anyone else. The pool asks the timer for a cell when a page is read in
// and keeps it with the frame; the simulator writes the virtual time the
// read completes into the cell when it prices the reader's work (before
// any other terminal runs, so every other caller sees the time set). A
// caller served from that frame later hands the cell back through Hit and
// pays what is left of the read.
type FrameTimer interface {
	// Loading is called by the caller that read a page in: from the tier
	// (fromTier) or the store, for itself or as read-ahead (background).
	// A nil cell means the page is ready at once (real mode): the frame
	// keeps no cell and its hits call nothing.
	Loading(fromTier, background bool) *int64
	// Hit is called, without the pool's lock, when a caller is served from
	// a frame whose page was read in with the cell ready.
	Hit(ready *int64)
}

// Runtime is what the pool asks of the world it runs in: the time and its
// frames' ready times. Real mode is RealClock's time and no ready times
// (a nil Wiring.Runtime); the simulator passes its scheduler, through the
// engine's Runtime, which embeds this one.
type Runtime interface {
	Clock
	FrameTimer
	// PageWriteWait brackets a wait for the log's durability that a page
	// write makes (begin true before the log's SyncTo, false after). The
	// writer holds the frame's I/O and may hold page latches of its own
	// mini-transaction (a fetch that evicts a dirty page): a simulator
	// must not let another caller run into them while it waits. Real mode
	// does nothing.
	PageWriteWait(begin bool)
}

// RedoLog is the redo log as the pool uses it (Wiring.Log). *redo.Log
// implements it; a test may pass a fake.
type RedoLog interface {
	// Append adds a mini-transaction's record (a redo.Builder's) and returns
	// its LSN; stamp is told the LSN before any later record gets one.
	Append(c *redo.Counts, body []byte, stamp redo.Stamper) uint64
	// End is the LSN the next record will get.
	End() uint64
	// Durable is the LSN below which every record is synced.
	Durable() uint64
	// SyncTo returns once every record below upto is durable (group
	// commit: concurrent callers share a sync, through the log's
	// Waiter). The pool calls SyncTo(lsn+1) before it writes a page whose
	// LSN is lsn and is not yet durable (the write-ahead rule).
	SyncTo(c *redo.Counts, upto uint64) error
	// MaybeWrite writes the log's buffer out if it has grown past its
	// bound; an mtr calls it before it starts, holding no latch.
	MaybeWrite() error
}

// Options configure a Pool: the settings its user chooses. What the
// pool's owner connects it to is its Wiring. Zero fields take the
// defaults named on them. The engine's options embed these.
type Options struct {
	// PoolSize is the pool's size in bytes, rounded down to whole pages.
	// Default 64 MiB. Fewer than MinFrames pages is refused.
	PoolSize int64
	// Policy is the eviction policy. Default PolicyMidpoint, as in InnoDB.
	Policy PolicyKind
	// OldPercent is the share of the midpoint policy's list kept as the old
	// sublist (InnoDB's innodb_old_blocks_pct). Default 37 (3/8 of the
	// pool); allowed 5 to 95, as in InnoDB.
	OldPercent int
	// OldBlocksTime is how long after its read a page in the old sublist
	// must wait before a touch makes it young (innodb_old_blocks_time).
	// Default 1s, InnoDB's default. Zero means the default, so for
	// "every second touch promotes" give a tiny positive time (1ns): a touch
	// promotes once the clock has moved past the read by that much.
	OldBlocksTime time.Duration
	// Promotion is when the midpoint policy makes a page young at a touch:
	// PromoteOldBlocksTime (the default: OldBlocksTime for an old page),
	// or a freed-page clock, MySQL 5.1's built-in InnoDB's (Promote51) or
	// the InnoDB plugin's with innodb_old_blocks_time 0 (PromotePlugin).
	// Only the midpoint policy has one.
	Promotion Promotion
	// Tier, if not nil, is a page cache behind the pool (see tier.Tier): a
	// miss asks it before the store. The pool does not own it (nor close
	// it). Its staleness guarantee rests on LSNs: every page change must be
	// logged (Wiring.Log), so that a newer image carries a newer LSN.
	Tier tier.Tier
	// TierMode is where pages enter the tier; default tier.Exclusive (or
	// the one Waffle implies).
	TierMode tier.Mode
	// Waffle selects one of Waffle Grid's tier modes, by the names Waffle
	// Grid gave them: WaffleLRU (exclusive: SET on eviction, DELETE on
	// read-back) or WaffleNonLRU (inclusive: SET after every store read
	// and write, on the background meter). It sets TierMode, which may be
	// left empty or must agree. Default none: the pool's own protocol
	// (waffle.go has the table of requests per page event).
	Waffle WaffleMode
	// WaffleSetQueue, with WaffleLRU, makes the SET of an evicted page
	// asynchronous: the evicting caller queues a sealed copy
	// (Meter.TierSetsQueued) and its frame is free at once; the queue
	// holds at most this many pages, sent oldest first by SendStep (or
	// the pool's sender goroutine in real mode). Default 0: synchronous,
	// as Waffle Grid sent them (the frame is free once the SET has gone
	// out). Not negative.
	WaffleSetQueue int
	// WaffleQueueFull is what an eviction does when the SET queue is
	// full: QueueFullWait (the default) or QueueFullDrop. Only with a
	// queue.
	WaffleQueueFull QueueFull
	// WaffleKeepOnRead, with WaffleLRU, leaves a page read back from the
	// tier there instead of deleting it: Waffle Grid's first releases,
	// which relied on memcached to evict a page once it had been read
	// back, with the MRU patch they made to memcached (slab.Options.
	// MRUPatch: a GET moves the item to the eviction end of its LRU)
	// or, before it, with plain memcached's LRU. Default off: the DELETE
	// (Waffle Grid's "expire on read").
	WaffleKeepOnRead bool
	// ReadAhead turns on linear read-ahead (InnoDB's): when a caller
	// first touches the last page of an extent and at least
	// ReadAheadThreshold pages of that extent were first touched in
	// ascending order, the pages of the next extent that are not resident
	// are read in. Off by default here (the engine and the command turn it
	// on, as InnoDB has it on).
	ReadAhead bool
	// ReadAheadThreshold is innodb_read_ahead_threshold: default 56 of
	// the ExtentPages (64); allowed 0 to 64.
	ReadAheadThreshold int
	// ReadAheadLinear says whose linear read-ahead ReadAhead turns on
	// (readahead.go): LinearPool (the default, the pool's own, above),
	// Linear51 (MySQL 5.1's built-in InnoDB: 3/8 of an area accessed) or
	// LinearPlugin (the InnoDB plugin's: ReadAheadThreshold of an area
	// accessed in order).
	ReadAheadLinear LinearReadAhead
	// RandomReadAhead turns on MySQL 5.1's random read-ahead
	// (buf_read_ahead_random): a miss whose area holds 5 + area/8
	// recently used pages reads the rest of the area in the background.
	// The InnoDB plugin removed it: leave it off to model the plugin.
	// Independent of ReadAhead. Off by default.
	RandomReadAhead bool
	// TornPages is the torn-page protection the pool pays for (see
	// TornPages): default none.
	TornPages TornPages
	// IOCapacity is the page cleaner's base rate, in page writes a second
	// (innodb_io_capacity): the adaptive flushing's percentages are of
	// it. Default 200, InnoDB's; at least 100, InnoDB's minimum.
	IOCapacity int
	// IOCapacityMax caps the page cleaner's writes a second
	// (innodb_io_capacity_max). Default the larger of 2000, InnoDB's
	// default, and twice IOCapacity; not below IOCapacity.
	IOCapacityMax int
	// MaxDirtyPagesPctLWM is the dirty share of the pool, in percent, from
	// which the page cleaner flushes for the pool's sake gradually
	// (innodb_max_dirty_pages_pct_lwm; see FlushTarget). Default 0, as
	// MariaDB's and MySQL 5.7's: no gradual flushing, a full
	// IOCapacity once MaxDirtyPagesPct of the pool is dirty (MySQL 8.0's
	// default is 10). Allowed 0 to MaxDirtyPagesPct.
	MaxDirtyPagesPctLWM int
	// PoolPopulate makes the pool's frames resident from when the pool
	// is created (Percona Server's innodb_buffer_pool_populate, which maps
	// InnoDB's buffer pool with MAP_POPULATE), instead of as pages first
	// fill them. The process's resident memory then follows the pool's
	// size, not the data read so far or the length of a run: a process
	// that does not fit finds out within moments, and a short run
	// measures the memory a long one takes. Where the kernel can back
	// pages without writing them (Linux 5.14's MADV_POPULATE_WRITE),
	// NewPool backs the arena's last 2 MiB and a goroutine of the pool's
	// the rest, from the end down, on a thread at the lowest priority,
	// while the work starts on the first frames (populator; Close stops
	// it): MAP_POPULATE's wait, 0.03 to 1.1 s for 256 MiB on the 2-core
	// development VM, is then not the caller's, and the population takes
	// the processors' idle time, so on a machine kept busy the memory
	// becomes resident as the work or the idle time reaches it. Elsewhere
	// NewPool writes to every page before it returns.
	// Off by default here (the command turns it on).
	PoolPopulate bool
	// Flushing selects who writes dirty pages in the background:
	// FlushingCleaner (the default: the page cleaner, cleaner.go) or
	// Flushing51 (MySQL 5.1's built-in InnoDB: no page cleaner, the
	// master thread (MasterStep) and the foreground threads writing from
	// the LRU's end themselves; flush51.go).
	Flushing FlushingPolicy
	// LRUScanDepth is how far from the LRU tail the page cleaner looks for
	// dirty pages to write, so that a fetch finds a clean victim there
	// (innodb_lru_scan_depth). Default 1024, InnoDB's (per buffer pool
	// instance; this pool is one instance); at least 1.
	LRUScanDepth int
}

// CleanerMode says how a pool's page cleaner runs (Wiring.Cleaner).
type CleanerMode uint8

// Page cleaner modes.
const (
	// CleanerOff: no goroutine. Whoever owns the pool drives the cleaner
	// by calling CleanStep (the simulator, at virtual-time intervals;
	// tests, step by step), or nobody does (structure tests).
	CleanerOff CleanerMode = iota
	// CleanerGoroutine: the pool runs the cleaner on a goroutine of its
	// own, a pass every CleanerInterval of wall time (and at once when
	// WakeCleaner asks), until Close or StopCleaner. Needs a log.
	CleanerGoroutine
)

// CleanerInterval is the real-mode page cleaner's period, InnoDB's page
// cleaner coordinator's one second (buf_flush_page_cleaner_coordinator
// sleeps a second between passes when it is not under pressure). The
// adaptive amounts (FlushTarget) are per second.
const CleanerInterval = time.Second

// DefaultLogCapacity is Wiring.LogCapacity's default: the redo log's
// capacity that checkpoint ages are measured against.
const DefaultLogCapacity = 96 << 20

// Wiring is what a pool's owner connects it to, fixed for the pool's life
// (NewPool's last argument). It is apart from Options so that the engine,
// which wires these itself, never takes a setting from its user only to
// overwrite it. A nil *Wiring is the zero one: no log, real time, no tier
// key namespace beyond zero.
type Wiring struct {
	// Log is the redo log (a *redo.Log), fixed for the pool's life: its
	// mini-transactions append their records to it, and before the pool
	// writes a page whose LSN is lsn it makes the log durable past it
	// (Log.SyncTo(lsn+1), unless Log.Durable is already past) and writes
	// nothing if that fails (the write-ahead rule). Nil means no log
	// (structure tests): mtrs take no snapshots and write no records, and
	// pages are written without a flush.
	Log RedoLog
	// Runtime tells the pool the time (the midpoint policy's) and gives
	// its frames ready times (simulated mode; see FrameTimer). Nil: real
	// time (RealClock) and no ready times. A Runtime whose Loading returns
	// nil costs a miss one call and a hit nothing.
	Runtime Runtime
	// TierDB and TierEpoch go into every tier key: the database's id and
	// the number of this open, so that no other database and no earlier
	// open can hand this pool a page (see tier.Key).
	TierDB, TierEpoch uint64
	// LogCapacity is the redo log's capacity in bytes, which the
	// checkpoint age is measured against (the adaptive flushing's
	// low-water mark and async point: see FlushTarget). Default
	// DefaultLogCapacity; negative is refused.
	LogCapacity int64
	// Cleaner says how the page cleaner runs: CleanerOff (the default:
	// the owner calls CleanStep) or CleanerGoroutine (real mode).
	Cleaner CleanerMode
	// Doublewrite is the database's doublewrite file (OpenDoublewrite),
	// which every batch of page writes goes through when
	// Options.TornPages is TornPagesDoublewrite (and only then; it must be
	// set then). The pool does not own it: its creator closes it, after
	// the pool.
	Doublewrite *Doublewrite
}

// Validate reports the first invalid option, for a pool over pages of
// pageSize bytes. Defaults are applied first, so a zero field is valid.
func (o Options) Validate(pageSize int) error {
	o.ensureDefaults()
	if !page.ValidSize(pageSize) {
		return fmt.Errorf("cache: %w: page size %d: want a power of two from %d to %d",
			ErrInvalidOptions, pageSize, page.MinSize, page.MaxSize)
	}
	if o.PoolSize < 0 {
		return fmt.Errorf("cache: %w: pool capacity %d bytes is negative", ErrInvalidOptions, o.PoolSize)
	}
	if n := o.PoolSize / int64(pageSize); n < MinFrames {
		return fmt.Errorf("cache: %w: pool capacity %d bytes holds %d pages of %d bytes; at least %d are needed",
			ErrInvalidOptions, o.PoolSize, n, pageSize, MinFrames)
	}
	switch o.Policy {
	case PolicyLRU, PolicyMidpoint:
	default:
		return fmt.Errorf("cache: %w: eviction policy %q: want %q or %q",
			ErrInvalidOptions, o.Policy, PolicyLRU, PolicyMidpoint)
	}
	if o.OldPercent < 5 || o.OldPercent > 95 {
		return fmt.Errorf("cache: %w: old sublist percent %d: want 5 to 95", ErrInvalidOptions, o.OldPercent)
	}
	if o.OldBlocksTime < 0 {
		return fmt.Errorf("cache: %w: old blocks time %v is negative", ErrInvalidOptions, o.OldBlocksTime)
	}
	switch o.ReadAheadLinear {
	case LinearPool, Linear51, LinearPlugin:
	default:
		return fmt.Errorf("cache: %w: linear read-ahead %q: want %q, %q or %q", ErrInvalidOptions, o.ReadAheadLinear, LinearPool, Linear51, LinearPlugin)
	}
	if o.ReadAheadThreshold < 0 || o.ReadAheadThreshold > ExtentPages {
		return fmt.Errorf("cache: %w: read-ahead threshold %d: want 0 to %d", ErrInvalidOptions, o.ReadAheadThreshold, ExtentPages)
	}
	if o.IOCapacity < 100 {
		return fmt.Errorf("cache: %w: io capacity %d pages a second: want at least 100", ErrInvalidOptions, o.IOCapacity)
	}
	if o.IOCapacityMax < o.IOCapacity {
		return fmt.Errorf("cache: %w: io capacity max %d pages a second is below io capacity %d", ErrInvalidOptions, o.IOCapacityMax, o.IOCapacity)
	}
	if o.MaxDirtyPagesPctLWM < 0 || o.MaxDirtyPagesPctLWM > MaxDirtyPagesPct {
		return fmt.Errorf("cache: %w: max dirty pages pct lwm %d: want 0 to %d", ErrInvalidOptions, o.MaxDirtyPagesPctLWM, MaxDirtyPagesPct)
	}
	switch o.Promotion {
	case PromoteOldBlocksTime:
	case Promote51, PromotePlugin:
		if o.Policy != PolicyMidpoint {
			return fmt.Errorf("cache: %w: promotion %q is the midpoint policy's, not %q's", ErrInvalidOptions, o.Promotion, o.Policy)
		}
	default:
		return fmt.Errorf("cache: %w: promotion %q: want %q, %q or %q", ErrInvalidOptions, o.Promotion, PromoteOldBlocksTime, Promote51, PromotePlugin)
	}
	switch o.Flushing {
	case FlushingCleaner, Flushing51:
	default:
		return fmt.Errorf("cache: %w: flushing %q: want %q or %q", ErrInvalidOptions, o.Flushing, FlushingCleaner, Flushing51)
	}
	if o.LRUScanDepth < 1 {
		return fmt.Errorf("cache: %w: LRU scan depth %d: want at least 1", ErrInvalidOptions, o.LRUScanDepth)
	}
	if err := o.validateWaffle(); err != nil {
		return err
	}
	switch o.TierMode {
	case tier.Exclusive, tier.Inclusive:
	default:
		return fmt.Errorf("cache: %w: tier mode %q: want %q or %q", ErrInvalidOptions, o.TierMode, tier.Exclusive, tier.Inclusive)
	}
	if int(o.TornPages) >= len(tornNames) {
		return fmt.Errorf("cache: %w: %v", ErrInvalidOptions, o.TornPages)
	}
	return nil
}

func (o *Options) ensureDefaults() {
	if o.PoolSize == 0 {
		o.PoolSize = 64 << 20
	}
	if o.Policy == "" {
		o.Policy = PolicyMidpoint
	}
	if o.OldPercent == 0 {
		o.OldPercent = 37
	}
	if o.OldBlocksTime == 0 {
		o.OldBlocksTime = time.Second
	}
	if o.Promotion == "" {
		o.Promotion = PromoteOldBlocksTime
	}
	o.TierMode = o.EffectiveTierMode()
	if o.WaffleSetQueue > 0 && o.WaffleQueueFull == "" {
		o.WaffleQueueFull = QueueFullWait
	}
	if o.ReadAheadThreshold == 0 {
		o.ReadAheadThreshold = 56
	}
	if o.ReadAheadLinear == "" {
		o.ReadAheadLinear = LinearPool
	}
	if o.IOCapacity == 0 {
		o.IOCapacity = 200
	}
	if o.IOCapacityMax == 0 {
		o.IOCapacityMax = max(2000, 2*o.IOCapacity)
	}
	if o.LRUScanDepth == 0 {
		o.LRUScanDepth = 1024
	}
	if o.Flushing == "" {
		o.Flushing = FlushingCleaner
	}
}

// Page is a buffer-pool frame and, while pinned, the page it holds.
//
// Lifetime: a *Page returned by Fetch, Create or AllocPage is valid until
// the matching Unpin; after that the frame may hold another page.
//
// Latches: the pin keeps the page in memory; the latch guards its bytes.
// Read the bytes under RLatch, change them under Latch. Latches are never
// held across a call that waits for another transaction, and the pool's
// own lock is never held while waiting for a latch or doing I/O.
type Page struct {
	pool *Pool
	buf  []byte
	// latch guards the bytes of buf (and modCount): shared to read them,
	// exclusive to change them.
	latch sync.RWMutex

	// ioMu serialises write-outs of this frame, so that two flushers can
	// never write two images of a page out of order.
	ioMu sync.Mutex

	// dirty is set by Unpin(true) and cleared by a write-out under the
	// shared latch. Every change to the bytes happens under the exclusive
	// latch and is followed by a set, so a change is never lost: either the
	// write-out's copy holds it, or dirty is set after the copy.
	dirty atomic.Bool

	// modCount counts exclusive latch releases. Readers holding the shared
	// latch compare it with a saved value to learn whether the page changed
	// while they were not latching it (B+tree iterators do).
	// Guarded by latch.
	modCount uint64

	// pins counts the callers holding the page, in its low bits, and
	// says with slotKept that the frame keeps a slot of the pool's free
	// frames while no one holds it (see slotKept). It changes by
	// compare-and-swap, without the pool's lock: a pin taken under a
	// page-table partition's shared latch cannot race with an eviction,
	// which re-checks it under that latch held exclusively, and one taken
	// without the latch (pinHot) is let go if the partition changed
	// (pageTable).
	pins atomic.Int32
	// paidBy is the reservation whose frame this page's pins use (nil:
	// the pool's free frames); the last unpin, by whoever makes it, gives
	// the frame back to it. The caller whose pin takes pins from 0 to 1
	// sets it before it returns the page, and the caller whose unpin takes
	// pins from 1 to 0 reads it first: the pin count's compare-and-swaps
	// order the two.
	paidBy *Reservation

	// firstAccess is the pool's access sequence number at the first time
	// a caller fetched the page since it was read in (0: not yet); linear
	// read-ahead reads the order of an extent's pages from it. Written
	// under pool.mu, read without it by a hit, which needs the lock only
	// while it is 0.
	firstAccess atomic.Uint64
	// old and youngAt are the midpoint policy's: whether the page is on
	// the old sublist, and its removal count when it was last made young.
	// Written under pool.mu, read without it by a hit deciding whether
	// it must move the page (midpoint.quiet).
	old     atomic.Bool
	youngAt atomic.Uint64

	// kind is the page's kind, for the meters; it changes under pool.mu
	// and a hit reads it without the lock.
	kind atomic.Uint32

	// Guarded by pool.mu.
	id       page.ID
	busy     bool // being written out
	claim    bool // a flush took a slot for it (see Pool.free)
	resident bool // in the page table
	// readAhead says which read-ahead brought the page in, while no
	// caller has used it yet (raNone once one has: it is raNone whenever
	// firstAccess is set). lruPos is InnoDB's LRU_position: the
	// replacer's clock when the page last went to the head of the LRU
	// (see replacer.recentLimit); random read-ahead reads recency from it.
	readAhead raKind
	lruPos    uint64
	ready     *int64 // the Runtime's cell for the read that brought the page in
	// loadedAt is when the page was read in; set before the page is in
	// the table and not changed while it is, so a pinned page's is read
	// without the lock.
	loadedAt time.Time
	prev     *Page
	next     *Page
	list     *frameList

	// The flush list's fields (flushlist.go): the LSN of the first
	// change since the page was last clean (oldest_modification; 0: not
	// on the list), the LSN of its newest change (newest_modification),
	// and the list's links (flPrev toward the newest, flNext toward the
	// oldest). The links are guarded by pool.fl; oldest and newest are
	// written under pool.fl too, except newest by a mini-transaction's
	// change to a page already on the list (Pool.dirtied), which is why
	// both are atomics.
	oldest, newest atomic.Uint64
	flPrev, flNext *Page
}

// Data returns the page's bytes. The caller must hold a pin, and a latch
// while reading or writing.
func (p *Page) Data() []byte { return p.buf }

// ID returns the id of the page the frame holds.
func (p *Page) ID() page.ID { return p.id }

// RLatch takes the page's shared latch.
func (p *Page) RLatch() { p.latch.RLock() }

// TryRLatch takes the shared latch if it is free of writers, without
// waiting. B+tree reverse scans use it to move left without risking a
// deadlock against left-to-right latch order.
func (p *Page) TryRLatch() bool { return p.latch.TryRLock() }

// RUnlatch releases the shared latch.
func (p *Page) RUnlatch() { p.latch.RUnlock() }

// Latch takes the page's exclusive latch.
func (p *Page) Latch() { p.latch.Lock() }

// Unlatch releases the exclusive latch and counts a modification.
func (p *Page) Unlatch() {
	p.modCount++
	p.latch.Unlock()
}

// ModCount returns the number of exclusive latch releases of this frame
// since it took this page. Call it under a latch.
func (p *Page) ModCount() uint64 { return p.modCount }

// Unpin releases the caller's pin. dirty says the caller changed the page
// (under its exclusive latch); the page will be written out before its frame
// is reused.
func (p *Page) Unpin(dirty bool) {
	if dirty {
		p.dirty.Store(true)
	}
	pl := p.pool
	var paid *Reservation
	for {
		w := p.pins.Load()
		n := w & pinCountMask
		if n == 0 {
			panic(fmt.Sprintf("cache: page %s unpinned more often than pinned", p.id))
		}
		if n > 1 {
			if p.pins.CompareAndSwap(w, w-1) {
				return
			}
			continue
		}
		paid = p.paidBy
		if paid == nil && pl.free.Load() > pl.keepAbove {
			// Keep the slot for the next pin (see slotKept).
			if p.pins.CompareAndSwap(1, slotKept) {
				pl.wake() // the frame can be evicted now
				return
			}
			continue
		}
		if p.pins.CompareAndSwap(1, 0) {
			break
		}
	}
	// The last pin is gone: its slot goes back to the reservation that
	// paid for it, or to the pool. Until then the accounting counts one
	// frame less than there is, never more.
	if paid == nil {
		pl.free.Add(1)
	} else {
		pl.mu.Lock()
		pl.refundLocked(paid)
		pl.mu.Unlock()
	}
	pl.wake()
}

// wake wakes the callers waiting for a frame, if there are any. A waiter
// counts itself in waiters before it looks for an unpinned frame, and an
// unpin drops its pin before it reads waiters, so one of the two sees the
// other: either the waiter finds the frame, or the unpin finds the waiter
// (and its broadcast, under the lock the waiter holds until it waits,
// reaches it).
func (p *Pool) wake() {
	if p.waiters.Load() > 0 {
		p.mu.Lock()
		p.mu.cond.Broadcast()
		p.mu.Unlock()
	}
}

// Pool is the buffer pool: a fixed set of page-sized frames in front of a
// store.Store. It is safe for concurrent use.
//
// Accounting invariant: the frames that are not free for eviction (used:
// frames with pins, pages being read in, and unpinned pages a flush is
// writing) and the frames promised to reservations (mu.reserved) leave
// free = len(frames) - used - reserved. A request that needs a new frame
// goes ahead only while free is at least one (or its reservation covers
// it), so a reserved frame is always there when its holder asks. free is
// an atomic counter so that a hit and an unpin, which take and give back a
// slot, need not take the pool's lock; it only ever counts fewer frames
// than there are, for the moments between a frame coming free and the
// counter learning it.
type Pool struct {
	// fpiHorizon is the redo LSN of the last checkpoint: with full-page
	// writes, a page whose LSN is below it gets a full-page image in the
	// next record that changes it (SetFullPageHorizon).
	fpiHorizon atomic.Uint64

	opts     Options
	store    store.Store
	pageSize int
	frames   []Page
	repl     replacer

	scratch sync.Pool // *[]byte write-out buffers

	// populator makes the arena resident in the background
	// (Options.PoolPopulate); nil if there is none. Set by NewPool.
	populator *populator

	// free is the accounting invariant's count of frames neither used
	// nor reserved (see Pool). waiters counts the callers waiting on
	// mu.cond (see wake). closed is set under mu by Close. free changes at
	// pins and unpins on every thread, so it gets a cache line of its own:
	// closed, read at every hit, and the read-only fields around it must
	// not move between the cores with it.
	_       [64]byte
	free    atomic.Int64
	waiters atomic.Int32
	_       [64]byte
	closed  atomic.Bool
	// keepAbove is the free count above which an unpin keeps its frame's
	// slot (slotKept): keepReserve, or a quarter of a smaller pool's
	// frames.
	keepAbove int64

	// table maps resident pages to frames; its partitions have latches of
	// their own (pageTable), and it changes only under mu.
	table pageTable

	// mu guards the fields inside it, and the frames' fields marked
	// "Guarded by pool.mu" (Page). It is never held during I/O, a tier
	// call or a latch wait. Lock order: mu, then a table partition's
	// latch.
	mu struct {
		sync.Mutex
		cond     sync.Cond // signalled when a pin drops to zero or a load ends
		loading  map[page.ID]chan struct{}
		free     []*Page
		reserved int
		bg       Meter
		accesses uint64 // first accesses so far (Page.firstAccess)
	}

	log RedoLog // Wiring.Log; nil: no log

	// clock and timer are Wiring.Runtime (clock RealClock and timer nil
	// without one); tierDB and tierEp are Wiring.TierDB and TierEpoch.
	clock          Clock
	timer          FrameTimer
	rt             Runtime // Wiring.Runtime; nil in real mode
	tierDB, tierEp uint64

	// lsns holds the newest LSN known for each page (KnownLSN),
	// partitioned as the page table is (lsnTable).
	lsns lsnTable

	// fl is the flush list (flushlist.go): every page changed by a logged
	// mini-transaction and not yet written since, by oldest
	// modification. Lock order: p.mu before fl, and the log's mutex before
	// fl (a mini-transaction inserts under it); nothing is taken under fl.
	fl flushList

	logCap int64 // Wiring.LogCapacity
	// arena is the frames' memory (allocArena), mapped whether it is a
	// mapping of its own, which Close gives back (releaseArena).
	arena       []byte
	arenaMapped bool
	cleaner     cleanerLoop // Wiring.Cleaner == CleanerGoroutine

	// setQ is WaffleLRU's asynchronous SET queue (WaffleSetQueue; cap 0:
	// none), and sender its real-mode goroutine (waffle.go).
	setQ   setQueue
	sender senderLoop

	// master is MySQL 5.1's master thread (Flushing51, flush51.go).
	master master
	// raBySpace counts read-ahead decisions per space (readahead.go).
	raBySpace raTriggers
	// spaceSizes is each space's size in pages, as the pool last saw its
	// meta page (space.go): uint32 space → *atomic.Uint64. Read-ahead
	// consults it (readahead.go).
	spaceSizes sync.Map

	// dw is Wiring.Doublewrite with TornPagesDoublewrite, else nil: the
	// file every batch of page writes goes through first (batch.go).
	dw *Doublewrite
}

// NewPool creates a pool over st, set up by o and connected to what w
// names (either may be nil). Invalid options are refused before any memory
// is allocated.
func NewPool(st store.Store, o *Options, w *Wiring) (*Pool, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	var wire Wiring
	if w != nil {
		wire = *w
	}
	if st == nil {
		return nil, fmt.Errorf("cache: %w: pool needs a store", ErrInvalidOptions)
	}
	ps := st.PageSize()
	if err := opts.Validate(ps); err != nil {
		return nil, err
	}
	opts.ensureDefaults()
	n := int(opts.PoolSize / int64(ps))
	p := &Pool{
		opts:     opts,
		tierDB:   wire.TierDB,
		tierEp:   wire.TierEpoch,
		clock:    RealClock{},
		store:    st,
		log:      wire.Log,
		pageSize: ps,
		frames:   make([]Page, n),
	}
	if wire.Runtime != nil {
		p.clock, p.timer, p.rt = wire.Runtime, wire.Runtime, wire.Runtime
	}
	if wire.LogCapacity < 0 {
		return nil, fmt.Errorf("cache: %w: log capacity %d bytes is negative", ErrInvalidOptions, wire.LogCapacity)
	}
	if opts.TornPages == TornPagesDoublewrite {
		if wire.Doublewrite == nil {
			return nil, fmt.Errorf("cache: %w: torn pages %v needs a doublewrite file (Wiring.Doublewrite)", ErrInvalidOptions, opts.TornPages)
		}
		if wire.Doublewrite.pageSize != ps {
			return nil, fmt.Errorf("cache: %w: doublewrite file %s is for pages of %d bytes, the store's are %d",
				ErrInvalidOptions, wire.Doublewrite.path, wire.Doublewrite.pageSize, ps)
		}
		p.dw = wire.Doublewrite
	}
	p.logCap = wire.LogCapacity
	if p.logCap == 0 {
		p.logCap = DefaultLogCapacity
	}
	switch opts.Policy {
	case PolicyLRU:
		p.repl = &lru{}
	case PolicyMidpoint:
		p.repl = &midpoint{oldPct: opts.OldPercent, oldTime: opts.OldBlocksTime, rule: opts.Promotion,
			freed51: 1 + uint64(n)/1024}
	}
	arena, mapped := allocArena(n*ps, p)
	p.arena, p.arenaMapped = arena, mapped
	if opts.PoolPopulate {
		p.startPopulate(arena)
	}
	p.mu.cond.L = &p.mu.Mutex
	p.table.init()
	p.free.Store(int64(n))
	p.keepAbove = int64(min(n/4, keepReserve))
	p.mu.loading = make(map[page.ID]chan struct{})
	p.mu.free = make([]*Page, 0, n)
	for i := n - 1; i >= 0; i-- {
		f := &p.frames[i]
		f.pool = p
		f.buf = arena[i*ps : (i+1)*ps : (i+1)*ps]
		p.mu.free = append(p.mu.free, f)
	}
	p.scratch.New = func() any { b := make([]byte, ps); return &b }
	p.setQ.cap = opts.WaffleSetQueue
	p.master.untilNext = MasterInterval
	if wire.Cleaner == CleanerGoroutine && p.log != nil {
		p.cleaner.start(p)
	}
	if wire.Cleaner == CleanerGoroutine && p.setQ.cap > 0 {
		p.sender.start(p)
	}
	return p, nil
}

// Options returns the pool's options, defaults applied.
func (p *Pool) Options() Options { return p.opts }

// PageSize returns the size of the pool's pages.
func (p *Pool) PageSize() int { return p.pageSize }

// Frames returns the number of frames.
func (p *Pool) Frames() int { return len(p.frames) }

// Store returns the store behind the pool.
func (p *Pool) Store() store.Store { return p.store }

// BackgroundMeter returns a copy of the meter charged with work no caller
// waited for (flushes called with a nil meter).
func (p *Pool) BackgroundMeter() Meter {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.bg
}

// ChargeBackground adds m to the pool's background meter: work no
// transaction waits for (checkpoints, recovery) that the layer above did.
func (p *Pool) ChargeBackground(m *Meter) {
	p.mu.Lock()
	p.mu.bg.Add(m)
	p.mu.Unlock()
}

// Resident reports whether page id is in the pool.
func (p *Pool) Resident(id page.ID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.table.get(id) != nil
}

// Stats is a snapshot of the pool's occupancy.
type Stats struct {
	Frames   int // all frames
	Resident int // frames holding a page
	Pinned   int // frames not available for eviction (pinned, loading, flushing)
	Reserved int // frames promised to reservations
	Dirty    int // resident pages changed since they were last written
}

// Stats returns a snapshot of the pool's occupancy.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := Stats{Frames: len(p.frames), Resident: p.table.len(), Reserved: p.mu.reserved}
	s.Pinned = s.Frames - int(p.free.Load()) - s.Reserved - p.keptSlots()
	for i := range p.frames {
		if f := &p.frames[i]; f.resident && f.dirty.Load() {
			s.Dirty++
		}
	}
	return s
}

// Reservation is a promise of frames: until Release, fetches made through it
// can bring in that many new pages even when the pool is otherwise full.
// Structural changes (a B+tree split) reserve first so that ErrPoolExhausted
// strikes before they start. A Reservation is used by one goroutine.
//
// A frame taken through a reservation comes back to it when the page's last
// pin goes, whoever holds that pin, so a structural change that pins and
// unpins many pages (the B+tree's path, the space's meta page) needs only
// as many frames as it holds at once.
type Reservation struct {
	p    *Pool
	left int // guarded by p.mu
}

// Reserve promises n frames, or fails with ErrPoolExhausted at once.
func (p *Pool) Reserve(n int) (*Reservation, error) {
	r := &Reservation{}
	if err := p.ReserveInto(r, n); err != nil {
		return nil, err
	}
	return r, nil
}

// ReserveInto is Reserve into a caller-owned Reservation, which avoids an
// allocation on hot paths. r must not hold frames.
func (p *Pool) ReserveInto(r *Reservation, n int) error {
	if n < 0 {
		// A negative count would raise the pool's capacity and break the
		// accounting invariant.
		return fmt.Errorf("cache: reservation of %d frames: want zero or more", n)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for reclaimed := false; ; {
		avail := p.free.Load()
		if avail < int64(n) {
			if !reclaimed {
				reclaimed = true
				p.reclaimKeptLocked()
				continue
			}
			return fmt.Errorf("%w: %d frames asked for, %d of %d available", ErrPoolExhausted, n, avail, len(p.frames))
		}
		if p.free.CompareAndSwap(avail, avail-int64(n)) {
			break
		}
	}
	p.mu.reserved += n
	r.p, r.left = p, n
	return nil
}

// Left returns how many reserved frames are still unused.
func (r *Reservation) Left() int {
	if r.p == nil {
		return 0
	}
	r.p.mu.Lock()
	defer r.p.mu.Unlock()
	return r.left
}

// refundLocked gives the slot of a frame whose last pin went back to the
// reservation that paid for it, if it is still held, else to the pool.
// REQUIRES: p.mu held.
func (p *Pool) refundLocked(r *Reservation) {
	if r != nil && r.p == p {
		p.mu.reserved++
		r.left++
		return
	}
	p.free.Add(1)
}

// Release returns the unused frames of r to the pool. It is safe to call
// on a nil or released reservation.
func (r *Reservation) Release() {
	if r == nil || r.p == nil {
		return
	}
	p := r.p
	p.mu.Lock()
	p.mu.reserved -= r.left
	p.free.Add(int64(r.left))
	r.p, r.left = nil, 0
	if p.waiters.Load() > 0 {
		p.mu.cond.Broadcast()
	}
	p.mu.Unlock()
}

// Unpin is Page.Unpin, for code that reads better naming its reservation.
func (r *Reservation) Unpin(pg *Page, dirty bool) { pg.Unpin(dirty) }

// takeLocked claims a slot for a frame about to be pinned or loaded, from r
// when it has any left (paid is then r), otherwise from the unreserved
// frames. REQUIRES: p.mu held.
func (p *Pool) takeLocked(r *Reservation) (ok bool, paid *Reservation) {
	if r != nil && r.left > 0 {
		r.left--
		p.mu.reserved-- // and used++: free is unchanged
		return true, r
	}
	if p.takeFree() {
		return true, nil
	}
	// Kept slots back, then a second look (an unpin may also have given
	// one back meanwhile).
	p.reclaimKeptLocked()
	return p.takeFree(), nil
}

// takeFree claims a slot from the unreserved frames, if one is left.
func (p *Pool) takeFree() bool {
	for {
		v := p.free.Load()
		if v < 1 {
			return false
		}
		if p.free.CompareAndSwap(v, v-1) {
			return true
		}
	}
}

// Fetch returns page id pinned, reading it from the store on a miss. It
// fails with ErrPoolExhausted when every frame is pinned or reserved.
func (p *Pool) Fetch(m *Meter, id page.ID) (*Page, error) { return p.get(m, nil, id, false, 0) }

// Fetch is Pool.Fetch drawing on the reservation.
func (r *Reservation) Fetch(m *Meter, id page.ID) (*Page, error) { return r.p.get(m, r, id, false, 0) }

// create returns a new, zeroed, dirty page of kind k that the store has
// never seen, pinned and exclusively latched.
func (p *Pool) create(m *Meter, r *Reservation, id page.ID, k page.Kind) (*Page, error) {
	return p.get(m, r, id, true, k)
}

func (p *Pool) get(m *Meter, r *Reservation, id page.ID, create bool, k page.Kind) (*Page, error) {
	var note loadNote
	f, first, err := p.load(m, r, id, create, k, raNone, &note)
	if err != nil || create {
		return f, err
	}
	if note.random {
		p.randomReadAhead(m, id)
	}
	if note.missed && p.opts.Flushing == Flushing51 {
		// buf_read_page ends with buf_flush_free_margin: the reader
		// keeps the LRU's end replaceable, writing from it if need be.
		// A failed write leaves its page dirty for a later flush.
		_, _ = p.freeMargin(m)
	}
	// InnoDB looks at an extent when its border page is touched for the
	// first time since it was read in, not at every touch (a leaf being
	// filled is touched thousands of times).
	if first && p.opts.ReadAhead {
		switch p.opts.ReadAheadLinear {
		case LinearPool:
			if id.Page%ExtentPages == ExtentPages-1 {
				p.maybeReadAhead(m, id)
			}
		case Linear51, LinearPlugin:
			p.linearReadAhead(m, id)
		}
	}
	return f, err
}

// loadNote is what load tells get about a caller's request: that it
// missed (the page was read in), and, with random read-ahead on, that the
// page's area qualified for it (buf_read_ahead_random, judged before the
// page's own read, as InnoDB's buf_read_page does).
type loadNote struct {
	missed, random bool
}

// load is get's work; readAhead says which read-ahead is bringing the
// page in (not a caller's use of it: it stays unaccessed), raNone for a
// caller, whose get passes a note to fill (read-ahead passes nil).
func (p *Pool) load(m *Meter, r *Reservation, id page.ID, create bool, k page.Kind, readAhead raKind, note *loadNote) (*Page, bool, error) {
	if r == nil && !create && readAhead == raNone && p.opts.Policy != PolicyLRU {
		// Plain LRU moves nearly every page it hits, under the lock: its
		// hits take the lock at once.
		if f, first, ok := p.hit(m, id); ok {
			return f, first, nil
		}
	}
	p.mu.Lock()
	for {
		if p.closed.Load() {
			p.mu.Unlock()
			return nil, false, ErrClosed
		}
		if f := p.table.get(id); f != nil {
			if create {
				p.mu.Unlock()
				return nil, false, fmt.Errorf("cache: page %s created while resident (allocation state is broken)", id)
			}
			if err := p.pinLocked(f, r); err != nil {
				p.mu.Unlock()
				return nil, false, err
			}
			first := false
			if readAhead == raNone {
				p.repl.access(f, p.clock, false)
				first = p.firstAccessLocked(f)
			}
			p.mu.Unlock()
			p.hitDone(m, f)
			return f, first, nil
		}
		ch := p.mu.loading[id]
		if ch == nil {
			break
		}
		// Another caller is reading this page: wait for it rather than
		// read it twice.
		p.mu.Unlock()
		<-ch
		if m != nil {
			m.PoolWaits++
		}
		p.mu.Lock()
	}

	// Miss.
	if note != nil && !create {
		note.missed = true
		if p.opts.RandomReadAhead {
			note.random = p.randomReadAheadDueLocked(id)
		}
	}
	ok, paid := p.takeLocked(r)
	if !ok {
		p.mu.Unlock()
		return nil, false, fmt.Errorf("%w: bringing in page %s", ErrPoolExhausted, id)
	}
	ch := make(chan struct{})
	p.mu.loading[id] = ch
	f, err := p.grabFrameLocked(m)
	if err != nil {
		p.refundLocked(paid)
		delete(p.mu.loading, id)
		close(ch)
		p.mu.Unlock()
		return nil, false, err
	}
	f.id = id
	f.modCount = 0 // the frame is private until it is in the table
	p.mu.Unlock()

	fromTier := false
	if create {
		// Latch before the page is published in the table: AllocPage
		// promises its caller the first (exclusive) look at a new page.
		f.Latch()
		page.Init(f.buf, id, k)
		f.dirty.Store(true)
	} else {
		fromTier = p.opts.Tier != nil && p.tierGet(m, id, f.buf)
		if !fromTier {
			err = p.store.ReadPage(id, f.buf)
			if m != nil {
				m.StoreReads++
				if err == nil {
					m.StoreReadBytes += int64(p.pageSize)
				}
			}
			if err == nil && p.opts.Tier != nil && p.opts.TierMode == tier.Inclusive {
				p.tierStoreCopy(m, id, f.buf) // the frame is still private: a store image, sealed
			}
		}
		if err == nil {
			k = page.KindOf(f.buf)
			f.dirty.Store(false)
			p.noteLSN(id, page.LSN(f.buf))
			if k == page.KindMeta && id.Page == 0 {
				p.noteMetaRead(id.Space, f.buf) // the frame is still private
			}
		}
	}

	p.mu.Lock()
	delete(p.mu.loading, id)
	close(ch)
	if err != nil {
		// Only a store read fails here; a created page cannot.
		p.refundLocked(paid)
		p.mu.free = append(p.mu.free, f)
		if p.waiters.Load() > 0 {
			p.mu.cond.Broadcast()
		}
		p.mu.Unlock()
		return nil, false, err
	}
	f.kind.Store(uint32(k))
	f.pins.Store(1) // the frame is private until it is in the table
	f.paidBy = paid
	f.resident = true
	f.firstAccess.Store(0)
	f.readAhead, f.ready = readAhead, nil
	if p.timer != nil && !create {
		f.ready = p.timer.Loading(fromTier, readAhead != raNone)
	}
	first := false
	if readAhead == raNone {
		first = p.firstAccessLocked(f)
	}
	// The replacer stamps the frame before the table publishes it: a hit
	// reads loadedAt without the lock.
	p.repl.insert(f, p.clock.Now())
	p.table.put(id, f)
	p.mu.Unlock()
	if m != nil {
		if create {
			m.PageCreates++
		} else {
			m.PoolMisses++
		}
		m.PageRequests[k]++
	}
	return f, first, nil
}

// hit is load's fast path, for a caller's fetch without a reservation: a
// resident page is pinned without the pool's lock, optimistically when
// its frame is pinned already or keeps a slot (pageTable.pinHot), else
// under its page-table partition's shared latch, as InnoDB's
// buf_page_get_gen buffer-fixes a block under its page hash latch. The
// lock is taken only when the page must move in the LRU list (the
// replacer's quiet says whether) or it is the page's first access since it
// was read in. Done in one goroutine,
// this is exactly what the slow path does. ok is false when the page is
// not resident, or a first pin finds no free slot: the slow path decides
// then, under the lock.
func (p *Pool) hit(m *Meter, id page.ID) (f *Page, first, ok bool) {
	if p.closed.Load() {
		return nil, false, false
	}
	if f = p.table.pinHot(id); f == nil {
		l := p.table.lockShared(id)
		if f = p.table.get(id); f == nil {
			l.RUnlock()
			return nil, false, false
		}
		pinned := p.pinFree(f)
		l.RUnlock()
		if !pinned {
			return nil, false, false
		}
	}
	unseen := f.firstAccess.Load() == 0
	q, aged := false, false
	if !unseen {
		q, aged = p.repl.quiet(f, p.clock)
	}
	if unseen || !q {
		p.mu.Lock()
		p.repl.access(f, p.clock, aged)
		first = p.firstAccessLocked(f)
		p.mu.Unlock()
	}
	p.hitDone(m, f)
	return f, first, true
}

// pinHeld adds a pin to f if f is pinned already or keeps a slot
// (slotKept), the pins that need no slot of their own, and reports
// whether it did; false means f had neither when it looked.
func (f *Page) pinHeld() bool {
	for {
		switch w := f.pins.Load(); {
		case w == slotKept:
			if f.pins.CompareAndSwap(slotKept, 1) {
				f.paidBy = nil // the first pin, on the slot the frame kept
				return true
			}
		case w > 0:
			if f.pins.CompareAndSwap(w, w+1) {
				return true
			}
		default:
			return false
		}
	}
}

// pinFree adds a pin to f, resident; a first pin takes a slot from the
// pool's free frames (paid by no reservation), and fails if there is
// none. REQUIRES: f's page-table partition latched, or p.mu held.
func (p *Pool) pinFree(f *Page) bool {
	for !f.pinHeld() {
		if !p.takeFree() {
			return false
		}
		if f.pins.CompareAndSwap(0, 1) {
			f.paidBy = nil
			return true
		}
		p.free.Add(1) // another caller pinned it first: its slot, not ours
	}
	return true
}

// pinLocked adds a pin to f, resident; a first pin takes the slot the
// frame kept, or one from r if it has any left, else one from the pool's
// free frames. The pin needs a slot of its own even on a page a flush
// holds a slot for: the flush gives that one back when it ends, whoever
// holds pins then. REQUIRES: p.mu held.
func (p *Pool) pinLocked(f *Page, r *Reservation) error {
	for !f.pinHeld() {
		ok, paid := p.takeLocked(r)
		if !ok {
			return fmt.Errorf("%w: fetching page %s", ErrPoolExhausted, f.id)
		}
		if f.pins.CompareAndSwap(0, 1) {
			f.paidBy = paid
			return nil
		}
		p.refundLocked(paid) // another caller pinned it first
	}
	return nil
}

// slotKept, in a frame's pins, says that the frame holds no pin but keeps
// the slot its last pin took from the pool's free frames, so that the
// next pin takes it back without touching the pool's free count: a page
// pinned and unpinned again and again (a B+tree's root, a hot row's leaf)
// then costs no write to a counter every core shares. An unpin keeps the
// slot only while more than keepAbove slots are free, a frame evicted
// gives its kept slot back, and a caller that finds no free slot takes
// every kept one back first (reclaimKeptLocked), so kept slots never make
// a fetch fail that would have succeeded. pinCountMask selects the count.
//
// Slots are kept first come, first served: once the free count is down to
// keepAbove, the pages touched first keep theirs for as long as they stay
// resident, and every later page pays the shared counter at each pin and
// unpin. In a pool that is not yet full those later pages are the newest
// ones, the right edges of growing trees and the end of a heap, which are
// the hottest; so keepAbove is small (keepReserve), not a share of the
// pool. A W=1 TPC-C run at 4 terminals in a 256 MiB pool was down to a
// quarter of its frames free within 15 s (the threshold before
// keepReserve), and the pins' and unpins' work on the free count then
// took about 4% of the run's CPU.
const (
	slotKept     int32 = 1 << 30
	pinCountMask       = slotKept - 1
	// keepReserve is how many free slots unpins leave unkept (keepAbove)
	// in a pool of at least four times as many frames: the slots that
	// callers' pins and reservations draw on before one of them has to
	// take the kept ones back (reclaimKeptLocked, a pass over every
	// frame under the pool's lock). A few hundred is many times what the
	// B+tree's descents and splits of a few dozen terminals hold at once.
	keepReserve = 256
)

// pinCount returns the number of pins f holds.
func (f *Page) pinCount() int32 { return f.pins.Load() & pinCountMask }

// Pins returns how many callers hold the page pinned now, the caller's
// own pin included. Under the page's exclusive latch a count of 1 is
// PostgreSQL's cleanup lock (ConditionalLockBufferForCleanup): nobody
// else holds the page; a new pin taken after the look cannot read the
// page before the latch is released.
func (f *Page) Pins() int { return int(f.pinCount()) }

// reclaimKeptLocked gives the pool back the slots unpinned frames kept,
// and reports whether there were any. REQUIRES: p.mu held.
func (p *Pool) reclaimKeptLocked() bool {
	any := false
	for i := range p.frames {
		if f := &p.frames[i]; f.pins.Load() == slotKept && f.pins.CompareAndSwap(slotKept, 0) {
			p.free.Add(1)
			any = true
		}
	}
	return any
}

// keptSlots counts the frames that keep a slot.
func (p *Pool) keptSlots() int {
	n := 0
	for i := range p.frames {
		if p.frames[i].pins.Load() == slotKept {
			n++
		}
	}
	return n
}

// hitDone counts a hit on f, pinned, and tells the runtime, which may
// make the caller wait for the read that brought the page in.
func (p *Pool) hitDone(m *Meter, f *Page) {
	if f.ready != nil {
		p.timer.Hit(f.ready)
	}
	if m != nil {
		m.PoolHits++
		m.PageRequests[page.Kind(f.kind.Load())]++
	}
}

// grabFrameLocked returns a frame that holds no page, evicting one if need
// be and writing it out first if it is dirty (charged to m: the caller waits
// for it). The caller has already claimed a slot, so by the accounting
// invariant an evictable frame exists; while a write-out is under way the
// lock is released, and a victim that was pinned meanwhile is given up.
// REQUIRES: p.mu held; held again on return.
func (p *Pool) grabFrameLocked(m *Meter) (*Page, error) {
	if p.opts.Flushing == Flushing51 {
		// InnoDB 5.1's buf_LRU_get_free_block (flush51.go), which falls
		// back to the loop below only when it finds nothing to do.
		if f, err := p.grabFrame51Locked(m); f != nil || err != nil {
			return f, err
		}
	}
	for {
		if n := len(p.mu.free); n > 0 {
			f := p.mu.free[n-1]
			p.mu.free = p.mu.free[:n-1]
			return f, nil
		}
		v := p.repl.victim(evictable)
		if v == nil {
			// Every unpinned frame is being written by someone else; the
			// invariant says one of them will come free. Counted as a
			// waiter first, then look again (see wake).
			p.waiters.Add(1)
			if v = p.repl.victim(evictable); v == nil {
				p.mu.cond.Wait()
				p.waiters.Add(-1)
				continue
			}
			p.waiters.Add(-1)
		}
		if v.dirty.Load() {
			if !p.shareUnpinnedLocked(v) {
				continue // a hit pinned it since it was chosen
			}
			v.busy = true
			runWriteUnpinnedHook(v)
			p.mu.Unlock()
			err := p.writeOne(m, v)
			p.mu.Lock()
			v.busy = false
			if p.waiters.Load() > 0 {
				p.mu.cond.Broadcast() // a flush may be waiting for this write
			}
			if err != nil {
				return nil, err
			}
			if m != nil {
				m.DirtyWriteBacks++
			}
			if v.pinCount() != 0 || v.dirty.Load() {
				continue // someone wanted it back while it was written
			}
		}
		if f := p.evictLocked(m, v); f != nil {
			return f, nil
		}
	}
}

// evictLocked takes v, an evictable clean frame, from its page and
// returns it, sending the page to the tier in exclusive mode (on m: the
// caller's path). It returns nil, changing nothing, if a hit pinned v
// since it was chosen (a hit needs no pool lock).
// REQUIRES: p.mu held; held again on return.
func (p *Pool) evictLocked(m *Meter, v *Page) *Page {
	if !p.table.removeUnpinned(v.id, v) {
		return nil
	}
	p.repl.remove(v)
	v.resident = false
	p.fl.drop(v) // written before, so already off the list
	if m != nil {
		m.Evictions++
	}
	switch v.readAhead { // read for nothing
	case raLinear:
		p.mu.bg.ReadAheadUnused++
	case raRandom:
		p.mu.bg.RandomReadAheadUnused++
	}
	v.readAhead = raNone
	if p.opts.Tier != nil && p.opts.TierMode == tier.Exclusive && page.Kind(v.kind.Load()) != page.KindFree {
		// The frame is now private to this caller (out of the table,
		// unpinned, clean), so the push can copy it without the lock.
		// The store already holds this image (a dirty page was
		// written first); the tier only saves a store read.
		p.mu.Unlock()
		p.tierEvict(m, v.id, v.buf)
		p.mu.Lock()
	}
	return v
}

func evictable(f *Page) bool { return f.pinCount() == 0 && !f.busy }

// shareUnpinnedLocked takes f's shared latch for a write-out, without
// waiting, while the pool's lock shows f unpinned, and reports whether it
// did. A page is latched only under a pin, so the latch is free unless a
// hit that needs no pool lock has pinned f since (then false: f is no
// longer unpinned). InnoDB's flushes take the s-latch of a page nobody
// buffer-fixes before they release the buffer pool's mutex, for this
// reason: "any thread may call the LRU flush, even when owning locks on
// pages" (buf_flush_try_page, 5.1). Here too the writer is often a caller
// that holds latches and locks of its own (an eviction for the page it
// needs, a heap extension under its allocation lock). Were the latch
// taken after the pool's lock is released, another caller could pin and
// exclusively latch f in between and then wait for one of those, while
// the writer waited for f: a deadlock. Taken here, that caller waits at
// f's latch for the copy instead. REQUIRES: p.mu held; evictable(f).
func (p *Pool) shareUnpinnedLocked(f *Page) bool { return f.latch.TryRLock() }

// writeUnpinnedHook, if set (by tests only), runs with a page chosen
// unpinned for a write-out, made busy and share-latched, before the
// pool's lock is released: it must not call the pool.
var writeUnpinnedHook atomic.Pointer[func(f *Page)]

func runWriteUnpinnedHook(f *Page) {
	if h := writeUnpinnedHook.Load(); h != nil {
		(*h)(f)
	}
}

// FlushPage writes page id out if it is resident and dirty. A nil meter
// charges the pool's background meter.
func (p *Pool) FlushPage(m *Meter, id page.ID) error {
	p.mu.Lock()
	f := p.table.get(id)
	// A write in flight has already cleared dirty: wait for it too.
	if f == nil || (!f.dirty.Load() && !f.busy) {
		p.mu.Unlock()
		return nil
	}
	return p.flushLocked(m, f, id)
}

// FlushAll writes out every dirty page, in frame order, in batches (see
// batch.go). A nil meter charges the pool's background meter. Pages pinned
// by others are flushed too (their image under the shared latch is
// consistent). Under Flushing51 its writes at consecutive page numbers
// are merged as any batch's (Meter.StoreWritesMerged), with or without a
// doublewrite buffer: its requests are queued together.
func (p *Pool) FlushAll(m *Meter) error {
	var local Meter
	mm := m
	if mm == nil {
		mm = &local
		defer p.ChargeBackground(&local)
	}
	b := p.newBatcher(mm)
	// Deferred after ChargeBackground, so it runs first: the merges are
	// on the meter before it is charged.
	defer b.finish()
	for i := range p.frames {
		f := &p.frames[i]
		p.mu.Lock()
		resident, id := f.resident, f.id
		p.mu.Unlock()
		if !resident {
			continue
		}
		if err := b.add(f, id, true, &mm.PageFlushes); err != nil {
			return err
		}
	}
	return b.flush()
}

// flushLocked writes f, which holds page id, out, as an explicit flush
// (Meter.PageFlushes): a batch of one page. If someone else is writing
// it right now, it waits for that write and then looks again: the page
// may be clean (done) or gone, or dirty again (that write failed, or the
// page changed since). A nil meter charges the pool's background meter.
// REQUIRES: p.mu held; released on return.
func (p *Pool) flushLocked(m *Meter, f *Page, id page.ID) error {
	p.mu.Unlock()
	var local Meter
	mm := m
	if mm == nil {
		mm = &local
		defer p.ChargeBackground(&local)
	}
	b := p.newBatcher(mm)
	if err := b.add(f, id, true, &mm.PageFlushes); err != nil {
		return err
	}
	return b.flush()
}

// Close stops the page cleaner, flushes every dirty page, syncs the store
// (a StoreSyncs on the background meter), refuses further fetches and
// gives the frames' memory back to the system (releaseArena). It does not
// close the store. WaffleLRU SETs still queued are discarded.
func (p *Pool) Close() error { return p.close(true) }

// CloseWithoutFlush is Close without its page writes and store sync: the
// cleaner stops, dirty pages are dropped with the frames, and their
// changes are left to the redo log, which the next open redoes (the
// engine's CloseFast, InnoDB's innodb_fast_shutdown=2). WaffleLRU SETs
// still queued are discarded. REQUIRES: the log is durable to its end
// (every change a dropped page held can be redone), and no transaction
// runs.
func (p *Pool) CloseWithoutFlush() { _ = p.close(false) }

// close is Close, with its page writes and store sync if flush; without,
// it cannot fail.
func (p *Pool) close(flush bool) error {
	p.stopPopulate()
	p.StopCleaner()
	p.dropQueued()
	if flush {
		if err := p.FlushAll(nil); err != nil {
			return err
		}
		if err := p.SyncStore(nil); err != nil {
			return err
		}
	}
	p.mu.Lock()
	p.closed.Store(true)
	p.mu.Unlock()
	releaseArena(p.arena, p.arenaMapped)
	return nil
}

// SyncStore syncs the store, making every page write before it durable,
// and counts it (Meter.StoreSyncs) on m, or on the background meter if m
// is nil: a checkpoint syncs the store through it before it records its
// LSN.
func (p *Pool) SyncStore(m *Meter) error {
	defer p.countStoreSync(m)
	return p.store.Sync()
}

// countStoreSync counts a store sync on m, or on the background meter if
// m is nil.
func (p *Pool) countStoreSync(m *Meter) {
	if m == nil {
		p.ChargeBackground(&Meter{StoreSyncs: 1})
		return
	}
	m.StoreSyncs++
}

// storeFlusher is a store that can make its writes durable in its data
// files rather than in its log (store.PebbleStore.Flush).
type storeFlusher interface{ Flush() error }

// FlushStore makes every page write before it durable as SyncStore does,
// and is counted as one (Meter.StoreSyncs), but through the store's data
// files where the store has them (store.PebbleStore.Flush: pebble's
// memtables become synced sstables) instead of a sync of its log: for a
// caller that is about to close the store, which flushes it anyway, the
// log's copy of the writes never needs to reach the disk. A store without
// Flush is synced.
func (p *Pool) FlushStore(m *Meter) error {
	defer p.countStoreSync(m)
	if f, ok := p.store.(storeFlusher); ok {
		return f.Flush()
	}
	return p.store.Sync()
}

// noteLSN records lsn as the newest known for page id if it is newer.
func (p *Pool) noteLSN(id page.ID, lsn uint64) { p.lsns.note(id, lsn) }

// NoteLSN tells the pool that page id now carries lsn (the engine calls it
// when a mini-transaction commits a page change).
func (p *Pool) NoteLSN(id page.ID, lsn uint64) { p.noteLSN(id, lsn) }

// KnownLSN returns the newest LSN the pool has seen for page id: read in,
// written out or noted. A page image with an older LSN is stale.
func (p *Pool) KnownLSN(id page.ID) uint64 { return p.lsns.known(id) }

// SetFullPageHorizon tells the pool where the last checkpoint's redo
// starts (its redo LSN, PostgreSQL's RedoRecPtr): with
// TornPagesFullPageWrites, the first change to a page whose LSN is below
// it logs the whole page. The engine calls it when a checkpoint begins.
func (p *Pool) SetFullPageHorizon(lsn uint64) { p.fpiHorizon.Store(lsn) }
