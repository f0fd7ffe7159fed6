package netem

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Brokers on other hosts (Options.Remote): the broker side of the link is
// this host's own network namespace, and the host forwards what the router
// sends to a remote broker's address out of the interface its routes
// choose, masqueraded to that interface's address:
//
//	<prefix>-cli --veth-- <prefix>-rtr (shaping, loss) --veth-- host (<prefix>-b0 10.77.2.2)
//	                                                             | forward + masquerade
//	                                                             +-- uplink interface --> remote broker
//
// The clients' namespace and the router have a route to each remote
// address and to nothing else outside the lab, so only the path to the
// brokers' addresses is emulated and no other traffic of the host is
// touched. On the host pslab adds: the veth end <prefix>-b0 (as for a
// container, see foreign.go), a route to the clients' 10.77.1.0/30 via the
// router, IPv4 forwarding on <prefix>-b0 and on each uplink interface
// (per interface, never net.ipv4.ip_forward), and the nft table
// ip <prefix>-uplink that masquerades the clients' address, forwards only
// the clients' packets to the remote addresses and the replies, and drops
// any other forwarding through an uplink whose forwarding pslab switched
// on. Up records the uplinks' previous forwarding settings in
// /run/pslab-<prefix>.uplink before it changes them; Down, Cleanup and the
// next Up in any process restore them from there, delete the table and the
// veth, and remove the record.

// ErrBadRemote is wrapped when an Options.Remote address cannot be used.
var ErrBadRemote = errors.New("unusable remote broker address")

// uplinkRoute is how this host reaches one remote broker address.
type uplinkRoute struct {
	Addr  netip.Addr
	Iface string // the host interface its route leaves by
	Via   string // the gateway, "" when on-link
}

// hostNS is this process's network namespace, the host's, as the broker
// side of a lab (recorded by its inode: a later process, after a crash,
// must run in the same namespace to clean it up).
func hostNS() (foreignNS, error) {
	var own unix.Stat_t
	if err := unix.Stat("/proc/thread-self/ns/net", &own); err != nil {
		return foreignNS{}, fmt.Errorf("netem: own network namespace: %w", err)
	}
	return foreignNS{PID: 0, Ino: own.Ino}, nil
}

// CheckRemote reports whether brokers at addrs can be reached through the
// lab (Options.Remote), without changing anything: each must be an IPv4
// unicast address outside the lab's nets and outside 127.0.0.0/8, not an
// address of this host, with a route on this host that does not go back
// into the lab. Errors wrap ErrBadRemote. It returns the routes.
func CheckRemote(addrs []netip.Addr) error {
	_, err := planUplinks(addrs)
	return err
}

func planUplinks(addrs []netip.Addr) ([]uplinkRoute, error) {
	if len(addrs) == 0 {
		return nil, nil
	}
	h, err := netlink.NewHandle()
	if err != nil {
		return nil, fmt.Errorf("netem: netlink: %w", err)
	}
	defer h.Close()
	local, err := hostAddrs(h)
	if err != nil {
		return nil, err
	}
	lab := []*net.IPNet{mustCIDR(cliNet), mustCIDR(brkNet)}
	var out []uplinkRoute
	var problems []string
	for _, a := range addrs {
		bad := func(why string) { problems = append(problems, fmt.Sprintf("%s: %s", a, why)) }
		ip := net.IP(a.AsSlice())
		switch {
		case !a.Is4():
			bad("not an IPv4 address (the lab is IPv4 only)")
			continue
		case a.IsLoopback() || a.IsUnspecified() || a.IsMulticast() || a.IsLinkLocalUnicast() || ip.Equal(net.IPv4bcast):
			bad("not a unicast address of another host")
			continue
		case lab[0].Contains(ip) || lab[1].Contains(ip):
			bad("inside the lab's own nets " + cliNet + " and " + brkNet)
			continue
		case local[a]:
			bad("an address of this host: a broker on this machine is measured through its namespace (--broker-pid) or started by pslab")
			continue
		}
		routes, err := h.RouteGet(ip)
		if err != nil || len(routes) == 0 {
			bad(fmt.Sprintf("no route on this host (%v)", err))
			continue
		}
		r := routes[0]
		link, err := h.LinkByIndex(r.LinkIndex)
		if err != nil {
			bad(fmt.Sprintf("route via interface %d: %v", r.LinkIndex, err))
			continue
		}
		name := link.Attrs().Name
		if link.Attrs().Flags&net.FlagLoopback != 0 || strings.HasSuffix(name, "-b0") || strings.HasSuffix(name, "-rb") {
			bad("its route leaves by " + name + ", not by an interface to another host")
			continue
		}
		u := uplinkRoute{Addr: a, Iface: name}
		if r.Gw != nil {
			u.Via = r.Gw.String()
		}
		out = append(out, u)
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("netem: %w: %s", ErrBadRemote, strings.Join(problems, "; "))
	}
	return out, nil
}

// hostAddrs lists the IPv4 addresses of this namespace's interfaces.
func hostAddrs(h *netlink.Handle) (map[netip.Addr]bool, error) {
	addrs, err := h.AddrList(nil, netlink.FAMILY_V4)
	if err != nil {
		return nil, fmt.Errorf("netem: list this host's addresses: %w", err)
	}
	m := map[netip.Addr]bool{}
	for _, a := range addrs {
		if x, ok := netip.AddrFromSlice(a.IP.To4()); ok {
			m[x] = true
		}
	}
	return m, nil
}

// uplinkIfaces are the distinct interfaces of routes, in order.
func uplinkIfaces(routes []uplinkRoute) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range routes {
		if !seen[r.Iface] {
			seen[r.Iface] = true
			out = append(out, r.Iface)
		}
	}
	return out
}

// RemoteIPs are the remote broker addresses the lab forwards to (empty
// without Options.Remote).
func (l *Lab) RemoteIPs() []netip.Addr { return append([]netip.Addr(nil), l.opts.Remote...) }

// buildUplink makes the path out of the lab to the remote brokers, after
// the topology is built with the host as the broker side: routes to the
// remote addresses in the clients' and the router's namespaces, then the
// host's forwarding and nft table. The previous forwarding settings are
// recorded before anything on the host changes.
func (l *Lab) buildUplink(host foreignNS, routes []uplinkRoute) error {
	n := l.n
	st := uplinkState{}
	for _, ifc := range uplinkIfaces(routes) {
		v, err := os.ReadFile(forwardingPath(ifc))
		if err != nil {
			return fmt.Errorf("read forwarding of %s: %w", ifc, err)
		}
		st.Ifaces = append(st.Ifaces, uplinkIface{Name: ifc, Forwarding: strings.TrimSpace(string(v))})
	}
	for _, r := range routes {
		st.Remote = append(st.Remote, r.Addr)
	}
	if err := writeUplinkState(n.Prefix, st); err != nil {
		return err
	}
	for _, r := range routes {
		dst := r.Addr.String() + "/32"
		if err := addRoute(n.NsCli, dst, ipOf(rtrCliAddr)); err != nil {
			return err
		}
		if err := addRoute(n.NsRtr, dst, ipOf(brkAddr)); err != nil {
			return err
		}
	}
	if err := installUplinkNft(host.ref(), n, st); err != nil {
		return err
	}
	if err := writeSysctl(host.ref(), forwardingPath(n.BrkIf), "1"); err != nil {
		return fmt.Errorf("host: forwarding on %s: %w", n.BrkIf, err)
	}
	for _, ifc := range st.Ifaces {
		if err := writeSysctl(host.ref(), forwardingPath(ifc.Name), "1"); err != nil {
			return fmt.Errorf("host: forwarding on %s: %w", ifc.Name, err)
		}
	}
	return nil
}

func forwardingPath(ifc string) string { return "/proc/sys/net/ipv4/conf/" + ifc + "/forwarding" }

// cleanupUplink undoes what buildUplink did on the host, as recorded:
// the uplinks' forwarding goes back to what it was, the nft table goes,
// then the record. The veth end goes with cleanupForeign.
func cleanupUplink(n names) ([]string, error) {
	st, ok, err := readUplinkState(n.Prefix)
	if err != nil || !ok {
		return nil, err
	}
	host, err := hostNS()
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, ifc := range st.Ifaces {
		err := writeSysctl(host.ref(), forwardingPath(ifc.Name), ifc.Forwarding)
		switch {
		case errors.Is(err, os.ErrNotExist):
			removed = append(removed, fmt.Sprintf("the forwarding setting of %s (the interface is gone)", ifc.Name))
		case err != nil:
			errs = append(errs, fmt.Errorf("restore forwarding on %s: %w", ifc.Name, err))
		default:
			removed = append(removed, fmt.Sprintf("forwarding on %s (back to %s)", ifc.Name, ifc.Forwarding))
		}
	}
	gone, err := deleteUplinkNft(host.ref(), n)
	if err != nil {
		errs = append(errs, err)
	} else if gone {
		removed = append(removed, "nft table ip "+uplinkTable(n)+" on this host")
	}
	if len(errs) == 0 {
		if err := os.Remove(uplinkStatePath(n.Prefix)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return removed, errors.Join(errs...)
}
