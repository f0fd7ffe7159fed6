package plot

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"sort"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"pslab/internal/model"
	"pslab/internal/scenario"
)

// HenjesOptions choose what the Henjes et al. figures show.
type HenjesOptions struct {
	OutDir string
	DPI    int
	// Response of the fits: Capacity plots the measured overall
	// throughput and (1+r)/B; Demand plots the overall throughput per
	// broker CPU core, (received + dispatched) / broker cores, and (1+r)/D.
	Response model.Response
	// Form draws this form's fit as the model lines; "" draws each
	// group's best form.
	Form string
}

// Henjes draws, per fitted group (broker, network, filter kind), the
// papers' figures from the observations the fits used:
//
//	filters-<broker>-<network>-<kind>  throughput vs n_fltr, one line per
//	                                   replication grade r, with the fitted
//	                                   model as dashed lines (000 Figs. 13/14)
//	or-<broker>-<network>              simple vs OR-filters vs number of values (Fig. 11)
//	and-<broker>-<network>             AND-filter length, term first/middle/last (Fig. 12)
func Henjes(groups []model.Group, o HenjesOptions) (Output, error) {
	var out Output
	if o.DPI <= 0 {
		o.DPI = 96
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return out, err
	}
	var jobs []job
	byNet := map[[2]string][]model.Observation{}
	var nets [][2]string
	for _, g := range groups {
		j, why := filtersJob(g, o)
		if why != "" {
			out.Skipped = append(out.Skipped, why)
		} else {
			jobs = append(jobs, j)
		}
		k := [2]string{g.Broker, g.Network}
		if _, ok := byNet[k]; !ok {
			nets = append(nets, k)
		}
		byNet[k] = append(byNet[k], g.Obs...)
	}
	for _, k := range nets {
		for _, fig := range []struct {
			name, title, xLabel string
			pick                func(f scenario.Factors) (series string, x float64, ok bool)
		}{
			{"or", "Simple filters vs OR-filters (replication grade 1)", "number of different values n (simple: n subscribers; or: 5 subscribers, n/5 values each)", orPoint},
			{"and", "AND-filters: position of the distinguishing term (replication grade 1)", "terms per AND-filter (of k properties per message)", andPoint},
		} {
			ss := seriesOf(byNet[k], fig.pick, o.Response)
			name := fmt.Sprintf("%s-%s-%s", fig.name, k[0], k[1])
			if len(ss) == 0 {
				out.Skipped = append(out.Skipped, name+": no records of that experiment among the fitted observations")
				continue
			}
			jobs = append(jobs, lineJob(name, fmt.Sprintf("%s  —  %s over %s", fig.title, k[0], k[1]),
				responseNote(o.Response), fig.xLabel, yAxis(o.Response), ss, nil))
		}
	}
	files, err := writeJobs(Options{OutDir: o.OutDir, DPI: o.DPI}, jobs)
	out.Files = append(out.Files, files...)
	sort.Strings(out.Files)
	return out, err
}

// series is one line of a figure: mean y per x.
type series struct {
	name string
	r    float64 // design replication grade (filters figure)
	// at[k] is the mean model point (n_fltr, n_diff, measured r) of the
	// runs behind pts[k]: where the fitted model is evaluated.
	at  []model.Point
	pts plotter.XYs
}

// The papers' joint grid (paper 000 Figures 13/14): r matching
// subscribers and n additional filters. Runs of other series with the same
// design but other r or n (the activation series) stay out of the lines,
// which would otherwise zigzag between experiments.
var (
	gridR = map[int]bool{1: true, 2: true, 5: true, 10: true, 20: true, 40: true}
	gridN = map[int]bool{5: true, 10: true, 20: true, 40: true, 80: true, 160: true}
)

// gridPoint selects the joint-grid design (simple filters, one value, the
// extra filters looking for different values, r and n on the papers'
// grid) and returns its r and n_fltr.
func gridPoint(f scenario.Factors) (string, float64, bool) {
	if !f.Filtered() || f.FilterForm != scenario.FormSimple || f.Values != 1 || f.ExtraValues == scenario.ExtraSame ||
		!gridR[f.Matching] || !gridN[f.ExtraFilters] {
		return "", 0, false
	}
	return fmt.Sprintf("r = %d", f.Matching), float64(f.Counts().NFilters), true
}

func orPoint(f scenario.Factors) (string, float64, bool) {
	if !f.Filtered() || f.Values < 2 || f.Matching != 1 || f.ExtraFilters != 0 {
		return "", 0, false
	}
	switch f.FilterForm {
	case scenario.FormSimple:
		return string(f.Filter) + " simple", float64(f.Values), true
	case scenario.FormOr:
		return fmt.Sprintf("%s OR (%d subscribers)", f.Filter, f.FilterGroups()), float64(f.Values), true
	}
	return "", 0, false
}

func andPoint(f scenario.Factors) (string, float64, bool) {
	if !f.Filtered() || f.FilterForm != scenario.FormAnd {
		return "", 0, false
	}
	return fmt.Sprintf("%s, term %s", f.Filter, f.AndPosition), float64(f.AndTerms), true
}

// yOf is the plotted value of an observation: overall throughput, or per
// broker core under Demand.
func yOf(o model.Observation, resp model.Response) (float64, bool) {
	overall := o.ReceivedPerSec + o.DispatchedPerSec
	if resp == model.Demand {
		if !(o.BrokerCPU > 0) {
			return 0, false
		}
		return overall / o.BrokerCPU, true
	}
	return overall, true
}

// seriesOf groups observations into lines, averaging repetitions.
func seriesOf(obs []model.Observation, pick func(scenario.Factors) (string, float64, bool), resp model.Response) []*series {
	type acc struct {
		sum, n float64
		at     model.Point // sums
	}
	pts := map[string]map[float64]*acc{}
	rOf := map[string]float64{}
	for _, o := range obs {
		if o.Record == nil {
			continue
		}
		name, x, ok := pick(o.Record.Factors)
		y, okY := yOf(o, resp)
		if !ok || !okY {
			continue
		}
		if pts[name] == nil {
			pts[name] = map[float64]*acc{}
		}
		a := pts[name][x]
		if a == nil {
			a = &acc{}
			pts[name][x] = a
		}
		a.sum += y
		a.n++
		a.at.NFilters += o.NFilters
		a.at.NDistinct += o.NDistinct
		a.at.R += o.R
		rOf[name] = float64(o.Record.Factors.Matching)
	}
	var out []*series
	for name, m := range pts {
		s := &series{name: name, r: rOf[name]}
		xs := make([]float64, 0, len(m))
		for x := range m {
			xs = append(xs, x)
		}
		sort.Float64s(xs)
		for _, x := range xs {
			a := m[x]
			s.pts = append(s.pts, plotter.XY{X: x, Y: a.sum / a.n})
			s.at = append(s.at, model.Point{NFilters: a.at.NFilters / a.n, NDistinct: a.at.NDistinct / a.n, R: a.at.R / a.n})
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].r != out[j].r {
			return out[i].r < out[j].r
		}
		if a, b := positionRank(out[i].name), positionRank(out[j].name); a != b {
			return a < b
		}
		return out[i].name < out[j].name
	})
	return out
}

// filtersJob is the Figure 13/14 counterpart of one group. The model
// lines are the forms fitted to exactly the observations drawn (the
// joint-grid design), with the group's fit options.
func filtersJob(g model.Group, o HenjesOptions) (job, string) {
	name := fmt.Sprintf("filters-%s-%s-%s", g.Broker, g.Network, orDashStr(g.Filter))
	var grid []model.Observation
	for _, ob := range g.Obs {
		if ob.Record == nil {
			continue
		}
		if _, _, ok := gridPoint(ob.Record.Factors); ok {
			grid = append(grid, ob)
		}
	}
	ss := seriesOf(grid, gridPoint, o.Response)
	if len(ss) == 0 {
		return job{}, name + ": no joint-grid records (simple filters, one value) among the fitted observations"
	}
	var forms []model.Form
	for _, n := range model.FormNames {
		f, _ := model.NewForm(n, nil)
		forms = append(forms, f)
	}
	fits, best, _, _ := model.Compare(grid, forms, model.FitOptions{Response: o.Response})
	form := o.Form
	if form == "" {
		form = best
	}
	var fit *model.FitResult
	var why string
	for _, c := range fits {
		if c.Form == form {
			fit = c.Fit
			if c.Err != nil {
				why = c.Err.Error()
			}
		}
	}
	note := responseNote(o.Response)
	var line model.Form
	if fit != nil {
		line = fit.Form
		note += fmt.Sprintf(" Dashed: the %s model fitted to these %d runs (%s), R² = %.3f, rel. RMS %.1f %%, evaluated at each point's n_fltr, n_diff and measured r.",
			form, len(grid), fit.Form.Equation(), fit.R2, 100*fit.RelRMS)
	} else {
		note += fmt.Sprintf(" No model line: form %q could not be fitted to these runs (%s).", form, why)
	}
	title := fmt.Sprintf("Throughput vs number of filters per replication grade  —  %s over %s, %s filters", g.Broker, g.Network, orDashStr(g.Filter))
	return lineJob(name, title, note, "installed filters n_fltr = n + r", yAxis(o.Response), ss, line), ""
}

func orDashStr(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func yAxis(resp model.Response) string {
	if resp == model.Demand {
		return "overall msgs/s per broker CPU core"
	}
	return "overall throughput (msgs/s)"
}

func responseNote(resp model.Response) string {
	if resp == model.Demand {
		return "Solid: measured (received + dispatched) msgs/s divided by the broker's CPU in cores, i.e. the overall throughput one fully used broker core would carry; the papers' single-CPU capacity."
	}
	return "Solid: measured overall throughput (received + dispatched msgs/s) of saturated runs, as the papers plot it."
}

// lineJob draws solid measured lines with markers, one colour per series,
// and for a model the dashed (1+r)/B over each series' x range.
func lineJob(name, title, note, xLabel, yLabelText string, ss []*series, fit model.Form) job {
	const w, h = 9 * vg.Inch, 6 * vg.Inch
	return job{name: name, w: w, h: h, draw: func(c draw.Canvas) {
		c.FillPolygon(color.White, rect(c.Rectangle))
		body := header(c, title, note)
		p := newPlot("", xLabel, yLabelText)
		p.Y.Tick.Marker = siTicks{}
		p.X.Tick.Marker = siTicks{}
		p.Add(plotter.NewGrid())
		p.Legend.Top, p.Legend.Left = false, false
		p.Legend.TextStyle.Font.Size = 10
		p.Legend.Padding = vg.Points(3)
		ymax, modelMax := 0.0, 0.0
		for i, s := range ss {
			col := palette[i%len(palette)]
			line, points, err := plotter.NewLinePoints(s.pts)
			if err != nil {
				continue
			}
			line.LineStyle = solid(col, 1.8)
			points.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
			p.Add(line, points)
			p.Legend.Add(s.name, line, points)
			for _, pt := range s.pts {
				ymax = math.Max(ymax, pt.Y)
			}
			if fit == nil {
				continue
			}
			var curve plotter.XYs
			for k, at := range s.at {
				pred, err := model.Predict(fit, nil, at)
				if err != nil {
					continue
				}
				y := (1 + at.R) * pred.Received
				curve = append(curve, plotter.XY{X: s.pts[k].X, Y: y})
				modelMax = math.Max(modelMax, y)
			}
			if len(curve) > 1 {
				ml, err := plotter.NewLine(curve)
				if err == nil {
					ml.LineStyle = dashed(col, 1.5)
					p.Add(ml)
					if i == len(ss)-1 {
						p.Legend.Add("model (dashed)", lineThumb(dashed(grey, 1.5), nil))
					}
				}
			}
		}
		// Model lines above the measurements stay in view, up to twice the
		// largest measurement (beyond that they are clipped).
		p.Y.Min, p.Y.Max = 0, math.Max(ymax, math.Min(modelMax, 2*ymax))*1.1
		p.X.Min = 0
		p.Draw(body)
	}}
}

// positionRank orders AND-filter series first, middle, last.
func positionRank(name string) int {
	for i, p := range []string{"first", "middle", "last"} {
		if strings.HasSuffix(name, p) {
			return i
		}
	}
	return 0
}
