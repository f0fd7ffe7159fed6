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
