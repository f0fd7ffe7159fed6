package nats

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"github.com/nats-io/nats-server/v2/server"

	"pslab/internal/driver"
	"pslab/internal/labtls"
)

// tlsSetting is what the server's settings say when it serves TLS.
const tlsSetting = "tls {} with the lab's ECDSA P-256 certificate (its own CA), TLS 1.2+; allow_non_tls: plain clients (administration, cases without tls) share the port; tls timeout 30 s"

// ServeTLS implements broker.TLSServer: the server serves TLS with the
// lab's certificate (nats-server's tls {} block), and plain connections on
// the same port (allow_non_tls) for the lab's administration and the cases
// without TLS; clients of a case with tls: on ask for TLS after the
// server's INFO (nats.go's Secure).
func (n *Server) ServeTLS(m *labtls.Material) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc != nil {
		return fmt.Errorf("nats: TLS must be set before Start")
	}
	n.tlsCert, n.tlsKey = m.CertFile, m.KeyFile
	return nil
}

// WithTLS makes opts serve TLS with cert alongside plain connections
// (allow_non_tls), as pslab's server does for a lab with tls: on cases.
func WithTLS(opts *server.Options, cert tls.Certificate) {
	opts.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	opts.TLS = true
	opts.AllowNonTLS = true
	// The handshake of a client on the emulated lossy link may need
	// several retransmissions; nats-server's default bound is 2 s.
	// Connection set-up is not measured, its cost is recorded.
	opts.TLSTimeout = 30
}

// tlsFromEnv applies the child's TLS files, when the parent gave any.
func tlsFromEnv(opts *server.Options) error {
	certFile, keyFile := os.Getenv("PSLAB_NATS_TLS_CERT"), os.Getenv("PSLAB_NATS_TLS_KEY")
	if certFile == "" {
		return nil
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return fmt.Errorf("tls: %w", err)
	}
	WithTLS(opts, cert)
	return nil
}

// tlsMechanism is what tls: on means on NATS (the record's mechanism; the
// negotiated version and cipher are in result.tls).
const tlsMechanism = "every client connection TLS (nats.go Secure after the server's INFO, server certificate verified against the lab's CA alone; TLS version and cipher in result.tls)"

// watchTLS makes w time the TLS handshakes of a client of case cs, when
// it has tls: on.
func (d *Driver) watchTLS(w *natsWatch, cs driver.CaseSpec) error {
	cfg, err := driver.TLSFor(d.ep, cs)
	if err != nil || cfg == nil {
		return err
	}
	w.tls = driver.NewTLSClient(cfg, cs.Handshakes)
	return nil
}

// isTLSError tells whether a connect failed in the TLS handshake (the
// server's certificate refused, or the handshake itself).
func isTLSError(err error) bool {
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var host x509.HostnameError
	var rec tls.RecordHeaderError
	var verify *tls.CertificateVerificationError
	return errors.As(err, &unknown) || errors.As(err, &invalid) || errors.As(err, &host) ||
		errors.As(err, &rec) || errors.As(err, &verify)
}
