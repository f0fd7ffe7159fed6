package lab

import (
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/broker"
	"pslab/netem"
)

// TestPinnedHostKeepsTheAdministrationDialers: with the CPUs split (the
// default) the broker's host comes wrapped to pin its processes, and the
// wrapper keeps how the host's administration dials: a broker on another
// host over the host network (not through the emulated link), pslab's own
// brokers from the broker side; a host with no dialer for running brokers
// leaves theirs as the clients'.
func TestPinnedHostKeepsTheAdministrationDialers(t *testing.T) {
	lab := &netem.Lab{} // never dialled here
	iso := &isolation{}
	remote, ok := iso.host(remoteHost{labHost{lab}}).(broker.ExternalAdminHost)
	require.True(t, ok)
	assert.IsType(t, &net.Dialer{}, remote.ExternalAdminDialer(), "another host: the host network")
	own, ok := iso.host(labHost{lab}).(broker.ExternalAdminHost)
	require.True(t, ok)
	assert.Nil(t, own.ExternalAdminDialer(), "nothing to keep: as the clients")
	assert.Equal(t, brokerSideDialer{lab}, broker.AdminDialer(iso.host(labHost{lab})))
}
