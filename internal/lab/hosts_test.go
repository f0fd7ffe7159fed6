package lab

import (
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/broker"
	"pslab/netem"
)

// TestContainerAdministrationStaysOnTheBrokerSide: for a running broker
// whose namespace is the lab's broker side (a container) the
// administration dials from that side, never through the emulated link;
// pslab's own brokers keep the lab host's AdminDialer, and brokers on
// other hosts the host network.
func TestContainerAdministrationStaysOnTheBrokerSide(t *testing.T) {
	lab := &netem.Lab{} // never dialled here
	a, ok := broker.Host(containerHost{labHost{lab}}).(broker.ExternalAdminHost)
	require.True(t, ok, "a container's host says how its administration dials")
	assert.Equal(t, brokerSideDialer{lab}, a.ExternalAdminDialer())
	_, ok = broker.Host(labHost{lab}).(broker.ExternalAdminHost)
	assert.False(t, ok, "pslab's own brokers: the lab host's AdminDialer")
	r, ok := broker.Host(remoteHost{labHost{lab}}).(broker.ExternalAdminHost)
	require.True(t, ok)
	assert.NotEqual(t, brokerSideDialer{lab}, r.ExternalAdminDialer(), "a broker on another host: not the broker side")

	// With the CPUs split (the default) the host comes pinned: the
	// wrapper keeps what it wraps.
	iso := &isolation{}
	pinned, ok := iso.host(containerHost{labHost{lab}}).(broker.ExternalAdminHost)
	require.True(t, ok)
	assert.Equal(t, brokerSideDialer{lab}, pinned.ExternalAdminDialer())
	pinned, ok = iso.host(remoteHost{labHost{lab}}).(broker.ExternalAdminHost)
	require.True(t, ok)
	assert.IsType(t, &net.Dialer{}, pinned.ExternalAdminDialer())
	pinned, ok = iso.host(labHost{lab}).(broker.ExternalAdminHost)
	require.True(t, ok)
	assert.Nil(t, pinned.ExternalAdminDialer(), "nothing to keep: as the clients")
	assert.Equal(t, brokerSideDialer{lab}, broker.AdminDialer(iso.host(labHost{lab})))
}
