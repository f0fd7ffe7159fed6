package netem

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/google/nftables/userdata"
	"golang.org/x/sys/unix"
)

// Rule comments (nft userdata) mark what each rule is, so counters can be
// read back by a later process (pslab netem show) too.
const (
	seenTag = "pslab-seen" // counts every packet of a direction entering the router
	dropTag = "pslab-drop" // the random drop of a direction
)

func nftTable(n names) *nftables.Table {
	return &nftables.Table{Family: nftables.TableFamilyINet, Name: n.Table}
}

func nftChain(t *nftables.Table) *nftables.Chain {
	accept := nftables.ChainPolicyAccept
	return &nftables.Chain{
		Name:     "forward",
		Table:    t,
		Type:     nftables.ChainTypeFilter,
		Hooknum:  nftables.ChainHookForward,
		Priority: nftables.ChainPriorityFilter,
		Policy:   &accept,
	}
}

// ifnameData is an interface name as nft compares it: IFNAMSIZ bytes,
// zero-padded (an exact match, not a prefix).
func ifnameData(name string) []byte {
	b := make([]byte, unix.IFNAMSIZ)
	copy(b, name)
	return b
}

func matchIIF(name string) []expr.Any {
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyIIFNAME, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: ifnameData(name)},
	}
}

// seenRuleExprs: iifname X counter (no verdict: every packet of the
// direction is counted, forwarded or not).
func seenRuleExprs(inIf string) []expr.Any {
	return append(matchIIF(inIf), &expr.Counter{})
}

// dropRuleExprs: iifname X numgen random mod 10000 < threshold counter drop.
// numgen leaves its number in the register in host byte order, but cmp
// compares registers as big-endian byte strings (memcmp), so the number is
// converted to network order first and the threshold is given big-endian,
// which is what nft itself generates for "numgen random mod 10000 < 300".
func dropRuleExprs(r dropRule) []expr.Any {
	th := make([]byte, 4)
	binary.BigEndian.PutUint32(th, r.Threshold)
	return append(matchIIF(r.InIf),
		&expr.Numgen{Register: 1, Modulus: lossModulus, Type: unix.NFT_NG_RANDOM},
		&expr.Byteorder{SourceRegister: 1, DestRegister: 1, Op: expr.ByteorderHton, Len: 4, Size: 4},
		&expr.Cmp{Op: expr.CmpOpLt, Register: 1, Data: th},
		&expr.Counter{},
		&expr.Verdict{Kind: expr.VerdictDrop},
	)
}

func ruleComment(tag string, d Direction, extra string) []byte {
	s := tag + " " + string(d)
	if extra != "" {
		s += " " + extra
	}
	return userdata.AppendString(nil, userdata.TypeComment, s)
}

// nftRules lists the rules for a config: a seen counter per direction,
// then the direction's drop rule when the profile loses packets.
func nftRules(c config, n names, t *nftables.Table, ch *nftables.Chain) []*nftables.Rule {
	var rules []*nftables.Rule
	for _, d := range []struct {
		dir  Direction
		inIf string
	}{{ToBroker, n.RtrCliIf}, {ToClient, n.RtrBrkIf}} {
		rules = append(rules, &nftables.Rule{Table: t, Chain: ch, Exprs: seenRuleExprs(d.inIf),
			UserData: ruleComment(seenTag, d.dir, "iifname "+d.inIf)})
		for _, r := range c.Drops {
			if r.Dir == d.dir {
				desc := fmt.Sprintf("iifname %s numgen random mod %d < %d drop (%.2f %%)", r.InIf, lossModulus, r.Threshold, r.Pct)
				rules = append(rules, &nftables.Rule{Table: t, Chain: ch, Exprs: dropRuleExprs(r),
					UserData: ruleComment(dropTag, d.dir, desc)})
			}
		}
	}
	return rules
}

// withNft runs fn with an nftables connection into the named namespace.
func withNft(nsName string, fn func(c *nftables.Conn) error) error {
	ns, err := openNS(nsName)
	if err != nil {
		return err
	}
	defer ns.Close()
	c, err := nftables.New(nftables.WithNetNSFd(int(ns)))
	if err != nil {
		return fmt.Errorf("nftables in %s: %w", nsName, err)
	}
	return fn(c)
}

// installNft creates table inet <prefix> with the forward chain and rules.
func installNft(nsName string, c config, n names) error {
	return withNft(nsName, func(conn *nftables.Conn) error {
		t := conn.AddTable(nftTable(n))
		ch := conn.AddChain(nftChain(t))
		for _, r := range nftRules(c, n, t, ch) {
			conn.AddRule(r)
		}
		if err := conn.Flush(); err != nil {
			return fmt.Errorf("nftables: install table inet %s in %s: %w (needs nf_tables with numgen)", n.Table, nsName, err)
		}
		return nil
	})
}

// clearNft deletes table inet <prefix> if it exists.
func clearNft(nsName string, n names) error {
	return withNft(nsName, func(conn *nftables.Conn) error {
		if !nftTableExists(conn, n) {
			return nil
		}
		conn.DelTable(nftTable(n))
		if err := conn.Flush(); err != nil {
			return fmt.Errorf("nftables: delete table inet %s: %w", n.Table, err)
		}
		return nil
	})
}

func nftTableExists(conn *nftables.Conn, n names) bool {
	ts, err := conn.ListTablesOfFamily(nftables.TableFamilyINet)
	if err != nil {
		return false
	}
	for _, t := range ts {
		if t.Name == n.Table {
			return true
		}
	}
	return false
}

// nftRuleInfo is one rule's comment and counter, read back from the kernel.
type nftRuleInfo struct {
	Tag     string
	Dir     Direction
	Desc    string
	Packets uint64
	Bytes   uint64
}

// readNft reads the lab's rules and their counters (none if no table).
func readNft(nsName string, n names) ([]nftRuleInfo, error) {
	var out []nftRuleInfo
	err := withNft(nsName, func(conn *nftables.Conn) error {
		if !nftTableExists(conn, n) {
			return nil
		}
		t := nftTable(n)
		rules, err := conn.GetRules(t, nftChain(t))
		if err != nil {
			return fmt.Errorf("nftables: read rules: %w", err)
		}
		for _, r := range rules {
			comment, _ := userdata.GetString(r.UserData, userdata.TypeComment)
			f := strings.SplitN(comment, " ", 3)
			if len(f) < 2 {
				continue
			}
			info := nftRuleInfo{Tag: f[0], Dir: Direction(f[1])}
			if len(f) == 3 {
				info.Desc = f[2]
			}
			for _, e := range r.Exprs {
				if c, ok := e.(*expr.Counter); ok {
					info.Packets, info.Bytes = c.Packets, c.Bytes
				}
			}
			out = append(out, info)
		}
		return nil
	})
	return out, err
}
