package netem

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chooser is a Lab whose kernel probe answered has (no system touched).
func chooser(has bool, forced Backend) *Lab {
	l := New(Options{Prefix: "x", Backend: forced})
	l.netemOK = &has
	return l
}

func TestBackendChoice(t *testing.T) {
	for _, c := range []struct {
		profile string
		netem   bool
		forced  Backend
		want    Backend
	}{
		{"wifi-paper", false, "", BackendTBFNft}, // stays on TBF + nftables
		{"wifi-paper", true, "", BackendNetem},
		{"wifi-paper", false, BackendRelay, BackendRelay},
		{"wifi-bursty", false, "", BackendRelay}, // delay, no sch_netem
		{"wifi-bursty", true, "", BackendNetem},  // netem does it as written (reorder: true)
		{"wifi-paper-mac", true, "", BackendRelay},
		{"wifi-good", false, "", BackendRelay},
		{"wifi-poor", true, "", BackendRelay},
		{"lte", true, "", BackendRelay},
		{"3g", false, "", BackendRelay},
		{"satellite", false, "", BackendRelay},
		{"cell-trace", false, "", BackendRelay},
		{"wifi-paper-ge", true, "", BackendRelay},
	} {
		p := mustProfile(t, c.profile)
		got, err := chooser(c.netem, c.forced).chooseBackend(p)
		require.NoError(t, err)
		assert.Equal(t, c.want, got, "%s (netem %v, forced %q)", c.profile, c.netem, c.forced)
	}
	// A relay-only profile forced onto a kernel backend is refused, naming why.
	_, err := buildConfig(mustProfile(t, "wifi-poor"), BackendNetem, testNames(t))
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.Contains(t, err.Error(), "Gilbert-Elliott")
	_, err = buildConfig(mustProfile(t, "cell-trace"), BackendTBFNft, testNames(t))
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.Contains(t, err.Error(), "trace")
}

// TestRelayProfilesModels prints what each built-in relay profile's models
// expect (docs/netem.md's table) and checks they are sane.
func TestRelayProfilesModels(t *testing.T) {
	for _, name := range []string{"wifi-paper", "wifi-paper-mac", "wifi-paper-ge", "wifi-good", "wifi-poor", "lte", "3g", "satellite", "cell-trace", "wifi-bursty"} {
		p := mustProfile(t, name)
		up, down := NominalRateKbit(p, ToBroker), NominalRateKbit(p, ToClient)
		gUp, _, _ := expectedGoodputKbit(p, ToBroker, 1448, true, 0, 0)
		gDown, _, _ := expectedGoodputKbit(p, ToClient, 1448, true, 0, 0)
		t.Logf("%-15s rate %.0f/%.0f kbit/s, goodput bound %.0f/%.0f kbit/s, RTT %.2f ms (std %.2f), IP loss %.4f %%, burst %.2f, queue %v/%v",
			name, up, down, gUp, gDown, ExpectedRTTMs(p), 1.4142*jitterStdMs(p), ExpectedLossPct(p), p.MeanBurst(), fmtQueue(p, ToBroker), fmtQueue(p, ToClient))
		assert.Greater(t, up, 0.0, name)
		assert.Greater(t, ExpectedRTTMs(p), 0.0, name)
		assert.Less(t, ExpectedLossPct(p), 10.0, name)
	}
	// The paper's 3 % as frame errors: no IP loss left after 7 attempts.
	assert.Less(t, ExpectedLossPct(mustProfile(t, "wifi-paper-mac")), 1e-6)
	// The trace profile's rates are the traces' means.
	p := mustProfile(t, "cell-trace")
	down, err := loadTrace(p, ToClient)
	require.NoError(t, err)
	assert.InDelta(t, 7031, down.MeanKbit(), 1)
}

func fmtQueue(p Profile, d Direction) string {
	pk, b := queueLimits(p, d)
	if pk > 0 {
		return itoa(pk) + " pkts"
	}
	return itoa(b) + " B"
}

func itoa(n int) string {
	s := ""
	if n == 0 {
		return "0"
	}
	for n > 0 {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return s
}

// TestProfileJSONUnchangedForKernelProfiles: records of the profiles that
// existed before the relay write the same JSON as before (the relay's keys
// are all omitted when not set).
func TestProfileJSONUnchangedForKernelProfiles(t *testing.T) {
	b, err := json.Marshal(mustProfile(t, "wifi-paper"))
	require.NoError(t, err)
	s := string(b)
	assert.True(t, strings.HasSuffix(s, `"rate_kbit":1000,"loss_pct":3,"loss_correlation_pct":0,"delay_ms":0,"jitter_ms":0,"duplicate_pct":0,"duplex":"half","queue_ms":500}`), s)
}

func TestRelayCountersSubAndDropShare(t *testing.T) {
	before := Counters{ToBroker: DirCounters{Relay: &RelayDirCounters{Seen: 100, Delivered: 90, DropLoss: 6, DropQueue: 4}}}
	after := Counters{ToBroker: DirCounters{Relay: &RelayDirCounters{Seen: 300, Delivered: 270, DropLoss: 18, DropQueue: 12, QueuedBytes: 3000}}}
	d := after.Sub(before)
	require.NotNil(t, d.ToBroker.Relay)
	assert.Equal(t, RelayDirCounters{Seen: 200, Delivered: 180, DropLoss: 12, DropQueue: 8, QueuedBytes: 3000}, *d.ToBroker.Relay)
	pct, ok := d.ToBroker.DropPct()
	assert.True(t, ok)
	assert.InDelta(t, 10, pct, 1e-9)
	assert.Equal(t, uint64(3000), after.Backlog())
	// A relay started again in between (counters back to 0): no delta.
	again := Counters{ToBroker: DirCounters{Relay: &RelayDirCounters{Seen: 5}}}
	assert.Equal(t, uint64(0), again.Sub(after).ToBroker.Relay.Seen)
}

func TestTraceMeanWait(t *testing.T) {
	// Opportunities every 10 ms: a packet at a random time waits 5 ms.
	tr, err := ParseTrace("t", []byte("10\n20\n30\n40\n"))
	require.NoError(t, err)
	assert.InDelta(t, 5, tr.meanWaitMs(), 1e-9)
	// Gaps of 1 and 9 ms: (1 + 81) / 2 / 10 = 4.1 ms.
	tr, _ = ParseTrace("t", []byte("1\n10\n"))
	assert.InDelta(t, 4.1, tr.meanWaitMs(), 1e-9)
}

func TestExpectedRTT(t *testing.T) {
	// 20 ms each way plus a 98-byte frame at 4 Mbit/s each way.
	p := relayTestProfile()
	assert.InDelta(t, 40+2*98*8/4000.0, ExpectedRTTMs(p), 1e-9)
	assert.InDelta(t, 2/math.Sqrt(3), jitterStdMs(p), 1e-12)
	assert.InDelta(t, 100*p.GE().MeanLoss(), ExpectedLossPct(p), 1e-9)
	p.OutageOnMs, p.OutageOffMs = 900, 100
	assert.InDelta(t, 100*(1-(1-p.GE().MeanLoss())*0.9), ExpectedLossPct(p), 1e-9)
	assert.False(t, p.BurstCheckable(), "outages hide the loss model's runs")
}

// TestCheckProfileNeedsARelayCapableProgram: CheckProfile decides the
// backend as Apply would, and a relay profile is refused before anything
// in a program that cannot be the relay.
func TestCheckProfileNeedsARelayCapableProgram(t *testing.T) {
	p := Profile{Name: "r", DelayMs: 5, Duplex: DuplexFull, Backend: string(BackendRelay)}
	saved := relayCapable
	defer func() { relayCapable = saved }()
	relayCapable = true
	require.NoError(t, CheckProfile(p))
	relayCapable = false
	err := CheckProfile(p)
	assert.ErrorIs(t, err, ErrRelayUnavailable)
	assert.Contains(t, err.Error(), `"r"`)
}
