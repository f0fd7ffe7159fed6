package linkinfo

import "fmt"

// RelayDirCounters are the relay backend's counters for one direction:
// what entered the link, what it delivered, and every drop by its cause.
type RelayDirCounters struct {
	Seen           uint64 `json:"seen"` // frames that entered the link
	SeenBytes      uint64 `json:"seen_bytes"`
	Delivered      uint64 `json:"delivered"` // frames the link handed on
	DeliveredBytes uint64 `json:"delivered_bytes"`
	// Drops by cause.
	DropLoss   uint64 `json:"drop_loss"`   // the loss model (Bernoulli, Gilbert-Elliott, correlated)
	DropQueue  uint64 `json:"drop_queue"`  // the queue was full (drop-tail)
	DropOutage uint64 `json:"drop_outage"` // arrived while the link was off
	DropRetry  uint64 `json:"drop_retry"`  // 802.11: every attempt up to the retry limit failed
	DropFault  uint64 `json:"drop_fault"`  // a fault (SetFaultLoss)
	// DropRx: frames the kernel dropped before the relay read them (its
	// socket buffer was full); DropTx: frames the relay could not send.
	// Both should stay 0; a link with either is not the profile.
	DropRx uint64 `json:"drop_rx,omitempty"`
	DropTx uint64 `json:"drop_tx,omitempty"`
	// Retries: 802.11 attempts after the first (each cost airtime).
	Retries    uint64 `json:"retries,omitempty"`
	Duplicated uint64 `json:"duplicated,omitempty"`
	// OpportunityBytes: a trace's delivery opportunities so far, in bytes
	// (used or not): the capacity the trace offered.
	OpportunityBytes uint64 `json:"opportunity_bytes,omitempty"`
	// Now, not counters: packets and bytes queued or being sent, and
	// packets in the delay line.
	QueuedPackets uint64 `json:"queued_packets"`
	QueuedBytes   uint64 `json:"queued_bytes"`
	InFlight      uint64 `json:"in_flight"`
}

// Drops is the sum of the drops of every cause.
func (r RelayDirCounters) Drops() uint64 {
	return r.DropLoss + r.DropQueue + r.DropOutage + r.DropRetry + r.DropFault + r.DropRx + r.DropTx
}

func (r RelayDirCounters) sub(b RelayDirCounters) RelayDirCounters {
	d := RelayDirCounters{
		Seen: r.Seen - b.Seen, SeenBytes: r.SeenBytes - b.SeenBytes,
		Delivered: r.Delivered - b.Delivered, DeliveredBytes: r.DeliveredBytes - b.DeliveredBytes,
		DropLoss: r.DropLoss - b.DropLoss, DropQueue: r.DropQueue - b.DropQueue,
		DropOutage: r.DropOutage - b.DropOutage, DropRetry: r.DropRetry - b.DropRetry,
		DropFault: r.DropFault - b.DropFault, DropRx: r.DropRx - b.DropRx, DropTx: r.DropTx - b.DropTx,
		Retries: r.Retries - b.Retries, Duplicated: r.Duplicated - b.Duplicated,
		OpportunityBytes: r.OpportunityBytes - b.OpportunityBytes,
		QueuedPackets:    r.QueuedPackets, QueuedBytes: r.QueuedBytes, InFlight: r.InFlight,
	}
	if r.Seen < b.Seen { // another relay since: no delta
		return RelayDirCounters{QueuedPackets: r.QueuedPackets, QueuedBytes: r.QueuedBytes, InFlight: r.InFlight}
	}
	return d
}

func (r RelayDirCounters) String() string {
	s := fmt.Sprintf("relay seen %d, delivered %d; dropped: loss %d, queue %d, outage %d, retry limit %d, fault %d",
		r.Seen, r.Delivered, r.DropLoss, r.DropQueue, r.DropOutage, r.DropRetry, r.DropFault)
	if r.DropRx+r.DropTx > 0 {
		s += fmt.Sprintf(", relay rx overflow %d, tx error %d", r.DropRx, r.DropTx)
	}
	if r.Retries > 0 {
		s += fmt.Sprintf("; 802.11 retries %d", r.Retries)
	}
	if r.Duplicated > 0 {
		s += fmt.Sprintf("; duplicated %d", r.Duplicated)
	}
	return s + fmt.Sprintf("; queued %d pkts %d bytes, in flight %d", r.QueuedPackets, r.QueuedBytes, r.InFlight)
}

// Backlog is what the link holds now, in bytes, in every queue of every
// backend (the relay's delay line counted as a full frame per packet):
// 0 when it carries nothing.
func (c Counters) Backlog() uint64 {
	b := c.ToBroker.Qdisc.Backlog + c.ToClient.Qdisc.Backlog + c.Shared.Backlog
	for _, d := range []DirCounters{c.ToBroker, c.ToClient} {
		if d.Relay != nil {
			b += d.Relay.QueuedBytes + d.Relay.InFlight*MaxFrame
		}
	}
	return b
}
