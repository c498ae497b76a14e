package replay

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/dustin/go-humanize"

	"github.com/enginelab/enginelab/cache/tier"
)

// WriteTable prints the hit ratios as a table, a row per policy and a
// column per size, in percent of the gets.
func (r *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "tier policies on a page trace: %d events (%d gets, %d puts, %d deletes), %d pages of %s, %s mode\n",
		r.Events, r.Gets, r.Puts, r.Deletes, r.Pages, formatBytes(int64(r.PageSize)), r.Mode)
	note := ""
	if slices.Contains(r.Config.Policies, "ristretto") && r.Config.RistrettoRuns > 1 {
		note = fmt.Sprintf("; ristretto: mean of %d runs (min-max)", r.Config.RistrettoRuns)
	}
	// The cells are right-aligned; names padded to one width read left-aligned.
	width := len("policy")
	for _, p := range r.Config.Policies {
		width = max(width, len(p))
	}
	fmt.Fprintf(&b, "hit ratio, percent of the gets%s\n", note)
	if slices.Contains(r.Config.Policies, "ristretto") {
		fmt.Fprintf(&b, "(ristretto counts page bytes only; the others add %d bytes a page, so ristretto may hold more pages at one size)\n",
			tier.ItemOverhead)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\t", width, "policy")
	for _, s := range r.Config.Sizes {
		fmt.Fprintf(tw, "%s\t", exactBytes(s))
	}
	fmt.Fprintln(tw)
	for _, p := range r.Config.Policies {
		fmt.Fprintf(tw, "%-*s\t", width, p)
		for _, s := range r.Config.Sizes {
			res := r.Result(p, s)
			switch {
			case res == nil:
				fmt.Fprint(tw, "-\t")
			case res.Runs > 1:
				fmt.Fprintf(tw, "%.2f (%.2f-%.2f)\t", 100*res.HitRatio, 100*res.HitRatioMin, 100*res.HitRatioMax)
			default:
				fmt.Fprintf(tw, "%.2f\t", 100*res.HitRatio)
			}
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// formatBytes prints a byte count in binary units (64 MiB), as
// report.FormatBytes.
func formatBytes(n int64) string { return humanize.IBytes(uint64(max(0, n))) }

// exactBytes prints n in the largest binary unit that divides it, so that
// two sizes never print alike (report.FormatBytes rounds).
func exactBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	u := 0
	for u < len(units)-1 && n != 0 && n%1024 == 0 {
		n /= 1024
		u++
	}
	return fmt.Sprintf("%d %s", n, units[u])
}
