package capacity

import (
	"fmt"

	"pslab/internal/plot"
)

// HockeyCases are the hockey-stick figures of rs (internal/plot): per
// suite and case, one curve per broker × network with its fixed-load
// levels and the sustained probes of its counted searches.
func HockeyCases(rs []Result) []plot.HockeyCase {
	var out []plot.HockeyCase
	index := map[RowKey]int{}
	for _, r := range rs {
		k := RowKey{Suite: r.Suite, Case: r.Case, Quick: r.Quick}
		i, ok := index[k]
		if !ok {
			name := r.Suite + "-" + r.Case
			title := fmt.Sprintf("%s case %s: %s", r.Suite, r.Case, shortFactors(r.Factors))
			if r.Quick {
				name += "-quick"
				title += " (quick)"
			}
			out = append(out, plot.HockeyCase{Name: name, Title: title})
			i = len(out) - 1
			index[k] = i
		}
		cv := plot.HockeyCurve{Label: r.Broker + " " + r.Network, Capacity: r.Delivered, LowerBound: r.LowerBound}
		for _, s := range append([]Search{r.row.Pilot}, r.row.Searches...) {
			for _, p := range s.Probes {
				if p.Probe.Sustained && p.Result != nil && p.Result.Latency.Count > 0 {
					cv.Points = append(cv.Points, plot.HockeyPoint{Delivered: p.Result.SubTput, MeanMs: p.Result.Latency.MeanMs, P99Ms: p.Result.Latency.P99Ms})
				}
			}
		}
		for _, l := range r.Levels {
			if l.N > 0 {
				cv.Points = append(cv.Points, plot.HockeyPoint{Delivered: l.Delivered, MeanMs: l.MeanMs, P99Ms: l.P99Ms, Level: true})
			}
		}
		out[i].Curves = append(out[i].Curves, cv)
	}
	return out
}
