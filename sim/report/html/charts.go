package html

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// LineChart is a chart of lines, one a series.
type LineChart struct {
	Title, XLabel, YLabel string
	// LogX and LogY put an axis on a logarithmic scale (every value
	// must then be positive; others are left out).
	LogX, LogY bool
	Series     []Series
	// xTicks, if set, replaces the X axis's ticks (the percentile
	// curve's nines).
	xTicks plot.Ticker
}

// Series is one line: its name in the legend and its points.
type Series struct {
	Name string
	X, Y []float64
}

// BarChart is a bar chart over categories: each group a bar per
// category, stacked on the groups before it, or beside them.
type BarChart struct {
	Title, YLabel string
	Categories    []string
	Groups        []BarGroup
	Stacked       bool
}

// BarGroup is one group of bars: its name in the legend and a value per
// category.
type BarGroup struct {
	Name   string
	Values []float64
}

// Chart sizes: wide enough for a printed page's width, at 96 px an inch.
const (
	chartWidth  = 7 * vg.Inch
	chartHeight = 3.2 * vg.Inch
)

// errEmpty means a chart has nothing to draw: it is left out.
var errEmpty = errors.New("html: empty chart")

// legendRoom is how much higher than the data an axis goes so that a
// legend of n entries, drawn in the top right corner, stays clear of it.
func legendRoom(n int) float64 { return 1 + 0.09*float64(n+1) }

// errDraw means gonum/plot could not draw a chart.
var errDraw = errors.New("html: cannot draw the chart")

// svg draws p as an inline SVG element (no XML prolog). gonum/plot
// panics on data it cannot draw; that is an error here.
func svg(p *plot.Plot, w, h vg.Length) (out template.HTML, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = "", fmt.Errorf("%w: %v", errDraw, r)
		}
	}()
	c := vgsvg.NewWith(vgsvg.UseWH(w, h))
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", err
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	return template.HTML(s), nil // the SVG gonum wrote: its text is escaped by svgo
}

func newPlot(title, xl, yl string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xl
	p.Y.Label.Text = yl
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

// Render draws the line chart.
func (lc *LineChart) Render() (template.HTML, error) {
	p := newPlot(lc.Title, lc.XLabel, lc.YLabel)
	if lc.LogX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	if lc.LogY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	if lc.xTicks != nil {
		p.X.Tick.Marker = lc.xTicks
	}
	n := 0
	// The data's range on a log axis: gonum widens an empty range by one
	// on each side, below zero for small values, where a log axis panics.
	lo := [2]float64{math.Inf(1), math.Inf(1)}
	hi := [2]float64{math.Inf(-1), math.Inf(-1)}
	for i, s := range lc.Series {
		var pts plotter.XYs
		for k := range s.X {
			x, y := s.X[k], s.Y[k]
			if (lc.LogX && x <= 0) || (lc.LogY && y <= 0) || math.IsNaN(x) || math.IsNaN(y) || math.IsInf(y, 0) {
				continue
			}
			pts = append(pts, plotter.XY{X: x, Y: y})
			lo[0], hi[0] = math.Min(lo[0], x), math.Max(hi[0], x)
			lo[1], hi[1] = math.Min(lo[1], y), math.Max(hi[1], y)
		}
		if len(pts) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return "", err
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.5)
		sc.Color = plotutil.Color(i)
		sc.Shape = plotutil.Shape(i)
		sc.Radius = vg.Points(2)
		p.Add(l, sc)
		if len(lc.Series) > 1 || s.Name != "" {
			p.Legend.Add(s.Name, l, sc)
		}
		n++
	}
	if n == 0 {
		return "", errEmpty
	}
	for k, ax := range []*plot.Axis{&p.X, &p.Y} {
		if log := (k == 0 && lc.LogX) || (k == 1 && lc.LogY); log && lo[k] == hi[k] {
			ax.Min, ax.Max = lo[k]/2, hi[k]*2
		}
	}
	if !lc.LogY && len(lc.Series) > 1 && hi[1] > lo[1] {
		p.Y.Max = lo[1] + (hi[1]-lo[1])*legendRoom(n) // the legend above the lines
	}
	return svg(p, chartWidth, chartHeight)
}

// Render draws the bar chart.
func (bc *BarChart) Render() (template.HTML, error) {
	if len(bc.Categories) == 0 || len(bc.Groups) == 0 {
		return "", errEmpty
	}
	p := newPlot(bc.Title, "", bc.YLabel)
	width := vg.Points(math.Min(40, 360/float64(len(bc.Categories))))
	if !bc.Stacked {
		width = vg.Points(math.Min(40, 360/float64(len(bc.Categories)*len(bc.Groups))))
	}
	var below *plotter.BarChart
	any := false
	top := 0.0 // the highest bar, stacked or not
	totals := make([]float64, len(bc.Categories))
	for i, g := range bc.Groups {
		b, err := plotter.NewBarChart(plotter.Values(g.Values), width)
		if err != nil {
			return "", err
		}
		b.Color = plotutil.Color(i)
		b.LineStyle.Width = vg.Points(0.5)
		if bc.Stacked {
			if below != nil {
				b.StackOn(below)
			}
			below = b
		} else {
			b.Offset = width * vg.Length(float64(i)-float64(len(bc.Groups)-1)/2)
		}
		p.Add(b)
		p.Legend.Add(g.Name, b)
		for k, v := range g.Values {
			any = any || v != 0
			if bc.Stacked {
				totals[k] += v
				top = math.Max(top, totals[k])
			} else {
				top = math.Max(top, v)
			}
		}
	}
	if !any {
		return "", errEmpty
	}
	p.NominalX(bc.Categories...)
	if len(bc.Categories) > 5 {
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
	}
	p.Y.Min, p.Y.Max = 0, top*legendRoom(len(bc.Groups))
	return svg(p, chartWidth, chartHeight+vg.Inch/2)
}

// ninesTicks marks the percentile curve's X axis, where x is
// -log10(1 - p/100): 0, 90, 99, 99.9, ... and the maximum at maxX.
type ninesTicks struct{ maxX float64 }

func (t ninesTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for k := 0; float64(k) <= hi; k++ {
		label := strconv.FormatFloat(100-100*math.Pow(10, -float64(k)), 'f', -1, 64)
		if float64(k) == t.maxX {
			label = "max"
		}
		ts = append(ts, plot.Tick{Value: float64(k), Label: label})
	}
	return ts
}

// ninesX is percentile p's place on the percentile curve's X axis; the
// maximum (p = 100) goes at maxX.
func ninesX(p, maxX float64) float64 {
	if p >= 100 {
		return maxX
	}
	return math.Min(maxX, -math.Log10(1-p/100))
}

// chart is a rendered chart with its caption and a name tests find it by.
type chart struct {
	Name, Caption string
	SVG           template.HTML
}

// renderer is a LineChart or a BarChart.
type renderer interface{ Render() (template.HTML, error) }

// add renders c into charts, leaving out an empty chart.
func add(charts *[]chart, name, caption string, c renderer) error {
	s, err := c.Render()
	if errors.Is(err, errEmpty) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("html: chart %s: %w", name, err)
	}
	*charts = append(*charts, chart{Name: name, Caption: caption, SVG: s})
	return nil
}
