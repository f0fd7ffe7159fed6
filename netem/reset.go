package netem

import (
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// ResetConnections destroys every TCP socket between the two sides of the
// link (SOCK_DESTROY, as `ss -K` does): in the broker namespace those whose
// peer is the client address, in the client namespace those whose peer is
// the broker address. Sockets inside one namespace (a broker's own
// administration connections) and listening sockets are left alone.
//
// Clients that dropped their connections (an RST each) leave broker-side
// sockets behind whenever the RST was lost on the lossy link; those go on
// retransmitting into the link, with timers backed off by the case's
// losses, for tens of seconds, and the next case would wait for them or
// share the link with them. It returns how many sockets it destroyed.
func (l *Lab) ResetConnections() (int, error) {
	n := 0
	for _, s := range []struct {
		side Side
		peer string
	}{{SideBroker, l.ClientIP()}, {SideClient, l.BrokerIP()}} {
		ns, err := l.nsOf(s.side)
		if err != nil {
			return n, err
		}
		peer := net.ParseIP(s.peer)
		err = inNamedNS(ns, func() error {
			socks, err := netlink.SocketDiagTCP(unix.AF_INET)
			if err != nil {
				return fmt.Errorf("list TCP sockets: %w", err)
			}
			for _, k := range socks {
				if !k.ID.Destination.Equal(peer) {
					continue
				}
				local := &net.TCPAddr{IP: k.ID.Source, Port: int(k.ID.SourcePort)}
				remote := &net.TCPAddr{IP: k.ID.Destination, Port: int(k.ID.DestinationPort)}
				if err := netlink.SocketDestroy(local, remote); err != nil && err != unix.ENOENT {
					return fmt.Errorf("destroy %s -> %s: %w", local, remote, err)
				}
				n++
			}
			return nil
		})
		if err != nil {
			return n, fmt.Errorf("reset connections in the %s namespace: %w", s.side, err)
		}
	}
	return n, nil
}
