package lab

import (
	"fmt"

	"pslab/internal/brokers"
)

// registry is where the lab finds its brokers: o.Registry when set (a test
// gives it the fake), or every broker the program registered
// (brokers.Default: cmd/pslab imports internal/brokers/all).
func (o Options) registry() *brokers.Registry {
	if o.Registry != nil {
		return o.Registry
	}
	return brokers.Default
}

// BrokerNames lists the brokers the program registered.
func BrokerNames() []string { return brokers.Names() }

// inMemoryOnly tells whether every broker of the plan is simulated (the
// fake): they need no network, so the lab runs them on the host's
// loopback without building namespaces, and refuses emulated links.
func (p Plan) inMemoryOnly(o Options) bool {
	reg := o.registry()
	for _, b := range p.Brokers {
		if d, ok := reg.Lookup(b); !ok || !d.Simulated {
			return false
		}
	}
	return len(p.Brokers) > 0
}

// simulatedOnShaped refuses an emulated link for a simulated broker: it
// runs in memory, and no packet would cross the link.
func (p Plan) simulatedOnShaped(o Options, network string) error {
	reg := o.registry()
	for _, b := range p.Brokers {
		if d, ok := reg.Lookup(b); ok && d.Simulated {
			return fmt.Errorf("network %s: broker %s runs in memory inside pslab, so no message would cross the emulated link; run it on wireline", network, b)
		}
	}
	return nil
}
