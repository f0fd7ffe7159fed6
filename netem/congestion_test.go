package netem

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/testbroker"
)

// The congestion control read inside a namespace is one the kernel offers
// (net.* sysctls resolve by the reading thread's namespace).
func TestCongestionControlInANamespace(t *testing.T) {
	testbroker.SkipShort(t, "network namespaces")
	testbroker.RequireRoot(t)
	avail, err := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control")
	require.NoError(t, err)
	const name = "pslab-cctest"
	_ = deleteNamedNS(name)
	require.NoError(t, createNamedNS(name))
	t.Cleanup(func() { _ = deleteNamedNS(name) })
	cc, err := readSysctl(name, congestionPath)
	require.NoError(t, err)
	assert.NotEmpty(t, cc)
	assert.Contains(t, strings.Fields(string(avail)), cc)
	assert.Contains(t, strings.Fields(string(avail)), HostCongestionControl())
}

// A congestion control the kernel lacks is refused, naming what it has;
// one it has is taken; and it is refused where the namespaces are not the
// lab's own.
func TestCheckCongestionControl(t *testing.T) {
	if HostCongestionControl() == "" {
		t.Skip("skipping: no /proc/sys/net/ipv4/tcp_congestion_control")
	}
	err := CheckCongestionControl("no-such-cc")
	require.Error(t, err)
	assert.Contains(t, err.Error(), HostCongestionControl(), "the refusal names what the kernel has")
	assert.NoError(t, CheckCongestionControl(HostCongestionControl()))
	assert.Error(t, CheckOptions(Options{TCPCongestion: "no-such-cc"}))
	assert.NoError(t, CheckOptions(Options{TCPCongestion: HostCongestionControl()}))
	assert.Error(t, CheckOptions(Options{TCPCongestion: HostCongestionControl(), BrokerPID: 42}))
}

// Up sets the chosen congestion control in every client namespace and the
// broker's, and the host's stays as it was: reno, which every kernel has,
// or another when the host already uses reno.
func TestUpSetsCongestionControl(t *testing.T) {
	requireRoot(t)
	host := HostCongestionControl()
	want := "reno"
	if host == want {
		want = "cubic"
		if CheckCongestionControl(want) != nil {
			t.Skip("skipping: the host uses reno and the kernel has no cubic")
		}
	}
	l := New(Options{Prefix: testPrefix, Links: 2, TCPCongestion: want})
	require.NoError(t, l.Up(t.Context()))
	t.Cleanup(func() { assert.NoError(t, l.Down()) })
	got, err := l.CongestionControl()
	require.NoError(t, err)
	assert.Equal(t, want, got, "first link's clients and the broker")
	got, err = l.Link(1).CongestionControl()
	require.NoError(t, err)
	assert.Equal(t, want, got, "second link's clients and the broker")
	assert.Equal(t, host, HostCongestionControl(), "the host's is untouched")
}
