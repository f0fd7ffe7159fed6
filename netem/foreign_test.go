package netem

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
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
