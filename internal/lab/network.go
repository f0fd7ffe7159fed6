package lab

import (
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"time"

	"pslab/internal/broker"
	"pslab/internal/driver"
	"pslab/internal/results"
	"pslab/internal/scenario"
	"pslab/netem"
)

// network is one profile as a run uses it: the emulated path through the
// lab's namespaces when this machine can do it, else loopback (wireline
// only, and said so).
type network struct {
	profile netem.Profile
	lab     *netem.Lab // nil: loopback
	backend netem.Backend
	host    broker.Host
	verify  *netem.Verification
	// external: an external broker (--url) over the host network, by
	// choice, not for want of root.
	external bool
	remote   *RemotePath // brokers on other hosts: the path beyond this host
}

// verifyDuration is how long a shaped profile is probed before its cases.
const verifyDuration = 5 * time.Second

// openNetwork sets up network name. hostNetwork: an external broker reached
// over the host network (wireline only); brokerPID: the broker side of the
// lab is that process's network namespace.
// hostUse says whether a network runs on the host's own network instead
// of through the lab, and why.
type hostUse int

const (
	throughLab   hostUse = iota // the lab's router (loopback without root)
	hostExternal                // an external broker (--url) over the host network, by choice
	hostInMemory                // a simulated broker: nothing crosses a network
)

func openNetwork(ctx context.Context, name, labName string, use hostUse, brokerPID int, remote remoteBrokers, log io.Writer) (*network, error) {
	p, err := netem.LoadProfile(name)
	if err != nil {
		return nil, err
	}
	nw := &network{profile: p}
	if use != throughLab && !p.Shaped() {
		what := map[hostUse]string{hostExternal: "external", hostInMemory: "in-memory"}[use]
		fmt.Fprintf(log, "note: %s broker: running %s over the host network\n", what, name)
		nw.host, nw.external = broker.LoopbackHost{}, use == hostExternal
		return nw, nil
	}
	if err := netem.Supported(); err != nil {
		if p.Shaped() {
			return nil, fmt.Errorf("link emulation unavailable: %w", err)
		}
		fmt.Fprintf(log, "note: link emulation unavailable (%v); running %s on loopback, without the router path\n", err, name)
		nw.host = broker.LoopbackHost{}
		return nw, nil
	}
	if labName == "" {
		labName = "pslab"
	}
	removed, err := netem.Cleanup(labName)
	if err != nil {
		return nil, fmt.Errorf("clean up leftovers: %w", err)
	}
	for _, r := range removed {
		fmt.Fprintf(log, "cleanup: removed %s left by an earlier run\n", r)
	}
	lab := netem.New(netem.Options{Prefix: labName, BrokerPID: brokerPID, Remote: remote.addrs})
	if err := lab.Up(ctx); err != nil {
		_ = lab.Down()
		return nil, err
	}
	backend, err := lab.Apply(p)
	if err != nil {
		_ = lab.Down()
		return nil, err
	}
	nw.lab, nw.backend, nw.host = lab, backend, labHost{lab}
	if p.Shaped() {
		fmt.Fprintf(log, "verifying %s for %s ...\n", name, verifyDuration)
		v, err := lab.Verify(ctx, p, verifyDuration)
		if err != nil {
			_ = lab.Down()
			return nil, fmt.Errorf("verify %s: %w", name, err)
		}
		fmt.Fprintf(log, "%s\n", v)
		nw.verify = &v
	}
	if remote.addrs != nil {
		if nw.remote, err = probeRemote(ctx, lab, remote.urls, log); err != nil {
			_ = lab.Down()
			return nil, fmt.Errorf("remote broker: %w", err)
		}
		nw.host = remoteHost{labHost{lab}}
	}
	return nw, nil
}

func (nw *network) close() {
	if nw.lab != nil {
		_ = nw.lab.Down()
	}
}

func (nw *network) describe() string {
	if nw.lab == nil {
		return nw.profile.Name + " (loopback)"
	}
	if nw.remote != nil {
		return fmt.Sprintf("%s (namespaces, backend %s, forwarded through this host to the broker's address)", nw.profile.Name, nw.backend)
	}
	return fmt.Sprintf("%s (namespaces, backend %s)", nw.profile.Name, nw.backend)
}

func (nw *network) record() results.Network {
	spec := nw.profile
	r := results.Network{Profile: nw.profile.Name, Spec: &spec, Verify: nw.verify}
	if nw.lab == nil {
		r.Path = "loopback"
		if nw.external {
			r.Path = PathHostNetwork
		}
		return r
	}
	r.Path, r.Backend = "namespaces", string(nw.backend)
	if nw.remote != nil {
		r.Remote = nw.remote
	}
	return r
}

// snapshot takes the link counters at the start of a case.
func (nw *network) snapshot() *netem.Counters {
	if nw.lab == nil {
		return nil
	}
	c, err := nw.lab.Counters()
	if err != nil {
		return nil
	}
	return &c
}

// linkOver is what the link did over a case: counter deltas since before.
func (nw *network) linkOver(before *netem.Counters) *results.LinkOver {
	if nw.lab == nil || before == nil {
		return nil
	}
	after, err := nw.lab.Counters()
	if err != nil {
		return &results.LinkOver{Error: err.Error()}
	}
	d := after.Sub(*before)
	return &results.LinkOver{Counters: &d}
}

// resetConnections destroys the client-broker sockets a case left behind
// on the emulated link (see netem.Lab.ResetConnections).
func (nw *network) resetConnections() (int, error) {
	if nw.lab == nil {
		return 0, nil
	}
	return nw.lab.ResetConnections()
}

// labHost runs brokers in the lab's broker namespace.
type labHost struct{ lab *netem.Lab }

func (h labHost) ListenIP() string          { return h.lab.BrokerIP() }
func (h labHost) Start(cmd *exec.Cmd) error { return h.lab.StartInBroker(cmd) }
func (h labHost) Dialer() driver.Dialer     { return h.lab }

// AdminDialer implements broker.AdminHost: administration connects from
// inside the broker namespace, so it never crosses the emulated link.
func (h labHost) AdminDialer() driver.Dialer { return brokerSideDialer{h.lab} }

type brokerSideDialer struct{ lab *netem.Lab }

func (d brokerSideDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return d.lab.DialIn(ctx, netem.SideBroker, network, addr)
}

// linkQueueS is how much link time the publishers of a case may have
// unconfirmed on a shaped link: half a second, as the router's own queue.
const linkQueueS = 0.5

// publishWindow is the flow-control window of each publisher of c when the
// case does not set one. On a shaped link the publishers share one budget
// of linkQueueS of the link's rate (more only queues: 50 publishers must not
// put 50 windows on a 1 Mbit/s link); elsewhere each publisher has the
// driver default, within the case-wide guards (driver.UnshapedWindowOf:
// TCP backpressure only where the broker forwards or drops, d a TCPBounder).
func (nw *network) publishWindow(c scenario.Case, d driver.Driver) int {
	if c.PublishWindow > 0 {
		return c.PublishWindow
	}
	pubs := max(c.Publishers, 1)
	rate := netem.NominalRateKbit(nw.profile, netem.ToBroker) // RateKbit, a trace's mean, 802.11's airtime rate
	if !nw.profile.Shaped() || rate <= 0 {
		return driver.UnshapedWindowOf(d, c.Factors, pubs)
	}
	budget := int(rate * 1000 / 8 * linkQueueS)
	return driver.WindowFor(budget/pubs, c.Size)
}

// deliveryQueueS is how much link time the deliveries a case's subscribers
// pull may take at once on a shaped link: 4 s, far within JetStream's
// redelivery timer (30 s), and enough to keep the link busy across a pull's
// round trip.
const deliveryQueueS = 4

// shapedStall is how long one connection's bytes can wait on a shaped
// link: TCP's longest retransmission back-off (2 min), as the NATS
// server's write deadline (broker.NATSWriteDeadline). Over the congested
// emulated link a connection's bytes, an acknowledgement or a heart-beat
// among them, can wait that long. It is the broker's redelivery timer
// there (a shorter timer redelivers what has arrived) and the clients'
// stall tolerance (stallTolerance).
const shapedStall = 2 * time.Minute

// stallTolerance is how long a client connection may move nothing before
// the broker may give it up (driver.Endpoint.StallTolerance): shapedStall
// on a shaped link, 0 (the driver's default) elsewhere. Artemis closed
// 70-2303 connections per record of set 1 over wifi-paper, in 4 labs, with
// its connection TTL of 20 s (AMQ229014, "Did not receive data ... within
// the 20000ms connection TTL"), and the publishers' unconfirmed sends went
// in doubt.
func (nw *network) stallTolerance() time.Duration {
	if nw.profile.Shaped() {
		return shapedStall
	}
	return 0
}

// deliveryFlow is the deliveries in flight per subscriber of c, and the
// broker's redelivery timer, for a driver whose subscribers pull
// (driver.DeliveryWindowed) on a shaped link: the subscribers share
// deliveryQueueS of the link's rate (at least one message each), and the
// timer is shapedStall. Before, JetStream subscribers pulled 1000
// messages at a time with a 30 s timer: 100 subscribers of 100 B messages
// put 80 s of a 1 Mbit/s link in flight, and JetStream redelivered what
// had not arrived or whose acknowledgement had not (16453 duplicates in a
// 3-minute window of set 1 row 21; 4477 with the window alone). 0
// elsewhere: the driver's defaults.
func (nw *network) deliveryFlow(c scenario.Case, d driver.Driver) (int, time.Duration) {
	dw, ok := d.(driver.DeliveryWindowed)
	rate := netem.NominalRateKbit(nw.profile, netem.ToClient)
	if !ok || !dw.DeliveryWindowed(c.Factors) || !nw.profile.Shaped() || rate <= 0 {
		return 0, 0
	}
	budget := int(rate * 1000 / 8 * deliveryQueueS)
	return driver.WindowFor(budget/max(c.Subscribers, 1), c.Size), shapedStall
}

// idleBound caps the wait for a quiet link between cases.
const idleBound = 30 * time.Second

// waitIdle waits until the emulated link carries nothing: no backlog in any
// of its queues and no packet forwarded for half a second. Connections of
// the previous case that are still draining would otherwise eat the next
// case's link (and time out its connection set-up). It returns how long it
// waited, and whether the link went quiet.
func (nw *network) waitIdle(ctx context.Context) (time.Duration, bool) {
	if !nw.shapedLink() {
		return 0, true
	}
	start := time.Now()
	var last uint64
	quietSince := time.Time{}
	for time.Since(start) < idleBound && ctx.Err() == nil {
		c, err := nw.lab.Counters()
		if err != nil {
			return time.Since(start), false
		}
		moved := c.ToBroker.TxPackets + c.ToClient.TxPackets
		backlog := c.Backlog() // every queue of every backend, the relay's too
		switch {
		case backlog > 0 || moved != last:
			quietSince = time.Time{}
		case quietSince.IsZero():
			quietSince = time.Now()
		case time.Since(quietSince) >= 500*time.Millisecond:
			return time.Since(start), true
		}
		last = moved
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(start), false
}

// shapedLink reports whether the network is an emulated link with shaping
// (not wireline, not loopback).
func (nw *network) shapedLink() bool { return nw.lab != nil && nw.profile.Shaped() }

// unshape lifts the link's shaping and loss (plain forwarding) for an
// unshaped connection set-up; reshape puts the profile back. Both are for
// a shapedLink.
func (nw *network) unshape() error { return nw.lab.Clear() }

func (nw *network) reshape() error {
	b, err := nw.lab.Apply(nw.profile)
	if err == nil && b != nw.backend {
		err = fmt.Errorf("link reshaped with backend %s, verified with %s", b, nw.backend)
	}
	return err
}
