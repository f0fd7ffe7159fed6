package lab

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/brokers"
	"pslab/internal/brokers/fake"
	"pslab/internal/results"
	"pslab/internal/scenario"
	"pslab/internal/testbroker"
	"pslab/netem"
)

// --tcp-congestion is refused where the connections do not end in the
// lab's namespaces, and for a name the kernel lacks, before anything is
// built.
func TestTCPCongestionRefusals(t *testing.T) {
	reg := &brokers.Registry{}
	reg.Register(fake.Descriptor(fake.Knobs{}))
	s := &scenario.Suite{Name: "t", File: "t.yaml", Brokers: []string{fake.Name}, Networks: []string{"wireline"}, Reps: 1, Cases: []scenario.Case{fakeCase("01", scenario.NonDurable)}}
	out := t.TempDir()
	_, err := MakePlan(s, Options{Out: out, Registry: reg, TCPCongestion: netem.HostCongestionControl()})
	require.Error(t, err, "the fake runs in memory")
	assert.Contains(t, err.Error(), "in memory")
	_, err = MakePlan(s, Options{Out: out, Registry: reg, TCPCongestion: "no-such-cc"})
	require.Error(t, err, "a name the kernel lacks")
	p := Plan{Brokers: []string{"nats"}}
	err = p.checkCongestionControl(Options{URLs: map[string]string{"nats": "nats://127.0.0.1:4222"}, TCPCongestion: netem.HostCongestionControl()})
	require.Error(t, err, "an external broker over the host network")
	assert.Contains(t, err.Error(), "host network")
}

// A wireline run through the lab with --tcp-congestion reno records reno,
// whatever the host uses, and leaves the host's as it was.
func TestTCPCongestionIsSetAndRecorded(t *testing.T) {
	testbroker.SkipShort(t, "the lab's namespaces and a NATS child")
	testbroker.RequireRoot(t)
	if err := netem.Supported(); err != nil {
		t.Skipf("no link emulation here: %v", err)
	}
	host := netem.HostCongestionControl()
	c := scenario.Defaults()
	c.ID, c.Name = "cc", "congestion"
	c.Publishers, c.Subscribers, c.Topics = 1, 1, 1
	c.Rate, c.Size = 100, 100
	c.Warmup, c.Window, c.Drain = 500*time.Millisecond, time.Second, time.Second
	s := &scenario.Suite{Name: "t", File: "t.yaml", Brokers: []string{"nats"}, Networks: []string{"wireline"}, Reps: 1, Cases: []scenario.Case{c}}
	var log bytes.Buffer
	o := Options{Out: t.TempDir(), LabName: "labcc", Log: &log, TCPCongestion: "reno"}
	p, err := MakePlan(s, o)
	require.NoError(t, err)
	_, err = Run(context.Background(), p, o)
	t.Log(log.String())
	require.NoError(t, err)
	recs, err := results.Read(o.Out)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	assert.Empty(t, recs[0].Error)
	assert.Equal(t, "namespaces", recs[0].Network.Path)
	assert.Equal(t, "reno", recs[0].Network.TCPCongestion)
	assert.Equal(t, "reno", recs[0].IdentityOf().TCP)
	assert.Equal(t, host, netem.HostCongestionControl(), "the host's is untouched")
}
