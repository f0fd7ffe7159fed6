package capacity

import (
	"pslab/internal/scenario"
	"pslab/netem"
)

// FrameOverhead approximates the protocol bytes one message frame adds to
// its body on the wire (a NATS PUB or MSG line, STOMP SEND or MESSAGE
// headers), as the drain's estimate does: the link bound's frame for a
// broker whose protocol says nothing else (Params.FrameOverhead; MQTT's
// PUBLISH header says its own, mqtt.PublishOverhead).
const FrameOverhead = 100

// LinkBound is the highest offered load (messages per second, all
// publishers) an emulated link can carry for a case: the link's usable
// bytes per second over the bytes one offered message puts on it, its
// publish frame towards the broker and its deliveries (the case's
// replication grade) towards the subscribers, each body plus overhead,
// the bytes its protocol's frame adds (FrameOverhead when not known; see
// Params.FrameOverhead). Usable bytes per second: the TCP goodput the profile's
// verification measured in each direction (its frames' and TCP's headers,
// acknowledgements and retransmissions taken off), else the profile's
// rate less a tenth. A half-duplex link shares one budget between the two
// directions; a full-duplex one is bound by its slower direction.
// Acknowledgement frames of the protocol are not counted: it is the
// search's starting point, and the link use of the probes (verdict.go)
// is what says whether a row was link-bound. 0 on an unshaped path.
func LinkBound(f scenario.Factors, overhead int, prof netem.Profile, v *netem.Verification) float64 {
	if !prof.Shaped() || prof.RateKbit <= 0 {
		return 0
	}
	up, down := prof.RateKbit*1000/8*0.9, prof.RateKbit*1000/8*0.9
	if v != nil && v.ToBroker.GoodputKbit > 0 && v.ToClient.GoodputKbit > 0 {
		up, down = v.ToBroker.GoodputKbit*1000/8, v.ToClient.GoodputKbit*1000/8
	}
	if overhead <= 0 {
		overhead = FrameOverhead
	}
	frame := float64(f.Size + overhead)
	repl := f.Counts().RExpected
	if prof.Duplex == netem.DuplexHalf {
		return (up + down) / 2 / (frame * (1 + repl))
	}
	b := up / frame
	if repl > 0 {
		b = min(b, down/(frame*repl))
	}
	return b
}
