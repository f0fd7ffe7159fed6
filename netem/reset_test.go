package netem

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// TestResetConnectionsDestroysBothEnds: a client-broker connection is
// destroyed on both sides (the broker's read fails at once, no data or
// FIN needed from the client), and the listener stays.
func TestResetConnectionsDestroysBothEnds(t *testing.T) {
	l := upLab(t, Options{})
	ln, cli, srv := brokerConnection(t, l)
	defer ln.Close()
	defer cli.Close()
	defer srv.Close()
	n, err := l.ResetConnections()
	if err != nil {
		t.Fatal(err)
	}
	// 2, or 1 when the broker side's reset reached the client first.
	if n < 1 || n > 2 {
		t.Errorf("destroyed %d sockets, want 1 or 2", n)
	}
	_ = srv.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := srv.Read(make([]byte, 1)); err == nil || err == io.EOF {
		t.Errorf("broker side read after the reset: %v, want a reset error", err)
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Error("broker side still open after the reset")
	}
	if n, err := l.ResetConnections(); err != nil || n != 0 {
		t.Errorf("second reset: %d sockets, %v; want 0, nil", n, err)
	}
	requireListening(t, l, ln)
}

// TestDestroyOfAnEndedConnectionSparesTheListener: destroying the 4-tuple
// of a connection that ended after it was listed must not reach the
// listener on the same port (the kernel's tuple lookup falls through to
// it; only the socket cookie tells them apart). Before the cookie was
// sent, this killed the broker's listener now and then between cases, and
// every later case was refused.
func TestDestroyOfAnEndedConnectionSparesTheListener(t *testing.T) {
	l := upLab(t, Options{})
	ln, cli, srv := brokerConnection(t, l)
	defer ln.Close()
	brokerNS, err := l.nsOf(SideBroker)
	if err != nil {
		t.Fatal(err)
	}
	brokerSide := func() (ids []netlink.SocketID) {
		err := inNamedNS(brokerNS, func() error {
			socks, err := netlink.SocketDiagTCP(unix.AF_INET)
			for _, s := range socks {
				if s.ID.Destination.Equal(net.ParseIP(l.ClientIP())) {
					ids = append(ids, s.ID)
				}
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	listed := brokerSide()
	if len(listed) != 1 {
		t.Fatalf("broker side sockets: %v, want one", listed)
	}
	cli.Close() // the client closes first: the broker's side goes away entirely
	srv.Close()
	deadline := time.Now().Add(5 * time.Second)
	for len(brokerSide()) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	var gone bool
	err = inNamedNS(brokerNS, func() (err error) { gone, err = destroySocket(listed[0]); return })
	if err != nil || !gone {
		t.Fatalf("destroy of the ended connection: gone %v, %v; want gone, nil", gone, err)
	}
	requireListening(t, l, ln)
}

// requireListening fails the test unless ln still accepts a connection.
func requireListening(t *testing.T, l *Lab, ln net.Listener) {
	t.Helper()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	c, err := l.DialContext(t.Context(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("the listener did not survive: %v", err)
	}
	c.Close()
}

// brokerConnection listens on the broker side and connects to it from the
// client side: the listener and both ends of the connection.
func brokerConnection(t *testing.T, l *Lab) (ln net.Listener, cli, srv net.Conn) {
	t.Helper()
	ln, err := l.ListenBroker("tcp", net.JoinHostPort(l.BrokerIP(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- c
		}
	}()
	cli, err = l.DialContext(t.Context(), "tcp", ln.Addr().String())
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	select {
	case srv = <-accepted:
	case <-time.After(5 * time.Second):
		ln.Close()
		cli.Close()
		t.Fatal("no connection accepted")
	}
	return ln, cli, srv
}
