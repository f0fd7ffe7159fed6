package netem

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The models are tested on made-up clocks and made-up packets, seeded:
// every number below is the same on every run.

func fates(m lossModel, n int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = m.lose()
	}
	return out
}

func lossShare(f []bool) float64 {
	n := 0
	for _, l := range f {
		if l {
			n++
		}
	}
	return float64(n) / float64(len(f))
}

func TestGilbertElliottRunsMatchTheConfiguredBurst(t *testing.T) {
	for _, g := range []GEParams{
		{P: 0.01, R: 0.3, LossGood: 0, LossBad: 1},        // Gilbert: runs geometric, mean 1/R
		{P: 0.005, R: 0.1, LossGood: 0.001, LossBad: 0.6}, // Elliott: losses in both states
		{P: 0.02, R: 0.5, LossGood: 0, LossBad: 0.8},
	} {
		m := &geLoss{GEParams: g, rng: rand.New(rand.NewPCG(1, 1))}
		f := fates(m, 2_000_000)
		runs := lossRuns(f)
		assert.InEpsilon(t, g.MeanLoss(), lossShare(f), 0.05, "mean loss of %+v", g)
		assert.InEpsilon(t, g.MeanBurst(), meanRun(runs), 0.05, "mean burst of %+v", g)
	}
	assert.InDelta(t, 1/0.3, GEParams{P: 0.01, R: 0.3, LossBad: 1}.MeanBurst(), 1e-12)
	// Independent loss is the chain with one state: runs 1/(1-p).
	assert.InDelta(t, 1/(1-0.03), GEParams{LossGood: 0.03}.MeanBurst(), 1e-12)
}

func TestLossModelsAreSeeded(t *testing.T) {
	p := Profile{Name: "x", GEPPct: 1, GERPct: 30, GELossBadPct: 100, Seed: 7}
	a, b := fates(newLossModel(p, profileSeed(p), 1), 10_000), fates(newLossModel(p, profileSeed(p), 1), 10_000)
	assert.Equal(t, a, b, "same seed, same stream: same losses")
	c := fates(newLossModel(p, profileSeed(p), 2), 10_000)
	assert.NotEqual(t, a, c, "the other direction has its own chain")
	p.Seed = 8
	assert.NotEqual(t, a, fates(newLossModel(p, profileSeed(p), 1), 10_000))
}

func TestBernoulliAndCorrelatedLoss(t *testing.T) {
	b := fates(newLossModel(Profile{LossPct: 3}, 1, 1), 1_000_000)
	assert.InDelta(t, 0.03, lossShare(b), 0.001)
	assert.InEpsilon(t, 1/0.97, meanRun(lossRuns(b)), 0.02)
	c := fates(newLossModel(Profile{LossPct: 3, LossCorrelationPct: 25}, 1, 1), 1_000_000)
	assert.Greater(t, lossShare(c), 0.0)
	assert.Less(t, lossShare(c), 0.003, "netem's correlated loss loses far less than p (its known flaw), kept as netem has it")
	assert.InDelta(t, MeanLossPct(Profile{LossPct: 3, LossCorrelationPct: 25})/100, lossShare(c), 0.0002, "the verification expects what the model does")
}

func TestDelayDistributions(t *testing.T) {
	for _, dist := range []string{JitterUniform, JitterNormal} {
		m := newDelayModel(Profile{DelayMs: 40, JitterMs: 10, JitterDist: dist}, 3, 3)
		var sum, sq float64
		n := 200_000
		for range n {
			d := float64(m.draw()) / 1e6
			require.GreaterOrEqual(t, d, 0.0)
			sum += d
			sq += d * d
		}
		mean := sum / float64(n)
		std := math.Sqrt(sq/float64(n) - mean*mean)
		want := 10.0 // normal: jitter is the standard deviation
		if dist == JitterUniform {
			want = 10 / math.Sqrt(3) // U(-10, 10)
		}
		assert.InDelta(t, 40, mean, 0.1, dist)
		assert.InEpsilon(t, want, std, 0.02, dist)
	}
	m := newDelayModel(Profile{DelayMs: 5}, 1, 1)
	assert.Equal(t, int64(5e6), m.draw())
}

// feed offers n packets of a direction at the given times and runs the
// engine to the end, returning the delivered packets.
func runEngine(e *engine, arrivals []*enginePkt) []*enginePkt {
	var out []*enginePkt
	for _, p := range arrivals {
		out = e.advance(p.arrive, out)
		e.arrive(p.arrive, p)
	}
	return e.advance(math.MaxInt64, out)
}

func pkts(dir, n, ipLen int, every int64) []*enginePkt {
	var ps []*enginePkt
	for i := range n {
		ps = append(ps, &enginePkt{dir: dir, ipLen: ipLen, frameLen: ipLen + ethHeader, arrive: int64(i) * every})
	}
	return ps
}

func TestDelayKeepsOrderUnlessReorderIsAllowed(t *testing.T) {
	inversions := func(reorder bool) int {
		e := newEngine(Profile{Name: "d", DelayMs: 20, JitterMs: 10, Reorder: reorder, Duplex: DuplexFull}, nil, nil, 0)
		out := runEngine(e, pkts(dirToBroker, 2000, 100, 1e6)) // one a ms, jitter 10 ms
		require.Len(t, out, 2000)
		n := 0
		for i := 1; i < len(out); i++ {
			if out[i].seq < out[i-1].seq {
				n++
			}
			if !reorder {
				require.GreaterOrEqual(t, out[i].due, out[i-1].due)
			}
		}
		return n
	}
	assert.Zero(t, inversions(false))
	assert.Greater(t, inversions(true), 100)
}

func TestFixedRateServesAtTheRate(t *testing.T) {
	// 1 Mbit/s, 1514-byte frames: 12.112 ms each, back to back.
	e := newEngine(Profile{Name: "r", RateKbit: 1000, Duplex: DuplexFull, QueuePackets: 1000}, nil, nil, 0)
	out := runEngine(e, pkts(dirToBroker, 100, fullIP, 0))
	require.Len(t, out, 100)
	assert.Equal(t, int64(100*12_112_000), out[99].due)
	// Half duplex: both directions share the one rate.
	e = newEngine(Profile{Name: "h", RateKbit: 1000, Duplex: DuplexHalf, QueuePackets: 1000}, nil, nil, 0)
	in := append(pkts(dirToBroker, 50, fullIP, 0), pkts(dirToClient, 50, fullIP, 0)...)
	out = runEngine(e, in)
	require.Len(t, out, 100)
	last := int64(0)
	for _, p := range out {
		last = max(last, p.due)
	}
	assert.Equal(t, int64(100*12_112_000), last)
}

func TestQueueDropTail(t *testing.T) {
	// 30 frames at once into a 10-packet queue: one is sent at once, ten
	// wait, the other 19 are dropped at the tail.
	e := newEngine(Profile{Name: "q", RateKbit: 1000, Duplex: DuplexFull, QueuePackets: 10}, nil, nil, 0)
	out := runEngine(e, pkts(dirToBroker, 30, fullIP, 0))
	c := e.counters(math.MaxInt64)[dirToBroker]
	assert.Len(t, out, 11)
	assert.Equal(t, uint64(19), c.DropQueue)
	for i, p := range out {
		assert.Equal(t, uint64(i+1), p.seq, "the head of the burst went, the tail was dropped")
	}
	// In bytes: 10 full frames' worth.
	e = newEngine(Profile{Name: "q", RateKbit: 1000, Duplex: DuplexFull, QueueBytes: 10 * maxFrame}, nil, nil, 0)
	out = runEngine(e, pkts(dirToBroker, 30, fullIP, 0))
	assert.Len(t, out, 11)
	assert.Equal(t, uint64(19), e.counters(0)[dirToBroker].DropQueue)
}

func TestOutagesDropWhileOff(t *testing.T) {
	p := Profile{Name: "o", Duplex: DuplexFull, OutageOnMs: 800, OutageOffMs: 200}
	e := newEngine(p, nil, nil, 0)
	out := runEngine(e, pkts(dirToBroker, 10_000, 100, 1e6)) // 10 s, one a ms
	c := e.counters(0)[dirToBroker]
	assert.Equal(t, uint64(2000), c.DropOutage, "200 of every 1000 ms off")
	assert.Len(t, out, 8000)
	p.OutageRandom = true
	e = newEngine(p, nil, nil, 0)
	runEngine(e, pkts(dirToBroker, 600_000, 100, 1e6))
	share := float64(e.counters(0)[dirToBroker].DropOutage) / 600_000
	assert.InDelta(t, p.OffFraction(), share, 0.03, "random on/off: the off share on average")
}

func TestParseMahimahiTrace(t *testing.T) {
	tr, err := ParseTrace("t", []byte("1\n1\n5\n\n10\n"))
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 1, 5, 10}, tr.Ms)
	assert.Equal(t, int64(10), tr.PeriodMs())
	assert.InDelta(t, 4*1504*8/10.0, tr.MeanKbit(), 1e-9)
	assert.Equal(t, int64(0), tr.opportunitiesBefore(1e6))
	assert.Equal(t, int64(2), tr.opportunitiesBefore(1e6+1))
	assert.Equal(t, int64(4+2), tr.opportunitiesBefore(11e6+1))
	for _, bad := range []struct{ text, want string }{
		{"", "t:1: empty trace"},
		{"0\n0\n", "t:2: the last time is 0 ms"},
		{"1\nx\n3\n", "t:2: \"x\" is not a time"},
		{"1\n-4\n", "t:2: \"-4\" is not a time"},
		{"5\n3\n", "t:2: 3 ms is before"},
	} {
		_, err := ParseTrace("t", []byte(bad.text))
		require.Error(t, err, bad.text)
		assert.Contains(t, err.Error(), bad.want)
		assert.ErrorIs(t, err, ErrBadProfile)
	}
}

func TestTraceDeliversAtItsOpportunities(t *testing.T) {
	// Opportunities at 1, 1, 5 and 10 ms, repeating every 10 ms.
	tr, _ := ParseTrace("t", []byte("1\n1\n5\n10\n"))
	e := newEngine(Profile{Name: "t", Duplex: DuplexFull, QueuePackets: 100}, tr, tr, 0)
	// Eight full packets at 0: two at 1 ms, one at 5, one at 10, then 11, 11, 15, 20.
	out := runEngine(e, pkts(dirToBroker, 8, 1500, 0))
	var got []int64
	for _, p := range out {
		got = append(got, p.due/1e6)
	}
	assert.Equal(t, []int64{1, 1, 5, 10, 11, 11, 15, 20}, got)
	// Small packets share an opportunity: 1504 / 52 = 28 ACK-sized ones.
	e = newEngine(Profile{Name: "t", Duplex: DuplexFull, QueuePackets: 200}, tr, tr, 0)
	out = runEngine(e, pkts(dirToClient, 100, 52, 0))
	at := map[int64]int{}
	for _, p := range out {
		at[p.due/1e6]++
	}
	// 2 x 1504 bytes at 1 ms: 57 whole packets (the 58th ends at 5 ms);
	// at 5 ms the 58th's last 8 bytes and 28 more (1496 = 28 x 52 + 40).
	assert.Equal(t, 57, at[1])
	assert.Equal(t, 29, at[5])
	// An idle link loses its opportunities: a packet at 12 ms waits for 15.
	e = newEngine(Profile{Name: "t", Duplex: DuplexFull, QueuePackets: 100}, tr, tr, 0)
	out = runEngine(e, []*enginePkt{{dir: dirToBroker, ipLen: 1500, frameLen: maxFrame, arrive: 12e6}})
	assert.Equal(t, int64(15e6), out[0].due)
}

// dsss is 802.11b at 1 Mbit/s, long preamble (IEEE 802.11-2020 clause 15/16).
var dsss = Profile{Name: "w", Duplex: DuplexHalf, WifiPhyKbit: 1000, WifiSlotUs: 20, WifiSifsUs: 10,
	WifiPreambleUs: 192, WifiCWMin: 31, WifiCWMax: 1023, WifiRetryLimit: 7, LossPct: 3, QueuePackets: 1000}

func TestWifiAirtimeArithmetic(t *testing.T) {
	w := newWifiModel(dsss, 1, 5)
	// DIFS 50 + preamble 192 + (1500+36)*8 us + SIFS 10 + ACK preamble 192 + 14*8 us.
	assert.Equal(t, int64((50+192+12288+10+192+112)*1000), w.fixedAirtime(1500))
	assert.Equal(t, []int{31, 63, 127, 255, 511, 1023, 1023}, []int{w.cw(1), w.cw(2), w.cw(3), w.cw(4), w.cw(5), w.cw(6), w.cw(7)})
	air, attempts, residual := w.expectedAirtime(1500, 0.03)
	assert.InDelta(t, (1-math.Pow(0.03, 7))/0.97, attempts, 1e-12)
	assert.InDelta(t, math.Pow(0.03, 7), residual, 1e-20)
	// First attempt: fixed + 15.5 slots; the second (3 %): fixed + 31.5 slots ...
	assert.InDelta(t, 12844e3+310e3+0.03*(12844e3+630e3)+0.0009*(12844e3+1270e3), air, 1e3)
	// The model run frame by frame agrees.
	sa, sk, sr := w.simulatedAirtime(1500, newLossModel(dsss, 1, 1), 200_000)
	assert.InEpsilon(t, air, sa, 0.005)
	assert.InEpsilon(t, attempts, sk, 0.005)
	assert.Zero(t, sr)
}

func TestWifiRetriesBecomeDelayAndResidualLoss(t *testing.T) {
	// 3 % frame errors and 7 attempts: IP loses nothing (0.03^7), but
	// about 3 % of frames are sent twice.
	e := newEngine(dsss, nil, nil, 0)
	runEngine(e, pkts(dirToBroker, 20_000, 1500, 20e6))
	c := e.counters(0)[dirToBroker]
	assert.Zero(t, c.DropRetry)
	assert.Zero(t, c.DropLoss, "under 802.11 the loss model is the frame error rate, not IP loss")
	assert.InDelta(t, 0.03/0.97, float64(c.Retries)/20_000, 0.004)
	// 50 % frame errors and 2 attempts: 25 % residual loss.
	p := dsss
	p.LossPct, p.WifiRetryLimit = 50, 2
	e = newEngine(p, nil, nil, 0)
	runEngine(e, pkts(dirToBroker, 20_000, 1500, 20e6))
	c = e.counters(0)[dirToBroker]
	assert.InDelta(t, 0.25, float64(c.DropRetry)/20_000, 0.01)
	// Half duplex: the medium alternates between the directions, and
	// together they get one medium's airtime.
	e = newEngine(dsss, nil, nil, 0)
	out := runEngine(e, append(pkts(dirToBroker, 100, 1500, 0), pkts(dirToClient, 100, 1500, 0)...))
	require.Len(t, out, 200)
	for i := 0; i+1 < 20; i += 2 {
		assert.NotEqual(t, out[i].dir, out[i+1].dir, "turns at %d", i)
	}
	air, _, _ := newWifiModel(dsss, 1, 5).expectedAirtime(1500, 0.03)
	assert.InEpsilon(t, 200*air, float64(out[199].due), 0.03)
}

func TestEngineIsDeterministic(t *testing.T) {
	p := Profile{Name: "x", RateKbit: 2000, Duplex: DuplexFull, GEPPct: 2, GERPct: 25, GELossBadPct: 100,
		DelayMs: 30, JitterMs: 5, QueuePackets: 20, Seed: 42}
	run := func() [2]RelayDirCounters {
		e := newEngine(p, nil, nil, 0)
		runEngine(e, pkts(dirToBroker, 5000, 1000, 3e6))
		return e.counters(0)
	}
	assert.Equal(t, run(), run())
}

func TestBadRelayProfilesAreRefusedWithTheirLine(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ yaml, want string }{
		{"delay_ms: -5\n", ":1: delay_ms: -5 is out of range"},
		{"loss_pct: 150\n", ":1: loss_pct: 150 is out of range"},
		{"ge_p_pct: 1\nge_r_pct: 0\n", ":2: ge_r_pct: must be above 0"},
		{"ge_p_pct: 1\nge_r_pct: 30\nloss_pct: 2\n", ":1: ge_p_pct: Gilbert-Elliott loss and loss_pct"},
		{"trace_up: nope.trace\ntrace_down: nope.trace\n", ":1: trace_up: trace " + filepath.Join(dir, "nope.trace") + ": no such file"},
		{"trace_up: bad.trace\ntrace_down: bad.trace\n", ":1: trace_up: " + filepath.Join(dir, "bad.trace") + ":2: \"12x\" is not a time"},
		{"trace_up: bad.trace\n", "trace_up and trace_down go together"},
		{"wifi_phy_kbit: 1000\nduplex: half\n", "needs wifi_slot_us, wifi_sifs_us, wifi_preamble_us, wifi_cw_min, wifi_retry_limit too"},
		{"wifi_slot_us: 9\n", "the wifi_* keys need wifi_phy_kbit"},
		{"queue_packets: 2.5\n", ":1: queue_packets: 2.5 is not a whole number"},
		{"reorder: yes\n", ":1: reorder: want true or false"},
		{"outage_on_ms: 100\n", "outage_on_ms and outage_off_ms go together"},
		{"backend: kernel\n", ":1: backend: \"kernel\" must be"},
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.trace"), []byte("10\n12x\n"), 0o644))
		f := filepath.Join(dir, "p.yaml")
		require.NoError(t, os.WriteFile(f, []byte(c.yaml), 0o644))
		_, err := LoadProfile(f)
		require.Error(t, err, c.yaml)
		want := c.want
		if strings.HasPrefix(want, ":") {
			want = f + want
		}
		assert.Contains(t, err.Error(), want, c.yaml)
		assert.ErrorIs(t, err, ErrBadProfile)
	}
}
