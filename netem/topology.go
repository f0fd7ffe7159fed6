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
func (l *Lab) Up(ctx context.Context) error {
	if l.badOpt != nil {
		return l.badOpt
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
	if err := l.build(ctx); err != nil {
		_, cerr := cleanup(l.n)
		l.unlock()
		return errors.Join(fmt.Errorf("netem: up: %w", err), cerr)
	}
	l.applied, l.backend = &unshaped, BackendNone
	return nil
}

// Down removes the namespaces (and with them the veths, the IFB and the nft
// table inside). Calling it again, or on a lab that is not up, is fine.
func (l *Lab) Down() error {
	if l.badOpt != nil {
		return l.badOpt
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.applied, l.backend = nil, ""
	if l.lock == nil {
		// Not held by this Lab: only leftovers may be removed.
		_, err := Cleanup(l.n.Prefix)
		return err
	}
	_, err := cleanup(l.n)
	if err == nil {
		l.unlock()
	}
	return err
}

// unlock releases the lab's lock (l.mu held).
func (l *Lab) unlock() {
	if l.lock != nil {
		l.lock.Close()
		l.lock = nil
	}
}

// IsUp reports whether the lab's three namespaces exist.
func (l *Lab) IsUp() bool {
	return namedNSExists(l.n.NsCli) && namedNSExists(l.n.NsRtr) && namedNSExists(l.n.NsBrk)
}

// Cleanup removes whatever an earlier run with this prefix left: its named
// namespaces (the veths, IFB and nft table live inside them and go with
// them). It says what it removed; processes still running inside a removed
// namespace are named (they keep it alive but are not killed). A lab held
// by another live process is not a leftover: Cleanup then returns an error
// wrapping ErrInUse and removes nothing.
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

// cleanup removes the namespaces without asking who holds them.
func cleanup(n names) (removed []string, err error) {
	var errs []error
	for _, ns := range []string{n.NsCli, n.NsRtr, n.NsBrk} {
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

func (l *Lab) build(ctx context.Context) error {
	n := l.n
	for _, ns := range []string{n.NsCli, n.NsRtr, n.NsBrk} {
		if err := createNamedNS(ns); err != nil {
			return err
		}
	}
	// IPv4 only: no IPv6 router solicitations or MLD reports on the lab's
	// links, so the counters see only the traffic of a run.
	for _, ns := range []string{n.NsCli, n.NsRtr, n.NsBrk} {
		for _, f := range []string{"all", "default"} {
			if err := writeSysctl(ns, "/proc/sys/net/ipv6/conf/"+f+"/disable_ipv6", "1"); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("%s: disable IPv6: %w", ns, err)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := l.makeVeths(); err != nil {
		return err
	}
	type ifc struct{ ns, dev, addr string }
	ifcs := []ifc{
		{n.NsCli, n.CliIf, cliAddr}, {n.NsRtr, n.RtrCliIf, rtrCliAddr},
		{n.NsRtr, n.RtrBrkIf, rtrBrkAddr}, {n.NsBrk, n.BrkIf, brkAddr},
	}
	for _, i := range ifcs {
		if err := disableOffloads(i.ns, i.dev); err != nil {
			return err
		}
		if err := configureLink(i.ns, i.dev, i.addr); err != nil {
			return err
		}
	}
	for _, ns := range []string{n.NsCli, n.NsRtr, n.NsBrk} {
		if err := withHandle(ns, func(h *netlink.Handle) error { return linkUp(h, "lo") }); err != nil {
			return err
		}
	}
	if err := addRoute(n.NsCli, brkNet, ipOf(rtrCliAddr)); err != nil {
		return err
	}
	if err := addRoute(n.NsBrk, cliNet, ipOf(rtrBrkAddr)); err != nil {
		return err
	}
	if err := writeSysctl(n.NsRtr, "/proc/sys/net/ipv4/ip_forward", "1"); err != nil {
		return fmt.Errorf("router: enable forwarding: %w", err)
	}
	return waitOperUp(ctx, ifcs[0].ns, ifcs[0].dev, ifcs[3].ns, ifcs[3].dev)
}

// makeVeths creates both veth pairs from inside the router namespace, with
// the peer ends placed straight into the client and broker namespaces, so
// no interface ever appears in the host's namespace.
func (l *Lab) makeVeths() error {
	n := l.n
	cli, err := openNS(n.NsCli)
	if err != nil {
		return err
	}
	defer cli.Close()
	brk, err := openNS(n.NsBrk)
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
