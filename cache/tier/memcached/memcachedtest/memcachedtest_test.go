package memcachedtest

import "testing"

// With no memcached in PATH, Start skips the test that called it (CI
// unset) and never reaches the server.
func TestStartSkipsWithoutMemcached(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("CI", "")
	var sub *testing.T
	t.Run("start", func(t *testing.T) {
		sub = t
		Start(t)
		t.Error("Start returned without a memcached binary")
	})
	if !sub.Skipped() {
		t.Fatal("the test was not skipped")
	}
}

// With memcached in PATH, a server starts and answers with its own pid;
// stop may be called twice.
func TestStartRuns(t *testing.T) {
	Require(t)
	addr, stop := Start(t)
	if _, err := memcachedPID(addr); err != nil {
		t.Fatalf("the server at %s does not answer: %v", addr, err)
	}
	stop()
	stop()
	if _, err := memcachedPID(addr); err == nil {
		t.Fatalf("the server at %s still answers after stop", addr)
	}
}

// The helper's own tests, rerun without memcached in PATH, skip with CI
// unset and fail with CI=true.
func TestSkipsWithoutMemcached(t *testing.T) {
	CheckSkipsWithout(t, "^TestStartRuns$")
}
