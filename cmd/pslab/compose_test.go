package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/broker"
	"pslab/internal/results"
	"pslab/internal/scenario"
)

// TestBrokerContainers measures the broker containers of docker-compose.yml
// through the lab: the smoke suite on both, over the wireline and
// wifi-paper. scripts/test-containers.sh starts the daemon, builds the
// images, brings the containers up (no network but the lab's) and runs this
// with PSLAB_CONTAINER_TEST=1, the container names in NATS_CONTAINER and
// ARTEMIS_CONTAINER and their credentials in NATS_*/ARTEMIS_*.
func TestBrokerContainers(t *testing.T) {
	if os.Getenv("PSLAB_CONTAINER_TEST") != "1" {
		t.Skip("runs from scripts/test-containers.sh (PSLAB_CONTAINER_TEST=1)")
	}
	require.Zero(t, os.Geteuid(), "needs root")
	const labName = "pslabdkr"
	natsC, artemisC := os.Getenv("NATS_CONTAINER"), os.Getenv("ARTEMIS_CONTAINER")
	require.NotEmpty(t, natsC)
	require.NotEmpty(t, artemisC)
	bin := buildPslab(t)
	natsPID, err := dockerPID(natsC)
	require.NoError(t, err)
	artemisPID, err := dockerPID(artemisC)
	require.NoError(t, err)

	hostBefore, ctrBefore := hostState(t), namespaceState(t, natsPID)
	for _, l := range ctrBefore {
		assert.NotContains(t, l, "10.77.", "the container starts with no lab address")
	}
	out := filepath.Join(t.TempDir(), "out")
	args := []string{"run", "../../scenarios/smoke.yaml", "--network", "wireline,wifi-paper", "--lab", labName, "--out", out,
		"--container", "nats=" + natsC, "--container", "artemis=" + artemisC}
	if os.Getenv("PSLAB_CONTAINER_QUICK") == "1" {
		args = append(args, "--quick")
	}
	run := exec.Command(bin, args...)
	combined, err := run.CombinedOutput()
	t.Logf("pslab %s\n%s", strings.Join(args, " "), combined)
	require.NoError(t, err, "pslab run; its failed cases: %s", failedCases(out))

	suite, err := scenario.Load("../../scenarios/smoke.yaml", scenario.Options{})
	require.NoError(t, err)
	recs, err := results.Read(out)
	require.NoError(t, err)
	require.Len(t, recs, len(suite.Cases)*2*2, "every case on both brokers and networks")
	sub := map[string]float64{} // broker/network -> summed subscriber throughput
	for _, r := range recs {
		what := r.Broker + " " + r.Network.Profile + " case " + r.CaseID
		require.Empty(t, r.Error, what)
		assert.Equal(t, "namespaces", r.Network.Path, "%s: through the lab's router", what)
		assert.Contains(t, r.BrokerVersion, "10.77.2.2", "%s: the container at the broker end of the link", what)
		require.NotNil(t, r.Result, what)
		c := r.Result.Counts
		assert.Positive(t, c.Received, what)
		assert.Equal(t, c.Expected, c.Received+c.Backlog+c.InFlight+c.Lost, "%s: due = received + backlog + in flight + lost", what)
		assert.Zero(t, c.DecodeErrors+c.Unexpected, what)
		require.NotNil(t, r.Resources, what)
		assert.NotEmpty(t, r.Resources.BrokerSamples, "%s: the broker container's process is sampled", what)
		if r.Network.Profile == "wifi-paper" {
			assert.NotNil(t, r.Network.Verify, "%s: the link was verified", what)
		}
		sub[r.Broker+"/"+r.Network.Profile] += r.Result.SubTput
	}
	for _, b := range []string{"nats", "artemis"} {
		ratio := sub[b+"/wifi-paper"] / sub[b+"/wireline"]
		t.Logf("%s container: wifi-paper/wireline subscriber throughput over the suite %.4f", b, ratio)
		// 1 Mbit/s with 3 % loss against an unshaped path: link-bound by far.
		assert.Less(t, ratio, 0.5, "%s: the emulated link is in the path", b)
	}

	// Nothing of the lab's is left: not in the containers' namespace (which
	// the lab entered), not on the host.
	assert.Equal(t, ctrBefore, namespaceState(t, natsPID), "the containers' namespace as before")
	// Other labs may come and go on the host meanwhile (their namespaces,
	// named after them): only what is new and not another lab's counts.
	var leftovers []string
	for _, l := range added(hostBefore, hostState(t)) {
		if strings.HasPrefix(l, "ip netns list: ") && !strings.Contains(l, labName) {
			continue // another lab's namespace, made while this test ran
		}
		leftovers = append(leftovers, l)
	}
	assert.Empty(t, leftovers, "new on the host: namespaces, links, qdiscs, nft tables")
	for _, side := range []string{"-cli", "-rtr", "-brk"} {
		_, err := os.Stat("/run/netns/" + labName + side)
		assert.True(t, os.IsNotExist(err), "namespace %s%s left", labName, side)
	}
	for _, pid := range []int{natsPID, artemisPID} {
		assert.True(t, broker.ProcessAlive(pid), "the container process %d still runs", pid)
	}
}

// failedCases lists the error of every failed case run under out, for the
// failure message (the run's output may be cut where CI shows it).
func failedCases(out string) string {
	recs, err := results.Read(out)
	if err != nil {
		return "(no records: " + err.Error() + ")"
	}
	var failed []string
	for _, r := range recs {
		if r.Error != "" {
			failed = append(failed, fmt.Sprintf("case %s %s %s rep %d: %s", r.CaseID, r.Broker, r.Network.Profile, r.Rep, r.Error))
		}
	}
	return strings.Join(failed, "; ")
}

// hostState lists the host's named namespaces, links, qdiscs and nft tables.
func hostState(t *testing.T) []string {
	t.Helper()
	return commandLines(t, nil, [][]string{{"ip", "netns", "list"}, {"ip", "-o", "link", "show"}, {"tc", "qdisc", "show"}, {"nft", "list", "tables"}})
}

// namespaceState lists the links, addresses, routes, qdiscs and nft tables
// of pid's network namespace.
func namespaceState(t *testing.T, pid int) []string {
	t.Helper()
	in := []string{"nsenter", "-t", strconv.Itoa(pid), "-n"}
	return commandLines(t, in, [][]string{{"ip", "-o", "link", "show"}, {"ip", "-o", "addr", "show"},
		{"ip", "route", "show", "table", "all"}, {"tc", "qdisc", "show"}, {"nft", "list", "tables"}})
}

func commandLines(t *testing.T, prefix []string, cmds [][]string) []string {
	var lines []string
	for _, c := range cmds {
		argv := append(append([]string{}, prefix...), c...)
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		require.NoError(t, err, "%v: %s", argv, out)
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			lines = append(lines, strings.Join(c, " ")+": "+l)
		}
	}
	return lines
}

// added are the lines of after that are not in before.
func added(before, after []string) []string {
	had := map[string]bool{}
	for _, l := range before {
		had[l] = true
	}
	var n []string
	for _, l := range after {
		if !had[l] {
			n = append(n, l)
		}
	}
	return n
}
