package tier_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/tier"
	"github.com/enginelab/enginelab/cache/tier/lru"
	"github.com/enginelab/enginelab/cache/tier/tiertest"
)

// A TraceTier over an LRU tier forwards every call (the tier answers as
// it would alone), and the file it writes reads back as exactly the calls
// made, in order.
func TestTraceTierRoundTrip(t *testing.T) {
	inner, err := lru.New(2 * (testPageSize + tier.ItemOverhead))
	require.NoError(t, err)
	var buf bytes.Buffer
	tt := tier.NewTraceTier(inner, &buf, testPageSize, tier.Exclusive)
	require.Equal(t, "lru", tt.Name(), "the inner tier's name")

	dst := make([]byte, testPageSize)
	get := func(space, page uint32) bool {
		t.Helper()
		found, err := tt.Get(tiertest.Key(7, 1, space, page), 0, dst)
		require.NoError(t, err)
		if found {
			require.Equal(t, tiertest.Page(testPageSize, tiertest.Key(7, 1, space, page), 1), dst)
		}
		return found
	}
	put := func(space, page uint32) {
		t.Helper()
		k := tiertest.Key(7, 1, space, page)
		stored, err := tt.Put(k, 1, tiertest.Page(testPageSize, k, 1))
		require.NoError(t, err)
		require.True(t, stored)
	}
	require.False(t, get(1, 10))
	put(1, 10)
	require.True(t, get(1, 10))
	put(1, 11)
	put(2, 10) // room for two: evicts 1:10, the least recently used
	require.False(t, get(1, 10))
	require.True(t, get(1, 11))
	require.NoError(t, tt.Delete(tiertest.Key(7, 1, 1, 11)))
	require.False(t, get(1, 11))
	require.Equal(t, []tier.Key{tiertest.Key(7, 1, 2, 10)}, inner.Order())
	// A get with another length is recorded with it.
	_, err = tt.Get(tiertest.Key(7, 1, 3, 3), 0, make([]byte, 100))
	require.NoError(t, err)
	require.NoError(t, tt.Flush())

	require.True(t, strings.HasPrefix(buf.String(), "# enginelab page trace v1 page_size=4096 mode=exclusive\ng 1 10 4096\np 1 10 4096\n"),
		"the documented format:\n%s", buf.String())
	tr, err := tier.ReadTrace(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	require.Equal(t, testPageSize, tr.PageSize)
	require.Equal(t, tier.Exclusive, tr.Mode)
	ev := func(op byte, space, page uint32) tier.TraceEvent {
		return tier.TraceEvent{Op: op, ID: pid(space, page), Bytes: testPageSize}
	}
	const g, p, d = tier.TraceGet, tier.TracePut, tier.TraceDelete
	require.Equal(t, []tier.TraceEvent{
		ev(g, 1, 10), ev(p, 1, 10), ev(g, 1, 10), ev(p, 1, 11), ev(p, 2, 10),
		ev(g, 1, 10), ev(g, 1, 11), ev(d, 1, 11), ev(g, 1, 11),
		{Op: g, ID: pid(3, 3), Bytes: 100},
	}, tr.Events)
	require.Equal(t, 4, tr.Pages(), "1:10, 1:11, 2:10, 3:3")

	// The inner tier got every call, and the trace tier reports its counters.
	want := tier.Stats{Items: 1, Bytes: testPageSize + tier.ItemOverhead, Capacity: 2 * (testPageSize + tier.ItemOverhead),
		Puts: 3, Evictions: 1, Gets: 6, Hits: 2, Deletes: 1}
	require.Equal(t, want, inner.Stats())
	require.Equal(t, want, tt.Stats())

	// Close closes the inner tier; the calls after it are recorded and fail there.
	require.NoError(t, tt.Close())
	_, err = tt.Get(tiertest.Key(7, 1, 1, 10), 0, dst)
	require.ErrorIs(t, err, tier.ErrClosed)
	require.NoError(t, tt.Flush())
	require.True(t, strings.HasSuffix(buf.String(), "g 3 3 100\ng 1 10 4096\n"), buf.String())
}

// A NullTier stores nothing: every Get misses, every Put is accepted, and
// after Close every call fails with ErrClosed, as with the other backends.
func TestTraceNullTier(t *testing.T) {
	n := tier.NewNullTier()
	k := tiertest.Key(1, 1, 1, 1)
	page := tiertest.Page(testPageSize, k, 1)
	stored, err := n.Put(k, 1, page)
	require.NoError(t, err)
	require.True(t, stored, "accepted")
	dst := make([]byte, testPageSize)
	found, err := n.Get(k, 1, dst)
	require.NoError(t, err)
	require.False(t, found, "and forgotten")
	require.Equal(t, make([]byte, testPageSize), dst, "dst untouched")
	require.NoError(t, n.Delete(k))
	require.Equal(t, tier.Stats{Gets: 1, Puts: 1, Deletes: 1}, n.Stats())
	require.Equal(t, "null", n.Name())

	require.NoError(t, n.Close())
	require.NoError(t, n.Close(), "second Close")
	_, err = n.Get(k, 1, dst)
	require.ErrorIs(t, err, tier.ErrClosed)
	_, err = n.Put(k, 1, page)
	require.ErrorIs(t, err, tier.ErrClosed)
	require.ErrorIs(t, n.Delete(k), tier.ErrClosed)
	require.Equal(t, int64(3), n.Stats().Errors)
}

// Many goroutines through one TraceTier (run with -race): the inner tier
// sees every call whole and the trace holds exactly one well-formed line
// per call.
func TestTraceTierConcurrent(t *testing.T) {
	inner, err := lru.New(64 * testPageSize)
	require.NoError(t, err)
	var buf bytes.Buffer
	tt := tier.NewTraceTier(inner, &buf, testPageSize, tier.Inclusive)
	tiertest.Concurrent(t, tt, testPageSize)
	require.NoError(t, tt.Close())
	tr, err := tier.ReadTrace(&buf)
	require.NoError(t, err)
	require.Equal(t, tier.Inclusive, tr.Mode)
	// checkTierConcurrent: 4 workers, 300 ops each, in a cycle of 5: two
	// puts, two gets, one delete.
	var counts [256]int
	for _, e := range tr.Events {
		counts[e.Op]++
	}
	require.Equal(t, 480, counts[tier.TracePut])
	require.Equal(t, 480, counts[tier.TraceGet])
	require.Equal(t, 240, counts[tier.TraceDelete])
	s := inner.Stats()
	require.Equal(t, int64(480), s.Puts)
	require.Equal(t, int64(480), s.Gets)
	require.Equal(t, int64(240), s.Deletes)
}

// A bad page size or mode is reported by Flush, wrapping ErrInvalidOptions,
// and the calls still reach the inner tier.
func TestTraceTierConfig(t *testing.T) {
	for _, tc := range []struct {
		size int
		mode tier.Mode
		want string
	}{
		{1000, tier.Exclusive, "page size 1000"},
		{testPageSize, "lru", `mode "lru"`},
		{testPageSize, "", `mode ""`},
	} {
		var buf bytes.Buffer
		n := tier.NewNullTier()
		tt := tier.NewTraceTier(n, &buf, tc.size, tc.mode)
		_, err := tt.Get(tiertest.Key(1, 1, 1, 1), 0, make([]byte, testPageSize))
		require.NoError(t, err, "the tier call is not the trace's")
		err = tt.Flush()
		require.ErrorIs(t, err, tier.ErrInvalidOptions)
		require.ErrorContains(t, err, tc.want)
		require.Zero(t, buf.Len(), "nothing recorded")
		require.Equal(t, int64(1), n.Stats().Gets)
	}
}

// errWriter fails every write after the first n bytes.
type errWriter struct{ n int }

var errDiskFull = errors.New("disk full")

func (w *errWriter) Write(b []byte) (int, error) {
	if len(b) > w.n {
		k := w.n
		w.n = 0
		return k, errDiskFull
	}
	w.n -= len(b)
	return len(b), nil
}

// A failing writer never fails a tier call; Flush, Err and Close report
// the first error.
func TestTraceTierWriteError(t *testing.T) {
	inner, err := lru.New(1 << 20)
	require.NoError(t, err)
	tt := tier.NewTraceTier(inner, &errWriter{n: 10}, testPageSize, tier.Exclusive)
	page := make([]byte, testPageSize)
	for i := range 10000 { // more than the 64 KiB buffer holds
		k := tiertest.Key(1, 1, 1, uint32(i))
		_, err := tt.Put(k, 0, page)
		require.NoError(t, err)
	}
	require.ErrorIs(t, tt.Err(), errDiskFull, "the buffer overflowed into the failing writer")
	require.ErrorIs(t, tt.Flush(), errDiskFull)
	require.ErrorIs(t, tt.Close(), errDiskFull)
	require.Equal(t, int64(10000), inner.Stats().Puts, "every call reached the tier")
}

// Each kind of malformed input is refused with ErrBadTrace, naming the
// line and what was wrong.
func TestTraceBad(t *testing.T) {
	const hdr = "# enginelab page trace v1 page_size=16384 mode=exclusive\n"
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", "line 1: empty"},
		{"no header", "g 1 2 16384\n", `line 1: not a header "g 1 2 16384"`},
		{"other version", "# enginelab page trace v2 page_size=16384 mode=exclusive\n", "line 1: not a header"},
		{"glued version", "# enginelab page trace v10 page_size=16384 mode=exclusive\n", "line 1: not a header"},
		{"no page size", "# enginelab page trace v1 mode=exclusive\n", "line 1: header: want page_size"},
		{"no mode", "# enginelab page trace v1 page_size=16384\n", "line 1: header: want page_size=N and mode=M"},
		{"bad page size", "# enginelab page trace v1 page_size=1000 mode=exclusive\n", "line 1: header page_size=1000"},
		{"twice page size", "# enginelab page trace v1 page_size=4096 page_size=4096 mode=exclusive\n", "line 1: header page_size=4096: want one"},
		{"bad mode", "# enginelab page trace v1 page_size=16384 mode=lru\n", "line 1: header mode=lru"},
		{"unknown key", "# enginelab page trace v1 page_size=16384 mode=exclusive seed=1\n", `line 1: header field "seed": unknown key`},
		{"not key=value", "# enginelab page trace v1 page_size=16384 mode=exclusive x\n", `line 1: header field "x": want key=value`},
		{"blank line", hdr + "g 1 2 16384\n\n", "line 3: \"\": want 4 fields"},
		{"short", hdr + "g 1 2\n", `line 2: "g 1 2": want 4 fields (op space page bytes), got 3`},
		{"long", hdr + "g 1 2 16384 9\n", "line 2: \"g 1 2 16384 9\": want 4 fields"},
		{"bad op", hdr + "x 1 2 16384\n", `line 2: op "x": want g, p or d`},
		{"word op", hdr + "get 1 2 16384\n", `line 2: op "get"`},
		{"bad space", hdr + "g a 2 16384\n", `line 2: space "a"`},
		{"space overflow", hdr + "p 4294967296 2 16384\n", `line 2: space "4294967296": want a decimal from 0 to 4294967295`},
		{"negative page", hdr + "d 1 -2 16384\n", `line 2: page "-2"`},
		{"zero bytes", hdr + "g 1 2 0\n", `line 2: bytes "0": want a decimal from 1 to 2147483647`},
		{"bytes overflow", hdr + "g 1 2 2147483648\n", `line 2: bytes "2147483648"`},
		{"later line", hdr + "g 1 2 16384\n# a comment\np 1 2 16384\np 1 2 x\n", `line 5: bytes "x"`},
		{"too long", hdr + strings.Repeat("g", 5000) + "\n", "line 2: longer than 4096 bytes"},
	} {
		_, err := tier.ReadTrace(strings.NewReader(tc.in))
		require.ErrorIs(t, err, tier.ErrBadTrace, tc.name)
		require.ErrorContains(t, err, tc.want, tc.name)
	}

	// What the reader tolerates: comments, runs of blanks, CRLF, a last
	// line without its newline.
	tr, err := tier.ReadTrace(strings.NewReader(hdr + "# note\r\ng  1\t2 16384\r\np 4294967295 4294967295 16384"))
	require.NoError(t, err)
	require.Equal(t, []tier.TraceEvent{
		{Op: tier.TraceGet, ID: pid(1, 2), Bytes: 16384},
		{Op: tier.TracePut, ID: pid(4294967295, 4294967295), Bytes: 16384},
	}, tr.Events)

	// A header and nothing else is an empty trace, not an error.
	tr, err = tier.ReadTrace(strings.NewReader(hdr))
	require.NoError(t, err)
	require.Empty(t, tr.Events)
	require.Equal(t, 16384, tr.PageSize)
}

// errReader fails after its content.
type errReader struct{ r *strings.Reader }

func (e errReader) Read(b []byte) (int, error) {
	n, err := e.r.Read(b)
	if err != nil {
		return n, errDiskFull
	}
	return n, nil
}

// An error of the reader is not a malformed trace.
func TestTraceReadError(t *testing.T) {
	_, err := tier.ReadTrace(errReader{strings.NewReader("# enginelab page trace v1 page_size=16384 mode=exclusive\ng 1 2 16384\n")})
	require.ErrorIs(t, err, errDiskFull)
	require.NotErrorIs(t, err, tier.ErrBadTrace)
	require.ErrorContains(t, err, "line 3")
}

// ExampleTraceTier records a pool's demand over a NullTier, as a run does
// for sim.ReplayTrace.
func ExampleTraceTier() {
	var buf bytes.Buffer
	tt := tier.NewTraceTier(tier.NewNullTier(), &buf, 16384, tier.Exclusive)
	k := tier.Key{DB: 1, Epoch: 1, ID: page.ID{Space: 12, Page: 345}}
	img := make([]byte, 16384)
	tt.Get(k, 0, img) // a pool miss: the null tier misses too
	tt.Put(k, 0, img) // the page evicted from the pool later
	if err := tt.Close(); err != nil {
		fmt.Println(err)
	}
	fmt.Print(buf.String())
	tr, _ := tier.ReadTrace(&buf)
	fmt.Println(len(tr.Events), "events,", tr.Pages(), "page")
	// Output:
	// # enginelab page trace v1 page_size=16384 mode=exclusive
	// g 12 345 16384
	// p 12 345 16384
	// 2 events, 1 page
}
