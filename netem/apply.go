package netem

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"
)

// Apply (re)configures the link for p, replacing whatever was on it. An
// unshaped profile (wireline) leaves plain forwarding and returns
// BackendNone. Otherwise the backend is the forced one (Options.Backend) or,
// by default, netem where the kernel has sch_netem (found by trying) and
// tbf+nftables elsewhere. A profile the backend cannot do is refused with an
// error wrapping ErrUnsupported, and the link is then left unshaped.
func (l *Lab) Apply(p Profile) (Backend, error) {
	if l.badOpt != nil {
		return "", l.badOpt
	}
	if err := p.Validate(); err != nil {
		return "", err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.IsUp() {
		return "", fmt.Errorf("netem: lab %s is not up", l.n.Prefix)
	}
	b := BackendNone
	if p.Shaped() {
		var err error
		if b, err = l.chooseBackend(p); err != nil {
			return "", err
		}
	}
	c, err := buildConfig(p, b, l.n)
	if err != nil {
		// Refused before anything changed; still clear the old shaping
		// so a failed Apply never leaves a previous profile in force.
		return "", errors.Join(err, l.clearToUnshaped())
	}
	if err := l.clearToUnshaped(); err != nil {
		return "", err
	}
	if err := l.install(c); err != nil {
		return "", errors.Join(fmt.Errorf("netem: apply %s with %s: %w", p.Name, b, err), l.clearToUnshaped())
	}
	pp := p
	l.applied, l.backend = &pp, b
	return b, nil
}

// Clear lifts every shaping from the link (plain forwarding), as Apply of
// an unshaped profile does; Apply puts a profile back. Established
// connections keep going across both.
func (l *Lab) Clear() error {
	if l.badOpt != nil {
		return l.badOpt
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.IsUp() {
		return fmt.Errorf("netem: lab %s is not up", l.n.Prefix)
	}
	return l.clearToUnshaped()
}

func (l *Lab) install(c config) error {
	switch c.Backend {
	case BackendNone:
		return nil
	case BackendRelay:
		return l.startRelay(*c.Relay)
	}
	if err := withHandle(l.n.NsRtr, func(h *netlink.Handle) error { return installTC(h, c) }); err != nil {
		return err
	}
	if c.Backend == BackendTBFNft {
		return installNft(l.n.NsRtr, c, l.n)
	}
	return nil
}

// clearToUnshaped removes all shaping from the router (qdiscs, IFB, nft
// table) and records the link as unshaped (l.mu held).
func (l *Lab) clearToUnshaped() error {
	l.applied, l.backend = nil, ""
	err := l.stopRelay()
	err = errors.Join(err, withHandle(l.n.NsRtr, func(h *netlink.Handle) error { return clearTC(h, l.n) }))
	if err = errors.Join(err, clearNft(l.n.NsRtr, l.n)); err == nil {
		l.applied, l.backend = &unshaped, BackendNone
	}
	return err
}

// unshaped is what the link is after Up or a clear: plain forwarding.
var unshaped = Profile{Name: "unshaped", Duplex: DuplexFull}

// chooseBackend picks the backend for a shaped profile (l.mu held): the
// one Options.Backend forces, else the profile's backend key, else auto:
// a profile of rate and independent loss alone goes to the kernel (netem
// where the kernel has sch_netem, tbf+nftables elsewhere: wifi-paper stays
// on TBF and nftables); a profile with delay, jitter, duplication or loss
// correlation goes to netem where the kernel has it and netem does it as
// the profile says (jitter reordering packets, reorder: true); everything
// else (Gilbert-Elliott loss, traces, outages, 802.11, queues in packets,
// jitter in order, and delay on a kernel without netem) to the relay.
func (l *Lab) chooseBackend(p Profile) (Backend, error) {
	return backendFor(l.opts.Backend, p, l.kernelNetem)
}

// backendFor is chooseBackend's decision for a lab asking for backend
// want ("" for the profile's own or automatic); hasNetem says whether the
// kernel has sch_netem (asked only when the decision needs it).
func backendFor(want Backend, p Profile, hasNetem func() (bool, error)) (Backend, error) {
	if want == "" && p.Backend != "auto" {
		want = Backend(p.Backend)
	}
	switch want {
	case BackendRelay, BackendTBFNft:
		return want, nil
	}
	has, err := hasNetem()
	if err != nil {
		return "", err
	}
	switch {
	case want == BackendNetem && !has:
		return "", fmt.Errorf("%w: backend netem was asked for, but this kernel has no netem qdisc (sch_netem, CONFIG_NET_SCH_NETEM)", ErrUnsupported)
	case want == BackendNetem:
		return BackendNetem, nil
	case !kernelCanRun(p):
		return BackendRelay, nil
	case has:
		return BackendNetem, nil
	case len(p.NeedsNetem()) == 0:
		return BackendTBFNft, nil
	}
	return BackendRelay, nil
}

// kernelNetem probes (once) whether the kernel has sch_netem (l.mu held).
func (l *Lab) kernelNetem() (bool, error) {
	if l.netemOK == nil {
		var ok bool
		err := withHandle(l.n.NsRtr, func(h *netlink.Handle) error {
			var err error
			ok, err = kernelHasNetem(h)
			return err
		})
		if err != nil {
			return false, err
		}
		l.netemOK = &ok
	}
	return *l.netemOK, nil
}
