package report

import (
	"fmt"
	"math"
)

// TLSCost is what TLS cost one group of records with tls: on: its
// handshakes (result.tls) and the same case without TLS beside it.
type TLSCost struct {
	Handshakes, Failed, Reconnects int
	// MeanMs is the mean handshake over all the group's first handshakes,
	// P50Ms the mean of the records' medians, MaxMs the largest.
	MeanMs, P50Ms, MaxMs float64
	Version, Cipher      string
	// Plain is the group of the same case, broker and network without
	// TLS (nil when the data has none).
	Plain *Group
}

// TLSCostOf summarises g's TLS blocks; ok is false when no record of g
// has one.
func (d *Dataset) TLSCostOf(g *Group) (c TLSCost, ok bool) {
	var sum, p50 float64
	n := 0
	for _, r := range g.Records {
		if r.Result == nil || r.Result.TLS == nil {
			continue
		}
		t := r.Result.TLS
		ok = true
		c.Handshakes += t.Connections
		c.Failed += t.Failed
		c.Reconnects += t.Reconnects
		if c.Version == "" {
			c.Version, c.Cipher = t.Version, t.Cipher
		}
		if h := t.HandshakeMs; h != nil {
			sum += h.Mean * float64(t.Connections)
			p50 += h.P50
			n++
			c.MaxMs = math.Max(c.MaxMs, h.Max)
		}
	}
	if c.Handshakes > 0 {
		c.MeanMs = sum / float64(c.Handshakes)
	}
	if n > 0 {
		c.P50Ms = p50 / float64(n)
	}
	plain := g.Factors
	plain.TLS = false
	for _, h := range d.Groups {
		if h.Suite == g.Suite && h.Broker == g.Broker && h.Network == g.Network && h.Quick == g.Quick && h.Factors == plain && !h.MixedFactors {
			c.Plain = h
			break
		}
	}
	return c, ok
}

// tlsCost prints, for the suite's groups with tls: on, the handshakes'
// cost and the case without TLS beside the case with it.
func (m *mdWriter) tlsCost(d *Dataset, suite string) {
	header := false
	for _, g := range d.Groups {
		if g.Suite != suite || g.Reps == 0 {
			continue
		}
		c, ok := d.TLSCostOf(g)
		if !ok {
			continue
		}
		if !header {
			m.p("### TLS")
			m.p("")
			m.p("Handshakes timed on the client from the TCP connection being up to the handshake being done (result.tls, docs/tls.md); the same case without TLS (case · sub msgs/s · latency ms · B/msg down the link) beside it.")
			m.p("")
			m.head("case", "broker", "network", "reps", "handshakes", "failed", "reconnects", "handshake ms mean / p50 / max", "negotiated",
				"without TLS", "sub msgs/s without → with", "latency ms without → with", "B/msg down without → with")
			header = true
		}
		plainID, sub, lat, down := "–", "– → "+FormatStat(g.Sub), "– → "+FormatStat(g.Lat), "– → "+downCell(g)
		if p := c.Plain; p != nil && p.Reps > 0 {
			plainID = p.Label()
			sub = FormatStat(p.Sub) + " → " + FormatStat(g.Sub)
			lat = FormatStat(p.Lat) + " → " + FormatStat(g.Lat)
			down = downCell(p) + " → " + downCell(g)
		}
		m.row(g.Label(), g.Broker, g.Network, fmt.Sprint(g.Reps), fmt.Sprint(c.Handshakes), fmt.Sprint(c.Failed), fmt.Sprint(c.Reconnects),
			fmt.Sprintf("%s / %s / %s", FormatNum(c.MeanMs), FormatNum(c.P50Ms), FormatNum(c.MaxMs)), c.Version+", "+c.Cipher,
			plainID, sub, lat, down)
	}
	if header {
		m.p("")
	}
}

func downCell(g *Group) string {
	if !g.WireDown.Valid() {
		return "–"
	}
	return fmt.Sprintf("%.0f", g.WireDown.Mean)
}
