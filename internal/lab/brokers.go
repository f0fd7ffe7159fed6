package lab

import (
	"context"
	"fmt"
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
	"artemis": {
		newBroker: func(ctx context.Context, log io.Writer) (broker.Broker, error) {
			a := broker.NewArtemis(broker.ArtemisConfig{})
			if !a.Installed() {
				fmt.Fprintf(log, "installing Artemis %s (first use) ...\n", a.Config().Version)
				if err := a.Install(ctx, log); err != nil {
					return nil, err
				}
			}
			// A pslab killed earlier may have left its broker running.
			if pid, err := a.StopLeftover(ctx); err != nil {
				return nil, err
			} else if pid > 0 {
				fmt.Fprintf(log, "cleanup: stopped Artemis (pid %d) left by an earlier run\n", pid)
			}
			return a, nil
		},
		newDriver: func(_ context.Context, ep driver.Endpoint) (driver.Driver, error) { return driver.NewSTOMP(ep) },
		supports:  driver.SupportsSTOMP,
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
