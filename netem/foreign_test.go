package netem

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// foreignPrefix names the labs of the foreign-broker tests.
const foreignPrefix = "pslabpid"

func TestForeignRefRoundTrip(t *testing.T) {
	f := foreignNS{PID: 4242, Ino: 4026532281}
	if got, ok := parseForeignRef(f.ref()); !ok || got != f {
		t.Fatalf("parse(%q) = %+v %v", f.ref(), got, ok)
	}
	for _, s := range []string{"pslab-brk", "pid 0 net:[5]", "pid 12 net:[5] x", "pid x net:[5]", "pid 12", ""} {
		if _, ok := parseForeignRef(s); ok {
			t.Errorf("%q parsed as a foreign ref", s)
		}
	}
	if err := CheckOptions(Options{BrokerPID: -3}); !errors.Is(err, ErrBadBrokerPID) {
		t.Errorf("negative BrokerPID: %v", err)
	}
}

// TestCheckBrokerPIDRefusals needs no root: a pid that cannot exist and
// this process's own (the host's) namespace are refused.
func TestCheckBrokerPIDRefusals(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		t.Skip(err)
	}
	pidMax, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pid  int
		want string
	}{
		{0, "not a pid"},
		{pidMax, "no process"}, // pids are below pid_max
		{os.Getpid(), "pslab's own network namespace"},
	} {
		err := CheckBrokerPID(c.pid)
		if !errors.Is(err, ErrBadBrokerPID) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckBrokerPID(%d) = %v, want ErrBadBrokerPID saying %q", c.pid, err, c.want)
		}
	}
}

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

// TestForeignBrokerSide: with BrokerPID the broker end of the link is put
// into another process's namespace. Traffic crosses the router, wifi-paper
// applies, and Down takes out exactly what Up added there, leaving the
// namespace, its process and the host as they were.
func TestForeignBrokerSide(t *testing.T) {
	requireRoot(t)
	host := hostSnapshot(t)
	child := standIn(t)
	pid := child.Process.Pid
	childNS := nsInode(t, procNetNS(pid))
	containerize(t, pid)
	before := nsSnapshot(t, pid)

	l := New(Options{Prefix: foreignPrefix, Backend: BackendTBFNft, BrokerPID: pid})
	if err := l.Up(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer l.Down()
	if namedNSExists(l.n.NsBrk) {
		t.Errorf("Up made its own %s although the broker side is pid %d's", l.n.NsBrk, pid)
	}
	_, _, brk := l.Namespaces()
	if want := (foreignNS{pid, childNS}).ref(); brk != want {
		t.Errorf("broker namespace %q, want %q", brk, want)
	}
	if !l.IsUp() {
		t.Error("IsUp is false")
	}

	// Only the lab's veth end, its address and its routes were added.
	during := nsSnapshot(t, pid)
	gone, added := nsDiff(before, during)
	if len(gone) > 0 {
		t.Errorf("Up changed or removed in the foreign namespace:\n%s", strings.Join(gone, "\n"))
	}
	var sawAddr, sawRoute bool
	for _, a := range added {
		if !strings.Contains(a, l.n.BrkIf) {
			t.Errorf("Up added something other than its veth: %s", a)
		}
		sawAddr = sawAddr || a == "addr "+l.n.BrkIf+" "+brkAddr
		sawRoute = sawRoute || strings.Contains(a, "dst "+cliNet+" gw "+ipOf(rtrBrkAddr))
		if strings.Contains(a, "fe80") {
			t.Errorf("IPv6 is on on the lab's veth: %s", a)
		}
	}
	if !sawAddr || !sawRoute {
		t.Errorf("the broker side lacks its address or route:\n%s", strings.Join(added, "\n"))
	}
	off, err := offloadState(brk, l.n.BrkIf)
	if err != nil {
		t.Fatal(err)
	}
	for k, on := range off {
		if on {
			t.Errorf("%s is on on %s", k, l.n.BrkIf)
		}
	}

	// Processes and sockets of the broker side are in the foreign namespace.
	cmd := exec.Command("readlink", "/proc/self/ns/net")
	var out strings.Builder
	cmd.Stdout = &out
	if err := l.StartInBroker(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(out.String()), fmt.Sprintf("net:[%d]", childNS); got != want {
		t.Fatalf("StartInBroker ran in %s, want the stand-in's %s", got, want)
	}
	ln, err := l.ListenBroker("tcp", net.JoinHostPort(l.BrokerIP(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c0, err := l.Counters()
	if err != nil {
		t.Fatal(err)
	}
	echo(t, l, ln, 5)
	if _, err := l.Apply(mustProfile(t, "wifi-paper")); err != nil {
		t.Fatal(err)
	}
	c1, err := l.Counters()
	if err != nil {
		t.Fatal(err)
	}
	echo(t, l, ln, 5)
	c2, err := l.Counters()
	if err != nil {
		t.Fatal(err)
	}
	if d := c1.Sub(c0); d.ToBroker.TxPackets < 5 || d.ToClient.TxPackets < 5 {
		t.Errorf("unshaped: the router forwarded too little: %+v", d)
	}
	if d := c2.Sub(c1); d.ToBroker.NftSeen < 5 || d.ToClient.NftSeen < 5 || d.Shared.Kind != "tbf" || d.Shared.Packets < 10 {
		t.Errorf("wifi-paper: the traffic did not go through the shaping: %+v", d)
	}

	// Another Lab of the prefix (as pslab netem show) finds the broker side.
	other := New(Options{Prefix: foreignPrefix})
	if _, _, b := other.Namespaces(); b != brk || !other.IsUp() {
		t.Errorf("another Lab sees broker side %q (up %v), want %q", b, other.IsUp(), brk)
	}
	st, err := other.Status()
	if err != nil {
		t.Fatal(err)
	}
	if s := st.String(); !strings.Contains(s, "namespace "+brk+" (another process's") || !strings.Contains(s, l.n.BrkIf) {
		t.Errorf("status does not show the foreign broker side:\n%s", s)
	}
	if _, err := New(Options{Prefix: foreignPrefix, BrokerPID: os.Getpid()}).ListenBroker("tcp", "10.77.2.2:0"); err == nil {
		t.Error("a Lab with another BrokerPID listened in this lab's broker side")
	}

	ln.Close()
	if err := l.Down(); err != nil {
		t.Fatal(err)
	}
	if err := l.Down(); err != nil {
		t.Fatalf("second Down: %v", err)
	}
	assertAlive(t, child, childNS)
	if gone, added := nsDiff(before, nsSnapshot(t, pid)); len(gone)+len(added) > 0 {
		t.Errorf("after Down the foreign namespace differs:\nmissing:\n%s\nextra:\n%s", strings.Join(gone, "\n"), strings.Join(added, "\n"))
	}
	assertLabGone(t, foreignPrefix)
	if after := hostSnapshot(t); after != host {
		t.Errorf("host namespace changed:\nbefore:\n%s\nafter:\n%s", host, after)
	}
}

// crash drops a Lab's lock as the kernel does when its process dies.
func crash(l *Lab) {
	l.mu.Lock()
	l.unlock()
	l.mu.Unlock()
}

// TestForeignBrokerLeftovers: after a crash, Cleanup (or the next Up)
// removes the veth from the foreign namespace and says so, and leaves that
// namespace and its process alone; if the container is gone by then, only
// the record is left to remove.
func TestForeignBrokerLeftovers(t *testing.T) {
	requireRoot(t)
	host := hostSnapshot(t)
	child := standIn(t)
	pid := child.Process.Pid
	childNS := nsInode(t, procNetNS(pid))
	before := nsSnapshot(t, pid)
	upCrash := func(o Options) {
		t.Helper()
		l := New(o)
		if err := l.Up(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Apply(mustProfile(t, "wifi-paper")); err != nil {
			t.Fatal(err)
		}
		crash(l)
	}
	foreign := Options{Prefix: foreignPrefix, Backend: BackendTBFNft, BrokerPID: pid}

	// 1. Cleanup after a crash.
	upCrash(foreign)
	removed, err := Cleanup(foreignPrefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("removed: %q", removed)
	if len(removed) != 3 || !strings.Contains(removed[0], "veth "+foreignPrefix+"-b0") || !strings.Contains(removed[0], fmt.Sprintf("pid %d", pid)) {
		t.Errorf("Cleanup removed %q, want the veth from pid %d's namespace and the two namespaces", removed, pid)
	}
	assertAlive(t, child, childNS)
	if gone, added := nsDiff(before, nsSnapshot(t, pid)); len(gone)+len(added) > 0 {
		t.Errorf("after Cleanup the foreign namespace differs: missing %q, extra %q", gone, added)
	}
	assertLabGone(t, foreignPrefix)

	// 2. The next Up, here one with the lab's own broker namespace.
	upCrash(foreign)
	own := New(Options{Prefix: foreignPrefix, Backend: BackendTBFNft})
	if err := own.Up(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, _, brk := own.Namespaces(); brk != own.n.NsBrk || !namedNSExists(brk) {
		t.Errorf("own lab's broker namespace is %q", brk)
	}
	if gone, added := nsDiff(before, nsSnapshot(t, pid)); len(gone)+len(added) > 0 {
		t.Errorf("Up over a crashed foreign lab left the foreign namespace changed: missing %q, extra %q", gone, added)
	}
	if err := own.Down(); err != nil {
		t.Fatal(err)
	}
	assertLabGone(t, foreignPrefix)

	// 3. The container stopped before the cleanup: its namespace took the
	// veth with it; only the record and the lab's namespaces remain.
	upCrash(foreign)
	_ = child.Process.Kill()
	_ = child.Wait()
	removed, err = Cleanup(foreignPrefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("removed: %q", removed)
	if len(removed) != 3 || !strings.Contains(removed[0], "namespace is gone") {
		t.Errorf("Cleanup after the container stopped: %q", removed)
	}
	assertLabGone(t, foreignPrefix)
	if after := hostSnapshot(t); after != host {
		t.Errorf("host namespace changed:\nbefore:\n%s\nafter:\n%s", host, after)
	}
}

// TestForeignBrokerRefusals: Up refuses a pid that does not exist, the
// host's own namespace, and a namespace that has the lab's interface name
// or address already, and leaves nothing behind.
func TestForeignBrokerRefusals(t *testing.T) {
	requireRoot(t)
	host := hostSnapshot(t)
	child := standIn(t)
	pid := child.Process.Pid
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	n, _ := namesFor(foreignPrefix)
	refused := func(brokerPID int, want string) {
		t.Helper()
		err := New(Options{Prefix: foreignPrefix, BrokerPID: brokerPID}).Up(t.Context())
		if !errors.Is(err, ErrBadBrokerPID) || !strings.Contains(err.Error(), want) {
			t.Errorf("Up with BrokerPID %d: %v, want ErrBadBrokerPID saying %q", brokerPID, err, want)
		} else {
			t.Logf("refused: %v", err)
		}
		assertLabGone(t, foreignPrefix)
	}
	if err := unix.Kill(gone.Process.Pid, 0); errors.Is(err, unix.ESRCH) {
		refused(gone.Process.Pid, "no process")
	}
	refused(os.Getpid(), "pslab's own network namespace")
	// pid 1: the host's namespace here, or one this process may not open
	// (as in a sandbox); refused either way.
	refused(1, "network namespace")

	// An interface with the lab's name (another lab's, say) is not touched.
	inChild(t, pid, func(h *netlink.Handle) error {
		return h.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: n.BrkIf}, PeerName: "other0"})
	})
	before := nsSnapshot(t, pid)
	refused(pid, "already has an interface "+n.BrkIf)
	if gone, added := nsDiff(before, nsSnapshot(t, pid)); len(gone)+len(added) > 0 {
		t.Errorf("a refused Up changed the namespace: missing %q, extra %q", gone, added)
	}
	// The lab's address on some other interface.
	inChild(t, pid, func(h *netlink.Handle) error {
		link, err := h.LinkByName(n.BrkIf)
		if err != nil {
			return err
		}
		if err := h.LinkDel(link); err != nil {
			return err
		}
		if err := h.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "ctr0"}, PeerName: "ctr1"}); err != nil {
			return err
		}
		ctr0, err := h.LinkByName("ctr0")
		if err != nil {
			return err
		}
		return h.AddrAdd(ctr0, mustAddr(brkAddr))
	})
	refused(pid, "already has address "+brkAddr+" on ctr0")
	if after := hostSnapshot(t); after != host {
		t.Errorf("host namespace changed:\nbefore:\n%s\nafter:\n%s", host, after)
	}
}
