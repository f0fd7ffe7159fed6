package nats

import (
	"fmt"

	"pslab/internal/scenario"
)

// wireBytes is what one message of a case run under prefix puts on the
// link (Descriptor.WireBytes): the PUB frame from the publisher and the
// MSG frame to a subscriber (core NATS, sid 1), each the protocol line,
// the body and its CRLF, on the subject the driver publishes to (topic 0;
// a selector or filter case's first value).
func wireBytes(prefix string, f scenario.Factors) (toBroker, toClient int) {
	v := -1
	if f.Selector || f.Filtered() {
		v = 0
	}
	subj := natsSubjectFor(prefix, f, 0, v)
	pub := len(fmt.Sprintf("PUB %s %d\r\n", subj, f.Size)) + f.Size + 2
	msg := len(fmt.Sprintf("MSG %s %d %d\r\n", subj, 1, f.Size)) + f.Size + 2
	return pub, msg
}
