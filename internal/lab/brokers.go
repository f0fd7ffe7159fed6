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
	// newBroker makes the broker for a run in lab labName.
	newBroker func(ctx context.Context, labName string, log io.Writer) (broker.Broker, error)
	newDriver func(ctx context.Context, ep driver.Endpoint) (driver.Driver, error)
	supports  func(f scenario.Factors) error
}

var brokerKinds = map[string]brokerKind{
	"nats": {
		newBroker: func(context.Context, string, io.Writer) (broker.Broker, error) {
			return broker.NewNATS(broker.NATSConfig{}), nil
		},
		newDriver: func(ctx context.Context, ep driver.Endpoint) (driver.Driver, error) {
			return driver.NewNATS(ctx, ep)
		},
		supports: (&driver.NATS{}).Supports,
	},
	"artemis": {
		newBroker: func(ctx context.Context, labName string, log io.Writer) (broker.Broker, error) {
			a := broker.NewArtemis(broker.ArtemisConfig{Instance: artemisInstance(labName)})
			if !a.Installed() {
				fmt.Fprintln(log, artemisInstallNote(a, labName))
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

// artemisInstance names the Artemis instance of a lab: runs at the same
// time (--lab NAME) each need their own, since a running instance owns its
// journal and ports.
func artemisInstance(labName string) string {
	if labName == "" || labName == "pslab" {
		return "default"
	}
	return "lab-" + labName
}
