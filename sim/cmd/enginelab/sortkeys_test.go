package main

import (
	"strings"
	"testing"
)

func TestSortKeysCommand(t *testing.T) {
	var out, errb strings.Builder
	if code := run([]string{"experiment", "sort-keys", "--rows", "300", "--n", "10,300", "--collations", "latin1_swedish_ci", "--repeats", "-1"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "expectation held") {
		t.Fatalf("output:\n%s", out.String())
	}
	for _, args := range [][]string{{"--rows", "0"}, {"--n", "x"}, {"--collations", "nope"}, {"--org", "nope"}, {"--sort-buffer-size", "1KiB"}} {
		errb.Reset()
		if code := run(append([]string{"experiment", "sort-keys"}, args...), &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errb.String())
		}
	}
}
