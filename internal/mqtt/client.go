package mqtt

import (
	"context"
	"errors"
	"time"

	"pslab/internal/driver"
)

// client keeps one MQTT client's connection up, under one client
// identifier (driver.Link): when the connection fails (the broker was
// killed, the link dropped it, the keep-alive found it dead) the client
// records an outage and dials again with a back-off, with the same
// CONNECT: a persistent session (clean session off, clean start off with
// an expiry) is resumed by the broker, and setup runs on the new
// connection before it becomes current (a subscriber subscribes again
// when the broker kept no session; a publisher sends again what the old
// connection had not confirmed).
type client = driver.Link[*conn]

// errClientClosed is returned to a caller waiting for the connection of a
// client that is being closed.
var errClientClosed = errors.New("MQTT client closed")

// newClient dials the first connection (its errors are returned, not
// retried: a case that cannot connect fails) and starts watching it. A
// redial may take the stall tolerance beyond the usual 10 s.
func newClient(ctx context.Context, d *Driver, o connectOpts, onPkt func(*conn, packet) error,
	onPing func(uint64), setup func(context.Context, *conn) error) (*client, error) {
	dialOne := func(ctx context.Context) (*conn, error) {
		c, err := dial(ctx, d.ep, d.addr, o, onPkt, onPing)
		if err != nil {
			return nil, err
		}
		if setup != nil {
			if err := setup(ctx, c); err != nil {
				c.Abort()
				return nil, err
			}
		}
		return c, nil
	}
	return driver.NewLink(ctx, dialOne, 10*time.Second+o.stall, errClientClosed)
}
