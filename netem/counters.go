package netem

import (
	"fmt"

	"github.com/vishvananda/netlink"
)

// Counters reads the router's counters now. It reads what is installed in
// the kernel, so it also works in a process other than the one that
// applied the profile.
func (l *Lab) Counters() (Counters, error) {
	if l.badOpt != nil {
		return Counters{}, l.badOpt
	}
	var c Counters
	err := withHandle(l.n.NsRtr, func(h *netlink.Handle) error {
		for _, x := range []struct {
			dev string
			d   *DirCounters
		}{{l.n.RtrBrkIf, &c.ToBroker}, {l.n.RtrCliIf, &c.ToClient}} {
			link, err := h.LinkByName(x.dev)
			if err != nil {
				return fmt.Errorf("find %s: %w", x.dev, err)
			}
			if st := link.Attrs().Statistics; st != nil {
				x.d.TxPackets, x.d.TxBytes = st.TxPackets, st.TxBytes
			}
			if x.d.Qdisc, err = rootQdiscCounters(h, link); err != nil {
				return err
			}
		}
		if ifb, err := h.LinkByName(l.n.IFB); err == nil {
			if c.Shared, err = rootQdiscCounters(h, ifb); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Counters{}, fmt.Errorf("netem: counters: %w", err)
	}
	rules, err := readNft(l.n.NsRtr, l.n)
	if err != nil {
		return Counters{}, fmt.Errorf("netem: counters: %w", err)
	}
	for _, r := range rules {
		d := &c.ToBroker
		if r.Dir == ToClient {
			d = &c.ToClient
		}
		switch r.Tag {
		case seenTag:
			d.NftSeen += r.Packets
		case dropTag:
			d.NftDrops += r.Packets
		case faultTag:
			d.NftFaultDrops += r.Packets
		}
	}
	if u, ok, err := l.UplinkCounters(); err != nil {
		return Counters{}, fmt.Errorf("netem: counters: %w", err)
	} else if ok {
		c.Uplink = &u
	}
	return c, nil
}

// rootQdiscCounters returns the root qdisc's statistics of a link, or zero
// when it has only the default noqueue.
func rootQdiscCounters(h *netlink.Handle, link netlink.Link) (QdiscCounters, error) {
	qs, err := h.QdiscList(link)
	if err != nil {
		return QdiscCounters{}, fmt.Errorf("qdiscs of %s: %w", link.Attrs().Name, err)
	}
	for _, q := range qs {
		a := q.Attrs()
		if a.Parent != netlink.HANDLE_ROOT || q.Type() == "noqueue" {
			continue
		}
		qc := QdiscCounters{Kind: q.Type()}
		if st := a.Statistics; st != nil {
			if st.Basic != nil {
				qc.Bytes, qc.Packets = st.Basic.Bytes, uint64(st.Basic.Packets)
			}
			if st.Queue != nil {
				qc.Drops, qc.Overlimits, qc.Backlog = uint64(st.Queue.Drops), uint64(st.Queue.Overlimits), uint64(st.Queue.Backlog)
			}
		}
		return qc, nil
	}
	return QdiscCounters{}, nil
}
