package lab

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/results"
	"pslab/internal/scenario"
	"pslab/internal/testbroker"
)

// TestLinkPerRoleCarriesEachRoleOnItsLink runs one case on a network with
// a link per role (the publishers on a shaped link, the subscribers on
// another, unshaped) and checks from the record that the publishers'
// messages crossed the publishers' link to the broker and the deliveries
// the subscribers' link to them, neither the other's; each link is
// recorded with its profile, backend and counters, the shaped one with
// its verification.
func TestLinkPerRoleCarriesEachRoleOnItsLink(t *testing.T) {
	testbroker.SkipShort(t, "root, network namespaces, nats-server")
	testbroker.RequireRoot(t)
	dir := t.TempDir()
	prof := filepath.Join(dir, "fast.yaml")
	require.NoError(t, os.WriteFile(prof, []byte("rate_kbit: 20000\n"), 0o644))
	network := "pub=" + prof + "+sub=wireline"
	s, err := scenario.Parse("roles.yaml", []byte(`suite: roles
brokers: [nats]
cases:
  - {id: "01", publishers: 2, subscribers: 2, topics: 1, rate: 50, size: 1000, warmup: 500ms, window: 3s, drain: 5s}
`), scenario.Options{})
	require.NoError(t, err)
	var log bytes.Buffer
	o := Options{Networks: []string{network}, Reps: 1, Out: t.TempDir(), LabName: "labroles", Log: &log}
	p, err := MakePlan(s, o)
	require.NoError(t, err)
	sum, err := Run(context.Background(), p, o)
	t.Log(log.String())
	require.NoError(t, err)
	require.Len(t, sum.Records, 1)
	r := sum.Records[0]
	require.Empty(t, r.Error)
	n := r.Network
	assert.Equal(t, network, n.Profile)
	assert.Equal(t, "namespaces", n.Path)
	assert.Nil(t, n.Spec, "each link has its own spec")
	assert.Nil(t, n.Link)
	require.Len(t, n.Links, 2)
	pub, sub := n.Links[0], n.Links[1]
	assert.Equal(t, results.RolePublishers, pub.Role)
	assert.Equal(t, results.RoleSubscribers, sub.Role)
	assert.Equal(t, "fast", pub.Profile)
	assert.Equal(t, "wireline", sub.Profile)
	assert.Equal(t, "tbf+nftables", pub.Backend)
	assert.Equal(t, "none", sub.Backend)
	require.NotNil(t, pub.Verify, "the shaped link is verified")
	assert.Nil(t, sub.Verify, "an unshaped link is not")
	require.NotNil(t, pub.Link)
	require.NotNil(t, sub.Link)
	require.NotNil(t, pub.Link.Counters, pub.Link.Error)
	require.NotNil(t, sub.Link.Counters, sub.Link.Error)

	c := r.Result.Counts
	require.Positive(t, c.Sent)
	require.Positive(t, c.Received)
	sent, delivered := uint64(c.Sent)*1000, uint64(c.Received)*1000 // payload bytes at least
	pc, sc := pub.Link.Counters, sub.Link.Counters
	t.Logf("sent %d, received %d; publishers' link to broker %d B, to clients %d B; subscribers' link to broker %d B, to clients %d B",
		c.Sent, c.Received, pc.ToBroker.TxBytes, pc.ToClient.TxBytes, sc.ToBroker.TxBytes, sc.ToClient.TxBytes)
	assert.GreaterOrEqual(t, pc.ToBroker.TxBytes, sent, "the publishers' messages crossed their link to the broker")
	assert.GreaterOrEqual(t, sc.ToClient.TxBytes, delivered, "the deliveries crossed the subscribers' link")
	assert.Less(t, pc.ToClient.TxBytes, delivered/2, "no delivery crossed the publishers' link")
	assert.Less(t, sc.ToBroker.TxBytes, sent/2, "no message was published over the subscribers' link")
}
