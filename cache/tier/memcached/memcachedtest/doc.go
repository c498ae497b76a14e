// Package memcachedtest starts private memcached servers for tests: each on
// a free loopback port, owned by the test that started it and killed when
// that test ends, so tests never share a server or depend on one running.
//
//	func TestSomething(t *testing.T) {
//		addr, stop := memcachedtest.Start(t, "-I", "8k") // skips without memcached
//		defer stop()
//		... memcached.Open(addr, ...) ...
//	}
//
// # Without memcached
//
// Start and Require find the binary in PATH and nowhere else. Without one,
// the test skips with the one line MissingSkip, so `go test ./...` passes on
// a machine that has no memcached (plain `go test` prints skips only with
// -v). With CI=true a missing binary is a broken setup, not a reason to
// skip: the test fails with MissingInCI, which says how to install it.
//
// CheckSkipsWithout proves both halves for a package: it reruns the tests
// matching a pattern in a child `go test` process whose PATH holds no
// memcached, and requires that they skip with CI unset and fail with
// CI=true. A package with server tests calls it from one test of its own
// (TestNoMemcachedBinary).
//
// # Lifetimes
//
// A server lives until its test ends (t.Cleanup) or until stop is called,
// whichever is first; stop may be called more than once, such as to kill
// the server in the middle of a test and watch the client's errors. Start
// must be called from the test's own goroutine: a skip ends the goroutine
// that calls it, so a subtest passes its own t.
package memcachedtest
