package report

import (
	"encoding/json"
	"io"
	"math"
	"sort"
	"strconv"
)

// DocSchema names the layout of the JSON report (docs/report.md, "The
// JSON report"); a change that removes or renames a field bumps it.
const DocSchema = "pslab-report/1"

// Doc is the report as data: what `pslab report --format json` writes and
// what the HTML page shows. Every field is documented in docs/report.md.
type Doc struct {
	Schema      string     `json:"schema"`
	Partial     string     `json:"partial,omitempty"` // how an unfinished run stopped (parts.log); absent when it finished
	Sources     []string   `json:"sources"`
	Records     int        `json:"records"`
	Failed      int        `json:"failed"`
	Interrupted int        `json:"interrupted"`
	Quick       int        `json:"quick"`
	Suites      []string   `json:"suites"`
	Brokers     []string   `json:"brokers"`
	Networks    []string   `json:"networks"`
	RunIDs      []string   `json:"run_ids"`
	Provenance  Provenance `json:"provenance"`
	Validity    []Validity `json:"validity"`
	Claims      DocClaims  `json:"claims"`
	// CapacityClaims: the claims on capacity and on latency at equal
	// offered load, when the inputs hold capacity bundles.
	CapacityClaims *DocClaims    `json:"capacity_claims,omitempty"`
	Rows           []DocRow      `json:"rows"`
	Flags          []FlagSummary `json:"flags"`
}

// Num is a number that is null in JSON when it is not finite (a mean
// without data, a CI of one repetition).
type Num float64

// MarshalJSON writes null for NaN and infinities.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return []byte(strconv.FormatFloat(f, 'g', -1, 64)), nil
}

// DocStat is a Stat in JSON: mean over repetitions, 95 % CI half-width
// (null with fewer than two), and the repetitions.
type DocStat struct {
	Mean Num `json:"mean"`
	CI95 Num `json:"ci95"`
	N    int `json:"n"`
}

func docStat(s Stat) DocStat {
	if s.N == 0 {
		return DocStat{Mean: Num(math.NaN()), CI95: Num(math.NaN())}
	}
	return DocStat{Mean: Num(s.Mean), CI95: Num(s.CI), N: s.N}
}

// DocRow is one case × broker × network.
type DocRow struct {
	Suite   string     `json:"suite"`
	Case    string     `json:"case"`
	Label   string     `json:"label"`
	Varied  []string   `json:"varied,omitempty"`
	Name    string     `json:"name"`
	Broker  string     `json:"broker"`
	Network string     `json:"network"`
	Quick   bool       `json:"quick"`
	Factors string     `json:"factors"`
	Mixed   bool       `json:"mixed_factors,omitempty"`
	Reps    int        `json:"reps"`
	Failed  []RunError `json:"failed,omitempty"`
	// CIMethod: how the row's intervals are computed when it was repeated
	// to a CI target ("bonferroni-looks", at CILevel each); absent: plain
	// 95 % Student t intervals.
	CIMethod string         `json:"ci_method,omitempty"`
	CILevel  float64        `json:"ci_level,omitempty"`
	Pub      DocStat        `json:"pub_tput"`
	Sub      DocStat        `json:"sub_tput"`
	Lat      DocStat        `json:"latency_ms"`
	P50      DocStat        `json:"latency_p50_ms"`
	P90      DocStat        `json:"latency_p90_ms"`
	P99      DocStat        `json:"latency_p99_ms"`
	P999     DocStat        `json:"latency_p999_ms"`
	Max      DocStat        `json:"latency_max_ms"`
	WireUp   DocStat        `json:"wire_up_bytes_per_delivery"`
	WireDown DocStat        `json:"wire_down_bytes_per_delivery"`
	Counts   DocCounts      `json:"counts"`
	Paper    *DocPaper      `json:"paper,omitempty"`
	Ratio    *DocRatio      `json:"vs_wireline,omitempty"`
	Flags    map[string]int `json:"flags"`
	Note     string         `json:"note,omitempty"`
}

// DocCounts are a row's delivery counts, summed over its repetitions.
type DocCounts struct {
	Expected       int64 `json:"expected"`
	Received       int64 `json:"received"`
	Lost           int64 `json:"lost"`
	LostUnverified int   `json:"lost_unverified_records"`
	Backlog        int64 `json:"backlog"`
	ToBroker       int64 `json:"to_broker"`
	Duplicated     int64 `json:"duplicated"`
	Late           int64 `json:"late"`
}

// DocPaper are the published values of a row's case on its network (the
// corrected reading where an erratum gives one), and the errata.
type DocPaper struct {
	Pub    Num      `json:"pub_tput"`
	Sub    Num      `json:"sub_tput"`
	Lat    Num      `json:"latency_ms"`
	Errata []string `json:"errata,omitempty"`
}

// DocRatio is a row's mean over the same case's wireline mean, measured
// and published.
type DocRatio struct {
	Sub      Num `json:"sub_tput"`
	PaperSub Num `json:"paper_sub_tput"`
}

// DocClaims is the claims check in JSON.
type DocClaims struct {
	Tolerance   float64    `json:"tolerance"`
	Alpha       float64    `json:"alpha"`
	PaperValues bool       `json:"paper_values"`
	Notes       []string   `json:"notes,omitempty"`
	Claims      []DocClaim `json:"claims"`
	Unmeasured  []string   `json:"not_measurable,omitempty"`
	// Brokers are the sources of the claims (capacity claims: the
	// bundles' brokers).
	Brokers []string `json:"brokers,omitempty"`
	// Anchor prefixes each claim's id in the page's anchors.
	Anchor string `json:"-"`
	// EqualLoad: offered loads within this fraction count as equal.
	EqualLoad float64 `json:"equal_load_tolerance,omitempty"`
}

// DocClaim is one claim with its outcome per source ("paper" and each
// broker).
type DocClaim struct {
	ID        string                `json:"id"`
	Statement string                `json:"statement"`
	Source    string                `json:"source"`
	Rule      string                `json:"rule"`
	Needs     string                `json:"needs"`
	Outcomes  map[string]DocOutcome `json:"outcomes"`
}

// DocOutcome is a claim on one source.
type DocOutcome struct {
	Verdict Verdict   `json:"verdict"`
	Summary string    `json:"summary"`
	Support int       `json:"support"`
	Against int       `json:"against"`
	Total   int       `json:"total"`
	Reason  string    `json:"reason,omitempty"`
	Flagged int       `json:"flagged"`
	Quick   bool      `json:"quick"`
	Items   []DocItem `json:"items"`
	Skipped []string  `json:"skipped,omitempty"`
}

// DocItem is one comparison behind a claim.
type DocItem struct {
	Key      string      `json:"key"`
	Label    string      `json:"label"`
	Value    Num         `json:"value"`
	Text     string      `json:"text"`
	Supports bool        `json:"supports"`
	Test     TestVerdict `json:"test,omitempty"`
	P        Num         `json:"p"`
	Evidence string      `json:"evidence,omitempty"`
	Flags    []string    `json:"flags,omitempty"`
}

// BuildDoc puts the dataset, its validity, provenance, flags and claims
// check into one document. sources are the paths the records came from.
func BuildDoc(d *Dataset, check ClaimsCheck, sources []string) Doc {
	doc := Doc{Schema: DocSchema, Partial: d.Partial, Sources: nonNil(sources), Records: d.Records, Failed: d.Failed,
		Interrupted: d.Interrupted, Quick: d.Quick, Suites: nonNil(d.Suites), Brokers: nonNil(d.Brokers),
		Networks: nonNil(d.Networks), RunIDs: nonNil(d.RunIDs), Provenance: ProvenanceOf(d),
		Validity: ValidityTable(d), Flags: FlagsOf(d, "")}
	if doc.Validity == nil {
		doc.Validity = []Validity{}
	}
	if doc.Flags == nil {
		doc.Flags = []FlagSummary{}
	}
	doc.Claims = docClaims(d, check)
	if d.CapacityClaims != nil {
		cc := docClaims(d, *d.CapacityClaims)
		doc.CapacityClaims = &cc
	}
	for _, g := range d.Groups {
		doc.Rows = append(doc.Rows, docRow(d, g))
	}
	if doc.Rows == nil {
		doc.Rows = []DocRow{}
	}
	return doc
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

func docRow(d *Dataset, g *Group) DocRow {
	r := DocRow{Suite: g.Suite, Case: g.Case, Label: g.Label(), Varied: g.Varied, Name: g.Name, Broker: g.Broker, Network: g.Network, Quick: g.Quick,
		Factors: g.Factors.String(), Mixed: g.MixedFactors, Reps: g.Reps, Failed: g.Failed,
		Pub: docStat(g.Pub), Sub: docStat(g.Sub), Lat: docStat(g.Lat), P50: docStat(g.P50), P90: docStat(g.P90),
		P99: docStat(g.P99), P999: docStat(g.P999), Max: docStat(g.Max), WireUp: docStat(g.WireUp), WireDown: docStat(g.WireDown),
		Counts: DocCounts{Expected: g.Expected, Received: g.Received, Lost: g.Lost, LostUnverified: g.LostUnverified,
			Backlog: g.Backlog, ToBroker: g.ToBroker, Duplicated: g.Dup, Late: g.Late},
		Flags: g.Flags, Note: g.Note}
	if st := g.Stopping; st != nil {
		r.CIMethod, r.CILevel = st.Method, st.Level
	}
	if r.Flags == nil {
		r.Flags = map[string]int{}
	}
	var p DocPaper
	has := false
	for _, m := range []struct {
		metric string
		dst    *Num
	}{{PubTput, &p.Pub}, {SubTput, &p.Sub}, {LatencyMs, &p.Lat}} {
		*m.dst = Num(math.NaN())
		if v, ok := LookupPaper(g.Paper, m.metric, g.Network); ok {
			*m.dst, has = Num(v.Value()), true
			if v.HasErrata {
				p.Errata = append(p.Errata, m.metric+" printed "+asPrinted(v.Printed))
			}
		}
	}
	if has {
		r.Paper = &p
	}
	if g.Network != Wireline {
		ratio := DocRatio{Sub: Num(math.NaN()), PaperSub: Num(math.NaN())}
		if wl := d.Get(g.Suite, g.Case, g.Broker, Wireline); wl != nil && wl.Sub.Valid() && g.Sub.Valid() {
			ratio.Sub = Num(Ratio(g.Sub.Mean, wl.Sub.Mean))
		}
		a, ok1 := LookupPaper(g.Paper, SubTput, Wireline)
		b, ok2 := LookupPaper(g.Paper, SubTput, g.Network)
		if ok1 && ok2 {
			ratio.PaperSub = Num(Ratio(b.Value(), a.Value()))
		}
		r.Ratio = &ratio
	}
	return r
}

func docClaims(d *Dataset, check ClaimsCheck) DocClaims {
	dc := DocClaims{Tolerance: check.Tolerance, Alpha: check.Alpha, PaperValues: check.PaperValues,
		Notes: check.Notes, Unmeasured: check.Unmeasured(), Claims: []DocClaim{}, Brokers: check.Brokers,
		Anchor: check.AnchorOf(""), EqualLoad: check.EqualLoad}
	sources := check.Sources(check.BrokersOf(d))
	for _, c := range check.Shown() {
		x := DocClaim{ID: c.ID, Statement: c.Statement, Source: c.Source, Rule: c.Rule, Needs: c.Needs, Outcomes: map[string]DocOutcome{}}
		for _, s := range sources {
			o := c.Outcome(s)
			do := DocOutcome{Verdict: o.Verdict, Summary: o.Summary(), Support: o.Support, Against: o.Against, Total: o.Total,
				Reason: o.Reason, Flagged: o.Flagged, Quick: o.Quick, Skipped: o.Skipped, Items: []DocItem{}}
			for _, it := range o.Items {
				do.Items = append(do.Items, DocItem{Key: it.Key, Label: it.Label, Value: Num(it.Value), Text: it.Text,
					Supports: it.Supports, Test: it.Test, P: Num(it.P), Evidence: it.Evidence, Flags: it.Flags})
			}
			if o.Items == nil && o.Verdict != NotMeasurable {
				do.Items = []DocItem{}
			}
			x.Outcomes[s] = do
		}
		dc.Claims = append(dc.Claims, x)
	}
	return dc
}

// WriteJSON writes the document, indented.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// sortedCounts turns value counts into a list, most records first.
func sortedCounts(m map[string]int) []Count {
	out := make([]Count, 0, len(m))
	for v, n := range m {
		out = append(out, Count{Value: v, Records: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Records != out[j].Records {
			return out[i].Records > out[j].Records
		}
		return out[i].Value < out[j].Value
	})
	return out
}
