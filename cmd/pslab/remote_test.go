package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/results"
	"pslab/internal/testbroker"
)

// TestBrokerOnAnotherHost: a nats-server on a stand-in remote host (a
// namespace of the test's, behind a veth of the host's, 10.78.0.0/30) is
// measured with --url over wireline and wifi-paper through the lab's
// router and the host, then the embedded broker in the namespaced lab over
// wifi-paper. The remote wifi-paper throughput is link-bound: far below
// the remote wireline, and within a factor of 3 of the namespaced lab's.
func TestBrokerOnAnotherHost(t *testing.T) {
	testbroker.SkipShort(t, "root, network namespaces; builds pslab")
	testbroker.RequireRoot(t)
	bin := buildPslab(t)
	dir := t.TempDir()
	rh, err := testbroker.NewRemoteHost("pslt-rem", "pslt-h0", "10.78.0.1", "10.78.0.2")
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, rh.Close()) })
	fwdBefore, err := os.ReadFile("/proc/sys/net/ipv4/conf/pslt-h0/forwarding")
	require.NoError(t, err)

	srv := rh.Command(bin)
	srv.Env = append(os.Environ(), "PSLAB_CHILD=nats-server", "PSLAB_NATS_LISTEN=10.78.0.2:61913",
		"PSLAB_NATS_STORE="+filepath.Join(dir, "store"), "PSLAB_NATS_USER=u", "PSLAB_NATS_PASSWORD=pw",
		"PSLAB_NATS_DETACHED=true")
	require.NoError(t, srv.Start())
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	for i := 0; ; i++ { // the server starts on the remote host
		c, err := net.DialTimeout("tcp", "10.78.0.2:61913", time.Second)
		if err == nil {
			c.Close()
			break
		}
		require.Less(t, i, 100, "nats-server on the remote host did not start: %v", err)
		time.Sleep(100 * time.Millisecond)
	}

	run := func(out string, args ...string) []results.Record {
		args = append([]string{"run", "../../scenarios/smoke.yaml", "--broker", "nats", "--cases", "1,5", "--out", out}, args...)
		combined, err := exec.Command(bin, args...).CombinedOutput()
		require.NoError(t, err, string(combined))
		recs, err := results.Read(out)
		require.NoError(t, err)
		return recs
	}
	remote := run(filepath.Join(dir, "remote"), "--network", "wireline,wifi-paper", "--lab", "pslabrem",
		"--url", "nats=nats://u:pw@10.78.0.2:61913")
	local := run(filepath.Join(dir, "local"), "--network", "wifi-paper", "--lab", "pslabref")

	require.Len(t, remote, 4)
	require.Len(t, local, 2)
	byNet := map[string]results.Record{}
	for _, r := range remote {
		require.Empty(t, r.Error)
		require.NotNil(t, r.Result)
		assert.Equal(t, "namespaces", r.Network.Path)
		assert.NotNil(t, r.Network.Remote, "the path beyond the host is recorded")
		c := r.Result.Counts
		assert.Equal(t, c.Expected, c.Received+c.Backlog+c.InFlight+c.Lost, "due = received + backlog + in flight + lost")
		require.NotNil(t, r.Network.Link, "link counters in the record")
		require.NotNil(t, r.Network.Link.Counters, "link counters in the record")
		require.NotNil(t, r.Network.Link.Uplink, "uplink counters in the record")
		assert.Positive(t, r.Network.Link.Uplink.ToBroker, "the case's traffic went out through the host")
		byNet[r.Network.Profile+" "+r.CaseID] = r
	}
	for _, r := range local {
		require.Empty(t, r.Error)
		byNet["namespaced "+r.CaseID] = r
	}
	tput := func(k string) float64 { return byNet[k].Result.SubTput }
	for _, id := range []string{"01", "05"} {
		t.Logf("case %s sub msg/s: remote wireline %.0f, remote wifi-paper %.0f, namespaced wifi-paper %.0f",
			id, tput("wireline "+id), tput("wifi-paper "+id), tput("namespaced "+id))
	}
	// Link-bound: 1/1/1 with 100 B bodies moves hundreds of thousands of
	// messages a second on the wire, under a thousand over 1 Mbit/s.
	require.Positive(t, tput("wifi-paper 01"))
	assert.Less(t, tput("wifi-paper 01"), tput("wireline 01")/5, "wifi-paper to the remote broker is link-bound")
	// The same link as the namespaced lab's: compared on the case whose
	// ten connections keep the link busy (one connection's throughput on
	// a lossy link swings with its retransmission timeouts).
	ratio := tput("wifi-paper 05") / tput("namespaced 05")
	// Wide: seen 0.69 and 0.92 with 3 s windows (wireline is 400x more).
	assert.Greater(t, ratio, 1.0/3, "remote and namespaced wifi-paper agree within a factor of 3")
	assert.Less(t, ratio, 3.0, "remote and namespaced wifi-paper agree within a factor of 3")

	// Nothing of the lab is left on the host.
	fwdAfter, err := os.ReadFile("/proc/sys/net/ipv4/conf/pslt-h0/forwarding")
	require.NoError(t, err)
	assert.Equal(t, string(fwdBefore), string(fwdAfter))
	_, err = net.InterfaceByName("pslabrem-b0")
	assert.Error(t, err)
	for _, f := range []string{"/run/pslab-pslabrem.uplink", "/run/netns/pslabrem-cli"} {
		_, err := os.Stat(f)
		assert.True(t, os.IsNotExist(err), f)
	}
	nft, _ := exec.Command("nft", "list", "tables").Output()
	assert.False(t, strings.Contains(string(nft), "pslabrem"), string(nft))
}
