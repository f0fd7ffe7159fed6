package netem

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
)

// Side names one end of the link.
type Side string

// Sides.
const (
	SideClient Side = "client"
	SideBroker Side = "broker"
)

func (l *Lab) nsOf(s Side) (string, error) {
	switch s {
	case SideClient:
		return l.n.NsCli, nil
	case SideBroker:
		return l.brokerNS()
	}
	return "", fmt.Errorf("netem: unknown side %q", s)
}

// DialContext connects from inside the client namespace: the socket is
// created on a locked thread that has entered the namespace and keeps that
// namespace afterwards. addr must be a literal IP and port (name resolution
// could create the socket on another thread).
func (l *Lab) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return l.DialIn(ctx, SideClient, network, addr)
}

// ListenBroker listens inside the broker namespace (stream networks). With
// a foreign broker side (Options.BrokerPID) "the broker namespace" here and
// below is that process's namespace.
func (l *Lab) ListenBroker(network, addr string) (net.Listener, error) {
	return l.ListenIn(SideBroker, network, addr)
}

// StartInBroker starts cmd inside the broker namespace: it is forked from a
// locked thread that has entered the namespace, so the process (and its
// children) live there. Wait on cmd as usual.
func (l *Lab) StartInBroker(cmd *exec.Cmd) error {
	return l.StartIn(SideBroker, cmd)
}

// DialIn connects from inside the given side's namespace.
func (l *Lab) DialIn(ctx context.Context, s Side, network, addr string) (net.Conn, error) {
	if _, err := netip.ParseAddrPort(addr); err != nil {
		return nil, fmt.Errorf("netem: dial %s: want a literal ip:port inside the lab: %w", addr, err)
	}
	ns, err := l.nsOf(s)
	if err != nil {
		return nil, err
	}
	var c net.Conn
	err = inNamedNS(ns, func() error {
		var d net.Dialer
		var err error
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// ListenIn listens inside the given side's namespace (stream networks).
func (l *Lab) ListenIn(s Side, network, addr string) (net.Listener, error) {
	ns, err := l.nsOf(s)
	if err != nil {
		return nil, err
	}
	var ln net.Listener
	err = inNamedNS(ns, func() error {
		var err error
		ln, err = net.Listen(network, addr)
		return err
	})
	return ln, err
}

// ListenPacketIn opens a packet socket (udp) inside the given side's
// namespace.
func (l *Lab) ListenPacketIn(s Side, network, addr string) (net.PacketConn, error) {
	ns, err := l.nsOf(s)
	if err != nil {
		return nil, err
	}
	var pc net.PacketConn
	err = inNamedNS(ns, func() error {
		var err error
		pc, err = net.ListenPacket(network, addr)
		return err
	})
	return pc, err
}

// StartIn starts cmd inside the given side's namespace.
func (l *Lab) StartIn(s Side, cmd *exec.Cmd) error {
	ns, err := l.nsOf(s)
	if err != nil {
		return err
	}
	return inNamedNS(ns, cmd.Start)
}
