package artemis_test

import (
	"context"
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/broker"
	"pslab/internal/brokers/artemis"
	"pslab/internal/driver"
	"pslab/internal/labtls"
	"pslab/internal/load"
	"pslab/internal/scenario"
	"pslab/internal/testbroker"
)

// TestArtemisSTOMPOverTLS runs cases with tls: on against a real Artemis
// serving the test's certificate on its STOMP acceptor over TLS (a PEM
// keystore): every client's handshake is verified against the test's CA
// and counted; a plain case runs on the same broker beside it, a client
// that does not trust the CA is refused, and a start without TLS takes
// the TLS acceptor out of broker.xml again.
func TestArtemisSTOMPOverTLS(t *testing.T) {
	a := testbroker.Artemis(t, artemis.ArtemisConfig{Instance: "test-tls"})
	m, err := labtls.New(t.TempDir(), "test", []string{"127.0.0.1", "localhost"})
	require.NoError(t, err)
	require.NoError(t, a.ServeTLS(m))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ep, err := a.Start(ctx, broker.LoopbackHost{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Stop(context.Background()) })
	require.NotEmpty(t, ep.TLSURL, "a broker serving TLS says where")
	assert.Contains(t, a.Settings()["stomp_tls_acceptor"], "sslEnabled=true")
	ep.TLS = m.ClientConfig()
	d, err := artemis.NewSTOMP(ep)
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Close() })

	run := func(c scenario.Case, prefix string) *load.Result {
		t.Helper()
		res, err := load.Run(ctx, load.Config{Case: c, Prefix: prefix, Driver: d, Seed: 3})
		require.NoError(t, err)
		require.NoError(t, d.Purge(ctx, prefix))
		return res
	}
	for _, sub := range scenario.Subscriptions {
		c := scenario.Defaults()
		c.ID, c.Model, c.Subscription, c.Delivery = "tls", scenario.FewToMany, sub, scenario.Persistent
		c.Publishers, c.Subscribers = 1, 2
		c.DurableName, c.ClientID = "{prefix}-d{sub}", "{prefix}-c{sub}"
		c.Warmup, c.Window, c.Drain = 300*time.Millisecond, time.Second, 10*time.Second
		c.TLS, c.Rate = true, 200
		res := run(c, "pslab-test-tls-"+string(sub[:3]))
		require.NotNil(t, res.TLS)
		assert.Equal(t, 3, res.TLS.Connections, "one handshake per client")
		assert.Zero(t, res.TLS.Failed)
		assert.True(t, strings.HasPrefix(res.TLS.Version, "TLS 1."), res.TLS.Version)
		assert.NotEmpty(t, res.TLS.Cipher)
		assert.Positive(t, res.Counts.Received, "messages went over TLS")
		assert.Zero(t, res.Counts.Lost, "persistent over TLS on loopback loses nothing")
		assert.Contains(t, d.Mechanism(c.Factors), "TLS")
	}
	plain := scenario.Defaults()
	plain.ID, plain.Model, plain.Rate = "plain", scenario.OneToOne, 200
	plain.Warmup, plain.Window, plain.Drain = 300*time.Millisecond, time.Second, 10*time.Second
	res := run(plain, "pslab-test-plain")
	assert.Nil(t, res.TLS)
	assert.Positive(t, res.Counts.Received)

	other, err := labtls.New(t.TempDir(), "other", []string{"127.0.0.1"})
	require.NoError(t, err)
	bad := ep
	bad.TLS = other.ClientConfig()
	bd, err := artemis.NewSTOMP(bad)
	require.NoError(t, err)
	t.Cleanup(func() { _ = bd.Close() })
	f := plain.Factors
	f.TLS = true
	_, err = bd.Publisher(ctx, driver.PubSpec{Case: driver.CaseSpec{Prefix: "pslab-test-bad", Factors: f}, Window: 1})
	require.Error(t, err)
	var unknown x509.UnknownAuthorityError
	assert.True(t, errors.As(err, &unknown), "want a verification failure, got %v", err)

	require.NoError(t, a.Stop(context.Background()))
	xml, err := os.ReadFile(filepath.Join(a.InstanceDir(), "etc", "broker.xml"))
	require.NoError(t, err)
	assert.NotContains(t, string(xml), "stomp-tls", "Stop takes the TLS acceptor out with the lab's keystore")
	plainOnly := artemis.NewArtemis(a.Config()) // the same instance, no ServeTLS
	ep2, err := plainOnly.Start(ctx, broker.LoopbackHost{})
	require.NoError(t, err)
	defer plainOnly.Stop(context.Background())
	assert.Empty(t, ep2.TLSURL)
	_, has := plainOnly.Settings()["stomp_tls_acceptor"]
	assert.False(t, has)
}
