package nats

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/driver"
)

// blockingDialer stands for a SYN that is never answered: it blocks until
// its context ends, or until a guard that no test should reach.
type blockingDialer struct{ guard time.Duration }

func (d blockingDialer) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(d.guard):
		return nil, errors.New("guard: the dial ignored its context")
	}
}

// TestNATSConnectDialHonoursCancellation: a connection set-up whose dial
// hangs ends with the set-up's cancellation, not after the dial's own
// bound (before: natsConnect dialled with context.Background()).
func TestNATSConnectDialHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	ep := driver.Endpoint{URL: "nats://127.0.0.1:1", Dialer: blockingDialer{guard: time.Minute}}
	_, err := natsConnect(ctx, ep, "t", nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
}

// TestNATSConnectHandshakeHonoursCancellation: a server that accepts the
// TCP connection and never speaks (a handshake stuck on a lossy link)
// does not hold a cancelled set-up for nats.go's 10 s timeout: the socket
// is closed and the cancellation returned.
func TestNATSConnectHandshakeHonoursCancellation(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	var held []net.Conn // the server side of each accepted connection, never answered
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err = natsConnect(ctx, driver.Endpoint{URL: "nats://" + ln.Addr().String()}, "t", nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
}
