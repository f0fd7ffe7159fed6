package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"pslab/internal/results"
)

// One configuration per row (issue 31). A row's repetitions are pooled
// only when they were made by one pslab build with one broker
// configuration and one TCP congestion control (results.Identity): a row that mixes them is split into
// one row per identity, each labelled, and the report lists what was
// mixed. Records of the capacity modes (capacity-probe, fixed-load) are
// not repetitions of the paper's measurement: they are left out here and
// counted (pslab capacity tabulates them).

// Mixing is what Build left out or split.
type Mixing struct {
	// OtherModes counts the records left out by mode.
	OtherModes map[results.Mode]int
	// Rows are the rows split by identity.
	Rows []MixedRow
}

// MixedRow is a row whose records came from several builds or broker
// configurations, and the labels its parts got.
type MixedRow struct {
	Suite, Case, Broker, Network string
	Parts                        []MixedPart
}

// MixedPart is one identity's part of a mixed row.
type MixedPart struct {
	Label    string // the case id the part is shown under
	Identity results.Identity
	Records  int
}

// splitMixed returns the paper-mode records with the case id of each
// record of a mixed row labelled by its identity ("01 ⟨1 of 2⟩").
func splitMixed(recs []results.Record) ([]results.Record, Mixing) {
	m := Mixing{OtherModes: map[results.Mode]int{}}
	type key struct {
		suite, c, broker, network string
		quick                     bool
	}
	var paper []results.Record
	ids := map[key][]results.Identity{}
	counts := map[key]map[results.Identity]int{}
	var order []key
	for _, r := range recs {
		if mode := r.ModeOf(); mode != results.ModePaper {
			m.OtherModes[mode]++
			continue
		}
		paper = append(paper, r)
		k := key{r.Suite, r.CaseID, r.Broker, r.Network.Profile, r.Quick}
		id := r.IdentityOf()
		if counts[k] == nil {
			counts[k] = map[results.Identity]int{}
			order = append(order, k)
		}
		if counts[k][id] == 0 {
			ids[k] = append(ids[k], id)
		}
		counts[k][id]++
	}
	labels := map[key]map[results.Identity]string{}
	for _, k := range order {
		if len(ids[k]) < 2 {
			continue
		}
		sort.Slice(ids[k], func(i, j int) bool { return ids[k][i].String() < ids[k][j].String() })
		mr := MixedRow{Suite: k.suite, Case: k.c, Broker: k.broker, Network: k.network}
		labels[k] = map[results.Identity]string{}
		for i, id := range ids[k] {
			l := fmt.Sprintf("%s ⟨%d of %d⟩", k.c, i+1, len(ids[k]))
			labels[k][id] = l
			mr.Parts = append(mr.Parts, MixedPart{Label: l, Identity: id, Records: counts[k][id]})
		}
		m.Rows = append(m.Rows, mr)
	}
	if len(m.Rows) == 0 {
		return paper, m
	}
	out := make([]results.Record, len(paper))
	for i, r := range paper {
		if l, ok := labels[key{r.Suite, r.CaseID, r.Broker, r.Network.Profile, r.Quick}]; ok {
			r.CaseID = l[r.IdentityOf()]
		}
		out[i] = r
	}
	return out, m
}

// writeMixing is the report's section on what was left out or split.
func writeMixing(w io.Writer, m Mixing) {
	if len(m.OtherModes) > 0 {
		var parts []string
		for mode, n := range m.OtherModes {
			parts = append(parts, fmt.Sprintf("%d %s", n, mode))
		}
		sort.Strings(parts)
		fmt.Fprintf(w, "Records of the capacity modes left out (they are not repetitions of the paper's measurement; `pslab capacity table` tabulates them): %s.\n\n", strings.Join(parts, ", "))
	}
	if len(m.Rows) == 0 {
		return
	}
	fmt.Fprintf(w, "## Rows that mix builds or broker configurations\n\n%d row(s) hold records of more than one pslab build, broker configuration or TCP congestion control: each is split below into one row per identity, labelled ⟨i of n⟩, and nothing is pooled across them.\n\n", len(m.Rows))
	fmt.Fprintln(w, "| suite | case | broker | network | part | identity | records |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---:|")
	for _, r := range m.Rows {
		for _, p := range r.Parts {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %d |\n", r.Suite, r.Case, r.Broker, r.Network, p.Label, p.Identity, p.Records)
		}
	}
	fmt.Fprintln(w)
}
