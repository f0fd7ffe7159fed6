package broker

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"pslab/internal/driver"
)

// External is a broker pslab does not run: reached at a URL, with the
// credentials in the URL's user info (nats://user:pass@host:4222). A NATS
// URL may name the server's HTTP monitoring port on the same host
// (nats://user:pass@host:4222?monitor=8222): the driver then reads what the
// server holds for core subscribers from it.
type External struct {
	name string
	ep   driver.Endpoint
	host string // host:port
}

// NewExternal parses rawURL for the broker called name.
func NewExternal(name, rawURL string) (*External, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%s URL %q: %w", name, Redact(rawURL), err)
	}
	if u.Host == "" || u.Port() == "" {
		return nil, fmt.Errorf("%s URL %q: want scheme://[user:password@]host:port", name, Redact(rawURL))
	}
	ep := driver.Endpoint{}
	q := u.Query()
	if m := q.Get("monitor"); m != "" {
		if p, err := strconv.Atoi(m); err != nil || p <= 0 || p > 65535 {
			return nil, fmt.Errorf("%s URL %q: monitor=%q: want the monitoring port, 1-65535", name, Redact(rawURL), m)
		}
		ep.MonitorURL = "http://" + net.JoinHostPort(u.Hostname(), m)
		q.Del("monitor")
		u.RawQuery = q.Encode()
	}
	if u.User != nil {
		ep.User = u.User.Username()
		ep.Password, _ = u.User.Password()
	}
	u.User = nil
	ep.URL = u.String()
	return &External{name: name, ep: ep, host: u.Host}, nil
}

// CheckReachable dials the broker once over the host network (before
// anything is run or written).
func (e *External) CheckReachable(ctx context.Context) error {
	return e.dialCheck(ctx, &net.Dialer{Timeout: 5 * time.Second})
}

func (e *External) dialCheck(ctx context.Context, d driver.Dialer) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
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

// Start implements Broker: the broker already runs. Clients reach it
// through h's dialer: the host network, or the emulated link when the lab's
// broker side is the broker's own namespace (a container).
func (e *External) Start(ctx context.Context, h Host) (driver.Endpoint, error) {
	ep := e.ep
	d := h.Dialer()
	if d == nil {
		d = &net.Dialer{Timeout: 5 * time.Second}
	} else {
		ep.Dialer = d
		if a, ok := h.(ExternalAdminHost); ok {
			ep.AdminDialer = a.ExternalAdminDialer() // nil: as the clients
		}
	}
	if err := e.dialCheck(ctx, d); err != nil {
		return driver.Endpoint{}, err
	}
	return ep, nil
}

// ExternalAdminHost is a Host that reaches external brokers for their
// administration another way than the clients do: a broker on another
// host straight over the host network, not through the emulated link.
type ExternalAdminHost interface {
	Host
	ExternalAdminDialer() driver.Dialer
}

// Stop implements Broker (nothing to stop).
func (e *External) Stop(context.Context) error { return nil }

// PID implements Broker: unknown, so no broker resource samples.
func (e *External) PID() int { return 0 }

// Version implements Broker.
func (e *External) Version() string { return "external " + e.name + " at " + e.host }

// Settings implements Broker.
func (e *External) Settings() map[string]string { return map[string]string{"url": e.ep.URL} }

// Redact hides the password of a URL for messages ("xxxxx").
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		if err != nil && strings.Contains(raw, "@") {
			return "(unparsable URL with credentials)"
		}
		return raw
	}
	return u.Redacted()
}
