package broker

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExternalMonitorPort: a NATS URL's ?monitor=PORT becomes the
// endpoint's monitoring URL on the broker's host, and leaves the client
// URL; a bad port is refused, naming it, with the password redacted.
func TestExternalMonitorPort(t *testing.T) {
	e, err := NewExternal("nats", "nats://u:secret@10.77.2.2:4222?monitor=8222")
	require.NoError(t, err)
	assert.Equal(t, "http://10.77.2.2:8222", e.ep.MonitorURL)
	assert.Equal(t, "nats://10.77.2.2:4222", e.ep.URL, "the client URL has no monitor parameter")
	assert.Equal(t, "u", e.ep.User)

	plain, err := NewExternal("nats", "nats://u:secret@127.0.0.1:4222")
	require.NoError(t, err)
	assert.Empty(t, plain.ep.MonitorURL, "no monitoring endpoint unless the URL names one")

	for _, bad := range []string{"nats://u:secret@h:4222?monitor=x", "nats://u:secret@h:4222?monitor=70000"} {
		_, err := NewExternal("nats", bad)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "monitor=")
		assert.NotContains(t, err.Error(), "secret")
	}
}
