package lab

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"pslab/internal/scenario"
	"pslab/netem"
)

// Quick phases over a shaped link. A publisher saturates behind its
// flow-control window: it sends the window at once, then one message per
// confirmation. Over the emulated 1 Mbit/s link the confirmations come back
// behind the deliveries of that first window, which with a fan-out take
// seconds to cross (1/50/1 with 100 B bodies: 625 sends, 31,250 deliveries,
// over 40 s). The quick phases (300 ms warm-up, 1 s window in the smoke
// and Gaddah & Kunz files) ended before that, so whole windows had no send
// in them (no-sends-in-window, `pub 0.0 msg/s`) and the delivery rate the
// warm-up checks was the first burst's, not the case's. A --quick case over
// a shaped link therefore gets a warm-up and a window of at least
// quickLinkBursts times the link time of that first window (linkBurst):
// the window then starts after the burst has crossed and is long enough
// for a publisher held at its start to be confirmed and send again.

// deliveryOverheadBytes is what a delivery costs on the link beyond its
// body, at least: the protocol's frame (a NATS MSG line with its subject,
// a STOMP MESSAGE frame's headers) and its share of TCP/IP headers.
const deliveryOverheadBytes = 64

// quickLinkBursts is how many first-window link times a quick warm-up and
// window over a shaped link last at least.
const quickLinkBursts = 2

// linkBurst is how long the shaped link needs to carry the deliveries of
// the first publish window of every publisher of c (the lab's default
// window, publishWindow, or the case's), lost packets sent again
// included; 0 on an unshaped link.
func linkBurst(c scenario.Case, prof netem.Profile) time.Duration {
	if !prof.Shaped() || prof.RateKbit <= 0 {
		return 0
	}
	nw := &network{profile: prof}
	sends := float64(nw.publishWindow(c, nil) * max(c.Publishers, 1))
	deliveries := sends * c.Factors.Counts().RExpected
	bytesPerS := prof.RateKbit * 1000 / 8 * (1 - min(prof.LossPct, 99)/100)
	s := deliveries * float64(c.Size+deliveryOverheadBytes) / bytesPerS
	return time.Duration(math.Ceil(s*10) / 10 * float64(time.Second)) // whole tenths
}

// caseOn is case c as it runs on network net (a profile name): the suite's
// per_network phases, and with --quick over a shaped link phases long
// enough to send (see linkBurst).
func (p Plan) caseOn(c scenario.Case, net string, quick bool) scenario.Case {
	c = p.Suite.ForNetwork(c, net)
	if !quick {
		return c
	}
	prof, err := netem.LoadProfile(net)
	if err != nil {
		return c
	}
	need := quickLinkBursts * linkBurst(c, prof)
	c.Warmup, c.Window = max(c.Warmup, need), max(c.Window, need)
	return c
}

// quickShapedNotes says which cases a --quick run lengthens over which
// shaped networks, and to what.
func (p Plan) quickShapedNotes(quick bool) []string {
	if !quick {
		return nil
	}
	var notes []string
	for _, net := range profileNames(p.Networks) {
		var longer []string
		for _, c := range p.Cases {
			q := p.caseOn(c, net, true)
			if q.Warmup != c.Warmup || q.Window != c.Window {
				longer = append(longer, fmt.Sprintf("%s %v/%v", c.ID, q.Warmup, q.Window))
			}
		}
		if len(longer) > 0 {
			sort.Strings(longer)
			notes = append(notes, fmt.Sprintf("--quick over %s: warm-up/window lengthened to %d times the link time of the publishers' first publish window, so that the window has sends in it: %s",
				net, quickLinkBursts, strings.Join(longer, ", ")))
		}
	}
	return notes
}
