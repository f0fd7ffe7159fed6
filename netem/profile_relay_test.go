package netem

import (
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
		up, down := p.NominalRateKbit(ToBroker), p.NominalRateKbit(ToClient)
		gUp, _, _ := p.expectedGoodputKbit(ToBroker, 1448, true, 0, 0)
		gDown, _, _ := p.expectedGoodputKbit(ToClient, 1448, true, 0, 0)
		t.Logf("%-15s rate %.0f/%.0f kbit/s, goodput bound %.0f/%.0f kbit/s, RTT %.2f ms (std %.2f), IP loss %.4f %%, burst %.2f, queue %v/%v",
			name, up, down, gUp, gDown, p.ExpectedRTTMs(), 1.4142*p.jitterStdMs(), p.ExpectedLossPct(), p.MeanBurst(), fmtQueue(p, ToBroker), fmtQueue(p, ToClient))
		assert.Greater(t, up, 0.0, name)
		assert.Greater(t, p.ExpectedRTTMs(), 0.0, name)
		assert.Less(t, p.ExpectedLossPct(), 10.0, name)
	}
	// The paper's 3 % as frame errors: no IP loss left after 7 attempts.
	assert.Less(t, mustProfile(t, "wifi-paper-mac").ExpectedLossPct(), 1e-6)
	// The trace profile's rates are the traces' means.
	p := mustProfile(t, "cell-trace")
	down, err := p.loadTrace(ToClient)
	require.NoError(t, err)
	assert.InDelta(t, 7031, down.MeanKbit(), 1)
}

func fmtQueue(p Profile, d Direction) string {
	pk, b := p.queueLimits(d)
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
