package netem

// Helpers of the foreign-broker tests (foreign_test.go): a stand-in for a
// broker container, snapshots of its namespace, and checks that a lab is
// gone and a process alive.

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// standIn starts a stand-in for a broker container: a process in a fresh
// network namespace of its own. It is killed at the end of the test.
func standIn(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start a process in a new network namespace: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

// inChild runs fn with a netlink handle inside pid's network namespace.
func inChild(t *testing.T, pid int, fn func(h *netlink.Handle) error) {
	t.Helper()
	ns, err := netns.GetFromPid(pid)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := fn(h); err != nil {
		t.Fatal(err)
	}
}

// containerize gives the stand-in what a container's namespace has: lo up,
// an interface with an address (a veth pair inside that namespace, so it
// leads nowhere) and a default route over it. IPv6 duplicate address
// detection is off there, so the link-local addresses and their routes are
// complete at once rather than a second later, in the middle of the test.
func containerize(t *testing.T, pid int) {
	t.Helper()
	ns, err := netns.GetFromPid(pid)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	err = inNS(ns, func() error {
		for _, c := range []string{"all", "default"} {
			err := os.WriteFile("/proc/sys/net/ipv6/conf/"+c+"/accept_dad", []byte("0"), 0o644)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	inChild(t, pid, func(h *netlink.Handle) error {
		if err := h.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "ctr0"}, PeerName: "ctr1"}); err != nil {
			return err
		}
		for _, name := range []string{"lo", "ctr1", "ctr0"} {
			if err := linkUp(h, name); err != nil {
				return err
			}
		}
		ctr0, err := h.LinkByName("ctr0")
		if err != nil {
			return err
		}
		if err := h.AddrAdd(ctr0, mustAddr("172.31.77.2/24")); err != nil {
			return err
		}
		return h.RouteAdd(&netlink.Route{LinkIndex: ctr0.Attrs().Index, Gw: net.ParseIP("172.31.77.1")})
	})
}

func mustAddr(s string) *netlink.Addr {
	a, err := netlink.ParseAddr(s)
	if err != nil {
		panic(err)
	}
	return a
}

// nsSnapshot lists the links, addresses, routes (all tables) and the
// sysctls the lab sets in its own namespaces, as seen in pid's network
// namespace; it waits until two reads agree (IPv6 link-local set-up).
func nsSnapshot(t *testing.T, pid int) []string {
	t.Helper()
	var prev []string
	for range 20 {
		s := nsSnapshotOnce(t, pid)
		if strings.Join(s, "\n") == strings.Join(prev, "\n") {
			return s
		}
		prev = s
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the namespace of pid %d does not settle:\n%s", pid, strings.Join(prev, "\n"))
	return nil
}

func nsSnapshotOnce(t *testing.T, pid int) []string {
	var lines []string
	inChild(t, pid, func(h *netlink.Handle) error {
		links, err := h.LinkList()
		if err != nil {
			return err
		}
		names := map[int]string{}
		for _, l := range links {
			a := l.Attrs()
			names[a.Index] = a.Name
			lines = append(lines, fmt.Sprintf("link %s %s mtu %d flags %v alias %q", a.Name, l.Type(), a.MTU, a.Flags, a.Alias))
			addrs, err := h.AddrList(l, netlink.FAMILY_ALL)
			if err != nil {
				return err
			}
			for _, ad := range addrs {
				lines = append(lines, fmt.Sprintf("addr %s %s", a.Name, ad.IPNet))
			}
		}
		routes, err := h.RouteListFiltered(netlink.FAMILY_ALL, &netlink.Route{Table: unix.RT_TABLE_UNSPEC}, netlink.RT_FILTER_TABLE)
		if err != nil {
			return err
		}
		for _, r := range routes {
			lines = append(lines, fmt.Sprintf("route table %d type %d dst %v gw %v dev %s", r.Table, r.Type, r.Dst, r.Gw, names[r.LinkIndex]))
		}
		return nil
	})
	ns, err := netns.GetFromPid(pid)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	err = inNS(ns, func() error {
		for _, f := range []string{"ipv4/ip_forward", "ipv4/conf/all/rp_filter", "ipv6/conf/all/disable_ipv6", "ipv6/conf/default/disable_ipv6"} {
			b, err := os.ReadFile("/proc/sys/net/" + f)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			lines = append(lines, fmt.Sprintf("sysctl %s %s", f, strings.TrimSpace(string(b))))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return lines
}

// nsDiff returns the lines only in a, and the lines only in b.
func nsDiff(a, b []string) (onlyA, onlyB []string) {
	in := func(s []string) map[string]bool {
		m := map[string]bool{}
		for _, x := range s {
			m[x] = true
		}
		return m
	}
	ma, mb := in(a), in(b)
	for _, x := range a {
		if !mb[x] {
			onlyA = append(onlyA, x)
		}
	}
	for _, x := range b {
		if !ma[x] {
			onlyB = append(onlyB, x)
		}
	}
	return onlyA, onlyB
}

// assertLabGone checks that the lab with this prefix left no namespace, no
// interface on the host, no broker record and no held lock.
func assertLabGone(t *testing.T, prefix string) {
	t.Helper()
	n, _ := namesFor(prefix)
	for _, ns := range []string{n.NsCli, n.NsRtr, n.NsBrk} {
		if _, err := os.Stat(filepath.Join(netnsDir, ns)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("namespace %s still there (%v)", ns, err)
		}
	}
	for _, dev := range []string{n.IFB, n.CliIf, n.BrkIf, n.RtrCliIf, n.RtrBrkIf} {
		if _, err := netlink.LinkByName(dev); err == nil {
			t.Errorf("interface %s exists in the host namespace", dev)
		}
	}
	if _, err := os.Stat(brokerStatePath(prefix)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("broker record %s still there (%v)", brokerStatePath(prefix), err)
	}
	if held, pid := lockHeld(prefix); held {
		t.Errorf("lock of %s still held by %d", prefix, pid)
	}
}

// assertAlive checks that the stand-in still runs in the namespace it had.
func assertAlive(t *testing.T, cmd *exec.Cmd, ino uint64) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the stand-in container (pid %d) is gone: %v", cmd.Process.Pid, err)
	}
	if got := nsInode(t, procNetNS(cmd.Process.Pid)); got != ino {
		t.Fatalf("the stand-in's namespace changed: net:[%d], was net:[%d]", got, ino)
	}
}

// echo makes n connections from the client side to ln and checks an echo
// on each, and that the broker side saw the client's address.
func echo(t *testing.T, l *Lab, ln net.Listener, n int) {
	t.Helper()
	for i := range n {
		done := make(chan net.Addr, 1)
		go func() {
			c, err := ln.Accept()
			if err != nil {
				done <- nil
				return
			}
			defer c.Close()
			_, _ = io.Copy(c, c)
			done <- c.RemoteAddr()
		}()
		c, err := l.DialContext(t.Context(), "tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		msg := fmt.Sprintf("hello %d", i)
		if _, err := c.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, len(msg))
		if _, err := io.ReadFull(c, buf); err != nil || string(buf) != msg {
			t.Fatalf("echo %q: %q %v", msg, buf, err)
		}
		c.Close()
		if ra := <-done; ra == nil || ra.(*net.TCPAddr).IP.String() != l.ClientIP() {
			t.Fatalf("broker side saw the connection from %v, want %s", ra, l.ClientIP())
		}
	}
}
