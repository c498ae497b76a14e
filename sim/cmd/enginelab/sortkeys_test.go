package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestSortKeysCommand(t *testing.T) {
	var out, errb strings.Builder
	page := filepath.Join(t.TempDir(), "s.html")
	if code := run([]string{"experiment", "sort-keys", "--rows", "300", "--n", "10,300", "--collations", "latin1_swedish_ci", "--repeats", "-1", "--html", page}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "expectation held") {
		t.Fatalf("output:\n%s", out.String())
	}
	// --html: a chart per query, a line per collation and format.
	doc := readPage(t, page)
	has(t, doc, `data-chart="extra-0"`)
	has(t, doc, `data-chart="extra-1"`)
	has(t, doc, ">latin1_swedish_ci packed</text>")
	has(t, doc, "The expectation held")
	for _, args := range [][]string{{"--rows", "0"}, {"--n", "x"}, {"--collations", "nope"}, {"--org", "nope"}, {"--sort-buffer-size", "1KiB"}} {
		errb.Reset()
		if code := run(append([]string{"experiment", "sort-keys"}, args...), &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errb.String())
		}
	}
}
