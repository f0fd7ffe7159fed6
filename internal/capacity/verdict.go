package capacity

import (
	"fmt"
	"math"
	"strings"
	"time"

	"pslab/internal/load"
	"pslab/internal/results"
)

// Criteria decide whether a probe sustained its offered load.
type Criteria struct {
	// Tolerance is the share of the window's due deliveries that may be
	// missing at the end, or added to the backlog over the window, and of
	// the offered sends the publishers may fall short by (0.01).
	Tolerance float64
	// LatencyBound is the highest p99 latency (from the intended send
	// time) a sustained load may have, for the network of the probe.
	LatencyBound time.Duration
}

// DefaultTolerance is Criteria.Tolerance unless --tolerance says otherwise.
const DefaultTolerance = 0.01

// Check names (results.Check.Name).
const (
	CheckOffered  = "offered"
	CheckArrivals = "arrivals"
	CheckBacklog  = "backlog"
	CheckLost     = "lost"
	CheckLatency  = "latency"
)

// OfferedPerS is the record's offered load: its rate per publisher times
// its publishers (0 for a saturating run).
func OfferedPerS(r *results.Record) float64 {
	return r.Settings.Rate * float64(r.Factors.Publishers)
}

// Judge gives a probe's verdict on its record (a pure function of it,
// so a record's verdict can be checked later): the load was sustained
// when every check holds.
//
//   - offered: the publishers sent at least (1 − tolerance) of the
//     offered load in the window, less what a lag of the latency bound at
//     its end leaves unsent (the load was applied: an open-loop publisher
//     that falls behind its schedule, held by flow control or its CPU,
//     sends less, and its lag grows);
//   - arrivals: of the deliveries due for the window's messages
//     (replication included), at least (1 − tolerance) arrived, in the
//     window or the drain;
//   - backlog: the backlog (deliveries due less deliveries made, from the
//     per-second counts) grew over the window by at most tolerance of the
//     window's due deliveries (the least-squares slope over the window's
//     seconds, times the window);
//   - lost: nothing was lost, no publish failed, no delivery was bad;
//   - latency: the p99 latency of the window's messages, from their
//     intended send time, is within the network's bound.
func Judge(r *results.Record, c Criteria) results.Probe {
	p := results.Probe{OfferedPerS: OfferedPerS(r), RatePerPublisher: r.Settings.Rate,
		LatencyBoundMs: durMs(c.LatencyBound), Tolerance: c.Tolerance}
	res := r.Result
	if res == nil {
		p.Why = "not measured: " + r.Error
		return p
	}
	cnt := res.Counts
	w := r.Settings.WindowS
	if cnt.Sent > 0 {
		p.DuePerS = p.OfferedPerS * float64(cnt.Expected) / float64(cnt.Sent)
	}
	ok := 1 - c.Tolerance
	var checks []results.Check
	add := func(name string, pass bool, value, limit float64, detail string, a ...any) {
		checks = append(checks, results.Check{Name: name, OK: pass, Value: round4(value), Limit: round4(limit), Detail: fmt.Sprintf(detail, a...)})
	}
	want := p.OfferedPerS * w
	sentShare := share(float64(cnt.SentInWindow), want)
	// A publisher may end the window behind its schedule by up to the
	// latency bound: its sends not made yet would have been within it.
	lagOK := 1 - share(p.OfferedPerS*c.LatencyBound.Seconds(), want)
	add(CheckOffered, sentShare >= ok*lagOK, sentShare, ok*lagOK, "%d of %.0f offered sends in the %.0f s window (a lag of up to the latency bound at its end allowed)", cnt.SentInWindow, want, w)
	arrived := share(float64(res.Latency.Count), float64(cnt.DueInWindow))
	add(CheckArrivals, cnt.DueInWindow > 0 && arrived >= ok, arrived, ok, "%d of %d deliveries due for the window's messages arrived", res.Latency.Count, cnt.DueInWindow)
	growth, points := BacklogGrowth(res, w)
	g := share(growth, float64(cnt.DueInWindow))
	add(CheckBacklog, cnt.DueInWindow > 0 && g <= c.Tolerance, g, c.Tolerance, "the backlog grew by %.0f deliveries over the window (slope over %d seconds)", growth, points)
	bad := cnt.Lost + cnt.PublishErrors + cnt.DecodeErrors + cnt.Unexpected
	add(CheckLost, bad == 0, float64(bad), 0, "lost %d, publish errors %d, bad deliveries %d", cnt.Lost, cnt.PublishErrors, cnt.DecodeErrors+cnt.Unexpected)
	bound := durMs(c.LatencyBound)
	add(CheckLatency, res.Latency.Count > 0 && res.Latency.P99Ms <= bound, res.Latency.P99Ms, bound, "p99 %.3g ms (mean %.3g ms) against %.4g ms", res.Latency.P99Ms, res.Latency.MeanMs, bound)
	p.Checks = checks
	var failed []string
	for _, ch := range checks {
		if !ch.OK {
			failed = append(failed, ch.Name+": "+ch.Detail)
		}
	}
	p.Sustained = len(failed) == 0
	if p.Sustained {
		p.Why = "sustained"
	} else {
		p.Why = strings.Join(failed, "; ")
		p.Marginal = marginal(checks, c.Tolerance)
	}
	p.ClientSetPct, p.BrokerSetPct = cpuShares(r.Resources)
	p.LinkUsePct, p.LinkBytesPerM = linkUse(r)
	return p
}

// BacklogGrowth is how much the backlog of due deliveries grew over the
// window: the least-squares slope of the backlog at the window's whole
// seconds, times the window, and the number of seconds it rests on. The
// backlog at second t is the deliveries due for what was sent before t
// (the run's replication times the sends, by intended send time) less the
// deliveries made before t. With fewer than 3 seconds in the window it is
// the window's due deliveries less those it received.
func BacklogGrowth(res *load.Result, windowS float64) (float64, int) {
	cnt := res.Counts
	if cnt.Sent == 0 || windowS <= 0 {
		return 0, 0
	}
	repl := float64(cnt.Expected) / float64(cnt.Sent)
	from := int(math.Ceil(res.WarmupS))
	to := int(math.Floor(res.WarmupS + windowS))
	if to-from+1 < 3 {
		return float64(cnt.DueInWindow - cnt.ReceivedInWindow), 0
	}
	var pub, sub float64
	var xs, ys []float64
	for t := 0; t <= to; t++ {
		if t >= from {
			xs = append(xs, float64(t))
			ys = append(ys, repl*pub-sub)
		}
		if t < len(res.PubSeries) {
			pub += float64(res.PubSeries[t])
		}
		if t < len(res.SubSeries) {
			sub += float64(res.SubSeries[t])
		}
	}
	return slope(xs, ys) * windowS, len(xs)
}

// slope is the least-squares slope of ys against xs.
func slope(xs, ys []float64) float64 {
	n := float64(len(xs))
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx, my = mx/n, my/n
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if sxx == 0 {
		return 0
	}
	return sxy / sxx
}

// cpuShares are the clients' and the broker's CPU use within their own
// CPU sets (%), or as a share of the machine when they shared it (--cpus
// off); 0 when not measured.
func cpuShares(rs *results.Resources) (client, broker float64) {
	if rs == nil {
		return 0, 0
	}
	if rs.Isolated() {
		return round4(rs.ClientSetPct), round4(rs.BrokerSetPct)
	}
	if rs.Cores <= 0 {
		return 0, 0
	}
	return round4(rs.ClientCPUPct / float64(rs.Cores)), round4(rs.BrokerCPUPct / float64(rs.Cores))
}

// linkUse is the share (%) of an emulated link's rate the window's
// messages used, and the bytes the link carried per message over the
// case (its counters over the sends and deliveries of the case: frames,
// protocol, acknowledgements and retransmissions included). A half-duplex
// link shares one rate between the two directions; a full-duplex one is
// judged by its busier direction. 0 on an unshaped path or without
// counters.
func linkUse(r *results.Record) (pct, bytesPerMsg float64) {
	spec, link, res := r.Network.Spec, r.Network.Link, r.Result
	if spec == nil || !spec.Shaped() || link == nil || link.Counters == nil || res == nil {
		return 0, 0
	}
	c, cnt := link.Counters, res.Counts
	rate := spec.RateKbit * 1000 / 8 // bytes/s
	msgs := float64(cnt.Sent + cnt.Received)
	if msgs == 0 || rate <= 0 {
		return 0, 0
	}
	up, down := float64(c.ToBroker.TxBytes), float64(c.ToClient.TxBytes)
	bytesPerMsg = (up + down) / msgs
	if spec.Duplex == "half" {
		pct = (res.PubTput + res.SubTput) * bytesPerMsg / rate * 100
	} else {
		var u, d float64
		if cnt.Sent > 0 {
			u = res.PubTput * up / float64(cnt.Sent) / rate * 100
		}
		if cnt.Received > 0 {
			d = res.SubTput * down / float64(cnt.Received) / rate * 100
		}
		pct = math.Max(u, d)
	}
	return round4(pct), round4(bytesPerMsg)
}

func share(x, of float64) float64 {
	if of <= 0 {
		return 0
	}
	return x / of
}

func durMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// round4 keeps 4 significant digits (records stay readable).
func round4(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	e := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*e) / e
}

// MarginalFactor: a failing probe is marginal when it failed only on the
// backlog or arrivals check, by at most this many times the tolerance.
const MarginalFactor = 3

// marginal reports whether a failed probe failed only by a small margin
// on the backlog or arrivals check (results.Probe.Marginal).
func marginal(checks []results.Check, tol float64) bool {
	for _, c := range checks {
		if c.OK {
			continue
		}
		switch c.Name {
		case CheckBacklog:
			if c.Value > MarginalFactor*tol {
				return false
			}
		case CheckArrivals:
			if c.Value < 1-MarginalFactor*tol {
				return false
			}
		default:
			return false
		}
	}
	return true
}
