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
// Without a memcached binary in PATH, t is skipped (see Require). t must be
// the test calling Start, on its own goroutine: a skip ends the goroutine
// that calls it, so a subtest must pass its own t, not its parent's.
func Start(t testing.TB, args ...string) (addr string, stop func()) {
	t.Helper()
	bin := Require(t)
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

// Require returns the path of the memcached binary, found in PATH, or
// ends t: it is skipped with one line that says why, except under
// CI=true, where a missing binary is a broken setup and fails t with the
// command that installs it. A test with subtests that each start a server
// calls it first, so that the whole test skips once instead of every
// subtest.
func Require(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("memcached")
	if err == nil {
		return bin
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(MissingInCI)
	}
	t.Skip(MissingSkip)
	return ""
}

// The lines Require ends a test with when memcached is not in PATH.
const (
	MissingSkip = "skipped: no memcached in PATH (this test starts its own server; Debian: apt-get install memcached)"
	MissingInCI = "memcached is not in PATH and CI=true: install it (Debian: apt-get install -y memcached)"
)

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

// CheckSkipsWithout runs the tests of the calling test binary that match
// run (a -test.run pattern) again, in a child process whose PATH holds no
// memcached, and fails t unless they behave as a machine without memcached
// needs: with CI unset, the child passes, the tests that need a server are
// skipped with MissingSkip and none panics or fails; with CI=true, the
// child fails with MissingInCI. It keeps a test that starts its server the
// wrong way (from another goroutine than its own) from breaking `go test`
// on such a machine unnoticed.
func CheckSkipsWithout(t *testing.T, run string) {
	t.Helper()
	if os.Getenv(childEnv) != "" {
		t.Skip("in the child process of CheckSkipsWithout")
	}
	empty := t.TempDir()
	for _, ci := range []bool{false, true} {
		env := []string{"PATH=" + empty, childEnv + "=1"}
		for _, kv := range os.Environ() {
			if k, _, _ := strings.Cut(kv, "="); k != "PATH" && k != "CI" && k != childEnv {
				env = append(env, kv)
			}
		}
		if ci {
			env = append(env, "CI=true")
		}
		cmd := exec.Command(os.Args[0], "-test.run="+run, "-test.v", "-test.count=1")
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		text := string(out)
		switch {
		case strings.Contains(text, "panic"):
			t.Errorf("CI=%v: a test panicked without memcached:\n%s", ci, text)
		case !strings.Contains(text, "--- SKIP") && !ci:
			t.Errorf("CI=%v: no test matching %q was skipped:\n%s", ci, run, text)
		case !ci && (err != nil || strings.Contains(text, "--- FAIL")):
			t.Errorf("CI unset: want the tests matching %q to pass or skip (err %v):\n%s", run, err, text)
		case !ci && !strings.Contains(text, MissingSkip):
			t.Errorf("CI unset: the skip does not say why:\n%s", text)
		case ci && (err == nil || !strings.Contains(text, MissingInCI)):
			t.Errorf("CI=true: want a failure saying %q (err %v):\n%s", MissingInCI, err, text)
		}
	}
}

// childEnv marks the child process of CheckSkipsWithout.
const childEnv = "ENGINELAB_MEMCACHEDTEST_CHILD"
