package netem

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// rootHandle is the handle of every root qdisc pslab installs (1:0).
var rootHandle = netlink.MakeHandle(1, 0)

// tbfQdisc builds the TBF qdisc object for a plan. The kernel wants the
// bucket as the time to send it at the rate, in psched ticks.
func tbfQdisc(linkIndex int, t tbfPlan) *netlink.Tbf {
	return &netlink.Tbf{
		QdiscAttrs: netlink.QdiscAttrs{LinkIndex: linkIndex, Handle: rootHandle, Parent: netlink.HANDLE_ROOT},
		Rate:       t.RateBytes,
		Limit:      t.LimitBytes,
		Buffer:     netlink.Xmittime(t.RateBytes, t.BurstBytes),
	}
}

// netemQdisc builds the netem qdisc object for a plan.
func netemQdisc(linkIndex int, ne netemPlan) *netlink.Netem {
	return netlink.NewNetem(
		netlink.QdiscAttrs{LinkIndex: linkIndex, Handle: rootHandle, Parent: netlink.HANDLE_ROOT},
		netlink.NetemQdiscAttrs{
			Latency:   ne.DelayUs,
			Jitter:    ne.JitterUs,
			Limit:     ne.LimitPackets,
			Loss:      float32(ne.LossPct),
			LossCorr:  float32(ne.LossCorrelationPct),
			Duplicate: float32(ne.DuplicatePct),
			Rate64:    ne.RateBytes,
		})
}

// clsactQdisc is the clsact qdisc that egress filters hang off.
func clsactQdisc(linkIndex int) *netlink.GenericQdisc {
	return &netlink.GenericQdisc{
		QdiscAttrs: netlink.QdiscAttrs{LinkIndex: linkIndex, Handle: netlink.MakeHandle(0xffff, 0), Parent: netlink.HANDLE_CLSACT},
		QdiscType:  "clsact",
	}
}

// redirectFilter sends every packet leaving linkIndex (all protocols) to
// the IFB: a u32 filter with an all-matching key and a mirred egress
// redirect. The IFB's qdisc then shapes it and hands it back to linkIndex.
func redirectFilter(linkIndex, ifbIndex int) *netlink.U32 {
	return &netlink.U32{
		FilterAttrs: netlink.FilterAttrs{
			LinkIndex: linkIndex,
			Parent:    netlink.HANDLE_MIN_EGRESS,
			Priority:  1,
			Protocol:  unix.ETH_P_ALL,
		},
		Actions: []netlink.Action{netlink.NewMirredAction(ifbIndex)},
	}
}

// installTC puts a config's qdiscs, IFB and redirects on the router.
func installTC(h *netlink.Handle, c config) error {
	ifbIndex := 0
	if c.IFB != "" {
		ifb := &netlink.Ifb{LinkAttrs: netlink.LinkAttrs{Name: c.IFB, TxQLen: 1000}}
		if err := h.LinkAdd(ifb); err != nil {
			return fmt.Errorf("create IFB %s: %w", c.IFB, err)
		}
		if err := linkUp(h, c.IFB); err != nil {
			return err
		}
		l, err := h.LinkByName(c.IFB)
		if err != nil {
			return err
		}
		ifbIndex = l.Attrs().Index
	}
	for _, s := range c.Shapers {
		link, err := h.LinkByName(s.Dev)
		if err != nil {
			return fmt.Errorf("find %s: %w", s.Dev, err)
		}
		var q netlink.Qdisc
		switch {
		case s.TBF != nil:
			q = tbfQdisc(link.Attrs().Index, *s.TBF)
		case s.Netem != nil:
			q = netemQdisc(link.Attrs().Index, *s.Netem)
		}
		if err := h.QdiscReplace(q); err != nil {
			return fmt.Errorf("%s qdisc on %s: %w", q.Type(), s.Dev, qdiscErr(q.Type(), err))
		}
	}
	for _, dev := range c.Redirect {
		link, err := h.LinkByName(dev)
		if err != nil {
			return fmt.Errorf("find %s: %w", dev, err)
		}
		if err := h.QdiscReplace(clsactQdisc(link.Attrs().Index)); err != nil {
			return fmt.Errorf("clsact qdisc on %s: %w", dev, qdiscErr("clsact", err))
		}
		if err := h.FilterAdd(redirectFilter(link.Attrs().Index, ifbIndex)); err != nil {
			return fmt.Errorf("u32+mirred redirect %s -> %s: %w", dev, c.IFB, err)
		}
	}
	return nil
}

// qdiscErr explains the kernel's ENOENT for an unknown qdisc kind.
func qdiscErr(kind string, err error) error {
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EOPNOTSUPP) {
		return fmt.Errorf("%w (this kernel has no %s qdisc: sch_%s is not built in or loadable)", err, kind, kind)
	}
	return err
}

// clearTC removes everything installTC may have put on the router: root
// and clsact qdiscs of the router's veths (they fall back to the default
// noqueue) and the IFB device. Missing pieces are not an error.
func clearTC(h *netlink.Handle, n names) error {
	var errs []error
	for _, dev := range []string{n.RtrCliIf, n.RtrBrkIf} {
		link, err := h.LinkByName(dev)
		if err != nil {
			errs = append(errs, fmt.Errorf("find %s: %w", dev, err))
			continue
		}
		qs, err := h.QdiscList(link)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, q := range qs {
			a := q.Attrs()
			if (a.Parent == netlink.HANDLE_ROOT && q.Type() != "noqueue") || q.Type() == "clsact" {
				if err := h.QdiscDel(q); err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EINVAL) {
					errs = append(errs, fmt.Errorf("delete %s qdisc on %s: %w", q.Type(), dev, err))
				}
			}
		}
	}
	if ifb, err := h.LinkByName(n.IFB); err == nil {
		if err := h.LinkDel(ifb); err != nil {
			errs = append(errs, fmt.Errorf("delete IFB %s: %w", n.IFB, err))
		}
	}
	return errors.Join(errs...)
}

// kernelHasNetem tries to put a netem qdisc on the router's loopback (the
// lab's own) and removes it again: the only sure test for sch_netem.
func kernelHasNetem(h *netlink.Handle) (bool, error) {
	lo, err := h.LinkByName("lo")
	if err != nil {
		return false, err
	}
	q := netemQdisc(lo.Attrs().Index, netemPlan{LimitPackets: 1000})
	if err := h.QdiscAdd(q); err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EOPNOTSUPP) {
			return false, nil
		}
		return false, fmt.Errorf("probe for netem qdisc: %w", err)
	}
	if err := h.QdiscDel(q); err != nil {
		return true, fmt.Errorf("remove netem probe qdisc: %w", err)
	}
	return true, nil
}
