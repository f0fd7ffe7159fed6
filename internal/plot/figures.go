package plot

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"pslab/internal/report"
	"pslab/internal/scenario"
)

// figureSpec describes one of the paper's figures: which cases it shows
// (base), how they are laid out (a curve over N, or bars per category) and
// which series it draws.
type figureSpec struct {
	num      int
	title    string
	table    string // the paper table holding its values
	line     bool   // x = N of N/N/N (one-to-one); otherwise bars per category
	base     func(f scenario.Factors) bool
	category func(f scenario.Factors) (key string, order float64, label string)
	minCats  int
	series   []seriesSpec
	needs    string
	xLabel   string
	catName  string // what a category is, for messages
}

// seriesSpec is one series of a figure: the cases it takes its value from
// and the metric.
type seriesSpec struct {
	name   string
	match  func(f scenario.Factors) bool
	metric string // report.PubTput or report.SubTput
}

func isDP(f scenario.Factors) bool {
	return f.Subscription == scenario.Durable && f.Delivery == scenario.Persistent
}

func isNDNP(f scenario.Factors) bool {
	return f.Subscription == scenario.NonDurable && f.Delivery == scenario.NonPersistent
}

func always(scenario.Factors) bool { return true }

// set1Series: subscribers and publishers of the durable and the
// non-durable cases (the paper's "publisher (Durable)" etc.).
var set1Series = []seriesSpec{
	{"subscribers, durable", isDP, report.SubTput},
	{"subscribers, non-durable", isNDNP, report.SubTput},
	{"publishers (durable)", isDP, report.PubTput},
	{"publishers (non-durable)", isNDNP, report.PubTput},
}

func set1Base(model scenario.Model, size int) func(scenario.Factors) bool {
	return func(f scenario.Factors) bool {
		return f.Model == model && (size == 0 || f.Size == size) && f.Ack == scenario.AckAuto &&
			f.Body == scenario.BodyBytes && !f.Selector && (isDP(f) || isNDNP(f))
	}
}

func countsCategory(f scenario.Factors) (string, float64, string) {
	key := fmt.Sprintf("%d/%d/%d %dB", f.Publishers, f.Subscribers, f.Topics, f.Size)
	order := float64(f.Size)*1e6 + float64(f.Publishers)*1e3 + float64(f.Subscribers)
	return key, order, fmt.Sprintf("%d/%d/%d, %s", f.Publishers, f.Subscribers, f.Topics, sizeLabel(f.Size))
}

func sizeLabel(n int) string {
	if n >= 1024 && n%1024 == 0 {
		return fmt.Sprintf("%d KB", n/1024)
	}
	return fmt.Sprintf("%d B", n)
}

func oneToOne2K(sub scenario.Subscription, del scenario.Delivery) func(scenario.Factors) bool {
	return func(f scenario.Factors) bool {
		return f.Model == scenario.OneToOne && f.Publishers == 1 && f.Subscription == sub && (del == "" || f.Delivery == del)
	}
}

var figureSpecs = map[int]figureSpec{
	8: {num: 8, title: "one-to-one model, 100 B messages", table: "Table 1", line: true,
		base: set1Base(scenario.OneToOne, 100), series: set1Series, minCats: 2,
		needs:  "one-to-one N/N/N cases with 100 B bodies, durable+persistent and non-durable+non-persistent (set 1: 01, 03, 05, 07, 09, 11, 13, 15)",
		xLabel: "N publishers = N subscribers = N topics (2N connections)", catName: "connection count"},
	9: {num: 9, title: "one-to-one model, 5 KB messages", table: "Table 1", line: true,
		base: set1Base(scenario.OneToOne, 5120), series: set1Series, minCats: 2,
		needs:  "one-to-one N/N/N cases with 5120 B bodies (set 1: 02, 04, ..., 16)",
		xLabel: "N publishers = N subscribers = N topics (2N connections)", catName: "connection count"},
	10: {num: 10, title: "few-to-many model", table: "Table 1",
		base: set1Base(scenario.FewToMany, 0), category: countsCategory, series: set1Series, minCats: 1,
		needs:  "few-to-many cases (set 1: 17-24)",
		xLabel: "publishers/subscribers/topics, body size", catName: "connection model"},
	11: {num: 11, title: "many-to-few model", table: "Table 1",
		base: set1Base(scenario.ManyToFew, 0), category: countsCategory, series: set1Series, minCats: 1,
		needs:  "many-to-few cases (set 1: 25-32)",
		xLabel: "publishers/subscribers/topics, body size", catName: "connection model"},
	12: {num: 12, title: "durable one-to-one, delivery and acknowledgement modes", table: "Table 2",
		base: func(f scenario.Factors) bool {
			return oneToOne2K(scenario.Durable, "")(f) && !f.Selector && f.Body == scenario.BodyBytes
		},
		category: func(f scenario.Factors) (string, float64, string) {
			if f.Ack == scenario.AckAuto {
				return "auto", 0, "AUTO"
			}
			return string(f.Ack), 1, strings.ToUpper(strings.ReplaceAll(string(f.Ack), "-", "_"))
		},
		minCats: 2,
		series: []seriesSpec{
			{"subscriber, persistent", func(f scenario.Factors) bool { return f.Delivery == scenario.Persistent }, report.SubTput},
			{"subscriber, non-persistent", func(f scenario.Factors) bool { return f.Delivery == scenario.NonPersistent }, report.SubTput},
			{"publisher, persistent", func(f scenario.Factors) bool { return f.Delivery == scenario.Persistent }, report.PubTput},
			{"publisher, non-persistent", func(f scenario.Factors) bool { return f.Delivery == scenario.NonPersistent }, report.PubTput},
		},
		needs:  "durable 1/1/1 BytesMessage cases without selector, AUTO and DUPS_OK (set 2: 01-04)",
		xLabel: "acknowledgement mode", catName: "acknowledgement mode"},
	13: {num: 13, title: "message selector (non-durable, persistent, AUTO)", table: "Table 2",
		base: func(f scenario.Factors) bool {
			return oneToOne2K(scenario.NonDurable, scenario.Persistent)(f) && f.Ack == scenario.AckAuto && f.Body == scenario.BodyBytes
		},
		category: func(f scenario.Factors) (string, float64, string) {
			if f.Selector {
				return "sel", 1, "selector (a fifth of the values)"
			}
			return "nosel", 0, "no selector"
		},
		minCats: 2,
		series:  []seriesSpec{{"publisher", always, report.PubTput}, {"subscriber", always, report.SubTput}},
		needs:   "non-durable persistent AUTO 1/1/1 cases with and without selector (set 2: 06 and 14)",
		xLabel:  "message selector", catName: "selector setting"},
	14: {num: 14, title: "message body type (non-durable, persistent, AUTO)", table: "Table 2",
		base: func(f scenario.Factors) bool {
			return oneToOne2K(scenario.NonDurable, scenario.Persistent)(f) && f.Ack == scenario.AckAuto && !f.Selector
		},
		category: func(f scenario.Factors) (string, float64, string) {
			order := map[scenario.BodyType]float64{scenario.BodyBytes: 0, scenario.BodyText: 1, scenario.BodyStream: 2, scenario.BodyMap: 3, scenario.BodyObject: 4}
			names := map[scenario.BodyType]string{scenario.BodyBytes: "BytesMessage", scenario.BodyText: "TextMessage",
				scenario.BodyStream: "StreamMessage", scenario.BodyMap: "MapMessage", scenario.BodyObject: "ObjectMessage"}
			return string(f.Body), order[f.Body], names[f.Body]
		},
		minCats: 2,
		series:  []seriesSpec{{"publisher", always, report.PubTput}, {"subscriber", always, report.SubTput}},
		needs:   "non-durable persistent AUTO 1/1/1 cases with BytesMessage and ObjectMessage bodies (set 2: 06 and 17)",
		xLabel:  "message body type", catName: "body type"},
}

// panelNetworks are the two panels of each figure.
var panelNetworks = []struct{ network, title string }{
	{report.Wireline, "(a) wireline"},
	{report.Wireless, "(b) emulated 802.11 (wifi-paper: 1 Mbit/s, 3 % loss)"},
}

// value is one drawn number: measured (mean, CI) and/or published.
type value struct {
	caseID      string
	measured    report.Stat
	hasMeasured bool
	paper       float64
	hasPaper    bool
	reps        int
	quick       bool
	flags       []string
}

// drawsBefore: of two cases at one x position and series, v is the one to
// draw instead of old. A row that mixes builds is split into parts
// ("01 ⟨1 of 2⟩") and the bare case id then has no records in that network;
// the part with a measurement and the most repetitions is drawn.
func (v value) drawsBefore(old value) bool {
	if v.hasMeasured != old.hasMeasured {
		return v.hasMeasured
	}
	return v.reps > old.reps
}

// category is one x position of a figure: a value of N (curves) or a
// category (bars), with one value per series.
type category struct {
	key    string
	order  float64
	label  string
	values []value // per series
}

// panel is the data of one network's panel.
type panel struct {
	network, title string
	cats           []*category
	measured       int // values with measurements
	published      int // values with paper values
	quick          bool
}

// figureData collects a figure's panels for one suite and broker.
func figureData(d *report.Dataset, spec figureSpec, suite, broker string) []*panel {
	var out []*panel
	for _, pn := range panelNetworks {
		p := &panel{network: pn.network, title: pn.title}
		byKey := map[string]*category{}
		for _, c := range d.Cases(suite) {
			f := c.Factors
			if !spec.base(f) {
				continue
			}
			key, order, label := catOf(spec, f)
			cat := byKey[key]
			if cat == nil {
				cat = &category{key: key, order: order, label: label, values: make([]value, len(spec.series))}
				byKey[key] = cat
				p.cats = append(p.cats, cat)
			}
			quickCase := allQuick(d, suite, c.Case)
			for i, s := range spec.series {
				if !s.match(f) {
					continue
				}
				v := value{caseID: c.Case, quick: quickCase}
				if g := d.Get(suite, c.Case, broker, pn.network); g != nil && g.Reps > 0 {
					if s.metric == report.PubTput {
						v.measured = g.Pub
					} else {
						v.measured = g.Sub
					}
					v.hasMeasured = v.measured.Valid()
					v.reps = g.Reps
					v.quick = g.Quick
					for name := range g.Flags {
						v.flags = append(v.flags, name)
					}
				}
				// Published values are drawn only when the case's counts are
				// the paper's: --quick may reduce them.
				if pv, ok := report.LookupPaper(c.Paper, s.metric, pn.network); ok && !quickCase {
					v.paper, v.hasPaper = pv.Value(), true
				}
				if old := cat.values[i]; old.caseID == "" || v.drawsBefore(old) {
					cat.values[i] = v
				}
			}
		}
		for _, cat := range p.cats {
			for _, v := range cat.values {
				if v.hasMeasured {
					p.measured++
				}
				if v.hasPaper {
					p.published++
				}
				p.quick = p.quick || v.quick
			}
		}
		sort.SliceStable(p.cats, func(i, j int) bool { return p.cats[i].order < p.cats[j].order })
		out = append(out, p)
	}
	return out
}

func catOf(spec figureSpec, f scenario.Factors) (string, float64, string) {
	if spec.line {
		return fmt.Sprint(f.Publishers), float64(f.Publishers), fmt.Sprintf("%d×2", f.Publishers)
	}
	return spec.category(f)
}

// allQuick: every record of the case comes from --quick runs.
func allQuick(d *report.Dataset, suite, caseID string) bool {
	for _, g := range d.Groups {
		if g.Suite == suite && g.Case == caseID && !g.Quick {
			return false
		}
	}
	return true
}

// paperFigureJobs makes one job per suite x broker that has the figure's
// cases, and says why a figure is not drawn.
func paperFigureJobs(d *report.Dataset, spec figureSpec) ([]job, []string) {
	var jobs []job
	var skipped, partial []string
	for _, suite := range d.Suites {
		cats := map[string]bool{}
		for _, c := range d.Cases(suite) {
			if spec.base(c.Factors) {
				k, _, _ := catOf(spec, c.Factors)
				cats[k] = true
			}
		}
		if len(cats) == 0 {
			continue
		}
		if len(cats) < spec.minCats {
			partial = append(partial, fmt.Sprintf("figure %d, suite %s: only one %s among its cases, nothing to compare", spec.num, suite, spec.catName))
			continue
		}
		for _, b := range d.Brokers {
			panels := figureData(d, spec, suite, b)
			measured := 0
			for _, p := range panels {
				measured += p.measured
			}
			if measured == 0 {
				skipped = append(skipped, fmt.Sprintf("figure %d, suite %s, broker %s: no successful measurement of its cases", spec.num, suite, b))
				continue
			}
			jobs = append(jobs, paperFigureJob(spec, suite, b, panels))
		}
	}
	// A suite that merely shares a few cases with the figure is worth a
	// word only when no suite had the figure's cases.
	if len(jobs) == 0 && len(skipped) == 0 {
		skipped = append(skipped, fmt.Sprintf("figure %d (%s): no suite in the results has its cases (needs %s)", spec.num, spec.title, spec.needs))
		skipped = append(skipped, partial...)
	}
	return jobs, skipped
}

// finitePositive: drawable on a log axis.
func finitePositive(v float64) bool { return v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }
