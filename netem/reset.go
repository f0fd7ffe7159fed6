package netem

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"slices"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
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
	toBroker := []net.IP{net.ParseIP(l.BrokerIP())}
	for _, r := range l.opts.Remote { // brokers on other hosts: only the client ends are here
		toBroker = append(toBroker, net.IP(r.AsSlice()))
	}
	for _, s := range []struct {
		side  Side
		peers []net.IP
	}{{SideBroker, []net.IP{net.ParseIP(l.ClientIP())}}, {SideClient, toBroker}} {
		ns, err := l.nsOf(s.side)
		if err != nil {
			return n, err
		}
		err = inNamedNS(ns, func() error {
			socks, err := netlink.SocketDiagTCP(unix.AF_INET)
			if err != nil {
				return fmt.Errorf("list TCP sockets: %w", err)
			}
			for _, k := range socks {
				if !slices.ContainsFunc(s.peers, k.ID.Destination.Equal) {
					continue
				}
				gone, err := destroySocket(k.ID)
				if err != nil {
					return fmt.Errorf("destroy %s:%d -> %s:%d: %w", k.ID.Source, k.ID.SourcePort, k.ID.Destination, k.ID.DestinationPort, err)
				}
				if !gone {
					n++
				}
			}
			return nil
		})
		if err != nil {
			return n, fmt.Errorf("reset connections in the %s namespace: %w", s.side, err)
		}
	}
	return n, nil
}

// destroySocket destroys the TCP socket id names (SOCK_DESTROY), in the
// calling thread's namespace, and reports whether it was already gone.
//
// The request carries the socket's cookie from the dump. Without it (as
// netlink.SocketDestroy sends it), the kernel looks the 4-tuple up like an
// incoming segment: when the connection has just ended (its peer's reset
// arrived between the dump and the destroy) the lookup falls through to
// the listening socket on that port and destroys the broker's listener,
// and the broker refuses every connection from then on. With the cookie,
// the kernel answers ESTALE for any other socket than the one dumped.
func destroySocket(id netlink.SocketID) (gone bool, err error) {
	req := nl.NewNetlinkRequest(nl.SOCK_DESTROY, unix.NLM_F_ACK)
	req.AddData(destroyRequest(id))
	_, err = req.Execute(unix.NETLINK_INET_DIAG, 0)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ESTALE) {
		return true, nil
	}
	return false, err
}

// destroyRequest is struct inet_diag_req_v2 for one IPv4 TCP socket:
// family, protocol, ext, pad, states, then struct inet_diag_sockid (ports
// and addresses in network order, interface and cookie in host order).
type destroyRequest netlink.SocketID

func (r destroyRequest) Len() int { return 56 }

func (r destroyRequest) Serialize() []byte {
	b := make([]byte, 56)
	b[0], b[1] = unix.AF_INET, unix.IPPROTO_TCP
	nl.NativeEndian().PutUint32(b[4:], 0xfff) // all states
	binary.BigEndian.PutUint16(b[8:], r.SourcePort)
	binary.BigEndian.PutUint16(b[10:], r.DestinationPort)
	copy(b[12:16], r.Source.To4())
	copy(b[28:32], r.Destination.To4())
	nl.NativeEndian().PutUint32(b[44:], r.Interface)
	nl.NativeEndian().PutUint32(b[48:], r.Cookie[0])
	nl.NativeEndian().PutUint32(b[52:], r.Cookie[1])
	return b
}
