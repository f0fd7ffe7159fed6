package driver

import "pslab/internal/scenario"

// TCPBoundedWindow is the window of a publisher whose broker's own flow
// control is TCP backpressure (TCPBounder) on an unshaped path: 100 000
// messages, which the kernel's socket buffers bind first at the papers'
// sizes on loopback, as nats-bench's publisher (bounded by TCP only). Its
// PING/PONG confirmations (one every window/4 sends) never make the
// publisher wait while the broker keeps up. A window of 1024 messages
// with pipelined round trips still waited on loopback (0.41-0.85 x
// nats-bench, results/nats-bench, docs/design.md Flow control).
const TCPBoundedWindow = 100_000

// TCPBounder is implemented by drivers whose broker holds nothing a
// publisher's window would protect for some cases: the broker forwards or
// drops (core NATS: a subscriber slower than the publishers makes the
// server drop its messages, counted as lost; core NATS is at-most-once),
// so on an unshaped path TCP backpressure alone bounds the publisher.
type TCPBounder interface {
	TCPBounded(f scenario.Factors) bool
}

// UnshapedWindowOf is the window of each of pubs publishers of a case of f
// on an unshaped path with driver d: TCPBoundedWindow when d is a
// TCPBounder for f, else UnshapedWindow within its guards.
func UnshapedWindowOf(d Driver, f scenario.Factors, pubs int) int {
	if tb, ok := d.(TCPBounder); ok && tb.TCPBounded(f) {
		return TCPBoundedWindow
	}
	return UnshapedWindow(pubs, f.Size)
}
