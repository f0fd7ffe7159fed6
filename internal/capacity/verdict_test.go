package capacity

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/lab"
	"pslab/internal/load"
	"pslab/internal/metrics"
	"pslab/internal/results"
	"pslab/internal/scenario"
	"pslab/netem"
)

// synthetic is a record of a probe: publishers each at rate, a 1 s
// warm-up and a window of window seconds in which the broker delivers
// delivered msgs/s per offered msgs/s of due deliveries (1: keeps up;
// 0.9: falls 10 % behind), replication repl, p99 latency p99 ms.
func synthetic(publishers int, rate, window, delivered, repl, p99 float64) *results.Record {
	f := scenario.Defaults().Factors
	f.Publishers, f.Subscribers, f.Topics = publishers, int(repl), 1
	offered := rate * float64(publishers)
	secs := 1 + int(window) + 2
	res := &load.Result{WarmupS: 1, Latency: metrics.LatencySummary{MeanMs: p99 / 3, P99Ms: p99}}
	var due, got float64
	for t := 0; t < secs; t++ {
		sent := offered
		if t > int(window) {
			sent = 0 // the drain
		}
		res.PubSeries = append(res.PubSeries, int64(sent))
		d := sent * repl * delivered
		if t > int(window) {
			d = (due - got) / 2 // the backlog drains after the window
		}
		res.SubSeries = append(res.SubSeries, int64(d))
		due += sent * repl
		got += d
	}
	c := &res.Counts
	c.Sent = int64(offered) * int64(1+window)
	c.Expected = int64(float64(c.Sent) * repl)
	c.Received = c.Expected
	c.SentInWindow = int64(offered * window)
	c.DueInWindow = int64(offered * window * repl)
	c.ReceivedInWindow = int64(float64(c.DueInWindow) * delivered)
	res.Latency.Count = c.DueInWindow
	wl := netem.Profile{Name: "wireline"}
	return &results.Record{Mode: results.ModeCapacityProbe, Factors: f, Result: res,
		Settings: results.Settings{Rate: rate, WindowS: window}, Network: results.Network{Profile: "wireline", Spec: &wl}}
}

var crit = Criteria{Tolerance: 0.01, LatencyBound: 250 * time.Millisecond}

func checkOf(p results.Probe, name string) results.Check {
	for _, c := range p.Checks {
		if c.Name == name {
			return c
		}
	}
	return results.Check{Name: "missing " + name}
}

// TestJudgeSustained: a probe whose broker keeps up, within the latency
// bound, with nothing lost, is sustained, and says its offered load.
func TestJudgeSustained(t *testing.T) {
	p := Judge(synthetic(4, 250, 5, 1, 2, 3), crit)
	assert.True(t, p.Sustained, p.Why)
	assert.Equal(t, "sustained", p.Why)
	assert.InDelta(t, 1000, p.OfferedPerS, 1e-9)
	assert.InDelta(t, 250, p.RatePerPublisher, 1e-9)
	assert.InDelta(t, 2000, p.DuePerS, 1, "replication included")
	require.Len(t, p.Checks, 5)
	for _, c := range p.Checks {
		assert.True(t, c.OK, c.Name+": "+c.Detail)
	}
	assert.Equal(t, 250.0, p.LatencyBoundMs)
}

// TestJudgeFails: each criterion fails on its own, and the verdict says
// which.
func TestJudgeFails(t *testing.T) {
	behind := synthetic(1, 1000, 5, 0.95, 1, 3) // the broker delivers 95 % of what is due
	behind.Result.Latency.Count = behind.Result.Counts.DueInWindow * 97 / 100
	p := Judge(behind, crit)
	assert.False(t, p.Sustained)
	assert.False(t, checkOf(p, CheckBacklog).OK, "a backlog growing by 5 %% of the due deliveries")
	assert.InDelta(t, 0.05, checkOf(p, CheckBacklog).Value, 0.01)
	assert.False(t, checkOf(p, CheckArrivals).OK)
	assert.True(t, checkOf(p, CheckOffered).OK)
	assert.Contains(t, p.Why, "backlog")

	slow := synthetic(1, 1000, 5, 1, 1, 300)
	p = Judge(slow, crit)
	assert.False(t, p.Sustained)
	assert.False(t, checkOf(p, CheckLatency).OK)
	assert.Contains(t, p.Why, "latency: p99 300 ms")

	lost := synthetic(1, 1000, 5, 1, 1, 3)
	lost.Result.Counts.Lost = 1
	p = Judge(lost, crit)
	assert.False(t, p.Sustained)
	assert.False(t, checkOf(p, CheckLost).OK)

	lagging := synthetic(1, 1000, 5, 1, 1, 3)
	lagging.Result.Counts.SentInWindow = 4900 // 100 ms behind its schedule at the window's end
	p = Judge(lagging, crit)
	assert.True(t, checkOf(p, CheckOffered).OK, "a lag within the latency bound: %s", checkOf(p, CheckOffered).Detail)
	short := synthetic(1, 1000, 5, 1, 1, 3)
	short.Result.Counts.SentInWindow = 4500 // 500 ms behind: more than the bound
	p = Judge(short, crit)
	assert.False(t, p.Sustained)
	assert.False(t, checkOf(p, CheckOffered).OK)
	assert.InDelta(t, 0.9, checkOf(p, CheckOffered).Value, 1e-9)
	assert.InDelta(t, 0.99*0.95, checkOf(p, CheckOffered).Limit, 1e-4)

	failed := &results.Record{Error: "connect: refused"}
	p = Judge(failed, crit)
	assert.False(t, p.Sustained)
	assert.Contains(t, p.Why, "connect: refused")
}

// TestBacklogGrowth: the slope of the per-second backlog over the window,
// times the window; short windows fall back to due less received.
func TestBacklogGrowth(t *testing.T) {
	r := synthetic(1, 1000, 10, 0.9, 1, 3)
	g, n := BacklogGrowth(r.Result, 10)
	assert.InDelta(t, 1000, g, 1, "10 %% of 1000/s over 10 s")
	assert.Equal(t, 11, n)
	r = synthetic(1, 1000, 10, 1, 1, 3)
	g, _ = BacklogGrowth(r.Result, 10)
	assert.InDelta(t, 0, g, 1e-6)
	r = synthetic(1, 1000, 1, 0.9, 1, 3)
	g, n = BacklogGrowth(r.Result, 1)
	assert.Equal(t, 0, n, "too few seconds for a slope")
	assert.InDelta(t, 100, g, 1)
}

// TestLinkUse: the window's messages times the bytes the link carried
// per message of the case, against the link's rate (half duplex: one
// budget for both directions).
func TestLinkUse(t *testing.T) {
	r := synthetic(1, 10, 10, 1, 1, 3)
	prof := netem.Profile{Name: "wifi-paper", RateKbit: 1000, Duplex: netem.DuplexHalf}
	r.Network.Spec = &prof
	r.Result.PubTput, r.Result.SubTput = 10, 10
	r.Result.Counts.Sent, r.Result.Counts.Received = 100, 100
	r.Network.Link = &results.LinkOver{Counters: &netem.Counters{
		ToBroker: netem.DirCounters{TxBytes: 300000}, ToClient: netem.DirCounters{TxBytes: 300000}}}
	pct, bpm := linkUse(r)
	assert.InDelta(t, 3000, bpm, 1e-9)
	assert.InDelta(t, 48, pct, 1e-9, "20 msgs/s x 3000 B of 125000 B/s")
	prof.Duplex = netem.DuplexFull
	pct, _ = linkUse(r)
	assert.InDelta(t, 24, pct, 1e-9, "each direction its own budget")
	r.Network.Spec = &netem.Profile{Name: "wireline"}
	pct, _ = linkUse(r)
	assert.Zero(t, pct)
}

// TestLinkBound: usable bytes over the bytes one offered message puts on
// the link, replication included.
func TestLinkBound(t *testing.T) {
	f := scenario.Defaults().Factors
	f.Size, f.Publishers, f.Subscribers, f.Topics = 900, 1, 4, 1
	half := netem.Profile{Name: "x", RateKbit: 1000, Duplex: netem.DuplexHalf}
	// 1000 B a frame, 1 + 4 frames per message, 112500 B/s usable.
	assert.InDelta(t, 22.5, LinkBound(f, 0, half, nil), 1e-9, "FrameOverhead when the protocol's is not known")
	assert.InDelta(t, 22.5, LinkBound(f, FrameOverhead, half, nil), 1e-9)
	// A protocol with 25-byte frames (as MQTT's PUBLISH): 925 B a frame.
	assert.InDelta(t, 112500.0/(5*925), LinkBound(f, 25, half, nil), 1e-9)
	v := &netem.Verification{}
	v.ToBroker.GoodputKbit, v.ToClient.GoodputKbit = 800, 800
	assert.InDelta(t, 20, LinkBound(f, 0, half, v), 1e-9, "the verified goodput")
	full := half
	full.Duplex = netem.DuplexFull
	assert.InDelta(t, 25, LinkBound(f, 0, full, v), 1e-9, "bound by the 4 deliveries down")
	assert.Zero(t, LinkBound(f, 0, netem.Profile{Name: "wireline"}, nil))
}

// The row's link bound takes its broker's frame overhead
// (Params.FrameOverhead), and FrameOverhead for a broker it says nothing
// of: the pilot of an MQTT row starts from its own protocol's bound.
func TestRowLinkBoundTakesTheBrokersFrame(t *testing.T) {
	f := scenario.Defaults().Factors
	f.Size, f.Publishers, f.Subscribers, f.Topics = 100, 1, 1, 1
	half := netem.Profile{Name: "x", RateKbit: 1000, Duplex: netem.DuplexHalf}
	row := lab.PolicyRow{Suite: "s", Broker: "mq", Network: "x", Case: scenario.Case{ID: "01", Factors: f}, Link: half}
	p := DefaultParams()
	start, from := p.startOf(row)
	assert.Equal(t, FromLink, from)
	assert.InDelta(t, 112500.0/(2*200), start, 1e-9, "100 B bodies, 100 B frames")
	p.FrameOverhead = func(b string, _ scenario.Factors) int {
		if b == "mq" {
			return 18
		}
		return 0
	}
	start, _ = p.startOf(row)
	assert.InDelta(t, 112500.0/(2*118), start, 1e-9, "the broker's 18-byte frames")
	row.Broker = "other"
	start, _ = p.startOf(row)
	assert.InDelta(t, 112500.0/(2*200), start, 1e-9, "0: FrameOverhead")
	assert.InDelta(t, start, p.Analyze(row, nil).LinkBound, 1e-9, "the row's stated bound is the one it started from")
}
