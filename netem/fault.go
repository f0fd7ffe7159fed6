package netem

import (
	"fmt"
	"math"
	"strings"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/google/nftables/userdata"
)

// faultTag marks the rules of a fault (SetFaultLoss): an outage or a loss
// step laid over the applied profile for a while.
const faultTag = "pslab-fault"

// SetFaultLoss makes the link lose totalPct % of the packets of each
// direction until ClearFault (or the next SetFaultLoss, Apply or Down):
// 100 is an outage, the mobile host out of range. It works the same on
// every backend and on an unshaped link: an extra nftables random drop in
// the router's forward chain, after the profile's own loss, sized so that
// the two together lose totalPct (extra = 1 - (1-total)/(1-profile)). The
// rules count their drops (Counters: NftFaultDrops). It returns the extra
// drop percentage installed.
func (l *Lab) SetFaultLoss(totalPct float64) (extraPct float64, err error) {
	if l.badOpt != nil {
		return 0, l.badOpt
	}
	if !(totalPct > 0 && totalPct <= 100) {
		return 0, fmt.Errorf("netem: fault loss %g %% must be in (0, 100]", totalPct)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.IsUp() {
		return 0, fmt.Errorf("netem: lab %s is not up", l.n.Prefix)
	}
	base := 0.0
	if l.applied != nil {
		base = l.applied.LossPct
		if l.backend == BackendRelay && l.applied.WifiPhyKbit == 0 {
			base = MeanLossPct(*l.applied)
		} else if l.backend == BackendRelay {
			base = 0 // 802.11: the loss model is per attempt; IP sees little of it
		}
	}
	extraPct = faultExtraPct(base, totalPct)
	if extraPct <= 0 {
		return 0, fmt.Errorf("netem: fault loss %g %% is not above the profile's own %g %%", totalPct, base)
	}
	if l.backend == BackendRelay {
		// The relay's packets never reach the router's forward chain: the
		// relay drops them itself (counted as drop_fault).
		st, _, err := queryRelay(l.n.Relay, relayRequest{Op: "fault", Pct: extraPct})
		if err == nil && l.relay != nil {
			l.relay.fault = [2]uint64{st.Counters[0].DropFault, st.Counters[1].DropFault}
		}
		return extraPct, err
	}
	err = withNft(l.n.NsRtr, func(conn *nftables.Conn) error {
		t := conn.AddTable(nftTable(l.n))
		ch := conn.AddChain(nftChain(t))
		if err := delFaultRules(conn, t, ch, true, nil); err != nil {
			return err
		}
		for _, r := range dropRules(l.n, extraPct) {
			desc := fmt.Sprintf("iifname %s numgen random mod %d < %d drop (fault, %.2f %% extra, %g %% total)", r.InIf, lossModulus, r.Threshold, r.Pct, totalPct)
			conn.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: dropRuleExprs(r), UserData: ruleComment(faultTag, r.Dir, desc)})
		}
		if err := conn.Flush(); err != nil {
			return fmt.Errorf("nftables: install fault rules in %s: %w", l.n.NsRtr, err)
		}
		return nil
	})
	return extraPct, err
}

// FaultDrops are the packets a fault dropped, per direction.
type FaultDrops struct {
	ToBroker uint64 `json:"to_broker"`
	ToClient uint64 `json:"to_client"`
}

// ClearFault removes the fault rules, returning what they dropped; the
// applied profile stays in force.
func (l *Lab) ClearFault() (FaultDrops, error) {
	if l.badOpt != nil {
		return FaultDrops{}, l.badOpt
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var fd FaultDrops
	if l.backend == BackendRelay {
		st, _, err := queryRelay(l.n.Relay, relayRequest{Op: "fault", Pct: 0})
		if err == nil && l.relay != nil {
			fd.ToBroker = st.Counters[0].DropFault - l.relay.fault[0]
			fd.ToClient = st.Counters[1].DropFault - l.relay.fault[1]
		}
		return fd, err
	}
	err := withNft(l.n.NsRtr, func(conn *nftables.Conn) error {
		if !nftTableExists(conn, l.n) {
			return nil
		}
		t := nftTable(l.n)
		if err := delFaultRules(conn, t, nftChain(t), false, &fd); err != nil {
			return err
		}
		if err := conn.Flush(); err != nil {
			return fmt.Errorf("nftables: remove fault rules in %s: %w", l.n.NsRtr, err)
		}
		return nil
	})
	return fd, err
}

// delFaultRules queues the deletion of every fault rule in the chain,
// adding their drop counters to fd (if not nil). A chain just queued for
// creation (fresh) may not exist yet: nothing to read.
func delFaultRules(conn *nftables.Conn, t *nftables.Table, ch *nftables.Chain, fresh bool, fd *FaultDrops) error {
	rules, err := conn.GetRules(t, ch)
	if err != nil {
		if fresh {
			return nil
		}
		return fmt.Errorf("nftables: read rules: %w", err)
	}
	for _, r := range rules {
		comment, _ := userdata.GetString(r.UserData, userdata.TypeComment)
		if strings.HasPrefix(comment, faultTag+" ") {
			if fd != nil {
				n := ruleCounter(r)
				if strings.HasPrefix(comment, faultTag+" "+string(ToClient)) {
					fd.ToClient += n
				} else {
					fd.ToBroker += n
				}
			}
			if err := conn.DelRule(r); err != nil {
				return fmt.Errorf("nftables: delete fault rule: %w", err)
			}
		}
	}
	return nil
}

// faultExtraPct is the extra independent drop that brings a link losing
// basePct to totalPct: 1 - (1-total)/(1-base), in percent.
func faultExtraPct(basePct, totalPct float64) float64 {
	if totalPct >= 100 {
		return 100
	}
	if basePct >= 100 {
		return 0
	}
	x := 100 * (1 - (1-totalPct/100)/(1-basePct/100))
	return math.Round(x*100) / 100
}

// ruleCounter is the packet count of a rule's counter expression.
func ruleCounter(r *nftables.Rule) uint64 {
	for _, e := range r.Exprs {
		if c, ok := e.(*expr.Counter); ok {
			return c.Packets
		}
	}
	return 0
}
