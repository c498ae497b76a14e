package engine

import (
	"errors"
	"fmt"

	"github.com/dustin/go-humanize"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/enginelab/enginelab/cache/tier"
	"github.com/enginelab/enginelab/engine/memlimit"
)

// ErrInsufficientMemory means the memory a database (or a job, in sim)
// would need is more than this process may use. Open's error wraps it and
// ErrInvalidOptions; it comes before anything is opened.
var ErrInsufficientMemory = errors.New("not enough memory")

// StoreBudget is what Open's check counts for the page store besides its
// pages: pebble's memtables (MemTableSize, and a second one while the
// first is flushed: store.MemTableBudget) and its block cache
// (BlockCacheSize), defaults applied: 136 MiB on disk, 40 MiB in memory.
func (o *Options) StoreBudget() int64 {
	so := o.StoreOptions()
	return store.MemTableBudget(so.MemTableSize) + so.BlockCacheSize
}

// memoryLimit returns the limit Open's check compares with and where it
// came from: Options.MemoryLimit, else the system's (engine/memlimit:
// the smaller of the process's cgroup limit, v2 memory.max or v1
// memory.limit_in_bytes, and /proc/meminfo's MemAvailable; 0 where neither
// can be read, and then nothing is checked).
func (o *Options) memoryLimit() (int64, string, error) {
	if o.MemoryLimit > 0 {
		return o.MemoryLimit, "set by Options.MemoryLimit", nil
	}
	l, err := memlimit.System()
	return l.Bytes, l.Source, err
}

// MemoryEstimate is what Open's check counts for o: the buffer pool at
// its capacity (default 64 MiB) with every frame's overhead
// (cache.PoolMemory), the remote tier's budget where it lives in this
// process (tier.InProcessBytes: a memcached tier costs nothing here) and
// StoreBudget. An in-memory store's pages (Dir and FS unset) come on
// top: how many there will be depends on the data put in, which Open
// cannot know, so the check leaves them out and says so. sim's check
// (sim.TPCCConfig.MemoryEstimate) knows the data and counts them.
func (o *Options) MemoryEstimate() int64 {
	return cache.PoolMemory(o.poolSize(), o.pageSize()) + tier.InProcessBytes(o.Tier) + o.StoreBudget()
}

// poolSize is PoolSize or its default (cache.Options.PoolSize's).
func (o *Options) poolSize() int64 {
	if o.PoolSize == 0 {
		return 64 << 20
	}
	return o.PoolSize
}

// pageSize is PageSize or its default.
func (o *Options) pageSize() int {
	if o.PageSize == 0 {
		return page.DefaultSize
	}
	return o.PageSize
}

// checkMemory is Open's memory check: MemoryEstimate against the limit.
// Options.SkipMemoryCheck turns it off.
func (o *Options) checkMemory() error {
	if o.SkipMemoryCheck {
		return nil
	}
	limit, source, err := o.memoryLimit()
	if err != nil {
		return fmt.Errorf("engine: reading the memory limit (Options.SkipMemoryCheck skips the check): %w", err)
	}
	need := o.MemoryEstimate()
	if limit <= 0 || need <= limit {
		return nil
	}
	pool, ps := o.poolSize(), o.pageSize()
	tierNote := ""
	if n := tier.InProcessBytes(o.Tier); n > 0 {
		tierNote = fmt.Sprintf(", the remote tier (%s in this process)", iBytes(n))
	}
	store := ""
	if o.Dir == "" && o.FS == nil {
		store = "; the in-memory store's pages come on top and are not counted (Dir keeps them on disk)"
	}
	fix := "Make the remote tier smaller"
	if room := limit - (need - cache.PoolMemory(pool, ps)); room > 0 {
		// The largest pool whose frames and overhead fit in the room left.
		fits := room / (int64(ps) + cache.FrameOverhead) * int64(ps)
		fix = fmt.Sprintf("Make PoolSize at most %s", iBytes(fits))
	}
	return fmt.Errorf("engine: %w: %w: the buffer pool (PoolSize %s, %s with its frames' overhead)%s and the store's memtables and cache (%s) need about %s, more than the %s this process may use (%s)%s. %s, or set Options.SkipMemoryCheck to open anyway",
		ErrInvalidOptions, ErrInsufficientMemory, iBytes(pool), iBytes(cache.PoolMemory(pool, ps)), tierNote, iBytes(o.StoreBudget()),
		iBytes(need), iBytes(limit), source, store, fix)
}

func iBytes(n int64) string { return humanize.IBytes(uint64(max(0, n))) }

// StoreMemoryBytes returns what an in-memory database's store holds in
// its files now (pebble's sstables, MANIFEST and WAL, and the redo log's
// segments, outside Go's heap: store.MemFS), or 0 for a database on a
// directory or a given filesystem. The process's memory is this, the
// pool's (cache.PoolMemory), the log buffer and StoreBudget, and a Go
// heap that does not grow with the data.
func (db *DB) StoreMemoryBytes() int64 { return db.store.MemoryBytes() }
