package artemis

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"pslab/internal/broker"
	"pslab/internal/driver"
	"pslab/internal/labtls"
)

// tlsAcceptor is the STOMP acceptor over TLS that Start adds to the
// instance's broker.xml while the broker serves TLS (ServeTLS), and that
// Stop (or a Start without TLS) removes again, so that runs without TLS keep the instance's
// configuration as it was. Its keystore is the lab's key and certificate
// in one PEM file (keyStoreType=PEM: the pem-keystore provider Artemis
// ships); its path and port are -D properties, so broker.xml is the same
// in every lab.
const tlsAcceptor = `         <acceptor name="stomp-tls">tcp://${pslab.host:127.0.0.1}:${pslab.stomp.tls.port:%[1]d}?protocols=STOMP;sslEnabled=true;keyStoreType=PEM;keyStorePath=${pslab.tls.keystore};keyStorePassword=pslab;enabledProtocols=TLSv1.2,TLSv1.3;tcpSendBufferSize=${pslab.socket.buffer:%[2]d};tcpReceiveBufferSize=${pslab.socket.buffer:%[2]d};useEpoll=true</acceptor>
`

var tlsAcceptorRE = regexp.MustCompile(`(?m)^[ \t]*<acceptor name="stomp-tls">.*</acceptor>\n`)

// ServeTLS implements broker.TLSServer: the next Start adds a STOMP
// acceptor over TLS on the TLS port (61614 by default) with the lab's
// certificate; plain STOMP stays where it is, for the lab's
// administration and the cases without TLS.
func (a *Artemis) ServeTLS(m *labtls.Material) error {
	key, err := os.ReadFile(m.KeyFile)
	if err != nil {
		return err
	}
	cert, err := os.ReadFile(m.CertFile)
	if err != nil {
		return err
	}
	ks := filepath.Join(m.Dir, "artemis-keystore.pem")
	if err := os.WriteFile(ks, append(key, cert...), 0o600); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.run != nil {
		return fmt.Errorf("artemis: TLS must be set before Start")
	}
	a.tlsKeystore = ks
	return nil
}

// waitTLS waits until the TLS acceptor takes connections (Artemis opens
// its acceptors together; this bounds the wait for a late one).
func (a *Artemis) waitTLS(ctx context.Context, ep driver.Endpoint, run *artemisRun) error {
	if ep.TLSURL == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, a.cfg.StartTimeout)
	defer cancel()
	addr := strings.TrimPrefix(ep.TLSURL, "stomp://")
	if err := broker.WaitTCP(ctx, ep.Dialer, addr, run.exited); err != nil {
		return fmt.Errorf("artemis: the TLS acceptor on %s did not open (%v); last output: %s", addr, err, broker.TailFile(a.RunLog(), 3))
	}
	return nil
}

// syncTLSAcceptor adds the TLS acceptor to broker.xml when the broker
// serves TLS and removes it when not (rewriting the file only when it
// changes). Called with a.mu held.
func (a *Artemis) syncTLSAcceptor(brokerXML string) error {
	b, err := os.ReadFile(brokerXML)
	if err != nil {
		return err
	}
	out := tlsAcceptorRE.ReplaceAll(b, nil)
	if a.tlsKeystore != "" {
		i := strings.Index(string(out), "</acceptors>")
		if i < 0 {
			return fmt.Errorf("%s: no </acceptors>", brokerXML)
		}
		for i > 0 && (out[i-1] == ' ' || out[i-1] == '\t') {
			i--
		}
		line := fmt.Sprintf(tlsAcceptor, a.cfg.TLSPort, a.cfg.SocketBufferBytes)
		out = []byte(string(out[:i]) + line + string(out[i:]))
	}
	if string(out) == string(b) {
		return nil
	}
	return os.WriteFile(brokerXML, out, 0o644)
}

// servesTLS tells whether the broker serves TLS (ServeTLS).
func (a *Artemis) servesTLS() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.tlsKeystore != ""
}

// tlsSettings adds the TLS acceptor to the settings s of a broker that
// serves TLS on ip.
func (a *Artemis) tlsSettings(s map[string]string, ip string) {
	if !a.servesTLS() {
		return
	}
	s["stomp_tls_acceptor"] = a.acceptorURL(ip, a.cfg.TLSPort, "STOMP") + ";sslEnabled=true;keyStoreType=PEM (the lab's ECDSA P-256 certificate, its own CA)"
}
