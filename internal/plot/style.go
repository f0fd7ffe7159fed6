package plot

import (
	"image/color"
	"math"
	"strconv"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Colours of the series (Okabe-Ito, readable by colour-blind readers).
var palette = []color.RGBA{
	{0, 114, 178, 255},   // blue
	{213, 94, 0, 255},    // vermillion
	{86, 180, 233, 255},  // sky blue
	{230, 159, 0, 255},   // orange
	{0, 158, 115, 255},   // green
	{204, 121, 167, 255}, // purple
	{0, 0, 0, 255},       // black
}

var (
	black = color.RGBA{0, 0, 0, 255}
	grey  = color.RGBA{110, 110, 110, 255}
	light = color.RGBA{200, 200, 200, 255}
	// faultShade marks a fault's time on per-second plots.
	faultShade = color.NRGBA{230, 159, 0, 60}
)

func textStyle(size vg.Length) text.Style {
	return text.Style{Color: black, Font: font.From(gplot.DefaultFont, size), Handler: gplot.DefaultTextHandler}
}

// fillText writes s with its top-left (or top-centre) at pt.
func fillText(c draw.Canvas, size vg.Length, pt vg.Point, s string, center bool) {
	st := textStyle(size)
	st.YAlign = draw.YTop
	if center {
		st.XAlign = draw.XCenter
	}
	c.FillText(st, pt, s)
}

// newPlot is a plot with the house style: readable fonts, grid lines.
func newPlot(title, xLabel, yLabel string) *gplot.Plot {
	p := gplot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = 12
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.X.Label.TextStyle.Font.Size = 11
	p.Y.Label.TextStyle.Font.Size = 11
	p.X.Tick.Label.Font.Size = 10
	p.Y.Tick.Label.Font.Size = 10
	return p
}

// logY makes the Y axis logarithmic over [lo, hi] (both > 0), with a tick
// at every 1-2-5 step and labels at decades and at 2 and 5 when the range
// is narrow.
func logY(p *gplot.Plot, lo, hi float64) {
	p.Y.Scale = gplot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.Y.Min, p.Y.Max = lo, hi
}

// logRange pads [min, max] of positive values for a log axis.
func logRange(min, max float64) (float64, float64) {
	if min <= 0 || math.IsInf(min, 0) || math.IsNaN(min) {
		return 0.1, 10
	}
	if max <= min {
		max = min
	}
	return min / 2, max * 2
}

// logTicks labels decades (1, 10, 100, 1k, ...) and, when fewer than three
// decades are shown, the 2 and 5 in between; within less than a decade,
// every tick.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []gplot.Tick {
	if min <= 0 || max <= min {
		return nil
	}
	lo := math.Floor(math.Log10(min))
	hi := math.Ceil(math.Log10(max))
	labelMinor := hi-lo <= 3
	labelAll := max/min < 10
	// Over many decades (a CI from two repetitions can span ten), label
	// every step-th decade and leave out the minor ticks, so that at most
	// about six labels share the axis and none overlap.
	step := math.Max(1, math.Ceil((hi-lo)/6))
	var ticks []gplot.Tick
	for e := lo; e <= hi; e++ {
		dec := math.Pow(10, e)
		for m := 1.0; m < 10; m++ {
			v := m * dec
			if v < min*0.999 || v > max*1.001 || (step > 1 && m > 1) {
				continue
			}
			t := gplot.Tick{Value: v}
			if (m == 1 && math.Mod(e, step) == 0) || labelAll || (labelMinor && (m == 2 || m == 5)) {
				t.Label = siLabel(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// siLabel prints 0.01, 0.5, 20, 5k, 1M.
func siLabel(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 3, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'g', 3, 64) + "k"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// legendEntry is one line of a figure's legend.
type legendEntry struct {
	name  string
	thumb gplot.Thumbnailer
}

// drawLegend draws entries top-down in c.
func drawLegend(c draw.Canvas, title string, entries []legendEntry) {
	l := gplot.NewLegend()
	l.Top, l.Left = true, true
	l.TextStyle.Font.Size = 11
	l.ThumbnailWidth = vg.Points(22)
	l.Padding = vg.Points(5)
	for _, e := range entries {
		l.Add(e.name, e.thumb)
	}
	if title != "" {
		fillText(c, 10, vg.Point{X: c.Min.X, Y: c.Max.Y}, title, false)
		c.Max.Y -= 16
	}
	l.Draw(c)
}

// thumbFunc adapts a function to gplot.Thumbnailer.
type thumbFunc func(c *draw.Canvas)

func (f thumbFunc) Thumbnail(c *draw.Canvas) { f(c) }

// swatch is a filled box legend thumbnail.
func swatch(col color.Color) gplot.Thumbnailer {
	return thumbFunc(func(c *draw.Canvas) {
		pts := []vg.Point{c.Min, {X: c.Min.X, Y: c.Max.Y}, c.Max, {X: c.Max.X, Y: c.Min.Y}}
		c.FillPolygon(col, pts)
	})
}

// lineThumb is a line (solid or dashed) with an optional glyph.
func lineThumb(ls draw.LineStyle, gs *draw.GlyphStyle) gplot.Thumbnailer {
	return thumbFunc(func(c *draw.Canvas) {
		y := c.Center().Y
		c.StrokeLine2(ls, c.Min.X, y, c.Max.X, y)
		if gs != nil {
			c.DrawGlyphNoClip(*gs, c.Center())
		}
	})
}

func glyphThumb(gs draw.GlyphStyle) gplot.Thumbnailer {
	return thumbFunc(func(c *draw.Canvas) { c.DrawGlyphNoClip(gs, c.Center()) })
}

func solid(col color.Color, w vg.Length) draw.LineStyle {
	return draw.LineStyle{Color: col, Width: w}
}

func dashed(col color.Color, w vg.Length) draw.LineStyle {
	return draw.LineStyle{Color: col, Width: w, Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
}

// paperMark is how published values are drawn: a white diamond outlined in black.
var paperMark = draw.GlyphStyle{Color: black, Radius: vg.Points(4.5), Shape: diamondGlyph{}}

// diamondGlyph is a white diamond with a dark outline.
type diamondGlyph struct{}

func (diamondGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius
	pts := []vg.Point{{X: pt.X, Y: pt.Y + r}, {X: pt.X + r, Y: pt.Y}, {X: pt.X, Y: pt.Y - r}, {X: pt.X - r, Y: pt.Y}}
	// White inside, so that the mark reads on a dark bar.
	c.FillPolygon(color.White, pts)
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1.3)})
	var p vg.Path
	p.Move(pts[0])
	for _, q := range pts[1:] {
		p.Line(q)
	}
	p.Close()
	c.Stroke(p)
}

// header draws a figure title and wrapped note lines at the top of c and
// returns the canvas below them.
func header(c draw.Canvas, title string, notes ...string) draw.Canvas {
	y := c.Max.Y - 6
	x := c.Min.X + 10
	fillText(c, 13, vg.Point{X: x, Y: y}, title, false)
	y -= 22
	st := textStyle(9.5)
	width := c.Max.X - x - 10
	for _, n := range notes {
		for _, line := range wrap(st, n, width) {
			fillText(c, 9.5, vg.Point{X: x, Y: y}, line, false)
			y -= 13
		}
	}
	body := c
	body.Max.Y = y - 6
	return body
}

// headerHeight is room for a title and up to lines wrapped note lines.
func headerHeight(lines int) vg.Length { return vg.Points(34 + 13*float64(lines)) }

// wrap splits s into lines no wider than width.
func wrap(st text.Style, s string, width vg.Length) []string {
	words := strings.Fields(s)
	var lines []string
	cur := ""
	for _, w := range words {
		next := w
		if cur != "" {
			next = cur + " " + w
		}
		if cur != "" && st.Width(next) > width {
			lines = append(lines, cur)
			cur = w
			continue
		}
		cur = next
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// siTicks are gonum's default linear ticks with short labels (75k, 1.5M).
type siTicks struct{}

func (siTicks) Ticks(min, max float64) []gplot.Tick {
	ts := gplot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = siLabel(ts[i].Value)
		}
	}
	return ts
}

// yLabel draws a vertical axis label at the left edge of c and returns
// the rest of c. (gonum places the Y label of a log axis by the linear
// midpoint of the range, which squeezes the plot; drawn here instead.)
func yLabel(c draw.Canvas, s string) draw.Canvas {
	st := textStyle(11)
	st.Rotation = math.Pi / 2
	st.XAlign, st.YAlign = draw.XCenter, draw.YTop
	c.FillText(st, vg.Point{X: c.Min.X + 2, Y: (c.Min.Y + c.Max.Y) / 2}, s)
	c.Min.X += 18
	return c
}
