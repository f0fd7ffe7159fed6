package netem

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// A foreign broker side (Options.BrokerPID): instead of making its own
// <prefix>-brk namespace, the lab puts the broker end of the router's veth
// pair into another process's network namespace, typically a container's.
// pslab adds only that veth end there (with its address, its route to the
// clients' net and IPv6 off on it) and removes only that; it never mounts,
// unmounts or deletes the namespace itself.

// ErrBadBrokerPID is wrapped when Options.BrokerPID cannot be used: no such
// process, a process in pslab's (the host's) own network namespace, or a
// namespace that already has the lab's interface name or addresses.
var ErrBadBrokerPID = errors.New("unusable broker pid")

// errNSGone is wrapped when a recorded foreign namespace no longer exists.
var errNSGone = errors.New("network namespace gone")

// foreignNS is another process's network namespace: a pid, and the inode
// the namespace had when the lab took it, checked on every open.
type foreignNS struct {
	PID int
	Ino uint64
}

// ref is how the namespace helpers (openNS, inNamedNS, withHandle) name a
// foreign namespace: "pid 1234 net:[4026532281]". Names of the lab's own
// namespaces are [a-z0-9-], so the two never collide.
// PID 0 is this host's namespace (brokers on other hosts, see remote.go):
// "host net:[4026531840]".
func (f foreignNS) ref() string {
	if f.PID == 0 {
		return fmt.Sprintf("host net:[%d]", f.Ino)
	}
	return fmt.Sprintf("pid %d net:[%d]", f.PID, f.Ino)
}

func (f foreignNS) String() string {
	if f.PID == 0 {
		return fmt.Sprintf("this host's network namespace (net:[%d])", f.Ino)
	}
	return fmt.Sprintf("the network namespace of pid %d (net:[%d])", f.PID, f.Ino)
}

// parseForeignRef reads a ref back; ok is false for a lab namespace's name.
func parseForeignRef(s string) (f foreignNS, ok bool) {
	if strings.HasPrefix(s, "host ") {
		if _, err := fmt.Sscanf(s, "host net:[%d]", &f.Ino); err != nil || f.ref() != s {
			return foreignNS{}, false
		}
		return f, true
	}
	if !strings.HasPrefix(s, "pid ") {
		return f, false
	}
	if _, err := fmt.Sscanf(s, "pid %d net:[%d]", &f.PID, &f.Ino); err != nil || f.PID <= 0 || f.ref() != s {
		return foreignNS{}, false
	}
	return f, true
}

func procNetNS(pid int) string { return "/proc/" + strconv.Itoa(pid) + "/ns/net" }

// open opens the namespace through /proc/PID/ns/net, and only if that is
// still the namespace with the recorded inode: a pid that was reused by
// another process (perhaps one on the host) is never entered.
func (f foreignNS) open() (netns.NsHandle, error) {
	path := procNetNS(f.PID)
	if f.PID == 0 {
		// This process's namespace: every thread not locked into a lab
		// namespace (inNS) is in it, this one too.
		path = "/proc/thread-self/ns/net"
	}
	ns, err := netns.GetFromPath(path)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ESRCH) {
			return netns.None(), fmt.Errorf("%w: %s: pid %d has exited (container stopped?)", errNSGone, f, f.PID)
		}
		return netns.None(), fmt.Errorf("open %s: %w", f, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(ns), &st); err != nil {
		ns.Close()
		return netns.None(), fmt.Errorf("stat %s: %w", f, err)
	}
	if st.Ino != f.Ino && f.PID == 0 {
		ns.Close()
		return netns.None(), fmt.Errorf("netem: the lab was made for %s, but this process runs in net:[%d]; run it in that namespace", f, st.Ino)
	}
	if st.Ino != f.Ino {
		ns.Close()
		return netns.None(), fmt.Errorf("%w: %s: pid %d is now in net:[%d] (the container stopped and its pid was reused?)", errNSGone, f, f.PID, st.Ino)
	}
	return ns, nil
}

// CheckBrokerPID reports whether pid's network namespace can be the broker
// side of a lab (Options.BrokerPID), without changing anything: the process
// must exist and must not be in pslab's own or pid 1's network namespace
// (the lab would put its address and a veth on the host). Errors wrap
// ErrBadBrokerPID. Up checks again, and also that the namespace has no
// interface named like the lab's and no address or route inside the lab's
// 10.77.1.0/30 and 10.77.2.0/30.
func CheckBrokerPID(pid int) error {
	_, err := inspectBrokerPID(pid)
	return err
}

func inspectBrokerPID(pid int) (foreignNS, error) {
	if pid <= 0 {
		return foreignNS{}, fmt.Errorf("netem: %w: %d is not a pid", ErrBadBrokerPID, pid)
	}
	var st unix.Stat_t
	if err := unix.Stat(procNetNS(pid), &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return foreignNS{}, fmt.Errorf("netem: %w: no process %d", ErrBadBrokerPID, pid)
		}
		return foreignNS{}, fmt.Errorf("netem: %w: network namespace of pid %d: %v", ErrBadBrokerPID, pid, err)
	}
	// thread-self, not self: /proc/self/ns/net is the main thread's, and the
	// main thread may be inside a lab namespace for a moment (inNS).
	for _, own := range []struct{ path, who string }{
		{"/proc/thread-self/ns/net", "pslab's own"},
		{"/proc/1/ns/net", "pid 1's (the host's)"},
	} {
		var o unix.Stat_t
		if unix.Stat(own.path, &o) == nil && o.Ino == st.Ino && o.Dev == st.Dev {
			return foreignNS{}, fmt.Errorf("netem: %w: pid %d is in %s network namespace net:[%d], not a container's: "+
				"the lab would put its veth and %s on the host; give the pid of a process in the broker's "+
				"container (docker inspect -f '{{.State.Pid}}' CONTAINER)", ErrBadBrokerPID, pid, own.who, st.Ino, brkAddr)
		}
	}
	return foreignNS{PID: pid, Ino: st.Ino}, nil
}

// checkForeignFree refuses a namespace that already has an interface with
// the lab's broker-side name, an address inside the lab's two nets, or a
// route into them: the lab must not change or shadow anything there.
func checkForeignFree(f foreignNS, n names) error {
	refuse := func(format string, a ...any) error {
		return fmt.Errorf("netem: %w: %s %s; pslab changes nothing there", ErrBadBrokerPID, f, fmt.Sprintf(format, a...))
	}
	nets := []*net.IPNet{mustCIDR(brkNet), mustCIDR(cliNet)}
	inLab := func(ip net.IP) *net.IPNet {
		for _, nw := range nets {
			if nw.Contains(ip) {
				return nw
			}
		}
		return nil
	}
	return withHandle(f.ref(), func(h *netlink.Handle) error {
		_, err := h.LinkByName(n.BrkIf)
		if err == nil {
			return refuse("already has an interface %s (another lab's? remove it with pslab netem down --lab %s)", n.BrkIf, n.Prefix)
		}
		if !errors.As(err, &netlink.LinkNotFoundError{}) {
			return fmt.Errorf("look for %s: %w", n.BrkIf, err)
		}
		links, err := h.LinkList()
		if err != nil {
			return err
		}
		for _, link := range links {
			addrs, err := h.AddrList(link, netlink.FAMILY_V4)
			if err != nil {
				return err
			}
			for _, a := range addrs {
				if nw := inLab(a.IP); nw != nil {
					return refuse("already has address %s on %s, inside the lab's %s", a.IPNet, link.Attrs().Name, nw)
				}
			}
		}
		routes, err := h.RouteList(nil, netlink.FAMILY_V4)
		if err != nil {
			return err
		}
		for _, r := range routes {
			if r.Dst == nil {
				continue
			}
			if ones, _ := r.Dst.Mask.Size(); ones >= 30 {
				if nw := inLab(r.Dst.IP); nw != nil {
					return refuse("already has a route to %s, inside the lab's %s", r.Dst, nw)
				}
			}
		}
		return nil
	})
}

func mustCIDR(s string) *net.IPNet {
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		panic(err)
	}
	return n
}

// foreignAlias marks the veth end pslab puts into a foreign namespace, so
// that cleanup deletes only an interface pslab made (and `ip link` there
// says what it is).
func foreignAlias(n names) string {
	return "pslab netem lab " + n.Prefix + ": broker end of the link, peer " + n.RtrBrkIf + " in netns " + n.NsRtr
}

// prepareForeignEnd marks the new veth end in the foreign namespace and
// switches IPv6 off on it alone (before it comes up, so it sends no router
// solicitations or MLD reports the counters would see). The namespace's
// other sysctls are left as they are.
func prepareForeignEnd(f foreignNS, n names) error {
	err := withHandle(f.ref(), func(h *netlink.Handle) error {
		link, err := h.LinkByName(n.BrkIf)
		if err != nil {
			return fmt.Errorf("find %s: %w", n.BrkIf, err)
		}
		return h.LinkSetAlias(link, foreignAlias(n))
	})
	if err != nil {
		return fmt.Errorf("%s: %w", f, err)
	}
	return inNamedNS(f.ref(), func() error {
		if _, err := os.Stat("/proc/sys/net/ipv6"); errors.Is(err, os.ErrNotExist) {
			return nil // no IPv6 in this kernel
		}
		if err := os.WriteFile("/proc/sys/net/ipv6/conf/"+n.BrkIf+"/disable_ipv6", []byte("1"), 0o644); err != nil {
			return fmt.Errorf("%s: disable IPv6 on %s: %w", f, n.BrkIf, err)
		}
		return nil
	})
}

// removeForeignEnd deletes the lab's veth end from the foreign namespace
// (which deletes its peer, its address and its routes too) if it is there
// and is pslab's, and says what happened. A namespace that is gone took the
// veth with it.
func removeForeignEnd(f foreignNS, n names) (string, error) {
	var what string
	err := withHandle(f.ref(), func(h *netlink.Handle) error {
		link, err := h.LinkByName(n.BrkIf)
		if errors.As(err, &netlink.LinkNotFoundError{}) {
			what = fmt.Sprintf("the record of the broker side in %s (its veth %s was already gone)", f, n.BrkIf)
			return nil
		}
		if err != nil {
			return fmt.Errorf("find %s: %w", n.BrkIf, err)
		}
		if link.Type() != "veth" || link.Attrs().Alias != foreignAlias(n) {
			what = fmt.Sprintf("the record of the broker side in %s (%s there is a %s with alias %q, not pslab's: left alone)",
				f, n.BrkIf, link.Type(), link.Attrs().Alias)
			return nil
		}
		if err := h.LinkDel(link); err != nil {
			return fmt.Errorf("delete %s: %w", n.BrkIf, err)
		}
		what = fmt.Sprintf("veth %s (%s, route to %s) from %s; the namespace itself is left alone", n.BrkIf, brkAddr, cliNet, f)
		return nil
	})
	if errors.Is(err, errNSGone) {
		return fmt.Sprintf("the record of the broker side in %s (that namespace is gone, and the veth with it)", f), nil
	}
	return what, err
}

// cleanupForeign removes what an earlier Up with this prefix put into a
// foreign namespace, as recorded in the state file, then the record.
func cleanupForeign(n names) ([]string, error) {
	f, ok, err := readBrokerState(n.Prefix)
	if err != nil || !ok {
		return nil, err
	}
	what, err := removeForeignEnd(f, n)
	if err != nil {
		return nil, fmt.Errorf("remove the broker side from %s: %w", f, err)
	}
	if err := os.Remove(brokerStatePath(n.Prefix)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return []string{what}, err
	}
	return []string{what}, nil
}

// The state file /run/pslab-<prefix>.broker, next to the lock file, records
// a foreign broker side from Up until the veth is removed from it, so that
// Down, Cleanup and the next Up in any process find it, and so that every
// process's Lab of that prefix (pslab netem show, for one) knows where the
// broker side is.
func brokerStatePath(prefix string) string { return "/run/pslab-" + prefix + ".broker" }

func writeBrokerState(prefix string, f foreignNS) error {
	p := brokerStatePath(prefix)
	body := fmt.Sprintf("# pslab netem lab %s: the broker end of its link is in another process's network namespace\npid %d\nnetns %d\n",
		prefix, f.PID, f.Ino)
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, []byte(body), 0o600); err != nil {
		return fmt.Errorf("netem: record the broker side: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("netem: record the broker side: %w", err)
	}
	return nil
}

// readBrokerState reads the state file; ok is false when there is none
// (the broker side is the lab's own namespace).
func readBrokerState(prefix string) (f foreignNS, ok bool, err error) {
	p := brokerStatePath(prefix)
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return f, false, nil
	}
	if err != nil {
		return f, false, fmt.Errorf("netem: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch k {
		case "pid":
			f.PID, _ = strconv.Atoi(v)
		case "netns":
			f.Ino, _ = strconv.ParseUint(v, 10, 64)
		}
	}
	if f.PID < 0 || f.Ino == 0 { // pid 0: this host's namespace (remote.go)
		return foreignNS{}, false, fmt.Errorf("netem: %s is not a pslab broker record (want lines \"pid N\" and \"netns INODE\"); check it and remove it", p)
	}
	return f, true, nil
}
