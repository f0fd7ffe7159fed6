package report

import (
	"fmt"

	"pslab/internal/results"
)

// WirePerDelivery is what a record's case put on the link per delivered
// message, in each direction: the bytes the lab's router forwarded toward
// the broker (publishes, acknowledgements, pulls) and toward the clients
// (deliveries, publish confirmations), Ethernet frames with their IP and
// TCP headers and every retransmission, over the case's set-up, warm-up,
// window, drain and close (from the link's re-shaping with an unshaped
// set-up), divided by the distinct deliveries (counts.received). Up plus
// down is all the case's traffic per delivered message: over 802.11, what
// a protocol costs. ok is false without the link's counters (loopback, an
// external broker over the host network, an older record) or deliveries.
func WirePerDelivery(r *results.Record) (up, down float64, ok bool) {
	l := r.Network.Link
	if l == nil || l.Counters == nil || l.Error != "" || r.Result == nil || r.Result.Counts.Received <= 0 {
		return 0, 0, false
	}
	n := float64(r.Result.Counts.Received)
	return float64(l.ToBroker.TxBytes) / n, float64(l.ToClient.TxBytes) / n, true
}

// wireCell is "up/down" bytes per delivered message, means over the
// repetitions, or "–".
func wireCell(g *Group) string {
	if !g.WireUp.Valid() {
		return "–"
	}
	return fmt.Sprintf("%.0f/%.0f", g.WireUp.Mean, g.WireDown.Mean)
}

// hasWire: some group of the suite ("": any) has the link's counters.
func hasWire(d *Dataset, suite string) bool {
	for _, g := range d.Groups {
		if (suite == "" || g.Suite == suite) && g.WireUp.Valid() {
			return true
		}
	}
	return false
}
