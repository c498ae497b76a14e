package slab_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/tier"
	"github.com/enginelab/enginelab/cache/tier/memcached/memcachedtest"
	"github.com/enginelab/enginelab/cache/tier/slab"
)

// conn speaks memcached's text protocol, just enough for the test.
type conn struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, addr string) *conn {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return &conn{t: t, c: c, r: bufio.NewReader(c)}
}

func (c *conn) line() string {
	require.NoError(c.t, c.c.SetDeadline(time.Now().Add(30*time.Second)))
	l, err := c.r.ReadString('\n')
	require.NoError(c.t, err)
	return strings.TrimRight(l, "\r\n")
}

func (c *conn) send(format string, args ...any) {
	require.NoError(c.t, c.c.SetDeadline(time.Now().Add(30*time.Second)))
	_, err := fmt.Fprintf(c.c, format, args...)
	require.NoError(c.t, err)
}

func (c *conn) set(key string, value []byte) {
	c.send("set %s 0 0 %d\r\n", key, len(value))
	_, err := c.c.Write(append(value, '\r', '\n'))
	require.NoError(c.t, err)
	require.Equal(c.t, "STORED", c.line(), "set %s", key)
}

func (c *conn) get(key string) bool {
	c.send("get %s\r\n", key)
	l := c.line()
	if l == "END" {
		return false
	}
	f := strings.Fields(l)
	require.Len(c.t, f, 4, l)
	n, err := strconv.Atoi(f[3])
	require.NoError(c.t, err)
	_, err = io.ReadFull(c.r, make([]byte, n+2))
	require.NoError(c.t, err)
	require.Equal(c.t, "END", c.line())
	return true
}

func (c *conn) delete(key string) bool {
	c.send("delete %s\r\n", key)
	return c.line() == "DELETED"
}

// stats runs "stats" with args and returns its values by name.
func (c *conn) stats(args string) map[string]string {
	c.send("stats %s\r\n", args)
	out := map[string]string{}
	for {
		l := c.line()
		if l == "END" {
			return out
		}
		f := strings.Fields(l)
		require.True(c.t, len(f) >= 3 && f[0] == "STAT", l)
		out[f[1]] = f[2]
	}
}

func num(t *testing.T, m map[string]string, name string) int64 {
	t.Helper()
	v, ok := m[name]
	require.True(t, ok, "no stat %q", name)
	n, err := strconv.ParseInt(v, 10, 64)
	require.NoError(t, err, name)
	return n
}

// The model against a real memcached: SET 5,000 pages of 16 KiB (80 MB)
// into a server of 64 MiB that this test starts, read its "stats" and
// "stats slabs", and compare them with a model server of the installed
// release's layout at that server's growth factor, minimum size, pointer
// size and limit; then GETs of the newest and the oldest keys, and a few
// deletes. The installed release is 1.6.18 on a 64-bit build (Release1618).
func TestAgainstRealMemcached(t *testing.T) {
	memcachedtest.Require(t)
	addr, _ := memcachedtest.Start(t)
	c := dial(t, addr)
	st, set := c.stats(""), c.stats("settings")
	version := st["version"]
	t.Logf("memcached %s, %s-bit, growth factor %s, chunk size %s, maxbytes %s", version, st["pointer_size"],
		set["growth_factor"], set["chunk_size"], set["maxbytes"])
	// The 1.6 layout's assumptions about the server's settings.
	require.True(t, strings.HasPrefix(version, "1.6."), "the model's layout for a modern server is 1.6.18's; the installed memcached is %s", version)
	require.Equal(t, "524288", set["slab_chunk_max"], "slab_chunk_max")
	require.Equal(t, "1048576", set["item_size_max"], "item_size_max")
	require.Equal(t, "yes", set["slab_reassign"], "slab_reassign")

	factor, err := strconv.ParseFloat(set["growth_factor"], 64)
	require.NoError(t, err)
	p := slab.Memcached1618(int(num(t, st, "pointer_size"))/8, num(t, set, "maxbytes"))
	p.Factor = factor
	p.MinSize = int(num(t, set, "chunk_size"))
	p.NoCAS = set["cas_enabled"] == "no"
	model, err := slab.NewServer(p, nil)
	require.NoError(t, err)

	const n = 5000
	keys := make([]string, n)
	value := make([]byte, page.DefaultSize)
	for i := range keys {
		keys[i] = tier.Key{DB: 7, Epoch: 1, ID: page.ID{Space: 1, Page: uint32(i)}}.String()
		value[i%len(value)] = byte(i)
		c.set(keys[i], value)
		require.True(t, model.Set(keys[i], len(value), 0))
	}
	// The newest hundred are there, the oldest hundred evicted (no key
	// was read before, so memcached's segmented LRU evicts them in SET
	// order, as the model's LRU does); ten deletes of the newest.
	for _, k := range keys[n-100:] {
		require.Equal(t, model.Get(k), c.get(k), k)
	}
	for _, k := range keys[:100] {
		require.Equal(t, model.Get(k), c.get(k), k)
	}
	for _, k := range keys[n-10:] {
		require.Equal(t, model.Delete(k), c.delete(k), k)
	}

	st, slabs := c.stats(""), c.stats("slabs")
	ms := model.Stats()
	for name, want := range map[string]int64{
		"curr_items": ms.CurrItems, "total_items": ms.TotalItems, "evictions": ms.Evictions, "bytes": ms.Bytes,
		"limit_maxbytes": ms.LimitMaxbytes, "get_hits": ms.GetHits, "get_misses": ms.GetMisses,
		"cmd_get": ms.CmdGet, "delete_hits": ms.DeleteHits, "pointer_size": int64(ms.PointerSize),
	} {
		require.Equal(t, want, num(t, st, name), "stats %s", name)
	}
	require.Equal(t, ms.TotalMalloced, num(t, slabs, "total_malloced"), "stats slabs total_malloced")
	cls := model.ClassStats()
	require.EqualValues(t, len(cls), num(t, slabs, "active_slabs"))
	for _, cl := range cls {
		for name, want := range map[string]int64{
			"chunk_size": int64(cl.Size), "chunks_per_page": int64(cl.PerPage), "total_pages": cl.TotalPages,
			"total_chunks": cl.TotalChunks, "used_chunks": cl.UsedChunks, "free_chunks": cl.FreeChunks,
		} {
			require.Equal(t, want, num(t, slabs, fmt.Sprintf("%d:%s", cl.ID, name)), "stats slabs %d:%s", cl.ID, name)
		}
	}
	// What the model says of this server: 64 pages of 60 chunks.
	require.EqualValues(t, 3840-10, ms.CurrItems)
	require.EqualValues(t, n-3840, ms.Evictions)
}

// Without memcached in PATH the test above skips, saying why (and fails
// under CI=true).
func TestNoMemcachedBinary(t *testing.T) {
	memcachedtest.CheckSkipsWithout(t, "^TestAgainstRealMemcached$")
}
