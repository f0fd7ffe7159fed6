package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/broker"
	"pslab/internal/results"
	"pslab/internal/testbroker"
)

// TestExternalBrokerInItsOwnNamespace stands in for a broker container: a
// nats-server in a network namespace of its own (unshare -n), measured with
// --url and --broker-pid through the lab's router.
func TestExternalBrokerInItsOwnNamespace(t *testing.T) {
	testbroker.SkipShort(t, "root, network namespaces; builds pslab")
	testbroker.RequireRoot(t)
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare(1)")
	}
	bin := buildPslab(t)
	dir := t.TempDir()
	ctr := exec.Command("unshare", "-n", "--", bin)
	ctr.Env = append(os.Environ(), "PSLAB_CHILD=nats-server", "PSLAB_NATS_LISTEN=0.0.0.0:4222",
		"PSLAB_NATS_STORE="+filepath.Join(dir, "store"), "PSLAB_NATS_USER=u", "PSLAB_NATS_PASSWORD=pw",
		"PSLAB_NATS_DETACHED=true")
	require.NoError(t, ctr.Start())
	t.Cleanup(func() { _ = ctr.Process.Kill(); _ = ctr.Wait() })
	time.Sleep(500 * time.Millisecond) // the server starts inside its namespace

	out := filepath.Join(dir, "out")
	run := exec.Command(bin, "run", "../../scenarios/smoke.yaml", "--quick", "--broker", "nats", "--cases", "1",
		"--network", "wireline", "--lab", "pslabctr", "--out", out,
		"--broker-pid", strconv.Itoa(ctr.Process.Pid), "--url", "nats=nats://u:pw@10.77.2.2:4222")
	combined, err := run.CombinedOutput()
	require.NoError(t, err, string(combined))
	recs, err := results.Read(out)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	r := recs[0]
	assert.Empty(t, r.Error)
	assert.Equal(t, "namespaces", r.Network.Path, "through the lab's router, not the host network")
	assert.Positive(t, r.Result.Counts.Received)
	assert.Equal(t, r.Result.Counts.Expected, r.Result.Counts.Received+r.Result.Counts.Backlog+r.Result.Counts.InFlight+r.Result.Counts.Lost)
	// The lab is gone; the stand-in container's process is still there.
	_, err = os.Stat("/run/netns/pslabctr-cli")
	assert.True(t, os.IsNotExist(err))
	assert.True(t, broker.ProcessAlive(ctr.Process.Pid))
}
