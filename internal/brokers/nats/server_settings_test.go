package nats

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/broker"
)

// TestNATSChildSettings: the child nats-server answers on its monitoring
// endpoint (the driver reads core subscribers' output buffers there) and
// runs with the write deadline pslab sets for slow links, not the 10 s
// default that closed wireless subscribers.
func TestNATSChildSettings(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test (a nats-server child) skipped in -short mode")
	}
	n := NewServer(ServerConfig{StoreDir: t.TempDir()})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ep, err := n.Start(ctx, broker.LoopbackHost{})
	require.NoError(t, err)
	defer n.Stop(context.Background())
	require.NotEmpty(t, ep.MonitorURL)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ep.MonitorURL+"/varz", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var varz struct {
		WriteDeadline time.Duration `json:"write_deadline"`
		Port          int           `json:"port"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&varz))
	assert.Equal(t, WriteDeadline, varz.WriteDeadline)
	assert.Contains(t, ep.URL, ":"+strconv.Itoa(varz.Port), "the monitoring endpoint is this server's")
	assert.Contains(t, n.Settings()["write_timeout"], "retry")
}
