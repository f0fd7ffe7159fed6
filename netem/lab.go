package netem

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"regexp"
	"sync"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// Options configure a Lab.
type Options struct {
	// Prefix names everything the lab makes: namespaces <prefix>-cli,
	// <prefix>-rtr, <prefix>-brk, interfaces <prefix>-c0 and so on, the nft
	// table <prefix>. Default "pslab"; at most 10 characters [a-z0-9].
	Prefix string
	// Backend forces a backend for shaped profiles; empty means the
	// profile's own backend key, and by default auto: for rate and
	// independent loss alone netem where the kernel has it, tbf+nftables
	// otherwise; for anything else the relay (see chooseBackend).
	Backend Backend
	// BrokerPID, when not 0, puts the broker side of the link into the
	// network namespace of that process (/proc/PID/ns/net; for a Docker
	// container, docker inspect -f '{{.State.Pid}}' CONTAINER) instead of
	// the lab's own <prefix>-brk namespace. Up adds only the router's veth
	// end there, named <prefix>-b0, with the usual broker address
	// (BrokerIP) and a route to the clients' net, and Down, Cleanup and
	// the next Up remove only that veth: the namespace itself is never
	// mounted, unmounted or deleted. See CheckBrokerPID for the refusals.
	BrokerPID int
	// Remote, when not empty, are the IPv4 addresses of brokers on other
	// hosts: the broker side of the link is then this host, which forwards
	// the clients' packets to those addresses and only to those (see
	// remote.go). Not with BrokerPID.
	Remote []netip.Addr
	// DetachedRelay: a relay started by Apply outlives this process (pslab
	// netem up); by default it ends when this process does, however it
	// ends. Down and Cleanup end it either way.
	DetachedRelay bool
	// Links is how many links the lab has between clients and the broker
	// side: 1 (0 means 1) or 2. The second (Link(1)) has a client
	// namespace of its own, <prefix>-cli1, with its own veths through the
	// router to the broker side (router ends <prefix>-rc1 and -rb1) and
	// its own profile, backend, counters and verification: two groups of
	// clients of one process, each dialing from its namespace, cross two
	// different links to the same broker address. Not with BrokerPID or
	// Remote.
	Links int
	// TCPCongestion, when not empty, is the TCP congestion control Up sets
	// in the lab's client and broker namespaces (net.ipv4.
	// tcp_congestion_control is per namespace; a new one inherits the
	// host's): one of the kernel's available ones (CheckCongestionControl).
	// Not with BrokerPID or Remote, whose namespaces are not the lab's.
	TCPCongestion string
}

// Addresses inside the lab's own namespaces (never routed anywhere else:
// the namespaces have no other interfaces and no default route). The
// second link (Options.Links) has its own nets: 10.77.3.0/30 between its
// clients and the router, 10.77.4.0/30 between the router and the broker
// side, where the broker keeps its one address (brkAddr) for both.
const (
	cliAddr    = "10.77.1.2/30"
	rtrCliAddr = "10.77.1.1/30"
	rtrBrkAddr = "10.77.2.1/30"
	brkAddr    = "10.77.2.2/30"
	cliNet     = "10.77.1.0/30"
	brkNet     = "10.77.2.0/30"

	cli1Addr    = "10.77.3.2/30"
	rtrCli1Addr = "10.77.3.1/30"
	rtrBrk1Addr = "10.77.4.1/30"
	brk1Addr    = "10.77.4.2/30"
	cli1Net     = "10.77.3.0/30"
	brk1Net     = "10.77.4.0/30"
)

// secondLinkTable is the router's routing table of the second link: what
// enters from its clients leaves towards the broker by its own veth.
const secondLinkTable = 101

// names of everything a lab with a given prefix makes, for one of its
// links: the router and broker namespaces are the lab's, the rest the
// link's own.
type names struct {
	Prefix              string
	NsCli, NsRtr, NsBrk string
	CliIf, BrkIf        string // client and broker ends of the veths
	RtrCliIf, RtrBrkIf  string // router ends: facing the clients, facing the broker
	IFB                 string // half duplex: the shared queue, in the router ns
	Table               string // nftables table (family inet) in the router ns
	// Link is 0 for the lab's first link, 1 for the second; Relay is the
	// id of the link's relay (its socket, log and environment marker).
	Link  int
	Relay string
	// The link's addresses: the clients', the router's on either side,
	// and the broker side's end (CIDR), and the clients' net.
	CliAddr, RtrCliAddr, RtrBrkAddr, BrkEndAddr, CliNet string
}

var prefixRE = regexp.MustCompile(`^[a-z0-9]{1,10}$`)

func namesFor(prefix string) (names, error) {
	if prefix == "" {
		prefix = "pslab"
	}
	if !prefixRE.MatchString(prefix) {
		return names{}, fmt.Errorf("netem: prefix %q must be 1-10 characters a-z0-9 (interface names are limited to 15)", prefix)
	}
	return names{
		Prefix: prefix,
		NsCli:  prefix + "-cli", NsRtr: prefix + "-rtr", NsBrk: prefix + "-brk",
		CliIf: prefix + "-c0", BrkIf: prefix + "-b0",
		RtrCliIf: prefix + "-rc", RtrBrkIf: prefix + "-rb",
		IFB:     prefix + "-ifb",
		Table:   prefix,
		Relay:   prefix,
		CliAddr: cliAddr, RtrCliAddr: rtrCliAddr, RtrBrkAddr: rtrBrkAddr, BrkEndAddr: brkAddr, CliNet: cliNet,
	}, nil
}

// secondNames are the names of the lab's second link (Options.Links): a
// client namespace and veths of its own ("1" after the first link's
// names, 15 characters at most), its own nft table, IFB and relay.
func secondNames(n names) names {
	p := n.Prefix
	return names{
		Prefix: p, NsCli: p + "-cli1", NsRtr: n.NsRtr, NsBrk: n.NsBrk,
		CliIf: p + "-c1", BrkIf: p + "-b1", RtrCliIf: p + "-rc1", RtrBrkIf: p + "-rb1",
		IFB: p + "-ifb1", Table: p + "-1", Link: 1, Relay: p + "-1",
		CliAddr: cli1Addr, RtrCliAddr: rtrCli1Addr, RtrBrkAddr: rtrBrk1Addr, BrkEndAddr: brk1Addr, CliNet: cli1Net,
	}
}

// Lab is one emulated link: three namespaces (or two and another
// process's, see Options.BrokerPID) and the router between them.
// Its methods are safe for concurrent use.
type Lab struct {
	opts   Options
	n      names
	badOpt error

	mu      sync.Mutex
	lock    *os.File // held from Up to Down (see lock.go)
	applied *Profile
	backend Backend
	netemOK *bool      // cached result of probing the kernel for sch_netem
	relay   *relayProc // the relay this Lab started (relay backend)

	// second is the lab's second link (Options.Links 2), a Lab of its own
	// for everything of a link; first is set on it and points back.
	second *Lab
	first  *Lab
}

// New makes a Lab; nothing happens on the system until Up. Bad options
// (see CheckOptions) make every method return that error.
func New(o Options) *Lab {
	n, err := namesFor(o.Prefix)
	if err == nil {
		err = CheckOptions(o)
	}
	o.Prefix = n.Prefix
	l := &Lab{opts: o, n: n, badOpt: err}
	if o.Links == 2 {
		l.second = &Lab{opts: o, n: secondNames(n), badOpt: err, first: l}
	}
	return l
}

// Link returns the lab's link i: 0 is the lab itself (its first link), 1
// the second one (Options.Links 2), nil if there is none. A link's Apply,
// Clear, Counters, Verify, SetFaultLoss, DialContext, ClientIP and the
// like are its own; Up and Down are the lab's, through its first link.
func (l *Lab) Link(i int) *Lab {
	switch {
	case l.first != nil:
		return l.first.Link(i)
	case i == 0:
		return l
	case i == 1:
		return l.second
	}
	return nil
}

// Links is how many links the lab has.
func (l *Lab) Links() int {
	if l.Link(1) != nil {
		return 2
	}
	return 1
}

// CheckOptions reports bad options: a prefix that is not 1-10 characters
// a-z0-9, an unknown backend, or a negative BrokerPID. It does not look at
// the system; CheckBrokerPID does.
func CheckOptions(o Options) error {
	if _, err := namesFor(o.Prefix); err != nil {
		return err
	}
	if o.Backend != "" && o.Backend != BackendNetem && o.Backend != BackendTBFNft && o.Backend != BackendRelay {
		return fmt.Errorf("netem: unknown backend %q (want %q, %q or %q)", o.Backend, BackendRelay, BackendNetem, BackendTBFNft)
	}
	if o.BrokerPID != 0 && len(o.Remote) > 0 {
		return fmt.Errorf("netem: %w: a broker side in pid %d's namespace and brokers on other hosts at once", ErrBadRemote, o.BrokerPID)
	}
	if o.BrokerPID < 0 {
		return fmt.Errorf("netem: %w: %d is not a pid", ErrBadBrokerPID, o.BrokerPID)
	}
	switch {
	case o.Links < 0 || o.Links > 2:
		return fmt.Errorf("netem: %d links: a lab has 1 or 2", o.Links)
	case o.Links == 2 && o.BrokerPID != 0:
		return fmt.Errorf("netem: %w: a second link needs the lab's own broker namespace, not pid %d's", ErrBadBrokerPID, o.BrokerPID)
	case o.Links == 2 && len(o.Remote) > 0:
		return fmt.Errorf("netem: %w: a second link needs the broker in the lab, not on another host", ErrBadRemote)
	}
	if o.TCPCongestion != "" {
		if o.BrokerPID != 0 || len(o.Remote) > 0 {
			return fmt.Errorf("netem: a TCP congestion control (%s) is set only in the lab's own namespaces: the broker side here is another's (set it there)", o.TCPCongestion)
		}
		return CheckCongestionControl(o.TCPCongestion)
	}
	return nil
}

// Prefix is the prefix of everything this lab makes.
func (l *Lab) Prefix() string { return l.n.Prefix }

// ClientIP is the address of the clients' namespace (of this link).
func (l *Lab) ClientIP() string { return ipOf(l.n.CliAddr) }

// BrokerIP is the address of the broker side (in the lab's broker
// namespace, or on the lab's veth in the BrokerPID's namespace).
func (l *Lab) BrokerIP() string { return ipOf(brkAddr) }

// BrokerInterface is the name of the broker side's veth end.
func (l *Lab) BrokerInterface() string { return l.n.BrkIf }

// Namespaces are the names of the client, router and broker namespaces.
// When the broker side is another process's namespace (Options.BrokerPID,
// or such a lab brought up by another process), brk describes it as
// "pid PID net:[INODE]".
func (l *Lab) Namespaces() (cli, rtr, brk string) {
	brk, err := l.brokerNS()
	if err != nil {
		brk = l.n.NsBrk
	}
	return l.n.NsCli, l.n.NsRtr, brk
}

// brokerNS is the namespace of the broker side: the foreign one recorded
// in the lab's state file (by an Up with BrokerPID, in this process or
// another), else the lab's own <prefix>-brk.
func (l *Lab) brokerNS() (string, error) {
	f, ok, err := readBrokerState(l.n.Prefix)
	switch {
	case err != nil:
		return "", err
	case ok && l.opts.BrokerPID != 0 && f.PID != l.opts.BrokerPID:
		return "", fmt.Errorf("netem: lab %s has its broker side in %s, not in pid %d's", l.n.Prefix, f, l.opts.BrokerPID)
	case ok:
		return f.ref(), nil
	case l.opts.BrokerPID != 0:
		return "", fmt.Errorf("netem: lab %s is not up (no broker side in pid %d's network namespace)", l.n.Prefix, l.opts.BrokerPID)
	}
	return l.n.NsBrk, nil
}

func ipOf(cidr string) string {
	a, err := netlink.ParseAddr(cidr)
	if err != nil {
		panic(err)
	}
	return a.IP.String()
}

// Applied returns the profile and backend last applied by this Lab (ok is
// false if none was).
func (l *Lab) Applied() (p Profile, b Backend, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.applied == nil {
		return Profile{}, "", false
	}
	return *l.applied, l.backend, true
}

// ErrNeedRoot is wrapped by Supported when the process cannot make network
// namespaces.
var ErrNeedRoot = errors.New("link emulation needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN) to create network namespaces")

// Supported reports whether this process can run the lab: root, network
// namespaces and netlink inside them. It creates one anonymous namespace
// (gone when the check ends) and touches nothing else.
func Supported() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w; running as uid %d", ErrNeedRoot, os.Geteuid())
	}
	ns, err := newAnonNS()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNeedRoot, err)
	}
	defer ns.Close()
	return inNS(ns, func() error {
		h, err := netlink.NewHandle()
		if err != nil {
			return fmt.Errorf("netlink: %w", err)
		}
		defer h.Close()
		if _, err := h.LinkList(); err != nil {
			return fmt.Errorf("netlink: list links: %w", err)
		}
		return nil
	})
}

// newAnonNS creates an unnamed network namespace and returns a handle to it
// (the namespace lives as long as the handle).
func newAnonNS() (netns.NsHandle, error) {
	ns := netns.None()
	err := onNSThread(func() error {
		var err error
		ns, err = netns.New() // switches this thread into it
		return err
	})
	if err != nil && ns.IsOpen() {
		ns.Close()
		return netns.None(), err
	}
	return ns, err
}

// KernelBackend reports which backend a shaped profile gets on this kernel:
// BackendNetem where sch_netem exists, else BackendTBFNft. It probes in an
// anonymous namespace (gone when the check ends) and touches nothing else.
func KernelBackend() (Backend, error) {
	if err := Supported(); err != nil {
		return "", err
	}
	ns, err := newAnonNS()
	if err != nil {
		return "", err
	}
	defer ns.Close()
	var has bool
	err = inNS(ns, func() error {
		h, err := netlink.NewHandle()
		if err != nil {
			return err
		}
		defer h.Close()
		lo, err := h.LinkByName("lo")
		if err != nil {
			return err
		}
		if err := h.LinkSetUp(lo); err != nil {
			return err
		}
		has, err = kernelHasNetem(h)
		return err
	})
	if err != nil {
		return "", err
	}
	if has {
		return BackendNetem, nil
	}
	return BackendTBFNft, nil
}
