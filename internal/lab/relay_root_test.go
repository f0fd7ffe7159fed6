package lab

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/brokers/mosquitto"
	"pslab/internal/scenario"
	"pslab/internal/testbroker"
)

// TestMQTTCrossesTheRelay runs one MQTT case (Mosquitto, QoS 1) on a link
// the relay backend emulates (delay, which the kernel here cannot do) and
// checks from the record that the relay carried it: the backend is the
// relay, its counters saw the publisher's messages to the broker and the
// deliveries back, and seen = delivered + dropped on each direction. The
// relay works below IP, so nothing in it is per protocol; this proves it
// for a broker pslab starts as a child process (broker.Proc).
func TestMQTTCrossesTheRelay(t *testing.T) {
	testbroker.SkipShort(t, "root, network namespaces, mosquitto")
	testbroker.RequireRoot(t)
	if _, err := mosquitto.Binary(); err != nil {
		t.Fatalf("%v (scripts/test.sh installs it)", err)
	}
	dir := t.TempDir()
	prof := filepath.Join(dir, "relay-fast.yaml")
	require.NoError(t, os.WriteFile(prof, []byte("rate_kbit: 20000\ndelay_ms: 2\nbackend: relay\n"), 0o644))
	s, err := scenario.Parse("relay-mqtt.yaml", []byte(`suite: relay-mqtt
brokers: [mosquitto]
cases:
  - {id: "01", publishers: 1, subscribers: 1, topics: 1, rate: 50, size: 1000, delivery: persistent, warmup: 500ms, window: 3s, drain: 5s}
`), scenario.Options{})
	require.NoError(t, err)
	var log bytes.Buffer
	o := Options{Networks: []string{prof}, Reps: 1, Out: t.TempDir(), LabName: "labrelmq", Log: &log}
	p, err := MakePlan(s, o)
	require.NoError(t, err)
	sum, err := Run(context.Background(), p, o)
	t.Log(log.String())
	require.NoError(t, err)
	require.Len(t, sum.Records, 1)
	r := sum.Records[0]
	require.Empty(t, r.Error)
	assert.Equal(t, "relay", r.Network.Backend)
	require.NotNil(t, r.Network.Verify, "the shaped link is verified")
	require.NotNil(t, r.Network.Link)
	require.NotNil(t, r.Network.Link.Counters, r.Network.Link.Error)
	up, down := r.Network.Link.ToBroker.Relay, r.Network.Link.ToClient.Relay
	require.NotNil(t, up, "relay counters to the broker")
	require.NotNil(t, down, "relay counters to the clients")

	c := r.Result.Counts
	require.Positive(t, c.Sent)
	require.Positive(t, c.Received)
	t.Logf("sent %d, received %d; relay to broker: seen %d delivered %d dropped %d; to clients: seen %d delivered %d dropped %d",
		c.Sent, c.Received, up.Seen, up.Delivered, up.Drops(), down.Seen, down.Delivered, down.Drops())
	// Payload bytes at least: every message crossed the link to the
	// broker and every delivery the link back.
	assert.GreaterOrEqual(t, r.Network.Link.ToBroker.TxBytes, uint64(c.Sent)*1000)
	assert.GreaterOrEqual(t, r.Network.Link.ToClient.TxBytes, uint64(c.Received)*1000)
	assert.Positive(t, up.Delivered)
	assert.Positive(t, down.Delivered)
	// Over the case, the link's backlog can change by what is queued at
	// its ends, so the balance holds within the queue's bound.
	for _, d := range []struct {
		name string
		seen uint64
		out  uint64
	}{{"to the broker", up.Seen, up.Delivered + up.Drops()}, {"to the clients", down.Seen, down.Delivered + down.Drops()}} {
		assert.LessOrEqual(t, d.out, d.seen+1000, "%s: the relay let out more than it saw", d.name)
		assert.GreaterOrEqual(t, d.out+1000, d.seen, "%s: the relay lost packets it did not count", d.name)
	}
}
