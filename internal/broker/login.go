package broker

import (
	"context"
	"fmt"
	"net"
)

// Login logs in over a fresh connection c to host (host:port) with user
// and pass and logs out: nil when the broker took them. Each broker's
// descriptor (internal/brokers) names its login.
type Login func(c net.Conn, host, user, pass string) error

// CheckLogin logs in to the broker at e's address with the URL's
// credentials, over the host network, and logs out: a wrong password is
// found before anything runs, not at the first case (CheckReachable only
// dials).
func (e *External) CheckLogin(ctx context.Context, login Login) error {
	return e.withConn(ctx, func(c net.Conn) error {
		if err := login(c, e.host, e.ep.User, e.ep.Password); err != nil {
			return fmt.Errorf("%s at %s: login: %w", e.name, e.host, err)
		}
		return nil
	})
}
