package scenario

import "time"

// Limits every case is checked against before anything runs.
const (
	// MaxBodySize is the largest message body the codecs build (body
	// package): one message must fit in memory many times over.
	MaxBodySize = 64 << 20
	// MaxPhase bounds each of warmup, window and drain: a longer phase is
	// a typo (window: 100000h), not a measurement.
	MaxPhase = 24 * time.Hour
)

// validateLimits adds a violation for each limit c exceeds.
func (c *Case) validateLimits(add func(field, format string, a ...any)) {
	if c.Size > MaxBodySize {
		add("size", "size %d exceeds the %d-byte (64 MiB) limit of the body codecs", c.Size, MaxBodySize)
	}
	for _, ph := range []struct {
		name string
		d    time.Duration
	}{{"warmup", c.Warmup}, {"window", c.Window}, {"drain", c.Drain}} {
		if ph.d > MaxPhase {
			add(ph.name, "%s %s is longer than the %s limit", ph.name, ph.d, MaxPhase)
		}
	}
}

// controlCharLine is the line of the first character YAML refuses (a
// control character other than tab, newline and carriage return, as in a
// binary file), or 0.
func controlCharLine(data []byte) int {
	line := 1
	for _, b := range data {
		switch {
		case b == '\n':
			line++
		case b < 0x20 && b != '\t' && b != '\r', b == 0x7f:
			return line
		}
	}
	return 0
}
