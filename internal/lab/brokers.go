package lab

import (
	"context"
	"io"
	"sort"

	"pslab/internal/broker"
	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// brokerKind knows how to make a broker and its driver.
type brokerKind struct {
	newBroker func(ctx context.Context, log io.Writer) (broker.Broker, error)
	newDriver func(ctx context.Context, ep driver.Endpoint) (driver.Driver, error)
	supports  func(f scenario.Factors) error
}

var brokerKinds = map[string]brokerKind{
	"nats": {
		newBroker: func(context.Context, io.Writer) (broker.Broker, error) {
			return broker.NewNATS(broker.NATSConfig{}), nil
		},
		newDriver: func(ctx context.Context, ep driver.Endpoint) (driver.Driver, error) {
			return driver.NewNATS(ctx, ep)
		},
		supports: (&driver.NATS{}).Supports,
	},
}

// BrokerNames lists the brokers pslab can run.
func BrokerNames() []string {
	var out []string
	for n := range brokerKinds {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
