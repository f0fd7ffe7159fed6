package netem

import (
	"context"
	"net"
	"testing"
	"time"
)

func TestFaultExtraPct(t *testing.T) {
	for _, c := range []struct{ base, total, want float64 }{
		{0, 100, 100}, {3, 100, 100}, {0, 20, 20}, {3, 20, 17.53}, {3, 3, 0}, {20, 3, -21.25},
	} {
		if got := faultExtraPct(c.base, c.total); got != c.want {
			t.Errorf("faultExtraPct(%g, %g) = %g, want %g", c.base, c.total, got, c.want)
		}
	}
}

// TestFaultOutageAndRestore: an outage on an unshaped link stops every
// packet (a TCP connect times out and the fault rules count drops); after
// ClearFault the link works again and the fault's drops are returned.
func TestFaultOutageAndRestore(t *testing.T) {
	l := upLab(t, Options{})
	if _, err := l.Apply(mustProfile(t, "wireline")); err != nil {
		t.Fatal(err)
	}
	ln, err := l.ListenBroker("tcp", net.JoinHostPort(l.BrokerIP(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	echo(t, l, ln, 1)

	if extra, err := l.SetFaultLoss(100); err != nil || extra != 100 {
		t.Fatalf("SetFaultLoss(100) = %g, %v", extra, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
	c, err := l.DialContext(ctx, "tcp", ln.Addr().String())
	cancel()
	if err == nil {
		c.Close()
		t.Fatal("connected through an outage")
	}
	cnt, err := l.Counters()
	if err != nil || cnt.ToBroker.NftFaultDrops == 0 {
		t.Fatalf("no fault drops counted during the outage: %+v %v", cnt.ToBroker, err)
	}
	// A second fault replaces the first (one set of rules, not two), and
	// ClearFault returns what the rules in force dropped.
	if _, err := l.SetFaultLoss(100); err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(t.Context(), 1500*time.Millisecond)
	if c, err := l.DialContext(ctx, "tcp", ln.Addr().String()); err == nil {
		c.Close()
		t.Fatal("connected through an outage")
	}
	cancel()
	fd, err := l.ClearFault()
	if err != nil || fd.ToBroker == 0 {
		t.Fatalf("ClearFault = %+v, %v: want the outage's drops", fd, err)
	}
	echo(t, l, ln, 1)
	if cnt, _ := l.Counters(); cnt.ToBroker.NftFaultDrops != 0 {
		t.Fatalf("fault rules left after ClearFault: %+v", cnt.ToBroker)
	}
}

// TestFaultLossStepOnShapedLink: a loss step on wifi-paper keeps the
// profile's rules and adds the fault's; clearing leaves the profile as it
// was.
func TestFaultLossStepOnShapedLink(t *testing.T) {
	l := upLab(t, Options{Backend: BackendTBFNft})
	if _, err := l.Apply(mustProfile(t, "wifi-paper")); err != nil {
		t.Fatal(err)
	}
	extra, err := l.SetFaultLoss(20)
	if err != nil || extra != 17.53 {
		t.Fatalf("SetFaultLoss(20) on 3 %% = %g, %v", extra, err)
	}
	rules, err := readNft(l.n.NsRtr, l.n)
	if err != nil {
		t.Fatal(err)
	}
	tags := map[string]int{}
	for _, r := range rules {
		tags[r.Tag]++
	}
	if tags[seenTag] != 2 || tags[dropTag] != 2 || tags[faultTag] != 2 {
		t.Fatalf("rules during the step: %v", tags)
	}
	if _, err := l.SetFaultLoss(2); err == nil {
		t.Fatal("a fault loss below the profile's was accepted")
	}
	if _, err := l.ClearFault(); err != nil {
		t.Fatal(err)
	}
	rules, _ = readNft(l.n.NsRtr, l.n)
	tags = map[string]int{}
	for _, r := range rules {
		tags[r.Tag]++
	}
	if tags[seenTag] != 2 || tags[dropTag] != 2 || tags[faultTag] != 0 {
		t.Fatalf("rules after the step: %v", tags)
	}
}
