package lab

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/scenario"
	"pslab/internal/testbroker"
)

// TestMakePlanRefusesTLSOnAURLBroker: a broker reached by --url (an
// external or remote broker, a container) serves no certificate of the
// lab's CA, so tls: on is refused before anything runs, with the reason;
// the same file without --url plans.
func TestMakePlanRefusesTLSOnAURLBroker(t *testing.T) {
	s, err := scenario.Parse("tls.yaml", []byte("suite: tls\nbrokers: [nats]\nnetworks: [wireline]\ncases:\n  - id: off\n  - id: on\n    tls: on\n"), scenario.Options{})
	require.NoError(t, err)
	require.True(t, s.Cases[1].TLS)
	require.False(t, s.Cases[0].TLS)
	p, err := MakePlan(s, Options{})
	require.NoError(t, err)
	assert.True(t, p.usesTLS("nats"))
	ep := testbroker.NATS(t) // reachable: the refusal is TLS's, not the URL check's
	u := strings.Replace(ep.URL, "nats://", "nats://"+ep.User+":"+ep.Password+"@", 1)
	_, err = MakePlan(s, Options{URLs: map[string]string{"nats": u}})
	require.Error(t, err)
	assert.ErrorContains(t, err, "tls.yaml:")
	assert.ErrorContains(t, err, "case on on nats: tls: on: nats is reached by its URL")
}
