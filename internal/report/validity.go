package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"pslab/internal/results"
)

// Standard is the paper's precision standard: a 95 % confidence interval
// within ±5 % of the mean ("less than ±5% of the mean at a confidence
// level of 95%").
const Standard = 0.05

// Validity summarises one broker × network: how many rows meet the
// standard on each metric, the repetitions used, flags and loss.
type Validity struct {
	Broker         string         `json:"broker"`
	Network        string         `json:"network"`
	Rows           int            `json:"rows"`
	SubOK          int            `json:"sub_tput_ok"` // rows within ±5 % at 95 %
	LatOK          int            `json:"latency_ok"`
	PubOK          int            `json:"pub_tput_ok"`
	RepsMin        int            `json:"reps_min"`
	RepsMedian     float64        `json:"reps_median"`
	RepsMax        int            `json:"reps_max"`
	Records        int            `json:"records"`
	Flagged        map[string]int `json:"flagged"`      // records per flag name
	LostRecords    int            `json:"lost_records"` // records with lost > 0
	Lost           int64          `json:"lost"`
	BacklogRecords int            `json:"backlog_records"` // records flagged with a backlog count
	Backlog        int64          `json:"backlog"`
	// Misses: "suite case: reason" for every row that missed the standard.
	Misses []string `json:"misses"`
}

// relCI is a stat's CI half-width over its mean; NaN when not measurable.
func relCI(s Stat) float64 {
	if s.N < 2 || math.IsNaN(s.CI) || !(s.Mean > 0) {
		return math.NaN()
	}
	return s.CI / s.Mean
}

// missReason says why a stat misses the standard ("" when it meets it).
func missReason(name string, s Stat) string {
	switch {
	case s.N == 0:
		return name + " not measured"
	case s.N == 1:
		return name + " has 1 repetition (no CI)"
	case !(s.Mean > 0):
		return name + " mean is 0"
	}
	if r := relCI(s); r > Standard {
		return fmt.Sprintf("%s ±%.1f %% (n=%d)", name, 100*r, s.N)
	}
	return ""
}

// backlogOf reads a record flag "backlog: N ..." (messages still queued
// at the broker when the case ended); ok is false without one.
func backlogOf(flags []results.Flag) (int64, bool) {
	for _, f := range flags {
		if f.Name != "backlog" {
			continue
		}
		fields := strings.Fields(f.Detail)
		if len(fields) > 0 {
			if n, err := strconv.ParseInt(strings.Trim(fields[0], ",;"), 10, 64); err == nil {
				return n, true
			}
		}
		return 0, true
	}
	return 0, false
}

// ValidityTable computes the validity of every broker × network of full
// (not --quick) runs, in the dataset's order.
func ValidityTable(d *Dataset) []Validity {
	var out []Validity
	for _, b := range d.Brokers {
		for _, n := range d.Networks {
			v := Validity{Broker: b, Network: n, Flagged: map[string]int{}}
			var reps []int
			for _, g := range d.Groups {
				if g.Broker != b || g.Network != n || g.Quick {
					continue
				}
				v.Rows++
				reps = append(reps, g.Reps)
				var why []string
				for _, m := range []struct {
					name string
					s    Stat
					ok   *int
				}{{"sub throughput", g.Sub, &v.SubOK}, {"mean latency", g.Lat, &v.LatOK}, {"pub throughput", g.Pub, &v.PubOK}} {
					if r := missReason(m.name, m.s); r != "" {
						why = append(why, r)
					} else {
						*m.ok++
					}
				}
				if len(g.Failed) > 0 {
					why = append(why, fmt.Sprintf("%d failed repetition(s)", len(g.Failed)))
				}
				if len(why) > 0 {
					v.Misses = append(v.Misses, fmt.Sprintf("%s %s: %s", g.Suite, g.Case, strings.Join(why, "; ")))
				}
				for _, r := range g.Records {
					v.Records++
					for _, f := range r.Flags {
						v.Flagged[string(f.Name)]++
					}
					if r.Result.Counts.Lost > 0 {
						v.LostRecords++
						v.Lost += r.Result.Counts.Lost
					}
					if n, ok := backlogOf(r.Flags); ok {
						v.BacklogRecords++
						v.Backlog += n
					}
				}
			}
			if v.Rows == 0 {
				continue
			}
			sort.Ints(reps)
			v.RepsMin, v.RepsMax = reps[0], reps[len(reps)-1]
			if len(reps)%2 == 1 {
				v.RepsMedian = float64(reps[len(reps)/2])
			} else {
				v.RepsMedian = float64(reps[len(reps)/2-1]+reps[len(reps)/2]) / 2
			}
			out = append(out, v)
		}
	}
	return out
}

// validity writes the validity table and the rows that missed.
func (m *mdWriter) validity(d *Dataset) {
	vs := ValidityTable(d)
	if len(vs) == 0 {
		return
	}
	m.p("## Validity")
	m.p("")
	m.p("The paper's standard: a 95 %% confidence interval (Student t over the repetitions) within ±%.0f %% of the mean. Per broker × network: the rows (case × broker × network, full runs) that meet it on each metric, the repetitions used, the records carrying each flag, and the loss against the backlog (messages still queued at the broker when the case ended, from `backlog` flags: loss that a backlog explains is not loss).", 100*Standard)
	m.p("")
	m.head("broker", "network", "rows", "sub tput ±5 %", "mean latency ±5 %", "pub tput ±5 %", "reps min/median/max", "records", "flagged records", "records with loss (lost)", "records with backlog (queued)")
	pct := func(k, n int) string { return fmt.Sprintf("%d/%d (%.0f %%)", k, n, 100*float64(k)/float64(n)) }
	for _, v := range vs {
		var fl []string
		for _, name := range sortedKeys(v.Flagged) {
			fl = append(fl, fmt.Sprintf("%s %d", name, v.Flagged[name]))
		}
		flags := strings.Join(fl, ", ")
		if flags == "" {
			flags = "none"
		}
		m.row(v.Broker, v.Network, fmt.Sprint(v.Rows), pct(v.SubOK, v.Rows), pct(v.LatOK, v.Rows), pct(v.PubOK, v.Rows),
			fmt.Sprintf("%d/%g/%d", v.RepsMin, v.RepsMedian, v.RepsMax), fmt.Sprint(v.Records), flags,
			fmt.Sprintf("%d (%d)", v.LostRecords, v.Lost), fmt.Sprintf("%d (%d)", v.BacklogRecords, v.Backlog))
	}
	m.p("")
	for _, v := range vs {
		if len(v.Misses) == 0 {
			continue
		}
		m.p("Rows that missed the standard on %s / %s (%d): %s.", v.Broker, v.Network, len(v.Misses), strings.Join(v.Misses, "; "))
		m.p("")
	}
}

func sortedKeys(m map[string]int) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
