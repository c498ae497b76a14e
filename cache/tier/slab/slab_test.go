package slab_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache/tier"
	"github.com/enginelab/enginelab/cache/tier/slab"
)

const (
	pageSize = 16 << 10  // InnoDB's page, which Waffle Grid SET
	limit768 = 768 << 20 // Waffle Grid's memcached: -m 768
)

// The item header of each release and build, as the C compiler lays out
// struct _stritem, and the smallest chunk it makes (header + 48).
func TestHeaderAndSmallestChunk(t *testing.T) {
	for _, c := range []struct {
		p              slab.Params
		header, chunk0 int
	}{
		{slab.Memcached125(4, 0), 40, 88},
		{slab.Memcached125(8, 0), 56, 104},
		{slab.Memcached132(4, 0), 32, 80},
		{slab.Memcached132(8, 0), 48, 96},
		{slab.Memcached1618(4, 0), 32, 80},
		{slab.Memcached1618(8, 0), 48, 96},
	} {
		name := fmt.Sprintf("%s/%d-bit", c.p.Release, 8*c.p.PointerSize)
		require.Equal(t, c.header, c.p.HeaderSize(), name)
		require.Equal(t, c.chunk0, c.p.Classes()[0].Size, name)
	}
}

// Waffle Grid's own figure: an item of a 16 KiB page with its 7-byte key
// on memcached 1.2.5 is 16,444 bytes (40-byte header, the key and its
// NUL, " 0 16384\r\n", the page and "\r\n").
func TestItemSize125(t *testing.T) {
	require.Equal(t, 16444, slab.Memcached125(4, 0).ItemSize(7, pageSize, 0))
	// 1.3.2 moves the CAS out of the 32-byte header; -C drops it.
	p := slab.Memcached132(4, 0)
	require.Equal(t, 16444, p.ItemSize(7, pageSize, 0))
	p.NoCAS = true
	require.Equal(t, 16436, p.ItemSize(7, pageSize, 0))
	// 1.6 keeps no text suffix, and the flags only when not zero.
	q := slab.Memcached1618(8, 0)
	require.Equal(t, 48+8+16386+8, q.ItemSize(7, pageSize, 0))
	require.Equal(t, 48+8+16386+8+4, q.ItemSize(7, pageSize, 1))
}

// The classes of 1.2.5 from 88 bytes by 1.25, exactly as slabs_init
// makes them (aligned up to 8, the next truncated), up to the class a
// 16 KiB page lands in.
func TestClasses125(t *testing.T) {
	var got []int
	for _, c := range slab.Memcached125(4, 0).Classes() {
		got = append(got, c.Size)
		if c.Size >= 17192 {
			break
		}
	}
	require.Equal(t, []int{88, 112, 144, 184, 232, 296, 376, 472, 592, 744, 936, 1176, 1472, 1840,
		2304, 2880, 3600, 4504, 5632, 7040, 8800, 11000, 13752, 17192}, got)
	cs := slab.Memcached125(4, 0).Classes()
	last := cs[len(cs)-1]
	require.Equal(t, slab.Class{ID: len(cs), Size: 1 << 20, PerPage: 1}, last, "the last class is a whole page")
	require.LessOrEqual(t, cs[len(cs)-2].Size, 1<<19+7)
	// 1.6's last class is slab_chunk_max, half a page, two to a page.
	cs = slab.Memcached1618(8, 0).Classes()
	require.Equal(t, slab.Class{ID: len(cs), Size: 1 << 19, PerPage: 2}, cs[len(cs)-1])
}

// setPages SETs n values of a 16 KiB page under distinct 7-byte keys
// (Waffle Grid's length) and returns the server.
func setPages(t *testing.T, p slab.Params, n int) *slab.Server {
	t.Helper()
	s, err := slab.NewServer(p, nil)
	require.NoError(t, err)
	for i := range n {
		require.True(t, s.Set(fmt.Sprintf("p%06d", i), pageSize, 0))
	}
	return s
}

// The numbers, exactly: how many 16 KiB pages a 768 MiB memcached
// holds. SETting 50,000 leaves that many, the rest evicted.
func TestPagesIn768MiB(t *testing.T) {
	for _, c := range []struct {
		p                         slab.Params
		chunk, perPage, pages, n  int64
		malloced                  int64
		wantClassID, classesAhead int
	}{
		// 1.2.5, 32-bit: 17,192-byte chunks, 60 to a 1,031,520-byte
		// slab page, 780 pages: the 46,800 items its stats showed.
		{p: slab.Memcached125(4, limit768), chunk: 17192, perPage: 60, pages: 780, n: 46800, malloced: 780 * 1031520},
		// 1.3.2, 32-bit: 20,176-byte chunks, 51 a page, 782 pages.
		{p: slab.Memcached132(4, limit768), chunk: 20176, perPage: 51, pages: 782, n: 39882, malloced: 782 * 51 * 20176},
		// 1.3.2, 64-bit: 17,352-byte chunks, 60 a page, 773 pages.
		{p: slab.Memcached132(8, limit768), chunk: 17352, perPage: 60, pages: 773, n: 46380, malloced: 773 * 60 * 17352},
		// 1.6.18, 64-bit: the same chunks, but every page a whole MiB.
		{p: slab.Memcached1618(8, limit768), chunk: 17352, perPage: 60, pages: 768, n: 46080, malloced: 768 << 20},
	} {
		name := fmt.Sprintf("%s/%d-bit", c.p.Release, 8*c.p.PointerSize)
		const sets = 50000
		s := setPages(t, c.p, sets)
		st := s.Stats()
		require.Equal(t, c.n, st.CurrItems, name)
		require.Equal(t, sets-c.n, st.Evictions, name)
		require.EqualValues(t, sets, st.TotalItems, name)
		require.EqualValues(t, limit768, st.LimitMaxbytes, name)
		require.Equal(t, c.malloced, st.TotalMalloced, name)
		item := int64(c.p.ItemSize(7, pageSize, 0))
		require.Equal(t, c.n*item, st.Bytes, name)
		cls := s.ClassStats()
		require.Len(t, cls, 1, name)
		require.EqualValues(t, c.chunk, cls[0].Size, name)
		require.EqualValues(t, c.perPage, cls[0].PerPage, name)
		require.Equal(t, c.pages, cls[0].TotalPages, name)
		require.Equal(t, c.n, cls[0].UsedChunks, name)
		require.Zero(t, cls[0].FreeChunks, name)
		require.Equal(t, sets-c.n, cls[0].Evicted, name)
		require.Equal(t, c.n, c.p.Capacity(int(item)), name)
	}
	// 1.2.5's published bytes (769,596,712) are 16,444.37 an item: its
	// keys were 7 bytes and a few longer. With 7-byte keys alone:
	st := setPages(t, slab.Memcached125(4, limit768), 46800).Stats()
	require.EqualValues(t, 46800*16444, st.Bytes)
	require.Zero(t, st.Evictions)
}

// A class's first slab page is allowed past the limit (do_slabs_newslab
// checks p->slabs > 0); later ones are not.
func TestFirstPageOfAClassPastTheLimit(t *testing.T) {
	p := slab.Memcached125(4, 1<<20) // room for one page
	s, err := slab.NewServer(p, nil)
	require.NoError(t, err)
	for i := range 61 {
		s.Set(fmt.Sprintf("p%06d", i), pageSize, 0) // class of 17,192: one page, 60 items
	}
	for i := range 5 {
		s.Set(fmt.Sprintf("s%06d", i), 100, 0) // class of 184: its first page
	}
	st := s.Stats()
	require.EqualValues(t, 60+5, st.CurrItems)
	require.EqualValues(t, 1, st.Evictions, "the 61st page evicts the first")
	require.EqualValues(t, 1031520+5698*184, st.TotalMalloced, "two pages, past the 1 MiB limit")
}

// Each class has its own LRU: a SET evicts the tail of its own class only,
// and a hit moves an item to its class's head.
func TestPerClassLRU(t *testing.T) {
	// A page of the 88-byte class (11,915 chunks) and two of the 17,192.
	p := slab.Memcached125(4, 88*11915+2*1031520)
	s, err := slab.NewServer(p, nil)
	require.NoError(t, err)
	require.True(t, s.Set("small", 10, 0)) // a class of its own
	for i := range 120 {
		s.Set(fmt.Sprintf("p%06d", i), pageSize, 0)
	}
	require.True(t, s.Get("p000000")) // now the head
	require.True(t, s.Set("p000120", pageSize, 0))
	require.False(t, s.Holds("p000001"), "the class's tail went")
	require.True(t, s.Holds("p000000"))
	require.True(t, s.Holds("small"), "another class is never evicted for it")
	lru := s.LRU(24)
	require.Equal(t, []string{"p000120", "p000000", "p000119"}, lru[:3])
	require.Equal(t, "p000002", lru[len(lru)-1])
}

// A hit moves an item to the head only if it was last moved more than 60
// seconds of memcached's time ago, counted from 2 seconds at start in
// unsigned seconds (so for the first 58 seconds always).
func TestUpdateInterval(t *testing.T) {
	var now time.Duration
	p := slab.Memcached125(4, 3*1031520)
	p.Now = func() time.Duration { return now }
	s, err := slab.NewServer(p, nil)
	require.NoError(t, err)
	for _, k := range []string{"a", "b", "c"} {
		s.Set(k, pageSize, 0) // at memcached time 2
	}
	head := func() string { return s.LRU(24)[0] }
	require.True(t, s.Get("a"))
	require.Equal(t, "a", head(), "2 < 2-60 in unsigned arithmetic: moved")
	now = 60 * time.Second // memcached time 62
	require.True(t, s.Get("b"))
	require.Equal(t, "a", head(), "b was set at 2, and 2 < 62-60 is false: not moved")
	now = 61 * time.Second // time 63: 2 < 3
	require.True(t, s.Get("b"))
	require.Equal(t, "b", head())
	require.True(t, s.Get("b"))
	require.Equal(t, "b", head())
	require.True(t, s.Get("c"))
	require.Equal(t, "c", head(), "c set at 2")
}

// Waffle Grid's MRU patch: a GET hit puts the item at its LRU's tail, so
// the next SET that needs room evicts the page just read back.
func TestMRUPatch(t *testing.T) {
	for _, patch := range []bool{false, true} {
		p := slab.Memcached125(4, 1031520) // one page: 60 pages of 16 KiB
		p.MRUPatch = patch
		s, err := slab.NewServer(p, nil)
		require.NoError(t, err)
		for i := range 60 {
			s.Set(fmt.Sprintf("p%06d", i), pageSize, 0)
		}
		require.True(t, s.Get("p000030"))
		s.Set("p000060", pageSize, 0)
		if patch {
			require.False(t, s.Holds("p000030"), "the page read back goes first")
			require.True(t, s.Holds("p000000"))
		} else {
			require.True(t, s.Holds("p000030"), "a hit makes it most recently used")
			require.False(t, s.Holds("p000000"))
		}
		require.EqualValues(t, 1, s.Stats().Evictions)
	}
}

// A SET of a key held allocates before it unlinks the old item
// (do_item_alloc, then do_item_replace): with a full class, it evicts the
// tail even though the old item would have made room.
func TestReplaceAllocatesFirst(t *testing.T) {
	p := slab.Memcached125(4, 1031520)
	s, err := slab.NewServer(p, nil)
	require.NoError(t, err)
	for i := range 60 {
		s.Set(fmt.Sprintf("p%06d", i), pageSize, 0)
	}
	require.True(t, s.Set("p000059", pageSize, 0))
	st := s.Stats()
	require.EqualValues(t, 1, st.Evictions)
	require.EqualValues(t, 59, st.CurrItems, "the evicted tail and the old item are both gone")
	require.False(t, s.Holds("p000000"))
	require.EqualValues(t, 1, s.ClassStats()[0].FreeChunks)
}

// Deletes and gets counted as memcached counts them.
func TestServerCounters(t *testing.T) {
	s, err := slab.NewServer(slab.Memcached132(8, 0), nil)
	require.NoError(t, err)
	s.Set("a", 100, 0)
	require.True(t, s.Get("a"))
	require.False(t, s.Get("b"))
	require.True(t, s.Delete("a"))
	require.False(t, s.Delete("a"))
	require.False(t, s.Set("huge", 2<<20, 0))
	st := s.Stats()
	// "a" is 48 + 2 + len(" 0 100\r\n") + 102 + 8 = 168 bytes: the
	// 192-byte class, 5,461 chunks to its one page.
	require.Equal(t, 168, slab.Memcached132(8, 0).ItemSize(1, 100, 0))
	require.Equal(t, slab.Stats{TotalItems: 1, CmdGet: 2, CmdSet: 2, GetHits: 1, GetMisses: 1, DeleteHits: 1, DeleteMisses: 1,
		LimitMaxbytes: slab.DefaultMaxBytes, TotalMalloced: 5461 * 192, PointerSize: 64, Threads: 4, OutOfMemory: 1}, st)
}

// Bad parameters are refused with the sentinel.
func TestParamsRefused(t *testing.T) {
	for name, p := range map[string]slab.Params{
		"no release":     {PointerSize: 8},
		"unknown":        {Release: "1.4.0", PointerSize: 8},
		"pointer size":   {Release: slab.Release125, PointerSize: 6},
		"factor 1":       {Release: slab.Release125, PointerSize: 4, Factor: 1},
		"negative limit": {Release: slab.Release125, PointerSize: 4, MaxBytes: -1},
		"min size":       {Release: slab.Release125, PointerSize: 4, MinSize: -1},
		"-C on 1.2.5":    {Release: slab.Release125, PointerSize: 4, NoCAS: true},
		"threads":        {Release: slab.Release132, PointerSize: 4, Threads: -2},
	} {
		_, err := slab.NewServer(p, nil)
		require.ErrorIs(t, err, tier.ErrInvalidOptions, name)
		_, err = slab.NewTier(p)
		require.ErrorIs(t, err, tier.ErrInvalidOptions, name)
	}
}
