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
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/nftables"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"pslab/internal/testbroker"
)

// testPrefix names everything the integration tests make; distinct from
// pslab's default so a lab someone left up is not disturbed.
const testPrefix = "pslabtest"

// requireRoot skips a test that needs to create namespaces (and every
// such test in -short mode, the hermetic first pass of scripts/test.sh).
func requireRoot(t *testing.T) {
	t.Helper()
	testbroker.SkipShort(t, "link emulation: root, network namespaces")
	testbroker.RequireRoot(t)
	if err := Supported(); err != nil {
		t.Skipf("skipping: link emulation tests need root and network namespaces: %v", err)
	}
}

// upLab brings a test lab up and takes it down at the end of the test.
func upLab(t *testing.T, o Options) *Lab {
	t.Helper()
	requireRoot(t)
	o.Prefix = testPrefix
	l := New(o)
	if err := l.Up(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Down(); err != nil {
			t.Errorf("down: %v", err)
		}
	})
	return l
}

// hostSnapshot lists the host namespace's links, addresses and nft tables
// (not counters), to show the lab leaves them alone.
func hostSnapshot(t *testing.T) string {
	t.Helper()
	links, err := netlink.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range links {
		a := l.Attrs()
		lines = append(lines, fmt.Sprintf("link %d %s %s mtu %d flags %v master %d", a.Index, a.Name, l.Type(), a.MTU, a.Flags, a.MasterIndex))
		addrs, err := netlink.AddrList(l, netlink.FAMILY_ALL)
		if err != nil {
			t.Fatal(err)
		}
		for _, ad := range addrs {
			lines = append(lines, fmt.Sprintf("addr %s %s", a.Name, ad.IPNet))
		}
	}
	if c, err := nftables.New(); err == nil {
		if ts, err := c.ListTables(); err == nil {
			for _, tb := range ts {
				lines = append(lines, fmt.Sprintf("nft table %d %s", tb.Family, tb.Name))
			}
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestFallbackWifiPaperVerified runs the paper's link on the tbf+nftables
// backend for real and checks measured rate and loss with wide margins,
// then that Down leaves nothing and the host is untouched.
func TestFallbackWifiPaperVerified(t *testing.T) {
	requireRoot(t)
	host := hostSnapshot(t)
	l := New(Options{Prefix: testPrefix, Backend: BackendTBFNft})
	if err := l.Up(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer l.Down()
	p := mustProfile(t, "wifi-paper")
	b, err := l.Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	if b != BackendTBFNft {
		t.Fatalf("backend %s, want %s", b, BackendTBFNft)
	}
	v, err := l.Verify(t.Context(), p, 4*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s%s", v, v.Counters)
	for _, r := range []DirResult{v.ToBroker, v.ToClient} {
		// Wide on the low side: on a loaded 2-core box a retransmission
		// timeout now and then idles the link for a second. The shaping
		// rate itself is checked tightly with constant-rate UDP in
		// TestHalfDuplexSharesOneBudget.
		if ratio := r.GoodputKbit / r.ExpectedGoodputKbit; ratio < 0.5 || ratio > 1.1 {
			t.Errorf("%s: goodput %.1f kbit/s is %.2f x the expected %.1f (want 0.5-1.1)", r.Direction, r.GoodputKbit, ratio, r.ExpectedGoodputKbit)
		}
		if r.LossPct < 1 || r.LossPct > 6 {
			t.Errorf("%s: probe loss %.2f %% (want 1-6 %% for 3 %%)", r.Direction, r.LossPct)
		}
		if r.CounterDropPct < 1 || r.CounterDropPct > 6 {
			t.Errorf("%s: router drop share %.2f %% (want 1-6 %%)", r.Direction, r.CounterDropPct)
		}
		if r.ProbeSent < 500 || r.ProbeDuplicates != 0 {
			t.Errorf("%s: %d probes sent, %d duplicates", r.Direction, r.ProbeSent, r.ProbeDuplicates)
		}
		if d := v.Counters.Dir(r.Direction); d.NftDrops == 0 || d.NftSeen == 0 {
			t.Errorf("%s: nft counters did not move: %+v", r.Direction, d)
		}
	}
	if v.Counters.Shared.Kind != "tbf" || v.Counters.Shared.Packets == 0 {
		t.Errorf("half duplex: the IFB's TBF carried nothing: %+v", v.Counters.Shared)
	}
	if err := l.Down(); err != nil {
		t.Fatal(err)
	}
	if err := l.Down(); err != nil {
		t.Fatalf("second Down: %v", err)
	}
	assertLabGone(t, testPrefix)
	if after := hostSnapshot(t); after != host {
		t.Errorf("host namespace changed:\nbefore:\n%s\nafter:\n%s", host, after)
	}
}

// TestBackendChoiceAndRefusal checks that the automatic backend follows the
// kernel and that the fallback refuses what it cannot do, leaving the link
// unshaped.
func TestBackendChoiceAndRefusal(t *testing.T) {
	l := upLab(t, Options{})
	var hasNetem bool
	if err := withHandle(l.n.NsRtr, func(h *netlink.Handle) (err error) { hasNetem, err = kernelHasNetem(h); return }); err != nil {
		t.Fatal(err)
	}
	want := BackendTBFNft
	if hasNetem {
		want = BackendNetem
	}
	b, err := l.Apply(mustProfile(t, "wifi-paper"))
	if err != nil || b != want {
		t.Fatalf("auto backend %s (%v), want %s (kernel has netem: %v)", b, err, want, hasNetem)
	}
	t.Logf("kernel has sch_netem: %v, chosen backend %s", hasNetem, b)
	if b, err := l.Apply(mustProfile(t, "wireline")); err != nil || b != BackendNone {
		t.Fatalf("wireline: %s %v", b, err)
	}
	c, err := l.Counters()
	if err != nil || c.ToBroker.Qdisc.Kind != "" || c.ToClient.Qdisc.Kind != "" || c.Shared.Kind != "" {
		t.Fatalf("wireline left shaping: %+v %v", c, err)
	}

	f := New(Options{Prefix: testPrefix, Backend: BackendTBFNft}) // same lab, fallback forced
	if _, err := f.Apply(mustProfile(t, "wifi-paper")); err != nil {
		t.Fatal(err)
	}
	_, err = f.Apply(mustProfile(t, "wifi-bursty"))
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("wifi-bursty on tbf+nftables: want ErrUnsupported, got %v", err)
	}
	for _, w := range []string{"delay_ms=2", "jitter_ms=1", "loss_correlation_pct=25", "sch_netem"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("refusal %q does not name %s", err, w)
		}
	}
	if ap, b, ok := f.Applied(); !ok || ap.Shaped() || b != BackendNone {
		t.Errorf("after a refusal the lab reports %+v on %s, want unshaped", ap, b)
	}
	st, err := f.Status()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Nft) != 0 || strings.Contains(st.String(), "tbf") {
		t.Errorf("a refused profile must leave the link unshaped:\n%s", st)
	}
	if !hasNetem {
		_, err := New(Options{Prefix: testPrefix, Backend: BackendNetem}).Apply(mustProfile(t, "wifi-paper"))
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("forced netem on a kernel without it: %v", err)
		}
	}
}

// cbrBoth sends constant-bit-rate UDP both ways at once, each direction
// offering offeredKbit of frames on the wire, and returns the payload
// kbit/s each receiver got over d after warm.
func cbrBoth(t *testing.T, l *Lab, offeredKbit float64, warm, d time.Duration) map[Direction]float64 {
	t.Helper()
	const payload = 1400
	frame := payload + ethHeader + ipv4Header + 8
	pps := offeredKbit * 1000 / 8 / float64(frame)
	start := time.Now()
	from, to := start.Add(warm), start.Add(warm+d)
	out := map[Direction]float64{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, x := range []struct {
		dir    Direction
		rx, tx Side
		rxIP   string
	}{{ToBroker, SideBroker, SideClient, l.BrokerIP()}, {ToClient, SideClient, SideBroker, l.ClientIP()}} {
		rx, err := l.ListenPacketIn(x.rx, "udp", net.JoinHostPort(x.rxIP, "0"))
		if err != nil {
			t.Fatal(err)
		}
		defer rx.Close()
		tx, err := l.DialIn(t.Context(), x.tx, "udp", rx.LocalAddr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Close()
		wg.Add(2)
		go func() { // receiver: payload bytes that arrive between from and to
			defer wg.Done()
			_ = rx.SetReadDeadline(to)
			buf := make([]byte, 2048)
			bytes := 0
			for {
				n, _, err := rx.ReadFrom(buf)
				if err != nil {
					break
				}
				if now := time.Now(); now.After(from) && now.Before(to) {
					bytes += n
				}
			}
			mu.Lock()
			out[x.dir] = float64(bytes) * 8 / d.Seconds() / 1000
			mu.Unlock()
		}()
		go func() { // sender: paced at pps until the window ends
			defer wg.Done()
			buf := make([]byte, payload)
			sent := 0
			for now := time.Now(); now.Before(to); now = time.Now() {
				for due := int(now.Sub(start).Seconds() * pps); sent < due; sent++ {
					_, _ = tx.Write(buf)
				}
				time.Sleep(2 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	return out
}

// TestHalfDuplexSharesOneBudget: with 0.8 x the rate offered each way at
// once, a full duplex link delivers all of it in both directions, a half
// duplex link only one rate in total (the rest is dropped at its queue).
func TestHalfDuplexSharesOneBudget(t *testing.T) {
	l := upLab(t, Options{Backend: BackendTBFNft})
	p := Profile{Name: "rate-only", RateKbit: 1000}
	offered := 0.8 * p.RateKbit
	payloadShare := 1400.0 / (1400 + ethHeader + ipv4Header + 8)
	for _, duplex := range []string{DuplexFull, DuplexHalf} {
		p.Duplex = duplex
		if _, err := l.Apply(p); err != nil {
			t.Fatal(err)
		}
		g := cbrBoth(t, l, offered, 500*time.Millisecond, 2*time.Second)
		t.Logf("%s duplex, %.0f kbit/s offered each way: to-broker got %.1f, to-client %.1f kbit/s of payload",
			duplex, offered, g[ToBroker], g[ToClient])
		switch duplex {
		case DuplexFull:
			for dir, kbit := range g {
				if r := kbit / (offered * payloadShare); r < 0.85 || r > 1.1 {
					t.Errorf("full duplex %s: got %.2f x what was offered, want all of it (0.85-1.1)", dir, r)
				}
			}
		case DuplexHalf:
			if r := (g[ToBroker] + g[ToClient]) / (p.RateKbit * payloadShare); r < 0.85 || r > 1.1 {
				t.Errorf("half duplex: both directions together got %.2f x one rate, want 0.85-1.1", r)
			}
		}
	}
}

// nsInode is the inode of a network namespace file.
func nsInode(t *testing.T, path string) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// TestSocketsAndProcessesLandInTheirNamespaces: dial, listen and exec go to
// the right namespace, traffic crosses the router, and no thread of this
// process is left in a lab namespace.
func TestSocketsAndProcessesLandInTheirNamespaces(t *testing.T) {
	l := upLab(t, Options{})
	hostNS := nsInode(t, "/proc/self/ns/net")

	cmd := exec.Command("readlink", "/proc/self/ns/net")
	var out strings.Builder
	cmd.Stdout = &out
	if err := l.StartInBroker(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	_, _, brk := l.Namespaces()
	want := fmt.Sprintf("net:[%d]", nsInode(t, filepath.Join(netnsDir, brk)))
	if got := strings.TrimSpace(out.String()); got != want {
		t.Fatalf("process started in %s, want the broker namespace %s", got, want)
	}

	ln, err := l.ListenBroker("tcp", net.JoinHostPort(l.BrokerIP(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	before, err := l.Counters()
	if err != nil {
		t.Fatal(err)
	}
	echo(t, l, ln, 20)
	after, err := l.Counters()
	if err != nil {
		t.Fatal(err)
	}
	if d := after.Sub(before); d.ToBroker.TxPackets < 20 || d.ToClient.TxPackets < 20 {
		t.Errorf("the router forwarded too little: %+v", d)
	}
	if _, err := l.DialContext(t.Context(), "tcp", "localhost:80"); err == nil {
		t.Error("a host name was accepted; it must be refused")
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		var st unix.Stat_t
		if unix.Stat(filepath.Join("/proc/self/task", task.Name(), "ns/net"), &st) == nil && st.Ino != hostNS {
			t.Errorf("thread %s is in netns %d, not the host's %d", task.Name(), st.Ino, hostNS)
		}
	}
}

func TestVerifyRefusesAnotherProfile(t *testing.T) {
	l := upLab(t, Options{})
	_, err := l.Verify(t.Context(), mustProfile(t, "wifi-paper"), time.Second)
	if err == nil || !strings.Contains(err.Error(), "apply the profile first") {
		t.Fatalf("verify of a profile that is not applied: %v", err)
	}
}

func TestKernelBackendMatchesProbe(t *testing.T) {
	testbroker.SkipShort(t, "probes in a network namespace")
	testbroker.RequireRoot(t)
	b, err := KernelBackend()
	if err != nil {
		t.Fatal(err)
	}
	if b != BackendNetem && b != BackendTBFNft {
		t.Fatalf("backend %q", b)
	}
	t.Logf("kernel backend: %s", b)
}

// TestClearLiftsShapingAndApplyPutsItBack: Clear leaves plain forwarding
// (no qdisc, no drop rule, Applied says unshaped) and an established
// connection carries on across Clear and a new Apply.
func TestClearLiftsShapingAndApplyPutsItBack(t *testing.T) {
	l := upLab(t, Options{})
	p := mustProfile(t, "wifi-paper")
	b, err := l.Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	ln, conn, srv := brokerConnection(t, l)
	defer ln.Close()
	defer conn.Close()
	go func() { // echo
		defer srv.Close()
		io.Copy(struct{ io.Writer }{srv}, struct{ io.Reader }{srv}) // no splice onto itself
	}()
	echo := func(msg string) {
		t.Helper()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := conn.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, len(msg))
		if _, err := io.ReadFull(conn, buf); err != nil || string(buf) != msg {
			t.Fatalf("echo %q: %q %v", msg, buf, err)
		}
	}
	echo("shaped")

	if err := l.Clear(); err != nil {
		t.Fatal(err)
	}
	if ap, cb, ok := l.Applied(); !ok || ap.Shaped() || cb != BackendNone {
		t.Errorf("after Clear the lab reports %+v on %s, want unshaped", ap, cb)
	}
	c, err := l.Counters()
	if err != nil || c.ToBroker.Qdisc.Kind != "" || c.ToClient.Qdisc.Kind != "" || c.Shared.Kind != "" {
		t.Fatalf("Clear left shaping: %+v %v", c, err)
	}
	echo("unshaped")

	if b2, err := l.Apply(p); err != nil || b2 != b {
		t.Fatalf("Apply after Clear: %s %v, want %s", b2, err, b)
	}
	if ap, _, ok := l.Applied(); !ok || ap.Name != p.Name {
		t.Errorf("after Apply the lab reports %+v", ap)
	}
	c, err = l.Counters()
	if err != nil || (c.Shared.Kind == "" && c.ToBroker.Qdisc.Kind == "") {
		t.Fatalf("Apply after Clear left no shaping: %+v %v", c, err)
	}
	echo("shaped again")
}
