package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"sync"
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
	profile netem.Profile // per role: the publishers' link's (the lab's first)
	lab     *netem.Lab    // nil: loopback
	backend netem.Backend
	host    broker.Host
	verify  *netem.Verification
	// sub: a network with a link per role (roles.go): the subscribers'
	// link, the lab's second; spec is then the network's name as given.
	sub  *roleLink
	spec string
	// external: an external broker (--url) over the host network, by
	// choice, not for want of root.
	external bool
	remote   *RemotePath // brokers on other hosts: the path beyond this host
	// tcpCongestion: read once, on the first record (the namespaces keep
	// the value for the network's life).
	tcpCongestion     string
	tcpCongestionOnce sync.Once
}

// verifyDuration is how long a shaped profile is probed before its cases.
const verifyDuration = 5 * time.Second

// hostUse says whether a network runs on the host's own network instead
// of through the lab, and why.
type hostUse int

const (
	throughLab   hostUse = iota // the lab's router (loopback without root)
	hostExternal                // an external broker (--url) over the host network, by choice
	hostInMemory                // a simulated broker: nothing crosses a network
)

// hostUse is how a run of p with o reaches its brokers on a network of
// one lab: the one classification that Run and the plan's checks share.
func (p Plan) hostUse(o Options) hostUse {
	switch {
	case p.inMemoryOnly(o):
		return hostInMemory
	case len(o.URLs) > 0 && o.BrokerPID == 0 && p.remote.addrs == nil:
		return hostExternal
	}
	return throughLab
}

// openNetwork sets up network name. use: through the lab, or on the host
// network (an external broker, wireline only; or the in-memory fake);
// brokerPID: the broker side of the lab is that process's network
// namespace; tcpCongestion: the TCP congestion control to set in the
// lab's namespaces (empty: the host's, inherited).
func openNetwork(ctx context.Context, name, labName string, use hostUse, brokerPID int, remote remoteBrokers, tcpCongestion string, log io.Writer) (*network, error) {
	spec, err := loadNetwork(name)
	if err != nil {
		return nil, err
	}
	p := spec.pub
	nw := &network{profile: p, spec: spec.name}
	if spec.perRole {
		return openRoleNetwork(ctx, nw, spec, labName, use, brokerPID, remote, tcpCongestion, log)
	}
	if tcpCongestion != "" && use != throughLab {
		return nil, fmt.Errorf("a TCP congestion control (%s) is set in the lab's namespaces, and this broker is not reached through the lab", tcpCongestion)
	}
	if use != throughLab && !p.Shaped() {
		what := map[hostUse]string{hostExternal: "external", hostInMemory: "in-memory"}[use]
		fmt.Fprintf(log, "note: %s broker: running %s over the host network\n", what, name)
		nw.host, nw.external = broker.LoopbackHost{}, use == hostExternal
		return nw, nil
	}
	if err := netem.Supported(); err != nil {
		if p.Shaped() || tcpCongestion != "" {
			return nil, fmt.Errorf("link emulation unavailable: %w", err)
		}
		fmt.Fprintf(log, "note: link emulation unavailable (%v); running %s on loopback, without the router path\n", err, name)
		nw.host = broker.LoopbackHost{}
		return nw, nil
	}
	lab, err := upLab(ctx, labName, netem.Options{Prefix: labName, BrokerPID: brokerPID, Remote: remote.addrs, TCPCongestion: tcpCongestion}, log)
	if err != nil {
		return nil, err
	}
	nw.lab, nw.host = lab, labHost{lab}
	if nw.backend, nw.verify, err = applyVerified(ctx, lab, p, name, log); err != nil {
		_ = lab.Down()
		return nil, err
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

// openRoleNetwork sets up a network with a link per role: a lab with two
// links, the publishers' profile on the first, the subscribers' on the
// second, each verified.
func openRoleNetwork(ctx context.Context, nw *network, spec networkSpec, labName string, use hostUse, brokerPID int, remote remoteBrokers, tcpCongestion string, log io.Writer) (*network, error) {
	if use != throughLab || brokerPID != 0 || remote.addrs != nil {
		return nil, fmt.Errorf("a link per role needs the broker in the lab's own broker namespace")
	}
	if err := netem.Supported(); err != nil {
		return nil, fmt.Errorf("a link per role needs the lab: %w", err)
	}
	lab, err := upLab(ctx, labName, netem.Options{Prefix: labName, Links: 2, TCPCongestion: tcpCongestion}, log)
	if err != nil {
		return nil, err
	}
	nw.lab, nw.host = lab, labHost{lab}
	nw.sub = &roleLink{profile: spec.sub, lab: lab.Link(1)}
	if nw.backend, nw.verify, err = applyVerified(ctx, lab, spec.pub, "the publishers' link, "+spec.pub.Name, log); err == nil {
		nw.sub.backend, nw.sub.verify, err = applyVerified(ctx, nw.sub.lab, spec.sub, "the subscribers' link, "+spec.sub.Name, log)
	}
	if err != nil {
		_ = lab.Down()
		return nil, err
	}
	return nw, nil
}

// upLab cleans up what an earlier run of lab labName left and brings the
// lab up.
func upLab(ctx context.Context, labName string, o netem.Options, log io.Writer) (*netem.Lab, error) {
	if labName == "" {
		labName = "pslab"
	}
	o.Prefix = labName
	removed, err := netem.Cleanup(labName)
	if err != nil {
		return nil, fmt.Errorf("clean up leftovers: %w", err)
	}
	for _, r := range removed {
		fmt.Fprintf(log, "cleanup: removed %s left by an earlier run\n", r)
	}
	lab := netem.New(o)
	if err := lab.Up(ctx); err != nil {
		_ = lab.Down()
		return nil, err
	}
	return lab, nil
}

// applyVerified puts profile p on link l and, when it shapes, verifies it
// (what names it in the log).
func applyVerified(ctx context.Context, l *netem.Lab, p netem.Profile, what string, log io.Writer) (netem.Backend, *netem.Verification, error) {
	backend, err := l.Apply(p)
	if err != nil || !p.Shaped() {
		return backend, nil, err
	}
	fmt.Fprintf(log, "verifying %s for %s ...\n", what, verifyDuration)
	v, err := l.Verify(ctx, p, verifyDuration)
	if err != nil {
		return backend, nil, fmt.Errorf("verify %s: %w", what, err)
	}
	fmt.Fprintf(log, "%s\n", v)
	return backend, &v, nil
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
	if nw.sub != nil {
		return fmt.Sprintf("%s (namespaces: publishers on %s, backend %s; subscribers on %s, backend %s)",
			nw.spec, nw.profile.Name, nw.backend, nw.sub.profile.Name, nw.sub.backend)
	}
	if nw.remote != nil {
		return fmt.Sprintf("%s (namespaces, backend %s, forwarded through this host to the broker's address)", nw.profile.Name, nw.backend)
	}
	return fmt.Sprintf("%s (namespaces, backend %s)", nw.profile.Name, nw.backend)
}

func (nw *network) record() results.Network {
	r := nw.paths()
	nw.tcpCongestionOnce.Do(func() { nw.tcpCongestion = nw.congestion() })
	r.TCPCongestion = nw.tcpCongestion
	return r
}

// congestion is the TCP congestion control the case's connections use:
// the host's on loopback, else the lab's namespaces' (each role's link
// named when they differ); empty when it cannot be read.
func (nw *network) congestion() string {
	if nw.lab == nil {
		return netem.HostCongestionControl()
	}
	pub, err := nw.lab.CongestionControl()
	if err != nil || nw.sub == nil {
		return pub
	}
	sub, err := nw.sub.lab.CongestionControl()
	if err != nil || sub == pub {
		return pub
	}
	return fmt.Sprintf("%s=%s;%s=%s", rolePub, pub, roleSub, sub)
}

// paths is the record's description of the network without the
// congestion control.
func (nw *network) paths() results.Network {
	if nw.sub != nil {
		pub, sub := nw.profile, nw.sub.profile
		backend := fmt.Sprintf("%s=%s;%s=%s", rolePub, nw.backend, roleSub, nw.sub.backend)
		if nw.backend == netem.BackendNone && nw.sub.backend == netem.BackendNone {
			backend = string(netem.BackendNone)
		}
		return results.Network{Profile: nw.spec, Path: "namespaces", Backend: backend,
			Links: []results.RoleLink{
				{Role: results.RolePublishers, Profile: pub.Name, Backend: string(nw.backend), Spec: &pub, Verify: nw.verify},
				{Role: results.RoleSubscribers, Profile: sub.Name, Backend: string(nw.sub.backend), Spec: &sub, Verify: nw.sub.verify},
			}}
	}
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

// links are the network's emulated links, the publishers' (or the only
// one) first; none on loopback.
func (nw *network) links() []*netem.Lab {
	switch {
	case nw.lab == nil:
		return nil
	case nw.sub != nil:
		return []*netem.Lab{nw.lab, nw.sub.lab}
	}
	return []*netem.Lab{nw.lab}
}

// snapshot takes the link counters at the start of a case, one per link
// (nil for a link whose counters could not be read).
func (nw *network) snapshot() []*netem.Counters {
	var out []*netem.Counters
	for _, l := range nw.links() {
		c, err := l.Counters()
		if err != nil {
			out = append(out, nil)
			continue
		}
		out = append(out, &c)
	}
	return out
}

// recordLinks puts what each link did over a case (counter deltas since
// before) into the case's record.
func (nw *network) recordLinks(r *results.Network, before []*netem.Counters) {
	for i, l := range nw.links() {
		if i >= len(before) || before[i] == nil {
			continue
		}
		var over *results.LinkOver
		if after, err := l.Counters(); err != nil {
			over = &results.LinkOver{Error: err.Error()}
		} else {
			d := after.Sub(*before[i])
			over = &results.LinkOver{Counters: &d}
		}
		if nw.sub == nil {
			r.Link = over
		} else if i < len(r.Links) {
			r.Links[i].Link = over
		}
	}
}

// resetConnections destroys the client-broker sockets a case left behind
// on the emulated link (see netem.Lab.ResetConnections).
func (nw *network) resetConnections() (int, error) {
	total := 0
	for _, l := range nw.links() {
		n, err := l.ResetConnections()
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
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
	if nw.shaped() {
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
	subs := nw.subscribersProfile()
	rate := netem.NominalRateKbit(subs, netem.ToClient)
	if !ok || !dw.DeliveryWindowed(c.Factors) || !subs.Shaped() || rate <= 0 {
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
		var moved, backlog uint64
		for _, l := range nw.links() {
			c, err := l.Counters()
			if err != nil {
				return time.Since(start), false
			}
			moved += c.ToBroker.TxPackets + c.ToClient.TxPackets
			backlog += c.Backlog() // every queue of every backend, the relay's too
		}
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
func (nw *network) shapedLink() bool { return nw.lab != nil && nw.shaped() }

// name is the network's name in records: its profile's name, or the
// spec of a link per role as given.
func (nw *network) name() string {
	if nw.sub != nil {
		return nw.spec
	}
	return nw.profile.Name
}

// shaped: the network's link, or one of its links per role, is shaped.
func (nw *network) shaped() bool {
	return nw.profile.Shaped() || (nw.sub != nil && nw.sub.profile.Shaped())
}

// subscribersProfile is the profile of the link the subscribers are on.
func (nw *network) subscribersProfile() netem.Profile {
	if nw.sub != nil {
		return nw.sub.profile
	}
	return nw.profile
}

// unshape lifts the links' shaping and loss (plain forwarding) for an
// unshaped connection set-up; reshape puts the profiles back. Both are for
// a shapedLink.
func (nw *network) unshape() error {
	var errs []error
	for _, l := range nw.links() {
		errs = append(errs, l.Clear())
	}
	return errors.Join(errs...)
}

func (nw *network) reshape() error {
	b, err := nw.lab.Apply(nw.profile)
	if err == nil && b != nw.backend {
		err = fmt.Errorf("link reshaped with backend %s, verified with %s", b, nw.backend)
	}
	if s := nw.sub; s != nil && err == nil {
		b, err = s.lab.Apply(s.profile)
		if err == nil && b != s.backend {
			err = fmt.Errorf("subscribers' link reshaped with backend %s, verified with %s", b, s.backend)
		}
	}
	return err
}
