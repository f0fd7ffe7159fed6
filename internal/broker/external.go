package broker

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"time"

	"pslab/internal/driver"
)

// External is a broker pslab does not run: reached at a URL, with the
// credentials in the URL's user info (nats://user:pass@host:4222).
type External struct {
	name string
	ep   driver.Endpoint
	host string // host:port
}

// NewExternal parses rawURL for the broker called name.
func NewExternal(name, rawURL string) (*External, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%s URL %q: %w", name, rawURL, err)
	}
	if u.Host == "" || u.Port() == "" {
		return nil, fmt.Errorf("%s URL %q: want scheme://[user:password@]host:port", name, rawURL)
	}
	ep := driver.Endpoint{}
	if u.User != nil {
		ep.User = u.User.Username()
		ep.Password, _ = u.User.Password()
	}
	u.User = nil
	ep.URL = u.String()
	return &External{name: name, ep: ep, host: u.Host}, nil
}

// CheckReachable dials the broker once (before anything is run or written).
func (e *External) CheckReachable(ctx context.Context) error {
	d := net.Dialer{Timeout: 5 * time.Second}
	c, err := d.DialContext(ctx, "tcp", e.host)
	if err != nil {
		return fmt.Errorf("%s at %s is unreachable: %w", e.name, e.host, err)
	}
	return c.Close()
}

// HasCredentials tells whether the URL carried a user.
func (e *External) HasCredentials() bool { return e.ep.User != "" }

// Name implements Broker.
func (e *External) Name() string { return e.name }

// Start implements Broker: the broker already runs; the host's network is
// used as is (no emulated path can be put in front of a broker pslab does
// not run).
func (e *External) Start(ctx context.Context, _ Host) (driver.Endpoint, error) {
	if err := e.CheckReachable(ctx); err != nil {
		return driver.Endpoint{}, err
	}
	return e.ep, nil
}

// Stop implements Broker (nothing to stop).
func (e *External) Stop(context.Context) error { return nil }

// PID implements Broker: unknown, so no broker resource samples.
func (e *External) PID() int { return 0 }

// Version implements Broker.
func (e *External) Version() string { return "external " + e.name + " at " + e.host }

// Settings implements Broker.
func (e *External) Settings() map[string]string { return map[string]string{"url": e.ep.URL} }
