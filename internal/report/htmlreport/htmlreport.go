// Package htmlreport writes a report or a comparison as one self-contained
// HTML page: its style, script and figures (inline SVG) are in the file,
// and it fetches nothing. The page opens with the validity table, then the
// provenance, the claims (each expandable to its items and p-values), every
// row in a table that can be sorted and filtered, the figures, and the
// flags with their meanings. It shows what the JSON report holds
// (report.Doc) and the figures plot draws.
package htmlreport

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"regexp"
	"sort"
	"strings"
	"time"

	"pslab/internal/plot"
	"pslab/internal/report"
)

//go:embed style.css
var css string

//go:embed script.js
var js string

//go:embed report.tmpl
var reportTmpl string

//go:embed compare.tmpl
var compareTmpl string

var funcs = template.FuncMap{"join": func(xs []string) string { return strings.Join(xs, ", ") }}

var (
	reportPage  = template.Must(template.New("report").Funcs(funcs).Parse(reportTmpl))
	comparePage = template.Must(template.New("compare").Funcs(funcs).Parse(compareTmpl))
)

// Figures are the figure kinds a report page embeds: the paper's, the
// latency percentiles and a sweep's (the per-second series are many MB of
// SVG: `pslab plot` draws them).
var Figures = []string{"8", "9", "10", "11", "12", "13", "14", plot.Latency, plot.Sweep}

// WriteReport writes the report page of d: doc is its data
// (report.BuildDoc), figs its figures (SVG), skipped why others were not
// drawn.
func WriteReport(w io.Writer, d *report.Dataset, doc report.Doc, figs []plot.Figure, skipped []string) error {
	v := reportView(d, doc, figs, skipped)
	var buf bytes.Buffer
	if err := reportPage.Execute(&buf, v); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// WriteCompare writes the comparison page: doc is its data
// (report.CompareReport.Doc), fig the comparison's figure (nil: none).
func WriteCompare(w io.Writer, doc report.CompareDoc, fig *plot.Figure) error {
	v := compareView(doc, fig)
	var buf bytes.Buffer
	if err := comparePage.Execute(&buf, v); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// svgHeader is what an SVG file has before its <svg> element.
var svgHeader = regexp.MustCompile(`(?s)^.*?(<svg[\s>])`)

// inlineSVG is an SVG file as an element of the page (the figures are
// pslab's own: their text is escaped by the SVG writer).
func inlineSVG(svg []byte) template.HTML {
	return template.HTML(svgHeader.ReplaceAllString(string(svg), "$1")) // #nosec G203 -- pslab's own figure
}

type figureView struct {
	Name string
	SVG  template.HTML
}

func figureViews(figs []plot.Figure) []figureView {
	var out []figureView
	for _, f := range figs {
		out = append(out, figureView{Name: f.Name, SVG: inlineSVG(f.SVG)})
	}
	return out
}

type validityView struct {
	Broker, Network     string
	Rows, Records       int
	Sub, Lat, Pub, Reps string
	Flagged             []string
	Loss, Backlog       string
	Misses              []string
}

type settingView struct{ Kind, Key, Values string }

type outcomeView struct {
	Source, Verdict, Class, Summary, Reason string
}

type itemRowView struct {
	Key   string
	Cells []string
}

type skippedView struct{ Source, Text string }

type claimView struct {
	ID, Statement, Source, Rule, Needs string
	Outcomes                           []outcomeView
	Items                              []itemRowView
	Skipped                            []skippedView
}

type flagChip struct{ Text, Meaning string }

type rowView struct {
	Suite, Label, Factors, Broker, Network string
	FactorTokens                           []string // the factors' words, each kept on one line
	Reps                                   int
	RepsText                               string
	Pub, Sub, Lat, P99, Wire, Lost         string
	PubV, SubV, LatV, P99V, WireV, LostV   string
	PaperSub, PaperLat                     string
	PaperSubV, PaperLatV                   string
	Flags                                  []flagChip
}

type selectView struct {
	Name   string
	Values []string
}

type flagView struct {
	Name, Meaning, Where, First string
	Records                     int
}

type failureView struct {
	Suite, Case, Broker, Network, RunID, Error string
	Rep                                        int
}

type page struct {
	Title                     string
	CSS                       template.CSS
	JS                        template.JS
	Sources                   []string
	Records, Failed           int
	Suites, Brokers, Networks []string
	Notices                   []string
	Validity                  []validityView
	Provenance                []settingView
	Wall, Phases, First, Last string
	Claims                    claimsSection
	CapClaims                 *claimsSection
	Rows                      []rowView
	Selects                   []selectView
	PaperColumns, WireColumn  bool
	FiguresIntro              string
	Figures                   []figureView
	Skipped                   []string
	Flags                     []flagView
	Notes                     []string
	Failures                  []failureView
}

func pct(k, n int) string {
	if n == 0 {
		return "–"
	}
	return fmt.Sprintf("%d/%d (%.0f %%)", k, n, 100*float64(k)/float64(n))
}

// num is a number as the tables print it and its sort key.
func num(v report.Num) (string, string) {
	f := float64(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "–", ""
	}
	return report.FormatNum(f), fmt.Sprintf("%g", f)
}

func stat(s report.DocStat) (string, string) {
	text := report.FormatStat(report.Stat{Mean: float64(s.Mean), CI: float64(s.CI95), N: s.N})
	_, key := num(s.Mean)
	return text, key
}

// when is a record time, or "–" for records without one.
func when(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.UTC().Format("2006-01-02 15:04 MST")
}

func hours(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(time.Second).String()
}

func reportView(d *report.Dataset, doc report.Doc, figs []plot.Figure, skipped []string) page {
	p := page{Title: "pslab report: " + strings.Join(doc.Suites, ", "), CSS: template.CSS(css), JS: template.JS(js), // #nosec G203 -- embedded, pslab's own
		Sources: doc.Sources, Records: doc.Records, Failed: doc.Failed, Suites: doc.Suites, Brokers: doc.Brokers, Networks: doc.Networks,
		Figures: figureViews(figs), Skipped: skipped}
	if doc.Partial != "" {
		p.Notices = append(p.Notices, "PARTIAL: "+doc.Partial+". Only the rows that have run so far are here, with the repetitions they have so far; rows still to run are missing or short, and claims over them are not measurable.")
	}
	if doc.Interrupted > 0 {
		p.Notices = append(p.Notices, fmt.Sprintf("%d interrupted case run(s) left out (cut short by SIGINT/SIGTERM: neither results nor failed repetitions).", doc.Interrupted))
	}
	if doc.Quick > 0 {
		p.Notices = append(p.Notices, fmt.Sprintf("%d of %d records come from --quick runs (short windows, reduced client counts): they check that the pipeline works and are not comparable with the paper.", doc.Quick, doc.Records))
	}
	for _, v := range doc.Validity {
		vv := validityView{Broker: v.Broker, Network: v.Network, Rows: v.Rows, Records: v.Records,
			Sub: pct(v.SubOK, v.Rows), Lat: pct(v.LatOK, v.Rows), Pub: pct(v.PubOK, v.Rows),
			Reps: fmt.Sprintf("%d/%g/%d", v.RepsMin, v.RepsMedian, v.RepsMax),
			Loss: fmt.Sprintf("%d (%d)", v.LostRecords, v.Lost), Backlog: fmt.Sprintf("%d (%d)", v.BacklogRecords, v.Backlog), Misses: v.Misses}
		for _, name := range sortedKeys(v.Flagged) {
			vv.Flagged = append(vv.Flagged, fmt.Sprintf("%s %d", name, v.Flagged[name]))
		}
		p.Validity = append(p.Validity, vv)
	}
	pr := doc.Provenance
	p.Wall, p.Phases = hours(pr.WallS), hours(pr.PhasesS)
	p.First, p.Last = when(pr.First), when(pr.Last)
	for _, s := range pr.Settings {
		p.Provenance = append(p.Provenance, settingView{Kind: s.Kind, Key: s.Key, Values: countsText(s.Values)})
	}
	p.Claims = claimsView(d, doc.Claims)
	if c := doc.CapacityClaims; c != nil {
		cs := claimsView(d, *c)
		cs.ID, cs.Title = "cap-claims", "Claims on capacity and on latency at equal offered load"
		cs.Intro = fmt.Sprintf("The paper's conclusions on the capacity bundles' rows: capacities (delivered msgs/s) and mean latency at an equal offered load (fixed loads within ±%.0f %%), each item the ratio of two rows with its 95 %% CI (Stein's), judged against the claim's stated margin (\"more than %.0f %%\": the whole CI above ×%.2f). A client-bound row (`≥ X`) is no evidence about the broker: inconclusive. A pair on different mechanisms is left out of a claim about another factor. Open a claim for its items.", 100*c.EqualLoad, 100*c.Tolerance, 1+c.Tolerance)
		if len(c.Claims) == 0 {
			cs.Intro = "None of the claims on capacity rows can be evaluated on these bundles: each needs rows that differ in one factor the way the paper's cases do."
		}
		p.CapClaims = &cs
	}
	rowsView(&p, doc)
	for _, f := range doc.Flags {
		where := f.Where
		if len(where) > 20 {
			where = append(where[:20:20], fmt.Sprintf("and %d more", len(f.Where)-20))
		}
		p.Flags = append(p.Flags, flagView{Name: f.Name, Meaning: f.Meaning, Records: f.Records, Where: strings.Join(where, ", "), First: f.First})
	}
	seenNote := map[string]bool{}
	for _, g := range d.Groups {
		if g.Note != "" && !seenNote[g.Suite+"/"+g.Case] {
			seenNote[g.Suite+"/"+g.Case] = true
			p.Notes = append(p.Notes, fmt.Sprintf("%s case %s (%s): %s", g.Suite, g.Case, g.Name, g.Note))
		}
		for _, f := range g.Failed {
			p.Failures = append(p.Failures, failureView{Suite: g.Suite, Case: g.Case, Broker: g.Broker, Network: g.Network, Rep: f.Rep, RunID: f.RunID, Error: f.Error})
		}
	}
	p.FiguresIntro = fmt.Sprintf("%d figures, drawn from the same records (pslab plot writes them as PNG and SVG, and the per-second series too). Measured values are means over repetitions with 95 %% CI whiskers; throughput axes are logarithmic.", len(figs))
	return p
}

// claimsSection is a claims check as the page shows it.
type claimsSection struct {
	ID, Title, Intro, Anchor string
	Notes, Sources           []string
	Claims                   []claimView
	Unmeasured               []string
}

func claimsView(d *report.Dataset, c report.DocClaims) claimsSection {
	brokers := d.Brokers
	if c.Brokers != nil {
		brokers = c.Brokers
	}
	sources := brokers
	if c.PaperValues {
		sources = append([]string{report.PaperSource}, brokers...)
	}
	p := claimsSection{ID: "claims", Title: "Claims check", Anchor: c.Anchor, Sources: sources}
	if p.Anchor == "" {
		p.Anchor = "claim-"
	}
	switch {
	case len(c.Claims) == 0:
		p.Intro = "None of the paper's claims can be evaluated on these records: each needs cases that differ in one factor the way the paper's do."
	case c.PaperValues:
		p.Intro = fmt.Sprintf("Each of the paper's qualitative conclusions, on the paper's own printed values (single numbers judged by ±%.0f %%: a check that the rule says what the paper's numbers say) and on each broker's measurements, where every comparison is a test on the repetitions at the %.0f %% level (\"beats\"/\"cuts\": Welch's t on log values; \"similar\": TOST with a ±%.0f %% margin). A claim holds when more than half of its items hold, does not hold when it could not reach that even if every inconclusive item held, and is inconclusive otherwise. Open a claim for its items and p-values.", 100*c.Tolerance, 100*c.Alpha, 100*c.Tolerance)
	default:
		p.Intro = fmt.Sprintf("The paper's conclusions these records can test, on each broker's measurements (tests on the repetitions at the %.0f %% level). The records carry no published values: there is no paper column. Open a claim for its items and p-values.", 100*c.Alpha)
	}
	p.Notes = c.Notes
	p.Unmeasured = c.Unmeasured
	for _, cl := range c.Claims {
		cv := claimView{ID: cl.ID, Statement: cl.Statement, Source: cl.Source, Rule: cl.Rule, Needs: cl.Needs}
		var keys []string
		seen := map[string]bool{}
		for _, s := range sources {
			o := cl.Outcomes[s]
			cv.Outcomes = append(cv.Outcomes, outcomeView{Source: s, Verdict: string(o.Verdict), Class: verdictClass(string(o.Verdict)), Summary: o.Summary, Reason: o.Reason})
			for _, it := range o.Items {
				if !seen[it.Key] {
					seen[it.Key] = true
					keys = append(keys, it.Key)
				}
			}
			for _, sk := range o.Skipped {
				cv.Skipped = append(cv.Skipped, skippedView{Source: s, Text: sk})
			}
		}
		for _, k := range keys {
			row := itemRowView{Key: k}
			for _, s := range sources {
				row.Cells = append(row.Cells, itemCell(cl.Outcomes[s].Items, k))
			}
			cv.Items = append(cv.Items, row)
		}
		p.Claims = append(p.Claims, cv)
	}
	return p
}

// itemCell is an item as the markdown prints it: mark, numbers, p-value
// and evidence, flags.
func itemCell(items []report.DocItem, key string) string {
	for _, it := range items {
		if it.Key != key {
			continue
		}
		mark := "✗"
		switch {
		case it.Test == report.TestInconclusive:
			mark = "?"
		case it.Supports:
			mark = "✓"
		}
		s := mark + " " + it.Text
		if it.Test != "" {
			s += fmt.Sprintf(" (%s; %s)", report.FormatP(float64(it.P)), it.Evidence)
		}
		if len(it.Flags) > 0 {
			s += " † " + strings.Join(it.Flags, ",")
		}
		return s
	}
	return "–"
}

func verdictClass(v string) string { return strings.ReplaceAll(v, " ", "-") }

func rowsView(p *page, doc report.Doc) {
	values := map[string]map[string]bool{"suite": {}, "broker": {}, "network": {}}
	for _, r := range doc.Rows {
		rv := rowView{Suite: r.Suite, Label: r.Label, Factors: r.Factors, FactorTokens: strings.Fields(r.Factors), Broker: r.Broker, Network: r.Network, Reps: r.Reps,
			RepsText: fmt.Sprint(r.Reps)}
		if r.Quick {
			rv.Label += " (quick)"
		}
		if len(r.Failed) > 0 {
			rv.RepsText += fmt.Sprintf(" (+%d failed)", len(r.Failed))
		}
		rv.Pub, rv.PubV = stat(r.Pub)
		rv.Sub, rv.SubV = stat(r.Sub)
		rv.Lat, rv.LatV = stat(r.Lat)
		rv.P99, rv.P99V = num(r.P99.Mean)
		rv.Wire, rv.WireV = "–", ""
		if r.WireUp.N > 0 {
			rv.Wire = fmt.Sprintf("%.0f/%.0f", float64(r.WireUp.Mean), float64(r.WireDown.Mean))
			rv.WireV = fmt.Sprintf("%g", float64(r.WireUp.Mean+r.WireDown.Mean))
			p.WireColumn = true
		}
		rv.PaperSub, rv.PaperLat = "–", "–"
		if r.Paper != nil {
			rv.PaperSub, rv.PaperSubV = num(r.Paper.Sub)
			rv.PaperLat, rv.PaperLatV = num(r.Paper.Lat)
			p.PaperColumns = true
		}
		rv.Lost = fmt.Sprint(r.Counts.Lost)
		if r.Counts.Backlog > 0 {
			rv.Lost += fmt.Sprintf(" +%d backlog", r.Counts.Backlog)
		}
		rv.LostV = fmt.Sprint(r.Counts.Lost)
		for _, name := range sortedKeys(r.Flags) {
			rv.Flags = append(rv.Flags, flagChip{Text: fmt.Sprintf("%s×%d", name, r.Flags[name]), Meaning: report.FlagMeaning(name)})
		}
		values["suite"][r.Suite], values["broker"][r.Broker], values["network"][r.Network] = true, true, true
		p.Rows = append(p.Rows, rv)
	}
	for _, name := range []string{"suite", "broker", "network"} {
		if len(values[name]) > 1 {
			p.Selects = append(p.Selects, selectView{Name: name, Values: sortedSet(values[name])})
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func sortedSet(m map[string]bool) []string { return sortedKeys(m) }

func countsText(cs []report.Count) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s (%d)", c.Value, c.Records))
	}
	return strings.Join(parts, ", ")
}

type notComparedView struct {
	What string
	Rows []string
}

type settingDiffView struct {
	Kind, Key, A, B string
	Rows            int
}

type compareRowView struct {
	Suite, Case, Broker, Network, Name string
	Sub, SubCI, SubP, SubVerdict       string
	Lat, LatCI, LatP, LatVerdict       string
	SubV, SubPV, LatV, LatPV           string
	Reps                               string
}

type comparePageView struct {
	Title                  string
	CSS                    template.CSS
	JS                     template.JS
	A, B                   string
	RecordsA, RecordsB     int
	Margin                 string
	Warnings, Tally        []string
	Paired                 string
	NotCompared            []notComparedView
	Gate                   bool
	GateClass, GateVerdict string
	GateConditions         string
	Violations             []string
	Settings               []settingDiffView
	Selects                []selectView
	Rows                   []compareRowView
	Figure                 *figureView
}

func ratioCells(r report.CompareRatio) (ratio, ci, p, ratioKey, pKey string) {
	ratio, ratioKey = "–", ""
	if f := float64(r.Ratio); !math.IsNaN(f) {
		ratio, ratioKey = report.FormatRatio(f), fmt.Sprintf("%g", f)
	}
	ci = "–"
	if lo, hi := float64(r.Lo), float64(r.Hi); !math.IsNaN(lo) && !math.IsNaN(hi) {
		ci = fmt.Sprintf("[%.3g, %.3g]", lo, hi)
	} else if r.Reason != "" {
		ci = r.Reason
	}
	p, pKey = report.FormatP(float64(r.P)), ""
	if f := float64(r.P); !math.IsNaN(f) {
		pKey = fmt.Sprintf("%g", f)
	}
	return ratio, ci, p, ratioKey, pKey
}

func compareView(doc report.CompareDoc, fig *plot.Figure) comparePageView {
	v := comparePageView{Title: "pslab compare", CSS: template.CSS(css), JS: template.JS(js), // #nosec G203 -- embedded, pslab's own
		A: doc.A.Source, B: doc.B.Source, RecordsA: doc.A.Records, RecordsB: doc.B.Records,
		Margin: fmt.Sprintf("%.0f", 100*doc.Margin), Warnings: doc.Warnings}
	if len(doc.Pairs) > 0 {
		v.Paired = report.PairsText(doc.Pairs)
	}
	for _, m := range []struct{ key, name string }{{"sub_tput", "sub throughput"}, {"latency_ms", "mean latency"}} {
		t := doc.Tally[m.key]
		v.Tally = append(v.Tally, fmt.Sprintf("%s: %d same, %d differ, %d inconclusive of %d", m.name, t[report.Same], t[report.Differs], t[report.CompareUndec], len(doc.Rows)))
	}
	if g := doc.Gate; g != nil {
		v.Gate = true
		var conds []string
		conds = append(conds, g.Thresholds...)
		for _, f := range g.FailOn {
			conds = append(conds, "--fail-on "+f)
		}
		v.GateConditions = strings.Join(conds, ", ")
		v.GateVerdict, v.GateClass = "Gate passed", "same"
		if !g.Passed {
			v.GateVerdict, v.GateClass = "Gate failed", "differs"
		}
		for _, x := range g.Violations {
			v.Violations = append(v.Violations, x.Text())
		}
	}
	for _, l := range []struct {
		what string
		ks   []report.GroupKey
	}{{"Only in A", doc.OnlyA}, {"Only in B", doc.OnlyB}, {"Not compared (the same case id ran different factors)", doc.FactorsDiffer}} {
		if len(l.ks) == 0 {
			continue
		}
		nc := notComparedView{What: l.what}
		for _, k := range l.ks {
			nc.Rows = append(nc.Rows, fmt.Sprintf("%s %s %s %s", k.Suite, k.Case, k.Broker, k.Network))
		}
		v.NotCompared = append(v.NotCompared, nc)
	}
	for _, d := range doc.SettingsDiffer {
		v.Settings = append(v.Settings, settingDiffView{Kind: d.KindText(), Key: d.Key, A: countsText(d.A), B: countsText(d.B), Rows: d.Rows})
	}
	values := map[string]map[string]bool{"suite": {}, "broker": {}, "network": {}}
	for _, r := range doc.Rows {
		rv := compareRowView{Suite: r.Suite, Case: r.Case, Broker: r.Broker, Network: r.Network, Name: r.Name,
			SubVerdict: r.Sub.Verdict, LatVerdict: r.Lat.Verdict, Reps: fmt.Sprintf("%d/%d", r.Sub.NA, r.Sub.NB)}
		if r.Quick {
			rv.Case += " (quick)"
		}
		rv.Sub, rv.SubCI, rv.SubP, rv.SubV, rv.SubPV = ratioCells(r.Sub)
		rv.Lat, rv.LatCI, rv.LatP, rv.LatV, rv.LatPV = ratioCells(r.Lat)
		values["suite"][r.Suite], values["broker"][r.Broker], values["network"][r.Network] = true, true, true
		v.Rows = append(v.Rows, rv)
	}
	for _, name := range []string{"suite", "broker", "network"} {
		if len(values[name]) > 1 {
			v.Selects = append(v.Selects, selectView{Name: name, Values: sortedSet(values[name])})
		}
	}
	if fig != nil {
		fv := figureView{Name: fig.Name, SVG: inlineSVG(fig.SVG)}
		v.Figure = &fv
	}
	return v
}
