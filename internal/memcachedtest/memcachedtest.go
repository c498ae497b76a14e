// Package memcachedtest starts private memcached servers for tests: each on
// a free loopback port, killed when the test ends.
package memcachedtest

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Start starts a memcached of its own on a free loopback port, with
// 64 MiB of memory, TCP only, and args appended (such as "-I", "8k"), and
// returns its address once it accepts connections. stop kills it and waits
// for it to exit; it runs at the end of the test anyway, and may be called
// earlier (more than once is fine), such as to kill the server mid-test.
//
// Without a memcached binary the test is skipped, except under CI=true,
// where a missing binary is a broken setup and fails the test.
func Start(t testing.TB, args ...string) (addr string, stop func()) {
	t.Helper()
	bin := memcachedBinary(t)
	// The port is picked by listening on port 0 and closing again, so
	// another process may take it before memcached binds it; memcached
	// then exits at once, and a new port is tried.
	const tries = 3
	var err error
	for range tries {
		if addr, stop, err = tryStartMemcached(t, bin, args); err == nil {
			return addr, stop
		}
	}
	t.Fatalf("memcached did not start in %d tries: %v", tries, err)
	return "", nil
}

// memcachedBinary finds the memcached binary or ends the test.
func memcachedBinary(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"memcached", "/usr/bin/memcached"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("memcached not found (in PATH or /usr/bin), and CI=true: install memcached")
	}
	t.Skip("memcached not found (in PATH or /usr/bin): skipping the tests that need a memcached server")
	return ""
}

func tryStartMemcached(t testing.TB, bin string, extra []string) (string, func(), error) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return "", nil, err
	}

	args := []string{"-p", strconv.Itoa(port), "-l", "127.0.0.1", "-U", "0", "-m", "64"}
	if os.Geteuid() == 0 {
		args = append(args, "-u", "root") // memcached refuses root without -u
	}
	args = append(args, extra...)
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer // read only after the process has exited
	cmd.Stdout = &stderr
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			<-exited
		})
	}

	// Wait for the process to listen: poll with a bounded number of
	// connection attempts and a short, growing pause (about 10 s in all).
	// The server that answers must be this process, not one that took the
	// port between our Close and memcached's bind.
	backoff := time.Millisecond
	for range 100 {
		select {
		case <-exited:
			return "", nil, fmt.Errorf("%s %q exited at start: %s", bin, args, bytes.TrimSpace(stderr.Bytes()))
		default:
		}
		pid, err := memcachedPID(addr)
		switch {
		case err == nil && pid == cmd.Process.Pid:
			t.Cleanup(stop)
			return addr, stop, nil
		case err == nil:
			// Another process took the port first (ours will exit).
			stop()
			return "", nil, fmt.Errorf("port %d taken by process %d", port, pid)
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, 100*time.Millisecond)
	}
	stop()
	return "", nil, fmt.Errorf("%s %q: not accepting connections on %s: %s", bin, args, addr, bytes.TrimSpace(stderr.Bytes()))
}

// memcachedPID asks the memcached at addr for its process id ("stats").
func memcachedPID(addr string) (int, error) {
	c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(time.Second)); err != nil {
		return 0, err
	}
	if _, err := c.Write([]byte("stats\r\n")); err != nil {
		return 0, err
	}
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return 0, err
		}
		f := strings.Fields(line)
		switch {
		case len(f) == 1 && f[0] == "END":
			return 0, fmt.Errorf("%s: no pid in stats", addr)
		case len(f) == 3 && f[0] == "STAT" && f[1] == "pid":
			return strconv.Atoi(f[2])
		}
	}
}
