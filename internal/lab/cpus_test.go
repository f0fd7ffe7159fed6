package lab

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/broker"
	"pslab/internal/brokers/artemis"
	"pslab/internal/brokers/nats"
	"pslab/internal/cpuset"
	"pslab/internal/results"
	"pslab/internal/scenario"
	"pslab/internal/testbroker"
)

// defaultPlan is the default CPU plan of this machine, or skips the test
// where there is nothing to split.
func defaultPlan(t *testing.T) cpuset.Plan {
	t.Helper()
	allowed, err := cpuset.Allowed()
	require.NoError(t, err)
	p := cpuset.DefaultPlan(allowed)
	if p.Off() {
		t.Skipf("CPU isolation needs 2 CPUs: %s", p.Why)
	}
	return p
}

// requireThreadsOn reads back, from /proc, the CPUs every thread of pid may
// run on and requires them all to be want.
func requireThreadsOn(t *testing.T, what string, pid int, want cpuset.Set) {
	t.Helper()
	sets, err := cpuset.ThreadSets(pid)
	require.NoError(t, err)
	require.NotEmpty(t, sets, what)
	for tid, s := range sets {
		require.Equal(t, want.String(), s.String(), "%s (PID %d): thread %d", what, pid, tid)
	}
	t.Logf("%s (PID %d): all %d threads on CPUs %s", what, pid, len(sets), want)
}

// TestBrokersAndClientsOnOwnCPUs starts each broker with the default plan
// in force and reads back from /proc/<pid>/task/*/status (Cpus_allowed_list)
// that every thread of the broker is on the broker's set and every thread
// of this process on the clients'; ending the plan gives this process its
// CPUs back. Artemis (a JVM that starts its threads long after exec) is
// skipped when it is not installed.
func TestBrokersAndClientsOnOwnCPUs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts brokers")
	}
	plan := defaultPlan(t)
	before, err := cpuset.Allowed()
	require.NoError(t, err)
	for _, name := range []string{"nats", "artemis"} {
		t.Run(name, func(t *testing.T) {
			var b broker.Broker = nats.NewServer(nats.ServerConfig{StoreDir: t.TempDir()})
			if name == "artemis" {
				b = testbroker.Artemis(t, artemis.ArtemisConfig{Instance: "test-lab-cpus"})
			}
			iso, err := isolate(plan, 0, &bytes.Buffer{})
			require.NoError(t, err)
			defer iso.end()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			_, err = b.Start(ctx, iso.host(broker.LoopbackHost{}))
			require.NoError(t, err)
			defer b.Stop(context.Background())
			require.Positive(t, b.PID())
			requireThreadsOn(t, name, b.PID(), plan.Broker)
			requireThreadsOn(t, "pslab (the clients)", os.Getpid(), plan.Clients)
			assert.Equal(t, len(plan.Clients), runtime.GOMAXPROCS(0))
		})
	}
	requireThreadsOn(t, "pslab after the run", os.Getpid(), before)
}

// TestRecordKeepsBothSets runs one short NATS case with the default plan
// and checks that the record names both sets and each side's share of its
// own set.
func TestRecordKeepsBothSets(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a broker")
	}
	plan := defaultPlan(t)
	s, err := scenario.Parse("cpus.yaml", []byte("suite: cpus\nnetworks: [wireline]\nbrokers: [nats]\ndefaults:\n  warmup: 200ms\n  window: 1s\n  drain: 1s\ncases:\n  - id: \"01\"\n"), scenario.Options{})
	require.NoError(t, err)
	r := runOnly(t, s, Options{Reps: 1, LabName: "labcpu", CPUs: plan})
	rs := r.Resources
	require.NotNil(t, rs)
	assert.Equal(t, plan.Clients.String(), rs.ClientCPUs)
	assert.Equal(t, plan.Broker.String(), rs.BrokerCPUs)
	assert.InDelta(t, rs.ClientCPUPct/float64(len(plan.Clients)), rs.ClientSetPct, 1e-9)
	assert.InDelta(t, rs.BrokerCPUPct/float64(len(plan.Broker)), rs.BrokerSetPct, 1e-9)
	assert.Positive(t, rs.BrokerSetPct, "the broker worked on its set")
	_, saturated := results.Flagged(r.Flags, results.FlagCPUSaturated)
	assert.False(t, saturated,
		"cpu-saturated is the flag of runs without isolation")
}

// runOnly runs suite s, of one case run, with o (output in a temporary
// directory, the log in the test's) and returns its record.
func runOnly(t *testing.T, s *scenario.Suite, o Options) results.Record {
	t.Helper()
	var log bytes.Buffer
	o.Out, o.Log = t.TempDir(), &log
	p, err := MakePlan(s, o)
	require.NoError(t, err)
	sum, err := Run(context.Background(), p, o)
	t.Log(log.String())
	require.NoError(t, err)
	require.Len(t, sum.Records, 1)
	return sum.Records[0]
}
