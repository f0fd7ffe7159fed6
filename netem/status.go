package netem

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vishvananda/netlink"
)

// Status describes what the lab has on the system now, read from the
// kernel (it works from any process).
type Status struct {
	Prefix     string
	Namespaces []NamespaceStatus
	Nft        []string  // nft rules of table inet <prefix>, with counters
	Counters   *Counters // nil when the lab is not up
}

// NamespaceStatus is one of the lab's namespaces.
type NamespaceStatus struct {
	Name    string
	Exists  bool
	Foreign bool  // another process's (Options.BrokerPID): only the lab's veth there is pslab's
	Pids    []int // processes inside
	Links   []LinkStatus
}

// LinkStatus is one interface inside a lab namespace.
type LinkStatus struct {
	Name     string
	Kind     string
	State    string
	Addrs    []string
	Offloads string   // "tso off gso off gro off" (veths)
	Qdiscs   []string // human descriptions
	Filters  []string
}

// Status reads the lab's state.
func (l *Lab) Status() (Status, error) {
	if l.badOpt != nil {
		return Status{}, l.badOpt
	}
	s := Status{Prefix: l.n.Prefix}
	_, _, brk := l.Namespaces()
	for _, ns := range []string{l.n.NsCli, l.n.NsRtr, brk} {
		_, foreign := parseForeignRef(ns)
		st := NamespaceStatus{Name: ns, Exists: nsExists(ns), Foreign: foreign}
		if st.Exists {
			st.Pids = pidsInNS(ns)
			links, err := linkStatuses(ns)
			if err != nil {
				return s, err
			}
			st.Links = links
		}
		s.Namespaces = append(s.Namespaces, st)
	}
	if !l.IsUp() {
		return s, nil
	}
	rules, err := readNft(l.n.NsRtr, l.n)
	if err != nil {
		return s, err
	}
	for _, r := range rules {
		s.Nft = append(s.Nft, fmt.Sprintf("%s %s: %s  [counter packets %d bytes %d]", r.Tag, r.Dir, r.Desc, r.Packets, r.Bytes))
	}
	c, err := l.Counters()
	if err != nil {
		return s, err
	}
	s.Counters = &c
	return s, nil
}

func linkStatuses(nsName string) ([]LinkStatus, error) {
	var out []LinkStatus
	err := withHandle(nsName, func(h *netlink.Handle) error {
		links, err := h.LinkList()
		if err != nil {
			return err
		}
		for _, link := range links {
			a := link.Attrs()
			ls := LinkStatus{Name: a.Name, Kind: link.Type(), State: a.OperState.String()}
			addrs, _ := h.AddrList(link, netlink.FAMILY_ALL)
			for _, ad := range addrs {
				ls.Addrs = append(ls.Addrs, ad.IPNet.String())
			}
			qs, _ := h.QdiscList(link)
			for _, q := range qs {
				ls.Qdiscs = append(ls.Qdiscs, describeQdisc(q))
			}
			fs, _ := h.FilterList(link, netlink.HANDLE_MIN_EGRESS)
			for _, f := range fs {
				ls.Filters = append(ls.Filters, describeFilter(h, f))
			}
			out = append(out, ls)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: list links: %w", nsName, err)
	}
	for i := range out {
		if out[i].Kind != "veth" {
			continue
		}
		if st, err := offloadState(nsName, out[i].Name); err == nil {
			keys := make([]string, 0, len(st))
			for k := range st {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var parts []string
			for _, k := range keys {
				parts = append(parts, k+" "+map[bool]string{true: "on", false: "off"}[st[k]])
			}
			out[i].Offloads = strings.Join(parts, " ")
		}
	}
	return out, nil
}

func describeQdisc(q netlink.Qdisc) string {
	a := q.Attrs()
	switch q.Type() {
	case "noqueue":
		return "noqueue (default: no queue, no shaping)"
	case "clsact":
		return "clsact (hook for the egress filter below)"
	}
	s := fmt.Sprintf("%s %s parent %s", q.Type(), netlink.HandleStr(a.Handle), netlink.HandleStr(a.Parent))
	switch q := q.(type) {
	case *netlink.Tbf:
		s += fmt.Sprintf(" rate %g kbit/s burst %d B limit %d B", float64(q.Rate)*8/1000, netlink.Xmitsize(q.Rate, q.Buffer), q.Limit)
	case *netlink.Netem:
		s += fmt.Sprintf(" limit %d pkts loss %.2f %% delay %d us jitter %d us dup %.2f %%",
			q.Limit, u32Pct(q.Loss), q.Latency, q.Jitter, u32Pct(q.Duplicate))
		if q.Rate64 > 0 {
			s += fmt.Sprintf(" rate %g kbit/s", float64(q.Rate64)*8/1000)
		}
	}
	if st := a.Statistics; st != nil && st.Basic != nil && st.Queue != nil {
		s += fmt.Sprintf(" | sent %d B %d pkts, dropped %d, overlimits %d, backlog %d B",
			st.Basic.Bytes, st.Basic.Packets, st.Queue.Drops, st.Queue.Overlimits, st.Queue.Backlog)
	}
	return s
}

func u32Pct(v uint32) float64 { return float64(v) * 100 / float64(^uint32(0)) }

func describeFilter(h *netlink.Handle, f netlink.Filter) string {
	s := fmt.Sprintf("%s egress prio %d", f.Type(), f.Attrs().Priority)
	if u, ok := f.(*netlink.U32); ok {
		for _, act := range u.Actions {
			if m, ok := act.(*netlink.MirredAction); ok {
				target := fmt.Sprint(m.Ifindex)
				if l, err := h.LinkByIndex(m.Ifindex); err == nil {
					target = l.Attrs().Name
				}
				s += " match all -> mirred egress redirect to " + target
			}
		}
	}
	return s
}

// String prints the status for people.
func (s Status) String() string {
	var b strings.Builder
	for _, ns := range s.Namespaces {
		if !ns.Exists {
			fmt.Fprintf(&b, "namespace %s: absent\n", ns.Name)
			continue
		}
		fmt.Fprintf(&b, "namespace %s", ns.Name)
		if ns.Foreign {
			b.WriteString(" (another process's: only the lab's veth there is pslab's)")
		}
		if len(ns.Pids) > 0 {
			fmt.Fprintf(&b, " (processes %v)", ns.Pids)
		}
		b.WriteString("\n")
		for _, l := range ns.Links {
			fmt.Fprintf(&b, "  %s (%s, %s) %s", l.Name, l.Kind, l.State, strings.Join(l.Addrs, " "))
			if l.Offloads != "" {
				fmt.Fprintf(&b, " [%s]", l.Offloads)
			}
			b.WriteString("\n")
			for _, q := range l.Qdiscs {
				fmt.Fprintf(&b, "    qdisc %s\n", q)
			}
			for _, f := range l.Filters {
				fmt.Fprintf(&b, "    filter %s\n", f)
			}
		}
	}
	if len(s.Nft) > 0 {
		fmt.Fprintf(&b, "nftables table inet %s, chain forward (router):\n", s.Prefix)
		for _, r := range s.Nft {
			fmt.Fprintf(&b, "  %s\n", r)
		}
	} else if s.Counters != nil {
		b.WriteString("nftables: no pslab table (no random drop)\n")
	}
	if s.Counters != nil {
		b.WriteString("counters:\n")
		b.WriteString(s.Counters.String())
	}
	return b.String()
}
