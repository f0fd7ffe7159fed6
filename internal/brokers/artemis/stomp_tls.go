package artemis

import (
	"pslab/internal/driver"
)

// stompTLSMechanism is what tls: on means on Artemis over STOMP (the
// record's mechanism; the negotiated version and cipher are in
// result.tls).
const stompTLSMechanism = "every client connection TLS to a STOMP acceptor of its own (sslEnabled, the lab's ECDSA P-256 certificate as a PEM keystore), server certificate verified against the lab's CA alone; TLS version and cipher in result.tls"

// tlsClient times the TLS handshakes of a client of case cs, when it has
// tls: on; nil otherwise.
func (d *stompDriver) tlsClient(cs driver.CaseSpec) (*driver.TLSClient, error) {
	cfg, err := driver.TLSFor(d.ep, cs)
	if err != nil || cfg == nil {
		return nil, err
	}
	return driver.NewTLSClient(cfg, cs.Handshakes), nil
}
