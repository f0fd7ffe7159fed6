package all_test

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/broker"
	"pslab/internal/brokers"
	_ "pslab/internal/brokers/all"
	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// TestEveryBrokerIsComplete: each registered broker has what the lab,
// `pslab broker`, doctor and the probe loop over.
func TestEveryBrokerIsComplete(t *testing.T) {
	names := brokers.Names()
	require.Contains(t, names, "nats")
	require.Contains(t, names, "artemis")
	for _, n := range names {
		d, ok := brokers.Lookup(n)
		require.True(t, ok)
		assert.Equal(t, n, d.Name)
		assert.NotEmpty(t, d.Summary, n)
		assert.NotNil(t, d.Doctor, n)
		assert.NotNil(t, d.Install, n)
		if !d.Simulated {
			assert.NotEmpty(t, d.Schemes, n)
			assert.NotNil(t, d.Probe, n)
			assert.NotNil(t, d.Login, n)
		}
	}
	_, err := brokers.Default.Get("rabbit")
	assert.ErrorContains(t, err, `unknown broker "rabbit" (known: `)
}

// TestSupportsFollowsTheCapabilityTable: a broker refuses exactly the
// filter kinds its capability table lists, with the table's reason.
func TestSupportsFollowsTheCapabilityTable(t *testing.T) {
	for _, n := range brokers.Names() {
		d, _ := brokers.Lookup(n)
		for _, k := range scenario.FilterKinds {
			f := scenario.Defaults().Factors
			f.Filter, f.FilterForm, f.Values, f.Matching = k, scenario.FormSimple, 2, 1
			err := d.Supports(f)
			if why, refused := d.Capabilities.FilterRefusals[k]; refused {
				require.Error(t, err, "%s %s", n, k)
				assert.True(t, errors.Is(err, driver.ErrUnsupported), "%s %s: %v", n, k, err)
				assert.Contains(t, err.Error(), why)
			} else {
				assert.NoError(t, err, "%s %s", n, k)
			}
		}
	}
}

// TestProbeByScheme: the probe is chosen by the URL's scheme, and an
// unknown scheme is refused with the schemes there are.
func TestProbeByScheme(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("INFO {\"auth_required\":true}\r\n"))
			c.Close()
		}
	}()
	ext, err := broker.NewExternal("x", "nats://"+ln.Addr().String())
	require.NoError(t, err)
	open, detail, err := brokers.Default.OpenAccess(context.Background(), ext)
	require.NoError(t, err)
	assert.False(t, open)
	assert.Contains(t, detail, "auth_required")

	ext, err = broker.NewExternal("x", "amqp://"+ln.Addr().String())
	require.NoError(t, err)
	_, _, err = brokers.Default.OpenAccess(context.Background(), ext)
	assert.ErrorContains(t, err, "nats://")
}

// TestTLSIsRefusedWhereNotWired: tls: on runs on NATS and Artemis (over
// STOMP), whose brokers take the lab's certificate; every other broker
// refuses it before anything runs, never running it without TLS.
func TestTLSIsRefusedWhereNotWired(t *testing.T) {
	serves := map[string]bool{"nats": true, "artemis": true}
	for _, n := range brokers.Names() {
		d, _ := brokers.Lookup(n)
		f := scenario.Defaults().Factors
		f.TLS = true
		err := d.Supports(f)
		if serves[n] {
			assert.NoError(t, err, n)
			continue
		}
		require.Error(t, err, n)
		assert.True(t, errors.Is(err, driver.ErrUnsupported), "%s: %v", n, err)
		assert.Contains(t, err.Error(), "tls: on", n)
	}
}
