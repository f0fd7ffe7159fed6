package netem

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// Up removes the leftovers of any earlier (crashed) run with the same prefix,
// then builds the three namespaces, the two veth pairs, addresses and routes,
// turns forwarding on in the router and offloads off on the veths. The link
// is left unshaped (as wireline) until Apply. On error nothing is left.
//
// With Options.BrokerPID, the broker side is that process's namespace
// instead of <prefix>-brk: Up refuses (ErrBadBrokerPID) a pid that does not
// exist, one in pslab's or pid 1's own namespace, and a namespace that
// already has an interface named <prefix>-b0 or an address or route inside
// 10.77.1.0/30 or 10.77.2.0/30. It records the namespace (pid and inode) in
// /run/pslab-<prefix>.broker before it adds the veth end there.
func (l *Lab) Up(ctx context.Context) error {
	if l.badOpt != nil {
		return l.badOpt
	}
	if l.first != nil {
		return errSecondLink("up")
	}
	var foreign *foreignNS
	if l.opts.BrokerPID != 0 {
		f, err := inspectBrokerPID(l.opts.BrokerPID)
		if err != nil {
			return err
		}
		foreign = &f
	}
	uplinks, err := planUplinks(l.opts.Remote)
	if err != nil {
		return err
	}
	if len(uplinks) > 0 { // brokers on other hosts: the broker side is this host
		f, err := hostNS()
		if err != nil {
			return err
		}
		foreign = &f
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lock == nil {
		f, err := acquireLock(l.n.Prefix)
		if err != nil {
			return err
		}
		l.lock = f
	}
	if _, err := cleanup(l.n); err != nil {
		return fmt.Errorf("netem: clean up before up: %w", err)
	}
	l.applied, l.backend = nil, ""
	brk := l.n.NsBrk
	if foreign != nil {
		if err := checkForeignFree(*foreign, l.n); err != nil {
			l.unlock()
			return err
		}
		if err := writeBrokerState(l.n.Prefix, *foreign); err != nil {
			l.unlock()
			return err
		}
		brk = foreign.ref()
	}
	err = l.build(ctx, brk, foreign)
	if err == nil && len(uplinks) > 0 {
		err = l.buildUplink(*foreign, uplinks)
	}
	if err == nil && l.opts.TCPCongestion != "" {
		err = l.setCongestionControl(l.opts.TCPCongestion)
	}
	if err != nil {
		_, cerr := cleanup(l.n)
		l.unlock()
		return errors.Join(fmt.Errorf("netem: up: %w", err), cerr)
	}
	l.applied, l.backend = &unshaped, BackendNone
	if s := l.second; s != nil {
		s.mu.Lock()
		s.applied, s.backend = &unshaped, BackendNone
		s.mu.Unlock()
	}
	return nil
}

func errSecondLink(what string) error {
	return fmt.Errorf("netem: the second link of a lab is brought %s with the lab (its first link)", what)
}

// Down removes the namespaces (and with them the veths, the IFB and the nft
// table inside); with a foreign broker side (Options.BrokerPID) it deletes
// the lab's veth end from that namespace and leaves the namespace alone.
// Calling it again, or on a lab that is not up, is fine.
func (l *Lab) Down() error {
	if l.badOpt != nil {
		return l.badOpt
	}
	if l.first != nil {
		return errSecondLink("down")
	}
	var serr error
	if s := l.second; s != nil {
		s.mu.Lock()
		s.applied, s.backend = nil, ""
		if l.lock != nil {
			serr = s.stopRelay()
		}
		s.mu.Unlock()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.applied, l.backend = nil, ""
	if l.lock == nil {
		// Not held by this Lab: only leftovers may be removed.
		_, err := Cleanup(l.n.Prefix)
		return err
	}
	err := errors.Join(serr, l.stopRelay())
	_, cerr := cleanup(l.n)
	if err = errors.Join(err, cerr); err == nil {
		l.unlock()
	}
	return err
}

// unlock releases the lab's lock (l.mu held).
func (l *Lab) unlock() {
	if l.lock != nil {
		releaseLock(l.n.Prefix, l.lock)
		l.lock = nil
	}
}

// IsUp reports whether the lab's three namespaces exist (with a foreign
// broker side: the client and router namespaces, and the lab's veth end in
// the foreign one).
func (l *Lab) IsUp() bool {
	brk, err := l.brokerNS()
	if err != nil || !namedNSExists(l.n.NsCli) || !namedNSExists(l.n.NsRtr) {
		return false
	}
	if _, ok := parseForeignRef(brk); ok {
		return withHandle(brk, func(h *netlink.Handle) error {
			_, err := h.LinkByName(l.n.BrkIf)
			return err
		}) == nil
	}
	return namedNSExists(brk)
}

// Cleanup removes whatever an earlier run with this prefix left: its named
// namespaces (the veths, IFB and nft table live inside them and go with
// them) and, if its broker side was another process's namespace, its veth
// end there (never that namespace). It says what it removed; processes
// still running inside a removed namespace are named (they keep it alive
// but are not killed). A lab held by another live process is not a
// leftover: Cleanup then returns an error wrapping ErrInUse and removes
// nothing.
func Cleanup(prefix string) (removed []string, err error) {
	n, err := namesFor(prefix)
	if err != nil {
		return nil, err
	}
	if held, _ := lockHeld(n.Prefix); held {
		return nil, inUseErr(n.Prefix)
	}
	return cleanup(n)
}

// cleanup removes the lab's veth end from a recorded foreign broker
// namespace, then the lab's own namespaces, without asking who holds them.
func cleanup(n names) (removed []string, err error) {
	n1 := secondNames(n)
	relays, rerr := killRelays(n.Relay)
	relays1, rerr1 := killRelays(n1.Relay)
	uremoved, uerr := cleanupUplink(n)
	removed = append(append(relays, relays1...), uremoved...)
	fremoved, ferr := cleanupForeign(n)
	removed = append(removed, fremoved...)
	errs := []error{rerr, rerr1, uerr, ferr}
	for _, ns := range []string{n.NsCli, n1.NsCli, n.NsRtr, n.NsBrk} {
		if !namedNSExists(ns) {
			continue
		}
		what := "network namespace " + ns
		if pids := pidsInNS(ns); len(pids) > 0 {
			what += fmt.Sprintf(" (processes still inside, not killed: %v)", pids)
		}
		if err := deleteNamedNS(ns); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, what)
	}
	return removed, errors.Join(errs...)
}

// build makes the topology with the broker side in brk: the lab's own
// namespace, or the foreign one (then foreign is set, and pslab creates and
// changes nothing in it but its veth end and that end's address and route).
// With a second link it makes that link's client namespace and veths too.
func (l *Lab) build(ctx context.Context, brk string, foreign *foreignNS) error {
	n := l.n
	paths := []names{n}
	if l.second != nil {
		paths = append(paths, l.second.n)
	}
	own := []string{n.NsRtr}
	for _, p := range paths {
		own = append(own, p.NsCli)
	}
	if foreign == nil {
		own = append(own, n.NsBrk)
	}
	for _, ns := range own {
		if err := createNamedNS(ns); err != nil {
			return err
		}
	}
	// IPv4 only: no IPv6 router solicitations or MLD reports on the lab's
	// links, so the counters see only the traffic of a run.
	for _, ns := range own {
		for _, f := range []string{"all", "default"} {
			if err := writeSysctl(ns, "/proc/sys/net/ipv6/conf/"+f+"/disable_ipv6", "1"); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("%s: disable IPv6: %w", ns, err)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, p := range paths {
		if err := makeVeths(p, brk); err != nil {
			return err
		}
	}
	if foreign != nil {
		if err := prepareForeignEnd(*foreign, n); err != nil {
			return err
		}
	}
	type ifc struct{ ns, dev, addr string }
	var ifcs []ifc
	for _, p := range paths {
		ifcs = append(ifcs, ifc{p.NsCli, p.CliIf, p.CliAddr}, ifc{p.NsRtr, p.RtrCliIf, p.RtrCliAddr},
			ifc{p.NsRtr, p.RtrBrkIf, p.RtrBrkAddr}, ifc{brk, p.BrkIf, p.BrkEndAddr})
	}
	for _, i := range ifcs {
		if err := disableOffloads(i.ns, i.dev); err != nil {
			return err
		}
		if err := configureLink(i.ns, i.dev, i.addr); err != nil {
			return err
		}
	}
	for _, ns := range own {
		if err := withHandle(ns, func(h *netlink.Handle) error { return linkUp(h, "lo") }); err != nil {
			return err
		}
	}
	for _, p := range paths {
		// The broker's address is on the first link's broker end; every
		// link's clients reach it through their own router veths.
		if err := addRoute(p.NsCli, brkNet, ipOf(p.RtrCliAddr)); err != nil {
			return err
		}
		if err := addRoute(brk, p.CliNet, ipOf(p.RtrBrkAddr)); err != nil {
			return err
		}
	}
	if l.second != nil {
		if err := routeSecondLink(l.second.n); err != nil {
			return err
		}
	}
	if err := writeSysctl(n.NsRtr, "/proc/sys/net/ipv4/ip_forward", "1"); err != nil {
		return fmt.Errorf("router: enable forwarding: %w", err)
	}
	for _, p := range paths {
		if err := waitOperUp(ctx, p.NsCli, p.CliIf, brk, p.BrkIf); err != nil {
			return err
		}
	}
	return nil
}

// routeSecondLink sends what the second link's clients send to the broker
// out of that link's own veth (a routing table of its own, chosen by the
// interface the packets came in on), and turns the router's reverse-path
// filter off: a broker's reply comes back on the second link's veth from
// an address the main table routes through the first.
func routeSecondLink(n names) error {
	err := withHandle(n.NsRtr, func(h *netlink.Handle) error {
		link, err := h.LinkByName(n.RtrBrkIf)
		if err != nil {
			return fmt.Errorf("find %s: %w", n.RtrBrkIf, err)
		}
		_, dst, err := net.ParseCIDR(brkNet)
		if err != nil {
			return err
		}
		r := &netlink.Route{Dst: dst, Gw: net.ParseIP(ipOf(n.BrkEndAddr)), LinkIndex: link.Attrs().Index, Table: secondLinkTable}
		if err := h.RouteAdd(r); err != nil {
			return fmt.Errorf("route %s via %s in table %d: %w", brkNet, ipOf(n.BrkEndAddr), secondLinkTable, err)
		}
		rule := netlink.NewRule()
		rule.IifName, rule.Table, rule.Priority = n.RtrCliIf, secondLinkTable, 100
		if err := h.RuleAdd(rule); err != nil {
			return fmt.Errorf("rule iif %s lookup %d: %w", n.RtrCliIf, secondLinkTable, err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("router: second link: %w", err)
	}
	for _, dev := range []string{"all", "default", n.RtrCliIf, n.RtrBrkIf} {
		if err := writeSysctl(n.NsRtr, "/proc/sys/net/ipv4/conf/"+dev+"/rp_filter", "0"); err != nil {
			return fmt.Errorf("router: reverse-path filter off on %s: %w", dev, err)
		}
	}
	return nil
}

// makeVeths creates a link's two veth pairs from inside the router
// namespace, with the peer ends placed straight into the link's client
// namespace and the broker namespace (brk: a name or a foreign ref), so no
// interface ever appears in the host's namespace.
func makeVeths(n names, brkNS string) error {
	cli, err := openNS(n.NsCli)
	if err != nil {
		return err
	}
	defer cli.Close()
	brk, err := openNS(brkNS)
	if err != nil {
		return err
	}
	defer brk.Close()
	return withHandle(n.NsRtr, func(h *netlink.Handle) error {
		for _, v := range []struct {
			name, peer string
			ns         netns.NsHandle
		}{{n.RtrCliIf, n.CliIf, cli}, {n.RtrBrkIf, n.BrkIf, brk}} {
			veth := &netlink.Veth{
				LinkAttrs:     netlink.LinkAttrs{Name: v.name, MTU: 1500},
				PeerName:      v.peer,
				PeerNamespace: netlink.NsFd(int(v.ns)),
			}
			if err := h.LinkAdd(veth); err != nil {
				return fmt.Errorf("create veth %s <-> %s: %w", v.name, v.peer, err)
			}
		}
		return nil
	})
}

func configureLink(nsName, dev, cidr string) error {
	return withHandle(nsName, func(h *netlink.Handle) error {
		link, err := h.LinkByName(dev)
		if err != nil {
			return fmt.Errorf("%s: find %s: %w", nsName, dev, err)
		}
		addr, err := netlink.ParseAddr(cidr)
		if err != nil {
			return err
		}
		if err := h.AddrAdd(link, addr); err != nil {
			return fmt.Errorf("%s: address %s on %s: %w", nsName, cidr, dev, err)
		}
		return linkUp(h, dev)
	})
}

func linkUp(h *netlink.Handle, dev string) error {
	link, err := h.LinkByName(dev)
	if err != nil {
		return fmt.Errorf("find %s: %w", dev, err)
	}
	if err := h.LinkSetUp(link); err != nil {
		return fmt.Errorf("set %s up: %w", dev, err)
	}
	return nil
}

func addRoute(nsName, dst, via string) error {
	return withHandle(nsName, func(h *netlink.Handle) error {
		_, dnet, err := net.ParseCIDR(dst)
		if err != nil {
			return err
		}
		r := &netlink.Route{Dst: dnet, Gw: net.ParseIP(via)}
		if err := h.RouteAdd(r); err != nil {
			return fmt.Errorf("%s: route %s via %s: %w", nsName, dst, via, err)
		}
		return nil
	})
}

// waitOperUp waits until the client and broker ends report carrier (both
// veth ends up), so the first packet of a run is not lost to link setup.
func waitOperUp(ctx context.Context, ns1, dev1, ns2, dev2 string) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		up1, err1 := operUp(ns1, dev1)
		up2, err2 := operUp(ns2, dev2)
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		if up1 && up2 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("veths %s/%s not up after 5 s", dev1, dev2)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func operUp(nsName, dev string) (bool, error) {
	var up bool
	err := withHandle(nsName, func(h *netlink.Handle) error {
		link, err := h.LinkByName(dev)
		if err != nil {
			return err
		}
		up = link.Attrs().OperState == netlink.OperUp
		return nil
	})
	return up, err
}
