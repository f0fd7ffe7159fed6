package driver

// Flow control of publishers on an unshaped path (loopback, wireline). The
// window is counted in messages: at saturation a message waits behind the
// window, so latency is about window / throughput; a window counted in body
// bytes held 655 messages at 100 B and 12 at 5 KB and made large bodies look
// faster. The byte guards below only keep a case from handing a broker more
// memory than it copes with (large bodies, hundreds of publishers); within
// the papers' sizes (up to 5 KB) and a few publishers they never bind. On a
// shaped link the budget is link time instead (lab: half a second of the
// link's rate, WindowFor), so there the link, not the window, sets latency.
// docs/design.md (Measurement decisions: Flow control) has the reasoning.
const (
	// WindowMessages is a publisher's window: unconfirmed sends.
	WindowMessages = 1024
	// WindowMemoryBytes bounds one publisher's unconfirmed bodies (binds
	// above 8 KiB bodies).
	WindowMemoryBytes = 8 << 20
	// CaseWindowMessages and CaseWindowBytes bound the unconfirmed sends of
	// all publishers of a case together: 400 publishers with 655 messages
	// each (26 MB of 100 B bodies) made Artemis stop answering its
	// management address.
	CaseWindowMessages = 16 << 10
	CaseWindowBytes    = 16 << 20
)

// UnshapedWindow is the window of each of pubs publishers of size-byte
// bodies on an unshaped path: WindowMessages within the guards, at least 1.
func UnshapedWindow(pubs, size int) int {
	pubs, size = max(pubs, 1), max(size, 1)
	w := min(WindowMessages, CaseWindowMessages/pubs, WindowMemoryBytes/size, CaseWindowBytes/pubs/size)
	return max(w, 1)
}
