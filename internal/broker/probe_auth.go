package broker

import (
	"context"
	"fmt"
	"net"
	"time"
)

// AccessProbe tells over a fresh connection c to host (host:port) whether
// a broker lets a client in without credentials, and how it knows. Each
// broker's descriptor (internal/brokers) names its probe.
type AccessProbe func(c net.Conn, host string) (open bool, detail string, err error)

// OpenAccess says whether the broker at e's address lets a client in
// without credentials, by probe (each broker's descriptor names its own).
// It dials over the host network and sends nothing but what probe sends.
func (e *External) OpenAccess(ctx context.Context, probe AccessProbe) (open bool, detail string, err error) {
	err = e.withConn(ctx, func(c net.Conn) error {
		open, detail, err = probe(c, e.host)
		return err
	})
	return open, detail, err
}

// withConn dials the broker over the host network and runs fn on the
// connection, both within 10 s.
func (e *External) withConn(ctx context.Context, fn func(c net.Conn) error) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", e.host)
	if err != nil {
		return fmt.Errorf("%s at %s is unreachable: %w", e.name, e.host, err)
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	return fn(c)
}

// URL is the external broker's URL without credentials.
func (e *External) URL() string { return e.ep.URL }
