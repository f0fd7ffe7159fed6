package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/lab"
	"pslab/internal/record"
	"pslab/internal/results"
)

// runNew runs a fresh command with args and stdin, returning its output.
func runNew(t *testing.T, newCmd func() *cobra.Command, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := newCmd()
	var out bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetIn(strings.NewReader(stdin))
	err := cmd.Execute()
	return out.String(), err
}

func TestBundleCommandsRefuseBadInput(t *testing.T) {
	dir := t.TempDir()
	for name, args := range map[string][]string{
		"set-aside without rows":     {"bundle", "set-aside", dir},
		"set-aside of a lost case":   {"bundle", "set-aside", dir, "--broker", "nats", "--network", "wireline", "--cases", "1", "--tag", "t"},
		"wall-time of nothing":       {"bundle", "wall-time", filepath.Join(dir, "none")},
		"link-bound of nothing":      {"bundle", "link-bound", filepath.Join(dir, "none")},
		"plan reps without a file":   {"plan", "reps", dir},
		"plan noise of no number":    {"plan", "noise", "--ci", "x"},
		"plan reps of no scenario":   {"plan", "reps", dir, "--scenario", filepath.Join(dir, "none.yaml")},
		"plan reps with a bad --ci":  {"plan", "reps", dir, "--scenario", "../../scenarios/smoke.yaml", "--ci", "zero"},
		"capacity-budget of nothing": {"plan", "capacity-budget", filepath.Join(dir, "none")},
		"capacity-budget, bad rows":  {"plan", "capacity-budget", dir, "--rows", "wireline=x", "--labs", "wifi-paper=0"},
	} {
		assert.Equal(t, exitBadInput, execute(args), name)
	}
}

func TestPlanNoise(t *testing.T) {
	out, err := runNew(t, newPlanNoiseCmd, "9 10\n11", "--first", "2")
	require.NoError(t, err)
	// 3 numbers, mean 10, CV 10 %: 18 repetitions for ±5 %.
	assert.Equal(t, "3\t10\t9\t11\t0.100000\t18\n", out)
	out, err = runNew(t, newPlanNoiseCmd, "5", "--first", "2")
	require.NoError(t, err)
	assert.Equal(t, "1\t5\t5\t5\t-\t-\n", out)
	_, err = runNew(t, newPlanNoiseCmd, "5 x")
	assert.ErrorContains(t, err, `not a number: "x"`)
}

// TestReportOfAnUnfinishedRunIsPartial: the report of a run whose last
// part did not finish says so first; a finished run's does not.
func TestReportOfAnUnfinishedRunIsPartial(t *testing.T) {
	root := t.TempDir()
	set := filepath.Join(root, "set1")
	b, err := results.Create(set)
	require.NoError(t, err)
	require.NoError(t, b.Append(&results.Record{Schema: 1, Suite: "s", CaseID: "01", Rep: 1, Broker: "fake",
		Network: results.Network{Profile: "wireline"}, Result: &record.Result{SubTput: 1, PubTput: 1}}))
	require.NoError(t, os.WriteFile(filepath.Join(root, lab.RunInfoFile), []byte("{}"), 0o644))
	report := func() string {
		out, err := runNew(t, newReportCmd, "", set)
		require.NoError(t, err)
		return out
	}
	assert.NotContains(t, report(), "PARTIAL", "no parts.log: nothing to say")
	p, err := results.BeginPart(root, "test")
	require.NoError(t, err)
	assert.Contains(t, report(), "part 1 of its parts.log stopped (running (no end recorded))")
	require.NoError(t, p.End(130))
	assert.Regexp(t, `^> \*\*PARTIAL\*\*: the run in .* has not finished: part 1 of its parts.log stopped \(\d+ s, exit 130\)`, report())
	for format, want := range map[string]string{"json": `"partial": "the run in `, "html": `<p class="warn">PARTIAL: the run in `} {
		out, err := runNew(t, newReportCmd, "", set, "--format", format)
		require.NoError(t, err)
		assert.Contains(t, out, want, "--format %s says so too", format)
	}
	p, err = results.BeginPart(root, "test")
	require.NoError(t, err)
	require.NoError(t, p.End(0))
	assert.NotContains(t, report(), "PARTIAL")
}

// TestFramesAskTheBroker: the bytes per message come from the record's
// broker's descriptor (NATS: PUB and MSG frames on the case's subject);
// a broker that cannot say is refused.
func TestFramesAskTheBroker(t *testing.T) {
	out, err := runNew(t, newFramesCmd, "", "../../results/wifi-link-bound")
	require.NoError(t, err)
	assert.Equal(t, "01 1 nats 5144 5146\n01 2 nats 5144 5146\n01 3 nats 5144 5146\n", out)
	dir := t.TempDir()
	b, err := results.Create(dir)
	require.NoError(t, err)
	require.NoError(t, b.Append(&results.Record{Schema: 1, Suite: "s", CaseID: "01", Rep: 1, Broker: "fake", Network: results.Network{Profile: "wireline"}, Result: &record.Result{}}))
	_, err = runNew(t, newFramesCmd, "", dir)
	assert.ErrorContains(t, err, "pslab cannot say what one fake message puts on the wire")
}

// TestCPUPerMessage: a line per record with the client's and broker's
// CPU over the window per delivered message, then a summary per row; a
// record without CPU samples is refused.
func TestCPUPerMessage(t *testing.T) {
	out, err := runNew(t, newCPUCmd, "", "../../results/smoke")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// smoke case 01 on NATS: 70.42 % of a core over 520,841.7 msg/s.
	assert.Contains(t, lines, "01 1 nats wireline 0 520841.7 70.42 77.50 0.00 1.352 1.488 - - 183.891")
	assert.Contains(t, lines, "# 01 nats wireline 1 1.352 - 1.488 - 520841.7")
	dir := t.TempDir()
	b, err := results.Create(dir)
	require.NoError(t, err)
	require.NoError(t, b.Append(&results.Record{Schema: 1, Suite: "s", CaseID: "01", Rep: 1, Broker: "fake", Network: results.Network{Profile: "wireline"}, Result: &record.Result{SubTput: 10}}))
	_, err = runNew(t, newCPUCmd, "", dir)
	assert.ErrorContains(t, err, "case 01 rep 1: no CPU samples of the load client")
}

// TestPlanCapacityBudget: the command reads a bundle's capacity records
// and projects; a bundle of paper-mode records only is refused.
func TestPlanCapacityBudget(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	var lines []string
	for i := range 4 {
		r := results.Record{Schema: results.SchemaVersion, RunID: "r", Suite: "s", CaseID: "01", Broker: "nats", Network: results.Network{Profile: "wireline"},
			Mode: results.ModeCapacityProbe, Probe: &results.Probe{Search: i / 2}, Started: t0.Add(time.Duration(i) * 8 * time.Second), WallS: 8}
		b, err := json.Marshal(r)
		require.NoError(t, err)
		lines = append(lines, string(b))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, results.RecordsFile), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	out, err := runNew(t, newPlanCmd, "", "capacity-budget", dir, "--rows", "wireline=100")
	require.NoError(t, err)
	assert.Contains(t, out, "| wireline | nats | 1 | 4 (4-4) | 2 + 2 + 0 | 8.0 | 32 |")
	assert.Contains(t, out, "Projected machine time: 3200 s (0.9 h)")

	paper := t.TempDir()
	b, err := json.Marshal(results.Record{Schema: results.SchemaVersion, RunID: "r", Suite: "s", CaseID: "01", Broker: "nats", Network: results.Network{Profile: "wireline"}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(paper, results.RecordsFile), append(b, '\n'), 0o644))
	assert.Equal(t, exitBadInput, execute([]string{"plan", "capacity-budget", paper}))
}
