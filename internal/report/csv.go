package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// CSVHeader are the columns of WriteCSV, one row per case x broker x
// network. Empty cells mean "not available" (e.g. the CI of one repetition).
var CSVHeader = []string{
	"suite", "case", "name", "broker", "network", "quick",
	"publishers", "subscribers", "topics", "model", "subscription", "delivery", "ack", "selector", "body", "size",
	"reps", "failed",
	"pub_tput", "pub_tput_ci95", "sub_tput", "sub_tput_ci95", "latency_ms", "latency_ms_ci95",
	"latency_p50_ms", "latency_p90_ms", "latency_p99_ms", "latency_p999_ms", "latency_max_ms",
	"expected", "received", "lost", "duplicated", "late",
	"paper_pub_tput", "paper_sub_tput", "paper_latency_ms", "paper_errata",
	"sub_ratio_vs_wireline", "paper_sub_ratio_vs_wireline",
	"flags", "note", "varied",
	"wire_up_bytes_per_delivery", "wire_down_bytes_per_delivery",
}

// WriteCSV writes one row per case x broker x network.
func WriteCSV(w io.Writer, d *Dataset) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	for _, g := range d.Groups {
		f := g.Factors
		row := []string{
			g.Suite, g.Case, g.Name, g.Broker, g.Network, strconv.FormatBool(g.Quick),
			itoa(f.Publishers), itoa(f.Subscribers), itoa(f.Topics), string(f.Model), string(f.Subscription),
			string(f.Delivery), string(f.Ack), strconv.FormatBool(f.Selector), string(f.Body), itoa(f.Size),
			itoa(g.Reps), itoa(len(g.Failed)),
		}
		for _, s := range []Stat{g.Pub, g.Sub, g.Lat} {
			row = append(row, num(s.Mean, s.Valid()), num(s.CI, s.N >= 2))
		}
		for _, s := range []Stat{g.P50, g.P90, g.P99, g.P999, g.Max} {
			row = append(row, num(s.Mean, s.Valid()))
		}
		row = append(row, i64(g.Expected), i64(g.Received), i64(g.Lost), i64(g.Dup), i64(g.Late))
		var errata []string
		for _, m := range []string{PubTput, SubTput, LatencyMs} {
			v, ok := LookupPaper(g.Paper, m, g.Network)
			row = append(row, num(v.Value(), ok))
			if ok && v.HasErrata {
				errata = append(errata, fmt.Sprintf("%s printed %s", m, FormatNum(v.Printed)))
			}
		}
		row = append(row, strings.Join(errata, "; "))
		row = append(row, subRatio(d, g), paperSubRatio(g))
		row = append(row, csvFlags(g), g.Note, strings.Join(g.Varied, " "))
		row = append(row, num(g.WireUp.Mean, g.WireUp.Valid()), num(g.WireDown.Mean, g.WireDown.Valid()))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func itoa(n int) string  { return strconv.Itoa(n) }
func i64(n int64) string { return strconv.FormatInt(n, 10) }
func num(v float64, ok bool) string {
	if !ok || !finite(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

func subRatio(d *Dataset, g *Group) string {
	if g.Network == Wireline {
		return ""
	}
	wl := d.Get(g.Suite, g.Case, g.Broker, Wireline)
	if wl == nil || !wl.Sub.Valid() || !g.Sub.Valid() {
		return ""
	}
	r := Ratio(g.Sub.Mean, wl.Sub.Mean)
	return num(r, true)
}

func paperSubRatio(g *Group) string {
	if g.Network == Wireline {
		return ""
	}
	a, ok1 := LookupPaper(g.Paper, SubTput, Wireline)
	b, ok2 := LookupPaper(g.Paper, SubTput, g.Network)
	if !ok1 || !ok2 {
		return ""
	}
	return num(Ratio(b.Value(), a.Value()), true)
}

func csvFlags(g *Group) string {
	var names []string
	for n, k := range g.Flags {
		names = append(names, fmt.Sprintf("%s:%d", n, k))
	}
	sort.Strings(names)
	return strings.Join(names, ";")
}
