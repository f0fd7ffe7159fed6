package mosquitto

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/results"
)

func configHash(t *testing.T, m *Mosquitto) string {
	t.Helper()
	s, f, err := m.EffectiveConfig()
	require.NoError(t, err)
	return results.ConfigHash(s, f)
}

// TestOneConfigurationAcrossStarts: two starts that differ only in their
// listener address and run directory (two labs) hash alike; another
// Mosquitto version does not.
func TestOneConfigurationAcrossStarts(t *testing.T) {
	a := &Mosquitto{conf: config{ListenIP: "10.0.0.1", Port: 1883, Dir: "/run/a"}, dir: "/run/a", version: "2.0.11"}
	b := &Mosquitto{conf: config{ListenIP: "127.0.0.1", Port: 41883, Dir: "/run/b"}, dir: "/run/b", version: "2.0.11"}
	assert.Equal(t, configHash(t, a), configHash(t, b))
	b.version = "2.0.18"
	assert.NotEqual(t, configHash(t, a), configHash(t, b))
}
