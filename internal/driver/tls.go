package driver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"pslab/internal/record"
)

// Handshake is one TLS handshake of a client connection (record.Handshake).
type Handshake = record.Handshake

// HandshakeLog collects the TLS handshakes of one case's client
// connections, first ones and reconnections; safe for concurrent use. The
// load engine makes one per case run (CaseSpec.Handshakes).
type HandshakeLog struct {
	mu     sync.Mutex
	hs     []Handshake
	failed int
}

// Add notes a completed handshake.
func (l *HandshakeLog) Add(h Handshake) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.hs = append(l.hs, h)
	l.mu.Unlock()
}

// Fail notes a handshake that failed (verification, a reset link).
func (l *HandshakeLog) Fail() {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.failed++
	l.mu.Unlock()
}

// Handshakes returns what was logged so far: the completed handshakes
// and how many failed.
func (l *HandshakeLog) Handshakes() ([]Handshake, int) {
	if l == nil {
		return nil, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Handshake(nil), l.hs...), l.failed
}

// TLSFor is the client TLS configuration for a connection of case cs to
// ep: nil when the case does not ask for TLS, an error when it does and
// the endpoint has none (the lab gives one only to brokers it started
// with its own certificates).
func TLSFor(ep Endpoint, cs CaseSpec) (*tls.Config, error) {
	if !cs.Factors.TLS {
		return nil, nil
	}
	if ep.TLS == nil {
		return nil, fmt.Errorf("%w: tls: on, but the broker at %s serves no TLS that pslab set up", ErrUnsupported, ep.URL)
	}
	return ep.TLS, nil
}

// TLSClient times the TLS handshakes of one client (its first connection
// and every reconnection) into a case's HandshakeLog. A client makes one
// connection at a time, but its reconnections may run on another
// goroutine than its first connection (a client library's).
type TLSClient struct {
	cfg *tls.Config
	log *HandshakeLog

	mu        sync.Mutex
	conns     int       // handshakes done
	connected time.Time // when the last TCP connection was up (Dialer)
}

// NewTLSClient times the handshakes of a client that connects with cfg
// (the endpoint's, see TLSFor) into log.
func NewTLSClient(cfg *tls.Config, log *HandshakeLog) *TLSClient {
	return &TLSClient{cfg: cfg, log: log}
}

// Handshake makes c, a TCP connection just made to the broker at host,
// a TLS client connection and logs the handshake's time; on failure c is
// closed.
func (t *TLSClient) Handshake(ctx context.Context, c net.Conn, host string) (*tls.Conn, error) {
	cfg := t.cfg.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	start := time.Now()
	tc := tls.Client(c, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		t.log.Fail()
		c.Close()
		return nil, fmt.Errorf("tls handshake with %s: %w", host, err)
	}
	t.note(time.Since(start), tc.ConnectionState())
	return tc, nil
}

func (t *TLSClient) note(took time.Duration, st tls.ConnectionState) {
	t.mu.Lock()
	again := t.conns > 0
	t.conns++
	t.mu.Unlock()
	t.log.Add(Handshake{Took: took, Reconnect: again,
		Version: tls.VersionName(st.Version), Cipher: tls.CipherSuiteName(st.CipherSuite)})
}

// Dialer wraps d (nil: the host network) to note when each TCP
// connection is up, for a client library that makes the handshake itself
// with Config (nats.go).
func (t *TLSClient) Dialer(d Dialer) Dialer {
	if d == nil {
		d = &net.Dialer{}
	}
	return dialFunc(func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err == nil {
			t.mu.Lock()
			t.connected = time.Now()
			t.mu.Unlock()
		}
		return c, err
	})
}

// Config is the client configuration for a library that makes the
// handshake itself over connections from Dialer: each handshake is
// logged when it is done (its VerifyConnection, after crypto/tls has
// verified the server's chain), timed from the TCP connection.
func (t *TLSClient) Config() *tls.Config {
	cfg := t.cfg.Clone()
	cfg.VerifyConnection = func(st tls.ConnectionState) error {
		t.mu.Lock()
		connected := t.connected
		t.mu.Unlock()
		if connected.IsZero() {
			return errors.New("pslab: TLS handshake on a connection its dialer did not make")
		}
		t.note(time.Since(connected), st)
		return nil
	}
	return cfg
}

// Failed notes a handshake of the client that did not complete (a client
// library that makes it itself reports it as a connection error).
func (t *TLSClient) Failed() { t.log.Fail() }

type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

func (f dialFunc) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return f(ctx, network, addr)
}
