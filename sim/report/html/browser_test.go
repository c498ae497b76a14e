package html

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// chromium finds Debian's chromium (or another Chrome) on PATH. Without
// one the test skips, saying why, unless CI=true, where it fails.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not on PATH (CI=true: .ci/run installs Debian's chromium package)")
	}
	t.Skip("chromium is not on PATH: apt-get install chromium to run the browser test")
	return ""
}

// TestBrowser opens each fixture's page in headless Chromium and checks
// that it really renders: no console error or exception, no network
// request (the file itself aside), every chart's SVG with a non-empty
// box, the figures in the page equal to the JSON report's, and that it
// prints (a PDF). It saves a PNG screenshot in the test's temporary
// directory (-v says where); with ENGINELAB_SCREENSHOT=FILE it writes the
// one-report page's first screen there too (the README's picture:
// ENGINELAB_SCREENSHOT=$PWD/sim/report.png go test ./sim/report/html/ -run TestBrowser).
func TestBrowser(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	pages := []struct {
		name string
		page *Page
	}{
		{"report", &Page{Title: "enginelab tpcc --mode sim --scale small --duration 2s", Report: loadReport(t)}},
		{"compare", &Page{Title: "enginelab tpcc --compare count-rewrite", Comparison: loadComparison(t)}},
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.WindowSize(1000, 1400), chromedp.Flag("disable-gpu", true))
	// A bound on the whole browser: the first Run of a context must not
	// have a timeout of its own (it would stop the browser).
	bctx, stop := context.WithTimeout(context.Background(), 3*time.Minute)
	defer stop()
	actx, cancel := chromedp.NewExecAllocator(bctx, opts...)
	defer cancel()
	for _, pg := range pages {
		t.Run(pg.name, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, Render(&b, pg.page))
			file := filepath.Join(dir, pg.name+".html")
			require.NoError(t, os.WriteFile(file, b.Bytes(), 0o644))
			url := "file://" + file

			var mu sync.Mutex
			var requests, problems []string
			ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
				mu.Lock()
				defer mu.Unlock()
				switch e := ev.(type) {
				case *network.EventRequestWillBeSent:
					if e.Request.URL != url {
						requests = append(requests, e.Request.URL)
					}
				case *runtime.EventConsoleAPICalled:
					if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning {
						problems = append(problems, fmt.Sprintf("console %s: %v", e.Type, e.Args))
					}
				case *runtime.EventExceptionThrown:
					problems = append(problems, "exception: "+e.ExceptionDetails.Text)
				case *cdplog.EventEntryAdded:
					if e.Entry.Level == cdplog.EntryLevelError {
						problems = append(problems, "log: "+e.Entry.Text)
					}
				}
			}))
			defer cancel()
			type fig struct {
				Figure, Side, Type, Text string
			}
			require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitReady("body")))
			boxes, err := chromedp.Run(ctx, chromedp.Evaluate[[]chartBox](`Array.from(document.querySelectorAll('figure.chart')).map(f => {
				const s = f.querySelector('svg'); const r = s ? s.getBoundingClientRect() : {width: 0, height: 0};
				return {Name: f.dataset.chart, Width: r.width, Height: r.height}; })`))
			require.NoError(t, err)
			figs, err := chromedp.Run(ctx, chromedp.Evaluate[[]fig](`Array.from(document.querySelectorAll('td[data-figure]')).map(td =>
				({Figure: td.dataset.figure, Side: td.dataset.side, Type: td.dataset.type || '', Text: td.textContent}))`))
			require.NoError(t, err)
			png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			require.NoError(t, err)
			pdf, err := chromedp.Run(ctx, chromedp.PrintToPDF())
			require.NoError(t, err)
			mu.Lock()
			require.Empty(t, requests, "the page fetched something")
			require.Empty(t, problems)
			mu.Unlock()

			require.Equal(t, charts(t, b.String()), names(boxes), "the browser sees every chart")
			for _, x := range boxes {
				require.Greater(t, x.Width, 100.0, x.Name)
				require.Greater(t, x.Height, 100.0, x.Name)
			}
			// The figures the browser shows are the report's: the same cells
			// the unit tests read from the markup, here after parsing.
			var want []fig
			_, sides := pg.page.sides()
			for i, sd := range sides {
				want = append(want, fig{"tpmc", fmt.Sprint(i), "", fmt.Sprintf("%.0f", sd.Rep.Run.TpmC)})
				for _, ty := range sd.Rep.Run.Types {
					want = append(want, fig{"count", fmt.Sprint(i), ty.Type, fmt.Sprint(ty.Count)},
						fig{"p90", fmt.Sprint(i), ty.Type, fmt.Sprintf("%.3f", ty.LatencyMs.P90)})
					for _, st := range ty.Steps {
						want = append(want, fig{"step." + st.Step + ".latency_mean", fmt.Sprint(i), ty.Type, fmt.Sprintf("%.1f", st.LatencyUs.Mean)})
					}
				}
			}
			require.Subset(t, figs, want)
			require.True(t, bytes.HasPrefix(pdf, []byte("%PDF")), "the page prints")
			require.Greater(t, len(png), 10_000)
			shot := filepath.Join(dir, pg.name+".png")
			require.NoError(t, os.WriteFile(shot, png, 0o644))
			t.Logf("screenshot: %s (%d bytes), PDF %d bytes", shot, len(png), len(pdf))
			if out := os.Getenv("ENGINELAB_SCREENSHOT"); out != "" && pg.name == "report" {
				require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(900, 1100)))
				first, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(out, first, 0o644))
				t.Logf("wrote %s", out)
			}
		})
	}
}

// chartBox is a chart's SVG box in the browser.
type chartBox struct {
	Name          string
	Width, Height float64
}

func names(bs []chartBox) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Name)
	}
	return out
}
