package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/capacity"
	"pslab/internal/lab"
	"pslab/internal/results"
	"pslab/internal/scenario"
)

func capacityCmd(args ...string) (string, error) {
	c := newCapacityCmd()
	var buf bytes.Buffer
	c.SetArgs(args)
	c.SetErr(&buf)
	c.SetOut(&buf)
	c.SilenceUsage, c.SilenceErrors = true, true
	err := c.Execute()
	return buf.String(), err
}

// capacityOnFake runs a short capacity search of capacitySuite on the
// fake into out, in lab labName, and returns its log.
func capacityOnFake(t *testing.T, out, labName string) string {
	t.Helper()
	suite := filepath.Join(t.TempDir(), "c.yaml")
	require.NoError(t, os.WriteFile(suite, []byte(capacitySuite), 0o644))
	log, err := capacityCmd(suite, "--out", out, "--lab", labName, "--start", "200", "--max-probes", "4", "--reps", "2", "--max-reps", "2",
		"--loads", "none", "--phases", "wireline=100ms/300ms/300ms", "--busy-attempts", "1", "--quiet-wait", "0")
	require.NoError(t, err, log)
	return log
}

const capacitySuite = `suite: capcli
brokers: [fake]
networks: [wireline]
defaults:
  warmup: 100ms
  window: 300ms
  drain: 300ms
cases:
  - id: "01"
    subscribers: 2
`

// TestCapacityFlagsAreCheckedFirst: every bad capacity flag is named,
// all at once, as bad input, and nothing runs.
func TestCapacityFlagsAreCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	suite := filepath.Join(dir, "c.yaml")
	require.NoError(t, os.WriteFile(suite, []byte(capacitySuite), 0o644))
	_, err := capacityCmd(suite, "--out", filepath.Join(dir, "out"), "--resolution", "x", "--loads", "50,120",
		"--latency-bound", "nosuch=1s", "--phases", "wireline=1s", "--ci", "5%", "--busy-attempts", "0",
		"--confirm", "wireline=2", "--confirm", "nosuch=3")
	require.Error(t, err)
	assert.True(t, isBadInput(err))
	for _, want := range []string{"--resolution", "--loads: 120 %", "--latency-bound nosuch=1s", "--phases wireline=1s", "--ci:", "--busy-attempts",
		"--confirm wireline=2: want an odd number", "--confirm nosuch=3"} {
		assert.ErrorContains(t, err, want)
	}
	_, err = os.Stat(filepath.Join(dir, "out"))
	assert.True(t, os.IsNotExist(err), "nothing written")
}

// TestCapacityCommandOnFake: pslab capacity on the in-memory fake writes
// every probe as a record, CAPACITY.md, capacity.csv and capacity.json,
// and a run.json that pslab capacity --resume continues (nothing left)
// and pslab run --resume refuses; pslab capacity table writes the
// tables again.
func TestCapacityCommandOnFake(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	log := capacityOnFake(t, out, "capcli")
	assert.Contains(t, log, "latency floor:")
	assert.Contains(t, log, "elapsed", "progress with the run's ETA")
	recs, err := results.Read(out)
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	for _, r := range recs {
		assert.Equal(t, results.ModeCapacityProbe, r.Mode)
		require.NotNil(t, r.Probe)
		assert.Positive(t, r.Probe.OfferedPerS)
	}
	for _, f := range []string{"CAPACITY.md", "capacity.csv", "capacity.json", lab.RunInfoFile} {
		_, err := os.Stat(filepath.Join(out, f))
		assert.NoError(t, err, f)
	}
	md, err := os.ReadFile(filepath.Join(out, "CAPACITY.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "| fake | wireline |")
	info, err := lab.ReadRunInfo(out)
	require.NoError(t, err)
	assert.Equal(t, capacityCommand, info.Command)

	_, err = runCmd("--resume", out)
	assert.True(t, isBadInput(err))
	assert.ErrorContains(t, err, "resume it with pslab capacity --resume")

	log, err = capacityCmd("--resume", out, "--lab", "capcli")
	require.NoError(t, err, log)
	assert.Contains(t, log, "every repetition finished")
	again, err := results.Read(out)
	require.NoError(t, err)
	assert.Len(t, again, len(recs), "nothing ran again")

	table := filepath.Join(dir, "t.md")
	log, err = capacityCmd("table", out, "--out", table)
	require.NoError(t, err, log)
	b, err := os.ReadFile(table)
	require.NoError(t, err)
	assert.Contains(t, string(b), "## Capacity per row")
}

// TestCapacityRefusesWhatABrokerCannotExpress: a case an MQTT broker has
// no mapping for (non-persistent delivery is QoS 0, which acknowledges
// nothing: ack client cannot be expressed) is refused with the reason as
// bad input before anything runs, as pslab run refuses it.
func TestCapacityRefusesWhatABrokerCannotExpress(t *testing.T) {
	dir := t.TempDir()
	suite := filepath.Join(dir, "c.yaml")
	require.NoError(t, os.WriteFile(suite, []byte(`suite: capmqtt
brokers: [mosquitto]
networks: [wireline]
cases:
  - {id: "01", subscription: non-durable, delivery: non-persistent, ack: client}
`), 0o644))
	out := filepath.Join(dir, "out")
	_, err := capacityCmd(suite, "--out", out, "--quiet-wait", "0")
	require.Error(t, err)
	assert.True(t, isBadInput(err))
	assert.ErrorContains(t, err, "case 01 on mosquitto")
	assert.ErrorContains(t, err, "QoS 0")
	_, err = os.Stat(out)
	assert.True(t, os.IsNotExist(err), "nothing written")
}

// pslab report on capacity bundles shows the claims on capacity, in every
// format: the committed pilots' 01↔03 wifi-paper pair (core NATS at 313
// msg/s against JetStream at 166, both link-bound) is not similar.
func TestReportShowsCapacityClaims(t *testing.T) {
	dirs := []string{"../../results/capacity-pilots/nats-wifi-paper-set1-03", "../../results/capacity-pilots/nats-wifi-paper-set1-4rows"}
	code, md := executeOut(t, append([]string{"report"}, dirs...)...)
	require.Equal(t, 0, code)
	assert.Contains(t, md, "## Claims on capacity and on latency at equal offered load")
	assert.Contains(t, md, "gaddah-kunz-set1 01↔03 wifi-paper")
	assert.Contains(t, md, "the other did not finish", "the row in two bundles: the finished one counts, said")
	code, js := executeOut(t, append([]string{"report", "--format", "json"}, dirs...)...)
	require.Equal(t, 0, code)
	var doc struct {
		CapacityClaims struct {
			Claims []struct {
				ID       string `json:"id"`
				Outcomes map[string]struct {
					Verdict string `json:"verdict"`
				} `json:"outcomes"`
			} `json:"claims"`
		} `json:"capacity_claims"`
	}
	require.NoError(t, json.Unmarshal([]byte(js), &doc))
	require.NotEmpty(t, doc.CapacityClaims.Claims)
	assert.Equal(t, "nondurable-similar-durable-1x2", doc.CapacityClaims.Claims[0].ID)
	assert.Equal(t, "does not hold", doc.CapacityClaims.Claims[0].Outcomes["nats"].Verdict)
	code, html := executeOut(t, append([]string{"report", "--format", "html"}, dirs...)...)
	require.Equal(t, 0, code)
	assert.Contains(t, html, `id="cap-claim-nondurable-similar-durable-1x2"`)
}

// pslab capacity --dry-run plans the searches and builds nothing (it used
// to ignore the flag and run them): the plan says capacity mode and the
// probes' phases (1 s / 3 s / 2 s on the wireline, not the file's 2 s /
// 5 s / 5 s), no output directory, no namespace; on MQTT brokers a case a
// broker cannot express is still refused first. A resumed capacity run's
// dry run plans what is left and changes nothing.
func TestCapacityDryRunBuildsNothing(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "cap")
	before := netnsNames()
	code, plan := executeOut(t, "capacity", "../../scenarios/gaddah-kunz-set1.yaml", "--broker", "mosquitto,nats-mqtt,artemis-mqtt",
		"--network", "wireline", "--cases", "1,3", "--loads", "none", "--reps", "3", "--max-reps", "3", "--out", out, "--dry-run", "--lab", dryRunLab)
	require.Equal(t, exitOK, code, plan)
	assert.Contains(t, plan, "2 case(s) x 3 broker(s) (mosquitto, nats-mqtt, artemis-mqtt) x 1 network(s) (wireline) in capacity mode: searches to ±2 % resolution, 3-3 counted per row for ±5 %, loads none")
	assert.Contains(t, plan, "wireline  1     1s / 3s / 2s")
	assert.NotContains(t, plan, "rep(s) until the 95 % CIs", "capacity mode has no paper-mode repetitions")
	assert.Contains(t, plan, "dry run: nothing was built")
	_, err := os.Stat(out)
	assert.True(t, os.IsNotExist(err), "no output directory")
	assert.Equal(t, before, netnsNames(), "no namespace")

	code, _ = executeOut(t, "capacity", "../../scenarios/gaddah-kunz-set2.yaml", "--broker", "mosquitto", "--network", "wireline",
		"--cases", "3", "--out", out, "--dry-run", "--lab", dryRunLab)
	assert.Equal(t, exitBadInput, code, "ack dups-ok at QoS 0 cannot be expressed")

	fake := filepath.Join(dir, "fake")
	capacityOnFake(t, fake, "capdry")
	entries, err := os.ReadDir(fake)
	require.NoError(t, err)
	recs, err := os.ReadFile(filepath.Join(fake, results.RecordsFile))
	require.NoError(t, err)
	log, err := capacityCmd("--resume", fake, "--dry-run", "--lab", "capdry")
	require.NoError(t, err, log)
	assert.Contains(t, log, "in capacity mode")
	assert.Contains(t, log, "wireline  1     100ms / 300ms / 300ms")
	assert.Contains(t, log, "dry run: nothing was built")
	after, err := os.ReadDir(fake)
	require.NoError(t, err)
	assert.Len(t, after, len(entries), "nothing added")
	again, err := os.ReadFile(filepath.Join(fake, results.RecordsFile))
	require.NoError(t, err)
	assert.Equal(t, string(recs), string(again), "no record added")
}

// TestCapacityRefusesAPriorWithoutPaperRecords: a capacity bundle given
// as --prior (its records are probes, not a delivered rate) is refused as
// bad input with the reason, instead of being read as no prior.
func TestCapacityRefusesAPriorWithoutPaperRecords(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "fake")
	capacityOnFake(t, fake, "capprior")
	suite := filepath.Join(dir, "c.yaml")
	require.NoError(t, os.WriteFile(suite, []byte(capacitySuite), 0o644))
	out := filepath.Join(dir, "out")
	_, err := capacityCmd(suite, "--out", out, "--prior", fake, "--dry-run", "--lab", "capprior")
	require.Error(t, err)
	assert.True(t, isBadInput(err))
	assert.ErrorContains(t, err, "--prior "+fake+": no finished paper-mode record")
	assert.ErrorContains(t, err, "capacity-mode")
	_, err = os.Stat(out)
	assert.True(t, os.IsNotExist(err), "nothing written")
}

// The capacity search's link bound takes each broker's frame from the
// registry: an MQTT broker's PUBLISH header (15 bytes for 100 B at QoS
// 0), nothing for NATS and Artemis over STOMP (capacity.FrameOverhead).
func TestCapacityFrameOverheadFromTheRegistry(t *testing.T) {
	f := scenario.Defaults().Factors
	f.Publishers, f.Subscribers, f.Topics, f.Size = 1, 1, 1, 100
	f.Subscription, f.Delivery = scenario.NonDurable, scenario.NonPersistent
	for _, b := range []string{"mosquitto", "mosquitto-v5", "nats-mqtt", "artemis-mqtt"} {
		assert.Positive(t, frameOverhead(b, f), b)
		assert.Less(t, frameOverhead(b, f), capacity.FrameOverhead, b)
	}
	assert.Equal(t, 15, frameOverhead("mosquitto", f))
	assert.Equal(t, 16, frameOverhead("mosquitto-v5", f), "MQTT 5's empty property list")
	for _, b := range []string{"nats", "artemis", "fake", "nosuch"} {
		assert.Zero(t, frameOverhead(b, f), b)
	}
	p, err := capacityParams(newCapacityCmd(), runFlags{}, capacityFlags{resolution: "2%", target: "5%", tolerance: "1%", latencyTarget: "5%", loads: "none", start: 1000, maxProbes: 14, busyAttempts: 1, latencyReps: 3, latencyMaxReps: 10})
	require.NoError(t, err)
	require.NotNil(t, p.FrameOverhead)
	assert.Equal(t, 15, p.FrameOverhead("nats-mqtt", f))
}

// A per-network flag may name a profile by its file: the value then
// applies to the profile in it (the search looks values up by the
// profile's own name), not silently to no network.
func TestCapacityPerNetworkFlagsByProfileFile(t *testing.T) {
	prof := filepath.Join(t.TempDir(), "slow-wifi.yaml")
	require.NoError(t, os.WriteFile(prof, []byte("name: slow-wifi\nrate_kbit: 500\nloss_pct: 1\nduplex: half\nqueue_ms: 500\n"), 0o644))
	code, plan := executeOut(t, "capacity", "../../scenarios/link-study.yaml", "--broker", "nats",
		"--network", prof, "--cases", "1", "--loads", "none", "--reps", "2", "--max-reps", "2",
		"--phases", prof+"=3s/10s/5s", "--out", filepath.Join(t.TempDir(), "cap"), "--dry-run", "--lab", dryRunLab)
	require.Equal(t, exitOK, code, plan)
	assert.Contains(t, plan, "slow-wifi  4     3s / 10s / 5s")

	// Its estimate is a shaped link's, as a built-in profile's: one probe
	// decides (the counted searches' least runs), and a run takes the
	// probe phases given (not the file's 3 s + 10 s), where it used to be
	// an unshaped path's (2 of 3 confirmations, the cases' phases).
	planRow := func(network, phases string) []string {
		code, plan := executeOut(t, "capacity", "../../scenarios/link-study.yaml", "--broker", "nats",
			"--network", network, "--cases", "1", "--loads", "none", "--reps", "2", "--max-reps", "2",
			"--phases", network+"="+phases, "--out", filepath.Join(t.TempDir(), "cap"), "--dry-run", "--lab", dryRunLab)
		require.Equal(t, exitOK, code, plan)
		name := strings.TrimSuffix(filepath.Base(network), ".yaml")
		for _, line := range strings.Split(plan, "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == name {
				return f[1:]
			}
		}
		t.Fatalf("no row of %s in the plan:\n%s", network, plan)
		return nil
	}
	fromFile, builtIn := planRow(prof, "2s/20s/4s"), planRow("wifi-paper", "2s/20s/4s")
	assert.Equal(t, builtIn, fromFile, "labs, phases, case runs, per run, set-up, machine time")
	assert.Equal(t, "5-", builtIn[6][:2], "a pilot's first probe and 2 a counted search, 2 searches: %v", builtIn)
}
