package lab

import (
	"fmt"

	"pslab/internal/brokers"
	"pslab/netem"
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

// checkCongestionControl refuses --tcp-congestion where no lab of pslab's
// own carries the connections: it is set in the lab's namespaces, never
// in the host's or another's.
func (p Plan) checkCongestionControl(o Options) error {
	cc := o.TCPCongestion
	if cc == "" {
		return nil
	}
	use := p.hostUse(o)
	switch {
	case use == hostInMemory:
		return fmt.Errorf("--tcp-congestion %s: the simulated broker runs in memory, over no TCP connection", cc)
	case p.remote.addrs != nil:
		return fmt.Errorf("--tcp-congestion %s: brokers on other hosts end their connections there; set it on those hosts", cc)
	case use == hostExternal:
		return fmt.Errorf("--tcp-congestion %s: an external broker (--url) is reached over the host network, whose setting pslab leaves alone", cc)
	}
	if err := netem.Supported(); err != nil {
		return fmt.Errorf("--tcp-congestion %s needs the lab's namespaces: %w", cc, err)
	}
	return nil
}
