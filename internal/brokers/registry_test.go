package brokers_test

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/broker"
	"pslab/internal/brokers"
	"pslab/internal/driver"
	"pslab/internal/scenario"
)

// descriptor is a minimal broker description named n.
func descriptor(n string) brokers.Descriptor {
	return brokers.Descriptor{
		Name:      n,
		NewBroker: func(context.Context, string, io.Writer) (broker.Broker, error) { return nil, errors.New("not here") },
		NewDriver: func(context.Context, driver.Endpoint) (driver.Driver, error) { return nil, errors.New("not here") },
		Supports:  func(scenario.Factors) error { return nil },
	}
}

func TestRegistryRegistersLooksUpAndRefuses(t *testing.T) {
	var r brokers.Registry
	r.Register(descriptor("zeta"))
	r.Register(descriptor("alpha"))
	assert.Equal(t, []string{"alpha", "zeta"}, r.Names(), "sorted")
	d, ok := r.Lookup("zeta")
	assert.True(t, ok)
	assert.Equal(t, "zeta", d.Name)
	_, err := r.Get("rabbit")
	assert.EqualError(t, err, `unknown broker "rabbit" (known: alpha, zeta)`)
	assert.PanicsWithValue(t, "brokers: zeta registered twice", func() { r.Register(descriptor("zeta")) })
	incomplete := descriptor("x")
	incomplete.Supports = nil
	assert.Panics(t, func() { r.Register(incomplete) }, "a descriptor without Supports")
}

// TestRegistryProbesAndLogsInByScheme: the external broker's URL scheme
// picks the descriptor whose probe and login run; an unknown scheme is
// refused with the schemes there are, before anything is dialled.
func TestRegistryProbesAndLogsInByScheme(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	var ran []string
	var r brokers.Registry
	for _, n := range []string{"one", "two"} {
		d := descriptor(n)
		d.Schemes = []string{n + "s"}
		d.Probe = func(net.Conn, string) (bool, string, error) { ran = append(ran, "probe "+n); return true, n, nil }
		d.Login = func(_ net.Conn, _, user, _ string) error {
			ran = append(ran, "login "+n+" as "+user)
			return nil
		}
		r.Register(d)
	}
	r.Register(descriptor("none")) // no probe, no login: never chosen, never listed

	ext, err := broker.NewExternal("x", "twos://u:p@"+ln.Addr().String())
	require.NoError(t, err)
	open, detail, err := r.OpenAccess(context.Background(), ext)
	require.NoError(t, err)
	assert.True(t, open)
	assert.Equal(t, "two", detail)
	require.NoError(t, r.CheckLogin(context.Background(), ext))
	assert.Equal(t, []string{"probe two", "login two as u"}, ran)

	ext, err = broker.NewExternal("x", "amqp://"+ln.Addr().String())
	require.NoError(t, err)
	_, _, err = r.OpenAccess(context.Background(), ext)
	assert.ErrorContains(t, err, "want ones:// or twos://")
	assert.ErrorContains(t, r.CheckLogin(context.Background(), ext), "cannot tell how to log in to amqp://")
	assert.Len(t, ran, 2, "nothing ran for an unknown scheme")
}
