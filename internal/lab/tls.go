package lab

import (
	"crypto/tls"
	"fmt"

	"pslab/internal/broker"
	"pslab/internal/labtls"
	"pslab/internal/scenario"
)

// tlsRefusal refuses tls: on for broker b where pslab does not start the
// broker with its own certificates: one reached by --url (an external or
// remote broker, a container) serves no certificate the lab's CA signed,
// and running the case without TLS would silently drop the factor.
func (o Options) tlsRefusal(f scenario.Factors, b string) error {
	if !f.TLS {
		return nil
	}
	if _, ok := o.URLs[b]; ok {
		return fmt.Errorf("tls: on: %s is reached by its URL (--url, --container or a remote broker), whose certificate pslab did not make; only brokers pslab starts serve TLS (with the lab's own CA)", b)
	}
	return nil
}

// usesTLS tells whether a case of the plan runs on broker b with tls: on.
func (p Plan) usesTLS(b string) bool {
	for _, c := range p.Cases {
		if c.TLS && c.ForBroker(b) {
			return true
		}
	}
	return false
}

// labCerts is the TLS material of one broker session (nil: none).
type labCerts struct{ m *labtls.Material }

// serveTLS makes the lab's CA and a server certificate for the broker's
// address on host and gives them to b, when a case of the plan runs on it
// with tls: on; nil otherwise.
func (lr *labRun) serveTLS(b broker.Broker, bName string, host broker.Host) (*labCerts, error) {
	if !lr.p.usesTLS(bName) {
		return nil, nil
	}
	ts, ok := b.(broker.TLSServer)
	if !ok { // the plan refused the case already; this is a bug
		return nil, fmt.Errorf("tls: on: broker %s cannot be given a certificate", bName)
	}
	hosts := []string{host.ListenIP()}
	for _, h := range []string{"127.0.0.1", "localhost"} {
		if h != hosts[0] {
			hosts = append(hosts, h)
		}
	}
	m, err := labtls.New(broker.CacheDir(), lr.o.LabName, hosts)
	if err != nil {
		return nil, fmt.Errorf("tls: the lab's certificates: %w", err)
	}
	if err := ts.ServeTLS(m); err != nil {
		m.Remove()
		return nil, fmt.Errorf("tls: %s: %w", bName, err)
	}
	fmt.Fprintf(lr.o.Log, "tls: %s serves a certificate for %v signed by the lab's CA (%s)\n", bName, hosts, m.Dir)
	return &labCerts{m}, nil
}

func (c *labCerts) clientConfig() *tls.Config {
	if c == nil {
		return nil
	}
	return c.m.ClientConfig()
}

func (c *labCerts) remove() {
	if c != nil {
		c.m.Remove()
	}
}
