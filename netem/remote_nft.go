package netem

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"github.com/google/nftables/userdata"
)

// The host's nft table for brokers on other hosts (see remote.go):
//
//	table ip <prefix>-uplink {
//	  chain forward { type filter hook forward priority 0; policy accept;
//	    iifname <prefix>-b0 ip saddr 10.77.1.2 ip daddr R counter accept   # per remote R, "pslab-uplink to-broker R"
//	    oifname <prefix>-b0 ct state established,related counter accept    # "pslab-uplink to-client"
//	    iifname <prefix>-b0 counter drop; oifname <prefix>-b0 counter drop # "pslab-uplink refused"
//	    iifname U counter drop  # per uplink U whose forwarding pslab switched on: it forwards nothing else
//	  }
//	  chain postrouting { type nat hook postrouting priority srcnat;
//	    ip saddr 10.77.1.2 oifname U masquerade                             # per uplink U
//	  }
//	}

const (
	uplinkTag        = "pslab-uplink"
	uplinkToBroker   = "to-broker"
	uplinkToClient   = "to-client"
	uplinkRefused    = "refused"
	uplinkNotForward = "not-forwarding"
)

func uplinkTable(n names) string { return n.Prefix + "-uplink" }

func uplinkNftTable(n names) *nftables.Table {
	return &nftables.Table{Family: nftables.TableFamilyIPv4, Name: uplinkTable(n)}
}

func uplinkChains(t *nftables.Table) (fwd, nat *nftables.Chain) {
	accept := nftables.ChainPolicyAccept
	fwd = &nftables.Chain{Name: "forward", Table: t, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookForward, Priority: nftables.ChainPriorityFilter, Policy: &accept}
	nat = &nftables.Chain{Name: "postrouting", Table: t, Type: nftables.ChainTypeNAT,
		Hooknum: nftables.ChainHookPostrouting, Priority: nftables.ChainPriorityNATSource, Policy: &accept}
	return fwd, nat
}

func matchOIF(name string) []expr.Any {
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyOIFNAME, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: ifnameData(name)},
	}
}

// matchIPv4 compares the source (offset 12) or destination (16) address.
func matchIPv4(offset uint32, a netip.Addr) []expr.Any {
	b := a.As4()
	return []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: offset, Len: 4},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: b[:]},
	}
}

func matchEstablished() []expr.Any {
	return []expr.Any{
		&expr.Ct{Register: 1, Key: expr.CtKeySTATE},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4,
			Mask: binaryutil.NativeEndian.PutUint32(expr.CtStateBitESTABLISHED | expr.CtStateBitRELATED),
			Xor:  binaryutil.NativeEndian.PutUint32(0)},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: binaryutil.NativeEndian.PutUint32(0)},
	}
}

func counted(v expr.VerdictKind, e ...[]expr.Any) []expr.Any {
	var out []expr.Any
	for _, x := range e {
		out = append(out, x...)
	}
	return append(out, &expr.Counter{}, &expr.Verdict{Kind: v})
}

func uplinkComment(what, detail string) []byte {
	return userdata.AppendString(nil, userdata.TypeComment, uplinkTag+" "+what+" "+detail)
}

// installUplinkNft creates the host's uplink table (see above).
func installUplinkNft(nsName string, n names, st uplinkState) error {
	cli := netip.MustParseAddr(ipOf(cliAddr))
	return withNft(nsName, func(conn *nftables.Conn) error {
		t := conn.AddTable(uplinkNftTable(n))
		fwd, nat := uplinkChains(t)
		conn.AddChain(fwd)
		conn.AddChain(nat)
		add := func(ch *nftables.Chain, what, detail string, e []expr.Any) {
			conn.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: e, UserData: uplinkComment(what, detail)})
		}
		for _, r := range st.Remote {
			add(fwd, uplinkToBroker, r.String(), counted(expr.VerdictAccept, matchIIF(n.BrkIf), matchIPv4(12, cli), matchIPv4(16, r)))
		}
		add(fwd, uplinkToClient, "established", counted(expr.VerdictAccept, matchOIF(n.BrkIf), matchEstablished()))
		add(fwd, uplinkRefused, "from-lab", counted(expr.VerdictDrop, matchIIF(n.BrkIf)))
		add(fwd, uplinkRefused, "to-lab", counted(expr.VerdictDrop, matchOIF(n.BrkIf)))
		for _, ifc := range st.Ifaces {
			if ifc.Forwarding == "0" {
				add(fwd, uplinkNotForward, ifc.Name, counted(expr.VerdictDrop, matchIIF(ifc.Name)))
			}
			add(nat, "masquerade", ifc.Name, append(append(matchIPv4(12, cli), matchOIF(ifc.Name)...), &expr.Counter{}, &expr.Masq{}))
		}
		if err := conn.Flush(); err != nil {
			return fmt.Errorf("nftables: install table ip %s on this host: %w (needs nf_tables with nat and masquerade)", uplinkTable(n), err)
		}
		return nil
	})
}

// deleteUplinkNft deletes the table if it exists, and says whether it did.
func deleteUplinkNft(nsName string, n names) (bool, error) {
	var gone bool
	err := withNft(nsName, func(conn *nftables.Conn) error {
		ts, err := conn.ListTablesOfFamily(nftables.TableFamilyIPv4)
		if err != nil {
			return fmt.Errorf("nftables: list tables: %w", err)
		}
		for _, t := range ts {
			if t.Name == uplinkTable(n) {
				conn.DelTable(uplinkNftTable(n))
				if err := conn.Flush(); err != nil {
					return fmt.Errorf("nftables: delete table ip %s: %w", uplinkTable(n), err)
				}
				gone = true
			}
		}
		return nil
	})
	return gone, err
}

// UplinkCounters reads the host's uplink rules' counters (ok is false when
// the lab forwards to no remote broker).
func (l *Lab) UplinkCounters() (c UplinkCounters, ok bool, err error) {
	if _, ok, err := readUplinkState(l.n.Prefix); err != nil || !ok {
		return c, false, err
	}
	host, err := hostNS()
	if err != nil {
		return c, false, err
	}
	err = withNft(host.ref(), func(conn *nftables.Conn) error {
		t := uplinkNftTable(l.n)
		fwd, _ := uplinkChains(t)
		rules, err := conn.GetRules(t, fwd)
		if err != nil {
			return fmt.Errorf("nftables: read table ip %s: %w", uplinkTable(l.n), err)
		}
		for _, r := range rules {
			comment, _ := userdata.GetString(r.UserData, userdata.TypeComment)
			f := strings.Fields(comment)
			if len(f) < 2 || f[0] != uplinkTag {
				continue
			}
			var pk uint64
			for _, e := range r.Exprs {
				if x, ok := e.(*expr.Counter); ok {
					pk = x.Packets
				}
			}
			switch f[1] {
			case uplinkToBroker:
				c.ToBroker += pk
			case uplinkToClient:
				c.ToClient += pk
			case uplinkRefused:
				c.Refused += pk
			}
		}
		return nil
	})
	return c, err == nil, err
}

// uplinkState is the record /run/pslab-<prefix>.uplink: the remote
// addresses, and each uplink interface with its forwarding setting before
// the lab changed it.
type uplinkState struct {
	Remote []netip.Addr
	Ifaces []uplinkIface
}

type uplinkIface struct{ Name, Forwarding string }

func uplinkStatePath(prefix string) string { return "/run/pslab-" + prefix + ".uplink" }

func writeUplinkState(prefix string, st uplinkState) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# pslab netem lab %s: this host forwards the lab's clients to brokers on other hosts\n", prefix)
	for _, r := range st.Remote {
		fmt.Fprintf(&b, "remote %s\n", r)
	}
	for _, i := range st.Ifaces {
		fmt.Fprintf(&b, "uplink %s forwarding-before %s\n", i.Name, i.Forwarding)
	}
	p := uplinkStatePath(prefix)
	if err := os.WriteFile(p+".tmp", []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("netem: record the uplink: %w", err)
	}
	if err := os.Rename(p+".tmp", p); err != nil {
		os.Remove(p + ".tmp")
		return fmt.Errorf("netem: record the uplink: %w", err)
	}
	return nil
}

func readUplinkState(prefix string) (st uplinkState, ok bool, err error) {
	p := uplinkStatePath(prefix)
	raw, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return st, false, nil
	}
	if err != nil {
		return st, false, fmt.Errorf("netem: %w", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "remote":
			a, err := netip.ParseAddr(f[1])
			if err != nil {
				return st, false, fmt.Errorf("netem: %s: %w", p, err)
			}
			st.Remote = append(st.Remote, a)
		case len(f) == 4 && f[0] == "uplink" && f[2] == "forwarding-before" && (f[3] == "0" || f[3] == "1"):
			st.Ifaces = append(st.Ifaces, uplinkIface{Name: f[1], Forwarding: f[3]})
		case len(f) == 0 || strings.HasPrefix(f[0], "#"):
		default:
			return st, false, fmt.Errorf("netem: %s: line %q is not a pslab uplink record; check it and remove it", p, line)
		}
	}
	return st, true, nil
}
