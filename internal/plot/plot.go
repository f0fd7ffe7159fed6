// Package plot draws result records as figures (PNG and SVG, gonum/plot):
// counterparts of Gaddah & Kunz's Figures 8-14 per broker, with the
// paper's published values drawn as a reference; latency percentiles per
// case; per-second throughput series per case, with faults shaded; and the
// client's memory and goroutines over long runs (soaks). It reads aggregated
// records only (report.Dataset); missing data is said in the figure or the
// figure is skipped with a reason, never drawn as an empty plot.
package plot

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"pslab/internal/report"
	"pslab/internal/results"
)

// Figure kinds besides the paper's numbered figures.
const (
	Latency = "latency" // latency percentiles per case
	Series  = "series"  // per-second throughput per case
)

// PaperFigures are the numbers of the paper's figures pslab draws.
var PaperFigures = []int{8, 9, 10, 11, 12, 13, 14}

// Options select what to draw and where.
type Options struct {
	OutDir  string
	Figures []string // "8".."14", Latency, Series; empty: all
	DPI     int      // PNG resolution; 0: 96
	// SVGOnly renders no PNG (Figure.PNG stays empty): for pages that
	// embed the figures.
	SVGOnly bool
}

// Output lists what was written and what was not, with the reason.
type Output struct {
	Files   []string
	Skipped []string
}

// Figure is one figure rendered in memory: the base name of its files and
// its PNG and SVG.
type Figure struct {
	Name     string
	PNG, SVG []byte
}

// Write stores the figure as dir/NAME.png and dir/NAME.svg, each
// atomically, and returns the paths written.
func (f Figure) Write(dir string) ([]string, error) {
	base := filepath.Join(dir, f.Name)
	var out []string
	for _, x := range []struct {
		ext  string
		data []byte
	}{{".png", f.PNG}, {".svg", f.SVG}} {
		if len(x.data) == 0 {
			continue
		}
		if err := results.WriteAtomic(base+x.ext, x.data); err != nil {
			return out, err
		}
		out = append(out, base+x.ext)
	}
	return out, nil
}

// ParseFigures reads a --figure value: "all", "8".."14" (also "08",
// "fig8"), "latency", "series", comma-separated.
func ParseFigures(s string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	add := func(f string) {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	for _, part := range strings.Split(s, ",") {
		p := strings.ToLower(strings.TrimSpace(part))
		p = strings.TrimPrefix(strings.TrimPrefix(p, "figure"), "fig")
		switch p {
		case "", "all":
			for _, n := range PaperFigures {
				add(strconv.Itoa(n))
			}
			add(Latency)
			add(Series)
			add(Resources)
			add(Sweep)
			continue
		case Latency, Series, Resources, Sweep:
			add(p)
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 8 || n > 14 {
			return nil, fmt.Errorf("--figure %q: want 8..14, all, latency, series, resources or sweep (comma-separated)", part)
		}
		add(strconv.Itoa(n))
	}
	return out, nil
}

// Generate draws the selected figures of d into o.OutDir.
func Generate(d *report.Dataset, o Options) (Output, error) {
	var out Output
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return out, err
	}
	skipped, err := Render(d, o, func(f Figure) error {
		files, err := f.Write(o.OutDir)
		out.Files = append(out.Files, files...)
		return err
	})
	out.Skipped = skipped
	sort.Strings(out.Files)
	return out, err
}

// Render draws the selected figures of d one after the other and hands
// each to keep (which may write it, or hold it); it returns why figures
// were not drawn, and stops at the first error of keep.
func Render(d *report.Dataset, o Options, keep func(Figure) error) (skipped []string, err error) {
	figs := o.Figures
	if len(figs) == 0 {
		figs, _ = ParseFigures("all")
	}
	for _, f := range figs {
		var jobs []job
		var skip []string
		switch f {
		case Latency:
			jobs, skip = latencyJobs(d)
		case Series:
			jobs, skip = seriesJobs(d)
		case Resources:
			jobs, skip = resourceJobs(d)
		case Sweep:
			jobs, skip = sweepJobs(d)
		default:
			n, _ := strconv.Atoi(f)
			spec, ok := figureSpecs[n]
			if !ok {
				return skipped, fmt.Errorf("figure %q is not drawn by pslab", f)
			}
			jobs, skip = paperFigureJobs(d, spec)
		}
		skipped = append(skipped, skip...)
		for _, j := range jobs {
			fig, err := render(o, j)
			if err != nil {
				return skipped, err
			}
			if err := keep(fig); err != nil {
				return skipped, err
			}
		}
	}
	return skipped, nil
}

// writeJobs renders and writes every job, stopping at the first error.
func writeJobs(o Options, jobs []job) ([]string, error) {
	var out []string
	for _, j := range jobs {
		fig, err := render(o, j)
		if err != nil {
			return out, err
		}
		files, err := fig.Write(o.OutDir)
		out = append(out, files...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// job is one figure to write: a name (without extension), a size and a
// function that draws it on any canvas.
type job struct {
	name string
	w, h vg.Length
	draw func(c draw.Canvas)
}

// render draws a job as PNG (unless o.SVGOnly) and SVG, in memory.
func render(o Options, j job) (Figure, error) {
	f := Figure{Name: sanitize(j.name)}
	dpi := o.DPI
	if dpi <= 0 {
		dpi = 96
	}
	var buf bytes.Buffer
	if !o.SVGOnly {
		img := vgimg.NewWith(vgimg.UseWH(j.w, j.h), vgimg.UseDPI(dpi))
		j.draw(draw.New(img))
		if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
			return f, fmt.Errorf("render %s.png: %w", f.Name, err)
		}
		f.PNG = append([]byte(nil), buf.Bytes()...)
		buf.Reset()
	}
	svg := vgsvg.New(j.w, j.h)
	j.draw(draw.New(svg))
	if _, err := svg.WriteTo(&buf); err != nil {
		return f, fmt.Errorf("render %s.svg: %w", f.Name, err)
	}
	f.SVG = buf.Bytes()
	return f, nil
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, s)
}
