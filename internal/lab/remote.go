package lab

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"sort"
	"time"

	"pslab/internal/driver"
	"pslab/internal/results"
	"pslab/netem"
)

// Brokers on other hosts (--url without --broker-pid): as root, the lab's
// router forwards out through this host to the brokers' addresses
// (netem.Options.Remote), so every profile, wireline too, applies to the
// path from the clients to those brokers and to nothing else.

// remotePlan resolves the URLs' hosts to IPv4 addresses and checks that
// the lab can forward to them. It returns the addresses, the URLs with
// their hosts replaced by those addresses (the lab's clients dial literal
// addresses), or an error saying why not.
func remotePlan(urls map[string]string) ([]netip.Addr, map[string]string, error) {
	var addrs []netip.Addr
	literal := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(urls)) {
		u, err := url.Parse(urls[name])
		if err != nil {
			return nil, nil, err
		}
		a, err := resolve4(u.Hostname())
		if err != nil {
			return nil, nil, fmt.Errorf("--url %s: %w", name, err)
		}
		u.Host = net.JoinHostPort(a.String(), u.Port())
		literal[name] = u.String()
		if !slices.Contains(addrs, a) {
			addrs = append(addrs, a)
		}
	}
	if err := netem.CheckRemote(addrs); err != nil {
		return nil, nil, err
	}
	return addrs, literal, nil
}

func resolve4(host string) (netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap(), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip4", host)
	if err != nil || len(ips) == 0 {
		return netip.Addr{}, fmt.Errorf("resolve %s to an IPv4 address: %v", host, err)
	}
	return ips[0].Unmap(), nil
}

// RemotePath is what a record keeps of the path beyond this host to
// brokers on other hosts (results.RemotePath).
type RemotePath = results.RemotePath

// RemoteBroker is one remote broker address and its connect round trips.
type RemoteBroker = results.RemoteBroker

const remoteNote = "emulated hop verified between the clients and this host; the path beyond this host is real, unshaped and only probed by TCP connects (median connect time, from this host and through the lab)"

// probeRemote connects n times to each broker address from this host and
// through the lab (on the link as it is), and reports the median times.
func probeRemote(ctx context.Context, lab *netem.Lab, urls map[string]string, log io.Writer) (*RemotePath, error) {
	rp := &RemotePath{Note: remoteNote}
	seen := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(urls)) {
		u, err := url.Parse(urls[name])
		if err != nil || seen[u.Host] {
			continue
		}
		seen[u.Host] = true
		direct, err := connectMedian(ctx, &net.Dialer{}, u.Host)
		if err != nil {
			return nil, fmt.Errorf("%s at %s from this host: %w", name, u.Host, err)
		}
		through, err := connectMedian(ctx, lab, u.Host)
		if err != nil {
			return nil, fmt.Errorf("%s at %s through the lab: %w", name, u.Host, err)
		}
		rb := RemoteBroker{Addr: u.Host, DirectRTTms: direct, ThroughLabms: through, Connects: remoteConnects}
		fmt.Fprintf(log, "remote %s at %s: connect %.2f ms from this host, %.2f ms through the lab\n", name, u.Host, direct, through)
		rp.Brokers = append(rp.Brokers, rb)
	}
	return rp, nil
}

const remoteConnects = 5

type dialer interface {
	DialContext(ctx context.Context, network, addr string) (net.Conn, error)
}

func connectMedian(ctx context.Context, d dialer, addr string) (float64, error) {
	var ms []float64
	for range remoteConnects {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		t0 := time.Now()
		c, err := d.DialContext(cctx, "tcp", addr)
		cancel()
		if err != nil {
			return 0, err
		}
		ms = append(ms, float64(time.Since(t0).Microseconds())/1000)
		_ = c.Close()
	}
	sort.Float64s(ms)
	return ms[len(ms)/2], nil
}

// remoteBrokers are the brokers on other hosts of a plan: their addresses
// (nil when the lab does not forward to other hosts) and URLs by address.
type remoteBrokers struct {
	addrs []netip.Addr
	urls  map[string]string
}

// planRemote decides whether external brokers (--url, no --broker-pid)
// are reached through the lab (root, and addresses the lab can forward
// to) and returns why not when they are not.
func (p *Plan) planRemote(o Options) error {
	if len(o.URLs) == 0 || o.BrokerPID != 0 {
		return nil
	}
	if err := netem.Supported(); err != nil {
		return err
	}
	addrs, urls, err := remotePlan(o.URLs)
	if err != nil {
		return err
	}
	p.remote = remoteBrokers{addrs: addrs, urls: urls}
	return nil
}

// remoteHost is the lab's host for brokers on other hosts: clients dial
// through the lab, administration (purges, stream set-up) goes straight
// from this host, so it never queues behind a case's data on the link.
type remoteHost struct{ labHost }

func (remoteHost) ExternalAdminDialer() driver.Dialer { return &net.Dialer{Timeout: 10 * time.Second} }
