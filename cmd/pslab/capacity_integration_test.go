package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/capacity"
	"pslab/internal/results"
)

const capacityBrokerSuite = `suite: cap%[1]s
brokers: [%[1]s]
networks: [wireline]
cases:
  - id: "01"
    name: 1/1/1 100 B
`

// TestCapacityOnNATS runs pslab capacity on a NATS child over the
// wireline (the lab's namespaces as root, else loopback): every probe is
// a record with its offered load, verdict and the broker's configuration
// hash; the row ends with a capacity above a floor no broker on this
// machine is below, a named bound and the fixed-load runs; the tables and
// the part's line in parts.log are written.
func TestCapacityOnNATS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts nats-server and runs probes")
	}
	testCapacityOn(t, "nats")
}

// TestCapacityOnNATSMQTT is TestCapacityOnNATS over MQTT, on
// nats-server's MQTT listener (QoS 0: non-durable, non-persistent): a
// capacity search needs nothing of a broker but its driver, its process
// and its effective configuration. (On Mosquitto a trial's search once
// ended after probes at 55-65 k msg/s, Mosquitto's $SYS reading before a
// case failing: "no $SYS/broker/publish/messages/dropped", a retained
// counter expired after 60 s; with the $SYS watch held for the broker's
// life, results/mqtt-capacity ran 41 probes over 5.5 min on one Mosquitto,
// every one a result.)
func TestCapacityOnNATSMQTT(t *testing.T) {
	if testing.Short() {
		t.Skip("starts nats-server and runs probes")
	}
	testCapacityOn(t, "nats-mqtt")
}

func testCapacityOn(t *testing.T, broker string) {
	bin := buildPslab(t)
	dir := t.TempDir()
	suite := filepath.Join(dir, "c.yaml")
	require.NoError(t, os.WriteFile(suite, []byte(fmt.Sprintf(capacityBrokerSuite, broker)), 0o644))
	out := filepath.Join(dir, "out")
	c := exec.Command(bin, "capacity", suite, "--out", out, "--lab", "pslabcap", "--start", "5000", "--resolution", "5%",
		"--target", "30%", "--reps", "2", "--max-reps", "2", "--max-probes", "8", "--loads", "50", "--latency-reps", "2",
		"--latency-max-reps", "2", "--phases", "wireline=500ms/1s/1s", "--busy-attempts", "1", "--quiet-wait", "0")
	c.Env = append(os.Environ(), "PSLAB_CACHE="+filepath.Join(dir, "cache"))
	log, err := c.CombinedOutput()
	require.NoError(t, err, string(log))
	recs, err := results.Read(out)
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	configs := map[string]bool{}
	for _, r := range recs {
		require.Empty(t, r.Error)
		require.NotNil(t, r.Probe)
		assert.Positive(t, r.Probe.OfferedPerS)
		assert.NotEmpty(t, r.Probe.Why)
		assert.NotEmpty(t, r.BrokerConfig)
		configs[r.BrokerConfig] = true
		require.NotNil(t, r.LatencyFloor)
	}
	assert.Len(t, configs, 1, "one broker configuration in one run")
	var rs []capacity.Result
	b, err := os.ReadFile(filepath.Join(out, "capacity.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rs))
	require.Len(t, rs, 1)
	r := rs[0]
	assert.True(t, r.Done)
	assert.Greater(t, r.Capacity, 1000.0, "%s", r.Text)
	assert.Contains(t, []string{capacity.BoundBroker, capacity.BoundClient, capacity.BoundNone}, r.Bound.Name)
	require.Len(t, r.Levels, 1)
	assert.Equal(t, 2, r.Levels[0].N)
	_, err = os.Stat(filepath.Join(out, "CAPACITY.md"))
	assert.NoError(t, err)
	parts, err := os.ReadFile(filepath.Join(out, results.PartsFile))
	require.NoError(t, err)
	assert.Regexp(t, `^part: start \S+, \d+ s, exit 0, pslab `, string(parts))
}
