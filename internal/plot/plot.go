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
	"io"
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
}

// Output lists what was written and what was not, with the reason.
type Output struct {
	Files   []string
	Skipped []string
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
			continue
		case Latency, Series, Resources:
			add(p)
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 8 || n > 14 {
			return nil, fmt.Errorf("--figure %q: want 8..14, all, latency, series or resources (comma-separated)", part)
		}
		add(strconv.Itoa(n))
	}
	return out, nil
}

// Generate draws the selected figures of d into o.OutDir.
func Generate(d *report.Dataset, o Options) (Output, error) {
	var out Output
	figs := o.Figures
	if len(figs) == 0 {
		figs, _ = ParseFigures("all")
	}
	if o.DPI <= 0 {
		o.DPI = 96
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return out, err
	}
	for _, f := range figs {
		var jobs []job
		var skipped []string
		switch f {
		case Latency:
			jobs, skipped = latencyJobs(d)
		case Series:
			jobs, skipped = seriesJobs(d)
		case Resources:
			jobs, skipped = resourceJobs(d)
		default:
			n, _ := strconv.Atoi(f)
			spec, ok := figureSpecs[n]
			if !ok {
				return out, fmt.Errorf("figure %q is not drawn by pslab", f)
			}
			jobs, skipped = paperFigureJobs(d, spec)
		}
		out.Skipped = append(out.Skipped, skipped...)
		files, err := writeJobs(o, jobs)
		out.Files = append(out.Files, files...)
		if err != nil {
			return out, err
		}
	}
	sort.Strings(out.Files)
	return out, nil
}

// writeJobs renders every job, stopping at the first error.
func writeJobs(o Options, jobs []job) ([]string, error) {
	var out []string
	for _, j := range jobs {
		files, err := write(o, j)
		if err != nil {
			return out, err
		}
		out = append(out, files...)
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

// write renders a job as PNG and SVG, each written atomically.
func write(o Options, j job) ([]string, error) {
	base := filepath.Join(o.OutDir, sanitize(j.name))
	img := vgimg.NewWith(vgimg.UseWH(j.w, j.h), vgimg.UseDPI(o.DPI))
	j.draw(draw.New(img))
	svg := vgsvg.New(j.w, j.h)
	j.draw(draw.New(svg))
	png, sv := base+".png", base+".svg"
	if err := writeFile(png, vgimg.PngCanvas{Canvas: img}); err != nil {
		return nil, err
	}
	if err := writeFile(sv, svg); err != nil {
		return nil, err
	}
	return []string{png, sv}, nil
}

func writeFile(path string, w io.WriterTo) error {
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		return fmt.Errorf("render %s: %w", path, err)
	}
	return results.WriteAtomic(path, buf.Bytes())
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, s)
}
