package netem

import (
	"context"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/nftables"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vishvananda/netlink"

	"pslab/internal/testbroker"
)

func TestCheckRemoteRefuses(t *testing.T) {
	testbroker.RequireRoot(t)
	for _, a := range []string{"127.0.0.1", "10.77.2.2", "10.77.1.2", "0.0.0.0", "224.0.0.1", "::1"} {
		err := CheckRemote([]netip.Addr{netip.MustParseAddr(a)})
		assert.ErrorIs(t, err, ErrBadRemote, a)
	}
	assert.ErrorIs(t, CheckOptions(Options{BrokerPID: 5, Remote: []netip.Addr{netip.MustParseAddr("192.0.2.1")}}), ErrBadRemote)
}

// TestRemoteBrokerThroughTheHost: a "remote host" (a namespace behind a
// veth of the host's, 10.78.0.0/30) runs an echo server; the lab's clients
// reach it through the router and the host, the host's uplink counters see
// it, nothing else is reachable from the lab, and Down and a crash's
// Cleanup leave the host as it was.
func TestRemoteBrokerThroughTheHost(t *testing.T) {
	testbroker.SkipShort(t, "root, network namespaces")
	testbroker.RequireRoot(t)
	rh, err := testbroker.NewRemoteHost("pslt-rem", "pslt-h0", "10.78.0.1", "10.78.0.2")
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, rh.Close()) })
	remote := netip.MustParseAddr(rh.IP)
	fwdBefore := readForwarding(t, rh.HostIf)

	var ln net.Listener
	require.NoError(t, inNamedNS(rh.Name, func() error {
		var err error
		ln, err = net.Listen("tcp", rh.IP+":61913")
		return err
	}))
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()

	CheckRemote(nil) //nolint:errcheck // no addresses: nothing to check
	require.NoError(t, CheckRemote([]netip.Addr{remote}))
	require.ErrorIs(t, CheckRemote([]netip.Addr{netip.MustParseAddr(rh.HostIP)}), ErrBadRemote, "an address of this host")

	lab := New(Options{Prefix: "pslabrmt", Remote: []netip.Addr{remote}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, lab.Up(ctx))
	t.Cleanup(func() { _ = lab.Down() })
	before, err := lab.Counters()
	require.NoError(t, err)
	require.NotNil(t, before.Uplink)

	c, err := lab.DialContext(ctx, "tcp", rh.IP+":61913")
	require.NoError(t, err)
	msg := strings.Repeat("pslab remote ", 1000)
	go func() { _, _ = c.Write([]byte(msg)) }()
	got := make([]byte, len(msg))
	_, err = io.ReadFull(c, got)
	require.NoError(t, err)
	assert.Equal(t, msg, string(got))
	require.NoError(t, c.Close())

	after, err := lab.Counters()
	require.NoError(t, err)
	d := after.Sub(before)
	require.NotNil(t, d.Uplink)
	assert.Positive(t, d.Uplink.ToBroker, "the host forwarded the clients' packets")
	assert.Positive(t, d.Uplink.ToClient, "and the replies")
	assert.GreaterOrEqual(t, d.ToBroker.TxPackets, d.Uplink.ToBroker, "everything forwarded came through the router")
	assert.Equal(t, "1", readForwarding(t, rh.HostIf))

	// Only the broker's address is reachable from the lab: the host's own
	// end of the remote link is not (no route), so nothing else leaves.
	dctx, dcancel := context.WithTimeout(ctx, 2*time.Second)
	_, err = lab.DialContext(dctx, "tcp", rh.HostIP+":22")
	dcancel()
	assert.Error(t, err)

	// A crash: the lock goes with the process, the state stays.
	lab.mu.Lock()
	lab.unlock()
	lab.mu.Unlock()
	removed, err := Cleanup("pslabrmt")
	require.NoError(t, err)
	assert.Contains(t, strings.Join(removed, "\n"), "forwarding on pslt-h0")
	assert.Contains(t, strings.Join(removed, "\n"), "nft table ip pslabrmt-uplink")
	assertHostClean(t, "pslabrmt", rh.HostIf, fwdBefore)

	// Up and Down.
	require.NoError(t, lab.Up(ctx))
	require.NoError(t, lab.Down())
	assertHostClean(t, "pslabrmt", rh.HostIf, fwdBefore)
}

func readForwarding(t *testing.T, ifc string) string {
	b, err := os.ReadFile(forwardingPath(ifc))
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}

func assertHostClean(t *testing.T, prefix, uplink, fwd string) {
	t.Helper()
	assert.Equal(t, fwd, readForwarding(t, uplink), "forwarding on the uplink restored")
	_, err := netlink.LinkByName(prefix + "-b0")
	assert.Error(t, err, "no veth end left on the host")
	for _, f := range []string{uplinkStatePath(prefix), brokerStatePath(prefix)} {
		_, err := os.Stat(f)
		assert.True(t, os.IsNotExist(err), f)
	}
	conn, err := nftables.New()
	require.NoError(t, err)
	ts, err := conn.ListTables()
	require.NoError(t, err)
	for _, tb := range ts {
		assert.NotEqual(t, prefix+"-uplink", tb.Name)
	}
	for _, ns := range []string{prefix + "-cli", prefix + "-rtr"} {
		assert.False(t, namedNSExists(ns), ns)
	}
}
