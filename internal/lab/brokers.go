package lab

import (
	"pslab/internal/brokers"
	_ "pslab/internal/brokers/all" // every broker pslab can run
)

// registry is where the lab finds its brokers: o.Registry when set (a test
// gives it the fake), or every broker pslab has.
func (o Options) registry() *brokers.Registry {
	if o.Registry != nil {
		return o.Registry
	}
	return brokers.Default
}

// BrokerNames lists the brokers pslab can run.
func BrokerNames() []string { return brokers.Names() }
