package nats

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/broker"
	"pslab/internal/results"
)

func configHash(t *testing.T, c broker.Configured) string {
	t.Helper()
	s, f, err := c.EffectiveConfig()
	require.NoError(t, err)
	return results.ConfigHash(s, f)
}

// TestOneConfigurationAcrossStarts: two servers that differ only in their
// store and addresses (two labs) hash alike, for nats and for nats-mqtt;
// nats-mqtt is another configuration than nats.
func TestOneConfigurationAcrossStarts(t *testing.T) {
	a := &Server{store: "/tmp/store-a", monitor: "10.0.0.1:8222", mqtt: "10.0.0.1:1883"}
	b := &Server{store: "/tmp/store-b", monitor: "127.0.0.1:38222", mqtt: "127.0.0.1:41883"}
	assert.Equal(t, configHash(t, a), configHash(t, b))
	ma, mb := &mqttServer{Server: a}, &mqttServer{Server: b}
	assert.Equal(t, configHash(t, ma), configHash(t, mb))
	assert.NotEqual(t, configHash(t, a), configHash(t, ma))
}
