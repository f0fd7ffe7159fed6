package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/lab"
	"pslab/internal/load"
	"pslab/internal/metrics"
	"pslab/internal/results"
	"pslab/internal/scenario"
)

// dryRunLab is the dry runs' lab: a dry run checks, like a run, that no
// running pslab holds its lab, and pslab's default lab may be in use on
// the machine that runs the tests.
const dryRunLab = "pslabdry"

// executeOut runs a command line (flags fresh) and returns its standard
// output.
func executeOut(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	rootCmd.SetOut(&out)
	defer rootCmd.SetOut(nil)
	code := executeFresh(args...)
	return code, out.String()
}

// netnsNames lists the named network namespaces (ip netns).
func netnsNames() []string {
	entries, _ := os.ReadDir("/run/netns")
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// --dry-run plans the reproduction with scripts/reproduce.sh's files and
// flags (both sets, --out) and builds nothing: no output directory, no
// namespace.
func TestDryRunPlansTheReproductionAndBuildsNothing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "repro")
	before := netnsNames()
	code, plan := executeOut(t, "run", "../../scenarios/gaddah-kunz-set1.yaml", "../../scenarios/gaddah-kunz-set2.yaml", "--out", out, "--dry-run", "--lab", dryRunLab)
	require.Equal(t, exitOK, code, plan)
	assert.Contains(t, plan, "suite gaddah-kunz-set1 (../../scenarios/gaddah-kunz-set1.yaml) -> "+filepath.Join(out, "gaddah-kunz-set1"))
	assert.Contains(t, plan, "32 case(s) x 2 broker(s) (nats, artemis)")
	assert.Contains(t, plan, "18 case(s) x 2 broker(s) (nats, artemis)")
	assert.Contains(t, plan, "3-10 rep(s) until the 95 % CIs")
	assert.Contains(t, plan, "wireline    1     2s / 5s / 5s")
	assert.Contains(t, plan, "\n    17  1/50/1 durable/persistent/auto bytes 100B")
	assert.Contains(t, plan, "estimated machine time")
	assert.Contains(t, plan, "dry run: nothing was built")
	if os.Geteuid() == 0 {
		assert.Contains(t, plan, "wifi-paper  4     5s / 3m0s / 15s", "the file's per-network phases, in its 4 labs")
	}
	_, err := os.Stat(out)
	assert.True(t, os.IsNotExist(err), "no output directory")
	assert.Equal(t, before, netnsNames(), "no namespace")
}

// A dry run checks like a run: bad flags and files are bad input.
func TestDryRunChecksLikeARun(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("suite: b\ncases:\n  - publishers: -1\n"), 0o644))
	code, _ := executeOut(t, "run", bad, "--dry-run", "--out", filepath.Join(dir, "o"))
	assert.Equal(t, exitBadInput, code)
	code, _ = executeOut(t, "run", "../../scenarios/smoke.yaml", "--dry-run", "--broker", "rabbit", "--out", filepath.Join(dir, "o"))
	assert.Equal(t, exitBadInput, code)
}

// --resume DIR --dry-run plans what is left of a run, and changes nothing
// in DIR.
func TestDryRunOfAResumePlansWhatIsLeft(t *testing.T) {
	dir := t.TempDir()
	suite := filepath.Join(dir, "resume.yaml")
	require.NoError(t, os.WriteFile(suite, []byte(resumeSuite), 0o644))
	out := filepath.Join(dir, "out")
	info, err := lab.NewRunInfo([]string{suite}, []string{suite})
	require.NoError(t, err)
	require.NoError(t, lab.WriteRunInfo(out, info))
	s, err := scenario.Load(suite, scenario.Options{})
	require.NoError(t, err)
	var recs bytes.Buffer
	for rep := 1; rep <= 2; rep++ { // case 01 finished, 02 not run
		r := results.Record{Schema: results.SchemaVersion, RunID: "r", Suite: "resume", CaseID: "01", Rep: rep, Broker: "nats",
			Network: results.Network{Profile: "wireline"}, Factors: s.Cases[0].Factors, Started: time.Now(),
			Result: &load.Result{PubTput: 10, SubTput: 10, Latency: metrics.LatencySummary{Count: 1, MeanMs: 1}}}
		line, err := json.Marshal(r)
		require.NoError(t, err)
		recs.Write(append(line, '\n'))
	}
	require.NoError(t, os.WriteFile(filepath.Join(out, results.RecordsFile), recs.Bytes(), 0o644))
	runJSON, err := os.ReadFile(filepath.Join(out, lab.RunInfoFile))
	require.NoError(t, err)

	code, plan := executeOut(t, "run", "--resume", out, "--dry-run", "--lab", dryRunLab)
	require.Equal(t, exitOK, code, plan)
	assert.Contains(t, plan, "total: 2 case runs")
	after, err := os.ReadFile(filepath.Join(out, lab.RunInfoFile))
	require.NoError(t, err)
	assert.Equal(t, string(runJSON), string(after), "run.json as it was")
	_, err = os.Stat(filepath.Join(out, results.SupersededFile))
	assert.True(t, os.IsNotExist(err))
	entries, _ := os.ReadDir(out)
	assert.Len(t, entries, 2, "nothing added: %v", entries)
	assert.False(t, strings.Contains(plan, "resuming"), "a dry run resumes nothing")
}

// A dry run on MQTT brokers refuses, like a run, the cases a broker
// cannot express, and with --skip-unsupported plans the others, each left
// out with its reason, building nothing.
func TestDryRunOnMQTTBrokers(t *testing.T) {
	out := filepath.Join(t.TempDir(), "mqtt")
	before := netnsNames()
	code, _ := executeOut(t, "run", "../../scenarios/gaddah-kunz-set2.yaml", "--broker", "mosquitto,nats-mqtt", "--out", out, "--dry-run", "--lab", dryRunLab)
	assert.Equal(t, exitBadInput, code, "ack dups-ok at QoS 0 cannot be expressed")
	code, plan := executeOut(t, "run", "../../scenarios/gaddah-kunz-set2.yaml", "--broker", "mosquitto,nats-mqtt", "--out", out, "--dry-run", "--skip-unsupported", "--lab", dryRunLab)
	require.Equal(t, exitOK, code, plan)
	assert.Contains(t, plan, "14 case(s) x 2 broker(s) (mosquitto, nats-mqtt)")
	for _, b := range []string{"mosquitto", "nats-mqtt"} {
		for _, c := range []string{"03", "07", "11", "15"} {
			assert.Contains(t, plan, "note: case "+c+" not run on "+b+": ")
		}
	}
	assert.Contains(t, plan, "dry run: nothing was built")
	_, err := os.Stat(out)
	assert.True(t, os.IsNotExist(err), "no output directory")
	assert.Equal(t, before, netnsNames(), "no namespace")
}
