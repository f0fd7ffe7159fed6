package netem

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/google/nftables/userdata"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

func testNames(t *testing.T) names {
	t.Helper()
	n, err := namesFor("pslab")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func mustProfile(t *testing.T, name string) Profile {
	t.Helper()
	p, err := LoadProfile(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNames(t *testing.T) {
	n := testNames(t)
	for _, s := range []string{n.NsCli, n.NsRtr, n.NsBrk, n.CliIf, n.BrkIf, n.RtrCliIf, n.RtrBrkIf, n.IFB} {
		if !strings.HasPrefix(s, "pslab-") || len(s) > 15 {
			t.Errorf("name %q: want prefix pslab- and at most 15 bytes", s)
		}
	}
	for _, bad := range []string{"Pslab", "pslab-x", "abcdefghijk", "a b"} {
		if _, err := namesFor(bad); err == nil {
			t.Errorf("prefix %q accepted", bad)
		}
	}
	if l := New(Options{Prefix: "Bad!"}); l.Up(t.Context()) == nil {
		t.Error("Up with a bad prefix succeeded")
	}
}

func TestPlanTBFForOneMbit(t *testing.T) {
	tb := planTBF(1000, 500)
	if tb.RateBytes != 125000 {
		t.Errorf("rate %d B/s, want 125000 (1 Mbit/s)", tb.RateBytes)
	}
	if tb.BurstBytes != 2*maxFrame {
		t.Errorf("burst %d, want two full frames (%d)", tb.BurstBytes, 2*maxFrame)
	}
	if tb.LimitBytes != 62500 {
		t.Errorf("limit %d B, want 500 ms at 125000 B/s = 62500", tb.LimitBytes)
	}
	fast := planTBF(1_000_000, 100) // 1 Gbit/s: the bucket is 1 ms of rate
	if fast.BurstBytes != 125000 || fast.LimitBytes != 12_500_000 {
		t.Errorf("1 Gbit/s: %+v", fast)
	}
	slow := planTBF(8, 10) // the queue never holds less than 4 frames
	if slow.LimitBytes != 4*maxFrame {
		t.Errorf("8 kbit/s limit %d, want %d", slow.LimitBytes, 4*maxFrame)
	}
}

func TestFallbackConfigHalfDuplex(t *testing.T) {
	n := testNames(t)
	c, err := buildConfig(mustProfile(t, "wifi-paper"), BackendTBFNft, n)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Shapers) != 1 || c.Shapers[0].Dev != n.IFB || c.Shapers[0].TBF == nil || c.Shapers[0].Netem != nil {
		t.Fatalf("half duplex wants one TBF on the IFB, got %+v", c.Shapers)
	}
	if c.IFB != n.IFB || len(c.Redirect) != 2 {
		t.Fatalf("half duplex wants both router veths redirected to the IFB: %+v", c)
	}
	if *c.Shapers[0].TBF != planTBF(1000, 500) {
		t.Errorf("tbf %+v", *c.Shapers[0].TBF)
	}
	if len(c.Drops) != 2 {
		t.Fatalf("want a drop rule per direction, got %+v", c.Drops)
	}
	in := map[Direction]string{ToBroker: n.RtrCliIf, ToClient: n.RtrBrkIf}
	for _, d := range c.Drops {
		if d.Threshold != 300 || d.Pct != 3 || d.InIf != in[d.Dir] {
			t.Errorf("drop rule %+v: want threshold 300 of 10000 on %s", d, in[d.Dir])
		}
	}
}

func TestFallbackConfigFullDuplex(t *testing.T) {
	n := testNames(t)
	p := mustProfile(t, "wifi-paper")
	p.Duplex = DuplexFull
	c, err := buildConfig(p, BackendTBFNft, n)
	if err != nil {
		t.Fatal(err)
	}
	if c.IFB != "" || len(c.Redirect) != 0 || len(c.Shapers) != 2 {
		t.Fatalf("full duplex: one TBF per egress veth, no IFB: %+v", c)
	}
	got := map[string]Direction{}
	for _, s := range c.Shapers {
		got[s.Dev] = s.Dirs[0]
	}
	if got[n.RtrBrkIf] != ToBroker || got[n.RtrCliIf] != ToClient {
		t.Fatalf("shapers on the wrong devices: %v", got)
	}
}

func TestFallbackRefusesWhatItCannotDo(t *testing.T) {
	n := testNames(t)
	base := mustProfile(t, "wifi-paper")
	for _, mod := range []struct {
		field string
		set   func(p *Profile)
	}{
		{"delay_ms", func(p *Profile) { p.DelayMs = 5 }},
		{"jitter_ms", func(p *Profile) { p.DelayMs, p.JitterMs, p.Reorder = 5, 1, true }},
		{"duplicate_pct", func(p *Profile) { p.DuplicatePct = 1 }},
		{"loss_correlation_pct", func(p *Profile) { p.LossCorrelationPct = 25 }},
	} {
		p := base
		mod.set(&p)
		_, err := buildConfig(p, BackendTBFNft, n)
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), mod.field) || !strings.Contains(err.Error(), "relay backend") {
			t.Errorf("%s: want a refusal naming the field and the relay backend, got %v", mod.field, err)
		}
		if _, err := buildConfig(p, BackendNetem, n); err != nil {
			t.Errorf("%s: netem backend must take it: %v", mod.field, err)
		}
	}
}

func TestWirelineHasNoShaping(t *testing.T) {
	for _, b := range []Backend{BackendTBFNft, BackendNetem} {
		c, err := buildConfig(mustProfile(t, "wireline"), b, testNames(t))
		if err != nil || c.Backend != BackendNone || len(c.Shapers)+len(c.Drops)+len(c.Redirect) != 0 || c.IFB != "" {
			t.Errorf("%s: wireline config %+v, %v", b, c, err)
		}
	}
}

func TestLossOnlyNeedsNoTBF(t *testing.T) {
	c, err := buildConfig(Profile{Name: "l", LossPct: 0.25, Duplex: DuplexHalf}, BackendTBFNft, testNames(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Shapers) != 0 || c.IFB != "" || len(c.Drops) != 2 || c.Drops[0].Threshold != 25 {
		t.Fatalf("loss-only: %+v", c)
	}
}

func TestNetemConfig(t *testing.T) {
	n := testNames(t)
	p := mustProfile(t, "wifi-bursty")
	c, err := buildConfig(p, BackendNetem, n)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Drops) != 0 {
		t.Errorf("netem backend drops in the qdisc, not nft: %+v", c.Drops)
	}
	if len(c.Shapers) != 1 || c.Shapers[0].Dev != n.IFB || c.Shapers[0].Netem == nil {
		t.Fatalf("half duplex: one netem on the IFB: %+v", c.Shapers)
	}
	ne := *c.Shapers[0].Netem
	if ne.RateBytes != 125000 || ne.LossPct != 3 || ne.LossCorrelationPct != 25 || ne.DelayUs != 2000 || ne.JitterUs != 1000 {
		t.Errorf("netem plan %+v", ne)
	}
	// 62500 B of queue = 42 full frames, plus 3 ms x 125000 B/s in delay = 1.
	if ne.LimitPackets != 42+1 {
		t.Errorf("netem limit %d packets, want 43", ne.LimitPackets)
	}
	q := netemQdisc(7, ne)
	if q.LinkIndex != 7 || q.Parent != netlink.HANDLE_ROOT || q.Rate64 != 125000 || q.Limit != 43 {
		t.Errorf("netem qdisc %+v", q)
	}
	if got := u32Pct(q.Loss); math.Abs(got-3) > 1e-4 {
		t.Errorf("netem loss %v %%, want 3", got)
	}
	if got := u32Pct(q.LossCorr); math.Abs(got-25) > 1e-4 {
		t.Errorf("netem loss correlation %v %%, want 25", got)
	}
}

func TestTBFQdiscObject(t *testing.T) {
	tb := planTBF(1000, 500)
	q := tbfQdisc(3, tb)
	if q.LinkIndex != 3 || q.Parent != netlink.HANDLE_ROOT || q.Handle != rootHandle {
		t.Errorf("attrs %+v", q.QdiscAttrs)
	}
	if q.Rate != 125000 || q.Limit != 62500 {
		t.Errorf("rate %d limit %d", q.Rate, q.Limit)
	}
	// The bucket goes to the kernel as a time; it must come back as ~3028 B.
	if back := netlink.Xmitsize(q.Rate, q.Buffer); back < 3000 || back > 3040 {
		t.Errorf("buffer %d ticks = %d B, want about %d", q.Buffer, back, tb.BurstBytes)
	}
}

func TestRedirectFilter(t *testing.T) {
	f := redirectFilter(4, 9)
	if f.LinkIndex != 4 || f.Parent != netlink.HANDLE_MIN_EGRESS || f.Protocol != unix.ETH_P_ALL || f.Sel != nil {
		t.Errorf("filter attrs %+v (want all protocols on egress, match-all selector)", f.FilterAttrs)
	}
	if len(f.Actions) != 1 {
		t.Fatalf("actions %v", f.Actions)
	}
	m, ok := f.Actions[0].(*netlink.MirredAction)
	if !ok || m.Ifindex != 9 || m.MirredAction != netlink.TCA_EGRESS_REDIR || m.Attrs().Action != netlink.TC_ACT_STOLEN {
		t.Errorf("action %+v: want mirred egress redirect to ifindex 9", f.Actions[0])
	}
	if c := clsactQdisc(4); c.QdiscType != "clsact" || c.Parent != netlink.HANDLE_CLSACT {
		t.Errorf("clsact %+v", c)
	}
}

func TestDropRuleExprs(t *testing.T) {
	r := dropRule{Dir: ToBroker, InIf: "pslab-rc", Threshold: 300, Pct: 3}
	ex := dropRuleExprs(r)
	if len(ex) != 7 {
		t.Fatalf("want meta, cmp, numgen, byteorder, cmp, counter, verdict; got %d exprs", len(ex))
	}
	meta, ok := ex[0].(*expr.Meta)
	if !ok || meta.Key != expr.MetaKeyIIFNAME {
		t.Errorf("expr 0: %#v", ex[0])
	}
	name, ok := ex[1].(*expr.Cmp)
	if !ok || name.Op != expr.CmpOpEq || len(name.Data) != unix.IFNAMSIZ || !bytes.HasPrefix(name.Data, []byte("pslab-rc\x00")) {
		t.Errorf("iifname cmp %#v: want the name zero-padded to 16 bytes", ex[1])
	}
	ng, ok := ex[2].(*expr.Numgen)
	if !ok || ng.Modulus != 10000 || ng.Type != unix.NFT_NG_RANDOM || ng.Register != 1 {
		t.Errorf("numgen %#v", ex[2])
	}
	bo, ok := ex[3].(*expr.Byteorder)
	if !ok || bo.Op != expr.ByteorderHton || bo.Len != 4 || bo.Size != 4 || bo.SourceRegister != 1 || bo.DestRegister != 1 {
		t.Errorf("byteorder %#v", ex[3])
	}
	lt, ok := ex[4].(*expr.Cmp)
	if !ok || lt.Op != expr.CmpOpLt || binary.BigEndian.Uint32(lt.Data) != 300 {
		t.Errorf("threshold cmp %#v: want lt 300 big-endian", ex[4])
	}
	if _, ok := ex[5].(*expr.Counter); !ok {
		t.Errorf("expr 5 %#v: want counter", ex[5])
	}
	if v, ok := ex[6].(*expr.Verdict); !ok || v.Kind != expr.VerdictDrop {
		t.Errorf("expr 6 %#v: want drop", ex[6])
	}
}

func TestNftRulesPerDirection(t *testing.T) {
	n := testNames(t)
	c, err := buildConfig(mustProfile(t, "wifi-paper"), BackendTBFNft, n)
	if err != nil {
		t.Fatal(err)
	}
	tb := nftTable(n)
	rules := nftRules(c, n, tb, nftChain(tb))
	var comments []string
	for _, r := range rules {
		s, _ := userdata.GetString(r.UserData, userdata.TypeComment)
		comments = append(comments, s)
	}
	want := []string{"pslab-seen to-broker", "pslab-drop to-broker", "pslab-seen to-client", "pslab-drop to-client"}
	if len(comments) != len(want) {
		t.Fatalf("rules %q", comments)
	}
	for i, w := range want {
		if !strings.HasPrefix(comments[i], w) {
			t.Errorf("rule %d comment %q, want %q...", i, comments[i], w)
		}
	}
	if ch := nftChain(tb); *ch.Hooknum != *nftables.ChainHookForward || ch.Table.Name != "pslab" {
		t.Errorf("chain %+v", ch)
	}
}

func TestExpectedGoodput(t *testing.T) {
	full, frame, ack := expectedGoodput(1000, 1448, true, false)
	if frame != 1514 || ack != 0 || math.Abs(full-1000*1448.0/1514) > 1e-9 {
		t.Errorf("full: %v %v %v", full, frame, ack)
	}
	half, _, ack := expectedGoodput(1000, 1448, true, true)
	if ack != 33 || math.Abs(half-1000*1448.0/1547) > 1e-9 {
		t.Errorf("half: %v ack %v", half, ack)
	}
	_, frame, _ = expectedGoodput(1000, 1460, false, false)
	if frame != 1514 {
		t.Errorf("no timestamps: frame %d", frame)
	}
}

func TestProbePPS(t *testing.T) {
	if got := probePPS(Profile{RateKbit: 1000}); math.Abs(got-150000.0/464) > 1e-9 {
		t.Errorf("1 Mbit/s: %v pps", got)
	}
	if probePPS(Profile{}) != unshapedProbePPS || probePPS(Profile{RateKbit: 8}) != 20 || probePPS(Profile{RateKbit: 1e6}) != 5000 {
		t.Error("probe rate clamps")
	}
}
