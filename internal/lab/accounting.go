package lab

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"pslab/internal/load"
	"pslab/internal/results"
	"pslab/netem"
)

// linkBits is the emulated link's rate in bits/s, 0 when unshaped: it
// sizes how long the drain waits for a backlog to cross the link.
func (nw *network) linkBits() float64 {
	var r float64 // the slower shaped direction the messages cross
	for _, x := range []struct {
		p netem.Profile
		d netem.Direction
	}{{nw.profile, netem.ToBroker}, {nw.subscribersProfile(), netem.ToClient}} {
		if k := netem.NominalRateKbit(x.p, x.d); x.p.Shaped() && k > 0 && (r == 0 || k < r) {
			r = k
		}
	}
	return r * 1000 // RateKbit, a trace's mean, 802.11's airtime rate
}

// accountingFlags are the flags of a result's delivery accounting, drain
// and steady state: a backlog is flagged as such, never as loss.
func accountingFlags(res *load.Result) []results.Flag {
	var flags []results.Flag
	c, a := res.Counts, res.Accounting
	if a == nil { // a result of an older pslab: lost = expected - received
		if !res.DrainComplete {
			flags = append(flags, results.NewFlag(results.FlagDrainIncomplete, "%d of %d expected deliveries missing after the drain (lost may include backlog)", c.Lost, c.Expected))
		}
		return flags
	}
	if !res.DrainComplete {
		why := ""
		switch {
		case a.Drain.FlushCut && a.ToBrokerUnrouted && a.Held != nil && a.Held.Routed != nil:
			inDoubt := ""
			if a.DueInDoubt > 0 {
				inDoubt = fmt.Sprintf(" less %d due for sends in doubt, which may never arrive", a.DueInDoubt)
			}
			why = fmt.Sprintf("; the drain's bound cut the publishers' flush after %.1f s: the broker had put %d of the %d due deliveries on the case's queues, by its count (to broker the rest%s: %d deliveries, not lost)", a.Drain.FlushS, *a.Held.Routed, c.Expected, inDoubt, c.ToBroker)
		case a.Drain.FlushCut && a.ToBrokerError == "":
			why = fmt.Sprintf("; the drain's bound cut the publishers' flush after %.1f s: %d send(s) had not reached the broker yet, by its count (to broker %d deliveries, not lost)", a.Drain.FlushS, a.ToBrokerSends, c.ToBroker)
		case a.Drain.FlushCut:
			why = fmt.Sprintf("; the drain's bound cut the publishers' flush after %.1f s, so lost may include sends the broker never received (%s)", a.Drain.FlushS, a.ToBrokerError)
		}
		if a.Drain.Ended == load.DrainBound && c.Lost > 0 {
			why += "; deliveries were still arriving when the drain's bound ended it, so lost may include messages still on their way that held does not count (accounting.held.source says what it counts)"
		}
		if c.InDoubt > 0 && c.Lost > 0 {
			why += fmt.Sprintf("; %d send(s) in doubt (the broker had not confirmed them when a publisher's connection dropped, or answered them with an error), so lost may include sends the broker never received", c.InDoubt)
		}
		toBroker := ""
		if c.ToBroker > 0 {
			toBroker = fmt.Sprintf(", to broker %d", c.ToBroker)
		}
		flags = append(flags, results.NewFlag(results.FlagDrainIncomplete, "%d of %d due deliveries had not arrived when the drain ended (%s after %.1f s): backlog %d, in flight %d%s, lost %d%s",
			c.Expected-c.Received, c.Expected, a.Drain.Ended, a.Drain.S, c.Backlog, c.InFlight, toBroker, c.Lost, why))
	}
	if c.Backlog > 0 {
		if a.Held != nil && a.Held.InSockets > 0 {
			flags = append(flags, results.NewFlag(results.FlagBacklog, "%d deliveries still on their way when the drain ended (not lost): queued at the broker or, %d or more of them, in the socket buffers or on the link (by the broker's and the clients' counts)", c.Backlog, min(a.Held.InSockets, c.Backlog)))
		} else {
			flags = append(flags, results.NewFlag(results.FlagBacklog, "%d deliveries still queued at the broker when the drain ended (by its own count; not lost)", c.Backlog))
		}
	}
	if a.Held != nil && a.Held.ClosedByServer > 0 {
		flags = append(flags, results.NewFlag(results.FlagConnectionsLost, "the broker had closed %d subscriber connection(s) (%s) that had not connected again when the drain ended (their clients had not noticed yet, behind the link): what it had queued for them and they had not read is lost", a.Held.ClosedByServer, countsText(a.Held.ClosedReasons)))
	}
	if a.Held == nil && c.Lost > 0 {
		flags = append(flags, results.NewFlag(results.FlagLostUnverified, "%d may include backlog (%s)", c.Lost, a.HeldError))
	}
	if c.SentInWindow == 0 {
		flags = append(flags, results.NewFlag(results.FlagNoSendsInWindow, "the publishers sent nothing inside the window (flow control held them): publisher throughput and latency are not measured"))
	} else if c.DueInWindow > 0 && res.Latency.Count == 0 {
		flags = append(flags, results.NewFlag(results.FlagNoLatency, "none of the %d deliveries due for the window's messages arrived (see backlog and lost): latency is not measured", c.DueInWindow))
	}
	if !a.Steady.Levelled {
		flags = append(flags, results.NewFlag(results.FlagNotSteady, "%s", a.Steady.Why))
	}
	if a.SubExceedsPub {
		flags = append(flags, results.NewFlag(results.FlagSubExceedsPub, "the window delivered %.2fx what was due for what its publishers sent in it (a backlog from before the window)", a.SubOverPub))
	}
	return flags
}

// countsText lists counts by key, most first, as "key: n, key: n".
func countsText(m map[string]int) string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(m[b], m[a]), cmp.Compare(a, b)) })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
