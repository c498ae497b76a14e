package slab

import (
	"fmt"
	"strconv"
	"time"

	"github.com/enginelab/enginelab/cache/tier"
)

// Release is a memcached release whose memory layout the model knows: its
// item header (struct _stritem in memcached.h), where it keeps the CAS
// value and the client flags (ITEM_ntotal, item_make_header in items.c),
// and its slab classes and pages (slabs_init, do_slabs_newslab in
// slabs.c).
type Release string

// The releases modelled.
const (
	// Release125 is memcached 1.2.5, which Waffle Grid's published runs
	// used (a 32-bit build): the 8-byte CAS inside the item header, the
	// flags and length as text (" 0 16384\r\n"), classes up to half of a
	// 1 MiB slab page and a last class of 1 MiB, slab pages of
	// chunk size × chunks per page bytes.
	Release125 Release = "1.2.5"
	// Release132 is memcached 1.3.2: the CAS moved out of the header, an
	// 8-byte field after it only while CAS is on (-C turns it off); the
	// rest as 1.2.5.
	Release132 Release = "1.3.2"
	// Release1618 is memcached 1.6.18, the release installed here for the
	// test against a real server: a 16-bit it_flags, the flags as 4
	// binary bytes and only when not zero, no text suffix, classes up to
	// slab_chunk_max (half a page, 512 KiB) less a factor, every slab page
	// a full 1 MiB (slab_reassign is on by default). Its segmented LRU
	// (HOT, WARM, COLD) is not this model's: see the package doc.
	Release1618 Release = "1.6.18"
)

// Defaults of memcached's settings, the same in every release modelled
// (memcached.c, settings_init).
const (
	// DefaultFactor is -f, settings.factor: each class's chunks are this
	// many times the last one's.
	DefaultFactor = 1.25
	// DefaultMinSize is -n, settings.chunk_size: the smallest class holds
	// an item header and this many bytes of key, suffix and value.
	DefaultMinSize = 48
	// DefaultMaxBytes is -m, settings.maxbytes: 64 MiB.
	DefaultMaxBytes = 64 << 20
	// PageBytes is a slab page: POWER_BLOCK (1.2, 1.3),
	// settings.slab_page_size (1.6).
	PageBytes = 1 << 20
	// chunkAlign is CHUNK_ALIGN_BYTES.
	chunkAlign = 8
	// updateInterval is ITEM_UPDATE_INTERVAL: a hit moves an item to the
	// head of its LRU only if it was last moved this long ago.
	updateInterval = 60
	// evictTries is how many items do_item_alloc looks at from a class's
	// tail for one with no references (all of them, here).
	evictTries = 50
)

// Params are one memcached server's: its release, its build's pointer size
// and its command-line settings. Zero fields take memcached's defaults;
// Release and PointerSize are required.
type Params struct {
	Release Release
	// PointerSize is the build's pointer size in bytes: 4 (32-bit) or 8
	// (64-bit). It sizes the item header's three list pointers and the
	// alignment of its 8-byte fields (4 on i386, 8 on x86-64), and so
	// every chunk (memcached's "stats" reports it in bits).
	PointerSize int
	// MaxBytes is -m, the memory limit for slab pages; default
	// DefaultMaxBytes.
	MaxBytes int64
	// Factor is -f, the growth factor; default DefaultFactor; above 1.
	Factor float64
	// MinSize is -n, the smallest item's key, suffix and value;
	// default DefaultMinSize; at least 1.
	MinSize int
	// NoCAS is -C (1.3 and later): items carry no 8-byte CAS.
	NoCAS bool
	// Threads is -t, the worker threads serving requests: 1.2.5 as Waffle
	// Grid ran it (built without threads), 4 by default from 1.3. Only
	// reported (for pricing memcached's CPU); default the release's.
	Threads int
	// MRUPatch is Waffle Grid's patch to memcached ("We need a MRU not
	// an LRU!", 2008): a GET hit moves the item to the eviction end of its
	// class's LRU instead of its head, since a page read back into the
	// buffer pool is of no use in memcached any more.
	MRUPatch bool
	// Now is the server's clock, time since it started; nil: it stays at
	// its start. memcached's current_time starts at 2 seconds (stats.
	// started is set 2 seconds in the past), and a hit moves an item to
	// the head of its LRU only if its time is below current_time −
	// ITEM_UPDATE_INTERVAL (60 s) in unsigned arithmetic, so for the
	// server's first 58 seconds every hit moves it (do_item_update).
	Now func() time.Duration
}

// Memcached125 returns memcached 1.2.5's parameters: a pointer size of
// ptr bytes and a limit of maxBytes, the rest at the defaults.
func Memcached125(ptr int, maxBytes int64) Params {
	return Params{Release: Release125, PointerSize: ptr, MaxBytes: maxBytes}
}

// Memcached132 returns memcached 1.3.2's.
func Memcached132(ptr int, maxBytes int64) Params {
	return Params{Release: Release132, PointerSize: ptr, MaxBytes: maxBytes}
}

// Memcached1618 returns memcached 1.6.18's.
func Memcached1618(ptr int, maxBytes int64) Params {
	return Params{Release: Release1618, PointerSize: ptr, MaxBytes: maxBytes}
}

func (p *Params) ensureDefaults() {
	if p.MaxBytes == 0 {
		p.MaxBytes = DefaultMaxBytes
	}
	if p.Factor == 0 {
		p.Factor = DefaultFactor
	}
	if p.MinSize == 0 {
		p.MinSize = DefaultMinSize
	}
	if p.Threads == 0 {
		p.Threads = 4
		if p.Release == Release125 {
			p.Threads = 1
		}
	}
}

// Validate reports the first invalid parameter (wrapping
// tier.ErrInvalidOptions), defaults applied first.
func (p Params) Validate() error {
	p.ensureDefaults()
	switch p.Release {
	case Release125, Release132, Release1618:
	default:
		return fmt.Errorf("cache: %w: memcached release %q: want %s, %s or %s", tier.ErrInvalidOptions, p.Release, Release125, Release132, Release1618)
	}
	if p.PointerSize != 4 && p.PointerSize != 8 {
		return fmt.Errorf("cache: %w: memcached pointer size %d bytes: want 4 or 8", tier.ErrInvalidOptions, p.PointerSize)
	}
	if p.MaxBytes < 0 {
		return fmt.Errorf("cache: %w: memcached memory limit %d bytes is negative", tier.ErrInvalidOptions, p.MaxBytes)
	}
	if !(p.Factor > 1) || p.Factor > 100 {
		return fmt.Errorf("cache: %w: memcached growth factor %v: want more than 1", tier.ErrInvalidOptions, p.Factor)
	}
	if p.MinSize < 1 || p.MinSize > PageBytes/2 {
		return fmt.Errorf("cache: %w: memcached minimum size %d: want 1 to %d", tier.ErrInvalidOptions, p.MinSize, PageBytes/2)
	}
	if p.Threads < 1 {
		return fmt.Errorf("cache: %w: memcached threads %d: want at least 1", tier.ErrInvalidOptions, p.Threads)
	}
	if p.NoCAS && p.Release == Release125 {
		return fmt.Errorf("cache: %w: memcached %s has no -C: its CAS is part of the item header", tier.ErrInvalidOptions, p.Release)
	}
	return nil
}

// field is a member of struct _stritem: its size and alignment.
type field struct{ size, align int }

// HeaderSize is sizeof(item), struct _stritem of memcached.h, laid out as
// a C compiler does for the build's pointer size: each member at a
// multiple of its alignment, the whole a multiple of the largest. The
// trailing flexible array member (void *end[] in 1.2 and 1.3, a union of
// a uint64_t and a char in 1.6) has no size but its alignment.
func (p Params) HeaderSize() int {
	ptr := field{p.PointerSize, p.PointerSize}
	u64 := field{8, min(8, p.PointerSize)} // i386 aligns 8-byte members to 4
	u32, u16, u8 := field{4, 4}, field{2, 2}, field{1, 1}
	var fs []field
	switch p.Release {
	case Release125:
		// next, prev, h_next; time, exptime, nbytes; refcount; nsuffix,
		// it_flags, slabs_clsid, nkey; cas_id; end[].
		fs = []field{ptr, ptr, ptr, u32, u32, u32, u16, u8, u8, u8, u8, u64, {0, p.PointerSize}}
	case Release132:
		fs = []field{ptr, ptr, ptr, u32, u32, u32, u16, u8, u8, u8, u8, {0, p.PointerSize}}
	case Release1618:
		// it_flags became a uint16_t and nsuffix went; data[] is a union
		// with a uint64_t.
		fs = []field{ptr, ptr, ptr, u32, u32, u32, u16, u16, u8, u8, {0, u64.align}}
	}
	off, largest := 0, 1
	for _, f := range fs {
		off = roundUp(off, f.align) + f.size
		largest = max(largest, f.align)
	}
	return roundUp(off, largest)
}

func roundUp(n, a int) int { return (n + a - 1) / a * a }

// ItemSize is the bytes an item of a keyLen-byte key, a valueLen-byte value
// and these client flags takes, ITEM_ntotal as do_item_alloc computes it
// (item_make_header): the header, the key and its terminating NUL, the
// suffix (1.2, 1.3: " <flags> <length>\r\n" as text; 1.6: the flags, 4
// bytes, only when not zero), the value and its trailing "\r\n", and the
// 8-byte CAS where it is outside the header and on. It is also what the
// item adds to memcached's "bytes".
func (p Params) ItemSize(keyLen, valueLen int, flags uint32) int {
	n := p.HeaderSize() + keyLen + 1 + valueLen + 2
	switch p.Release {
	case Release125, Release132:
		// snprintf(suffix, 40, " %d %d\r\n", flags, nbytes - 2), flags an int.
		n += len(" ") + len(strconv.Itoa(int(int32(flags)))) + len(" ") + len(strconv.Itoa(valueLen)) + len("\r\n")
	case Release1618:
		if flags != 0 {
			n += 4
		}
	}
	if p.Release != Release125 && !p.NoCAS {
		n += 8
	}
	return n
}

// Class is a slab class: chunks of Size bytes, PerPage of them to a slab
// page.
type Class struct {
	ID      int // memcached's class number, from 1
	Size    int // chunk_size
	PerPage int // chunks_per_page (perslab)
}

// PageLen is the bytes a new slab page of class c takes from the memory
// limit (do_slabs_newslab): the chunks it holds (1.2, 1.3, built without
// ALLOW_SLABS_REASSIGN), or a whole slab page (1.6, slab_reassign on).
func (p Params) PageLen(c Class) int64 {
	if p.Release == Release1618 {
		return PageBytes
	}
	return int64(c.Size) * int64(c.PerPage)
}

// Classes lists the slab classes as slabs_init makes them: from
// HeaderSize + MinSize, each aligned up to 8 bytes and the next
// truncated from this one times Factor, while the size is at most half a
// slab page (1.2, 1.3: POWER_BLOCK / 2, at most 199 classes) or below
// slab_chunk_max / Factor (1.6: at most 62), then a last class of a whole
// page (1.2, 1.3) or of slab_chunk_max (1.6). 1.2 and 1.3 start at 128
// bytes with a factor of 2 when the smallest is below it.
func (p Params) Classes() []Class {
	p.ensureDefaults()
	size := uint32(p.HeaderSize() + p.MinSize)
	var cs []Class
	switch p.Release {
	case Release125, Release132:
		if p.Factor == 2.0 && size < 128 {
			size = 128
		}
		const powerLargest = 200
		for i := 1; i < powerLargest && size <= PageBytes/2; i++ {
			size = alignChunk(size)
			cs = append(cs, Class{ID: i, Size: int(size), PerPage: PageBytes / int(size)})
			size = uint32(float64(size) * p.Factor)
		}
		cs = append(cs, Class{ID: len(cs) + 1, Size: PageBytes, PerPage: 1})
	case Release1618:
		const chunkMax = PageBytes / 2 // settings.slab_chunk_size_max
		const maxClasses = 64          // MAX_NUMBER_OF_SLAB_CLASSES
		for i := 1; i < maxClasses-1; i++ {
			if float64(size) >= chunkMax/p.Factor {
				break
			}
			size = alignChunk(size)
			cs = append(cs, Class{ID: i, Size: int(size), PerPage: PageBytes / int(size)})
			size = uint32(float64(size) * p.Factor)
		}
		cs = append(cs, Class{ID: len(cs) + 1, Size: chunkMax, PerPage: PageBytes / chunkMax})
	}
	return cs
}

func alignChunk(size uint32) uint32 {
	if size%chunkAlign != 0 {
		size += chunkAlign - size%chunkAlign
	}
	return size
}

// ClassFor returns the class an item of size bytes goes to (slabs_clsid):
// the first whose chunks hold it; ok is false when none does (1.2, 1.3:
// larger than a page; 1.6: larger than slab_chunk_max, an item memcached
// would split into chunks, which the model does not do).
func ClassFor(cs []Class, size int) (Class, bool) {
	for _, c := range cs {
		if size <= c.Size {
			return c, true
		}
	}
	return Class{}, false
}

// Capacity is how many items of size bytes fit in the memory limit when
// they are the only items: the slab pages of their class that the limit
// allows (do_slabs_newslab refuses a page that would pass it, except a
// class's first) times the chunks a page holds. 0 when no class holds
// such an item.
func (p Params) Capacity(size int) int64 {
	p.ensureDefaults()
	c, ok := ClassFor(p.Classes(), size)
	if !ok {
		return 0
	}
	pages := max(1, p.MaxBytes/p.PageLen(c))
	return pages * int64(c.PerPage)
}
