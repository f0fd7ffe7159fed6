package linkinfo

import (
	"fmt"
)

// QdiscCounters are a qdisc's statistics (zero Kind: no qdisc of pslab's).
type QdiscCounters struct {
	Kind       string `json:"kind,omitempty"`
	Bytes      uint64 `json:"bytes"`   // sent
	Packets    uint64 `json:"packets"` // sent
	Drops      uint64 `json:"drops"`   // tail drops, and netem's random loss
	Overlimits uint64 `json:"overlimits"`
	Backlog    uint64 `json:"backlog_bytes"` // queued now (not a counter)
}

// DirCounters are the router's counters for one direction.
type DirCounters struct {
	// Qdisc is the root qdisc on the direction's egress veth (full duplex;
	// in half duplex the shaping qdisc is Counters.Shared).
	Qdisc QdiscCounters `json:"qdisc"`
	// TxPackets/TxBytes: what the router sent out of the direction's egress
	// veth (after shaping and drops): the forwarded traffic.
	TxPackets uint64 `json:"tx_packets"`
	TxBytes   uint64 `json:"tx_bytes"`
	// NftSeen counts every packet of the direction entering the router,
	// NftDrops the ones the random-drop rule dropped (tbf+nftables only).
	NftSeen  uint64 `json:"nft_seen"`
	NftDrops uint64 `json:"nft_drops"`
	// NftFaultDrops counts the drops of a fault (outage or loss step,
	// SetFaultLoss), on any backend.
	NftFaultDrops uint64 `json:"nft_fault_drops,omitempty"`
}

// Counters are the router's counters per direction. Take one before and one
// after a case and Sub them.
type Counters struct {
	ToBroker DirCounters   `json:"to_broker"`
	ToClient DirCounters   `json:"to_client"`
	Shared   QdiscCounters `json:"shared"` // half duplex: the IFB's qdisc, both directions
	// Uplink: what this host forwarded to and from brokers on other hosts
	// (Options.Remote), nil otherwise.
	Uplink *UplinkCounters `json:"uplink,omitempty"`
}

// Sub returns c - before for the counters (Backlog and Kind are c's).
func (c Counters) Sub(before Counters) Counters {
	d := Counters{
		ToBroker: c.ToBroker.sub(before.ToBroker),
		ToClient: c.ToClient.sub(before.ToClient),
		Shared:   c.Shared.sub(before.Shared),
	}
	if c.Uplink != nil && before.Uplink != nil {
		u := c.Uplink.Sub(*before.Uplink)
		d.Uplink = &u
	}
	return d
}

func (d DirCounters) sub(b DirCounters) DirCounters {
	return DirCounters{
		Qdisc:     d.Qdisc.sub(b.Qdisc),
		TxPackets: d.TxPackets - b.TxPackets, TxBytes: d.TxBytes - b.TxBytes,
		NftSeen: d.NftSeen - b.NftSeen, NftDrops: d.NftDrops - b.NftDrops,
		// Fault rules come and go within a case: no delta across a removal.
		NftFaultDrops: d.NftFaultDrops - min(b.NftFaultDrops, d.NftFaultDrops),
	}
}

func (q QdiscCounters) sub(b QdiscCounters) QdiscCounters {
	if q.Kind != b.Kind { // the qdisc was replaced in between: no delta
		return QdiscCounters{Kind: q.Kind, Backlog: q.Backlog}
	}
	return QdiscCounters{
		Kind: q.Kind, Bytes: q.Bytes - b.Bytes, Packets: q.Packets - b.Packets,
		Drops: q.Drops - b.Drops, Overlimits: q.Overlimits - b.Overlimits, Backlog: q.Backlog,
	}
}

// Dir returns the counters of one direction.
func (c Counters) Dir(d Direction) DirCounters {
	if d == ToClient {
		return c.ToClient
	}
	return c.ToBroker
}

// DropPct is the share of the direction's packets the router dropped on
// purpose or for lack of queue, from the counters: nft drops plus drops of
// the direction's own qdisc, over the packets that entered. Shared-qdisc
// drops (half duplex) cannot be told apart by direction and are left out.
// ok is false when nothing was counted.
func (d DirCounters) DropPct() (pct float64, ok bool) {
	in := d.NftSeen
	if in == 0 { // no nft table (netem backend): qdisc sent + dropped
		in = d.Qdisc.Packets + d.Qdisc.Drops
	}
	if in == 0 {
		return 0, false
	}
	return 100 * float64(d.NftDrops+d.Qdisc.Drops) / float64(in), true
}

func (c Counters) String() string {
	line := func(name string, d DirCounters) string {
		s := fmt.Sprintf("  %-9s forwarded %d pkts %d bytes", name, d.TxPackets, d.TxBytes)
		if d.Qdisc.Kind != "" {
			s += fmt.Sprintf("; %s qdisc sent %d pkts %d bytes, dropped %d, overlimits %d",
				d.Qdisc.Kind, d.Qdisc.Packets, d.Qdisc.Bytes, d.Qdisc.Drops, d.Qdisc.Overlimits)
		}
		if d.NftSeen > 0 || d.NftDrops > 0 {
			s += fmt.Sprintf("; nft seen %d, dropped %d", d.NftSeen, d.NftDrops)
		}
		if d.NftFaultDrops > 0 {
			s += fmt.Sprintf("; fault dropped %d", d.NftFaultDrops)
		}
		return s + "\n"
	}
	s := line(string(ToBroker), c.ToBroker) + line(string(ToClient), c.ToClient)
	if c.Shared.Kind != "" {
		s += fmt.Sprintf("  shared    %s qdisc (half duplex, both directions) sent %d pkts %d bytes, dropped %d, overlimits %d\n",
			c.Shared.Kind, c.Shared.Packets, c.Shared.Bytes, c.Shared.Drops, c.Shared.Overlimits)
	}
	return s
}

// UplinkCounters are what the host forwarded between the lab and the
// remote brokers: the clients' packets let out to the brokers, the replies
// let back in, and packets refused (anything else to or from the lab).
type UplinkCounters struct {
	ToBroker uint64 `json:"to_broker_packets"`
	ToClient uint64 `json:"to_client_packets"`
	Refused  uint64 `json:"refused_packets"`
}

// Sub returns u - before.
func (u UplinkCounters) Sub(before UplinkCounters) UplinkCounters {
	return UplinkCounters{ToBroker: u.ToBroker - before.ToBroker, ToClient: u.ToClient - before.ToClient, Refused: u.Refused - before.Refused}
}

// Direction of traffic through the router.
type Direction string

// Directions.
const (
	ToBroker Direction = "to-broker" // client -> broker
	ToClient Direction = "to-client" // broker -> client
)
