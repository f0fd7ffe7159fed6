package netem

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSecondLinkNames: a lab's second link has names and addresses of its
// own (interface names within the kernel's 15 characters at the longest
// prefix), shares the router and broker namespaces, and a lab of one link
// has none.
func TestSecondLinkNames(t *testing.T) {
	n, err := namesFor("abcdefghij")
	require.NoError(t, err)
	s := secondNames(n)
	assert.Equal(t, n.NsRtr, s.NsRtr)
	assert.Equal(t, n.NsBrk, s.NsBrk)
	first := map[string]bool{}
	for _, x := range []string{n.NsCli, n.CliIf, n.BrkIf, n.RtrCliIf, n.RtrBrkIf, n.IFB, n.Table, n.Relay, n.CliAddr, n.RtrCliAddr, n.RtrBrkAddr, n.BrkEndAddr, n.CliNet} {
		first[x] = true
	}
	for _, x := range []string{s.NsCli, s.CliIf, s.BrkIf, s.RtrCliIf, s.RtrBrkIf, s.IFB, s.Table, s.Relay, s.CliAddr, s.RtrCliAddr, s.RtrBrkAddr, s.BrkEndAddr, s.CliNet} {
		assert.False(t, first[x], "%s is the first link's too", x)
	}
	for _, dev := range []string{s.CliIf, s.BrkIf, s.RtrCliIf, s.RtrBrkIf, s.IFB} {
		assert.LessOrEqual(t, len(dev), 15, dev)
	}
	for _, a := range []string{s.CliAddr, s.RtrCliAddr, s.RtrBrkAddr, s.BrkEndAddr} {
		p := netip.MustParsePrefix(a)
		for _, other := range []string{cliNet, brkNet} {
			assert.False(t, netip.MustParsePrefix(other).Contains(p.Addr()), "%s inside the first link's %s", a, other)
		}
	}

	l := New(Options{Prefix: "abcdefghij", Links: 2})
	require.NotNil(t, l.Link(1))
	assert.Same(t, l, l.Link(0))
	assert.Same(t, l, l.Link(1).Link(0))
	assert.Equal(t, 2, l.Link(1).Links())
	assert.Equal(t, "10.77.3.2", l.Link(1).ClientIP())
	assert.Equal(t, l.BrokerIP(), l.Link(1).BrokerIP(), "one broker address for both links")
	require.Error(t, l.Link(1).Up(t.Context()), "the lab comes up through its first link")
	require.Error(t, l.Link(1).Down())
	one := New(Options{Prefix: "abcdefghij"})
	assert.Nil(t, one.Link(1))
	assert.Equal(t, 1, one.Links())
}

// TestSecondLinkOptions: a lab has one or two links, and the second needs
// the lab's own broker namespace.
func TestSecondLinkOptions(t *testing.T) {
	require.NoError(t, CheckOptions(Options{Links: 2}))
	require.NoError(t, CheckOptions(Options{Links: 1}))
	assert.ErrorContains(t, CheckOptions(Options{Links: 3}), "1 or 2")
	assert.ErrorIs(t, CheckOptions(Options{Links: 2, BrokerPID: 42}), ErrBadBrokerPID)
	assert.ErrorIs(t, CheckOptions(Options{Links: 2, Remote: []netip.Addr{netip.MustParseAddr("192.0.2.7")}}), ErrBadRemote)
}

// TestTwoLinksEachCarriesItsOwnClients: in a lab with two links, what the
// clients of one link's namespace exchange with the broker side crosses
// that link (its counters count it, the other link's do not), with plain
// forwarding and with either link on the kernel's shaping or the relay;
// Down leaves nothing of either.
func TestTwoLinksEachCarriesItsOwnClients(t *testing.T) {
	requireRoot(t)
	host := hostSnapshot(t)
	l := New(Options{Prefix: testPrefix, Links: 2})
	require.NoError(t, l.Up(t.Context()))
	defer func() {
		require.NoError(t, l.Down())
		assertLabGone(t, testPrefix)
		assert.False(t, namedNSExists(secondNames(l.n).NsCli), "the second link's namespace is gone")
		assert.Empty(t, relayPidsOf(t, testPrefix), "no relay of the first link left")
		assert.Empty(t, relayPidsOf(t, testPrefix+"-1"), "no relay of the second link left")
		if after := hostSnapshot(t); after != host {
			t.Errorf("host namespace changed:\nbefore:\n%s\nafter:\n%s", host, after)
		}
	}()
	kernel := Profile{Name: "kernel-20m", RateKbit: 20_000, Duplex: DuplexFull, Backend: string(BackendTBFNft)}
	relay := Profile{Name: "relay-20m", RateKbit: 20_000, Duplex: DuplexFull, Backend: string(BackendRelay)}
	for _, c := range []struct {
		name   string
		p0, p1 Profile
		b0, b1 Backend
	}{
		{"plain forwarding", unshaped, unshaped, BackendNone, BackendNone},
		{"kernel, relay", kernel, relay, BackendTBFNft, BackendRelay},
		{"relay, kernel", relay, kernel, BackendRelay, BackendTBFNft},
	} {
		b0, err := l.Link(0).Apply(c.p0)
		require.NoError(t, err, c.name)
		b1, err := l.Link(1).Apply(c.p1)
		require.NoError(t, err, c.name)
		require.Equal(t, []Backend{c.b0, c.b1}, []Backend{b0, b1}, c.name)
		for i := range 2 {
			before := [2]Counters{}
			for j := range 2 {
				before[j], err = l.Link(j).Counters()
				require.NoError(t, err)
			}
			const n = 200
			got := exchangeUDP(t, l.Link(i), n)
			assert.GreaterOrEqual(t, got[ToBroker], n*9/10, "%s: link %d to the broker", c.name, i)
			assert.GreaterOrEqual(t, got[ToClient], n*9/10, "%s: link %d to its clients", c.name, i)
			for j := range 2 {
				after, err := l.Link(j).Counters()
				require.NoError(t, err)
				d := after.Sub(before[j])
				if j == i {
					assert.GreaterOrEqual(t, d.ToBroker.TxPackets, uint64(got[ToBroker]), "%s: link %d forwarded its clients' packets", c.name, i)
					assert.GreaterOrEqual(t, d.ToClient.TxPackets, uint64(got[ToClient]), "%s: link %d forwarded the replies", c.name, i)
					if d.ToBroker.Relay != nil {
						assert.GreaterOrEqual(t, d.ToBroker.Relay.Delivered, uint64(got[ToBroker]), "%s: link %d's relay carried them", c.name, i)
					}
				} else {
					assert.Less(t, d.ToBroker.TxPackets+d.ToClient.TxPackets, uint64(n/10), "%s: link %d carried link %d's traffic", c.name, j, i)
				}
			}
		}
	}
}

// exchangeUDP sends n datagrams from the link's clients to the broker side
// and n back, and counts what arrived each way.
func exchangeUDP(t *testing.T, l *Lab, n int) map[Direction]int {
	t.Helper()
	got := map[Direction]int{}
	for _, x := range directionsOf(l) {
		rx, err := l.ListenPacketIn(x.rx, "udp", net.JoinHostPort(x.rxIP, "0"))
		require.NoError(t, err)
		tx, err := l.DialIn(t.Context(), x.tx, "udp", rx.LocalAddr().String())
		require.NoError(t, err)
		// The receiver reads while the sender sends: 200 datagrams left in
		// the socket until the end overflow its default receive buffer
		// (212992 B holds about 166 of them).
		if u, ok := rx.(*net.UDPConn); ok {
			_ = u.SetReadBuffer(4 << 20) // and room for a stalled reader
		}
		arrived := make(chan int)
		go func() {
			buf := make([]byte, 200)
			k := 0
			for k < n {
				if _, _, err := rx.ReadFrom(buf); err != nil {
					break
				}
				k++
			}
			arrived <- k
		}()
		buf := make([]byte, 200)
		for range n {
			_, _ = tx.Write(buf)
			time.Sleep(200 * time.Microsecond)
		}
		_ = rx.SetReadDeadline(time.Now().Add(2 * time.Second))
		got[x.dir] = <-arrived
		tx.Close()
		rx.Close()
	}
	return got
}
