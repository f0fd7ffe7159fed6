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
		if b, err = l.chooseBackend(); err != nil {
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
	if c.Backend == BackendNone {
		return nil
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
	err := withHandle(l.n.NsRtr, func(h *netlink.Handle) error { return clearTC(h, l.n) })
	if err = errors.Join(err, clearNft(l.n.NsRtr, l.n)); err == nil {
		l.applied, l.backend = &unshaped, BackendNone
	}
	return err
}

// unshaped is what the link is after Up or a clear: plain forwarding.
var unshaped = Profile{Name: "unshaped", Duplex: DuplexFull}

// chooseBackend picks the backend for a shaped profile (l.mu held).
func (l *Lab) chooseBackend() (Backend, error) {
	if l.opts.Backend == BackendTBFNft {
		return BackendTBFNft, nil
	}
	if l.netemOK == nil {
		var ok bool
		err := withHandle(l.n.NsRtr, func(h *netlink.Handle) error {
			var err error
			ok, err = kernelHasNetem(h)
			return err
		})
		if err != nil {
			return "", err
		}
		l.netemOK = &ok
	}
	switch {
	case *l.netemOK:
		return BackendNetem, nil
	case l.opts.Backend == BackendNetem:
		return "", fmt.Errorf("%w: backend netem was asked for, but this kernel has no netem qdisc (sch_netem, CONFIG_NET_SCH_NETEM)", ErrUnsupported)
	}
	return BackendTBFNft, nil
}
