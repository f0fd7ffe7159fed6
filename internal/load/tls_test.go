package load

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/brokers/nats"
	"pslab/internal/scenario"
	"pslab/internal/testbroker"
)

// TestTLSCaseOnEmbeddedNATS runs cases with tls: on against an in-process
// nats-server that serves the test's own certificate: every client makes
// a real TLS handshake, verified against that CA, and the record's TLS
// block counts one handshake per connection (core NATS and JetStream).
func TestTLSCaseOnEmbeddedNATS(t *testing.T) {
	ep, _ := testbroker.NATSTLS(t)
	d := testbroker.OpenNATS(t, ep)
	for _, del := range scenario.Deliveries {
		t.Run(string(del), func(t *testing.T) {
			c := quickCase(scenario.NonDurable, del)
			c.Publishers, c.Subscribers = 2, 3
			c.Model = scenario.FewToMany
			c.TLS, c.Rate = true, 500
			prefix := "pslab-test-tls-" + string(del[:3])
			res, err := Run(context.Background(), Config{Case: c, Prefix: prefix, Driver: d, Seed: 7})
			require.NoError(t, err)
			require.NoError(t, d.Purge(context.Background(), prefix))
			require.NotNil(t, res.TLS, "a case with tls: on has a TLS block")
			assert.Equal(t, 5, res.TLS.Connections, "one first handshake per client (2 publishers, 3 subscribers)")
			assert.Zero(t, res.TLS.Reconnects)
			assert.Zero(t, res.TLS.Failed)
			assert.Equal(t, "TLS 1.3", res.TLS.Version)
			assert.NotEmpty(t, res.TLS.Cipher)
			require.NotNil(t, res.TLS.HandshakeMs)
			assert.LessOrEqual(t, res.TLS.HandshakeMs.P50, res.TLS.HandshakeMs.Max)
			assert.Positive(t, res.Counts.Received, "messages went over TLS")
			assert.Contains(t, d.Mechanism(c.Factors), "TLS")
		})
	}
	// The same server's plain clients (tls: off) have no TLS block.
	c := quickCase(scenario.NonDurable, scenario.NonPersistent)
	c.Rate = 500
	res, err := Run(context.Background(), Config{Case: c, Prefix: "pslab-test-notls", Driver: d, Seed: 7})
	require.NoError(t, err)
	assert.Nil(t, res.TLS)
	assert.Positive(t, res.Counts.Received)
}

// TestTLSClientWithoutTheLabCAFails: a client that does not trust the
// lab's CA (the system roots, or another lab's CA) refuses the server's
// certificate; the handshake is counted as failed, never skipped.
func TestTLSClientWithoutTheLabCAFails(t *testing.T) {
	ep, _ := testbroker.NATSTLS(t)
	_, other := testbroker.NATSTLS(t)
	for name, cfg := range map[string]*tls.Config{
		"system roots":     {MinVersion: tls.VersionTLS12},
		"another lab's CA": other.ClientConfig(),
	} {
		t.Run(name, func(t *testing.T) {
			bad := ep
			bad.TLS = cfg
			d, err := nats.NewDriver(context.Background(), bad)
			require.NoError(t, err, "the administration connection does not use TLS")
			t.Cleanup(func() { _ = d.Close() })
			c := quickCase(scenario.NonDurable, scenario.NonPersistent)
			c.TLS = true
			_, err = Run(context.Background(), Config{Case: c, Prefix: "pslab-test-badca", Driver: d, Seed: 7})
			require.Error(t, err)
			var unknown x509.UnknownAuthorityError
			assert.True(t, errors.As(err, &unknown) || strings.Contains(err.Error(), "certificate signed by unknown authority"),
				"want a verification failure, got %v", err)
			assert.NotContains(t, err.Error(), "connection refused")
		})
	}
}
