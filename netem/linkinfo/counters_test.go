package linkinfo

import (
	"strings"
	"testing"
)

func TestCountersSub(t *testing.T) {
	before := Counters{
		ToBroker: DirCounters{Qdisc: QdiscCounters{Kind: "tbf", Packets: 10, Bytes: 1000, Drops: 1}, TxPackets: 10, NftSeen: 12, NftDrops: 1},
		Shared:   QdiscCounters{Kind: "tbf", Packets: 5},
	}
	after := Counters{
		ToBroker: DirCounters{Qdisc: QdiscCounters{Kind: "tbf", Packets: 110, Bytes: 9000, Drops: 4, Backlog: 77}, TxPackets: 110, NftSeen: 120, NftDrops: 4},
		Shared:   QdiscCounters{Kind: "netem", Packets: 50}, // replaced in between
	}
	d := after.Sub(before)
	tb := d.ToBroker
	if tb.Qdisc.Packets != 100 || tb.Qdisc.Bytes != 8000 || tb.Qdisc.Drops != 3 || tb.Qdisc.Backlog != 77 || tb.TxPackets != 100 || tb.NftSeen != 108 || tb.NftDrops != 3 {
		t.Errorf("delta %+v", tb)
	}
	if d.Shared.Packets != 0 || d.Shared.Kind != "netem" {
		t.Errorf("a replaced qdisc has no delta: %+v", d.Shared)
	}
	if d.Dir(ToBroker) != tb || d.Dir(ToClient) != d.ToClient {
		t.Error("Dir picks the wrong direction")
	}
}

func TestDropPct(t *testing.T) {
	nft := DirCounters{NftSeen: 1000, NftDrops: 30, Qdisc: QdiscCounters{Kind: "tbf", Drops: 10}}
	if pct, ok := nft.DropPct(); !ok || pct != 4 {
		t.Errorf("nft: %v %v, want 4 %%", pct, ok)
	}
	ne := DirCounters{Qdisc: QdiscCounters{Kind: "netem", Packets: 970, Drops: 30}}
	if pct, ok := ne.DropPct(); !ok || pct != 3 {
		t.Errorf("netem: %v %v, want 3 %%", pct, ok)
	}
	if _, ok := (DirCounters{}).DropPct(); ok {
		t.Error("nothing counted must not be ok")
	}
}

func TestVerificationCheckAndString(t *testing.T) {
	v := Verification{
		Profile:  Profile{Name: "wifi-paper", RateKbit: 1000, LossPct: 3, Duplex: DuplexHalf},
		Backend:  BackendTBFNft,
		ToBroker: DirResult{Direction: ToBroker, GoodputKbit: 900, ExpectedGoodputKbit: 936, LossPct: 3.4, ExpectedLossPct: 3, MSS: 1448, FrameBytes: 1514, AckBytesPerSegment: 33, CounterDropPct: 3.1},
		ToClient: DirResult{Direction: ToClient, GoodputKbit: 700, ExpectedGoodputKbit: 936, LossPct: 5, ExpectedLossPct: 3, CounterDropPct: -1},
	}
	err := v.Check(0.1, 1)
	if err == nil {
		t.Fatal("to-client is 25 % slow and 2 points lossy: Check must fail")
	}
	msg := err.Error()
	if strings.Contains(msg, "to-broker") || !strings.Contains(msg, "to-client: goodput") || !strings.Contains(msg, "to-client: loss") {
		t.Errorf("Check error %q", msg)
	}
	v.ToClient = v.ToBroker
	v.ToClient.Direction = ToClient
	if err := v.Check(0.1, 1); err != nil {
		t.Errorf("within bounds: %v", err)
	}
	s := v.String()
	for _, want := range []string{"wifi-paper", "tbf+nftables", "900.0 (exp 936.0, -3.8 %)", "3.40", "1514 B frame", "33 B of ACKs"} {
		if !strings.Contains(s, want) {
			t.Errorf("String() lacks %q:\n%s", want, s)
		}
	}
}
