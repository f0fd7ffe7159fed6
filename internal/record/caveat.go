package record

import "strings"

// Caveat is a broker's note on what its records mean, for reports: when a
// record of Broker ran a case on a mechanism whose text contains
// Mechanism, a report says Text once. It belongs to the broker (its
// descriptor in internal/brokers carries it), so the report names no
// broker itself.
type Caveat struct {
	Broker    string
	Mechanism string
	Text      string
}

// Applies tells whether c concerns a record of broker b that ran on
// mechanism m.
func (c Caveat) Applies(b, m string) bool {
	return b == c.Broker && c.Mechanism != "" && strings.Contains(m, c.Mechanism)
}
