package report

import (
	"fmt"
	"strings"

	"pslab/internal/audit"
	"pslab/internal/results"
)

// hasFaults reports whether any record of the suite ran a fault schedule.
func hasFaults(d *Dataset, suite string) bool {
	for _, g := range d.Groups {
		if g.Suite != suite {
			continue
		}
		for _, r := range g.Records {
			if len(r.Result.Faults) > 0 {
				return true
			}
		}
	}
	return false
}

// faultCell lists a record's faults with when they happened (seconds from
// the start of the warm-up, as on the per-second plots).
func faultCell(r *results.Record) string {
	var s []string
	for _, f := range r.Result.Faults {
		x := fmt.Sprintf("%s %.1f–%.1f s", f.Kind, f.StartS, f.EndS)
		if f.Error != "" {
			x += " (error: " + f.Error + ")"
		}
		s = append(s, x)
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, "; ")
}

// reconnectCell summarises reconnections, backlog and catch-up over a
// record's faults.
func reconnectCell(r *results.Record) (reconnect, backlog string) {
	var rc, bl []string
	for _, f := range r.Result.Faults {
		if f.Reconnected > 0 || f.NotReconnected > 0 {
			x := fmt.Sprintf("%d in ≤%.2f s", f.Reconnected, f.ReconnectS)
			if f.NotReconnected > 0 {
				x += fmt.Sprintf(", %d never", f.NotReconnected)
			}
			if f.Sessions != nil {
				x += " (" + f.Sessions.String() + ")"
			}
			rc = append(rc, x)
		}
		bl = append(bl, fmt.Sprintf("%d in %.2f s", f.Backlog, f.CatchupS))
	}
	if len(rc) == 0 {
		rc = []string{"–"}
	}
	return strings.Join(rc, "; "), strings.Join(bl, "; ")
}

func verdictCell(cs []audit.Check) string {
	n := map[audit.Verdict]int{}
	for _, c := range cs {
		n[c.Verdict]++
	}
	var s []string
	for _, v := range []audit.Verdict{audit.Fails, audit.Inconclusive, audit.Holds, audit.Observed} {
		if n[v] > 0 {
			x := fmt.Sprintf("%d %s", n[v], v)
			if v == audit.Fails {
				x = "**" + x + "**"
			}
			s = append(s, x)
		}
	}
	return strings.Join(s, ", ")
}

// audit writes the delivery audit of a suite with fault schedules: per
// repetition what was delivered, lost, duplicated, redelivered, reordered
// and late, the faults' windows, reconnections and backlog; then every
// promise with its verdict and what was observed.
func (m *mdWriter) audit(d *Dataset, suite string) {
	if !hasFaults(d, suite) {
		return
	}
	m.p("### Delivery audit")
	m.p("")
	m.p("Per repetition, from the per-publisher sequence numbers; the verdicts are evaluated from the recorded counts by this pslab (docs/faults.md), so they follow its rules even for records made earlier. Faults are given as applied and undone, in seconds from the start of the warm-up (the x axis of the per-second plots). Reconnect: clients that came back and the longest time from the fault's end until one was usable again; where the broker said whether it had kept a client's session (MQTT's CONNACK session present), how many sessions it resumed and how many were gone, per role. Backlog: deliveries after the fault ended of messages published before its end, and the time until the last of them.")
	m.p("")
	m.head("case", "broker", "network", "rep", "subscription/delivery/ack", "faults", "due", "delivered", "lost", "dup", "redelivered", "reordered", "late", "in doubt", "reconnect", "backlog", "verdicts")
	for _, g := range d.Groups {
		if g.Suite != suite {
			continue
		}
		for _, r := range g.Records {
			c := r.Result.Counts
			rc, bl := reconnectCell(r)
			m.row(g.Case, g.Broker, g.Network, fmt.Sprint(r.Rep),
				fmt.Sprintf("%s/%s/%s", g.Factors.Subscription, g.Factors.Delivery, g.Factors.Ack),
				faultCell(r), fmt.Sprint(c.Expected), fmt.Sprint(c.Received), fmt.Sprint(c.Lost), fmt.Sprint(c.Duplicated),
				fmt.Sprint(c.Redelivered), fmt.Sprint(c.Reordered), fmt.Sprint(c.Late), fmt.Sprint(c.InDoubt), rc, bl, verdictCell(audit.Evaluate(r.Factors, r.Result)))
		}
	}
	m.p("")
	m.p("#### Promised versus observed")
	m.p("")
	m.head("case", "broker", "network", "rep", "promise", "verdict", "observed")
	for _, g := range d.Groups {
		if g.Suite != suite {
			continue
		}
		for _, r := range g.Records {
			for _, ch := range audit.Evaluate(r.Factors, r.Result) {
				v := string(ch.Verdict)
				if ch.Verdict == audit.Fails {
					v = "**fails**"
				}
				m.row(g.Case, g.Broker, g.Network, fmt.Sprint(r.Rep), ch.Promise, v, ch.Observed)
			}
		}
	}
	m.p("")
}
