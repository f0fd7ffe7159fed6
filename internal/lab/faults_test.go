package lab

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/audit"
	"pslab/internal/brokers/artemis"
	"pslab/internal/scenario"
	"pslab/netem"
)

// runFaultCases runs cases of scenarios/faults.yaml (quick) on one broker
// over the emulated wifi link (wireline on loopback without root, where
// link faults are refused) and returns the records by case id.
func runFaultCases(t *testing.T, brokerName, cases string) map[string]int {
	t.Helper()
	s, err := scenario.Load("../../scenarios/faults.yaml", scenario.Options{Quick: true})
	require.NoError(t, err)
	network := "wifi-paper"
	if netem.Supported() != nil {
		network = "wireline"
	}
	want := map[string]bool{}
	for _, id := range strings.Split(cases, ",") {
		want[id] = true
	}
	var log bytes.Buffer
	o := Options{Brokers: []string{brokerName}, Networks: []string{network}, Reps: 1, Quick: true,
		Out: t.TempDir(), LabName: "labft", Log: &log, Cases: func(id string) bool { return want[id] }}
	p, err := MakePlan(s, o)
	require.NoError(t, err)
	sum, err := Run(context.Background(), p, o)
	t.Log(log.String())
	require.NoError(t, err)
	require.Len(t, sum.Records, len(want))
	idx := map[string]int{}
	for i, r := range sum.Records {
		idx[r.CaseID] = i
		if network == "wireline" && r.Network.Path == "loopback" && hasLinkFault(s, r.CaseID) {
			assert.Contains(t, r.Error, "refused", "link faults without the emulated link are refused")
			continue
		}
		require.Empty(t, r.Error, "case %s", r.CaseID)
		require.NotNil(t, r.Phases, "case %s: where the wall time went", r.CaseID)
		assert.Equal(t, network == "wifi-paper", r.Result.Aborted,
			"case %s: a case over the emulated link ends by dropping its connections, others close them", r.CaseID)
		require.NotEmpty(t, r.Result.Faults, "case %s", r.CaseID)
		for _, f := range r.Result.Faults {
			assert.Empty(t, f.Error, "case %s fault %s", r.CaseID, f.Kind)
			assert.Greater(t, f.EndS, f.StartS, "case %s fault %s", r.CaseID, f.Kind)
		}
		assert.NotEmpty(t, r.Audit)
		// What must hold for any broker: durable subscriptions lose nothing
		// (or cannot tell yet), deliveries are intact, clients come back.
		// Duplicates are reported, not asserted: they are findings.
		for _, c := range r.Audit {
			t.Logf("case %s on %s: %s: %s: %s", r.CaseID, brokerName, c.Verdict, c.Promise, c.Observed)
			if strings.HasPrefix(c.Promise, "durable subscription") || strings.HasPrefix(c.Promise, "every delivery") ||
				strings.HasPrefix(c.Promise, "clients come back") {
				assert.NotEqual(t, audit.Fails, c.Verdict, "case %s on %s: %s: %s", r.CaseID, brokerName, c.Promise, c.Observed)
			}
		}
	}
	return idx
}

func hasLinkFault(s *scenario.Suite, id string) bool {
	for _, c := range s.Cases {
		if c.ID == id {
			return c.HasFault(scenario.LinkOutage) || c.HasFault(scenario.LinkLoss)
		}
	}
	return false
}

// TestFaultStudyOnNATS: an outage, a subscriber away, a broker restart and
// loss steps, for real, with their audits: no promise fails (a durable
// persistent subscription may be inconclusive when a message in flight is
// redelivered only after the quick drain).
func TestFaultStudyOnNATS(t *testing.T) {
	if testing.Short() {
		t.Skip("fault study skipped in -short mode")
	}
	runFaultCases(t, "nats", "01,05,09,14")
}

// TestFaultStudyOnArtemis: the same for a subscriber away and a broker
// restart on Artemis (when installed: CI installs it).
func TestFaultStudyOnArtemis(t *testing.T) {
	if testing.Short() {
		t.Skip("fault study skipped in -short mode")
	}
	if missing := artemis.NewArtemis(artemis.ArtemisConfig{}).NotAtHand(); missing != "" {
		t.Skipf("Artemis is not installed (%s): run `pslab broker install artemis`", missing)
	}
	runFaultCases(t, "artemis", "05,09")
}
