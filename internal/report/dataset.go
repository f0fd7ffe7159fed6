package report

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"pslab/internal/record"
	"pslab/internal/results"
	"pslab/internal/scenario"
)

// Stat is a mean over repetitions with its 95 % confidence half-width.
// CI is NaN when N < 2 (one repetition says nothing about spread); Mean is
// NaN when N == 0.
type Stat struct {
	Mean, CI float64
	N        int
}

// Valid reports whether the stat has at least one value.
func (s Stat) Valid() bool { return s.N > 0 && !math.IsNaN(s.Mean) }

func statOf(xs []float64) Stat { return statUnder(nil, xs) }

// statUnder is the stat of xs with its interval under a sequential rule
// (nil: the plain 95 % interval; see results.Stopping).
func statUnder(rule *results.Stopping, xs []float64) Stat {
	m, ci := rule.CIOf(xs)
	return Stat{Mean: m, CI: ci, N: len(xs)}
}

// GroupKey identifies the repetitions that are aggregated together.
type GroupKey struct {
	Suite   string `json:"suite"`
	Case    string `json:"case"`
	Broker  string `json:"broker"`
	Network string `json:"network"` // profile name, e.g. "wireline", "wifi-paper"
	Quick   bool   `json:"quick"`   // records of --quick runs are never pooled with full ones
}

// RunError is one failed repetition.
type RunError struct {
	Rep   int    `json:"rep"`
	RunID string `json:"run_id"`
	Error string `json:"error"`
}

// Group aggregates the repetitions of one case x broker x network.
type Group struct {
	GroupKey
	Name    string
	Factors scenario.Factors
	// MixedFactors: records of this case id disagree on factors (e.g. the
	// scenario file changed between runs); Factors are the first record's.
	MixedFactors bool
	Paper        map[string]float64
	Note         string
	// Varied: the values a sweep gave the case ("key=value", in the
	// sweep's order; the first record's), empty for a case not from one.
	Varied []string

	Reps   int // successful repetitions
	Failed []RunError
	// Stopping: the row was repeated to a CI target (paper mode's `ci:`)
	// and every interval below is corrected for the repeated looks
	// (results.Stopping; the records' widest rule when they differ); nil:
	// plain 95 % intervals.
	Stopping *results.Stopping

	Pub, Sub, Lat            Stat // msgs/s, msgs/s, mean latency ms
	P50, P90, P99, P999, Max Stat // latency percentiles (ms), mean over reps
	// WireUp, WireDown: bytes on the link per delivered message toward the
	// broker and toward the clients (WirePerDelivery), over the
	// repetitions with the link's counters.
	WireUp, WireDown   Stat
	Lost, Dup, Late    int64
	Expected, Received int64
	// Backlog is what the brokers still held when the drains ended (not
	// lost), ToBroker the deliveries due for sends still on their way to
	// the broker (not lost); LostUnverified counts records whose lost may
	// include backlog.
	Backlog        int64
	ToBroker       int64
	LostUnverified int

	// Flags counts records per flag name (the text before the first ':');
	// FlagText keeps the first full text of each.
	Flags    map[string]int
	FlagText map[string]string

	// Records are the successful repetitions, in input order.
	Records []*results.Record
}

// Dataset is every record aggregated by case x broker x network.
type Dataset struct {
	Groups   []*Group // ordered by suite (first seen), case id, broker, network
	Suites   []string // in order of first appearance
	Brokers  []string // sorted
	Networks []string // wireline first, then wifi-paper, then others sorted
	Records  int
	Failed   int
	Quick    int // records from --quick runs
	RunIDs   []string
	index    map[GroupKey]*Group

	// Interrupted counts records of interrupted case runs: left out, they
	// are neither results nor failed repetitions.
	Interrupted int
	// Mixing: records of other modes left out, rows split by build and
	// broker configuration (mixed.go).
	Mixing Mixing

	// Caveats are the brokers' notes on what their records mean (their
	// descriptors' Caveats, set by the caller): the report prints those
	// that concern some record (CaveatTexts).
	Caveats []record.Caveat

	// Partial says how the run the records belong to stopped when it has
	// not finished (set by the caller from the run's parts.log); "" for a
	// finished run. Every format opens with it.
	Partial string
	// CapacityClaims are the claims on capacity and on latency at equal
	// offered load, evaluated on the capacity bundles among the inputs
	// (report/claims.CheckCapacity); nil when there are none.
	CapacityClaims *ClaimsCheck

	all []*results.Record // every record, in input order
}

// Build aggregates records. It does no I/O.
func Build(recs []results.Record) *Dataset {
	d := &Dataset{index: map[GroupKey]*Group{}}
	recs, d.Mixing = splitMixed(recs)
	type acc struct{ pub, sub, lat, p50, p90, p99, p999, max, up, down []float64 }
	accs := map[*Group]*acc{}
	seenSuite, seenBroker, seenNet, seenRun := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	for i := range recs {
		r := &recs[i]
		d.all = append(d.all, r)
		d.Records++
		if r.Quick {
			d.Quick++
		}
		if !seenSuite[r.Suite] {
			seenSuite[r.Suite] = true
			d.Suites = append(d.Suites, r.Suite)
		}
		if !seenBroker[r.Broker] {
			seenBroker[r.Broker] = true
			d.Brokers = append(d.Brokers, r.Broker)
		}
		if !seenNet[r.Network.Profile] {
			seenNet[r.Network.Profile] = true
			d.Networks = append(d.Networks, r.Network.Profile)
		}
		if r.RunID != "" && !seenRun[r.RunID] {
			seenRun[r.RunID] = true
			d.RunIDs = append(d.RunIDs, r.RunID)
		}
		k := GroupKey{Suite: r.Suite, Case: r.CaseID, Broker: r.Broker, Network: r.Network.Profile, Quick: r.Quick}
		g := d.index[k]
		if g == nil {
			g = &Group{GroupKey: k, Name: r.Name, Factors: r.Factors, Note: r.Note, Varied: r.Varied,
				Flags: map[string]int{}, FlagText: map[string]string{}}
			d.index[k] = g
			d.Groups = append(d.Groups, g)
			accs[g] = &acc{}
		} else if g.Factors != r.Factors {
			g.MixedFactors = true
		}
		if g.Paper == nil && len(r.Paper) > 0 {
			g.Paper = r.Paper
		}
		if g.Note == "" {
			g.Note = r.Note
		}
		if r.Interrupted() {
			d.Interrupted++
			continue
		}
		if r.Error != "" || r.Result == nil {
			d.Failed++
			msg := r.Error
			if msg == "" {
				msg = "no result in the record"
			}
			g.Failed = append(g.Failed, RunError{Rep: r.Rep, RunID: r.RunID, Error: msg})
			continue
		}
		res := r.Result
		a := accs[g]
		if st := r.Settings.Stopping; st != nil && (g.Stopping == nil || st.Looks > g.Stopping.Looks) {
			g.Stopping = st
		}
		g.Reps++
		g.Records = append(g.Records, r)
		a.pub = append(a.pub, res.PubTput)
		a.sub = append(a.sub, res.SubTput)
		if up, down, ok := WirePerDelivery(r); ok {
			a.up, a.down = append(a.up, up), append(a.down, down)
		}
		l := res.Latency
		if l.Count > 0 {
			a.lat = append(a.lat, l.MeanMs)
			a.p50 = append(a.p50, l.P50Ms)
			a.p90 = append(a.p90, l.P90Ms)
			a.p99 = append(a.p99, l.P99Ms)
			a.p999 = append(a.p999, l.P999Ms)
			a.max = append(a.max, l.MaxMs)
		}
		c := res.Counts
		g.Lost += c.Lost
		g.Backlog += c.Backlog
		g.ToBroker += c.ToBroker
		if lostUnverified(r) {
			g.LostUnverified++
		}
		g.Dup += c.Duplicated
		g.Late += c.Late
		g.Expected += c.Expected
		g.Received += c.Received
		for _, f := range r.Flags {
			name := string(f.Name)
			g.Flags[name]++
			if _, ok := g.FlagText[name]; !ok {
				g.FlagText[name] = f.String()
			}
		}
	}
	for g, a := range accs {
		st := func(xs []float64) Stat { return statUnder(g.Stopping, xs) }
		g.Pub, g.Sub, g.Lat = st(a.pub), st(a.sub), st(a.lat)
		g.P50, g.P90, g.P99, g.P999, g.Max = st(a.p50), st(a.p90), st(a.p99), st(a.p999), st(a.max)
		g.WireUp, g.WireDown = st(a.up), st(a.down)
	}
	sort.Strings(d.Brokers)
	sort.Strings(d.RunIDs)
	sortNetworks(d.Networks)
	suiteOrder := map[string]int{}
	for i, s := range d.Suites {
		suiteOrder[s] = i
	}
	netOrder := map[string]int{}
	for i, n := range d.Networks {
		netOrder[n] = i
	}
	sort.SliceStable(d.Groups, func(i, j int) bool {
		a, b := d.Groups[i], d.Groups[j]
		switch {
		case a.Suite != b.Suite:
			return suiteOrder[a.Suite] < suiteOrder[b.Suite]
		case a.Case != b.Case:
			return CaseLess(a.Case, b.Case)
		case a.Broker != b.Broker:
			return a.Broker < b.Broker
		case a.Network != b.Network:
			return netOrder[a.Network] < netOrder[b.Network]
		}
		return !a.Quick && b.Quick
	})
	return d
}

// Get returns the group of a case on a broker and network, preferring full
// runs over --quick ones; nil when there is none.
func (d *Dataset) Get(suite, caseID, broker, network string) *Group {
	k := GroupKey{Suite: suite, Case: caseID, Broker: broker, Network: network}
	if g := d.index[k]; g != nil {
		return g
	}
	k.Quick = true
	return d.index[k]
}

// Cases lists the case ids of a suite in order, with one representative
// group each (for name, factors, paper values and note).
func (d *Dataset) Cases(suite string) []*Group {
	var out []*Group
	seen := map[string]bool{}
	for _, g := range d.Groups {
		if g.Suite != suite || seen[g.Case] {
			continue
		}
		seen[g.Case] = true
		out = append(out, g)
	}
	return out
}

// CaseLess orders case ids numerically when both are numbers ("2" < "10"),
// otherwise as strings.
func CaseLess(a, b string) bool {
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	if errA == nil && errB == nil && x != y {
		return x < y
	}
	return a < b
}

// sortNetworks puts the paper's two networks first.
func sortNetworks(ns []string) {
	rank := func(n string) int {
		switch n {
		case Wireline:
			return 0
		case Wireless:
			return 1
		}
		return 2
	}
	sort.SliceStable(ns, func(i, j int) bool {
		if rank(ns[i]) != rank(ns[j]) {
			return rank(ns[i]) < rank(ns[j])
		}
		return ns[i] < ns[j]
	})
}

// Samples are a group's per-repetition values, the input of every test
// on repetitions (claims, comparisons).
type Samples struct {
	Pub, Sub []float64 // msgs/s, per record
	Lat      []float64 // mean latency (ms) of the records with deliveries
	// SubPub and PubSub: sub/pub and pub/sub throughput of each record.
	SubPub, PubSub []float64
	// Late: the share of a record's deliveries that arrived after the
	// window (records with deliveries).
	Late []float64
	// Deliveries received in each record's window.
	Deliveries []int64
	// Mechanism: what the factors meant on the broker (the first record's).
	Mechanism string
}

// Samples collects the group's per-repetition values.
func (g *Group) Samples() *Samples {
	s := &Samples{}
	for _, r := range g.Records {
		res := r.Result
		if s.Mechanism == "" {
			s.Mechanism = r.Mechanism
		}
		s.Pub = append(s.Pub, res.PubTput)
		s.Sub = append(s.Sub, res.SubTput)
		if res.Latency.Count > 0 {
			s.Lat = append(s.Lat, res.Latency.MeanMs)
		}
		s.SubPub = append(s.SubPub, res.SubTput/res.PubTput)
		s.PubSub = append(s.PubSub, res.PubTput/res.SubTput)
		c := res.Counts
		if c.Received > 0 {
			s.Late = append(s.Late, float64(c.Late)/float64(c.Received))
		}
		s.Deliveries = append(s.Deliveries, c.ReceivedInWindow)
	}
	return s
}

// Label is the group's case id, with the values a sweep gave it:
// "03 size=2048 subscription=durable".
func (g *Group) Label() string {
	if len(g.Varied) == 0 {
		return g.Case
	}
	return g.Case + " " + strings.Join(g.Varied, " ")
}

// VariedValue is the value a sweep gave the group's case for key.
func (g *Group) VariedValue(key string) (string, bool) {
	for _, kv := range g.Varied {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// VariedKeys are the keys a suite's sweep varied, in the sweep's order.
func (d *Dataset) VariedKeys(suite string) []string {
	var keys []string
	seen := map[string]bool{}
	for _, g := range d.Groups {
		if g.Suite != suite {
			continue
		}
		for _, kv := range g.Varied {
			k, _, _ := strings.Cut(kv, "=")
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// CaveatTexts are the texts of the brokers' caveats (Dataset.Caveats)
// that concern some record, each once, in the caveats' order.
func CaveatTexts(d *Dataset) []string {
	var out []string
	for _, c := range d.Caveats {
	groups:
		for _, g := range d.Groups {
			for _, r := range g.Records {
				if c.Applies(g.Broker, r.Mechanism) {
					out = append(out, c.Text)
					break groups
				}
			}
		}
	}
	return out
}
